/*
 * test_disruption.c - the disruption controller (controllers/disruption.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/disruption. Each scenario of its
 * disruption_test.go (TestNoSelector, TestUnavailable, TestReplicaSet, ...) is a list of
 * steps: objects cached (a budget, pods, their controllers), then syncs, each followed by
 * the status the budget must then have, as kube's VerifyPdbStatus checks it. A status a
 * sync writes is cached before the next step, as kube's fake store keeps it. Then
 * TestStalePodDisruption's table (a pod's DisruptionTarget condition reset), the rules
 * of IntOrString percentages, and which events queue which keys.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action.h"
#include "controller.h"
#include "controllers/disruption.h"
#include "fixtures.h"
#include "intstr.h"
#include "json.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

/* --- scenarios ------------------------------------------------------------------------- */

enum op { END, ADD_PDB, ADD_POD, ADD_RS, ADD_RC, ADD_DEPLOYMENT, ADD_SS, SYNC };

struct step {
	enum op op;
	const char *name;
	/* ADD_PDB: the spec's members other than the selector, as JSON ("\"minAvailable\":3");
	 * ADD_POD: its labels (NULL: {"foo":"bar"}). */
	const char *spec;
	int n;			/* controllers: spec.replicas; ADD_POD: 1 when Ready */
	const char *owner;	/* ADD_POD, ADD_RS: the controller, "Kind/name"; NULL: none */
	const char *owner_api;	/* its reference's apiVersion; NULL: the kind's own */
	const char *uid;	/* controllers: metadata.uid; NULL: "uid-<Kind>-<name>" */
	double deleting;	/* ADD_POD: deleting since that many seconds; 0: not */
	const char *selector;	/* ADD_PDB: spec.selector JSON; NULL: matchLabels foo=bar;
				   "-" for none */
	const char *status;	/* ADD_PDB: its status JSON; NULL: none */
	/* SYNC: the status the budget has after it. */
	int allowed, healthy, desired, expected;
	const char *reason;	/* the DisruptionAllowed condition's reason; NULL: the one
				   allowed says (SufficientPods or InsufficientPods) */
	const char *event;	/* a reason the sync must record an event of; NULL: any */
	const char *disrupted;	/* status.disruptedPods JSON; NULL: none */
	double requeue;		/* requeue_after wanted (0: none) */
};

#define FOOBAR "{\"foo\":\"bar\"}"
#define RC_LABELS "{\"foo\":\"bar\",\"baz\":\"quux\"}"
#define D_LABELS "{\"foo\":\"bar\",\"baz\":\"quuux\"}"
#define PDB(SPEC) { .op = ADD_PDB, .name = "foobar", .spec = (SPEC) }
#define POD(NAME, READY, OWNER) { .op = ADD_POD, .name = (NAME), .n = (READY), \
	.owner = (OWNER) }
#define LPOD(NAME, LABELS, READY, OWNER) { .op = ADD_POD, .name = (NAME), \
	.spec = (LABELS), .n = (READY), .owner = (OWNER) }
#define SYNC(a, h, d, e) { .op = SYNC, .allowed = (a), .healthy = (h), .desired = (d), \
	.expected = (e) }
#define SYNC_EVENT(a, h, d, e, ev) { .op = SYNC, .allowed = (a), .healthy = (h), \
	.desired = (d), .expected = (e), .event = (ev) }
#define SYNC_FAILED(ev) { .op = SYNC, .reason = "SyncFailed", .event = (ev) }

struct scenario {
	const char *name;
	const struct step *steps;
};

#define FINDER(TITLE, CONTROLLER, POD, WANT) { TITLE, (const struct step[]){ \
	PDB("\"minAvailable\":\"100%\""), \
	{ .op = ADD_DEPLOYMENT, .name = "foobar", .n = 10 }, CONTROLLER, POD, WANT, { END } } }
#define RS_OF(N, OWNER, API) { .op = ADD_RS, .name = "foobar", .n = (N), .owner = (OWNER), \
	.owner_api = (API) }
#define POD_OF(OWNER, API) { .op = ADD_POD, .name = "pod", .n = 1, .owner = (OWNER), \
	.owner_api = (API) }
#define CTL_OF(OP, NAME, N) { .op = (OP), .name = (NAME), .n = (N) }
#define CTL_UID(OP, NAME, N, UID) { .op = (OP), .name = (NAME), .n = (N), .uid = (UID) }
#define FAILED SYNC_FAILED("CalculateExpectedPodCountFailed")

static const struct scenario scenarios[] = {
	{ "TestNoSelector: an empty selector selects every pod", (const struct step[]){
		{ .op = ADD_PDB, .name = "foobar", .spec = "\"minAvailable\":3",
		    .selector = "{}" },
		SYNC_EVENT(0, 0, 3, 0, "NoPods"),
		LPOD("yo-yo-yo", "{\"other\":\"labels\"}", 1, NULL),
		SYNC(0, 1, 3, 1),
		{ END } } },
	{ "a budget without a selector selects no pod", (const struct step[]){
		{ .op = ADD_PDB, .name = "foobar", .spec = "\"minAvailable\":1",
		    .selector = "-" },
		POD("yo-yo-yo", 1, NULL),
		SYNC_EVENT(0, 0, 1, 0, "NoPods"),
		{ END } } },
	{ "TestUnavailable: counts go up with pods, down with an unready one",
	    (const struct step[]){
		PDB("\"minAvailable\":3"),
		SYNC(0, 0, 3, 0),
		POD("yo-yo-yo 0", 1, NULL), SYNC(0, 1, 3, 1),
		POD("yo-yo-yo 1", 1, NULL), SYNC(0, 2, 3, 2),
		POD("yo-yo-yo 2", 1, NULL), SYNC(0, 3, 3, 3),
		POD("yo-yo-yo 3", 1, NULL), SYNC(1, 4, 3, 4),
		POD("yo-yo-yo 0", 0, NULL), SYNC(0, 3, 3, 4),
		{ END } } },
	{ "TestIntegerMaxUnavailable: no disruption for a pod without a controller",
	    (const struct step[]){
		PDB("\"maxUnavailable\":1"),
		SYNC(0, 0, 0, 0),
		POD("naked", 1, NULL),
		SYNC_EVENT(0, 1, 0, 0, "UnmanagedPods"),
		{ END } } },
	{ "TestIntegerMaxUnavailableWithScaling", (const struct step[]){
		PDB("\"maxUnavailable\":2"),
		{ .op = ADD_RS, .name = "foobar", .n = 7 },
		POD("pod", 1, "ReplicaSet/foobar"),
		SYNC(0, 1, 5, 7),
		{ .op = ADD_RS, .name = "foobar", .n = 5 },
		SYNC(0, 1, 3, 5),
		{ END } } },
	{ "TestPercentageMaxUnavailableWithScaling", (const struct step[]){
		PDB("\"maxUnavailable\":\"30%\""),
		{ .op = ADD_RS, .name = "foobar", .n = 7 },
		POD("pod", 1, "ReplicaSet/foobar"),
		SYNC(0, 1, 4, 7),
		{ .op = ADD_RS, .name = "foobar", .n = 3 },
		SYNC(0, 1, 2, 3),
		{ END } } },
	{ "TestNakedPod: a percentage over a pod without a controller", (const struct step[]){
		PDB("\"minAvailable\":\"28%\""),
		SYNC(0, 0, 0, 0),
		POD("naked", 1, NULL),
		SYNC_EVENT(0, 1, 0, 0, "UnmanagedPods"),
		{ END } } },
	{ "TestUnsupportedControllerPod: a controller whose scale is not cached fails the sync",
	    (const struct step[]){
		PDB("\"minAvailable\":\"28%\""),
		SYNC(0, 0, 0, 0),
		POD("naked", 1, "TestWorkload/fake-controller"),
		SYNC_FAILED("CalculateExpectedPodCountFailed"),
		{ END } } },
	{ "a pod whose ReplicaSet is not cached fails the sync", (const struct step[]){
		PDB("\"minAvailable\":\"50%\""),
		POD("orphaned", 1, "ReplicaSet/gone"),
		SYNC_FAILED("CalculateExpectedPodCountFailed"),
		{ END } } },
	{ "TestReplicaSet: the scale of a ReplicaSet without a Deployment", (const struct step[]){
		PDB("\"minAvailable\":\"20%\""),
		{ .op = ADD_RS, .name = "foobar", .n = 10 },
		POD("pod", 1, "ReplicaSet/foobar"),
		SYNC(0, 1, 2, 10),
		{ END } } },
	{ "a Deployment's scale through its ReplicaSet", (const struct step[]){
		PDB("\"minAvailable\":\"50%\""),
		{ .op = ADD_DEPLOYMENT, .name = "web", .n = 4 },
		{ .op = ADD_RS, .name = "web-1", .n = 2, .owner = "Deployment/web" },
		{ .op = ADD_RS, .name = "web-2", .n = 2, .owner = "Deployment/web" },
		POD("a", 1, "ReplicaSet/web-1"), POD("b", 1, "ReplicaSet/web-1"),
		POD("c", 1, "ReplicaSet/web-2"),
		SYNC(1, 3, 2, 4),
		{ END } } },
	{ "TestMultipleControllers: one ReplicationController, 1%", (const struct step[]){
		PDB("\"minAvailable\":\"1%\""),
		POD("pod 0", 1, NULL), POD("pod 1", 1, NULL),
		SYNC_EVENT(0, 2, 0, 0, "UnmanagedPods"),
		POD("pod 0", 1, "ReplicationController/rc 1"),
		POD("pod 1", 1, "ReplicationController/rc 1"),
		{ .op = ADD_RC, .name = "rc 1", .n = 1 },
		SYNC(1, 2, 1, 1),
		{ END } } },
	{ "TestReplicationController: 34% of 3 rounds up to 2", (const struct step[]){
		PDB("\"minAvailable\":\"34%\""),
		{ .op = ADD_RC, .name = "foobar", .n = 3 },
		SYNC(0, 0, 0, 0),
		LPOD("foobar 0", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(0, 1, 2, 3),
		LPOD("foobar 1", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(0, 2, 2, 3),
		LPOD("foobar 2", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(1, 3, 2, 3),
		POD("rogue", 1, NULL),
		SYNC_EVENT(2, 4, 2, 3, "UnmanagedPods"),
		{ END } } },
	{ "TestStatefulSetController: 34% of 3 rounds up to 2", (const struct step[]){
		PDB("\"minAvailable\":\"34%\""),
		{ .op = ADD_SS, .name = "foobar", .n = 3 },
		SYNC(0, 0, 0, 0),
		LPOD("foobar 0", RC_LABELS, 1, "StatefulSet/foobar"),
		SYNC(0, 1, 2, 3),
		LPOD("foobar 1", RC_LABELS, 1, "StatefulSet/foobar"),
		SYNC(0, 2, 2, 3),
		LPOD("foobar 2", RC_LABELS, 1, "StatefulSet/foobar"),
		SYNC(1, 3, 2, 3),
		{ END } } },
	{ "TestTwoControllers: 28% of a ReplicationController and a ReplicaSet of 11",
	    (const struct step[]){
		PDB("\"minAvailable\":\"28%\""),
		{ .op = ADD_RC, .name = "foobar", .n = 11 },
		SYNC(0, 0, 0, 0),
		/* 6 unready pods, then 5 ready: 4 = ceil(28% of 11) */
		LPOD("quux 1", RC_LABELS, 0, "ReplicationController/foobar"),
		SYNC(0, 0, 4, 11),
		LPOD("quux 2", RC_LABELS, 0, "ReplicationController/foobar"),
		LPOD("quux 3", RC_LABELS, 0, "ReplicationController/foobar"),
		LPOD("quux 4", RC_LABELS, 0, "ReplicationController/foobar"),
		LPOD("quux 5", RC_LABELS, 0, "ReplicationController/foobar"),
		LPOD("quux 6", RC_LABELS, 0, "ReplicationController/foobar"),
		SYNC(0, 0, 4, 11),
		LPOD("quux 7", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(0, 1, 4, 11),
		LPOD("quux 8", RC_LABELS, 1, "ReplicationController/foobar"),
		LPOD("quux 9", RC_LABELS, 1, "ReplicationController/foobar"),
		LPOD("quux 10", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(0, 4, 4, 11),
		LPOD("quux 11", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(1, 5, 4, 11),
		{ .op = ADD_DEPLOYMENT, .name = "foobar", .n = 11 },
		SYNC(1, 5, 4, 11),
		{ .op = ADD_RS, .name = "foobar", .n = 11 },
		SYNC(1, 5, 4, 11),
		/* the ReplicaSet's pods: 7 = ceil(28% of 22); 13 - 7 - 2 unready = 4 */
		/* the ReplicaSet's pods: 7 = ceil(28% of 22); 7 unready, then 4 ready */
		LPOD("quuux 1", D_LABELS, 0, "ReplicaSet/foobar"),
		LPOD("quuux 2", D_LABELS, 0, "ReplicaSet/foobar"),
		LPOD("quuux 3", D_LABELS, 0, "ReplicaSet/foobar"),
		LPOD("quuux 4", D_LABELS, 0, "ReplicaSet/foobar"),
		SYNC(0, 5, 7, 22),
		LPOD("quuux 5", D_LABELS, 0, "ReplicaSet/foobar"),
		LPOD("quuux 6", D_LABELS, 0, "ReplicaSet/foobar"),
		LPOD("quuux 7", D_LABELS, 0, "ReplicaSet/foobar"),
		SYNC(0, 5, 7, 22),
		LPOD("quuux 8", D_LABELS, 1, "ReplicaSet/foobar"),
		SYNC(0, 6, 7, 22),
		LPOD("quuux 9", D_LABELS, 1, "ReplicaSet/foobar"),
		SYNC(0, 7, 7, 22),
		LPOD("quuux 10", D_LABELS, 1, "ReplicaSet/foobar"),
		SYNC(1, 8, 7, 22),
		LPOD("quuux 11", D_LABELS, 1, "ReplicaSet/foobar"),
		SYNC(2, 9, 7, 22),
		/* one down: still one disruption; two down: none; one back: one */
		LPOD("quux 11", RC_LABELS, 0, "ReplicationController/foobar"),
		SYNC(1, 8, 7, 22),
		LPOD("quux 10", RC_LABELS, 0, "ReplicationController/foobar"),
		SYNC(0, 7, 7, 22),
		LPOD("quux 11", RC_LABELS, 1, "ReplicationController/foobar"),
		SYNC(1, 8, 7, 22),
		{ END } } },
	{ "TestUpdateDisruptedPods: entries of pods deleted, deleting or expired dropped",
	    (const struct step[]){
		{ .op = ADD_PDB, .name = "foobar", .spec = "\"minAvailable\":1",
		    .status = "{\"disruptedPods\":{\"p1\":\"2026-01-01T00:00:00Z\","
		    "\"p2\":\"2025-12-31T23:57:00Z\",\"p3\":\"2025-12-31T23:59:00Z\","
		    "\"notthere\":\"2026-01-01T00:00:00Z\"}}" },
		{ .op = ADD_POD, .name = "p1", .n = 1, .deleting = 1 },
		POD("p2", 1, NULL),
		POD("p3", 1, NULL),
		{ .op = SYNC, .allowed = 0, .healthy = 1, .desired = 1, .expected = 3,
		    .disrupted = "{\"p3\":\"2025-12-31T23:59:00Z\"}", .requeue = 60 },
		{ END } } },
	{ "TestInvalidSelectors: an illegal operator", (const struct step[]){
		{ .op = ADD_PDB, .name = "foobar", .spec = "\"minAvailable\":3",
		    .selector = "{\"matchExpressions\":[{\"key\":\"foo\","
		    "\"operator\":\"illegal\",\"values\":[\"bar\"]}]}" },
		SYNC_FAILED("NoPods"),
		{ END } } },
	{ "TestInvalidSelectors: an illegal key", (const struct step[]){
		{ .op = ADD_PDB, .name = "foobar", .spec = "\"minAvailable\":3",
		    .selector = "{\"matchLabels\":{\"k8s.io/too/many/slashes\":\"value\"}}" },
		SYNC_FAILED("NoPods"),
		{ END } } },
	{ "a percentage that is not one fails the sync", (const struct step[]){
		PDB("\"maxUnavailable\":\"1x%\""),
		{ .op = ADD_RS, .name = "foobar", .n = 2 },
		POD("pod", 1, "ReplicaSet/foobar"),
		SYNC_FAILED("CalculateExpectedPodCountFailed"),
		{ END } } },
	{ "a failure, then success: the condition moves back", (const struct step[]){
		PDB("\"minAvailable\":\"50%\""),
		POD("a", 1, "StatefulSet/db"), POD("b", 1, "StatefulSet/db"),
		SYNC_FAILED("CalculateExpectedPodCountFailed"),
		{ .op = ADD_SS, .name = "db", .n = 2 },
		SYNC(1, 2, 1, 2),
		{ END } } },
	/* kube's TestBasicFinderFunctions and TestDeploymentFinderFunction, through a sync:
	 * a budget of 100% over one pod whose controller reference is the case's; a
	 * Deployment "foobar" of 10 is cached in each. */
	FINDER("replicaset controller with apps group",
	    RS_OF(10, NULL, NULL), POD_OF("ReplicaSet/foobar", "apps/v1"), SYNC(0, 1, 10, 10)),
	FINDER("replicaset controller with invalid group",
	    RS_OF(10, NULL, NULL), POD_OF("ReplicaSet/foobar", "invalid/v1"), FAILED),
	FINDER("replicationcontroller with empty group",
	    CTL_OF(ADD_RC, "foobar", 12),
	    POD_OF("ReplicationController/foobar", "/v1"), SYNC(0, 1, 12, 12)),
	FINDER("replicationcontroller with invalid group",
	    CTL_OF(ADD_RC, "foobar", 12),
	    POD_OF("ReplicationController/foobar", "apps/v1"), FAILED),
	FINDER("statefulset controller with apps group",
	    CTL_OF(ADD_SS, "foobar", 14),
	    POD_OF("StatefulSet/foobar", "apps/v1"), SYNC(0, 1, 14, 14)),
	FINDER("statefulset controller with extensions group",
	    CTL_OF(ADD_SS, "foobar", 14),
	    POD_OF("StatefulSet/foobar", "extensions/v1beta1"), FAILED),
	FINDER("deployment finder: happy path",
	    RS_OF(5, "Deployment/foobar", "extensions/v1"),
	    POD_OF("ReplicaSet/foobar", "apps/v1"), SYNC(0, 1, 10, 10)),
	FINDER("deployment finder: invalid rs apiVersion",
	    RS_OF(5, "Deployment/foobar", "apps/v1"),
	    POD_OF("ReplicaSet/foobar", "invalid/v1"), FAILED),
	FINDER("deployment finder: invalid rs kind",
	    RS_OF(5, "Deployment/foobar", "apps/v1"),
	    POD_OF("InvalidKind/foobar", "apps/v1"), FAILED),
	FINDER("deployment finder: invalid deployment apiVersion",
	    RS_OF(5, "Deployment/foobar", "deployment/v1"),
	    POD_OF("ReplicaSet/foobar", "extensions/v1"), FAILED),
	FINDER("deployment finder: invalid deployment kind, the ReplicaSet's own scale",
	    RS_OF(5, "InvalidKind/foobar", "extensions/v1"),
	    POD_OF("ReplicaSet/foobar", "apps/v1"), SYNC(0, 1, 5, 5)),
	FINDER("a reference whose uid is not the cached controller's",
	    CTL_UID(ADD_RC, "foobar", 12, "uid-another"),
	    POD_OF("ReplicationController/foobar", "v1"), FAILED),
	FINDER("a StatefulSet of another uid",
	    CTL_UID(ADD_SS, "foobar", 12, "uid-another"),
	    POD_OF("StatefulSet/foobar", "apps/v1"), FAILED),
	FINDER("a reference to a ReplicationController not cached",
	    CTL_OF(ADD_RC, "other", 12),
	    POD_OF("ReplicationController/foobar", "v1"), FAILED),
};

/* The controller reference of "Kind/name" as JSON (malloc'd). */
static char *
owner_ref(const char *owner, const char *owner_api)
{
	const char *slash = strchr(owner, '/');
	char *kind = xstrndup(owner, (size_t)(slash - owner));
	const char *api = owner_api != NULL ? owner_api :
	    strcmp(kind, "ReplicationController") == 0 ? "v1" :
	    strcmp(kind, "TestWorkload") == 0 ? "apps.test.io/v1" : "apps/v1";
	char *s = xasprintf("[{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\","
	    "\"uid\":\"uid-%s-%s\",\"controller\":true}]", api, kind, slash + 1, kind,
	    slash + 1);

	free(kind);
	return s;
}

/* Each object cached gets a resourceVersion of its own, as the apiserver gives each
 * write: the store keeps what it has for the same one. */
static int step_rv = 1000;

static cJSON *
step_object(const struct step *s)
{
	static const char *const kinds[] = { [ADD_RS] = "ReplicaSet",
	    [ADD_RC] = "ReplicationController", [ADD_DEPLOYMENT] = "Deployment",
	    [ADD_SS] = "StatefulSet" };
	char *owners = s->owner != NULL ? owner_ref(s->owner, s->owner_api) : xstrdup("[]");
	char *text, deleting[TIME_RFC3339_SIZE];
	cJSON *o;

	time_format_rfc3339((time_t)(NOW - s->deleting), deleting);
	switch (s->op) {
	case ADD_PDB:
		text = xasprintf("{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
		    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-pdb\","
		    "\"resourceVersion\":\"%d\",\"generation\":1},\"spec\":{%s%s%s}%s%s}",
		    s->name, step_rv++, s->spec,
		    s->selector != NULL && strcmp(s->selector, "-") == 0 ? "" : ",\"selector\":",
		    s->selector == NULL ? "{\"matchLabels\":" FOOBAR "}" :
		    strcmp(s->selector, "-") == 0 ? "" : s->selector,
		    s->status != NULL ? ",\"status\":" : "", s->status != NULL ? s->status : "");
		break;
	case ADD_POD:
		text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
		    "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-pod-%s\","
		    "\"resourceVersion\":\"%d\",\"labels\":%s,\"ownerReferences\":%s%s%s%s},"
		    "\"spec\":{},\"status\":{\"conditions\":[%s]}}", s->name, s->name,
		    step_rv++, s->spec != NULL ? s->spec : FOOBAR, owners,
		    s->deleting != 0 ? ",\"deletionTimestamp\":\"" : "",
		    s->deleting != 0 ? deleting : "", s->deleting != 0 ? "\"" : "",
		    s->n ? "{\"type\":\"Ready\",\"status\":\"True\"}" : "");
		break;
	default:
		text = xasprintf("{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{"
		    "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s%s%s%s\","
		    "\"resourceVersion\":\"%d\",\"ownerReferences\":%s},\"spec\":{\"replicas\":%d,"
		    "\"selector\":%s,\"template\":{\"metadata\":{\"labels\":" FOOBAR "}}}}",
		    s->op == ADD_RC ? "v1" : "apps/v1", kinds[s->op], s->name,
		    s->uid != NULL ? s->uid : "uid-", s->uid != NULL ? "" : kinds[s->op],
		    s->uid != NULL ? "" : "-", s->uid != NULL ? "" : s->name, step_rv++, owners, s->n,
		    s->op == ADD_RC ? FOOBAR : "{\"matchLabels\":" FOOBAR "}");
		break;
	}
	o = fixture_parse(text);
	free(text);
	free(owners);
	return o;
}

static const struct resource *
step_resource(enum op op)
{
	switch (op) {
	case ADD_PDB: return resource_find("poddisruptionbudgets");
	case ADD_POD: return resource_find("pods");
	case ADD_RS: return resource_find("replicasets");
	case ADD_RC: return resource_find("replicationcontrollers");
	case ADD_DEPLOYMENT: return resource_find("deployments");
	default: return resource_find("statefulsets");
	}
}

/* Fails unless the budget's cached status is what s wants. */
static void
check_status(struct ctl_world *w, const struct step *s, int index)
{
	sqlite3_stmt *stmt;
	cJSON *pdb, *cond = NULL, *c;
	const cJSON *status, *disrupted;
	const char *want_reason = s->reason != NULL ? s->reason :
	    s->allowed > 0 ? "SufficientPods" : "InsufficientPods";
	int have_event = s->event == NULL;

	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT body FROM cache_objects"
	    " WHERE resource = 'poddisruptionbudgets' AND name = 'foobar'", -1, &stmt, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	pdb = fixture_parse((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	status = json_path(pdb, "status");
	if (status == NULL)
		fail_msg("step %d: no status", index);
	if (json_int(status, "disruptionsAllowed", -1) != s->allowed ||
	    (s->reason == NULL && (json_int(status, "currentHealthy", -1) != s->healthy ||
	    json_int(status, "desiredHealthy", -1) != s->desired ||
	    json_int(status, "expectedPods", -1) != s->expected)))
		fail_msg("step %d: status %s; want allowed %d healthy %d desired %d expected %d",
		    index, cJSON_PrintUnformatted(status), s->allowed, s->healthy, s->desired,
		    s->expected);
	if (s->reason == NULL)
		assert_int_equal(json_int(status, "observedGeneration", 0), 1);
	cJSON_ArrayForEach(c, json_path(status, "conditions"))
		if (strcmp(json_string(c, "type"), "DisruptionAllowed") == 0)
			cond = c;
	assert_non_null(cond);
	assert_string_equal(json_string(cond, "reason"), want_reason);
	assert_string_equal(json_string(cond, "status"), s->allowed > 0 ? "True" : "False");
	disrupted = json_path(status, "disruptedPods");
	if (s->disrupted != NULL) {
		cJSON *want = fixture_parse(s->disrupted);

		assert_true(cJSON_Compare(want, disrupted, 1));
		cJSON_Delete(want);
	} else {
		assert_true(disrupted == NULL || cJSON_GetArraySize(disrupted) == 0);
	}
	for (int i = 0; i < w->result.nevents; i++)
		if (strcmp(w->result.events[i].reason, s->event != NULL ? s->event : "") == 0)
			have_event = 1;
	if (!have_event)
		fail_msg("step %d: no %s event", index, s->event);
	assert_true(w->result.requeue_after == s->requeue);
	cJSON_Delete(pdb);
}

static void
scenario_run(void **state)
{
	const struct scenario *sc = *state;
	struct ctl_world *w = ctl_world_new(&disruption_controller_type, NULL);
	const struct resource *pdbs = resource_find("poddisruptionbudgets");
	int rv = 100;

	for (int i = 0; sc->steps[i].op != END; i++) {
		const struct step *s = &sc->steps[i];

		if (s->op != SYNC) {
			ctl_cache(w, step_resource(s->op), step_object(s));
			continue;
		}
		ctl_sync(w, KEY, NOW);
		if (w->result.status != NULL) {
			/* The write lands: the budget as sent, a new resourceVersion. */
			cJSON *written = cJSON_Duplicate(w->result.status->body, 1);
			char text[16];

			assert_int_equal(w->result.status->type, ACTION_UPDATE_STATUS);
			snprintf(text, sizeof text, "%d", rv++);
			json_set(json_child_object(written, "metadata"), "resourceVersion",
			    cJSON_CreateString(text));
			ctl_cache(w, pdbs, written);
		}
		check_status(w, s, i);
		/* A second sync of the same cache writes nothing: the status is unchanged. */
		ctl_sync(w, KEY, NOW);
		if (w->result.status != NULL)
			fail_msg("step %d: a second sync writes %s", i,
			    cJSON_PrintUnformatted(json_path(w->result.status->body, "status")));
	}
	ctl_world_free(w);
}

/* A budget that is gone: nothing to do. */
static void
pdb_not_exist(void **state)
{
	struct ctl_world *w = ctl_world_new(&disruption_controller_type, NULL);

	(void)state;
	ctl_sync(w, "default/notExist", NOW);
	assert_null(w->result.status);
	assert_int_equal(w->result.forget_expectations, 1);
	ctl_world_free(w);
}

/* TestKeepExistingPDBConditionDuringSync: other conditions stay. */
static void
keep_existing_condition(void **state)
{
	struct ctl_world *w = ctl_world_new(&disruption_controller_type, NULL);
	const cJSON *conditions;

	(void)state;
	ctl_cache(w, resource_find("poddisruptionbudgets"), fixture_parse(
	    "{\"metadata\":{\"name\":\"foobar\",\"namespace\":\"default\",\"uid\":\"u\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"minAvailable\":3,\"selector\":{}},"
	    "\"status\":{\"conditions\":[{\"type\":\"ExistingTestCondition\","
	    "\"status\":\"True\",\"reason\":\"Test\",\"message\":\"This is a test condition\","
	    "\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]}}"));
	ctl_sync(w, KEY, NOW);
	assert_non_null(w->result.status);
	conditions = json_path(w->result.status->body, "status.conditions");
	assert_int_equal(cJSON_GetArraySize(conditions), 2);
	assert_string_equal(json_string(cJSON_GetArrayItem(conditions, 0), "type"),
	    "ExistingTestCondition");
	assert_string_equal(json_string(cJSON_GetArrayItem(conditions, 1), "reason"),
	    "InsufficientPods");
	assert_string_equal(json_string(cJSON_GetArrayItem(conditions, 1),
	    "lastTransitionTime"), "2026-01-01T00:00:00Z");
	ctl_world_free(w);
}

/* The view disruption_budgets (schema/027) counts what the sync counts. */
static void
view_counts(void **state)
{
	struct ctl_world *w = ctl_world_new(&disruption_controller_type, NULL);
	const struct step steps[] = {
		{ .op = ADD_PDB, .name = "foobar", .spec = "\"minAvailable\":2",
		    .status = "{\"disruptedPods\":{\"c\":\"2099-01-01T00:00:00Z\"}}" },
		POD("a", 1, NULL), POD("b", 0, NULL), POD("c", 1, NULL),
		{ .op = ADD_POD, .name = "d", .n = 1, .deleting = 1 },
		POD("e", 1, NULL),
		LPOD("other", "{\"foo\":\"baz\"}", 1, NULL),
	};
	sqlite3_stmt *stmt;
	cJSON *written;

	(void)state;
	for (size_t i = 0; i < NELEM(steps); i++)
		ctl_cache(w, step_resource(steps[i].op), step_object(&steps[i]));
	ctl_sync(w, KEY, NOW);
	assert_non_null(w->result.status);
	written = cJSON_Duplicate(w->result.status->body, 1);
	json_set(json_child_object(written, "metadata"), "resourceVersion",
	    cJSON_CreateString("2000"));
	ctl_cache(w, resource_find("poddisruptionbudgets"), written);
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT selected, healthy,"
	    " desired_integer, current_healthy, disruptions_allowed, allowed_reason"
	    " FROM disruption_budgets WHERE namespace = 'default' AND name = 'foobar'", -1,
	    &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(stmt, 0), 5);	/* a b c d e */
	assert_int_equal(sqlite3_column_int(stmt, 1), 2);	/* a e */
	assert_int_equal(sqlite3_column_int(stmt, 2), 2);
	assert_int_equal(sqlite3_column_int(stmt, 3), 2);
	assert_int_equal(sqlite3_column_int(stmt, 4), 0);
	assert_string_equal((const char *)sqlite3_column_text(stmt, 5), "InsufficientPods");
	sqlite3_finalize(stmt);
	ctl_world_free(w);
}

/* --- TestStalePodDisruption ------------------------------------------------------------- */

static const struct stale_case {
	const char *name;
	const char *condition;	/* the DisruptionTarget condition's JSON; NULL: none */
	int deleting;
	const char *phase;
	double passed;		/* seconds since the condition's lastTransitionTime */
	const char *want;	/* "none", "update", or "requeue" */
	double requeue;
} stale_cases[] = {
	{ "stale pod disruption", "{\"type\":\"DisruptionTarget\",\"status\":\"True\"",
	    0, NULL, 121, "update", 0 },
	{ "pod disruption in progress", "{\"type\":\"DisruptionTarget\",\"status\":\"True\"",
	    0, NULL, 119, "requeue", 1 },
	{ "pod disruption actuated", "{\"type\":\"DisruptionTarget\",\"status\":\"True\"",
	    1, NULL, 121, "none", 0 },
	{ "no pod disruption", NULL, 1, NULL, 121, "none", 0 },
	{ "pod disruption cleared", "{\"type\":\"DisruptionTarget\",\"status\":\"False\"",
	    1, NULL, 121, "none", 0 },
	{ "a condition set by the kubelet is never stale", "{\"type\":\"DisruptionTarget\","
	    "\"status\":\"True\",\"reason\":\"TerminationByKubelet\"", 0, NULL, 600, "none", 0 },
	{ "a finished pod keeps its condition", "{\"type\":\"DisruptionTarget\","
	    "\"status\":\"True\",\"reason\":\"EvictionByEvictionAPI\"", 0, "Failed", 600,
	    "none", 0 },
	{ "a stale condition with a reason loses it", "{\"type\":\"DisruptionTarget\","
	    "\"status\":\"True\",\"reason\":\"EvictionByEvictionAPI\",\"message\":\"evicted\"",
	    0, "Running", 120, "update", 0 },
};

static void
stale_case(void **state)
{
	const struct stale_case *tc = *state;
	struct ctl_world *w = ctl_world_new(&disruption_controller_type, NULL);
	char since[TIME_RFC3339_SIZE], *text;
	const cJSON *cond;

	time_format_rfc3339((time_t)(NOW - tc->passed), since);
	text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"foo\","
	    "\"namespace\":\"default\",\"uid\":\"uid-foo\",\"resourceVersion\":\"5\","
	    "\"generation\":3%s},\"spec\":{},\"status\":{%s%s%s\"conditions\":["
	    "{\"type\":\"Ready\",\"status\":\"True\"}%s%s%s%s%s]}}",
	    tc->deleting ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
	    tc->phase != NULL ? "\"phase\":\"" : "", tc->phase != NULL ? tc->phase : "",
	    tc->phase != NULL ? "\"," : "", tc->condition != NULL ? "," : "",
	    tc->condition != NULL ? tc->condition : "",
	    tc->condition != NULL ? ",\"lastTransitionTime\":\"" : "",
	    tc->condition != NULL ? since : "", tc->condition != NULL ? "\"}" : "");
	ctl_cache(w, resource_find("pods"), fixture_parse(text));
	free(text);
	ctl_sync(w, DISRUPTION_POD_KEY_PREFIX "default/foo", NOW);
	if (strcmp(tc->want, "update") == 0) {
		assert_non_null(w->result.status);
		assert_int_equal(w->result.status->type, ACTION_UPDATE_STATUS);
		assert_string_equal(w->result.status->resource->name, "pods");
		assert_string_equal(w->result.status->uid, "uid-foo");
		cond = cJSON_GetArrayItem(json_path(w->result.status->body, "status.conditions"),
		    1);
		assert_string_equal(json_string(cond, "type"), "DisruptionTarget");
		assert_string_equal(json_string(cond, "status"), "False");
		assert_null(json_path(cond, "reason"));
		assert_null(json_path(cond, "message"));
		assert_int_equal(json_int(cond, "observedGeneration", 0), 3);
		assert_string_equal(json_string(cond, "lastTransitionTime"),
		    "2026-01-01T00:00:00Z");
		/* The Ready condition is left as it was. */
		assert_string_equal(json_string(cJSON_GetArrayItem(json_path(
		    w->result.status->body, "status.conditions"), 0), "status"), "True");
	} else {
		assert_null(w->result.status);
		assert_true(w->result.requeue_after == tc->requeue);
	}
	ctl_world_free(w);
}

/* --- IntOrString ------------------------------------------------------------------------ */

static const struct scaled_case {
	const char *value;	/* JSON */
	int total;
	long long want;
	const char *error;	/* NULL: none */
} scaled_cases[] = {
	{ "3", 10, 3, NULL },
	{ "\"30%\"", 7, 3, NULL },	/* 2.1 rounds up */
	{ "\"34%\"", 3, 2, NULL },
	{ "\"28%\"", 11, 4, NULL },
	{ "\"0%\"", 11, 0, NULL },
	{ "\"100%\"", 11, 11, NULL },
	{ "\"20%\"", 0, 0, NULL },
	{ "\"5\"", 10, 0, "invalid value for IntOrString: invalid type: string is not a"
	    " percentage" },
	{ "\"x%\"", 10, 0, "invalid value for IntOrString: invalid value \"x%\":"
	    " strconv.Atoi: parsing \"x\": invalid syntax" },
	{ "null", 10, 0, "nil value for IntOrString" },
	{ "true", 10, 0, "invalid value for IntOrString: invalid type: neither int nor"
	    " percentage" },
	{ "\"2147483647%\"", 2147483647, 46116860141324208LL, NULL },	/* 64 bits, as Go */
	{ "\"-50%\"", 3, -1, NULL },	/* Go's math.Ceil(-1.5) */
};

static void
scaled_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(scaled_cases); i++) {
		const struct scaled_case *tc = &scaled_cases[i];
		cJSON *v = fixture_parse(tc->value);
		char *error = NULL;
		long long out = -1;
		int rc = intstr_scaled_value(v, tc->total, 1, &out, &error);

		if (tc->error != NULL) {
			assert_int_equal(rc, -1);
			assert_string_equal(error, tc->error);
		} else {
			assert_int_equal(rc, 0);
			if (out != tc->want)
				fail_msg("%s of %d: %lld, want %lld", tc->value, tc->total, out,
				    tc->want);
		}
		free(error);
		cJSON_Delete(v);
	}
}

/* --- handlers --------------------------------------------------------------------------- */

/* A pod event queues the budgets that select it; a pod with a DisruptionTarget condition
 * True is queued for its clean-up when it will be stale; a budget event queues it. */
static void
events_queue(void **state)
{
	struct ctl_world *w = ctl_world_new(&disruption_controller_type, NULL);
	const struct resource *pdbs = resource_find("poddisruptionbudgets");
	const struct resource *pods = resource_find("pods");
	char *keys;

	(void)state;
	ctl_cache(w, pdbs, fixture_parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\","
	    "\"uid\":\"u1\",\"resourceVersion\":\"1\"},\"spec\":{\"minAvailable\":1,"
	    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}}"));
	ctl_cache(w, pdbs, fixture_parse("{\"metadata\":{\"name\":\"all\",\"namespace\":\"ns\","
	    "\"uid\":\"u2\",\"resourceVersion\":\"1\"},\"spec\":{\"minAvailable\":1,"
	    "\"selector\":{}}}"));
	ctl_cache(w, pdbs, fixture_parse("{\"metadata\":{\"name\":\"none\",\"namespace\":\"ns\","
	    "\"uid\":\"u3\",\"resourceVersion\":\"1\"},\"spec\":{\"minAvailable\":1}}"));
	ctl_cache(w, pdbs, fixture_parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"other\","
	    "\"uid\":\"u4\",\"resourceVersion\":\"1\"},\"spec\":{\"minAvailable\":1,"
	    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}}"));
	ctl_tell(w, INFORMER_ADDED, pods, fixture_parse("{\"metadata\":{\"name\":\"p\","
	    "\"namespace\":\"ns\",\"uid\":\"p\",\"labels\":{\"app\":\"web\"}},"
	    "\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2025-12-31T23:59:30Z\"}]}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "ns/all,ns/web,pod:ns/p (after 90s)");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, pods, fixture_parse("{\"metadata\":{\"name\":\"q\","
	    "\"namespace\":\"ns\",\"uid\":\"q\",\"labels\":{\"app\":\"db\"}}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "ns/all");
	free(keys);
	ctl_keys_clear(w);
	/* A pod without labels: the empty selector still selects it. */
	ctl_tell(w, INFORMER_ADDED, pods, fixture_parse("{\"metadata\":{\"name\":\"r\","
	    "\"namespace\":\"ns\",\"uid\":\"r\"}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "ns/all");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, pdbs, fixture_parse("{\"metadata\":{\"name\":\"none\","
	    "\"namespace\":\"ns\",\"uid\":\"u3\"}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "ns/none");
	free(keys);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(scenarios) + NELEM(stale_cases) + 5];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(scenarios); i++)
		tests[n++] = (struct CMUnitTest){ scenarios[i].name, scenario_run, NULL, NULL,
		    (void *)&scenarios[i] };
	tests[n++] = (struct CMUnitTest){ "TestPDBNotExist", pdb_not_exist, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "TestKeepExistingPDBConditionDuringSync",
	    keep_existing_condition, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the view counts what the sync counts", view_counts,
	    NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(stale_cases); i++)
		tests[n++] = (struct CMUnitTest){ stale_cases[i].name, stale_case, NULL, NULL,
		    (void *)&stale_cases[i] };
	tests[n++] = (struct CMUnitTest){ "IntOrString percentages", scaled_values, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the events that queue keys", events_queue, NULL,
	    NULL, NULL };
	return _cmocka_run_group_tests("disruption", tests, n, NULL, NULL);
}
