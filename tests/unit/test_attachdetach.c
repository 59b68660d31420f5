/*
 * test_attachdetach.c - the attach/detach controller for CSI volumes: rows after kube
 * v1.36.3's reconciler_test.go (one desired volume attached; detached once unmounted; not
 * detached while mounted) and attach_detach_controller_test.go's desired-state rules
 * (unmanaged nodes, terminated pods, claims not Bound, CSIDriver attachRequired), as data
 * over one world: node n1, pod p1 on it using claim c1, Bound to volume pv1 of driver
 * d.example.com, handle h1. Then the attachment's name, the handlers and the keys.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/attachdetach.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* kube's name of h1, d.example.com, n1 (sha256sum of "h1d.example.comn1"). */
#define VA1 "csi-b078b22d1096952a15ef3207f7f853696502bd1e6a5ae841d5eb413fc87f8ee8"
#define UNIQUE1 "kubernetes.io/csi/d.example.com^h1"

static const struct sync_case {
	const char *name;
	int unmanaged;		/* n1 has no controller-managed annotation */
	int no_pod;		/* no pod p1 */
	const char *phase;	/* p1's phase; NULL: Running */
	int deleting;		/* p1 has a deletionTimestamp */
	const char *container;	/* p1's container state (running, waiting, terminated);
				   NULL: no container status */
	int ephemeral;		/* p1's volume is generic ephemeral (claim p1-data) */
	int ephemeral_owned;	/* ... and the claim is controlled by p1 */
	const char *claim_phase;	/* NULL: Bound */
	int other_claim_uid;	/* pv1's claimRef names another uid */
	int not_csi;		/* pv1 is an nfs volume */
	int driver;		/* CSIDriver d.example.com: 0 none, 1 attachRequired true,
				   2 attachRequired false */
	int va;			/* VA1: 0 none, 1 not attached, 2 attached */
	int in_use;		/* n1 lists UNIQUE1 in volumesInUse */
	int listed;		/* n1 lists UNIQUE1 in volumesAttached */
	const char *want;	/* the writes: "attach NAME", "status [names]", "detach NAME",
				   then the events: "event REASON NAMESPACE/POD" */
} sync_cases[] = {
	{ "one desired volume is attached (Test_Run_Positive_OneDesiredVolumeAttach)",
	    .want = "attach " VA1 ";" },
	{ "an attachment that exists is not created again", .va = 1, .want = "" },
	{ "an attached volume is reported in the node's volumesAttached, an event on its pod",
	    .va = 2, .want = "status [" UNIQUE1 "];event SuccessfulAttachVolume default/p1;" },
	{ "a volume attached and still in use, without its pod: reported, no event",
	    .no_pod = 1, .va = 2, .in_use = 1,  .want = "status [" UNIQUE1 "];" },
	{ "a volume reported already: nothing to write", .va = 2, .listed = 1, .want = "" },
	{ "a node not managed by the controller gets nothing", .unmanaged = 1, .want = "" },
	{ "unmanaged node: its attachments are left alone", .unmanaged = 1, .no_pod = 1,
	    .va = 2, .listed = 1, .want = "" },
	{ "no pod, unmounted: detached after the status "
	    "(Test_Run_Positive_OneDesiredVolumeAttachThenDetachWithUnmountedVolume)",
	    .no_pod = 1, .va = 2, .listed = 1, .want = "status [];detach " VA1 ";" },
	{ "no pod, still mounted: not detached "
	    "(Test_Run_Negative_OneDesiredVolumeAttachThenDetachWithMountedVolume)",
	    .no_pod = 1, .va = 2, .listed = 1, .in_use = 1, .want = "" },
	{ "no pod, an attachment not yet attached and unused: detached", .no_pod = 1,
	    .va = 1, .want = "detach " VA1 ";" },
	{ "a Succeeded pod wants nothing", .phase = "Succeeded", .va = 2, .listed = 1,
	    .want = "status [];detach " VA1 ";" },
	{ "a Failed pod wants nothing", .phase = "Failed", .want = "" },
	{ "a deleted pod with no container running wants nothing", .deleting = 1,
	    .container = "terminated", .want = "" },
	{ "a deleted pod with no container status wants nothing", .deleting = 1,
	    .want = "" },
	{ "a deleted pod whose container waits wants nothing", .deleting = 1,
	    .container = "waiting", .want = "" },
	{ "a deleted pod whose container runs still wants its volume", .deleting = 1,
	    .container = "running", .want = "attach " VA1 ";" },
	{ "a claim not Bound wants nothing", .claim_phase = "Pending", .want = "" },
	{ "a volume bound to another claim wants nothing", .other_claim_uid = 1, .want = "" },
	{ "a volume that is not CSI wants nothing", .not_csi = 1, .want = "" },
	{ "a CSIDriver that requires attach", .driver = 1, .want = "attach " VA1 ";" },
	{ "a CSIDriver that requires no attach", .driver = 2, .want = "" },
	{ "a generic ephemeral volume controlled by the pod", .ephemeral = 1,
	    .ephemeral_owned = 1, .want = "attach " VA1 ";" },
	{ "a generic ephemeral volume's claim not controlled by the pod", .ephemeral = 1,
	    .want = "" },
};

static cJSON *
node(int managed, int in_use, int listed)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
	    "{\"name\":\"n1\",\"resourceVersion\":\"1\",\"uid\":\"uid-n1\"%s},\"status\":{%s%s%s}}",
	    managed ? ",\"annotations\":{\"" ATTACHDETACH_MANAGED_ANNOTATION "\":\"true\"}" : "",
	    in_use ? "\"volumesInUse\":[\"" UNIQUE1 "\"]" : "", in_use && listed ? "," : "",
	    listed ? "\"volumesAttached\":[{\"name\":\"" UNIQUE1 "\",\"devicePath\":\"\"}]" :
	    "");
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

static void
build(struct ctl_world *w, const struct sync_case *r)
{
	const char *claim = r->ephemeral ? "p1-data" : "c1";
	char *text;

	ctl_cache(w, resource_find("nodes"), node(!r->unmanaged, r->in_use, r->listed));
	if (!r->no_pod) {
		text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
		    "\"p1\",\"namespace\":\"default\",\"resourceVersion\":\"1\",\"uid\":\"uid-p1\"%s},\"spec\":"
		    "{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"
		    "\"volumes\":[{\"name\":\"data\",%s}]},\"status\":{\"phase\":\"%s\"%s%s%s}}",
		    r->deleting ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
		    r->ephemeral ? "\"ephemeral\":{\"volumeClaimTemplate\":{\"spec\":{}}}" :
		    "\"persistentVolumeClaim\":{\"claimName\":\"c1\"}",
		    r->phase != NULL ? r->phase : "Running",
		    r->container != NULL ? ",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"" :
		    "", r->container != NULL ? r->container : "",
		    r->container != NULL ? "\":{}}}]" : "");
		ctl_cache(w, resource_find("pods"), fixture_parse(text));
		free(text);
	}
	text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"resourceVersion\":\"1\",\"uid\":\"uid-claim\"%s},"
	    "\"spec\":{\"volumeName\":\"pv1\"},\"status\":{\"phase\":\"%s\"}}", claim,
	    r->ephemeral_owned ? ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"name\":\"p1\",\"resourceVersion\":\"1\",\"uid\":\"uid-p1\",\"controller\":true}]" : "",
	    r->claim_phase != NULL ? r->claim_phase : "Bound");
	ctl_cache(w, resource_find("persistentvolumeclaims"), fixture_parse(text));
	free(text);
	text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":"
	    "{\"name\":\"pv1\",\"resourceVersion\":\"1\",\"uid\":\"uid-pv1\"},\"spec\":{%s,\"claimRef\":{\"namespace\":"
	    "\"default\",\"name\":\"%s\",\"uid\":\"%s\"}}}",
	    r->not_csi ? "\"nfs\":{\"server\":\"s\",\"path\":\"/\"}" :
	    "\"csi\":{\"driver\":\"d.example.com\",\"volumeHandle\":\"h1\"}", claim,
	    r->other_claim_uid ? "uid-other" : "uid-claim");
	ctl_cache(w, resource_find("persistentvolumes"), fixture_parse(text));
	free(text);
	if (r->driver != 0) {
		text = xasprintf("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"CSIDriver\","
		    "\"metadata\":{\"name\":\"d.example.com\",\"resourceVersion\":\"1\",\"uid\":\"uid-d\"},\"spec\":"
		    "{\"attachRequired\":%s}}", r->driver == 1 ? "true" : "false");
		ctl_cache(w, resource_find("csidrivers"), fixture_parse(text));
		free(text);
	}
	if (r->va != 0) {
		text = xasprintf("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":"
		    "\"VolumeAttachment\",\"metadata\":{\"name\":\"" VA1 "\",\"resourceVersion\":\"1\",\"uid\":\"uid-va\"},"
		    "\"spec\":{\"attacher\":\"d.example.com\",\"nodeName\":\"n1\",\"source\":"
		    "{\"persistentVolumeName\":\"pv1\"}},\"status\":{\"attached\":%s}}",
		    r->va == 2 ? "true" : "false");
		ctl_cache(w, resource_find("volumeattachments"), fixture_parse(text));
		free(text);
	}
}

/* The writes of the last sync, as the rows spell them. */
static char *
writes_of(const struct sync_result *res)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < res->nwrites; i++) {
		const struct action *a = &res->writes[i];

		if (a->type == ACTION_CREATE) {
			assert_string_equal(json_string(a->body, "spec.attacher"), "d.example.com");
			assert_string_equal(json_string(a->body, "spec.nodeName"), "n1");
			assert_string_equal(json_string(a->body,
			    "spec.source.persistentVolumeName"), "pv1");
			assert_string_equal(json_string(a->body, "metadata.name"), a->name);
			buf_printf(&b, "attach %s;", a->name);
		} else if (a->type == ACTION_PATCH) {
			const cJSON *list = json_path(a->body, "status.volumesAttached"), *e;
			int first = 1;

			assert_string_equal(a->subresource, "status");
			assert_string_equal(a->name, "n1");
			buf_printf(&b, "status [");
			cJSON_ArrayForEach(e, list) {
				assert_string_equal(json_string(e, "devicePath"), "");
				buf_printf(&b, "%s%s", first ? "" : " ", json_string(e, "name"));
				first = 0;
			}
			buf_printf(&b, "];");
		} else if (a->type == ACTION_DELETE) {
			assert_string_equal(a->uid, "uid-va");
			buf_printf(&b, "detach %s;", a->name);
		} else {
			buf_printf(&b, "unexpected;");
		}
	}
	for (int i = 0; i < res->nevents; i++) {
		const struct sync_event *ev = &res->events[i];

		if (ev->object == NULL) {
			buf_printf(&b, "event %s;", ev->reason);
			continue;
		}
		assert_ptr_equal(ev->resource, resource_find("pods"));
		if (strcmp(ev->reason, "SuccessfulAttachVolume") == 0) {
			assert_string_equal(ev->type, "Normal");
			assert_string_equal(ev->message,
			    "AttachVolume.Attach succeeded for volume \"pv1\" ");
			assert_string_equal(json_string(ev->object, "metadata.uid"), "uid-p1");
		}
		buf_printf(&b, "event %s %s/%s;", ev->reason,
		    json_string(ev->object, "metadata.namespace"),
		    json_string(ev->object, "metadata.name"));
	}
	return b.data != NULL ? b.data : xstrdup("");
}

static void
sync_case(void **state)
{
	const struct sync_case *r = *state;
	struct ctl_world *w = ctl_world_new(&attachdetach_controller_type, NULL);
	char *got;

	build(w, r);
	ctl_sync(w, "n1", 0);
	got = writes_of(&w->result);
	assert_string_equal(got, r->want);
	free(got);
	ctl_world_free(w);
}

/* kube's getAttachmentName, checked against sha256sum; and another volume's name. */
static void
attachment_name(void **state)
{
	char *name = attachdetach_attachment_name("h1", "d.example.com", "n1");

	(void)state;
	assert_string_equal(name, VA1);
	free(name);
	name = attachdetach_attachment_name("h2", "d.example.com", "n1");
	assert_string_equal(name, "csi-12a8fdffc4e6f078278060b19850391ae25a52e2b3f66c120f2dc0c"
	    "67ec1ab92");
	free(name);
}

/* A pod and an attachment queue their node (old and new); a claim, the nodes of the pods
 * that name it; a volume, those of its claim and of its attachments; a CSIDriver, the
 * managed nodes; a node itself. The keys listed are the managed nodes. */
static void
handlers_and_keys(void **state)
{
	struct ctl_world *w = ctl_world_new(&attachdetach_controller_type, NULL);
	static const struct sync_case world = { "world", .want = "" };

	(void)state;
	build(w, &world);
	ctl_cache(w, resource_find("nodes"), fixture_parse("{\"metadata\":{\"name\":\"n2\","
	    "\"resourceVersion\":\"1\",\"uid\":\"uid-n2\"}}"));
	ctl_tell(w, INFORMER_UPDATED, resource_find("pods"), fixture_parse("{\"metadata\":"
	    "{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"a\"}}"),
	    fixture_parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},"
	    "\"spec\":{\"nodeName\":\"b\"}}"));
	ctl_tell(w, INFORMER_ADDED, resource_find("volumeattachments"),
	    fixture_parse("{\"metadata\":{\"name\":\"v\"},\"spec\":{\"nodeName\":\"c\"}}"),
	    NULL);
	ctl_tell(w, INFORMER_DELETED, resource_find("nodes"),
	    fixture_parse("{\"metadata\":{\"name\":\"d\"}}"), NULL);
	ctl_keys_expect(w, "a,b,c,d");
	/* a claim: the nodes of the pods that name it (p1 on n1 names c1) */
	ctl_tell(w, INFORMER_ADDED, resource_find("persistentvolumeclaims"),
	    fixture_parse("{\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"}}"), NULL);
	ctl_keys_expect(w, "");
	ctl_tell(w, INFORMER_UPDATED, resource_find("persistentvolumeclaims"),
	    fixture_parse("{\"metadata\":{\"name\":\"c1\",\"namespace\":\"default\"}}"),
	    fixture_parse("{\"metadata\":{\"name\":\"c1\",\"namespace\":\"default\"}}"));
	ctl_keys_expect(w, "n1");
	/* a volume: those of its claim, old and new, and those its attachments name */
	ctl_tell(w, INFORMER_UPDATED, resource_find("persistentvolumes"),
	    fixture_parse("{\"metadata\":{\"name\":\"pv9\"},\"spec\":{\"claimRef\":"
	    "{\"namespace\":\"default\",\"name\":\"other\"}}}"),
	    fixture_parse("{\"metadata\":{\"name\":\"pv9\"},\"spec\":{\"claimRef\":"
	    "{\"namespace\":\"default\",\"name\":\"c1\"}}}"));
	ctl_keys_expect(w, "n1");
	ctl_cache(w, resource_find("volumeattachments"), fixture_parse("{\"metadata\":"
	    "{\"name\":\"va9\",\"resourceVersion\":\"1\",\"uid\":\"uid-va9\"},\"spec\":"
	    "{\"nodeName\":\"n7\",\"source\":{\"persistentVolumeName\":\"pv9\"}}}"));
	ctl_tell(w, INFORMER_DELETED, resource_find("persistentvolumes"),
	    fixture_parse("{\"metadata\":{\"name\":\"pv9\"},\"spec\":{}}"), NULL);
	ctl_keys_expect(w, "n7");
	/* a CSIDriver: every managed node */
	ctl_tell(w, INFORMER_ADDED, resource_find("csidrivers"),
	    fixture_parse("{\"metadata\":{\"name\":\"d.example.com\"}}"), NULL);
	ctl_keys_expect(w, "n1");
	ctl_list_keys(w);
	ctl_keys_expect(w, "n1");
	ctl_world_free(w);
}

/* Caches pv1 at resourceVersion rv with access modes modes (a JSON array). */
static void
pv_with_modes(struct ctl_world *w, int rv, const char *modes)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
	    "\"metadata\":{\"name\":\"pv1\",\"resourceVersion\":\"%d\",\"uid\":\"uid-pv1\"},"
	    "\"spec\":{\"accessModes\":%s,\"csi\":{\"driver\":\"d.example.com\","
	    "\"volumeHandle\":\"h1\"},\"claimRef\":{\"namespace\":\"default\",\"name\":"
	    "\"c1\",\"uid\":\"uid-claim\"}}}", rv, modes);

	ctl_cache(w, resource_find("persistentvolumes"), fixture_parse(text));
	free(text);
}

/* Caches the attachment of pv1 to n2, attached or not. */
static void
attached_elsewhere(struct ctl_world *w, int attached)
{
	char *text = xasprintf("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":"
	    "\"VolumeAttachment\",\"metadata\":{\"name\":\"va-n2\",\"resourceVersion\":"
	    "\"%d\",\"uid\":\"uid-va-n2\"},\"spec\":{\"attacher\":\"d.example.com\","
	    "\"nodeName\":\"n2\",\"source\":{\"persistentVolumeName\":\"pv1\"}},"
	    "\"status\":{\"attached\":%s}}", 3 + attached, attached ? "true" : "false");

	ctl_cache(w, resource_find("volumeattachments"), fixture_parse(text));
	free(text);
}

/* kube's IsMultiAttachAllowed and reportMultiAttachError: a ReadWriteOnce volume that
 * another node has an attachment of is not attached; once that one is attached, the
 * waiting pod gets the Multi-Attach error naming the pod that holds the volume, once;
 * after the other attachment is gone the volume is attached, and a later wait is
 * reported again. A ReadWriteMany volume is attached whatever other nodes have. */
static void
multi_attach(void **state)
{
	struct ctl_world *w = ctl_world_new(&attachdetach_controller_type, NULL);
	static const struct sync_case world = { "world", .want = "" };
	char *got;

	(void)state;
	build(w, &world);
	pv_with_modes(w, 2, "[\"ReadWriteOnce\"]");
	ctl_cache(w, resource_find("nodes"), fixture_parse("{\"metadata\":{\"name\":\"n2\","
	    "\"resourceVersion\":\"1\",\"uid\":\"uid-n2\",\"annotations\":{\""
	    ATTACHDETACH_MANAGED_ANNOTATION "\":\"true\"}}}"));
	ctl_cache(w, resource_find("pods"), fixture_parse("{\"metadata\":{\"name\":\"p2\","
	    "\"namespace\":\"default\",\"resourceVersion\":\"1\",\"uid\":\"uid-p2\"},"
	    "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\",\"image\":"
	    "\"i\"}],\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":"
	    "{\"claimName\":\"c1\"}}]},\"status\":{\"phase\":\"Running\"}}"));

	attached_elsewhere(w, 0);
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result), "");	/* waits, silent */
	free(got);

	attached_elsewhere(w, 1);
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result),
	    "event FailedAttachVolume default/p1;");
	free(got);
	assert_string_equal(w->result.events[0].type, "Warning");
	assert_string_equal(w->result.events[0].message, "Multi-Attach error for volume "
	    "\"pv1\" Volume is already used by pod(s) p2");
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result), "");	/* reported once */
	free(got);

	/* the other node's attachment queues the nodes that want the volume */
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, resource_find("volumeattachments"),
	    fixture_parse("{\"metadata\":{\"name\":\"va-n2\"},\"spec\":{\"nodeName\":"
	    "\"n2\",\"source\":{\"persistentVolumeName\":\"pv1\"}}}"), NULL);
	ctl_keys_expect(w, "n2,n1");
	ctl_uncache(w, resource_find("volumeattachments"), "uid-va-n2");
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result), "attach " VA1 ";");
	free(got);

	/* attached elsewhere again (n1's attachment not cached yet): reported again */
	attached_elsewhere(w, 1);
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result),
	    "event FailedAttachVolume default/p1;");
	free(got);

	pv_with_modes(w, 3, "[\"ReadWriteOnce\",\"ReadWriteMany\"]");
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result), "attach " VA1 ";");
	free(got);
	ctl_world_free(w);
}

/* Reads the text of every row of sql, columns joined by spaces, rows by ';'. */
static char *
rows_of(struct ctl_world *w, const char *sql)
{
	sqlite3_stmt *stmt;
	struct buf got;

	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), sql, -1, &stmt, NULL),
	    SQLITE_OK);
	buf_init(&got);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(stmt); i++)
			buf_printf(&got, "%s%s", i > 0 ? " " : "",
			    sqlite3_column_type(stmt, i) == SQLITE_NULL ? "-" :
			    (const char *)sqlite3_column_text(stmt, i));
		buf_printf(&got, ";");
	}
	sqlite3_finalize(stmt);
	return got.data != NULL ? got.data : xstrdup("");
}

/* The views: the pod's volume desired on n1, with its attachment; the attachment, in use
 * and desired; with the pod Succeeded, neither desired. */
static void
views_show_desired_and_attachments(void **state)
{
	static const struct sync_case attached = { "attached", .va = 2, .in_use = 1,
	    .want = "" };
	static const struct sync_case done = { "done", .va = 2, .phase = "Succeeded",
	    .want = "" };
	struct ctl_world *w = ctl_world_new(&attachdetach_controller_type, NULL);
	char *got;

	(void)state;
	build(w, &attached);
	got = rows_of(w, "SELECT node, namespace, pod, claim, volume, driver, volume_handle,"
	    " unique_name, attachment, attached FROM attachdetach_desired");
	assert_string_equal(got, "n1 default p1 c1 pv1 d.example.com h1 " UNIQUE1 " " VA1
	    " 1;");
	free(got);
	got = rows_of(w, "SELECT node, attachment, driver, volume, attached, deleting,"
	    " unique_name, in_use, desired FROM attachdetach_attachments");
	assert_string_equal(got, "n1 " VA1 " d.example.com pv1 1 0 " UNIQUE1 " 1 1;");
	free(got);
	ctl_world_free(w);
	w = ctl_world_new(&attachdetach_controller_type, NULL);
	build(w, &done);
	got = rows_of(w, "SELECT count(*) FROM attachdetach_desired");
	assert_string_equal(got, "0;");
	free(got);
	got = rows_of(w, "SELECT in_use, desired FROM attachdetach_attachments");
	assert_string_equal(got, "0 0;");
	free(got);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_cases) + 4];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, NULL, NULL,
		    (void *)&sync_cases[i] };
	tests[n++] = (struct CMUnitTest){ "kube's attachment name", attachment_name, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the handlers and keys", handlers_and_keys, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a volume attached to one node at a time",
	    multi_attach, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the views", views_show_desired_and_attachments,
	    NULL, NULL, NULL };
	return _cmocka_run_group_tests("attachdetach", tests, n, NULL, NULL);
}
