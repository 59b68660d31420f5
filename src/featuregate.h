/*
 * featuregate.h - kube-controller-manager's --feature-gates ("A=true,B=false"), read as
 * kube's component-base reads it, for the gates whose rules sqlkcm's controllers follow.
 *
 * Only the gates listed in featuregate.c are known, each with kube 1.36's default; a
 * well-formed entry naming another gate (one of kube's that changes nothing sqlkcm does)
 * is accepted and reported, so that a kubeadm command line works unchanged.
 */
#ifndef SQLKCM_FEATUREGATE_H
#define SQLKCM_FEATUREGATE_H

/* Whether gate is on under spec (a --feature-gates value; NULL or "" for the defaults).
 * spec must have passed featuregate_check; a gate featuregate.c does not list is off. */
int featuregate_enabled(const char *spec, const char *gate);

/* Checks spec: 0 when every entry is NAME=BOOL (Go's bools: true, false, 1, 0, t, f,
 * TRUE, ...), else -1 with *error naming the entry. *unknown (may be NULL) gets the names
 * of the entries featuregate.c does not list, comma-separated (malloc'd; NULL when none). */
int featuregate_check(const char *spec, char **unknown, char **error);

#endif
