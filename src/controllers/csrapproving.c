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
#include "controllers/csrs.h"
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
		list = csrsigning_usages_of(csr, &n);
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

struct csrapproving_state {
	struct csrs csrs;		/* first: csrs_handle_event and _list_keys */
};

static int
csrapproving_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct csrapproving_state *st = c->state;
	char *why = NULL;
	const cJSON *csr;
	int found, rc = csrs_read(&st->csrs, c, key, out, NULL, error);

	(void)now;
	if (rc <= 0)
		return rc;
	csr = out->owner;
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
		a->resource = st->csrs.resource;
		a->namespace = xstrdup("");
		a->name = xstrdup(key);
		a->uid = xstrdup(out->owner_uid);
		a->body = approved;
		a->reason = xasprintf("a kubelet's client certificate (%s), if the review allows",
		    kinds[kind].subresource);
	}
	return 0;
}

/* --- the type -------------------------------------------------------------------------- */

static int
csrapproving_init(struct controller *c, char **error)
{
	struct csrapproving_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	return csrs_init(&st->csrs, c, NULL, error);
}

static void
csrapproving_fini(struct controller *c)
{
	struct csrapproving_state *st = c->state;

	if (st == NULL)
		return;
	csrs_fini(&st->csrs);
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
	.client_name = "certificate-controller",
	.recovery = NULL,
	.init = csrapproving_init,
	.fini = csrapproving_fini,
	.handle_event = csrs_handle_event,
	.list_keys = csrs_list_keys,
	.sync = csrapproving_sync,
};
