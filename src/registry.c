/*
 * registry.c - every controller sqlkcm runs, and what a command line says of them: which
 * run (--controllers, as kube-controller-manager reads it) and their own flags, for run,
 * plan and replay alike.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/csrapproving.h"
#include "controllers/csrcleaner.h"
#include "controllers/protection.h"
#include "controllers/ephemeral.h"
#include "controllers/expand.h"
#include "controllers/attachdetach.h"
#include "controllers/csrsigning.h"
#include "controllers/daemonset.h"
#include "controllers/deployment.h"
#include "controllers/garbagecollector.h"
#include "controllers/job.h"
#include "controllers/namespace.h"
#include "controllers/nodeipam.h"
#include "controllers/nodelifecycle.h"
#include "controllers/podgc.h"
#include "controllers/replicaset.h"
#include "controllers/rootcacertpublisher.h"
#include "controllers/serviceaccount.h"
#include "controllers/tainteviction.h"
#include "controllers/ttl.h"
#include "controllers/endpoint.h"
#include "controllers/endpointslice.h"
#include "controllers/endpointslicemirroring.h"
#include "controllers/ttlafterfinished.h"
#include "controllers/cronjob.h"
#include "controllers/disruption.h"
#include "controllers/resourcequota.h"
#include "controllers/statefulset.h"
#include "controllers/clusterroleaggregation.h"
#include "controllers/serviceaccounttoken.h"
#include "controllers/legacytokencleaner.h"
#include "controllers/servicecidr.h"
#include "controllers/persistentvolume.h"
#include "kcmflags.h"
#include "registry.h"
#include "util.h"

const struct controller_type *const controller_types[] = {
	&replicaset_controller_type,
	&replicationcontroller_controller_type,
	&deployment_controller_type,
	&garbagecollector_controller_type,
	&namespace_controller_type,
	&serviceaccount_controller_type,
	&rootcacertpublisher_controller_type,
	&podgc_controller_type,
	&nodelifecycle_controller_type,
	&ttl_controller_type,
	&ttlafterfinished_controller_type,
	&job_controller_type,
	&tainteviction_controller_type,
	&csrcleaner_controller_type,
	&pvprotection_controller_type,
	&vacprotection_controller_type,
	&pvcprotection_controller_type,
	&ephemeral_controller_type,
	&expand_controller_type,
	&attachdetach_controller_type,
	&csrsigning_controller_type,
	&csrapproving_controller_type,
	&nodeipam_controller_type,
	&daemonset_controller_type,
	&endpoint_controller_type,
	&endpointslice_controller_type,
	&endpointslicemirroring_controller_type,
	&cronjob_controller_type,
	&disruption_controller_type,
	&resourcequota_controller_type,
	&statefulset_controller_type,
	&clusterroleaggregation_controller_type,
	&serviceaccounttoken_controller_type,
	&legacytokencleaner_controller_type,
	&servicecidr_controller_type,
	&persistentvolume_controller_type,
};
const int controller_type_count = sizeof controller_types / sizeof controller_types[0];

const struct controller_type *
controller_type_find(const char *name)
{
	for (int i = 0; i < controller_type_count; i++) {
		if (strcmp(controller_types[i]->name, name) == 0)
			return controller_types[i];
	}
	return NULL;
}

/* Why sqlkcm does not run some of kube-controller-manager's controllers, said when a
 * --controllers list names one. */
static const struct {
	const char *name;	/* kube's */
	const char *why;
} controller_unrun_reasons[] = {
	{ "validatingadmissionpolicy-status-controller", "it type-checks each "
	  "ValidatingAdmissionPolicy's CEL expressions into status.typeChecking, and sqlkcm "
	  "has no CEL implementation; the policies' status is left unwritten" },
};

/* Returns 1 if the n bytes at text are s. */
static int
same(const char *text, size_t n, const char *s)
{
	return s != NULL && strlen(s) == n && strncmp(text, s, n) == 0;
}

/* Returns the index of the controller named by the n bytes at name, as sqlkcm or
 * kube-controller-manager names it (kcm's "replicaset-controller" and its older
 * "replicaset" alike); -2 for a controller of kube-controller-manager that sqlkcm does not
 * run; -1 for a name nobody knows. */
static int
controller_index(const char *name, size_t n)
{
	const char *kcm = NULL;

	for (int i = 0; i < controller_type_count; i++) {
		if (same(name, n, controller_types[i]->name))
			return i;
	}
	for (size_t k = 0; k < kcm_controller_count && kcm == NULL; k++) {
		if (same(name, n, kcm_controllers[k].name) || same(name, n, kcm_controllers[k].alias))
			kcm = kcm_controllers[k].name;
	}
	if (kcm == NULL)
		return -1;
	for (size_t k = 0; k < kcm_controller_count; k++) {
		if (strcmp(kcm_controllers[k].name, kcm) != 0 || kcm_controllers[k].alias == NULL)
			continue;
		for (int i = 0; i < controller_type_count; i++) {
			if (strcmp(controller_types[i]->name, kcm_controllers[k].alias) == 0)
				return i;
		}
	}
	return -2;
}

int
controller_parse_list(const char *list, int *enabled, struct buf *ignored, char **error)
{
	int star = 0, *explicit = xcalloc((size_t)controller_type_count, sizeof *explicit);
	const char *p = list;

	for (int i = 0; i < controller_type_count; i++)
		enabled[i] = 0;
	while (*p != '\0') {
		const char *end = strchr(p, ',');
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
		int off = n > 0 && p[0] == '-', i;

		if (n == 1 && p[0] == '*') {
			star = 1;
		} else {
			i = controller_index(p + off, n - (size_t)off);
			if (i == -2) {
				const char *why = NULL;

				for (size_t k = 0; k < sizeof controller_unrun_reasons /
				    sizeof controller_unrun_reasons[0]; k++) {
					if (same(p + off, n - (size_t)off,
					    controller_unrun_reasons[k].name))
						why = controller_unrun_reasons[k].why;
				}
				if (ignored != NULL)
					buf_printf(ignored, "%s%.*s%s%s%s", ignored->len > 0 ?
					    ", " : "", (int)n, p, why != NULL ? " (" : "",
					    why != NULL ? why : "", why != NULL ? ")" : "");
			} else if (i < 0) {
				char *all = NULL;
				for (int j = 0; j < controller_type_count; j++) {
					char *next = xasprintf("%s%s%s", all != NULL ? all : "",
					    j > 0 ? ", " : "", controller_types[j]->name);
					free(all);
					all = next;
				}
				error_set(error, "--controllers: unknown controller \"%.*s\" "
				    "(known: %s)", (int)(n - (size_t)off), p + off, all);
				free(all);
				free(explicit);
				return -1;
			} else {
				explicit[i] = off ? -1 : 1;
			}
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	for (int i = 0; i < controller_type_count; i++)
		enabled[i] = explicit[i] == 1 || (star && explicit[i] != -1);
	free(explicit);
	return 0;
}

/* The code of the first controller flag named as type i's flag j (its own code when no
 * type before it has one of that name). */
static int
controller_flag_first(int i, int j)
{
	const char *name = controller_types[i]->flags[j].name;

	for (int t = 0; t <= i; t++) {
		for (int k = 0; controller_types[t]->flags != NULL &&
		    controller_types[t]->flags[k].name != NULL; k++) {
			if (strcmp(controller_types[t]->flags[k].name, name) == 0)
				return CONTROLLER_FLAGS_PER_TYPE * t + k;
		}
	}
	return CONTROLLER_FLAGS_PER_TYPE * i + j;
}

/* Whether the controller flag of code is one type i's flag j shares: the same name and
 * kind of value (--root-ca-file, which the root CA publisher and the token controller
 * both read, as kube's); another would be a table to fix. */
static int
controller_flag_shared(int code, int i, int j)
{
	int t = code / CONTROLLER_FLAGS_PER_TYPE, k = code % CONTROLLER_FLAGS_PER_TYPE;

	if (code < 0 || t >= controller_type_count)
		return 0;
	return controller_types[t]->flags[k].type == controller_types[i]->flags[j].type &&
	    strcmp(controller_types[t]->flags[k].default_value,
	    controller_types[i]->flags[j].default_value) == 0;
}

int
controller_flag_count(void)
{
	int n = 0;

	for (int i = 0; i < controller_type_count; i++) {
		for (int j = 0; controller_types[i]->flags != NULL &&
		    controller_types[i]->flags[j].name != NULL; j++)
			n++;
	}
	return n;
}

size_t
controller_flag_options(struct option *o, size_t n, int base)
{
	if (controller_type_count * CONTROLLER_FLAGS_PER_TYPE > CONTROLLER_FLAG_CODES)
		abort();
	for (int i = 0; i < controller_type_count; i++) {
		for (int j = 0; controller_types[i]->flags != NULL &&
		    controller_types[i]->flags[j].name != NULL; j++) {
			const char *name = controller_types[i]->flags[j].name;

			if (j == CONTROLLER_FLAGS_PER_TYPE)
				abort();	/* a table to fix, not a user's mistake */
			for (size_t k = 0; k < n; k++) {
				if (strcmp(o[k].name, name) == 0 &&
				    !controller_flag_shared(o[k].val - base, i, j))
					abort();
			}
			if (controller_flag_first(i, j) != CONTROLLER_FLAGS_PER_TYPE * i + j)
				continue;	/* given once, for every type that has it */
			o[n].name = name;
			o[n].has_arg = controller_types[i]->flags[j].type == CONTROLLER_FLAG_BOOL ?
			    optional_argument : required_argument;
			o[n].flag = NULL;
			o[n++].val = base + CONTROLLER_FLAGS_PER_TYPE * i + j;
		}
	}
	return n;
}

struct option *
controller_longopts_new(const struct option *fixed, int base)
{
	size_t n = 0;
	struct option *o;

	while (fixed[n].name != NULL)
		n++;
	o = xcalloc(n + (size_t)controller_flag_count() + 1, sizeof *o);
	memcpy(o, fixed, n * sizeof *o);
	controller_flag_options(o, n, base);
	return o;
}

void
controller_flags_usage(FILE *out)
{
	fputs("\nThe controllers' flags:\n", out);
	for (int i = 0; i < controller_type_count; i++) {
		const struct controller_type *t = controller_types[i];

		for (const struct controller_flag *f = t->flags; f != NULL && f->name != NULL;
		    f++) {
			if (controller_flag_first(i, (int)(f - t->flags)) !=
			    CONTROLLER_FLAGS_PER_TYPE * i + (int)(f - t->flags))
				continue;	/* listed with the first type that has it */
			fprintf(out, "  --%s%s\n                            %s: %s (default: %s)\n",
			    f->name, controller_flag_metavar(f), t->name,
			    f->help, *f->default_value != '\0' ? f->default_value : "none");
		}
	}
}

struct controller_config *
controller_configs_new(void)
{
	struct controller_config *configs = xcalloc((size_t)controller_type_count,
	    sizeof *configs);

	for (int i = 0; i < controller_type_count; i++)
		configs[i].flags = xcalloc(CONTROLLER_FLAGS_PER_TYPE, sizeof *configs[i].flags);
	return configs;
}

int
controller_configs_set(struct controller_config *configs, int code, const char *value,
    char **error)
{
	int t = code / CONTROLLER_FLAGS_PER_TYPE, j = code % CONTROLLER_FLAGS_PER_TYPE;

	if (code < 0 || t >= controller_type_count)
		return error_set(error, "no controller flag has code %d", code);
	/* A bool given alone (--allocate-node-cidrs) is true, as pflag has it. */
	if (value == NULL && controller_types[t]->flags[j].type == CONTROLLER_FLAG_BOOL)
		value = "true";
	if (value == NULL)
		return error_set(error, "--%s wants a value", controller_types[t]->flags[j].name);
	if (controller_flag_check(&controller_types[t]->flags[j], value, error) != 0)
		return -1;
	((const char **)configs[t].flags)[j] = value;
	/* Every other type that has a flag of that name reads the same value. */
	for (int i = t + 1; i < controller_type_count; i++) {
		for (int k = 0; controller_types[i]->flags != NULL &&
		    controller_types[i]->flags[k].name != NULL; k++) {
			if (strcmp(controller_types[i]->flags[k].name,
			    controller_types[t]->flags[j].name) == 0)
				((const char **)configs[i].flags)[k] = value;
		}
	}
	return 0;
}

void
controller_configs_free(struct controller_config *configs)
{
	for (int i = 0; configs != NULL && i < controller_type_count; i++)
		free((void *)configs[i].flags);
	free(configs);
}
