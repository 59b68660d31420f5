/*
 * fuzz_discovery.c - discovery documents from arbitrary bytes.
 *
 * The input is given to each of the three parsers (aggregated APIGroupDiscoveryList,
 * APIGroupList, APIResourceList). For each:
 * - a rejection comes with an error message and appends nothing;
 * - every resource accepted has a group, version, plural and kind made only of the
 *   characters a request path may take, a plural without '/', and is found again by
 *   discovery_find_kind under its own apiVersion and kind;
 * - discovery_keep_deletable keeps exactly the resources with list, watch and delete that
 *   are not events.
 * Any broken invariant aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "resource.h"
#include "util.h"

static void __attribute__((noreturn))
broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_discovery: %s: %s\n", what, detail != NULL ? detail : "");
	abort();
}

/* True when s is a name a request path may take (the group may be empty). */
static int
path_safe(const char *s, int may_be_empty)
{
	return s != NULL && ((may_be_empty && *s == '\0') || resource_name_valid(s));
}

static void
check(struct discovery *d, const char *parser)
{
	const unsigned need = DISCOVERY_LIST | DISCOVERY_WATCH | DISCOVERY_DELETE;
	size_t deletable = 0;

	for (size_t i = 0; i < d->count; i++) {
		const struct api_resource *a = &d->items[i];
		const struct api_resource *found;
		char *api_version;

		if (!path_safe(a->group, 1) || !path_safe(a->version, 0) ||
		    !path_safe(a->resource, 0) || a->kind == NULL || *a->kind == '\0')
			broken(parser, "a resource with a name no request path may take");
		api_version = *a->group == '\0' ? xstrdup(a->version) :
		    xasprintf("%s/%s", a->group, a->version);
		found = discovery_find_kind(d, api_version, a->kind);
		if (found == NULL || strcmp(found->kind, a->kind) != 0)
			broken(parser, "a resource is not found by its own apiVersion and kind");
		free(api_version);
		if ((a->verbs & need) == need && !(strcmp(a->resource, "events") == 0 &&
		    (*a->group == '\0' || strcmp(a->group, "events.k8s.io") == 0)))
			deletable++;
	}
	discovery_keep_deletable(d);
	if (d->count != deletable)
		broken(parser, "keep_deletable kept another set than kube's deletable ones");
	for (size_t i = 0; i < d->count; i++) {
		if ((d->items[i].verbs & need) != need)
			broken(parser, "keep_deletable kept a resource without list, watch, delete");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct discovery d;
	char *error = NULL;
	char **gvs = NULL;

	memset(&d, 0, sizeof d);
	if (discovery_parse_aggregated((const char *)data, size, &d, &error) != 0) {
		if (error == NULL || d.count != 0)
			broken("aggregated", "a rejection without a message, or with resources");
		free(error);
		error = NULL;
	} else {
		check(&d, "aggregated");
	}
	discovery_clear(&d);
	if (discovery_parse_resource_list((const char *)data, size, &d, &error) != 0) {
		if (error == NULL || d.count != 0)
			broken("resource list", "a rejection without a message, or with resources");
		free(error);
		error = NULL;
	} else {
		check(&d, "resource list");
	}
	discovery_clear(&d);
	if (discovery_parse_group_list((const char *)data, size, &gvs, &error) != 0) {
		if (error == NULL)
			broken("group list", "a rejection without a message");
		free(error);
	} else {
		for (char **gv = gvs; gv != NULL && *gv != NULL; gv++) {
			if (**gv == '\0')
				broken("group list", "an empty groupVersion");
			free(*gv);
		}
		free(gvs);
	}
	return 0;
}
