/*
 * kubeevents.c - Kubernetes Events (core/v1) about the objects controllers act on.
 *
 * A controller says "SuccessfulCreate: Created pod: web-7d9f-x2x4k" about a ReplicaSet;
 * this file turns that into an Event in the object's namespace (a cluster-scoped object's
 * events go to "default"), named "<object name>.<hex of the time in nanoseconds>", with
 * the source, reportingComponent and reportingInstance kube-controller-manager's
 * recorders give theirs, so `kubectl describe` shows both alike.
 *
 * Between the controller and the apiserver sits the correlator, a documented subset of
 * client-go's: three caches, each a least-recently-used table of at most 4096 entries,
 * keyed by strings built from the event (every field length-prefixed, so no two
 * different events share a key).
 *
 * - Counting. An event identical to one recorded less than 10 minutes before (same
 *   source, involved object including fieldPath, type, reason and message) is not a new
 *   Event: the existing one is PATCHed (a strategic merge patch of count, lastTimestamp
 *   and message). client-go counts identical events for as long as its cache remembers
 *   them; the 10-minute window keeps us from patching Events the apiserver has already
 *   expired (--event-ttl, one hour by default). If a PATCH still finds the Event gone,
 *   it is created again under the same name with the count so far, once.
 * - Combining. When the events of one object, type and reason carry 10 distinct messages
 *   within 10 minutes of each other, further ones become one Event whose message is
 *   "(combined from similar events): " and the latest message, itself counted as above.
 *   The distinct messages are remembered as 64-bit hashes, the oldest forgotten first.
 * - The spam filter. Each source and involved object has a token bucket of 25 events,
 *   refilled by one every 5 minutes; a CREATE or PATCH that finds it empty is dropped,
 *   though its occurrence still counts (the next Event sent carries the count).
 * - One request per Event at a time. While an Event's CREATE or PATCH is in flight,
 *   further occurrences are only counted ("folded"); when the request completes, one
 *   PATCH carries them all. So a PATCH never overtakes the CREATE it depends on, however
 *   the HTTP/2 streams are scheduled.
 *
 * Events are best-effort: a request that fails is logged at -v 2 and dropped, never
 * retried (the next occurrence of the same event tries again); at most 1000 requests are
 * in flight, further events are dropped; nothing waits. The correlator is pure (time is
 * passed in) so tests drive it without a network; the recorder's clock is replaceable.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "apistatus.h"
#include "kubeevents.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "restops.h"
#include "util.h"

#define EVENT_CACHE_SIZE 4096
#define EVENT_SPAM_BURST 25
#define EVENT_SPAM_REFILL_SECONDS 300
#define EVENT_AGGREGATE_MAX_EVENTS 10
#define EVENT_WINDOW_SECONDS 600
/* Requests in flight at most; events beyond are dropped. */
#define KUBEEVENTS_MAX_IN_FLIGHT 1000
/* The longest name the apiserver takes for an Event (a DNS subdomain). */
#define EVENT_NAME_MAX 253
#define EVENT_COMBINED_PREFIX "(combined from similar events): "

#define NANOS_PER_SECOND INT64_C(1000000000)

/* --- a least-recently-used table of strings ------------------------------------------- */

/* The head of every cached record: its key, its hash chain and its place in the order. */
struct lru_node {
	char *key;
	uint64_t hash;
	struct lru_node *next_in_bucket;
	TAILQ_ENTRY(lru_node) order;
};

TAILQ_HEAD(lru_order, lru_node);

struct lru {
	struct lru_node **buckets;
	size_t nbuckets;		/* a power of two, at least twice count: it grows
					   with the table, up to twice max */
	size_t count;
	size_t max;
	struct lru_order order;		/* the most recently used first */
	void (*free_record)(struct lru_node *node);
};

/* Returns the FNV-1a hash of len bytes. */
static uint64_t
hash_bytes(const char *s, size_t len)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* Sets up an empty table of at most max records, freed with free_record. Its buckets
 * grow with it: a manager with a few events keeps a few hundred bytes, not one table of
 * the largest size per correlator. */
static void
lru_init(struct lru *l, size_t max, void (*free_record)(struct lru_node *))
{
	l->nbuckets = 16;
	l->buckets = xcalloc(l->nbuckets, sizeof *l->buckets);
	l->count = 0;
	l->max = max;
	TAILQ_INIT(&l->order);
	l->free_record = free_record;
}

/* Returns the record with key, made the most recently used, or NULL. */
static struct lru_node *
lru_get(struct lru *l, const char *key)
{
	uint64_t h = hash_bytes(key, strlen(key));
	struct lru_node *n;

	for (n = l->buckets[h & (l->nbuckets - 1)]; n != NULL; n = n->next_in_bucket) {
		if (n->hash == h && strcmp(n->key, key) == 0) {
			TAILQ_REMOVE(&l->order, n, order);
			TAILQ_INSERT_HEAD(&l->order, n, order);
			return n;
		}
	}
	return NULL;
}

/* Unlinks and frees a record. */
static void
lru_remove(struct lru *l, struct lru_node *node)
{
	struct lru_node **p = &l->buckets[node->hash & (l->nbuckets - 1)];

	while (*p != node)
		p = &(*p)->next_in_bucket;
	*p = node->next_in_bucket;
	TAILQ_REMOVE(&l->order, node, order);
	l->count--;
	free(node->key);
	l->free_record(node);
}

/* Doubles the buckets, moving every record to its new chain. */
static void
lru_grow(struct lru *l)
{
	size_t n = l->nbuckets * 2;
	struct lru_node **buckets = xcalloc(n, sizeof *buckets), *node;

	TAILQ_FOREACH(node, &l->order, order) {
		node->next_in_bucket = buckets[node->hash & (n - 1)];
		buckets[node->hash & (n - 1)] = node;
	}
	free(l->buckets);
	l->buckets = buckets;
	l->nbuckets = n;
}

/* Adds a record under key (not yet in the table), evicting the least recently used one
 * when the table is full. */
static void
lru_add(struct lru *l, struct lru_node *node, const char *key)
{
	size_t b;

	if (l->count == l->max)
		lru_remove(l, TAILQ_LAST(&l->order, lru_order));
	if (2 * (l->count + 1) > l->nbuckets)
		lru_grow(l);
	node->key = xstrdup(key);
	node->hash = hash_bytes(key, strlen(key));
	b = node->hash & (l->nbuckets - 1);
	node->next_in_bucket = l->buckets[b];
	l->buckets[b] = node;
	TAILQ_INSERT_HEAD(&l->order, node, order);
	l->count++;
}

/* Frees every record and the table. */
static void
lru_clear(struct lru *l)
{
	struct lru_node *n;

	while ((n = TAILQ_FIRST(&l->order)) != NULL)
		lru_remove(l, n);
	free(l->buckets);
	l->buckets = NULL;
}

/* --- the correlator ------------------------------------------------------------------- */

/* An Event sent or to be sent: what counting needs to know about it. */
struct event_log {
	struct lru_node node;		/* first: the record is its node */
	struct event_info info;		/* owned copies of every string */
	char *strings[12];		/* the copies, freed with the record */
	char *name;
	char *ns;
	int count;
	int64_t first_ns;
	int64_t last_ns;
	uint64_t serial;		/* tells this record from a later one under the key */
	int created;			/* the apiserver has it (a CREATE succeeded) */
	int busy;			/* a CREATE or PATCH is in flight */
	int dirty;			/* occurrences were folded while busy */
};

/* The distinct messages of one object, type and reason, recently. */
struct event_aggregate {
	struct lru_node node;
	int64_t last_ns;
	int n;
	uint64_t messages[];		/* hashes, the oldest first */
};

/* One source and object's token bucket, kept in nanoseconds of refill time so that the
 * arithmetic is exact: a token is spam_refill_seconds worth of credit. */
struct event_spam {
	struct lru_node node;
	int64_t credit_ns;
	int64_t refilled_ns;
};

struct event_correlator {
	struct event_correlator_options options;
	struct lru logs;
	struct lru aggregates;
	struct lru spam;
	int64_t last_suffix;
	uint64_t serial;
	char *combined_message;		/* the last combined message built */
};

/* Frees an event_log record. */
static void
event_log_free(struct lru_node *node)
{
	struct event_log *log = (struct event_log *)node;

	for (size_t i = 0; i < sizeof log->strings / sizeof log->strings[0]; i++)
		free(log->strings[i]);
	free(log->name);
	free(log->ns);
	free(log);
}

/* Frees an aggregate or spam record. */
static void
event_record_free(struct lru_node *node)
{
	free(node);
}

struct event_correlator *
event_correlator_new(const struct event_correlator_options *options)
{
	struct event_correlator *c = xcalloc(1, sizeof *c);

	if (options != NULL)
		c->options = *options;
	if (c->options.cache_size <= 0)
		c->options.cache_size = EVENT_CACHE_SIZE;
	if (c->options.spam_burst <= 0)
		c->options.spam_burst = EVENT_SPAM_BURST;
	if (c->options.spam_refill_seconds <= 0)
		c->options.spam_refill_seconds = EVENT_SPAM_REFILL_SECONDS;
	if (c->options.aggregate_max_events <= 0)
		c->options.aggregate_max_events = EVENT_AGGREGATE_MAX_EVENTS;
	if (c->options.window_seconds <= 0)
		c->options.window_seconds = EVENT_WINDOW_SECONDS;
	lru_init(&c->logs, (size_t)c->options.cache_size, event_log_free);
	lru_init(&c->aggregates, (size_t)c->options.cache_size, event_record_free);
	lru_init(&c->spam, (size_t)c->options.cache_size, event_record_free);
	return c;
}

void
event_correlator_free(struct event_correlator *c)
{
	if (c == NULL)
		return;
	lru_clear(&c->logs);
	lru_clear(&c->aggregates);
	lru_clear(&c->spam);
	free(c->combined_message);
	free(c);
}

/* Appends one key field, length-prefixed. */
static void
key_add(struct buf *b, const char *s)
{
	if (s == NULL)
		s = "";
	buf_printf(b, "%zu:", strlen(s));
	buf_append_str(b, s);
}

/* Appends the fields that name the source and the involved object (not fieldPath). */
static void
key_add_source_object(struct buf *b, const struct event_info *ev)
{
	key_add(b, ev->component);
	key_add(b, ev->host);
	key_add(b, ev->object.kind);
	key_add(b, ev->object.ns);
	key_add(b, ev->object.name);
	key_add(b, ev->object.uid);
	key_add(b, ev->object.api_version);
}

/* Returns the key that identical events share: everything but the timestamps. */
static char *
event_key(const struct event_info *ev, const char *message)
{
	struct buf b;

	buf_init(&b);
	buf_append_str(&b, "E");
	key_add_source_object(&b, ev);
	key_add(&b, ev->object.field_path);
	key_add(&b, ev->type);
	key_add(&b, ev->reason);
	key_add(&b, message);
	return buf_detach(&b);
}

/* Returns the key of events that differ only in their message (and fieldPath). */
static char *
event_aggregate_key(const struct event_info *ev)
{
	struct buf b;

	buf_init(&b);
	buf_append_str(&b, "A");
	key_add_source_object(&b, ev);
	key_add(&b, ev->type);
	key_add(&b, ev->reason);
	return buf_detach(&b);
}

/* Returns the spam filter's key: the source and the involved object. */
static char *
event_spam_key(const struct event_info *ev)
{
	struct buf b;

	buf_init(&b);
	buf_append_str(&b, "S");
	key_add_source_object(&b, ev);
	return buf_detach(&b);
}

/* Notes ev's message among its aggregate's; returns the key and message it is to be
 * counted under: its own, or the combined event's once there were too many messages. */
static char *
event_aggregate(struct event_correlator *c, const struct event_info *ev, int64_t now_ns,
    const char **message)
{
	int max = c->options.aggregate_max_events;
	int64_t window = (int64_t)c->options.window_seconds * NANOS_PER_SECOND;
	char *akey = event_aggregate_key(ev);
	struct event_aggregate *a = (struct event_aggregate *)lru_get(&c->aggregates, akey);
	uint64_t h = hash_bytes(ev->message, strlen(ev->message));
	int i;

	if (a != NULL && now_ns - a->last_ns >= window)
		a->n = 0;
	if (a == NULL) {
		a = xcalloc(1, sizeof *a + (size_t)max * sizeof a->messages[0]);
		lru_add(&c->aggregates, &a->node, akey);
	}
	a->last_ns = now_ns;
	for (i = 0; i < a->n && a->messages[i] != h; i++)
		;
	if (i == a->n)
		a->messages[a->n++] = h;
	if (a->n < max) {
		free(akey);
		*message = ev->message;
		return event_key(ev, ev->message);
	}
	/* Too many: forget the oldest, and count this one as the combined event. */
	memmove(&a->messages[0], &a->messages[1], (size_t)(a->n - 1) * sizeof a->messages[0]);
	a->n--;
	free(c->combined_message);
	c->combined_message = xasprintf("%s%s", EVENT_COMBINED_PREFIX, ev->message);
	*message = c->combined_message;
	return akey;
}

/* Takes a token from the source and object's bucket; returns false when there is none. */
static int
event_spam_take(struct event_correlator *c, const struct event_info *ev, int64_t now_ns)
{
	char *key = event_spam_key(ev);
	struct event_spam *s = (struct event_spam *)lru_get(&c->spam, key);
	int64_t token = (int64_t)c->options.spam_refill_seconds * NANOS_PER_SECOND;
	int64_t full = (int64_t)c->options.spam_burst * token;

	if (s == NULL) {
		s = xcalloc(1, sizeof *s);
		s->credit_ns = full;
		s->refilled_ns = now_ns;
		lru_add(&c->spam, &s->node, key);
	}
	free(key);
	if (now_ns > s->refilled_ns) {
		int64_t elapsed = now_ns - s->refilled_ns;

		s->credit_ns = elapsed >= full - s->credit_ns ? full : s->credit_ns + elapsed;
		s->refilled_ns = now_ns;
	}
	if (s->credit_ns < token)
		return 0;
	s->credit_ns -= token;
	return 1;
}

/* Returns a copy of s kept by log (or NULL for NULL). */
static const char *
event_log_keep(struct event_log *log, int *n, const char *s)
{
	if (s == NULL)
		return NULL;
	return log->strings[(*n)++] = xstrdup(s);
}

/* Copies the event into log (message replaced by message). */
static void
event_log_set_info(struct event_log *log, const struct event_info *ev, const char *message)
{
	int n = 0;

	for (size_t i = 0; i < sizeof log->strings / sizeof log->strings[0]; i++) {
		free(log->strings[i]);
		log->strings[i] = NULL;
	}
	log->info.object.kind = event_log_keep(log, &n, ev->object.kind);
	log->info.object.api_version = event_log_keep(log, &n, ev->object.api_version);
	log->info.object.ns = event_log_keep(log, &n, ev->object.ns);
	log->info.object.name = event_log_keep(log, &n, ev->object.name);
	log->info.object.uid = event_log_keep(log, &n, ev->object.uid);
	log->info.object.resource_version = event_log_keep(log, &n,
	    ev->object.resource_version);
	log->info.object.field_path = event_log_keep(log, &n, ev->object.field_path);
	log->info.type = event_log_keep(log, &n, ev->type);
	log->info.reason = event_log_keep(log, &n, ev->reason);
	log->info.message = event_log_keep(log, &n, message);
	log->info.component = event_log_keep(log, &n, ev->component);
	log->info.host = event_log_keep(log, &n, ev->host);
}

/* Fills a decision to send log now. */
static void
event_decide(struct event_log *log, enum event_action action, struct event_decision *out)
{
	out->action = action;
	out->key = log->node.key;
	out->serial = log->serial;
	out->event = &log->info;
	out->name = log->name;
	out->ns = log->ns;
	out->count = log->count;
	out->first_timestamp = log->first_ns / NANOS_PER_SECOND;
	out->last_timestamp = log->last_ns / NANOS_PER_SECOND;
}

void
event_correlator_observe(struct event_correlator *c, const struct event_info *ev,
    int64_t now_ns, struct event_decision *out)
{
	int64_t window = (int64_t)c->options.window_seconds * NANOS_PER_SECOND;
	const char *message;
	char *key = event_aggregate(c, ev, now_ns, &message);
	struct event_log *log = (struct event_log *)lru_get(&c->logs, key);

	if (log != NULL && !log->busy && now_ns - log->last_ns >= window) {
		lru_remove(&c->logs, &log->node);	/* too old to count on: a new Event */
		log = NULL;
	}
	if (log == NULL) {
		log = xcalloc(1, sizeof *log);
		event_log_set_info(log, ev, message);
		log->name = event_name(ev->object.name, now_ns, &c->last_suffix);
		log->ns = xstrdup(ev->object.ns != NULL && *ev->object.ns != '\0' ?
		    ev->object.ns : "default");
		log->first_ns = now_ns;
		log->serial = ++c->serial;
		lru_add(&c->logs, &log->node, key);
	} else if (strcmp(log->info.message, message) != 0) {
		event_log_set_info(log, ev, message);	/* a new combined message */
	}
	free(key);
	log->count++;
	log->last_ns = now_ns;
	if (log->busy) {
		log->dirty = 1;
		event_decide(log, EVENT_FOLDED, out);
		return;
	}
	if (!event_spam_take(c, ev, now_ns)) {
		event_decide(log, EVENT_DROPPED, out);
		return;
	}
	log->busy = 1;
	event_decide(log, log->created ? EVENT_PATCH : EVENT_CREATE, out);
}

int
event_correlator_done(struct event_correlator *c, const char *key, uint64_t serial,
    enum event_outcome outcome, int64_t now_ns, struct event_decision *next)
{
	struct event_log *log = (struct event_log *)lru_get(&c->logs, key);

	if (log == NULL || log->serial != serial || !log->busy)
		return 0;	/* forgotten meanwhile */
	log->busy = 0;
	switch (outcome) {
	case EVENT_SENT:
		log->created = 1;
		if (!log->dirty)
			return 0;
		log->dirty = 0;
		if (!event_spam_take(c, &log->info, now_ns))
			return 0;
		log->busy = 1;
		event_decide(log, EVENT_PATCH, next);
		return 1;
	case EVENT_GONE:
		/* The Event expired on the server: create it again, once. */
		log->created = 0;
		log->dirty = 0;
		log->busy = 1;
		event_decide(log, EVENT_CREATE, next);
		return 1;
	case EVENT_FAILED:
		log->dirty = 0;
		return 0;
	}
	return 0;
}

/* --- names and bodies ----------------------------------------------------------------- */

char *
event_name(const char *object_name, int64_t now_ns, int64_t *last_suffix)
{
	int64_t suffix = now_ns;
	char hex[24];
	int hex_len;
	size_t len = strlen(object_name);

	if (suffix <= *last_suffix)
		suffix = *last_suffix + 1;
	*last_suffix = suffix;
	hex_len = snprintf(hex, sizeof hex, "%llx", (unsigned long long)suffix);
	if (len + 1 + (size_t)hex_len > EVENT_NAME_MAX) {
		/* Cut the object's name; a DNS label may not end in '-' or '.'. */
		len = EVENT_NAME_MAX - 1 - (size_t)hex_len;
		while (len > 0 && (object_name[len - 1] == '-' || object_name[len - 1] == '.'))
			len--;
	}
	return xasprintf("%.*s.%s", (int)len, object_name, hex);
}

void
event_format_time(int64_t t, char *out, size_t size)
{
	time_t seconds = (time_t)t;
	struct tm tm;

	gmtime_r(&seconds, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Adds name: s to object unless s is NULL or empty. */
static void
json_add_nonempty(cJSON *object, const char *name, const char *s)
{
	if (s != NULL && *s != '\0')
		cJSON_AddStringToObject(object, name, s);
}

/* Prints a JSON value compactly into a malloc'd string and frees it. */
static char *
json_print_free(cJSON *value)
{
	char *text = cJSON_PrintUnformatted(value);
	char *out = xstrdup(text != NULL ? text : "{}");

	cJSON_free(text);
	cJSON_Delete(value);
	return out;
}

char *
event_create_body(const struct event_decision *d, const char *reporting_instance)
{
	const struct event_info *ev = d->event;
	cJSON *event = cJSON_CreateObject(), *metadata, *object, *source;
	char first[32], last[32];

	event_format_time(d->first_timestamp, first, sizeof first);
	event_format_time(d->last_timestamp, last, sizeof last);
	cJSON_AddStringToObject(event, "kind", "Event");
	cJSON_AddStringToObject(event, "apiVersion", "v1");
	metadata = cJSON_AddObjectToObject(event, "metadata");
	cJSON_AddStringToObject(metadata, "name", d->name);
	cJSON_AddStringToObject(metadata, "namespace", d->ns);
	object = cJSON_AddObjectToObject(event, "involvedObject");
	json_add_nonempty(object, "kind", ev->object.kind);
	json_add_nonempty(object, "namespace", ev->object.ns);
	json_add_nonempty(object, "name", ev->object.name);
	json_add_nonempty(object, "uid", ev->object.uid);
	json_add_nonempty(object, "apiVersion", ev->object.api_version);
	json_add_nonempty(object, "resourceVersion", ev->object.resource_version);
	json_add_nonempty(object, "fieldPath", ev->object.field_path);
	cJSON_AddStringToObject(event, "reason", ev->reason);
	cJSON_AddStringToObject(event, "message", ev->message);
	source = cJSON_AddObjectToObject(event, "source");
	json_add_nonempty(source, "component", ev->component);
	json_add_nonempty(source, "host", ev->host);
	cJSON_AddStringToObject(event, "firstTimestamp", first);
	cJSON_AddStringToObject(event, "lastTimestamp", last);
	cJSON_AddNumberToObject(event, "count", d->count);
	cJSON_AddStringToObject(event, "type", ev->type);
	json_add_nonempty(event, "reportingComponent", ev->component);
	json_add_nonempty(event, "reportingInstance", reporting_instance);
	return json_print_free(event);
}

char *
event_patch_body(const struct event_decision *d)
{
	cJSON *patch = cJSON_CreateObject();
	char last[32];

	event_format_time(d->last_timestamp, last, sizeof last);
	cJSON_AddNumberToObject(patch, "count", d->count);
	cJSON_AddStringToObject(patch, "lastTimestamp", last);
	cJSON_AddStringToObject(patch, "message", d->event->message);
	return json_print_free(patch);
}

/* --- the recorder --------------------------------------------------------------------- */

/* Events are not cached, so this resource is not among resource_all. */
static const struct resource event_resource = {
	"events", "Event", "v1", "/api/v1/events", NULL, NULL, -1, 0, 1, NULL,
};

/* A CREATE or PATCH in flight. */
struct event_send {
	struct kubeevents *rec;
	struct restops_request *request;
	enum event_action action;
	char *key;
	uint64_t serial;
	char *what;			/* "ns/name reason", for logs */
	TAILQ_ENTRY(event_send) link;
};

TAILQ_HEAD(event_send_list, event_send);

struct kubeevents {
	struct client *client;
	char *component;
	char *host;			/* reportingInstance */
	struct event_correlator *correlator;
	kubeevents_clock now;
	void *now_arg;
	struct event_send_list sending;
	int in_flight;
};

/* The real clock: wall time in nanoseconds. */
static int64_t
kubeevents_realtime(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NANOS_PER_SECOND + ts.tv_nsec;
}

struct kubeevents *
kubeevents_new(struct client *client, const char *component)
{
	struct kubeevents *rec = xcalloc(1, sizeof *rec);
	char host[256];

	if (gethostname(host, sizeof host) != 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';
	rec->client = client;
	rec->component = xstrdup(component);
	rec->host = xstrdup(host);
	rec->correlator = event_correlator_new(NULL);
	rec->now = kubeevents_realtime;
	TAILQ_INIT(&rec->sending);
	return rec;
}

/* Frees a send record. */
static void
event_send_free(struct event_send *s)
{
	free(s->key);
	free(s->what);
	free(s);
}

void
kubeevents_free(struct kubeevents *rec)
{
	struct event_send *s;

	if (rec == NULL)
		return;
	while ((s = TAILQ_FIRST(&rec->sending)) != NULL) {
		TAILQ_REMOVE(&rec->sending, s, link);
		restops_cancel(s->request);
		event_send_free(s);
	}
	event_correlator_free(rec->correlator);
	free(rec->component);
	free(rec->host);
	free(rec);
}

void
kubeevents_set_clock(struct kubeevents *rec, kubeevents_clock now, void *arg)
{
	rec->now = now;
	rec->now_arg = arg;
}

static void kubeevents_send(struct kubeevents *rec, const struct event_decision *d);

/* Reports the outcome of a request to the correlator, and sends what must follow. */
static void
kubeevents_outcome(struct kubeevents *rec, const char *key, uint64_t serial,
    enum event_outcome outcome)
{
	struct event_decision next;

	if (event_correlator_done(rec->correlator, key, serial, outcome, rec->now(rec->now_arg),
	    &next))
		kubeevents_send(rec, &next);
}

/* A CREATE or PATCH completed. */
static void
kubeevents_sent(struct restops_result *result, void *arg)
{
	struct event_send *s = arg;
	struct kubeevents *rec = s->rec;
	enum event_outcome outcome = EVENT_SENT;

	TAILQ_REMOVE(&rec->sending, s, link);
	rec->in_flight--;
	if (result->status.reason != API_OK) {
		if (s->action == EVENT_PATCH && result->status.reason == API_NOT_FOUND) {
			outcome = EVENT_GONE;
		} else {
			outcome = EVENT_FAILED;
			log_v(2, "event %s: %s refused (dropped): %s%s: %s", s->what,
			    s->action == EVENT_PATCH ? "PATCH" : "POST",
			    api_reason_name(result->status.reason),
			    api_status_is_namespace_terminating(&result->status) ?
			    " (namespace terminating)" : "", result->status.message);
		}
	}
	kubeevents_outcome(rec, s->key, s->serial, outcome);
	event_send_free(s);
}

/* Sends a decision's CREATE or PATCH. */
static void
kubeevents_send(struct kubeevents *rec, const struct event_decision *d)
{
	struct event_send *s;
	char *body, *error = NULL;

	if (rec->client == NULL) {
		kubeevents_outcome(rec, d->key, d->serial, EVENT_SENT);
		return;
	}
	if (rec->in_flight >= KUBEEVENTS_MAX_IN_FLIGHT) {
		log_v(2, "event %s/%s %s: too many events in flight (dropped)", d->ns, d->name,
		    d->event->reason);
		kubeevents_outcome(rec, d->key, d->serial, EVENT_FAILED);
		return;
	}
	s = xcalloc(1, sizeof *s);
	s->rec = rec;
	s->action = d->action;
	s->key = xstrdup(d->key);
	s->serial = d->serial;
	s->what = xasprintf("%s/%s %s", d->ns, d->name, d->event->reason);
	if (d->action == EVENT_PATCH) {
		body = event_patch_body(d);
		s->request = restops_patch(rec->client, &event_resource, d->ns, d->name,
		    RESTOPS_PATCH_STRATEGIC, body, kubeevents_sent, s, &error);
	} else {
		body = event_create_body(d, rec->host);
		s->request = restops_create(rec->client, &event_resource, d->ns, body,
		    kubeevents_sent, s, &error);
	}
	free(body);
	if (s->request == NULL) {
		log_v(2, "event %s: cannot send (dropped): %s", s->what, error);
		free(error);
		kubeevents_outcome(rec, s->key, s->serial, EVENT_FAILED);
		event_send_free(s);
		return;
	}
	TAILQ_INSERT_TAIL(&rec->sending, s, link);
	rec->in_flight++;
}

/* Records an event with its message formatted already. */
static void
kubeevents_record(struct kubeevents *rec, const struct event_object_ref *object,
    const char *type, const char *reason, const char *message)
{
	struct event_info ev;
	struct event_decision d;

	if (object->name == NULL || *object->name == '\0') {
		log_warning("event reason=%s: the object has no name (dropped)", reason);
		return;
	}
	if (strcmp(type, EVENT_TYPE_NORMAL) != 0 && strcmp(type, EVENT_TYPE_WARNING) != 0) {
		log_warning("event reason=%s: unknown type \"%s\" (dropped)", reason, type);
		return;
	}
	log_v(4, "event object=%s/%s kind=%s type=%s reason=%s message=\"%s\"",
	    object->ns != NULL ? object->ns : "", object->name,
	    object->kind != NULL ? object->kind : "", type, reason, message);
	ev.object = *object;
	ev.type = type;
	ev.reason = reason;
	ev.message = message;
	ev.component = rec->component;
	ev.host = "";
	event_correlator_observe(rec->correlator, &ev, rec->now(rec->now_arg), &d);
	switch (d.action) {
	case EVENT_CREATE:
	case EVENT_PATCH:
		kubeevents_send(rec, &d);
		break;
	case EVENT_FOLDED:
		break;
	case EVENT_DROPPED:
		log_v(2, "event %s/%s reason=%s: over the spam filter's budget (dropped)",
		    d.ns, object->name, reason);
		break;
	}
}

void
kubeevents_event(struct kubeevents *rec, const struct event_object_ref *object,
    const char *type, const char *reason, const char *fmt, ...)
{
	va_list ap;
	char *message;

	va_start(ap, fmt);
	message = xvasprintf(fmt, ap);
	va_end(ap);
	kubeevents_record(rec, object, type, reason, message);
	free(message);
}

int
event_object_ref_from_object(const cJSON *object, const struct resource *resource,
    struct event_object_ref *out)
{
	const cJSON *v;

	memset(out, 0, sizeof *out);
#define STRING_AT(path) (cJSON_IsString(v = json_path(object, path)) ? v->valuestring : NULL)
	out->name = STRING_AT("metadata.name");
	out->ns = STRING_AT("metadata.namespace");
	out->uid = STRING_AT("metadata.uid");
	out->resource_version = STRING_AT("metadata.resourceVersion");
	out->kind = STRING_AT("kind");
	out->api_version = STRING_AT("apiVersion");
#undef STRING_AT
	if (resource != NULL) {
		if (out->kind == NULL || *out->kind == '\0')
			out->kind = resource->kind;
		if (out->api_version == NULL || *out->api_version == '\0')
			out->api_version = resource->api_version;
	}
	return out->name != NULL && *out->name != '\0' ? 0 : -1;
}

void
kubeevents_event_object(struct kubeevents *rec, const struct resource *resource,
    const cJSON *object, const char *type, const char *reason, const char *fmt, ...)
{
	struct event_object_ref ref;
	va_list ap;
	char *message;

	if (event_object_ref_from_object(object, resource, &ref) != 0) {
		log_warning("event reason=%s: the object has no metadata.name (dropped)", reason);
		return;
	}
	va_start(ap, fmt);
	message = xvasprintf(fmt, ap);
	va_end(ap);
	kubeevents_record(rec, &ref, type, reason, message);
	free(message);
}
