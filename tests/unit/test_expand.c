/*
 * test_expand.c - the volume expand controller: kube v1.36.3's TestSyncHandler rows as
 * data (the claim and volume its fakes make), rows beyond them for the migrated sources,
 * the claimRef checks and the annotation already set, then the handlers' queueing, the
 * keys listed and the view claims_to_expand.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/expand.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* kube's getFakePersistentVolume: volume name of size, claimRef default/<claim_uid>, the
 * source JSON (a member of spec) given; annotations JSON (NULL: none). */
static cJSON *
volume(const char *name, const char *source, const char *size, const char *claim_ns,
    const char *claim_uid, const char *annotations)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
	    "\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\""
	    "%s%s},\"spec\":{%s,\"capacity\":{\"storage\":\"%s\"}%s%s%s%s%s}}", name, name,
	    annotations != NULL ? ",\"annotations\":" : "", annotations != NULL ? annotations :
	    "", source, size, claim_ns != NULL ? ",\"claimRef\":{\"namespace\":\"" : "",
	    claim_ns != NULL ? claim_ns : "", claim_ns != NULL ? "\",\"uid\":\"" : "",
	    claim_ns != NULL ? claim_uid : "", claim_ns != NULL ? "\"}" : "");
	cJSON *v = fixture_parse(text);

	free(text);
	return v;
}

/* kube's getFakePersistentVolumeClaim, Bound: name in default, volume_name (""), status
 * and request sizes, uid; annotations JSON (NULL: none). */
static cJSON *
claim(const char *name, const char *volume_name, const char *status_size,
    const char *request_size, const char *uid, const char *phase, const char *annotations)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
	    "\"resourceVersion\":\"7\"%s%s},\"spec\":{\"volumeName\":\"%s\",\"resources\":"
	    "{\"requests\":{\"storage\":\"%s\"}}},\"status\":{\"phase\":\"%s\",\"capacity\":"
	    "{\"storage\":\"%s\"}}}", name, uid, annotations != NULL ? ",\"annotations\":" : "",
	    annotations != NULL ? annotations : "", volume_name, request_size, phase,
	    status_size);
	cJSON *c = fixture_parse(text);

	free(text);
	return c;
}

#define EBS(id) "\"awsElasticBlockStore\":{\"volumeID\":\"" id "\",\"fsType\":\"ext4\"}"
#define CSI(driver, id) "\"csi\":{\"driver\":\"" driver "\",\"volumeHandle\":\"" id "\"}"
#define MIGRATED_MSG(p) "CSI migration enabled for " p "; waiting for external resizer " \
	"to expand the pvc"
#define EXTERNAL_MSG "waiting for an external controller to expand this PVC"

static const struct sync_case {
	const char *name;
	const char *key;
	/* The claim: name, volumeName, status and request sizes, uid, annotations. */
	const char *claim, *claim_volume, *status_size, *request_size, *claim_uid;
	const char *claim_annotations;
	/* The volume (NULL name: none): name, source, size, claimRef, annotations. */
	const char *volume, *source, *volume_size, *ref_ns, *ref_uid, *volume_annotations;
	int want_error;
	const char *want_resizer;	/* the annotation patched, or NULL: no write */
	const char *want_event;		/* the Normal ExternalExpanding message, or NULL */
} sync_cases[] = {
	{ "when pvc has no PV binding", "default/no-pv-pvc",
	    "no-pv-pvc", "", "1Gi", "1Gi", "uid-no-pv-pvc", NULL,	/* the cache needs a uid */
	    NULL, NULL, NULL, NULL, NULL, NULL, 1, NULL, NULL },
	{ "when pvc and pv has everything for in-tree plugin", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "good-pvc-vol-3", NULL,
	    "vol-3", EBS("vol-3"), "1Gi", "default", "good-pvc-vol-3", NULL,
	    0, "ebs.csi.aws.com", MIGRATED_MSG("kubernetes.io/aws-ebs") },
	{ "if pv has pre-resize capacity annotation, generate expand operation should not "
	    "be called", "default/good-pvc",
	    "good-pvc", "vol-4", "2Gi", "2Gi", "good-pvc-vol-4", NULL,
	    "vol-4", EBS("vol-4"), "2Gi", "default", "good-pvc-vol-4",
	    "{\"" EXPAND_PRE_RESIZE_ANNOTATION "\":\"1Gi\"}",
	    0, "ebs.csi.aws.com", MIGRATED_MSG("kubernetes.io/aws-ebs") },
	{ "for csi plugin without migration path", "default/ceph-csi-pvc",
	    "ceph-csi-pvc", "vol-5", "1Gi", "2Gi", "ceph-csi-pvc-vol-6", NULL,
	    "vol-5", CSI("com.csi.ceph", "vol-5"), "1Gi", "default", "ceph-csi-pvc-vol-6",
	    NULL, 0, NULL, EXTERNAL_MSG },
	/* Beyond kube's table. */
	{ "no such claim", "default/gone",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", EBS("vol-3"), "1Gi", "default", "u1", NULL, 0, NULL, NULL },
	{ "request not above capacity", "default/good-pvc",
	    "good-pvc", "vol-3", "2Gi", "2048Mi", "u1", NULL,
	    "vol-3", EBS("vol-3"), "2Gi", "default", "u1", NULL, 0, NULL, NULL },
	{ "volume bound to another claim", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", EBS("vol-3"), "1Gi", "default", "u2", NULL, 1, NULL, NULL },
	{ "volume bound in another namespace", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", EBS("vol-3"), "1Gi", "other", "u1", NULL, 1, NULL, NULL },
	{ "volume with no claimRef", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", EBS("vol-3"), "1Gi", NULL, NULL, NULL, 1, NULL, NULL },
	{ "resizer annotation already set", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1",
	    "{\"" EXPAND_RESIZER_ANNOTATION "\":\"ebs.csi.aws.com\"}",
	    "vol-3", EBS("vol-3"), "1Gi", "default", "u1", NULL,
	    0, NULL, MIGRATED_MSG("kubernetes.io/aws-ebs") },
	{ "resizer annotation of another driver", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1",
	    "{\"" EXPAND_RESIZER_ANNOTATION "\":\"x.example.com\"}",
	    "vol-3", EBS("vol-3"), "1Gi", "default", "u1", NULL,
	    0, "ebs.csi.aws.com", MIGRATED_MSG("kubernetes.io/aws-ebs") },
	{ "gce pd", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"gcePersistentDisk\":{\"pdName\":\"d\"}", "1Gi", "default", "u1", NULL,
	    0, "pd.csi.storage.gke.io", MIGRATED_MSG("kubernetes.io/gce-pd") },
	{ "azure disk", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"azureDisk\":{\"diskName\":\"d\",\"diskURI\":\"u\"}", "1Gi", "default",
	    "u1", NULL, 0, "disk.csi.azure.com", MIGRATED_MSG("kubernetes.io/azure-disk") },
	{ "azure file", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"azureFile\":{\"secretName\":\"s\",\"shareName\":\"x\"}", "1Gi",
	    "default", "u1", NULL, 0, "file.csi.azure.com",
	    MIGRATED_MSG("kubernetes.io/azure-file") },
	{ "cinder", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"cinder\":{\"volumeID\":\"v\"}", "1Gi", "default", "u1", NULL,
	    0, "cinder.csi.openstack.org", MIGRATED_MSG("kubernetes.io/cinder") },
	{ "vsphere", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"vsphereVolume\":{\"volumePath\":\"p\"}", "1Gi", "default", "u1", NULL,
	    0, "csi.vsphere.vmware.com", MIGRATED_MSG("kubernetes.io/vsphere-volume") },
	{ "portworx", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"portworxVolume\":{\"volumeID\":\"v\"}", "1Gi", "default", "u1", NULL,
	    0, "pxd.portworx.com", MIGRATED_MSG("kubernetes.io/portworx-volume") },
	{ "other in-tree source (nfs)", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "2Gi", "u1", NULL,
	    "vol-3", "\"nfs\":{\"server\":\"s\",\"path\":\"/\"}", "1Gi", "default", "u1", NULL,
	    0, NULL, EXTERNAL_MSG },
	{ "a size that is no quantity", "default/good-pvc",
	    "good-pvc", "vol-3", "1Gi", "lots", "u1", NULL,
	    "vol-3", EBS("vol-3"), "1Gi", "default", "u1", NULL, 1, NULL, NULL },
};

static void
sync_case(void **state)
{
	const struct sync_case *r = *state;
	struct ctl_world *w = ctl_world_new(&expand_controller_type, NULL);

	ctl_cache(w, resource_find("persistentvolumeclaims"), claim(r->claim,
	    r->claim_volume, r->status_size, r->request_size, r->claim_uid, "Bound",
	    r->claim_annotations));
	if (r->volume != NULL)
		ctl_cache(w, resource_find("persistentvolumes"), volume(r->volume, r->source,
		    r->volume_size, r->ref_ns, r->ref_uid, r->volume_annotations));
	ctl_sync(w, r->key, 0);
	assert_int_equal(w->result.failed, r->want_error);
	assert_int_equal(w->result.nwrites, r->want_resizer != NULL);
	if (r->want_resizer != NULL) {
		const struct action *a = &w->result.writes[0];
		const cJSON *ann = json_annotation(a->body, EXPAND_RESIZER_ANNOTATION);

		assert_int_equal(a->type, ACTION_PATCH);
		assert_string_equal(a->subresource, "status");
		assert_string_equal(a->namespace, "default");
		assert_string_equal(a->name, r->claim);
		assert_non_null(ann);
		assert_string_equal(ann->valuestring, r->want_resizer);
		assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "7");
	}
	assert_int_equal(w->result.nevents, r->want_event != NULL);
	if (r->want_event != NULL) {
		assert_string_equal(w->result.events[0].type, "Normal");
		assert_string_equal(w->result.events[0].reason, "ExternalExpanding");
		assert_string_equal(w->result.events[0].message, r->want_event);
	}
	ctl_world_free(w);
}

/* Queued: a Bound claim added or deleted, or updated with a larger request or capacity.
 * Not: a claim not Bound; an update that grows neither. */
static void
handlers_queue(void **state)
{
	struct ctl_world *w = ctl_world_new(&expand_controller_type, NULL);
	const struct resource *claims = resource_find("persistentvolumeclaims");
	const struct resource *volumes = resource_find("persistentvolumes");
	char *keys;

	(void)state;
	ctl_tell(w, INFORMER_ADDED, claims, claim("a", "v", "1Gi", "2Gi", "u", "Pending",
	    NULL), NULL);
	ctl_tell(w, INFORMER_UPDATED, claims, claim("a", "v", "1Gi", "2Gi", "u", "Pending",
	    NULL), claim("a", "v", "1Gi", "1Gi", "u", "Pending", NULL));
	ctl_tell(w, INFORMER_UPDATED, claims, claim("a", "v", "1Gi", "1Gi", "u", "Bound",
	    "{\"x\":\"y\"}"), claim("a", "v", "1Gi", "1Gi", "u", "Bound", NULL));
	ctl_tell(w, INFORMER_UPDATED, claims, claim("a", "v", "1Gi", "1Gi", "u", "Bound",
	    NULL), claim("a", "v", "1Gi", "2Gi", "u", "Bound", NULL));
	ctl_tell(w, INFORMER_ADDED, volumes, volume("v", EBS("v"), "1Gi", "default", "u",
	    NULL), NULL);
	assert_string_equal(keys = ctl_keys(w), "");
	free(keys);
	ctl_tell(w, INFORMER_ADDED, claims, claim("a", "v", "1Gi", "1Gi", "u", "Bound", NULL),
	    NULL);
	assert_string_equal(keys = ctl_keys(w), "default/a");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, claims, claim("a", "v", "1Gi", "2Gi", "u", "Bound",
	    NULL), claim("a", "v", "1Gi", "1Gi", "u", "Bound", NULL));
	assert_string_equal(keys = ctl_keys(w), "default/a");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, claims, claim("a", "v", "2Gi", "2Gi", "u", "Bound",
	    NULL), claim("a", "v", "1Gi", "2Gi", "u", "Bound", NULL));
	assert_string_equal(keys = ctl_keys(w), "default/a");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, claims, claim("a", "v", "2Gi", "2Gi", "u", "Bound",
	    NULL), NULL);
	assert_string_equal(keys = ctl_keys(w), "default/a");
	free(keys);
	ctl_world_free(w);
}

/* The keys listed are the Bound claims. */
static void
keys_are_bound_claims(void **state)
{
	struct ctl_world *w = ctl_world_new(&expand_controller_type, NULL);
	const struct resource *claims = resource_find("persistentvolumeclaims");
	char *keys;

	(void)state;
	ctl_cache(w, claims, claim("a", "v", "1Gi", "2Gi", "u1", "Bound", NULL));
	ctl_cache(w, claims, claim("b", "", "1Gi", "2Gi", "u2", "Pending", NULL));
	ctl_list_keys(w);
	assert_string_equal(keys = ctl_keys(w), "default/a");
	free(keys);
	ctl_world_free(w);
}

/* The view shows each Bound claim, its sizes and the resizer its volume asks for. */
static void
view_shows_the_claims(void **state)
{
	struct ctl_world *w = ctl_world_new(&expand_controller_type, NULL);
	const struct resource *claims = resource_find("persistentvolumeclaims");
	const struct resource *volumes = resource_find("persistentvolumes");
	sqlite3_stmt *stmt;
	struct buf got;

	(void)state;
	ctl_cache(w, claims, claim("a", "va", "1Gi", "2Gi", "u1", "Bound", NULL));
	ctl_cache(w, claims, claim("b", "vb", "1Gi", "2Gi", "u2", "Bound",
	    "{\"" EXPAND_RESIZER_ANNOTATION "\":\"ebs.csi.aws.com\"}"));
	ctl_cache(w, claims, claim("c", "", "1Gi", "2Gi", "u3", "Pending", NULL));
	ctl_cache(w, volumes, volume("va", CSI("x.example.com", "h"), "1Gi", "default", "u1",
	    NULL));
	ctl_cache(w, volumes, volume("vb", EBS("vb"), "1Gi", "default", "other", NULL));
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT claim, requested,"
	    " capacity, volume_bound_here, ifnull(migrated_from, '-'), resizer,"
	    " ifnull(resizer_annotation, '-') FROM claims_to_expand ORDER BY claim", -1,
	    &stmt, NULL), SQLITE_OK);
	buf_init(&got);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&got, "%s %s %s %d %s %s %s;", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_text(stmt, 2),
		    sqlite3_column_int(stmt, 3), sqlite3_column_text(stmt, 4),
		    sqlite3_column_text(stmt, 5), sqlite3_column_text(stmt, 6));
	sqlite3_finalize(stmt);
	assert_string_equal(got.data, "a 2Gi 1Gi 1 - x.example.com -;"
	    "b 2Gi 1Gi 0 kubernetes.io/aws-ebs ebs.csi.aws.com ebs.csi.aws.com;");
	buf_free(&got);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_cases) + 3];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, NULL, NULL,
		    (void *)&sync_cases[i] };
	tests[n++] = (struct CMUnitTest){ "what the handlers queue", handlers_queue, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the keys are the Bound claims",
	    keys_are_bound_claims, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the view claims_to_expand", view_shows_the_claims,
	    NULL, NULL, NULL };
	return _cmocka_run_group_tests("expand", tests, n, NULL, NULL);
}
