/*
 * plan.h - `sqlkcm plan`: the actions the controllers would take now, from the cache.
 */
#ifndef SQLKCM_PLAN_H
#define SQLKCM_PLAN_H

#include <stdio.h>

extern const char plan_usage[];

int plan_command(int argc, char **argv, FILE *out, FILE *err);

#endif
