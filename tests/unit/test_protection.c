/*
 * test_protection.c - the PersistentVolume and VolumeAttributesClass protection
 * controllers: kube v1.36.3's TestPVProtectionController and TestVACProtectionController
 * rows as data (the retries after a failed write are the workqueue's, tested with it), and
 * the handlers' queueing.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/protection.h"
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
	    ",\"finalizers\":[\"example.com/other\",\"kubernetes.io/pv-protection\"]" : "",
	    r->deleted ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
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

/* The classes: in use while a volume or a claim names them. */
static const struct vac_case {
	const char *name;
	int finalizer, deleted;
	const char *user;	/* a resource and the JSON that names the class, or NULL */
	const char *want;
} vac_cases[] = {
	{ "VAC without finalizer -> finalizer is added", 0, 0, NULL, "add-finalizer" },
	{ "VAC with finalizer -> no action", 1, 0, NULL, "" },
	{ "deleted VAC with finalizer -> finalizer is removed", 1, 1, NULL,
	    "remove-finalizer" },
	{ "deleted VAC with finalizer + PV -> finalizer is not removed", 1, 1,
	    "persistentvolumes {\"spec\":{\"volumeAttributesClassName\":\"vac1\"}}", "" },
	{ "deleted VAC with finalizer + PVC spec -> finalizer is not removed", 1, 1,
	    "persistentvolumeclaims {\"spec\":{\"volumeAttributesClassName\":\"vac1\"}}", "" },
	{ "deleted VAC with finalizer + PVC status -> finalizer is not removed", 1, 1,
	    "persistentvolumeclaims {\"status\":{\"currentVolumeAttributesClassName\":"
	    "\"vac1\"}}", "" },
	{ "deleted VAC with finalizer + PVC modify target -> finalizer is not removed", 1, 1,
	    "persistentvolumeclaims {\"status\":{\"modifyVolumeStatus\":{"
	    "\"targetVolumeAttributesClassName\":\"vac1\"}}}", "" },
	{ "deleted VAC with finalizer + PVC of another class -> finalizer is removed", 1, 1,
	    "persistentvolumeclaims {\"spec\":{\"volumeAttributesClassName\":\"vac2\"}}",
	    "remove-finalizer" },
};

/* A claim or volume named user-0 in default, of resource r, with the fields of json. */
static cJSON *
user_new(const char *spec)
{
	const char *json = strchr(spec, ' ') + 1;
	int claim = strncmp(spec, "persistentvolumeclaims", 22) == 0;
	cJSON *o = fixture_parse(json);
	char *meta = xasprintf("{\"name\":\"user-0\",\"uid\":\"uid-user\",\"resourceVersion\":"
	    "\"1\"%s}", claim ? ",\"namespace\":\"default\"" : "");

	json_set(o, "metadata", fixture_parse(meta));
	free(meta);
	return o;
}

static void
vac_case(void **state)
{
	const struct vac_case *r = *state;
	struct ctl_world *w = ctl_world_new(&vacprotection_controller_type, NULL);
	char *text = xasprintf("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":"
	    "\"VolumeAttributesClass\",\"metadata\":{\"name\":\"vac1\",\"uid\":\"uid-vac1\","
	    "\"resourceVersion\":\"1\"%s%s},\"driverName\":\"d\"}", r->finalizer ?
	    ",\"finalizers\":[\"kubernetes.io/vac-protection\"]" : "", r->deleted ?
	    ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "");

	ctl_cache(w, resource_find("volumeattributesclasses"), fixture_parse(text));
	free(text);
	if (r->user != NULL) {
		char resource[32];

		snprintf(resource, sizeof resource, "%.*s", (int)strcspn(r->user, " "), r->user);
		ctl_cache(w, resource_find(resource), user_new(r->user));
	}
	ctl_sync(w, "vac1", 0);
	if (*r->want == '\0') {
		assert_int_equal(w->result.nwrites, 0);
	} else {
		assert_int_equal(w->result.nwrites, 1);
		assert_int_equal(w->result.writes[0].type, ACTION_UPDATE);
		assert_string_equal(w->result.writes[0].verb, r->want);
	}
	ctl_world_free(w);
}

/* A claim that stops naming a class, or goes, queues it; one that keeps naming it does
 * not; nor does a volume that never named one. */
static void
vac_events(void **state)
{
	struct ctl_world *w = ctl_world_new(&vacprotection_controller_type, NULL);
	const struct resource *pvcs = resource_find("persistentvolumeclaims");
	const struct resource *pvs = resource_find("persistentvolumes");
	cJSON *named = user_new("persistentvolumeclaims {\"spec\":{"
	    "\"volumeAttributesClassName\":\"vac1\"}}");
	char *keys;

	(void)state;
	ctl_tell(w, INFORMER_UPDATED, pvcs, user_new("persistentvolumeclaims {\"spec\":{}}"),
	    cJSON_Duplicate(named, 1));
	assert_string_equal(keys = ctl_keys(w), "vac1");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, pvcs, cJSON_Duplicate(named, 1),
	    cJSON_Duplicate(named, 1));
	assert_string_equal(keys = ctl_keys(w), "");
	free(keys);
	ctl_tell(w, INFORMER_DELETED, pvcs, cJSON_Duplicate(named, 1), NULL);
	assert_string_equal(keys = ctl_keys(w), "vac1");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, pvs, user_new("persistentvolumes {\"spec\":{}}"), NULL);
	assert_string_equal(keys = ctl_keys(w), "");
	free(keys);
	cJSON_Delete(named);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(pv_cases) + NELEM(vac_cases) + 1];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(pv_cases); i++)
		tests[n++] = (struct CMUnitTest){ pv_cases[i].name, pv_case, NULL, NULL,
		    (void *)&pv_cases[i] };
	for (size_t i = 0; i < NELEM(vac_cases); i++)
		tests[n++] = (struct CMUnitTest){ vac_cases[i].name, vac_case, NULL, NULL,
		    (void *)&vac_cases[i] };
	tests[n++] = (struct CMUnitTest){ "claims and volumes that stop naming a class",
	    vac_events, NULL, NULL, NULL };
	return _cmocka_run_group_tests("protection", tests, n, NULL, NULL);
}
