/*
 * replay.c - `sqlkcm replay`: feed a recorded event log through the controllers, offline.
 *
 * The log (watchlog.c) is read in order and cut into batches: a batch is the run of
 * consecutive events with the same time, which for a `run --record` log is one
 * transaction of the informers (watchrecord.c). For each batch, as the daemon does for each
 * committed turn of its informers:
 *
 * 1. the events are written to the cache with store_upsert_object / store_delete_object,
 *    in one transaction;
 * 2. every enabled controller's handle_event sees each event that changed the cache
 *    (now = the batch's time), in one transaction for the expectations it observes;
 * 3. each controller's queue is drained: the keys its handlers added (each once, in the
 *    order first added) and the delayed keys now due, earliest first, are synced at the
 *    batch's time, and their actions printed as JSON lines (sync_result_print) with the
 *    line and time of the event that queued the key.
 *
 * The executor is a printing one that assumes every request succeeds: before the
 * creations or deletions it prints are "sent", it sets the owner's expectations exactly
 * as the live executor does (executor.c), so the later pod events of the log are observed
 * against them as in the daemon; an owner that is gone has its bookkeeping dropped; a
 * sync asking to be looked at again after some seconds is queued for that log time. It
 * sends nothing and writes no status to the cache: the log's own events bring the
 * results of what the recorded controller did.
 *
 * Time comes only from the log, never from the clock, and every order is fixed, so the
 * same log always prints the same bytes. Keys still delayed past the log's last time are
 * not synced.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consistency.h"
#include "controller.h"
#include "registry.h"
#include "watchlog.h"
#include "exitstatus.h"
#include "expectations.h"
#include "log.h"
#include "replay.h"
#include "store.h"
#include "util.h"

/* The controllers' flags' option values: this plus their code. */
#define REPLAY_OPT_FLAG 4096

const char replay_usage[] =
    "usage: sqlkcm replay LOG [--db FILE] [--controllers LIST] [--strict]\n"
    "\n"
    "Applies the watch events recorded in LOG to a fresh cache, one batch at a time,\n"
    "and prints the actions the controllers would take after each, as JSON lines.\n"
    "Nothing is sent to any apiserver; time is the log's, so the same log always gives\n"
    "the same output. LOG is a file written by `sqlkcm run --record`, or the output of\n"
    "`kubectl get KIND --watch -o json --output-watch-events` (several may be\n"
    "concatenated); '-' reads standard input.\n"
    "\n"
    "Flags:\n"
    "  --db FILE                 keep the resulting cache in FILE, a new file, for\n"
    "                            sqlite3 (default: in memory)\n"
    "  --controllers LIST        controllers to run: '*', NAME or -NAME,\n"
    "                            comma-separated (default: '*'); '' runs none and\n"
    "                            only fills the cache\n"
    "  --strict                  stop at the first bad record, with exit status 1\n"
    "                            (default: report it on stderr with its line, skip it)\n"
    "  -v, --v N                 log verbosity, as klog (default: 0)\n"
    "  -h, --help                this help\n"
    "and the controllers' own flags, as `sqlkcm run` takes them (below).\n"
    "\n"
    "Each line is an object with line and time (the position and time in LOG of the\n"
    "event that led to the sync), then controller, key (the owner's namespace/name),\n"
    "action (create, delete, adopt, release, update-status, or wait), resource,\n"
    "namespace, name, uid, reason and body (the object or patch that would be sent;\n"
    "status for update-status).\n"
    "\n"
    "Exit status: 0 when the log was replayed (bad records skipped), 1 when it could not\n"
    "be (a file or database error, an empty log; with --strict, a bad record), 2 on a bad\n"
    "command line.\n";

/* --- the queue ------------------------------------------------------------------------- */

/* A key to sync, and the event that asked for it. */
struct replay_key {
	char *key;
	unsigned long line;
	char time[WATCHLOG_TIME_SIZE];
	double due;			/* delayed keys: the log time to sync at */
	unsigned long seq;		/* delayed keys: the order they were added in */
};

/* A controller's queue: keys to sync this batch, and keys delayed to a later time. */
struct replay_queue {
	struct replay_key *ready;	/* in the order first added */
	size_t nready, ready_cap;
	char **set;			/* the ready keys, open addressing */
	size_t set_cap;			/* a power of two, at least twice nready */
	struct replay_key *delayed;	/* by due time, then seq */
	size_t ndelayed, delayed_cap;
	unsigned long seq;
};

/* One enabled controller. */
struct replay_controller {
	struct controller *controller;
	struct replay_queue queue;
	struct controller_queue adapter;
	struct replay *replay;
};

/* One event of the current batch. */
struct replay_event {
	struct watchlog_event ev;
	enum informer_event_type change;
	int changed;			/* the cache changed: handlers run */
	char *old_body;
};

struct replay {
	const struct replay_options *options;
	const char *name;		/* the log's, for messages */
	struct store *store;
	struct replay_controller *controllers;
	int ncontrollers;
	int need_old_body;
	FILE *out;
	FILE *err;
	struct buf line;		/* output of one sync */
	struct replay_event *batch;
	size_t nbatch, batch_cap;
	const struct replay_event *cause;	/* the event being handled */
	struct replay_stats *stats;
};

/* FNV-1a over a string. */
static size_t
key_hash(const char *s)
{
	size_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Returns the slot of key in the set: where it is, or the empty slot it would go in. */
static size_t
queue_slot(const struct replay_queue *q, const char *key)
{
	size_t i = key_hash(key) & (q->set_cap - 1);

	while (q->set[i] != NULL && strcmp(q->set[i], key) != 0)
		i = (i + 1) & (q->set_cap - 1);
	return i;
}

/* Grows the set to hold twice as many keys as it does now. */
static void
queue_grow_set(struct replay_queue *q)
{
	q->set_cap = q->set_cap == 0 ? 64 : q->set_cap * 2;
	free(q->set);
	q->set = xcalloc(q->set_cap, sizeof *q->set);
	for (size_t i = 0; i < q->nready; i++)
		q->set[queue_slot(q, q->ready[i].key)] = q->ready[i].key;
}

/* Adds key to be synced this batch, unless it is already queued. */
static void
queue_add_ready(struct replay_queue *q, const char *key, unsigned long line, const char *time)
{
	struct replay_key *k;
	size_t slot;

	if ((q->nready + 1) * 2 > q->set_cap)
		queue_grow_set(q);
	slot = queue_slot(q, key);
	if (q->set[slot] != NULL)
		return;
	if (q->nready == q->ready_cap) {
		q->ready_cap = q->ready_cap == 0 ? 64 : q->ready_cap * 2;
		q->ready = xrealloc(q->ready, q->ready_cap * sizeof *q->ready);
	}
	k = &q->ready[q->nready++];
	memset(k, 0, sizeof *k);
	k->key = xstrdup(key);
	k->line = line;
	snprintf(k->time, sizeof k->time, "%s", time);
	q->set[slot] = k->key;
}

/* Adds key to be synced at log time due, unless it is delayed to an earlier time
 * already (a linear search: delayed keys are few, those waiting on minReadySeconds). */
static void
queue_add_delayed(struct replay_queue *q, const char *key, double due, unsigned long line,
    const char *time)
{
	struct replay_key *k;
	size_t i;

	/* One entry per key, the earliest, as the daemon's workqueue keeps. */
	for (i = 0; i < q->ndelayed; i++) {
		if (strcmp(q->delayed[i].key, key) != 0)
			continue;
		if (q->delayed[i].due <= due)
			return;
		free(q->delayed[i].key);
		memmove(&q->delayed[i], &q->delayed[i + 1],
		    (q->ndelayed - i - 1) * sizeof *q->delayed);
		q->ndelayed--;
		break;
	}
	if (q->ndelayed == q->delayed_cap) {
		q->delayed_cap = q->delayed_cap == 0 ? 16 : q->delayed_cap * 2;
		q->delayed = xrealloc(q->delayed, q->delayed_cap * sizeof *q->delayed);
	}
	/* After every key due at the same time or earlier: ties keep their order. */
	for (i = q->ndelayed; i > 0 && q->delayed[i - 1].due > due; i--)
		;
	memmove(&q->delayed[i + 1], &q->delayed[i], (q->ndelayed - i) * sizeof *q->delayed);
	q->ndelayed++;
	k = &q->delayed[i];
	memset(k, 0, sizeof *k);
	k->key = xstrdup(key);
	k->due = due;
	k->seq = q->seq++;
	k->line = line;
	snprintf(k->time, sizeof k->time, "%s", time);
}

/* Moves the delayed keys due at now to the ready keys. */
static void
queue_release_due(struct replay_queue *q, double now)
{
	size_t n = 0;

	while (n < q->ndelayed && q->delayed[n].due <= now) {
		queue_add_ready(q, q->delayed[n].key, q->delayed[n].line, q->delayed[n].time);
		free(q->delayed[n].key);
		n++;
	}
	if (n == 0)
		return;
	memmove(q->delayed, q->delayed + n, (q->ndelayed - n) * sizeof *q->delayed);
	q->ndelayed -= n;
}

/* Empties the ready keys. */
static void
queue_reset_ready(struct replay_queue *q)
{
	for (size_t i = 0; i < q->nready; i++)
		free(q->ready[i].key);
	q->nready = 0;
	if (q->set != NULL)
		memset(q->set, 0, q->set_cap * sizeof *q->set);
}

static void
queue_free(struct replay_queue *q)
{
	queue_reset_ready(q);
	for (size_t i = 0; i < q->ndelayed; i++)
		free(q->delayed[i].key);
	free(q->ready);
	free(q->set);
	free(q->delayed);
}

/* The controller_queue functions handlers call: the key is caused by the event being
 * handled. */
static void
adapter_add(const char *key, void *arg)
{
	struct replay_controller *rc = arg;
	const struct replay_event *cause = rc->replay->cause;

	queue_add_ready(&rc->queue, key, cause->ev.line, cause->ev.time_text);
}

static void
adapter_add_after(const char *key, double seconds, void *arg)
{
	struct replay_controller *rc = arg;
	const struct replay_event *cause = rc->replay->cause;

	if (!(seconds > 0))
		queue_add_ready(&rc->queue, key, cause->ev.line, cause->ev.time_text);
	else
		queue_add_delayed(&rc->queue, key, cause->ev.time + seconds, cause->ev.line,
		    cause->ev.time_text);
}

/* --- the printing executor -------------------------------------------------------------- */

/* Does the bookkeeping the live executor would for result r of c at now, assuming every
 * request succeeds. A sync that failed is not retried with backoff, which replay does not
 * model: like any other, it is synced again after its requeue_after. */
static int
replay_execute(struct replay *rp, struct replay_controller *rc, const struct replay_key *k,
    const struct sync_result *r, double now, char **error)
{
	(void)rp;
	if (r->stale)
		return 0;
	if (controller_record_result(rc->controller, r, now, error) != 0)
		return -1;
	if (!r->forget_expectations && r->requeue_after > 0)
		queue_add_delayed(&rc->queue, r->key, now + r->requeue_after, k->line, k->time);
	return 0;
}

/* --- batches ---------------------------------------------------------------------------- */

/* Writes one event of the batch to the cache; a failure is a bad record. */
static int
replay_apply(struct replay *rp, struct replay_event *e, char **error)
{
	char **old_body = rp->need_old_body ? &e->old_body : NULL;
	enum store_change change;
	const cJSON *uid;
	char *why = NULL;
	int rc;

	if (e->ev.type == WATCHLOG_DELETED) {
		uid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		    e->ev.object, "metadata"), "uid");
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		    e->ev.object, "metadata"), "managedFields");
		rc = store_delete_object(rp->store, e->ev.resource, uid->valuestring, &change,
		    old_body, &why);
	} else {
		rc = store_upsert_text(rp->store, e->ev.resource, e->ev.object, e->ev.text,
		    e->ev.text_len, 1, &change, old_body, &why);
	}
	/* A resource a record named by "metadataOf" goes in api_resources as the daemon's
	 * discovery puts it there, so that `plan` and the views know its kind. */
	if (rc == 0 && change == STORE_ADDED && e->ev.resource->metadata_only)
		rc = store_note_api_resource(rp->store, e->ev.resource, 1, &why);
	if (rc != 0) {
		error_set(error, "%s:%lu: not stored: %s", rp->name, e->ev.line, why);
		free(why);
		return -1;
	}
	rp->stats->events++;
	e->changed = change != STORE_UNCHANGED;
	e->change = change == STORE_ADDED ? INFORMER_ADDED : change == STORE_UPDATED ?
	    INFORMER_UPDATED : INFORMER_DELETED;
	return 0;
}

/* Syncs every ready key of rc at now and prints what it decided. */
static int
replay_drain(struct replay *rp, struct replay_controller *rc, double now, char **error)
{
	struct replay_queue *q = &rc->queue;
	const struct controller_type *t = rc->controller->type;
	struct sync_result r;
	cJSON *extra;

	queue_release_due(q, now);
	for (size_t i = 0; i < q->nready; i++) {
		const struct replay_key *k = &q->ready[i];

		memset(&r, 0, sizeof r);
		rp->stats->syncs++;
		if (t->sync(rc->controller, k->key, now, &r, error) != 0) {
			sync_result_clear(&r);
			return -1;
		}
		extra = cJSON_CreateObject();
		cJSON_AddNumberToObject(extra, "line", (double)k->line);
		cJSON_AddStringToObject(extra, "time", k->time);
		buf_reset(&rp->line);
		sync_result_print(&r, extra, &rp->line);
		cJSON_Delete(extra);
		/* A sync with nothing to do prints nothing (and the buffer may have no data). */
		if (rp->line.len > 0)
			fwrite(rp->line.data, 1, rp->line.len, rp->out);
		if (replay_execute(rp, rc, k, &r, now, error) != 0) {
			sync_result_clear(&r);
			return -1;
		}
		sync_result_clear(&r);
	}
	queue_reset_ready(q);
	return 0;
}

/* Frees the events of the batch. */
static void
replay_batch_clear(struct replay *rp)
{
	for (size_t i = 0; i < rp->nbatch; i++) {
		watchlog_event_clear(&rp->batch[i].ev);
		free(rp->batch[i].old_body);
	}
	rp->nbatch = 0;
}

/* Applies the batch, runs the handlers, and syncs what they queued. */
static int
replay_batch(struct replay *rp, char **error)
{
	double now;
	int bad = 0;

	if (rp->nbatch == 0)
		return 0;
	now = rp->batch[0].ev.time;
	rp->stats->batches++;
	if (store_begin(rp->store, error) != 0)
		return -1;
	for (size_t i = 0; i < rp->nbatch; i++) {
		char *why = NULL;

		if (replay_apply(rp, &rp->batch[i], &why) != 0) {
			fprintf(rp->err, "sqlkcm replay: %s\n", why);
			free(why);
			rp->stats->bad++;
			bad = 1;
			if (rp->options->strict)
				break;
		}
	}
	if (store_commit(rp->store, error) != 0) {
		store_rollback(rp->store);
		return -1;
	}
	if (bad && rp->options->strict)
		return error_set(error, "stopped at the first bad record (--strict)");
	if (rp->ncontrollers == 0) {
		replay_batch_clear(rp);
		return 0;
	}
	if (store_begin(rp->store, error) != 0)
		return -1;
	for (size_t i = 0; i < rp->nbatch; i++) {
		struct replay_event *e = &rp->batch[i];
		struct informer_event iev = { e->change, e->ev.resource, e->ev.object,
		    e->old_body };

		if (!e->changed)
			continue;
		rp->cause = e;
		for (int j = 0; j < rp->ncontrollers; j++) {
			struct replay_controller *rc = &rp->controllers[j];
			if (controller_watches(rc->controller->type, e->ev.resource))
				rc->controller->type->handle_event(rc->controller, &iev, now,
				    &rc->adapter);
		}
	}
	rp->cause = NULL;
	replay_batch_clear(rp);
	for (int j = 0; j < rp->ncontrollers; j++) {
		if (replay_drain(rp, &rp->controllers[j], now, error) != 0) {
			store_rollback(rp->store);
			return -1;
		}
	}
	if (store_commit(rp->store, error) != 0) {
		store_rollback(rp->store);
		return -1;
	}
	return 0;
}

/* Adds ev (taken) to the batch. */
static void
replay_batch_add(struct replay *rp, struct watchlog_event *ev)
{
	struct replay_event *e;

	if (rp->nbatch == rp->batch_cap) {
		rp->batch_cap = rp->batch_cap == 0 ? 64 : rp->batch_cap * 2;
		rp->batch = xrealloc(rp->batch, rp->batch_cap * sizeof *rp->batch);
	}
	e = &rp->batch[rp->nbatch++];
	memset(e, 0, sizeof *e);
	e->ev = *ev;
	memset(ev, 0, sizeof *ev);
}

/* Opens the cache: in memory, or a new file. */
static int
replay_open_store(const char *db, struct store **store, char **error)
{
	int fd;

	if (db == NULL)
		return store_open(":memory:", NULL, store, error);
	/* Never clobber a file: replay builds a cache from nothing. */
	fd = open(db, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return error_set(error, "--db %s: the file exists; replay writes a "
			    "fresh cache: remove it or name a new file", db);
		return error_set(error, "--db %s: %s", db, strerror(errno));
	}
	close(fd);
	return store_open(db, NULL, store, error);
}

int
replay_run(FILE *in, const char *name, const struct replay_options *options, FILE *out,
    FILE *err, struct replay_stats *stats, char **error)
{
	struct watchlog *log = NULL;
	struct watchlog_event ev;
	struct replay rp;
	char *why = NULL;
	int rc = -1, r;

	memset(&rp, 0, sizeof rp);
	memset(stats, 0, sizeof *stats);
	rp.options = options;
	rp.name = name;
	rp.out = out;
	rp.err = err;
	rp.stats = stats;
	buf_init(&rp.line);
	if (replay_open_store(options->db, &rp.store, error) != 0)
		goto out;
	rp.controllers = xcalloc((size_t)controller_type_count, sizeof *rp.controllers);
	for (int i = 0; i < controller_type_count; i++) {
		struct replay_controller *c;

		if (!options->enabled[i])
			continue;
		c = &rp.controllers[rp.ncontrollers];
		c->controller = controller_new(controller_types[i], rp.store,
		    options->configs != NULL ? &options->configs[i] : NULL, error);
		if (c->controller == NULL)
			goto out;
		rp.ncontrollers++;
		c->replay = &rp;
		c->adapter.add = adapter_add;
		c->adapter.add_after = adapter_add_after;
		c->adapter.arg = c;
		rp.need_old_body = 1;
	}
	log = watchlog_new(in, name);
	for (;;) {
		r = watchlog_next(log, &ev, &why);
		if (r == 0)
			break;
		if (r < 0) {
			fprintf(err, "sqlkcm replay: %s\n", why);
			free(why);
			why = NULL;
			stats->bad++;
			if (options->strict) {
				if (replay_batch(&rp, error) == 0)
					error_set(error, "stopped at the first bad record (--strict)");
				goto out;
			}
			continue;
		}
		if (rp.nbatch > 0 && strcmp(rp.batch[0].ev.time_text, ev.time_text) != 0 &&
		    replay_batch(&rp, error) != 0) {
			watchlog_event_clear(&ev);
			goto out;
		}
		replay_batch_add(&rp, &ev);
	}
	if (replay_batch(&rp, error) != 0)
		goto out;
	if (watchlog_format(log) == WATCHLOG_UNKNOWN) {
		/* Not one record: most likely the wrong file, or a recording that never
		 * started; a silent success would hide that. */
		error_set(error, "%s: the log is empty: no events to replay", name);
		goto out;
	}
	rc = 0;
out:
	replay_batch_clear(&rp);
	free(rp.batch);
	watchlog_free(log);
	for (int i = 0; i < rp.ncontrollers; i++) {
		queue_free(&rp.controllers[i].queue);
		controller_free(rp.controllers[i].controller);
	}
	free(rp.controllers);
	store_close(rp.store);
	/* The resources the log named by "metadataOf". */
	resource_metadata_free_all();
	buf_free(&rp.line);
	fflush(out);
	return rc;
}

/* --- the command ------------------------------------------------------------------------ */

int
replay_command(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option fixed[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "controllers", required_argument, NULL, 'c' },
		{ "strict", no_argument, NULL, 's' },
		{ "v", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct option *longopts = controller_longopts_new(fixed, REPLAY_OPT_FLAG);
	struct controller_config *configs = controller_configs_new();
	struct replay_options options;
	struct replay_stats stats;
	const char *list = "*", *path;
	char *error = NULL, *end;
	int *enabled = NULL, c, rc;
	FILE *in;

	memset(&options, 0, sizeof options);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":v:h", longopts, NULL)) != -1) {
		if (c >= REPLAY_OPT_FLAG && c < REPLAY_OPT_FLAG + CONTROLLER_FLAG_CODES) {
			if (controller_configs_set(configs, c - REPLAY_OPT_FLAG, optarg,
			    &error) != 0) {
				fprintf(err, "sqlkcm replay: %s\n", error);
				free(error);
				rc = EXIT_USAGE;
				goto out;
			}
			continue;
		}
		switch (c) {
		case 'd':
			if (*optarg == '\0') {
				fprintf(err, "sqlkcm replay: --db needs a file name\n");
				rc = EXIT_USAGE;
				goto out;
			}
			options.db = optarg;
			break;
		case 'c': list = optarg; break;
		case 's': options.strict = 1; break;
		case 'v':
			log_verbosity = (int)strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || log_verbosity < 0 ||
			    log_verbosity > 10) {
				fprintf(err, "sqlkcm replay: invalid value \"%s\" for --v: want a "
				    "whole number from 0 to 10\n", optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case 'h':
			fputs(replay_usage, out);
			controller_flags_usage(out);
			rc = EXIT_OK;
			goto out;
		case ':':
			fprintf(err, "sqlkcm replay: %s needs a value\n", argv[optind - 1]);
			rc = EXIT_USAGE;
			goto out;
		default:
			fprintf(err, "sqlkcm replay: unknown flag %s (see sqlkcm replay --help)\n",
			    argv[optind - 1]);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (optind >= argc) {
		fprintf(err, "sqlkcm replay: which log? (usage: sqlkcm replay LOG [flags])\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (optind + 1 < argc) {
		fprintf(err, "sqlkcm replay: unexpected argument \"%s\"\n", argv[optind + 1]);
		rc = EXIT_USAGE;
		goto out;
	}
	path = argv[optind];
	enabled = xcalloc((size_t)controller_type_count, sizeof *enabled);
	if (controller_parse_list(list, enabled, NULL, &error) != 0) {
		fprintf(err, "sqlkcm replay: %s\n", error);
		free(error);
		rc = EXIT_USAGE;
		goto out;
	}
	options.enabled = enabled;
	options.configs = configs;
	if (strcmp(path, "-") == 0) {
		in = stdin;
		path = "-";
	} else if ((in = fopen(path, "r")) == NULL) {
		fprintf(err, "sqlkcm replay: cannot open %s: %s\n", path, strerror(errno));
		rc = EXIT_FAILURE_RUN;
		goto out;
	}
	rc = EXIT_OK;
	if (replay_run(in, path, &options, out, err, &stats, &error) != 0) {
		fprintf(err, "sqlkcm replay: %s\n", error);
		free(error);
		rc = EXIT_FAILURE_RUN;
	}
	log_v(1, "replay: %lu events in %lu batches, %lu syncs, %lu bad records", stats.events,
	    stats.batches, stats.syncs, stats.bad);
	if (in != stdin)
		fclose(in);
out:
	free(enabled);
	free(longopts);
	controller_configs_free(configs);
	return rc;
}
