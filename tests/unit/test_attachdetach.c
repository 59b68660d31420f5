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
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* kube's name of h1, d.example.com, n1 (sha256sum of "h1d.example.comn1"). */
#define VA1 "csi-b078b22d1096952a15ef3207f7f853696502bd1e6a5ae841d5eb413fc87f8ee8"
#define UNIQUE1 "kubernetes.io/csi/d.example.com^h1"

static const struct sync_case {
	const char *name;
	int unmanaged;		/* n1 has no controller-managed annotation */
	const char *annotation;	/* the annotation's value; NULL: "true" */
	int node_gone;		/* no node n1 */
	int not_ready;		/* n1's Ready condition is False */
	int out_of_service;	/* n1 has the taint node.kubernetes.io/out-of-service */
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
	const char *attach_error;	/* VA1's status.attachError.message */
	int in_use;		/* n1 lists UNIQUE1 in volumesInUse */
	int listed;		/* n1 lists UNIQUE1 in volumesAttached */
	double later;		/* the sync checked runs this many seconds after a first one */
	int no_force;		/* --disable-force-detach-on-timeout */
	const char *want;	/* the writes: "attach NAME", "status [names]", "detach NAME",
				   "force-detach NAME" (counted as forced), then the events:
				   "event REASON NAMESPACE/POD", then "requeue SECONDS" */
} sync_cases[] = {
	{ "one desired volume is attached (Test_Run_Positive_OneDesiredVolumeAttach)",
	    .want = "attach " VA1 ";requeue 120;" },
	{ "an attachment that exists is not created again; its attach waits",
	    .va = 1, .want = "requeue 120;" },
	{ "an attached volume is reported in the node's volumesAttached, an event on its pod",
	    .va = 2, .want = "status [" UNIQUE1 "];event SuccessfulAttachVolume default/p1;" },
	{ "a volume attached and still in use, without its pod: reported, no event",
	    .no_pod = 1, .va = 2, .in_use = 1,  .want = "status [" UNIQUE1 "];" },
	{ "a volume reported already: nothing to write", .va = 2, .listed = 1, .want = "" },
	{ "a node not managed by the controller gets nothing", .unmanaged = 1, .want = "" },
	{ "a node annotated \"false\" is managed (kube asks only that the annotation is there)",
	    .annotation = "false", .want = "attach " VA1 ";requeue 120;" },
	{ "unmanaged node: its unused attachment is detached (kube's actual state has it)",
	    .unmanaged = 1, .no_pod = 1, .va = 2, .listed = 1,
	    .want = "status [];detach " VA1 ";" },
	{ "unmanaged node: its pod's wants do not count, the attachment is detached",
	    .unmanaged = 1, .va = 2, .listed = 1, .want = "status [];detach " VA1 ";" },
	{ "unmanaged node: an attachment still in use waits", .unmanaged = 1, .va = 2,
	    .listed = 1, .in_use = 1, .want = "" },
	{ "no pod, unmounted: detached after the status "
	    "(Test_Run_Positive_OneDesiredVolumeAttachThenDetachWithUnmountedVolume)",
	    .no_pod = 1, .va = 2, .listed = 1, .want = "status [];detach " VA1 ";" },
	{ "no pod, still mounted: not detached "
	    "(Test_Run_Negative_OneDesiredVolumeAttachThenDetachWithMountedVolume)",
	    .no_pod = 1, .va = 2, .listed = 1, .in_use = 1, .want = "" },
	{ "no pod, an attachment not yet attached and unused: detached", .no_pod = 1,
	    .va = 1, .want = "detach " VA1 ";" },
	{ "no pod, mounted, out-of-service taint: force detached at once "
	    "(Test_Run_OneVolumeDetachOnOutOfServiceTaintedNode)", .no_pod = 1, .va = 2,
	    .listed = 1, .in_use = 1, .out_of_service = 1,
	    .want = "status [];force-detach " VA1 ";" },
	{ "no pod, unmounted, out-of-service taint: the detach counts as forced",
	    .no_pod = 1, .va = 2, .listed = 1, .out_of_service = 1,
	    .want = "status [];force-detach " VA1 ";" },
	{ "no pod, mounted, no taint, Ready, past the wait: not detached "
	    "(Test_Run_OneVolumeDetachOnNoOutOfServiceTaintedNode)", .no_pod = 1, .va = 2,
	    .listed = 1, .in_use = 1, .later = 400, .want = "" },
	{ "no pod, mounted, not Ready, within the wait: waits, looked at again when it ends",
	    .no_pod = 1, .va = 2, .listed = 1, .in_use = 1, .not_ready = 1, .later = 60,
	    .want = "requeue 300.001;" },
	{ "no pod, mounted, not Ready, past the wait: force detached "
	    "(Test_Run_OneVolumeDetachOnUnhealthyNode)", .no_pod = 1, .va = 2, .listed = 1,
	    .in_use = 1, .not_ready = 1, .later = 361,
	    .want = "status [];force-detach " VA1 ";" },
	{ "no pod, mounted, not Ready, past the wait, force detach disabled: waits "
	    "(Test_Run_OneVolumeDetachOnUnhealthyNodeWithForceDetachOnUnmountDisabled)",
	    .no_pod = 1, .va = 2, .listed = 1, .in_use = 1, .not_ready = 1, .later = 361,
	    .no_force = 1, .want = "" },
	{ "no pod, mounted, not Ready, force detach disabled, out of service: detached",
	    .no_pod = 1, .va = 2, .listed = 1, .in_use = 1, .not_ready = 1, .no_force = 1,
	    .out_of_service = 1, .want = "status [];force-detach " VA1 ";" },
	{ "no pod, unmounted, Ready, past the wait (a detach that failed so long): counted as "
	    "forced by timeout", .no_pod = 1, .va = 1, .later = 361,
	    .want = "force-detach " VA1 ";" },
	{ "node gone, no pod: its attachment is detached, no status", .node_gone = 1,
	    .no_pod = 1, .va = 2, .want = "detach " VA1 ";" },
	{ "node gone, its pod still there: the attachment stays (kube keeps the node)",
	    .node_gone = 1, .va = 2, .want = "" },
	{ "node gone, its pod still there, no attachment: none is made", .node_gone = 1,
	    .want = "" },
	{ "the attacher's error: FailedAttachVolume on the pod, the next attempt after 0.5 s",
	    .va = 1, .attach_error = "rpc error: no such disk",
	    .want = "event FailedAttachVolume default/p1;requeue 0.5;" },
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
	    .container = "running", .want = "attach " VA1 ";requeue 120;" },
	{ "a claim not Bound wants nothing", .claim_phase = "Pending", .want = "" },
	{ "a volume bound to another claim wants nothing", .other_claim_uid = 1, .want = "" },
	{ "a volume that is not CSI wants nothing", .not_csi = 1, .want = "" },
	{ "a CSIDriver that requires attach", .driver = 1, .want = "attach " VA1
	    ";requeue 120;" },
	{ "a CSIDriver that requires no attach", .driver = 2, .want = "" },
	{ "a generic ephemeral volume controlled by the pod", .ephemeral = 1,
	    .ephemeral_owned = 1, .want = "attach " VA1 ";requeue 120;" },
	{ "a generic ephemeral volume's claim not controlled by the pod", .ephemeral = 1,
	    .want = "" },
};

static cJSON *
node(const struct sync_case *r)
{
	struct buf status;
	char *text;
	cJSON *o;

	buf_init(&status);
	buf_printf(&status, "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]",
	    r->not_ready ? "False" : "True");
	if (r->in_use)
		buf_printf(&status, ",\"volumesInUse\":[\"" UNIQUE1 "\"]");
	if (r->listed)
		buf_printf(&status, ",\"volumesAttached\":[{\"name\":\"" UNIQUE1 "\","
		    "\"devicePath\":\"\"}]");
	text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
	    "{\"name\":\"n1\",\"resourceVersion\":\"1\",\"uid\":\"uid-n1\"%s%s%s},"
	    "\"spec\":{%s},\"status\":{%s}}",
	    r->unmanaged ? "" : ",\"annotations\":{\"" ATTACHDETACH_MANAGED_ANNOTATION "\":\"",
	    r->unmanaged ? "" : r->annotation != NULL ? r->annotation : "true",
	    r->unmanaged ? "" : "\"}",
	    r->out_of_service ? "\"taints\":[{\"key\":\"node.kubernetes.io/out-of-service\","
	    "\"value\":\"nodeshutdown\",\"effect\":\"NoExecute\"}]" : "", status.data);
	o = fixture_parse(text);
	free(text);
	buf_free(&status);
	return o;
}

static void
build(struct ctl_world *w, const struct sync_case *r)
{
	const char *claim = r->ephemeral ? "p1-data" : "c1";
	char *text;

	if (!r->node_gone)
		ctl_cache(w, resource_find("nodes"), node(r));
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
		    "{\"persistentVolumeName\":\"pv1\"}},\"status\":{\"attached\":%s%s%s%s}}",
		    r->va == 2 ? "true" : "false",
		    r->attach_error != NULL ? ",\"attachError\":{\"message\":\"" : "",
		    r->attach_error != NULL ? r->attach_error : "",
		    r->attach_error != NULL ? "\"}" : "");
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
			buf_printf(&b, "%sdetach %s;", a->count_done != NULL ? "force-" : "",
			    a->name);
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
	if (res->requeue_after != 0)
		buf_printf(&b, "requeue %g;", res->requeue_after);
	return b.data != NULL ? b.data : xstrdup("");
}

/* The flags a world's controller gets (--disable-force-detach-on-timeout, then the wait),
 * and a metrics registry, so that forced detaches carry their counter. */
struct world_config {
	const char *flags[2];
	struct controller_config config;
	struct metrics_registry *metrics;
};

static struct ctl_world *
world_new(struct world_config *wc, int no_force, const char *max_wait)
{
	wc->flags[0] = no_force ? "true" : NULL;
	wc->flags[1] = max_wait;
	wc->metrics = metrics_registry_new();
	memset(&wc->config, 0, sizeof wc->config);
	wc->config.flags = wc->flags;
	wc->config.metrics = wc->metrics;
	return ctl_world_new(&attachdetach_controller_type, &wc->config);
}

static void
world_free(struct ctl_world *w, struct world_config *wc)
{
	ctl_world_free(w);
	metrics_registry_free(wc->metrics);
}

static void
sync_case(void **state)
{
	const struct sync_case *r = *state;
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, r->no_force, NULL);
	char *got;

	build(w, r);
	ctl_sync(w, "n1", 1000);
	if (r->later != 0)
		ctl_sync(w, "n1", 1000 + r->later);
	got = writes_of(&w->result);
	assert_string_equal(got, r->want);
	free(got);
	for (int i = 0; i < w->result.nevents; i++) {
		if (strcmp(w->result.events[i].reason, "FailedAttachVolume") == 0) {
			assert_string_equal(w->result.events[i].type, "Warning");
			assert_string_equal(w->result.events[i].message, "AttachVolume.Attach "
			    "failed for volume \"pv1\" : rpc error: no such disk");
		}
	}
	world_free(w, &wc);
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
 * managed nodes and those attachments name; a node itself. The keys listed are the same
 * as a CSIDriver's. */
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
	/* a CSIDriver: every managed node, and every node an attachment names (n7, whose
	 * attachment va9 is detached though it has no node) */
	ctl_tell(w, INFORMER_ADDED, resource_find("csidrivers"),
	    fixture_parse("{\"metadata\":{\"name\":\"d.example.com\"}}"), NULL);
	ctl_keys_expect(w, "n1,n7");
	ctl_list_keys(w);
	ctl_keys_expect(w, "n1,n7");
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
	assert_string_equal(got = writes_of(&w->result), "attach " VA1 ";requeue 120;");
	free(got);

	/* attached elsewhere again (n1's attachment not cached yet): reported again */
	attached_elsewhere(w, 1);
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result),
	    "event FailedAttachVolume default/p1;");
	free(got);

	pv_with_modes(w, 3, "[\"ReadWriteOnce\",\"ReadWriteMany\"]");
	ctl_sync(w, "n1", 0);
	assert_string_equal(got = writes_of(&w->result), "attach " VA1 ";requeue 120;");
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

/* Syncs w's n1 at now and checks the result reads want. */
static void
sync_expect(struct ctl_world *w, double now, const char *want)
{
	char *got;

	ctl_sync(w, "n1", now);
	got = writes_of(&w->result);
	assert_string_equal(got, want);
	free(got);
}

/* kube's operation executor: an attach that fails on the attacher's error records
 * FailedAttachVolume and is tried again after 0.5 s, 1 s, 2 s, ... up to 2m2s; nothing is
 * recorded while it backs off; once the attachment says attached, the pod gets
 * SuccessfulAttachVolume and a later failure starts from 0.5 s again. */
static void
attach_error_backs_off(void **state)
{
	static const struct sync_case failing = { "failing", .va = 1,
	    .attach_error = "rpc error: no such disk", .want = "" };
	static const double waits[] = { 0.5, 1, 2, 4, 8, 16, 32, 64, 122, 122 };
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, 0, NULL);
	double t = 1000;
	char *want;

	(void)state;
	build(w, &failing);
	for (size_t i = 0; i < NELEM(waits); i++) {
		want = xasprintf("event FailedAttachVolume default/p1;requeue %g;", waits[i]);
		sync_expect(w, t, want);
		free(want);
		assert_string_equal(w->result.events[0].message, "AttachVolume.Attach failed "
		    "for volume \"pv1\" : rpc error: no such disk");
		want = xasprintf("requeue %g;", waits[i] - 0.25);
		sync_expect(w, t + 0.25, want);	/* backing off: silent */
		free(want);
		t += waits[i];
	}
	ctl_cache(w, resource_find("volumeattachments"), fixture_parse("{\"apiVersion\":"
	    "\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\""
	    VA1 "\",\"resourceVersion\":\"2\",\"uid\":\"uid-va\"},\"spec\":{\"attacher\":"
	    "\"d.example.com\",\"nodeName\":\"n1\",\"source\":{\"persistentVolumeName\":"
	    "\"pv1\"}},\"status\":{\"attached\":true}}"));
	sync_expect(w, t, "status [" UNIQUE1 "];event SuccessfulAttachVolume default/p1;");
	ctl_cache(w, resource_find("volumeattachments"), fixture_parse("{\"apiVersion\":"
	    "\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\",\"metadata\":{\"name\":\""
	    VA1 "\",\"resourceVersion\":\"3\",\"uid\":\"uid-va\"},\"spec\":{\"attacher\":"
	    "\"d.example.com\",\"nodeName\":\"n1\",\"source\":{\"persistentVolumeName\":"
	    "\"pv1\"}},\"status\":{\"attached\":false,\"attachError\":{\"message\":"
	    "\"rpc error: no such disk\"}}}"));
	sync_expect(w, t + 1, "event FailedAttachVolume default/p1;requeue 0.5;");
	world_free(w, &wc);
}

/* kube's CSI attacher waits two minutes for the attachment to say attached; then the
 * attempt fails with its timeout, and the next one, after the backoff, waits two minutes
 * again. */
static void
attach_times_out(void **state)
{
	static const struct sync_case waiting = { "waiting", .va = 1, .want = "" };
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, 0, NULL);

	(void)state;
	build(w, &waiting);
	sync_expect(w, 1000, "requeue 120;");
	sync_expect(w, 1100, "requeue 20;");
	sync_expect(w, 1120, "event FailedAttachVolume default/p1;requeue 0.5;");
	assert_string_equal(w->result.events[0].message, "AttachVolume.Attach failed for "
	    "volume \"pv1\" : timed out waiting for external-attacher of d.example.com CSI "
	    "driver to attach volume h1");
	sync_expect(w, 1120.5, "requeue 120;");
	sync_expect(w, 1240.5, "event FailedAttachVolume default/p1;requeue 1;");
	world_free(w, &wc);
}

/* kube's detachRequestedTime: the wait for unmount counts from the first sync that wanted
 * the detach, and starts over when a pod wants the attached volume again; the wait is
 * --attach-detach-reconcile-max-wait-unmount-duration. */
static void
detach_wait_starts_over(void **state)
{
	static const struct sync_case unwanted = { "unwanted", .no_pod = 1, .va = 2,
	    .listed = 1, .in_use = 1, .not_ready = 1, .want = "" };
	static const struct sync_case wanted = { "wanted", .va = 2, .listed = 1,
	    .in_use = 1, .not_ready = 1, .want = "" };
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, 0, "30s");

	(void)state;
	build(w, &unwanted);
	sync_expect(w, 1000, "requeue 30.001;");
	sync_expect(w, 1020, "requeue 10.001;");
	build(w, &wanted);		/* the pod again */
	sync_expect(w, 1025, "");
	ctl_uncache(w, resource_find("pods"), "uid-p1");
	sync_expect(w, 1040, "requeue 30.001;");
	sync_expect(w, 1070.5, "status [];force-detach " VA1 ";");
	world_free(w, &wc);
}

/* The counter of forced detaches, by kube's reasons. */
static void
forced_detach_metric(void **state)
{
	static const struct sync_case tainted = { "tainted", .no_pod = 1, .va = 2,
	    .in_use = 1, .out_of_service = 1, .want = "" };
	static const struct sync_case unready = { "unready", .no_pod = 1, .va = 2,
	    .in_use = 1, .not_ready = 1, .want = "" };
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, 0, NULL);
	struct buf text;

	(void)state;
	build(w, &tainted);
	ctl_sync(w, "n1", 1000);
	assert_int_equal(w->result.nwrites, 1);
	metrics_counter_add(w->result.writes[0].count_done, 1);
	build(w, &unready);
	ctl_sync(w, "n1", 1361);	/* the wait began at 1000 */
	assert_int_equal(w->result.nwrites, 1);
	metrics_counter_add(w->result.writes[0].count_done, 1);
	metrics_counter_add(w->result.writes[0].count_done, 1);
	buf_init(&text);
	metrics_render(wc.metrics, &text);
	assert_non_null(strstr(text.data, "attach_detach_controller_attachdetach_controller_"
	    "forced_detaches{reason=\"out-of-service\"} 1\n"));
	assert_non_null(strstr(text.data, "attach_detach_controller_attachdetach_controller_"
	    "forced_detaches{reason=\"timeout\"} 2\n"));
	buf_free(&text);
	world_free(w, &wc);
}

/* kube's node handlers: a node seen with the annotation stays managed when it loses it
 * (its pod's volume is still attached); deleted, it is managed no more, and the volumes
 * its last status had in use wait as on an unhealthy node; a node of that name created
 * again without the annotation is not managed. */
static void
node_memory(void **state)
{
	static const struct sync_case annotated = { "annotated", .want = "" };
	static const struct sync_case bare = { "bare", .unmanaged = 1, .want = "" };
	static const struct sync_case bare_attached = { "bare", .unmanaged = 1, .va = 2,
	    .listed = 1, .want = "" };
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, 0, NULL);

	(void)state;
	build(w, &bare);
	ctl_tell(w, INFORMER_ADDED, resource_find("nodes"), node(&annotated), NULL);
	sync_expect(w, 1000, "attach " VA1 ";requeue 120;");	/* remembered */
	ctl_tell(w, INFORMER_DELETED, resource_find("nodes"), fixture_parse("{\"metadata\":"
	    "{\"name\":\"n1\"},\"status\":{\"volumesInUse\":[\"" UNIQUE1 "\"]}}"), NULL);
	ctl_uncache(w, resource_find("nodes"), "uid-n1");
	ctl_uncache(w, resource_find("pods"), "uid-p1");
	build(w, &(struct sync_case){ "gone", .node_gone = 1, .no_pod = 1, .va = 2,
	    .want = "" });
	ctl_uncache(w, resource_find("pods"), "uid-p1");
	sync_expect(w, 1010, "requeue 360.001;");	/* in use when it was deleted */
	sync_expect(w, 1371, "force-detach " VA1 ";");
	ctl_uncache(w, resource_find("volumeattachments"), "uid-va");
	sync_expect(w, 1372, "");			/* detached: forgotten */
	ctl_tell(w, INFORMER_ADDED, resource_find("nodes"), node(&bare), NULL);
	build(w, &bare_attached);
	sync_expect(w, 1400, "status [];detach " VA1 ";");
	world_free(w, &wc);
}

/* csi-translation-lib's translations of in-tree volumes (its unit tests' cases, and the
 * sources kube 1.36 migrates), as attachdetach_volumes shows them. */
static const struct translation_case {
	const char *name;
	const char *spec;	/* the PersistentVolume's spec members */
	const char *labels;	/* its labels' members, or NULL */
	const char *want;	/* "migrated_from driver handle", or "" when refused */
} translation_cases[] = {
	{ "CSI as it is", "\"csi\":{\"driver\":\"d\",\"volumeHandle\":\"h\"}", NULL,
	    "- d h" },
	{ "EBS: a bare volume ID", "\"awsElasticBlockStore\":{\"volumeID\":"
	    "\"vol-02399794d890f9375\"}", NULL,
	    "kubernetes.io/aws-ebs ebs.csi.aws.com vol-02399794d890f9375" },
	{ "EBS: aws:///{volumeId}", "\"awsElasticBlockStore\":{\"volumeID\":"
	    "\"aws:///vol-02399794d890f9375\"}", NULL,
	    "kubernetes.io/aws-ebs ebs.csi.aws.com vol-02399794d890f9375" },
	{ "EBS: aws://{zone}/{volumeId}", "\"awsElasticBlockStore\":{\"volumeID\":"
	    "\"aws://us-west-2a/vol-02399794d890f9375\"}", NULL,
	    "kubernetes.io/aws-ebs ebs.csi.aws.com vol-02399794d890f9375" },
	{ "EBS: an invalid volume ID is refused", "\"awsElasticBlockStore\":{\"volumeID\":"
	    "\"aws://us-west-2a/02399794d890f9375\"}", NULL, "" },
	{ "GCE PD: beta topology key zonal", "\"gcePersistentDisk\":{\"pdName\":\"pd-name\"}",
	    "\"failure-domain.beta.kubernetes.io/zone\":\"us-east1-a\"",
	    "kubernetes.io/gce-pd pd.csi.storage.gke.io "
	    "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name" },
	{ "GCE PD: v1 topology key zonal", "\"gcePersistentDisk\":{\"pdName\":\"pd-name\"}",
	    "\"topology.kubernetes.io/zone\":\"us-east1-a\"",
	    "kubernetes.io/gce-pd pd.csi.storage.gke.io "
	    "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name" },
	{ "GCE PD: beta topology key regional", "\"gcePersistentDisk\":{\"pdName\":"
	    "\"pd-name\"}", "\"failure-domain.beta.kubernetes.io/zone\":"
	    "\"us-central1-a__us-central1-c\"", "kubernetes.io/gce-pd pd.csi.storage.gke.io "
	    "projects/UNSPECIFIED/regions/us-central1/disks/pd-name" },
	{ "GCE PD: v1 topology key regional", "\"gcePersistentDisk\":{\"pdName\":"
	    "\"pd-name\"}", "\"topology.kubernetes.io/zone\":\"us-central1-a__us-central1-c\"",
	    "kubernetes.io/gce-pd pd.csi.storage.gke.io "
	    "projects/UNSPECIFIED/regions/us-central1/disks/pd-name" },
	{ "GCE PD: zones of two regions are refused", "\"gcePersistentDisk\":{\"pdName\":"
	    "\"pd-name\"}", "\"topology.kubernetes.io/zone\":\"us-central1-a__us-east1-c\"",
	    "" },
	{ "GCE PD: no zone", "\"gcePersistentDisk\":{\"pdName\":\"pd-name\"}", NULL,
	    "kubernetes.io/gce-pd pd.csi.storage.gke.io "
	    "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name" },
	{ "Azure disk: managed", "\"azureDisk\":{\"diskName\":\"d\",\"diskURI\":"
	    "\"/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d\","
	    "\"kind\":\"Managed\"}", NULL, "kubernetes.io/azure-disk disk.csi.azure.com "
	    "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d" },
	{ "Azure disk: kind Shared is refused", "\"azureDisk\":{\"diskName\":\"d\","
	    "\"diskURI\":\"u\",\"kind\":\"Shared\"}", NULL, "" },
	{ "Azure file: the claim's namespace", "\"azureFile\":{\"secretName\":\"secretname\","
	    "\"shareName\":\"sharename\"},\"claimRef\":{\"namespace\":\"default\"}", NULL,
	    "kubernetes.io/azure-file file.csi.azure.com #secretname#sharename#pv9#default" },
	{ "Azure file: the secret's namespace and account", "\"azureFile\":{\"secretName\":"
	    "\"azure-storage-account-st-secret\",\"shareName\":\"sharename\","
	    "\"secretNamespace\":\"secretnamespace\"}", NULL,
	    "kubernetes.io/azure-file file.csi.azure.com #st#sharename#pv9#secretnamespace" },
	{ "Azure file: no namespace is refused", "\"azureFile\":{\"secretName\":\"s\","
	    "\"shareName\":\"sharename\"}", NULL, "" },
	{ "Cinder", "\"cinder\":{\"volumeID\":\"c1\"}", NULL,
	    "kubernetes.io/cinder cinder.csi.openstack.org c1" },
	{ "vSphere", "\"vsphereVolume\":{\"volumePath\":\"[ds] v.vmdk\"}", NULL,
	    "kubernetes.io/vsphere-volume csi.vsphere.vmware.com [ds] v.vmdk" },
	{ "Portworx", "\"portworxVolume\":{\"volumeID\":\"px1\"}", NULL,
	    "kubernetes.io/portworx-volume pxd.portworx.com px1" },
	{ "NFS is no attachable volume", "\"nfs\":{\"server\":\"s\",\"path\":\"/\"}", NULL,
	    "" },
};

static char *rows_of(struct ctl_world *w, const char *sql);

static void
translation_case(void **state)
{
	const struct translation_case *r = *state;
	struct ctl_world *w = ctl_world_new(&attachdetach_controller_type, NULL);
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
	    "\"metadata\":{\"name\":\"pv9\",\"resourceVersion\":\"1\",\"uid\":\"uid-pv9\""
	    "%s%s%s},\"spec\":{%s}}", r->labels != NULL ? ",\"labels\":{" : "",
	    r->labels != NULL ? r->labels : "", r->labels != NULL ? "}" : "", r->spec);
	char *got, *want;

	ctl_cache(w, resource_find("persistentvolumes"), fixture_parse(text));
	free(text);
	got = rows_of(w, "SELECT migrated_from, driver, volume_handle FROM attachdetach_volumes");
	want = *r->want != '\0' ? xasprintf("%s;", r->want) : xstrdup("");
	assert_string_equal(got, want);
	free(want);
	free(got);
	ctl_world_free(w);
}

/* A claim Bound to an in-tree EBS volume: the pod's volume is attached by the EBS CSI
 * driver under kube's name for the translated handle, and the node lists it as such. */
static void
migrated_volume_attached(void **state)
{
	static const struct sync_case world = { "world", .not_csi = 1, .want = "" };
	struct world_config wc;
	struct ctl_world *w = world_new(&wc, 0, NULL);
	char *va = attachdetach_attachment_name("vol-1", "ebs.csi.aws.com", "n1"), *want;

	(void)state;
	build(w, &world);
	ctl_cache(w, resource_find("persistentvolumes"), fixture_parse("{\"apiVersion\":"
	    "\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv1\","
	    "\"resourceVersion\":\"2\",\"uid\":\"uid-pv1\"},\"spec\":{\"awsElasticBlockStore\":"
	    "{\"volumeID\":\"aws://us-west-2a/vol-1\"},\"claimRef\":{\"namespace\":"
	    "\"default\",\"name\":\"c1\",\"uid\":\"uid-claim\"}}}"));
	ctl_sync(w, "n1", 1000);
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(w->result.writes[0].name, va);
	assert_string_equal(json_string(w->result.writes[0].body, "spec.attacher"),
	    "ebs.csi.aws.com");
	assert_string_equal(json_string(w->result.writes[0].body,
	    "spec.source.persistentVolumeName"), "pv1");
	want = xasprintf("{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\","
	    "\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"1\",\"uid\":\"uid-va\"},"
	    "\"spec\":{\"attacher\":\"ebs.csi.aws.com\",\"nodeName\":\"n1\",\"source\":"
	    "{\"persistentVolumeName\":\"pv1\"}},\"status\":{\"attached\":true}}", va);
	ctl_cache(w, resource_find("volumeattachments"), fixture_parse(want));
	free(want);
	ctl_sync(w, "n1", 1001);
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(w->result.writes[0].body,
	    "status.volumesAttached"), 0), "name"), "kubernetes.io/csi/ebs.csi.aws.com^vol-1");
	free(va);
	world_free(w, &wc);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_cases) + NELEM(translation_cases) + 10];
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
	tests[n++] = (struct CMUnitTest){ "an attacher's error backs off as kube's attach",
	    attach_error_backs_off, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "an attach times out after two minutes",
	    attach_times_out, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the wait for unmount starts over when wanted again",
	    detach_wait_starts_over, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "forced detaches are counted by reason",
	    forced_detach_metric, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "nodes managed once, and deleted nodes",
	    node_memory, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "an in-tree EBS volume attached by its CSI driver",
	    migrated_volume_attached, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(translation_cases); i++)
		tests[n++] = (struct CMUnitTest){ translation_cases[i].name, translation_case,
		    NULL, NULL, (void *)&translation_cases[i] };
	return _cmocka_run_group_tests("attachdetach", tests, n, NULL, NULL);
}
