/*
 * test_protection.c - the PersistentVolume, VolumeAttributesClass and
 * PersistentVolumeClaim protection controllers: kube v1.36.3's TestPVProtectionController,
 * TestVACProtectionController and TestPVCProtectionController rows as data (the retries
 * after a failed write or list are the workqueue's, tested with it; the alpha Unused
 * condition's rows are not sqlkcm's), and the handlers' queueing.
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

/* The claims. A pod is described by words: claim=NAME (a persistentVolumeClaim volume),
 * ephemeral=VOLUME (a generic ephemeral volume), emptydir, phase=PHASE (Pending if none),
 * unscheduled, uid=UID (uid-pod1 if none), shutdown (deleted with grace 0), deleting
 * (deleted with grace 30, its container terminated). The pod is pod1 in ns1. */
static cJSON *
claim_pod(const char *words)
{
	cJSON *pod = fixture_parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	    "\"name\":\"pod1\",\"namespace\":\"ns1\",\"uid\":\"uid-pod1\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"nodeName\":\"node1\",\"volumes\":[]},"
	    "\"status\":{\"phase\":\"Pending\"}}");
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	cJSON *volumes = cJSON_GetObjectItemCaseSensitive(spec, "volumes");
	cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status");
	char *copy = xstrdup(words), *save = NULL;

	for (char *w = strtok_r(copy, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
		char *v = strchr(w, '=');
		char *text = NULL;

		if (v != NULL)
			*v++ = '\0';
		if (strcmp(w, "claim") == 0)
			text = xasprintf("{\"name\":\"v-%s\",\"persistentVolumeClaim\":{"
			    "\"claimName\":\"%s\"}}", v, v);
		else if (strcmp(w, "ephemeral") == 0)
			text = xasprintf("{\"name\":\"%s\",\"ephemeral\":{\"volumeClaimTemplate\":"
			    "{\"spec\":{}}}}", v);
		else if (strcmp(w, "emptydir") == 0)
			text = xstrdup("{\"name\":\"emptyDir\",\"emptyDir\":{}}");
		if (text != NULL) {
			cJSON_AddItemToArray(volumes, fixture_parse(text));
			free(text);
		} else if (strcmp(w, "phase") == 0) {
			json_set(status, "phase", cJSON_CreateString(v));
		} else if (strcmp(w, "unscheduled") == 0) {
			cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
		} else if (strcmp(w, "uid") == 0) {
			json_set(meta, "uid", cJSON_CreateString(v));
		} else if (strcmp(w, "shutdown") == 0 || strcmp(w, "deleting") == 0) {
			json_set(meta, "deletionTimestamp",
			    cJSON_CreateString("2026-01-01T00:00:00Z"));
			json_set(meta, "deletionGracePeriodSeconds",
			    cJSON_CreateNumber(*w == 's' ? 0 : 30));
			json_set(status, "containerStatuses", fixture_parse("[{\"name\":\"c\","
			    "\"state\":{\"terminated\":{\"exitCode\":0}}}]"));
		} else {
			fail_msg("claim_pod: no word %s", w);
		}
	}
	free(copy);
	return pod;
}

static const struct pvc_case {
	const char *name;
	const char *claim;		/* its name; NULL: pvc1 */
	int finalizer, deleted;
	const char *owner;		/* the claim's controller's uid, or NULL */
	const char *cached;		/* the cached pod's words, or NULL: none */
	const char *live;		/* the pod a live list shows too, or NULL: none */
	const char *event_old;		/* a pod update's old pod, "-" for a deletion of
					   event_new, or NULL: no event */
	const char *event_new;
	const char *want_keys;		/* what the event queues */
	const char *want;		/* the write: "", "add-finalizer", "remove-finalizer" */
} pvc_cases[] = {
	{ "PVC without finalizer -> finalizer is added", NULL, 0, 0, NULL, NULL, NULL, NULL,
	    NULL, NULL, "add-finalizer" },
	{ "PVC with finalizer -> no action", NULL, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL,
	    "" },
	{ "deleted PVC with finalizer -> finalizer is removed", NULL, 1, 1, NULL, NULL, NULL,
	    NULL, NULL, NULL, "remove-finalizer" },
	{ "deleted PVC with finalizer + pod with the PVC exists -> finalizer is not removed",
	    NULL, 1, 1, NULL, "claim=pvc1", NULL, NULL, NULL, NULL, "" },
	{ "deleted PVC with finalizer + pod with unrelated PVC and EmptyDir exists -> "
	    "finalizer is removed", NULL, 1, 1, NULL, "claim=unrelated emptydir",
	    "claim=unrelated emptydir", NULL, NULL, NULL, "remove-finalizer" },
	{ "deleted PVC with finalizer + pod with the PVC finished but is not deleted -> "
	    "finalizer is not removed", NULL, 1, 1, NULL, "claim=pvc1 phase=Succeeded", NULL,
	    NULL, NULL, NULL, "" },
	{ "deleted PVC with finalizer + pod with the PVC exists but is not in the Informer's "
	    "cache yet -> finalizer is not removed", NULL, 1, 1, NULL, NULL, "claim=pvc1",
	    NULL, NULL, NULL, "not-live" },
	{ "updated running Pod -> no action", NULL, 1, 1, NULL, "claim=pvc1 phase=Running",
	    NULL, "claim=pvc1 phase=Running", "claim=pvc1 phase=Running", "", "" },
	{ "updated finished Pod -> finalizer is not removed", NULL, 1, 1, NULL,
	    "claim=pvc1 phase=Succeeded", NULL, "claim=pvc1 phase=Running",
	    "claim=pvc1 phase=Succeeded", "ns1/pvc1", "" },
	{ "updated unscheduled Pod -> finalizer is removed", NULL, 1, 1, NULL,
	    "claim=pvc1 unscheduled", "claim=pvc1 unscheduled", "claim=pvc1 unscheduled",
	    "claim=pvc1 unscheduled", "ns1/pvc1", "remove-finalizer" },
	{ "deleted running Pod -> finalizer is removed", NULL, 1, 1, NULL, NULL, NULL, "-",
	    "claim=pvc1 phase=Running", "ns1/pvc1", "remove-finalizer" },
	{ "pod delete and create with same namespaced name seen as an update, old pod used "
	    "deleted PVC -> finalizer is removed", NULL, 1, 1, NULL, "uid=uid-new emptydir",
	    NULL, "claim=pvc1", "uid=uid-new emptydir", "ns1/pvc1", "remove-finalizer" },
	{ "pod delete and create with same namespaced name seen as an update, old pod used "
	    "non-deleted PVC -> finalizer is not removed", NULL, 1, 0, NULL,
	    "uid=uid-new emptydir", NULL, "claim=pvc1", "uid=uid-new emptydir", "ns1/pvc1",
	    "" },
	{ "pod delete and create with same namespaced name seen as an update, both pods "
	    "reference deleted PVC -> finalizer is not removed", NULL, 1, 1, NULL,
	    "uid=uid-new claim=pvc1", NULL, "claim=pvc1", "uid=uid-new claim=pvc1",
	    "ns1/pvc1", "" },
	{ "pod update from unscheduled to scheduled, deleted PVC is referenced -> finalizer "
	    "is not removed", NULL, 1, 1, NULL, "claim=pvc1", NULL, "claim=pvc1 unscheduled",
	    "claim=pvc1", "", "" },
	/* Beyond kube's table: the rules of podUsesPVCForDeletion. */
	{ "deleted PVC with finalizer + unscheduled pod with the PVC -> finalizer is removed",
	    NULL, 1, 1, NULL, "claim=pvc1 unscheduled", "claim=pvc1 unscheduled", NULL, NULL,
	    NULL, "remove-finalizer" },
	{ "deleted PVC with finalizer + pod being deleted with the PVC -> finalizer is not "
	    "removed", NULL, 1, 1, NULL, "claim=pvc1 shutdown", NULL, NULL, NULL, NULL, "" },
	{ "deleted ephemeral PVC of a running pod that owns it -> finalizer is not removed",
	    "pod1-data", 1, 1, "uid-pod1", "ephemeral=data", NULL, NULL, NULL, NULL, "" },
	{ "deleted ephemeral PVC not owned by the pod -> finalizer is removed", "pod1-data", 1,
	    1, "uid-other", "ephemeral=data", "ephemeral=data", NULL, NULL, NULL,
	    "remove-finalizer" },
	{ "deleted ephemeral PVC of a pod shut down -> finalizer is removed", "pod1-data", 1,
	    1, "uid-pod1", "ephemeral=data shutdown", "ephemeral=data shutdown", NULL, NULL,
	    NULL, "remove-finalizer" },
	{ "deleted ephemeral PVC of a pod deleted with a grace period -> finalizer is not "
	    "removed", "pod1-data", 1, 1, "uid-pod1", "ephemeral=data deleting", NULL, NULL,
	    NULL, NULL, "" },
	{ "a deleted pod's ephemeral claim is queued", "pod1-data", 1, 0, "uid-pod1", NULL,
	    NULL, "-", "ephemeral=data", "ns1/pod1-data", "" },
};

static void
pvc_case(void **state)
{
	const struct pvc_case *r = *state;
	struct ctl_world *w = ctl_world_new(&pvcprotection_controller_type, NULL);
	const struct resource *pvcs = resource_find("persistentvolumeclaims");
	const struct resource *pods = resource_find("pods");
	const char *name = r->claim != NULL ? r->claim : "pvc1";
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"uid-pvc\","
	    "\"resourceVersion\":\"1\"%s%s%s%s%s},\"spec\":{}}", name, r->finalizer ?
	    ",\"finalizers\":[\"kubernetes.io/pvc-protection\"]" : "", r->deleted ?
	    ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "", r->owner != NULL ?
	    ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"name\":\"pod1\",\"controller\":true,\"uid\":\"" : "",
	    r->owner != NULL ? r->owner : "", r->owner != NULL ? "\"}]" : "");
	char *key = xasprintf("ns1/%s", name), *keys;

	ctl_cache(w, pvcs, fixture_parse(text));
	free(text);
	if (r->cached != NULL)
		ctl_cache(w, pods, claim_pod(r->cached));
	if (r->event_new != NULL) {
		if (strcmp(r->event_old, "-") == 0)
			ctl_tell(w, INFORMER_DELETED, pods, claim_pod(r->event_new), NULL);
		else
			ctl_tell(w, INFORMER_UPDATED, pods, claim_pod(r->event_new),
			    claim_pod(r->event_old));
		assert_string_equal(keys = ctl_keys(w), r->want_keys);
		free(keys);
	}
	ctl_sync(w, key, 0);
	if (*r->want == '\0') {
		assert_int_equal(w->result.nwrites, 0);
		assert_int_equal(w->result.nconfirm_absent, 0);
	} else {
		const struct action *a = &w->result.writes[0];
		int removing = strcmp(r->want, "add-finalizer") != 0;

		assert_int_equal(w->result.nwrites, 1);
		assert_int_equal(a->type, ACTION_UPDATE);
		assert_string_equal(a->verb, removing ? "remove-finalizer" : r->want);
		assert_string_equal(a->namespace, "ns1");
		assert_string_equal(a->name, name);
		assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "1");
		assert_int_equal(json_is_set(a->body, "metadata.finalizers"), !removing);
		/* Freed only once a live list of the namespace's pods shows none that uses it:
		 * "not-live" when the live pod does. */
		assert_int_equal(w->result.nconfirm_absent, removing);
		if (removing) {
			const struct action *l = &w->result.confirm_absent[0];
			cJSON *live = r->live != NULL ? claim_pod(r->live) : NULL;

			assert_ptr_equal(l->resource, pods);
			assert_null(l->name);
			assert_string_equal(l->namespace, "ns1");
			assert_non_null(l->confirm_counts);
			assert_int_equal(live != NULL && l->confirm_counts(live, l->body),
			    strcmp(r->want, "not-live") == 0);
			cJSON_Delete(live);
		}
	}
	free(key);
	ctl_world_free(w);
}

/* The PVCs being deleted are queued, and those that lack the finalizer; not the others. */
static void
pvc_events(void **state)
{
	struct ctl_world *w = ctl_world_new(&pvcprotection_controller_type, NULL);
	const struct resource *pvcs = resource_find("persistentvolumeclaims");
	char *keys;

	(void)state;
	ctl_tell(w, INFORMER_ADDED, pvcs, fixture_parse("{\"metadata\":{\"name\":\"a\","
	    "\"namespace\":\"ns1\"}}"), NULL);
	ctl_tell(w, INFORMER_ADDED, pvcs, fixture_parse("{\"metadata\":{\"name\":\"b\","
	    "\"namespace\":\"ns1\",\"finalizers\":[\"kubernetes.io/pvc-protection\"]}}"),
	    NULL);
	ctl_tell(w, INFORMER_UPDATED, pvcs, fixture_parse("{\"metadata\":{\"name\":\"c\","
	    "\"namespace\":\"ns2\",\"finalizers\":[\"kubernetes.io/pvc-protection\"],"
	    "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}"), NULL);
	assert_string_equal(keys = ctl_keys(w), "ns1/a,ns2/c");
	free(keys);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(pv_cases) + NELEM(vac_cases) + NELEM(pvc_cases) + 2];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(pv_cases); i++)
		tests[n++] = (struct CMUnitTest){ pv_cases[i].name, pv_case, NULL, NULL,
		    (void *)&pv_cases[i] };
	for (size_t i = 0; i < NELEM(vac_cases); i++)
		tests[n++] = (struct CMUnitTest){ vac_cases[i].name, vac_case, NULL, NULL,
		    (void *)&vac_cases[i] };
	tests[n++] = (struct CMUnitTest){ "claims and volumes that stop naming a class",
	    vac_events, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(pvc_cases); i++)
		tests[n++] = (struct CMUnitTest){ pvc_cases[i].name, pvc_case, NULL, NULL,
		    (void *)&pvc_cases[i] };
	tests[n++] = (struct CMUnitTest){ "claims being deleted or without the finalizer",
	    pvc_events, NULL, NULL, NULL };
	return _cmocka_run_group_tests("protection", tests, n, NULL, NULL);
}
