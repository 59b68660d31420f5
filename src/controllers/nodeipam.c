/*
 * nodeipam.c - node IPAM by kube's range allocator (node-ipam-controller, nodeipam).
 *
 * With --allocate-node-cidrs, every node without spec.podCIDRs gets one block of each
 * cluster CIDR (--cluster-cidr: one, or an IPv4 and an IPv6 one), of the size
 * --node-cidr-mask-size[-ipv4|-ipv6] says (/24 and /64 by default), patched into
 * spec.podCIDR and spec.podCIDRs. Without it the controller does nothing, as kube does not
 * start it.
 *
 * Each cluster CIDR is a cidrset: which of its blocks are taken, and where the next search
 * starts. As in kube, it is the controller's memory, not the cache's:
 *
 *   - the blocks of every node that has podCIDRs are taken before anything is handed out
 *     (kube lists the nodes as it starts; here the first sync reads the synced cache), and
 *     again whenever a node is seen with them;
 *   - the service ranges (--service-cluster-ip-range, one or two) are taken too, where
 *     they overlap a cluster CIDR;
 *   - a new block is the first free one from where the last search ended, round robin:
 *     a block given back is handed out again only once the search comes round to it, or
 *     after a restart (the search starts again at the first block);
 *   - a deleted node's blocks are given back at once (its handler).
 *
 * A key is a node's name. Its sync, for a node without podCIDRs, takes one block of each
 * set and patches the node with them; when a set has none left it records kube's
 * CIDRNotAvailable event and fails (the key is synced again with backoff). The blocks a
 * sync handed out are the node's until the cache shows the node with its podCIDRs: a sync
 * that runs before (the patch failed, or the cache lags) sends the same blocks again, so
 * that no block is handed out twice nor lost. (kube retries a failed patch three times,
 * then gives the blocks back and records CIDRAssignmentFailed; here a failed patch is
 * retried with the key's backoff, with the same blocks.)
 *
 * kube's allocator stops the whole controller manager when a node's podCIDR lies outside
 * the cluster CIDR as it starts; here that node is reported and left as it is.
 * Metrics: kube's node_ipam_controller_cidrset_* of each cluster CIDR.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/nodeipam.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "resource.h"
#include "util.h"

typedef unsigned __int128 u128;

#define PAGE_BITS 18			/* blocks per page: 1 << PAGE_BITS */
#define PAGE_WORDS ((1u << PAGE_BITS) / 64)

/* --- networks -------------------------------------------------------------------------- */

static int
width(const struct ipnet *n)
{
	return n->v6 ? 128 : 32;
}

/* The mask of a prefix of bits within a width-bit address. */
static u128
prefix_mask(int bits, int w)
{
	u128 all = w == 128 ? ~(u128)0 : (((u128)1 << w) - 1);

	if (bits == 0)
		return 0;
	return all & ~((((u128)1) << (w - bits)) - 1);
}

/* An IPv4 address as Go's sloppy parser reads it: four decimal parts of at most 255,
 * leading zeros allowed. */
static int
parse_v4(const char *s, size_t len, u128 *out)
{
	uint32_t addr = 0;
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		unsigned v = 0;
		size_t digits = 0;

		if (part > 0) {
			if (i >= len || s[i] != '.')
				return -1;
			i++;
		}
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			v = v * 10 + (unsigned)(s[i++] - '0');
			if (v > 255)
				return -1;
			digits++;
		}
		if (digits == 0)
			return -1;
		addr = addr << 8 | v;
	}
	if (i != len)
		return -1;
	*out = addr;
	return 0;
}

int
ipnet_parse(const char *text, struct ipnet *out)
{
	const char *slash = strchr(text, '/');
	char host[64];
	unsigned char b[16];
	size_t len;
	long bits = 0;
	const char *p;

	if (slash == NULL || (len = (size_t)(slash - text)) == 0 || len >= sizeof host)
		return -1;
	memcpy(host, text, len);
	host[len] = '\0';
	memset(out, 0, sizeof *out);
	if (parse_v4(host, len, &out->addr) == 0) {
		out->v6 = 0;
	} else if (inet_pton(AF_INET6, host, b) == 1) {
		out->v6 = 1;
		for (int i = 0; i < 16; i++)
			out->addr = out->addr << 8 | b[i];
	} else {
		return -1;
	}
	p = slash + 1;
	if (*p == '\0')
		return -1;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		bits = bits * 10 + (*p - '0');
		if (bits > width(out))
			return -1;
	}
	out->bits = (int)bits;
	out->addr &= prefix_mask(out->bits, width(out));
	return 0;
}

void
ipnet_format(const struct ipnet *n, char *out, size_t size)
{
	char host[48];
	size_t len = 0;

	if (n->v6) {
		/* As Go prints it: groups in lowercase hex without leading zeros, the longest
		 * run of two or more zero groups (the first of equal ones) as "::", never a
		 * dotted tail. */
		unsigned g[8];
		int best = -1, best_len = 1;

		for (int i = 0; i < 8; i++)
			g[i] = (unsigned)(n->addr >> (16 * (7 - i))) & 0xffff;
		for (int i = 0; i < 8; i++) {
			int j = i;

			while (j < 8 && g[j] == 0)
				j++;
			if (j - i > best_len) {
				best = i;
				best_len = j - i;
			}
			if (j > i)
				i = j - 1;
		}
		for (int i = 0; i < 8; i++) {
			if (i == best) {
				len += (size_t)snprintf(host + len, sizeof host - len, "::");
				i += best_len - 1;
				continue;
			}
			len += (size_t)snprintf(host + len, sizeof host - len, "%s%x",
			    i > 0 && i != best + best_len ? ":" : "", g[i]);
		}
	} else {
		uint32_t a = (uint32_t)n->addr;

		snprintf(host, sizeof host, "%u.%u.%u.%u", a >> 24, a >> 16 & 255, a >> 8 & 255,
		    a & 255);
	}
	snprintf(out, size, "%s/%d", host, n->bits);
}

/* Whether a and b overlap (of CIDRs: one holds the other). */
static int
ipnet_overlap(const struct ipnet *a, const struct ipnet *b)
{
	int shorter = a->bits < b->bits ? a->bits : b->bits;
	u128 m;

	if (a->v6 != b->v6)
		return 0;
	m = prefix_mask(shorter, width(a));
	return (a->addr & m) == (b->addr & m);
}

/* --- the sets of blocks ---------------------------------------------------------------- */

int
cidrset_init(struct cidrset *s, const struct ipnet *cluster, int node_bits, char **error)
{
	int diff = node_bits - cluster->bits;

	memset(s, 0, sizeof *s);
	if (node_bits > width(cluster))
		return error_set(error, "the node CIDR mask size %d is longer than an %s address",
		    node_bits, cluster->v6 ? "IPv6" : "IPv4");
	if (diff < 0)
		return error_set(error, "Invalid --cluster-cidr, mask size of cluster CIDR must "
		    "be less than or equal to --node-cidr-mask-size configured for CIDR family");
	if (cluster->v6 && diff > 16)
		return error_set(error, "New CIDR set failed; the node CIDR size is too big");
	s->cluster = *cluster;
	s->node_bits = node_bits;
	s->max = (uint64_t)1 << diff;
	s->npages = (size_t)((s->max + (1u << PAGE_BITS) - 1) >> PAGE_BITS);
	s->pages = xcalloc(s->npages, sizeof *s->pages);
	ipnet_format(cluster, s->label, sizeof s->label);
	return 0;
}

void
cidrset_free(struct cidrset *s)
{
	for (size_t i = 0; i < s->npages; i++)
		free(s->pages[i]);
	free(s->pages);
	memset(s, 0, sizeof *s);
}

int
cidrset_used(const struct cidrset *s, uint64_t i)
{
	const uint64_t *page = s->pages[i >> PAGE_BITS];
	uint64_t bit = i & ((1u << PAGE_BITS) - 1);

	return page != NULL && (page[bit / 64] >> (bit % 64) & 1);
}

/* Sets block i taken (on) or free; returns whether that changed it. */
static int
cidrset_set(struct cidrset *s, uint64_t i, int on)
{
	uint64_t **page = &s->pages[i >> PAGE_BITS];
	uint64_t bit = i & ((1u << PAGE_BITS) - 1), m = (uint64_t)1 << (bit % 64);

	if (*page == NULL) {
		if (!on)
			return 0;
		*page = xcalloc(PAGE_WORDS, sizeof **page);
	}
	if ((((*page)[bit / 64] & m) != 0) == (on != 0))
		return 0;
	(*page)[bit / 64] ^= m;
	return 1;
}

void
cidrset_block(const struct cidrset *s, uint64_t i, struct ipnet *out)
{
	*out = s->cluster;
	out->addr |= (u128)i << (width(&s->cluster) - s->node_bits);
	out->bits = s->node_bits;
}

int
cidrset_allocate_next(struct cidrset *s, struct ipnet *out)
{
	uint64_t candidate = s->next;

	if (s->allocated == s->max)
		return -1;
	for (uint64_t i = 0; i < s->max && cidrset_used(s, candidate); i++)
		candidate = (candidate + 1) % s->max;
	s->next = (candidate + 1) % s->max;
	cidrset_set(s, candidate, 1);
	s->allocated++;
	cidrset_block(s, candidate, out);
	return 0;
}

/* The index of the block that holds address addr (within the cluster CIDR). */
static uint64_t
block_index(const struct cidrset *s, u128 addr)
{
	return (uint64_t)((s->cluster.addr ^ addr) >> (width(&s->cluster) - s->node_bits));
}

/* The first and last block n overlaps; -1 with *error when it lies outside the cluster
 * CIDR. */
static int
cidrset_range(const struct cidrset *s, const struct ipnet *n, uint64_t *begin,
    uint64_t *end, char **error)
{
	int w = width(&s->cluster);

	if (!ipnet_overlap(&s->cluster, n)) {
		char text[64];

		ipnet_format(n, text, sizeof text);
		return error_set(error, "cidr %s is out the range of cluster cidr %s", text,
		    s->label);
	}
	*begin = 0;
	*end = s->max - 1;
	if (s->cluster.bits < n->bits) {
		u128 node_mask = prefix_mask(s->node_bits, w);
		u128 last = n->addr | ~prefix_mask(n->bits, w);

		if (w == 32)
			last &= 0xffffffffu;
		*begin = block_index(s, n->addr & node_mask);
		*end = block_index(s, last & node_mask);
	}
	return 0;
}

int
cidrset_occupy(struct cidrset *s, const struct ipnet *n, char **error)
{
	uint64_t begin, end;

	if (cidrset_range(s, n, &begin, &end, error) != 0)
		return -1;
	for (uint64_t i = begin; i <= end; i++)
		s->allocated += (uint64_t)cidrset_set(s, i, 1);
	return 0;
}

int
cidrset_release(struct cidrset *s, const struct ipnet *n, char **error)
{
	uint64_t begin, end;

	if (cidrset_range(s, n, &begin, &end, error) != 0)
		return -1;
	for (uint64_t i = begin; i <= end; i++)
		s->allocated -= (uint64_t)cidrset_set(s, i, 0);
	return 0;
}

/* --- the configuration ----------------------------------------------------------------- */

/* The text of list's entries, as Go's strings.Split of the trimmed list at every comma
 * (empty entries kept, each as it is); *n entries (malloc'd array of malloc'd strings). */
static char **
split_list(const char *list, int *n)
{
	const char *p = list, *end = list + strlen(list), *comma;
	char **items = NULL;

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
	    end[-1] == '\r'))
		end--;
	*n = 0;
	for (;;) {
		comma = memchr(p, ',', (size_t)(end - p));
		items = xrealloc(items, (size_t)(*n + 1) * sizeof *items);
		items[(*n)++] = xstrndup(p, (size_t)((comma != NULL ? comma : end) - p));
		if (comma == NULL)
			return items;
		p = comma + 1;
	}
}

static void
split_free(char **items, int n)
{
	for (int i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

int
nodeipam_config_parse(const char *cluster, const char *services, long long mask,
    long long mask4, long long mask6, struct nodeipam_config *out, char **error)
{
	int n, v4 = 0, v6 = 0, rc = 0;
	char **items;

	memset(out, 0, sizeof *out);
	/* kube would say "invalid CIDR[0]: <nil> (invalid CIDR address: )": the message of
	 * its own that it never reaches says more. */
	if (strspn(cluster, " \t\n\r") == strlen(cluster))
		return error_set(error,
		    "Must specify --cluster-cidr if --allocate-node-cidrs is set");
	/* Every entry must parse; the dual-stack test looks at them all. */
	items = split_list(cluster, &n);
	for (int i = 0; i < n && rc == 0; i++) {
		struct ipnet net;

		if (ipnet_parse(items[i], &net) != 0) {
			rc = error_set(error, "invalid CIDR[%d]: <nil> (invalid CIDR address: %s)",
			    i, items[i]);
			break;
		}
		if (i < 2)
			out->cluster[i] = net;
		v4 |= !net.v6;
		v6 |= net.v6;
	}
	split_free(items, n);
	if (rc != 0)
		return -1;
	if (n > 1 && !(v4 && v6))
		return error_set(error, "len of ClusterCIDRs==%d and they are not configured as "
		    "dual stack (at least one from each IPFamily", n);
	if (n > 2)
		return error_set(error, "length of clusterCIDRs is:%d more than max allowed of 2",
		    n);
	out->ncluster = n;

	/* The first two entries are the primary and secondary service ranges, each left
	 * out with a warning when it does not parse; more than two is an error. */
	items = split_list(services, &n);
	if (n > 2) {
		split_free(items, n);
		return error_set(error,
		    "--service-cluster-ip-range can not contain more than two entries");
	}
	for (int i = 0; i < n; i++) {
		if (strspn(items[i], " \t\n\r") == strlen(items[i]))
			continue;
		if (ipnet_parse(items[i], &out->service[out->nservice]) != 0)
			log_warning("nodeipam: unsuccessful parsing of service CIDR \"%s\": it is "
			    "not left out of the cluster CIDRs", items[i]);
		else
			out->nservice++;
	}
	split_free(items, n);
	if (out->nservice == 2 && out->service[0].v6 == out->service[1].v6)
		return error_set(error, "serviceCIDR and secondaryServiceCIDR are not dualstack "
		    "(from different IPfamiles)");

	if (out->ncluster > 1) {
		if (mask != 0)
			return error_set(error, "usage of --node-cidr-mask-size is not allowed "
			    "with dual-stack clusters");
	} else if (mask != 0) {
		if (mask4 != 0 || mask6 != 0)
			return error_set(error, "usage of --node-cidr-mask-size-ipv4 and "
			    "--node-cidr-mask-size-ipv6 is not allowed if --node-cidr-mask-size "
			    "is set. For dual-stack clusters please unset it and use IPFamily "
			    "specific flags");
		mask4 = mask6 = mask;
	} else if (mask4 != 0 && out->cluster[0].v6) {
		return error_set(error, "usage of --node-cidr-mask-size-ipv4 is not allowed for "
		    "a single-stack IPv6 cluster");
	} else if (mask6 != 0 && !out->cluster[0].v6) {
		return error_set(error, "usage of --node-cidr-mask-size-ipv6 is not allowed for "
		    "a single-stack IPv4 cluster");
	}
	for (int i = 0; i < out->ncluster; i++) {
		long long m = out->cluster[i].v6 ? (mask6 != 0 ? mask6 : 64) :
		    (mask4 != 0 ? mask4 : 24);

		out->node_bits[i] = (int)m;
		if (m > width(&out->cluster[i]))
			return error_set(error, "the node CIDR mask size %lld is longer than an "
			    "%s address", m, out->cluster[i].v6 ? "IPv6" : "IPv4");
		if (out->cluster[i].bits > m)
			return error_set(error, "Controller: Invalid --cluster-cidr, mask size of "
			    "cluster CIDR must be less than or equal to --node-cidr-mask-size "
			    "configured for CIDR family");
	}
	return 0;
}

/* --- the controller's state ------------------------------------------------------------ */

enum {
	STMT_NODE,
	STMT_ALL,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const nodeipam_sql[STMT_COUNT] = {
	/* Node ?1: its uid, podCIDRs (JSON array or NULL), whether it is being deleted, and
	 * its body. */
	[STMT_NODE] =
	    ("SELECT uid, json_extract(body, '$.spec.podCIDRs'),"
	    " json_extract(body, '$.metadata.deletionTimestamp') IS NOT NULL, body"
	    " FROM cache_objects WHERE resource = 'nodes' AND namespace = '' AND name = ?1"),
	/* Every node with podCIDRs, in name order (kube's list order). */
	[STMT_ALL] =
	    ("SELECT name, json_extract(body, '$.spec.podCIDRs') FROM cache_objects"
	    " WHERE resource = 'nodes' AND namespace = ''"
	    " AND json_array_length(body, '$.spec.podCIDRs') > 0 ORDER BY name"),
	[STMT_KEYS] =
	    ("SELECT name FROM cache_objects WHERE resource = 'nodes' AND namespace = ''"
	    " ORDER BY name"),
};

/* Blocks handed to a node whose patch the cache has not shown yet. */
struct nodeipam_pending {
	char *node;
	struct ipnet cidrs[2];
};

struct nodeipam_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *nodes;
	int on;				/* --allocate-node-cidrs */
	int primed;			/* the cached nodes' blocks are taken */
	struct nodeipam_config config;
	struct cidrset sets[2];
	struct nodeipam_pending *pending;
	int npending;
	/* kube's node_ipam_controller_cidrset_* by cluster CIDR; NULL without a registry. */
	struct metrics_family *allocations, *releases, *max, *usage;
};

static void
update_metrics(struct nodeipam_state *st, int i, double allocated, double released)
{
	const char *labels[] = { st->sets[i].label, NULL };

	if (st->allocations == NULL)
		return;
	metrics_counter_add(metrics_series_get(st->allocations, labels), allocated);
	metrics_counter_add(metrics_series_get(st->releases, labels), released);
	metrics_gauge_set(metrics_series_get(st->usage, labels),
	    (double)st->sets[i].allocated / (double)st->sets[i].max);
}

/* Takes (on) or gives back the blocks of cidrs (JSON array of strings) of node; what
 * fails is logged, not fatal. Returns -1 when one does not parse or fit. */
static int
node_cidrs(struct nodeipam_state *st, const char *node, const cJSON *cidrs, int on)
{
	const cJSON *item;
	int idx = 0, rc = 0;

	cJSON_ArrayForEach(item, cidrs) {
		struct ipnet net;
		uint64_t before;
		char *why = NULL;

		if (!cJSON_IsString(item) || ipnet_parse(item->valuestring, &net) != 0) {
			log_warning("nodeipam: node %s: podCIDRs[%d] is not a CIDR", node, idx);
			rc = -1;
		} else if (idx >= st->config.ncluster) {
			log_warning("nodeipam: node %s has an allocated cidr %s at index %d that "
			    "does not exist in cluster cidrs configuration", node,
			    item->valuestring, idx);
			rc = -1;
		} else {
			before = st->sets[idx].allocated;
			if ((on ? cidrset_occupy : cidrset_release)(&st->sets[idx], &net,
			    &why) != 0) {
				log_warning("nodeipam: node %s: %s %s: %s", node,
				    on ? "taking" : "giving back", item->valuestring, why);
				free(why);
				rc = -1;
			} else if (st->sets[idx].allocated != before) {
				double d = on ? (double)(st->sets[idx].allocated - before) :
				    (double)(before - st->sets[idx].allocated);

				update_metrics(st, idx, on ? d : 0, on ? 0 : d);
			}
		}
		idx++;
	}
	return rc;
}

static struct nodeipam_pending *
pending_find(struct nodeipam_state *st, const char *node)
{
	for (int i = 0; i < st->npending; i++) {
		if (strcmp(st->pending[i].node, node) == 0)
			return &st->pending[i];
	}
	return NULL;
}

/* Forgets node's pending blocks; gives them back too when release is set. */
static void
pending_drop(struct nodeipam_state *st, const char *node, int release)
{
	struct nodeipam_pending *p = pending_find(st, node);

	if (p == NULL)
		return;
	for (int i = 0; release && i < st->config.ncluster; i++) {
		uint64_t before = st->sets[i].allocated;

		/* Counted only when it was still taken (the handler of a deleted node that
		 * showed these blocks gave them back already). */
		if (cidrset_release(&st->sets[i], &p->cidrs[i], NULL) == 0 &&
		    st->sets[i].allocated < before)
			update_metrics(st, i, 0, 1);
	}
	free(p->node);
	*p = st->pending[--st->npending];
}

/* Takes the blocks of every cached node that has some, once, before the first block is
 * handed out (kube does it from its list of the nodes as it starts). */
static int
prime(struct nodeipam_state *st, sqlite3 *db, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_ALL]);
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *cidrs = cJSON_Parse((const char *)sqlite3_column_text(stmt, 1));

		node_cidrs(st, (const char *)sqlite3_column_text(stmt, 0), cidrs, 1);
		cJSON_Delete(cidrs);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "nodeipam: reading the nodes: %s", sqlite3_errmsg(db));
	st->primed = 1;
	return 0;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
nodeipam_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct nodeipam_state *st = c->state;
	sqlite3 *db = store_db(c->store);
	sqlite3_stmt *stmt;
	struct nodeipam_pending *p;
	struct ipnet got[2];
	cJSON *cidrs = NULL, *spec, *list;
	struct action *a;
	struct buf why;
	int rc, deleting = 0;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->nodes;
	if (!st->on)
		return 0;
	if (!st->primed && prime(st, db, error) != 0)
		return -1;
	stmt = controller_stmt(st->stmt[STMT_NODE]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		if (sqlite3_column_type(stmt, 1) == SQLITE_TEXT)
			cidrs = cJSON_Parse((const char *)sqlite3_column_text(stmt, 1));
		deleting = sqlite3_column_int(stmt, 2);
		out->owner = controller_column_json(stmt, 3);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		cJSON_Delete(cidrs);
		return error_set(error, "nodeipam: reading node %s: %s", key, sqlite3_errmsg(db));
	}
	if (rc == SQLITE_DONE || deleting) {
		out->forget_expectations = rc == SQLITE_DONE;
		cJSON_Delete(cidrs);
		return 0;
	}
	if (cJSON_GetArraySize(cidrs) > 0) {
		/* Its blocks are its own: taken, and any handed out before given back unless
		 * they are the ones it shows. */
		p = pending_find(st, key);
		if (p != NULL) {
			int same = cJSON_GetArraySize(cidrs) == st->config.ncluster;

			for (int i = 0; same && i < st->config.ncluster; i++) {
				char text[64];

				ipnet_format(&p->cidrs[i], text, sizeof text);
				const char *shown = cJSON_GetStringValue(
				    cJSON_GetArrayItem(cidrs, i));

				same = shown != NULL && strcmp(shown, text) == 0;
			}
			pending_drop(st, key, !same);
		}
		if (node_cidrs(st, key, cidrs, 1) != 0)
			out->failed = 1;
		cJSON_Delete(cidrs);
		return 0;
	}
	cJSON_Delete(cidrs);
	p = pending_find(st, key);
	if (p != NULL) {
		memcpy(got, p->cidrs, sizeof got);
	} else {
		for (int i = 0; i < st->config.ncluster; i++) {
			if (cidrset_allocate_next(&st->sets[i], &got[i]) == 0) {
				update_metrics(st, i, 1, 0);
				continue;
			}
			/* kube keeps the blocks of the sets before; they go back here. */
			while (--i >= 0) {
				cidrset_release(&st->sets[i], &got[i], NULL);
				update_metrics(st, i, 0, 1);
			}
			sync_result_add_event(out, "Normal", "CIDRNotAvailable",
			    xasprintf("Node %s status is now: CIDRNotAvailable", key));
			out->failed = 1;
			return 0;
		}
		st->pending = xrealloc(st->pending, (size_t)(st->npending + 1) *
		    sizeof *st->pending);
		p = &st->pending[st->npending++];
		p->node = xstrdup(key);
		memcpy(p->cidrs, got, sizeof got);
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_PATCH;
	a->verb = "allocate-cidr";
	a->resource = st->nodes;
	a->namespace = xstrdup("");
	a->name = xstrdup(key);
	a->uid = xstrdup(out->owner_uid);
	a->body = cJSON_CreateObject();
	spec = cJSON_AddObjectToObject(a->body, "spec");
	list = cJSON_CreateArray();
	buf_init(&why);
	buf_append_str(&why, "no podCIDRs: ");
	for (int i = 0; i < st->config.ncluster; i++) {
		char text[64];

		ipnet_format(&got[i], text, sizeof text);
		if (i == 0)
			cJSON_AddStringToObject(spec, "podCIDR", text);
		cJSON_AddItemToArray(list, cJSON_CreateString(text));
		buf_printf(&why, "%s%s of %s", i > 0 ? ", " : "", text, st->sets[i].label);
	}
	cJSON_AddItemToObject(spec, "podCIDRs", list);
	a->reason = buf_detach(&why);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
nodeipam_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct nodeipam_state *st = c->state;
	const char *name = json_string(ev->object, "metadata.name");
	const cJSON *cidrs = json_path(ev->object, "spec.podCIDRs");

	(void)now;
	if (!st->on || *name == '\0' || strcmp(ev->resource->name, "nodes") != 0)
		return;
	if (ev->type == INFORMER_DELETED) {
		/* Before the first sync, the blocks were never taken. */
		if (st->primed)
			node_cidrs(st, name, cidrs, 0);
		pending_drop(st, name, 1);
		return;
	}
	/* A node that comes with blocks (given by someone else) holds them from now on. */
	if (st->primed && cJSON_GetArraySize(cidrs) > 0)
		node_cidrs(st, name, cidrs, 1);
	q->add(name, q->arg);
}

static int
nodeipam_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct nodeipam_state *st = c->state;

	if (!st->on)
		return 0;
	return controller_list_keys_of(st->stmt[STMT_KEYS], "nodeipam", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
register_metrics(struct nodeipam_state *st, struct metrics_registry *registry, char **error)
{
	static const char *const labels[] = { "clusterCIDR", NULL };
	static const struct metrics_spec specs[] = {
		{ METRICS_COUNTER, "node_ipam_controller_cidrset_cidrs_allocations_total",
		    "Counter measuring total number of CIDR allocations.", labels, NULL, 0 },
		{ METRICS_COUNTER, "node_ipam_controller_cidrset_cidrs_releases_total",
		    "Counter measuring total number of CIDR releases.", labels, NULL, 0 },
		{ METRICS_GAUGE, "node_ipam_controller_cirdset_max_cidrs",
		    "Maximum number of CIDRs that can be allocated.", labels, NULL, 0 },
		{ METRICS_GAUGE, "node_ipam_controller_cidrset_usage_cidrs",
		    "Gauge measuring percentage of allocated CIDRs.", labels, NULL, 0 },
	};
	struct metrics_family **families[] = { &st->allocations, &st->releases, &st->max,
	    &st->usage };

	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		if ((*families[i] = metrics_family_register(registry, &specs[i], error)) == NULL)
			return -1;
	}
	for (int i = 0; i < st->config.ncluster; i++) {
		const char *values[] = { st->sets[i].label, NULL };

		metrics_gauge_set(metrics_series_get(st->max, values), (double)st->sets[i].max);
		update_metrics(st, i, 0, 0);
	}
	return 0;
}

static int
nodeipam_init(struct controller *c, char **error)
{
	struct nodeipam_state *st = xcalloc(1, sizeof *st);
	const char *type = controller_flag_text(c, "cidr-allocator-type");
	char *why = NULL;

	c->state = st;
	st->nodes = resource_find("nodes");
	if (st->nodes == NULL)
		return error_set(error, "nodeipam: nodes is not a known resource");
	if (store_prepare_statements(store_db(c->store), nodeipam_sql, STMT_COUNT, st->stmt,
	    "nodeipam", error) != 0)
		return -1;
	st->on = controller_flag_bool(c, "allocate-node-cidrs");
	if (!st->on) {
		/* Said by the daemon only: plan and replay print nothing but their results. */
		if (c->config->metrics != NULL)
			log_info("nodeipam: --allocate-node-cidrs is false: no node is given pod "
			    "CIDRs");
		return 0;
	}
	if (strcmp(type, "CloudAllocator") == 0)
		return error_set(error, "nodeipam: --cidr-allocator-type is set to "
		    "'CloudAllocator' but cloud provider is not configured");
	if (strcmp(type, "RangeAllocator") != 0)
		return error_set(error, "nodeipam: invalid CIDR allocator type: %s", type);
	if (nodeipam_config_parse(controller_flag_text(c, "cluster-cidr"),
	    controller_flag_text(c, "service-cluster-ip-range"),
	    controller_flag_int(c, "node-cidr-mask-size"),
	    controller_flag_int(c, "node-cidr-mask-size-ipv4"),
	    controller_flag_int(c, "node-cidr-mask-size-ipv6"), &st->config, &why) != 0 ||
	    (st->config.ncluster >= 1 && cidrset_init(&st->sets[0], &st->config.cluster[0],
	    st->config.node_bits[0], &why) != 0) ||
	    (st->config.ncluster == 2 && cidrset_init(&st->sets[1], &st->config.cluster[1],
	    st->config.node_bits[1], &why) != 0)) {
		error_set(error, "nodeipam: %s", why);
		free(why);
		return -1;
	}
	/* The service ranges are no node's (kube filters out each that overlaps). */
	for (int j = 0; j < st->config.nservice; j++) {
		for (int i = 0; i < st->config.ncluster; i++) {
			if (ipnet_overlap(&st->sets[i].cluster, &st->config.service[j]))
				cidrset_occupy(&st->sets[i], &st->config.service[j], NULL);
		}
	}
	if (c->config->metrics != NULL &&
	    register_metrics(st, c->config->metrics, error) != 0)
		return -1;
	return 0;
}

static void
nodeipam_fini(struct controller *c)
{
	struct nodeipam_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	for (int i = 0; i < 2; i++) {
		if (st->sets[i].pages != NULL)
			cidrset_free(&st->sets[i]);
	}
	for (int i = 0; i < st->npending; i++)
		free(st->pending[i].node);
	free(st->pending);
	free(st);
	c->state = NULL;
}

static const char *const nodeipam_resources[] = { "nodes", NULL };

static const struct controller_flag nodeipam_flags[] = {
	{ "allocate-node-cidrs", CONTROLLER_FLAG_BOOL, "false", 0, 0,
	    "give each node pod CIDRs (spec.podCIDRs) from --cluster-cidr" },
	{ "cluster-cidr", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "the pods' CIDR range, or an IPv4 and an IPv6 one separated by a comma "
	    "(dual-stack); used with --allocate-node-cidrs" },
	{ "service-cluster-ip-range", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "the Services' CIDR range (or two, one per family): no node gets a block of it; "
	    "used with --allocate-node-cidrs" },
	{ "node-cidr-mask-size", CONTROLLER_FLAG_INT, "0", 0, 128,
	    "the prefix length of each node's block in a single-stack cluster (0: 24 for "
	    "IPv4, 64 for IPv6)" },
	{ "node-cidr-mask-size-ipv4", CONTROLLER_FLAG_INT, "0", 0, 128,
	    "the prefix length of each node's IPv4 block (0: 24)" },
	{ "node-cidr-mask-size-ipv6", CONTROLLER_FLAG_INT, "0", 0, 128,
	    "the prefix length of each node's IPv6 block (0: 64)" },
	{ "cidr-allocator-type", CONTROLLER_FLAG_STRING, "RangeAllocator", 0, 0,
	    "the allocator: RangeAllocator is the one there is" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type nodeipam_controller_type = {
	.name = "nodeipam",
	.resources = nodeipam_resources,
	.default_workers = 30,		/* kube's range allocator runs 30 */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = nodeipam_flags,
	.event_component = "cidrAllocator",
	.client_name = "node-controller",
	.recovery = NULL,
	.init = nodeipam_init,
	.fini = nodeipam_fini,
	.handle_event = nodeipam_handle_event,
	.list_keys = nodeipam_list_keys,
	.sync = nodeipam_sync,
};
