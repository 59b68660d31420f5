/*
 * registry.h - every controller sqlkcm runs (controller_types), chosen by name with
 * --controllers, and their flags on a command line.
 */
#ifndef SQLKCM_REGISTRY_H
#define SQLKCM_REGISTRY_H

#include <stdio.h>

#include "controller.h"

/* Every controller type; controller_type_count of them. */
extern const struct controller_type *const controller_types[];
extern const int controller_type_count;

/* Returns the type called name, or NULL. */
const struct controller_type *controller_type_find(const char *name);

/*
 * Parses a --controllers value as kube-controller-manager does: comma-separated names,
 * '*' for every controller enabled by default, '-name' to turn one off; "" enables none.
 * Sets enabled[i] for controller_types[i]. A controller may be named as sqlkcm or as
 * kube-controller-manager names it ("replicaset-controller", or its older "replicaset");
 * those of kube-controller-manager's that sqlkcm does not run are appended to ignored (as
 * given, comma-separated; ignored may be NULL). Any other name is an error naming it.
 */
int controller_parse_list(const char *list, int *enabled, struct buf *ignored, char **error);

/*
 * The controllers' flags on a command line (run, plan and replay take them all). Codes:
 * CONTROLLER_FLAG_CODES of them from 0, one per declared flag of each type.
 * controller_flag_options appends a getopt_long option for each to o (room for
 * controller_flag_count() more; an option whose name is already among the first n of o
 * aborts: a table to fix), each with val base plus its code, and returns the new n.
 * controller_configs_new makes the configs of every type (by controller_types index), and
 * controller_configs_set stores a value given for code, checked by controller_flag_check
 * (-1 with *error when refused). value is kept, not copied (argv outlives them).
 */
#define CONTROLLER_FLAGS_PER_TYPE 16
#define CONTROLLER_FLAG_CODES (CONTROLLER_FLAGS_PER_TYPE * 64)
struct option;
int controller_flag_count(void);
size_t controller_flag_options(struct option *o, size_t n, int base);
struct controller_config *controller_configs_new(void);
int controller_configs_set(struct controller_config *configs, int code, const char *value,
    char **error);
void controller_configs_free(struct controller_config *configs);
/* A command's options (malloc'd, ended by a zeroed one): fixed (ended by one without a
 * name), then the controllers' flags with val base plus their code. */
struct option *controller_longopts_new(const struct option *fixed, int base);
/* Adds, for --help, each controller's flags to out (one line each). */
void controller_flags_usage(FILE *out);

#endif
