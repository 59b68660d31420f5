/*
 * csrapproving.c - the CSR approver (kube's certificatesigningrequest-approving-controller,
 * alias csrapproving).
 *
 * A key is a CSR's name. A sync leaves alone a CSR that is issued, approved or denied. It
 * reads the request (one that does not parse is logged and synced again with backoff, as
 * kube's returns an error), and tries kube's recognizers in kube's order:
 *
 *   selfnodeclient  a kubelet's client request (csrsigning_validate's kubelet-client
 *                   rules: O=system:nodes alone, CN system:node:..., no SANs, its usages)
 *                   of signer kubernetes.io/kube-apiserver-client-kubelet, made by the
 *                   node itself (spec.username is the CN)
 *   nodeclient      the same, made by anyone (a bootstrap token, say)
 *
 * For each that recognizes it, kube asks the apiserver whether the requester (the CSR's
 * spec.username, uid, groups and extra) may create certificatesigningrequests/<the
 * recognizer's subresource>, with a SubjectAccessReview; the first that is allowed gets
 * the Approved condition (reason AutoApproved, the recognizer's message) through the
 * approval subresource, with the cached object's resourceVersion. The sync plans this as
 * writes: each review, then the approval it allows (the executor's review gate sends the
 * approval only when the answer allows it, and stops after it). When every review says no
 * the key is synced again with backoff, as kube's (an ignorable error, requeued). A CSR no
 * recognizer takes is done with.
 *
 * The handlers queue a CSR when it is added or changes; list_keys gives every cached CSR.
 * kube runs 5 workers, and its certificate queue backs off from 200 ms.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllers/csrapproving.h"
#include "controllers/csrsigning.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "util.h"

#define KUBELET_CLIENT_SIGNER "kubernetes.io/kube-apiserver-client-kubelet"

/* SubjectAccessReviews: created, never cached. */
static const struct resource_column no_columns[] = { { NULL, 0, NULL, 0, NULL } };
static const struct resource resource_subjectaccessreviews = {
	"subjectaccessreviews", "SubjectAccessReview", "authorization.k8s.io/v1",
	"/apis/authorization.k8s.io/v1/subjectaccessreviews", NULL, no_columns, -1, 0, 0,
	NULL,
};

static const struct {
	const char *subresource;
	const char *message;
} kinds[CSRAPPROVING_KINDS] = {
	[CSRAPPROVING_SELF_NODE_CLIENT] = { "selfnodeclient",
	    "Auto approving self kubelet client certificate after SubjectAccessReview." },
	[CSRAPPROVING_NODE_CLIENT] = { "nodeclient",
	    "Auto approving kubelet client certificate after SubjectAccessReview." },
};

const char *
csrapproving_subresource(enum csrapproving_kind kind)
{
	return kinds[kind].subresource;
}

const char *
csrapproving_message(enum csrapproving_kind kind)
{
	return kinds[kind].message;
}

/* --- the rules ------------------------------------------------------------------------- */

/* Whether csr has a condition of type (whatever its status: kube's
 * GetCertApprovalCondition). */
static int
has_condition(const cJSON *csr, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(csr, "status.conditions")) {
		if (strcmp(json_string(c, "type"), type) == 0)
			return 1;
	}
	return 0;
}

int
csrapproving_recognize(const cJSON *csr, char **error)
{
	struct csrsigning_request req;
	const cJSON *usages = json_path(csr, "spec.usages"), *u;
	const char **list;
	const char *username = json_string(csr, "spec.username");
	char *why = NULL, *refused;
	int n = 0, found = 0;

	if (*json_string(csr, "status.certificate") != '\0' ||
	    has_condition(csr, "Approved") || has_condition(csr, "Denied"))
		return 0;
	if (csrsigning_request_parse(json_string(csr, "spec.request"), &req, &why) != 0) {
		error_set(error, "unable to parse csr \"%s\": %s",
		    json_string(csr, "metadata.name"), why);
		free(why);
		return -1;
	}
	if (strcmp(json_string(csr, "spec.signerName"), KUBELET_CLIENT_SIGNER) == 0) {
		list = xcalloc((size_t)cJSON_GetArraySize(usages) + 1, sizeof *list);
		cJSON_ArrayForEach(u, usages)
			list[n++] = cJSON_IsString(u) ? u->valuestring : "";
		refused = csrsigning_validate(CSRSIGNING_KUBELET_CLIENT, &req, list, n);
		if (refused == NULL) {
			found |= 1 << CSRAPPROVING_NODE_CLIENT;
			/* The CN as bytes: one holding a NUL is no user's name. */
			if (strlen(username) == req.common_name.len &&
			    memcmp(username, req.common_name.s, req.common_name.len) == 0)
				found |= 1 << CSRAPPROVING_SELF_NODE_CLIENT;
		}
		free(refused);
		free(list);
	}
	csrsigning_request_clear(&req);
	return found;
}

cJSON *
csrapproving_review(const cJSON *csr, enum csrapproving_kind kind)
{
	cJSON *review = cJSON_CreateObject(), *spec, *attrs, *extra;
	const cJSON *groups = json_path(csr, "spec.groups");
	const cJSON *given = json_path(csr, "spec.extra");

	cJSON_AddStringToObject(review, "apiVersion", "authorization.k8s.io/v1");
	cJSON_AddStringToObject(review, "kind", "SubjectAccessReview");
	spec = cJSON_AddObjectToObject(review, "spec");
	cJSON_AddStringToObject(spec, "user", json_string(csr, "spec.username"));
	if (*json_string(csr, "spec.uid") != '\0')
		cJSON_AddStringToObject(spec, "uid", json_string(csr, "spec.uid"));
	if (cJSON_IsArray(groups))
		cJSON_AddItemToObject(spec, "groups", cJSON_Duplicate(groups, 1));
	if (cJSON_IsObject(given) && given->child != NULL) {
		extra = cJSON_Duplicate(given, 1);
		cJSON_AddItemToObject(spec, "extra", extra);
	}
	attrs = cJSON_AddObjectToObject(spec, "resourceAttributes");
	cJSON_AddStringToObject(attrs, "verb", "create");
	cJSON_AddStringToObject(attrs, "group", "certificates.k8s.io");
	cJSON_AddStringToObject(attrs, "version", "*");
	cJSON_AddStringToObject(attrs, "resource", "certificatesigningrequests");
	cJSON_AddStringToObject(attrs, "subresource", kinds[kind].subresource);
	return review;
}

/* --- sync ------------------------------------------------------------------------------ */

enum {
	STMT_CSR,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const csrapproving_sql[STMT_COUNT] = {
	[STMT_CSR] =
	    ("SELECT uid, body FROM cache_objects"
	    " WHERE resource = 'certificatesigningrequests' AND namespace = '' AND name = ?1"),
	[STMT_KEYS] =
	    ("SELECT name FROM cache_objects"
	    " WHERE resource = 'certificatesigningrequests' AND namespace = '' ORDER BY name"),
};

struct csrapproving_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *csrs;
};

static int
csrapproving_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct csrapproving_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CSR]);
	char *why = NULL;
	cJSON *csr = NULL;
	int rc, found;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->csrs;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		csr = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "csrapproving: reading CSR %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		out->forget_expectations = 1;
		return 0;
	}
	if (csr == NULL)
		return error_set(error, "csrapproving: CSR %s: the cached body is not JSON", key);
	out->owner = csr;
	found = csrapproving_recognize(csr, &why);
	if (found < 0) {
		log_warning("csrapproving: %s", why);
		free(why);
		out->failed = 1;
		return 0;
	}
	for (int kind = 0; kind < CSRAPPROVING_KINDS; kind++) {
		struct action *a;
		cJSON *approved, *status, *conditions, *condition;

		if (!(found & 1 << kind))
			continue;
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_CREATE;
		a->verb = kind == CSRAPPROVING_SELF_NODE_CLIENT ? "review-selfnodeclient" :
		    "review-nodeclient";
		a->resource = &resource_subjectaccessreviews;
		a->namespace = xstrdup("");
		a->body = csrapproving_review(csr, kind);
		a->review = 1;
		a->reason = xasprintf("may %s create certificatesigningrequests/%s?",
		    json_string(csr, "spec.username"), kinds[kind].subresource);

		approved = cJSON_Duplicate(csr, 1);
		status = cJSON_GetObjectItemCaseSensitive(approved, "status");
		if (!cJSON_IsObject(status)) {
			cJSON_DeleteItemFromObjectCaseSensitive(approved, "status");
			status = cJSON_AddObjectToObject(approved, "status");
		}
		conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
		if (!cJSON_IsArray(conditions)) {
			cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
			conditions = cJSON_AddArrayToObject(status, "conditions");
		}
		condition = cJSON_CreateObject();
		cJSON_AddStringToObject(condition, "type", "Approved");
		cJSON_AddStringToObject(condition, "status", "True");
		cJSON_AddStringToObject(condition, "reason", "AutoApproved");
		cJSON_AddStringToObject(condition, "message", kinds[kind].message);
		cJSON_AddItemToArray(conditions, condition);
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_UPDATE;
		a->verb = "approve";
		a->subresource = "approval";
		a->resource = st->csrs;
		a->namespace = xstrdup("");
		a->name = xstrdup(key);
		a->uid = xstrdup(out->owner_uid);
		a->body = approved;
		a->reason = xasprintf("a kubelet's client certificate (%s), if the review allows",
		    kinds[kind].subresource);
	}
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
csrapproving_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	const char *name = json_string(ev->object, "metadata.name");

	(void)c;
	(void)now;
	if (ev->type != INFORMER_DELETED && *name != '\0')
		q->add(name, q->arg);
}

static int
csrapproving_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct csrapproving_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "csrapproving", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
csrapproving_init(struct controller *c, char **error)
{
	struct csrapproving_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->csrs = resource_find("certificatesigningrequests");
	if (st->csrs == NULL)
		return error_set(error,
		    "csrapproving: certificatesigningrequests is not a known resource");
	return store_prepare_statements(store_db(c->store), csrapproving_sql, STMT_COUNT,
	    st->stmt, "csrapproving", error);
}

static void
csrapproving_fini(struct controller *c)
{
	struct csrapproving_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const csrapproving_resources[] = { "certificatesigningrequests", NULL };

const struct controller_type csrapproving_controller_type = {
	.name = "csrapproving",
	.resources = csrapproving_resources,
	.default_workers = 5,		/* kube's certificate controller runs 5; no flag */
	.base_backoff = 0.2,		/* kube's certificate queue: 200 ms to 1000 s */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "csrapproving",
	.recovery = NULL,
	.init = csrapproving_init,
	.fini = csrapproving_fini,
	.handle_event = csrapproving_handle_event,
	.list_keys = csrapproving_list_keys,
	.sync = csrapproving_sync,
};
