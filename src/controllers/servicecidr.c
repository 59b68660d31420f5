/*
 * servicecidr.c - the Service CIDR controller (kube's service-cidr-controller).
 *
 * A key is a ServiceCIDR's name. A sync, as kube's:
 *
 *   - a ServiceCIDR not being deleted gets the finalizer
 *     networking.k8s.io/service-cidr-finalizer (a strategic merge patch) when it lacks
 *     it, then the condition Ready True ("Kubernetes Service CIDR is ready");
 *   - one being deleted may go when each of its CIDRs is held by another ServiceCIDR too
 *     (one whose CIDR contains it), or else when no IPAddress of the ipallocator
 *     (labels ipaddress.kubernetes.io/managed-by=ipallocator.k8s.io and its family) lies
 *     in it alone; then, 10 s after its deletion began (synced again then), its finalizer
 *     is removed. While it may not go, its condition is Ready False, reason Terminating.
 *
 * A condition is written only when its status, reason or message differ from the cached
 * one's, by a forced server-side apply of the status as field manager
 * service-cidr-controller, as kube's ApplyStatus. An address does not lie in a prefix when
 * it is the prefix's first address, nor, in IPv4, its last (kube's PrefixContainsIP).
 *
 * Handlers: a ServiceCIDR added queues itself and those overlapping it; updated or
 * deleted, itself; an IPAddress of the ipallocator added or deleted queues the
 * ServiceCIDRs that hold it. list_keys gives every ServiceCIDR. kube runs 5 workers.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/servicecidr.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define FINALIZER "networking.k8s.io/service-cidr-finalizer"
#define FIELD_MANAGER "service-cidr-controller"
#define MANAGED_BY "ipallocator.k8s.io"
#define GRACE_SECONDS 10.0
#define READY_MESSAGE "Kubernetes Service CIDR is ready"
#define TERMINATING_MESSAGE "There are still IPAddresses referencing the ServiceCIDR, " \
	"please remove them or create a new ServiceCIDR"

/* --- prefixes and addresses ------------------------------------------------------------ */

int
servicecidr_parse_addr(const char *s, struct prefix *p)
{
	memset(p, 0, sizeof *p);
	if (inet_pton(AF_INET, s, p->addr) == 1) {
		p->family = 4;
		p->bits = 32;
		return 0;
	}
	if (strchr(s, '%') == NULL && inet_pton(AF_INET6, s, p->addr) == 1) {
		p->family = 6;
		p->bits = 128;
		return 0;
	}
	return -1;
}

int
servicecidr_parse_prefix(const char *s, struct prefix *p)
{
	const char *slash = s != NULL ? strchr(s, '/') : NULL;
	char addr[64];
	int bits = 0;

	if (slash == NULL || (size_t)(slash - s) >= sizeof addr || slash[1] == '\0' ||
	    strlen(slash + 1) > 3 || (slash[1] == '0' && slash[2] != '\0'))
		return -1;
	for (const char *d = slash + 1; *d != '\0'; d++) {
		if (*d < '0' || *d > '9')
			return -1;
		bits = bits * 10 + (*d - '0');
	}
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (servicecidr_parse_addr(addr, p) != 0 || bits > p->bits)
		return -1;
	p->bits = bits;
	return 0;
}

/* Whether the first n bits of a and b are equal. */
static int
same_bits(const unsigned char *a, const unsigned char *b, int n)
{
	int bytes = n / 8, rest = n % 8;

	if (memcmp(a, b, (size_t)bytes) != 0)
		return 0;
	return rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff << (8 - rest)) & 0xff) == 0;
}

int
servicecidr_overlaps(const struct prefix *a, const struct prefix *b)
{
	return a->family == b->family &&
	    same_bits(a->addr, b->addr, a->bits < b->bits ? a->bits : b->bits);
}

int
servicecidr_holds_address(const struct prefix *p, const struct prefix *ip)
{
	unsigned char first[16], last[16];
	int len = p->family == 4 ? 4 : 16;

	if (p->family != ip->family || !same_bits(p->addr, ip->addr, p->bits))
		return 0;
	for (int i = 0; i < len; i++) {
		int keep = p->bits - 8 * i;
		unsigned char mask = keep >= 8 ? 0xff : keep <= 0 ? 0 :
		    (unsigned char)(0xff << (8 - keep));

		first[i] = p->addr[i] & mask;
		last[i] = first[i] | (unsigned char)~mask;
	}
	if (memcmp(first, ip->addr, (size_t)len) == 0)
		return 0;
	return !(p->family == 4 && memcmp(last, ip->addr, 4) == 0);
}

/* --- the cache ------------------------------------------------------------------------- */

enum {
	STMT_CIDR,
	STMT_ALL,
	STMT_ADDRESSES,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const servicecidr_sql[STMT_COUNT] = {
	/* ServiceCIDR ?1: its uid and body. */
	[STMT_CIDR] =
	    "SELECT uid, body FROM cache_objects WHERE resource = 'servicecidrs'"
	    " AND namespace = '' AND name = ?1",
	/* Every ServiceCIDR's name and CIDRs, by name. */
	[STMT_ALL] =
	    "SELECT name, json_extract(body, '$.spec.cidrs') FROM cache_objects"
	    " WHERE resource = 'servicecidrs' AND namespace = '' ORDER BY name",
	/* The ipallocator's IPAddresses of family ?1. */
	[STMT_ADDRESSES] =
	    "SELECT name FROM cache_objects WHERE resource = 'ipaddresses' AND namespace = ''"
	    " AND json_extract(body, '$.metadata.labels.\"ipaddress.kubernetes.io/managed-by\"')"
	    " = '" MANAGED_BY "'"
	    " AND json_extract(body, '$.metadata.labels.\"ipaddress.kubernetes.io/ip-family\"')"
	    " = ?1",
	/* Every ServiceCIDR. */
	[STMT_KEYS] =
	    "SELECT name FROM cache_objects WHERE resource = 'servicecidrs' AND namespace = ''"
	    " ORDER BY name",
};

struct servicecidr_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *servicecidrs;
};

/* Every cached ServiceCIDR's CIDRs, parsed: n entries of name and prefix (a ServiceCIDR
 * of two CIDRs gives two, as kube's listers walk them). */
struct cidr_entry {
	char *name;
	struct prefix prefix;
};

static int
read_all(struct controller *c, struct cidr_entry **out, int *n, char **error)
{
	struct servicecidr_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_ALL]);
	struct cidr_entry *entries = NULL;
	int count = 0, rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *cidrs = cJSON_Parse((const char *)sqlite3_column_text(stmt, 1));
		const cJSON *cidr;

		cJSON_ArrayForEach(cidr, cidrs) {
			struct prefix p;

			if (!cJSON_IsString(cidr) ||
			    servicecidr_parse_prefix(cidr->valuestring, &p) != 0)
				continue;
			entries = xrealloc(entries, (size_t)(count + 1) * sizeof *entries);
			entries[count].name = xstrdup((const char *)sqlite3_column_text(stmt, 0));
			entries[count++].prefix = p;
		}
		cJSON_Delete(cidrs);
	}
	sqlite3_reset(stmt);
	*out = entries;
	*n = count;
	if (rc != SQLITE_DONE)
		return error_set(error, "service-cidr-controller: reading ServiceCIDRs: %s",
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

static void
free_all(struct cidr_entry *entries, int n)
{
	for (int i = 0; i < n; i++)
		free(entries[i].name);
	free(entries);
}

/* kube's canDeleteCIDR for the ServiceCIDR name of CIDRs cidrs. */
static int
can_delete(struct controller *c, const char *name, const cJSON *cidrs,
    const struct cidr_entry *all, int nall)
{
	struct servicecidr_state *st = c->state;
	int has_parent = 1, blocked = 0;
	const cJSON *cidr;

	cJSON_ArrayForEach(cidr, cidrs) {
		struct prefix p;
		int holders = 0, self = 0;

		if (!cJSON_IsString(cidr) ||
		    servicecidr_parse_prefix(cidr->valuestring, &p) != 0)
			continue;
		for (int i = 0; i < nall; i++) {
			if (servicecidr_overlaps(&all[i].prefix, &p) &&
			    all[i].prefix.bits <= p.bits) {
				holders++;
				self = strcmp(all[i].name, name) == 0;
			}
		}
		if (holders == 0 || (holders == 1 && self))
			has_parent = 0;
	}
	if (has_parent)
		return 1;
	cJSON_ArrayForEach(cidr, cidrs) {
		sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_ADDRESSES]);
		struct prefix p;

		if (blocked || !cJSON_IsString(cidr))
			continue;
		/* kube's IPFamilyOfCIDRString: what does not parse is of no family. */
		sqlite3_bind_text(stmt, 1,
		    servicecidr_parse_prefix(cidr->valuestring, &p) != 0 ? "" :
		    p.family == 4 ? "IPv4" : "IPv6", -1, SQLITE_STATIC);
		while (!blocked && sqlite3_step(stmt) == SQLITE_ROW) {
			struct prefix ip;
			int holders = 0, self = 0;

			if (servicecidr_parse_addr((const char *)sqlite3_column_text(stmt, 0),
			    &ip) != 0)
				continue;
			for (int i = 0; i < nall; i++) {
				if (servicecidr_holds_address(&all[i].prefix, &ip)) {
					holders++;
					self = strcmp(all[i].name, name) == 0;
				}
			}
			blocked = holders == 1 && self;
		}
		sqlite3_reset(stmt);
	}
	return !blocked;
}

/* --- sync ------------------------------------------------------------------------------ */

/* Appends the apply of condition Ready (status, reason, message) unless the cached one
 * says the same (kube's updateConditionIfNeeded). */
static void
ready_condition(struct servicecidr_state *st, struct sync_result *out, const char *name,
    const cJSON *cidr, const char *status, const char *reason, const char *message,
    double now)
{
	const cJSON *cond;
	char stamp[TIME_RFC3339_SIZE];
	cJSON *body, *conditions, *c;
	struct action *a;

	cJSON_ArrayForEach(cond, json_path(cidr, "status.conditions")) {
		if (strcmp(json_string(cond, "type"), "Ready") == 0) {
			if (strcmp(json_string(cond, "status"), status) == 0 &&
			    strcmp(json_string(cond, "reason"), reason) == 0 &&
			    strcmp(json_string(cond, "message"), message) == 0)
				return;
			break;
		}
	}
	time_format_rfc3339((time_t)now, stamp);
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "kind", "ServiceCIDR");
	cJSON_AddStringToObject(body, "apiVersion", "networking.k8s.io/v1");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(body, "metadata"), "name", name);
	conditions = cJSON_AddArrayToObject(cJSON_AddObjectToObject(body, "status"),
	    "conditions");
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "Ready");
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddStringToObject(c, "lastTransitionTime", stamp);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", message);
	cJSON_AddItemToArray(conditions, c);
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_PATCH;
	a->verb = "apply-status";
	a->field_manager = FIELD_MANAGER;
	a->subresource = "status";
	a->resource = st->servicecidrs;
	a->namespace = xstrdup("");
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->body = body;
	a->reason = xasprintf("Ready %s%s%s", status, *reason != '\0' ? ", " : "", reason);
}

/* Appends the strategic merge patch that adds (or removes) the finalizer. */
static void
finalizer_patch(struct servicecidr_state *st, struct sync_result *out, const char *name,
    int add)
{
	struct action *a = action_append(&out->writes, &out->nwrites);
	cJSON *list = cJSON_CreateArray();

	cJSON_AddItemToArray(list, cJSON_CreateString(FINALIZER));
	a->type = ACTION_PATCH;
	a->verb = add ? "add-finalizer" : "remove-finalizer";
	a->resource = st->servicecidrs;
	a->namespace = xstrdup("");
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->body = cJSON_CreateObject();
	cJSON_AddItemToObject(cJSON_AddObjectToObject(a->body, "metadata"),
	    add ? "finalizers" : "$deleteFromPrimitiveList/finalizers", list);
	a->reason = xstrdup(add ? "no " FINALIZER : "no IPAddress holds it any more");
}

static int
has_finalizer(const cJSON *cidr)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, json_path(cidr, "metadata.finalizers")) {
		if (cJSON_IsString(f) && strcmp(f->valuestring, FINALIZER) == 0)
			return 1;
	}
	return 0;
}

static int
servicecidr_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct servicecidr_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CIDR]);
	struct cidr_entry *all = NULL;
	cJSON *cidr = NULL;
	const char *deleting;
	time_t deleted_at;
	int rc, nall = 0;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->servicecidrs;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		cidr = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "service-cidr-controller: reading %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE || cidr == NULL) {
		out->forget_expectations = 1;
		cJSON_Delete(cidr);
		return 0;
	}
	deleting = json_string(cidr, "metadata.deletionTimestamp");
	if (*deleting == '\0') {
		if (!has_finalizer(cidr))
			finalizer_patch(st, out, key, 1);
		ready_condition(st, out, key, cidr, "True", "", READY_MESSAGE, now);
		cJSON_Delete(cidr);
		return 0;
	}
	if (read_all(c, &all, &nall, error) != 0) {
		free_all(all, nall);
		cJSON_Delete(cidr);
		return -1;
	}
	if (!can_delete(c, key, json_path(cidr, "spec.cidrs"), all, nall)) {
		ready_condition(st, out, key, cidr, "False", "Terminating", TERMINATING_MESSAGE,
		    now);
	} else if (time_parse_rfc3339(deleting, &deleted_at) == 0 &&
	    now < (double)deleted_at + GRACE_SECONDS) {
		out->requeue_after = (double)deleted_at + GRACE_SECONDS - now;
	} else if (has_finalizer(cidr)) {
		finalizer_patch(st, out, key, 0);
	}
	free_all(all, nall);
	cJSON_Delete(cidr);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
servicecidr_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *name = json_string(ev->object, "metadata.name");
	struct cidr_entry *all = NULL;
	char *error = NULL;
	struct prefix p, ip;
	const cJSON *cidr;
	int nall = 0;

	(void)now;
	if (*name == '\0')
		return;
	if (strcmp(ev->resource->name, "servicecidrs") == 0) {
		q->add(name, q->arg);
		if (ev->type != INFORMER_ADDED)
			return;
	} else {
		/* An IPAddress of the ipallocator, added or deleted. */
		const cJSON *by = cJSON_GetObjectItemCaseSensitive(json_path(ev->object,
		    "metadata.labels"), "ipaddress.kubernetes.io/managed-by");

		if (strcmp(ev->resource->name, "ipaddresses") != 0 ||
		    ev->type == INFORMER_UPDATED || !cJSON_IsString(by) ||
		    strcmp(by->valuestring, MANAGED_BY) != 0)
			return;
	}
	if (read_all(c, &all, &nall, &error) != 0) {
		log_error("%s", error);
		free(error);
		free_all(all, nall);
		return;
	}
	if (strcmp(ev->resource->name, "servicecidrs") == 0) {
		/* Added: those it overlaps. */
		cJSON_ArrayForEach(cidr, json_path(ev->object, "spec.cidrs")) {
			if (!cJSON_IsString(cidr) ||
			    servicecidr_parse_prefix(cidr->valuestring, &p) != 0)
				continue;
			for (int i = 0; i < nall; i++) {
				if (servicecidr_overlaps(&all[i].prefix, &p))
					q->add(all[i].name, q->arg);
			}
		}
	} else if (servicecidr_parse_addr(name, &ip) == 0) {
		for (int i = 0; i < nall; i++) {
			if (servicecidr_holds_address(&all[i].prefix, &ip))
				q->add(all[i].name, q->arg);
		}
	}
	free_all(all, nall);
}

static int
servicecidr_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct servicecidr_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "service-cidr-controller", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
servicecidr_init(struct controller *c, char **error)
{
	struct servicecidr_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->servicecidrs = resource_find("servicecidrs");
	if (st->servicecidrs == NULL)
		return error_set(error, "service-cidr-controller: servicecidrs is not a known "
		    "resource");
	return store_prepare_statements(store_db(c->store), servicecidr_sql, STMT_COUNT,
	    st->stmt, "service-cidr-controller", error);
}

static void
servicecidr_fini(struct controller *c)
{
	struct servicecidr_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const servicecidr_resources[] = { "servicecidrs", "ipaddresses", NULL };

const struct controller_type servicecidr_controller_type = {
	.name = "service-cidr-controller",
	.resources = servicecidr_resources,
	.default_workers = 5,		/* kube starts it with 5; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "service-cidr-controller",
	.client_name = "service-cidrs-controller",
	.recovery = NULL,
	.init = servicecidr_init,
	.fini = servicecidr_fini,
	.handle_event = servicecidr_handle_event,
	.list_keys = servicecidr_list_keys,
	.sync = servicecidr_sync,
};
