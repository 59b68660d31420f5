/*
 * intstr.h - Kubernetes' IntOrString values ("maxUnavailable: 1", "maxSurge: 25%")
 * resolved against a total as kube's GetScaledValueFromIntOrPercent resolves them: an
 * integer as it is; "N%" as N percent of the total, rounded up or down in float64 as Go
 * rounds it; anything else an error with kube's words.
 */
#ifndef SQLKCM_INTSTR_H
#define SQLKCM_INTSTR_H

#include <cjson/cJSON.h>

/* Resolves value (NULL or JSON null: kube's "nil value for IntOrString") against total
 * into *out; 0, or -1 with *error (may be NULL). A total beyond +-2^40 is refused: no
 * percentage of one could be a count of Kubernetes objects. */
int intstr_scaled_value(const cJSON *value, long long total, int round_up, long long *out,
    char **error);
/* The same, an absent value (NULL or null) being 0: for fields the API defaults, read
 * from objects that may not have been through it. */
int intstr_scaled_or_zero(const cJSON *value, long long total, int round_up, long long *out,
    char **error);

#endif
