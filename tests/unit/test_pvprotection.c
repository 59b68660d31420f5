/*
 * test_pvprotection.c - the PersistentVolume protection controller: kube v1.36.3's
 * TestPVProtectionController rows as data (the retries after a failed write are the
 * workqueue's, tested with it), and the handler's queueing.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/pvprotection.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

static const struct pv_case {
	const char *name;
	int finalizer, deleted, bound;
	const char *want;		/* the write: "", "add", "remove" */
	const char *want_finalizers;	/* the written volume's finalizers, as JSON */
} pv_cases[] = {
	{ "PV without finalizer -> finalizer is added", 0, 0, 0, "add-finalizer",
	    "[\"kubernetes.io/pv-protection\"]" },
	{ "PV with finalizer -> no action", 1, 0, 0, "", NULL },
	{ "deleted PV with finalizer -> finalizer is removed", 1, 1, 0, "remove-finalizer",
	    NULL },
	{ "deleted PV with finalizer + PV is bound -> finalizer is not removed", 1, 1, 1, "",
	    NULL },
	/* Beyond kube's table: a deleted volume without the finalizer is left to go, and a
	 * Released one is no longer in use. */
	{ "deleted PV without finalizer -> no action", 0, 1, 0, "", NULL },
	{ "deleted Released PV with finalizer -> finalizer is removed", 1, 1, 0,
	    "remove-finalizer", NULL },
};

static cJSON *
pv_new(const struct pv_case *r)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
	    "\"metadata\":{\"name\":\"pv1\",\"uid\":\"uid-pv1\",\"resourceVersion\":\"1\"%s%s},"
	    "\"spec\":{\"capacity\":{\"storage\":\"1Gi\"}},\"status\":{\"phase\":\"%s\"}}",
	    r->finalizer ?
	    ",\"finalizers\":[\"example.com/other\",\"kubernetes.io/pv-protection\"]" : "", r->deleted ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
	    r->bound ? "Bound" : strstr(r->name, "Released") != NULL ? "Released" :
	    "Available");
	cJSON *pv = fixture_parse(text);

	free(text);
	return pv;
}

static void
pv_case(void **state)
{
	const struct pv_case *r = *state;
	struct ctl_world *w = ctl_world_new(&pvprotection_controller_type, NULL);
	const struct resource *pvs = resource_find("persistentvolumes");
	char *keys;

	ctl_cache(w, pvs, pv_new(r));
	ctl_tell(w, INFORMER_UPDATED, pvs, pv_new(r), NULL);
	keys = ctl_keys(w);
	/* The handler queues, as kube's, a volume that needs the finalizer or is a deletion
	 * candidate (being deleted, with it), Bound or not. */
	assert_string_equal(keys, r->finalizer == r->deleted ? "pv1" : "");
	free(keys);
	ctl_sync(w, "pv1", 0);
	if (*r->want == '\0') {
		assert_int_equal(w->result.nwrites, 0);
	} else {
		const struct action *a = &w->result.writes[0];
		const cJSON *finalizers = json_path(a->body, "metadata.finalizers");
		char *text = cJSON_PrintUnformatted(finalizers);

		assert_int_equal(w->result.nwrites, 1);
		assert_int_equal(a->type, ACTION_UPDATE);
		assert_string_equal(a->verb, r->want);
		assert_string_equal(a->uid, "uid-pv1");
		assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "1");
		/* The other finalizer stays where it is. */
		assert_string_equal(text, r->want_finalizers != NULL ? r->want_finalizers :
		    "[\"example.com/other\"]");
		cJSON_free(text);
	}
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(pv_cases)];

	for (size_t i = 0; i < NELEM(pv_cases); i++)
		tests[i] = (struct CMUnitTest){ pv_cases[i].name, pv_case, NULL, NULL,
		    (void *)&pv_cases[i] };
	return _cmocka_run_group_tests("pvprotection", tests, NELEM(pv_cases), NULL, NULL);
}
