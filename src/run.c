/*
 * run.c - `sqlkcm run`: the daemon.
 *
 * Parses the flags (kube-controller-manager's names where the meaning is the same), then
 * builds the process from the bottom up on one libevent loop: the kubeconfig, the store,
 * the REST client, the informers, the event recorder. It runs until SIGTERM or SIGINT,
 * then stops the watches, commits what was applied and closes the store, and exits 0.
 * SIGHUP reopens the --record file, for log rotation.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "client.h"
#include "command.h"
#include "controller.h"
#include "eventrecorder.h"
#include "executor.h"
#include "informer.h"
#include "kubeconfig.h"
#include "log.h"
#include "manager.h"
#include "recorder.h"
#include "resource.h"
#include "run.h"
#include "store.h"
#include "util.h"

const char run_usage[] =
    "usage: sqlkcm run [flags]\n"
    "\n"
    "Mirrors the cluster into the SQLite cache with informers (LIST, then WATCH from the\n"
    "stored resourceVersion) and runs the enabled controllers against it.\n"
    "\n"
    "Flags:\n"
    "  --kubeconfig FILE         kubeconfig to use (default: $KUBECONFIG, in-cluster\n"
    "                            config, then ~/.kube/config)\n"
    "  --context NAME            kubeconfig context (default: its current-context)\n"
    "  --master URL              the apiserver's address; overrides the kubeconfig's\n"
    "  --db FILE                 the cache database (default: sqlkcm.db); created 0600\n"
    "  --db-cache-mib N          SQLite page cache bound in MiB (default: 8)\n"
    "  --record FILE             append every applied event to FILE as a JSON line\n"
    "                            (the input of `sqlkcm replay`); SIGHUP reopens it\n"
    "  --controllers LIST        controllers to run: '*', NAME or -NAME, comma-separated\n"
    "                            (default: '*'; known: replicaset). '' runs no\n"
    "                            controller and mirrors every resource sqlkcm knows\n"
    "  --concurrent-replicaset-syncs N\n"
    "                            ReplicaSets synced at once (default: 5)\n"
    "  --watch-list MODE         how informers get the initial state: auto (WatchList,\n"
    "                            a paginated LIST if the server refuses it), true\n"
    "                            (WatchList only) or false (LIST only) (default: auto)\n"
    "  --kube-api-qps N          requests per second to the apiserver (default: 20)\n"
    "  --kube-api-burst N        requests allowed in a burst (default: 30)\n"
    "  -v, --v N                 log verbosity, as klog (default: 0)\n"
    "  -h, --help                this help\n";

struct run_options {
	const char *kubeconfig;
	const char *context;
	const char *master;
	const char *db;
	const char *record;
	const char *controllers;
	enum informer_watch_list watch_list;
	long db_cache_mib;
	long replicaset_syncs;
	double qps;
	long burst;
	long verbosity;
};

/* How long a stopping daemon waits for requests in flight. */
#define RUN_DRAIN_SECONDS 10

/* Everything the daemon holds, for the signal callbacks. */
struct daemon {
	struct event_base *base;
	struct informer_set *informers;
	struct recorder *recorder;
	struct manager *manager;
	struct executor *executor;
	struct event *drain_timer;
	struct timeval drain_deadline;
};

/* Parses a whole decimal integer in [min, max] for flag; -1 with a message otherwise. */
static int
parse_long(const char *flag, const char *text, long min, long max, long *out, FILE *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
		fprintf(err, "sqlkcm run: invalid value \"%s\" for %s: want a whole number from "
		    "%ld to %ld\n", text, flag, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* Checks --controllers: every name must be one sqlkcm has. */
static int
check_controllers(const char *list, FILE *err)
{
	int *enabled = xcalloc((size_t)controller_type_count, sizeof *enabled);
	char *error = NULL;
	int rc = controller_parse_list(list, enabled, &error);

	if (rc != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		free(error);
	}
	free(enabled);
	return rc;
}

/* Parses argv into opts; returns -1 (message written) on a bad command line, 1 for --help. */
static int
run_parse(int argc, char **argv, struct run_options *opts, FILE *out, FILE *err)
{
	enum { OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_MASTER, OPT_DB, OPT_DB_CACHE, OPT_RECORD,
		OPT_CONTROLLERS, OPT_QPS, OPT_BURST, OPT_RS_SYNCS, OPT_WATCH_LIST };
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "master", required_argument, NULL, OPT_MASTER },
		{ "db", required_argument, NULL, OPT_DB },
		{ "db-cache-mib", required_argument, NULL, OPT_DB_CACHE },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "controllers", required_argument, NULL, OPT_CONTROLLERS },
		{ "watch-list", required_argument, NULL, OPT_WATCH_LIST },
		{ "kube-api-qps", required_argument, NULL, OPT_QPS },
		{ "kube-api-burst", required_argument, NULL, OPT_BURST },
		{ "concurrent-replicaset-syncs", required_argument, NULL, OPT_RS_SYNCS },
		{ "v", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opts->db = "sqlkcm.db";
	opts->controllers = "*";
	opts->db_cache_mib = 8;
	opts->replicaset_syncs = 5;
	opts->qps = 20;
	opts->burst = 30;
	opterr = 0;
	optind = 0;	/* GNU: start over, whoever parsed before */
	while ((c = getopt_long(argc, argv, "+v:h", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case OPT_KUBECONFIG: opts->kubeconfig = optarg; break;
		case OPT_CONTEXT: opts->context = optarg; break;
		case OPT_MASTER: opts->master = optarg; break;
		case OPT_DB:
			if (*optarg == '\0') {
				fprintf(err, "sqlkcm run: --db needs a file name\n");
				return -1;
			}
			opts->db = optarg;
			break;
		case OPT_DB_CACHE:
			if (parse_long("--db-cache-mib", optarg, 1, 65536, &opts->db_cache_mib, err) != 0)
				return -1;
			break;
		case OPT_RECORD: opts->record = optarg; break;
		case OPT_CONTROLLERS: opts->controllers = optarg; break;
		case OPT_WATCH_LIST:
			if (informer_watch_list_parse(optarg, &opts->watch_list) != 0) {
				fprintf(err, "sqlkcm run: invalid value \"%s\" for --watch-list: want "
				    "auto, true or false\n", optarg);
				return -1;
			}
			break;
		case OPT_QPS:
			errno = 0;
			opts->qps = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || errno != 0 || !(opts->qps > 0) ||
			    opts->qps > 1e6) {
				fprintf(err, "sqlkcm run: invalid value \"%s\" for --kube-api-qps: want a "
				    "number above 0\n", optarg);
				return -1;
			}
			break;
		case OPT_BURST:
			if (parse_long("--kube-api-burst", optarg, 1, 1000000, &opts->burst, err) != 0)
				return -1;
			break;
		case OPT_RS_SYNCS:
			if (parse_long("--concurrent-replicaset-syncs", optarg, 1, 10000,
			    &opts->replicaset_syncs, err) != 0)
				return -1;
			break;
		case 'v':
			if (parse_long("--v", optarg, 0, 10, &opts->verbosity, err) != 0)
				return -1;
			break;
		case 'h':
			fputs(run_usage, out);
			return 1;
		case ':':
			fprintf(err, "sqlkcm run: %s needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(err, "sqlkcm run: unknown flag %s (see sqlkcm run --help)\n",
			    argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(err, "sqlkcm run: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	return check_controllers(opts->controllers, err);
}

/* Leaves the loop once the executor has nothing in flight, or the deadline has passed. */
static void
run_drain(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct timeval now, tick = { 0, 50 * 1000 };
	int left = d->executor != NULL ? executor_in_flight(d->executor) : 0;

	(void)fd;
	(void)what;
	gettimeofday(&now, NULL);
	if (left > 0 && timercmp(&now, &d->drain_deadline, <)) {
		evtimer_add(d->drain_timer, &tick);
		return;
	}
	if (left > 0)
		log_warning("stopping with %d syncs still in flight; their expectations are "
		    "stored", left);
	informer_set_stop(d->informers);
	event_base_loopexit(d->base, NULL);
}

/* SIGTERM, SIGINT: take no new work, let the syncs in flight finish (bounded), stop the
 * watches, commit, leave the loop. */
static void
run_stop(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;
	struct timeval bound = { RUN_DRAIN_SECONDS, 0 }, now;

	(void)what;
	if (d->drain_timer != NULL)
		return;	/* already stopping */
	log_info("received signal %d: stopping", (int)sig);
	if (d->manager != NULL)
		manager_stop(d->manager);
	gettimeofday(&now, NULL);
	timeradd(&now, &bound, &d->drain_deadline);
	d->drain_timer = evtimer_new(d->base, run_drain, d);
	run_drain(-1, 0, d);
}

/* SIGHUP: reopen the record file. */
static void
run_reopen(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;
	char *error = NULL;

	(void)sig;
	(void)what;
	if (d->recorder == NULL)
		return;
	if (recorder_reopen(d->recorder, &error) != 0) {
		log_error("%s", error);
		free(error);
	} else {
		log_info("reopened the record file");
	}
}

int
run_command(int argc, char **argv, FILE *out, FILE *err)
{
	struct run_options opts = { 0 };
	struct store_options sopts = { 0, 0 };
	struct client_options copts;
	struct daemon d = { 0 };
	struct kube_config *kc = NULL;
	struct store *store = NULL;
	struct client *client = NULL, *controller_client = NULL, *events_client = NULL;
	struct eventrecorder *events = NULL;
	int *enabled = xcalloc((size_t)controller_type_count, sizeof *enabled);
	int *workers = xcalloc((size_t)controller_type_count, sizeof *workers);
	int any = 0;
	struct manager_options mopts;
	struct event *sigterm = NULL, *sigint = NULL, *sighup = NULL;
	struct informer_handlers handlers;
	char *error = NULL;
	int rc, status = EXIT_FAILURE_RUN;

	rc = run_parse(argc, argv, &opts, out, err);
	if (rc != 0) {
		free(enabled);
		free(workers);
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	}
	controller_parse_list(opts.controllers, enabled, NULL);
	for (int i = 0; i < controller_type_count; i++) {
		any |= enabled[i];
		if (strcmp(controller_types[i]->name, "replicaset") == 0)
			workers[i] = (int)opts.replicaset_syncs;
	}
	log_verbosity = (int)opts.verbosity;
	signal(SIGPIPE, SIG_IGN);

	if (kube_config_resolve(opts.kubeconfig, opts.context, opts.master, &kc, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	sopts.cache_size_kib = (int)opts.db_cache_mib * 1024;
	if (store_open(opts.db, &sopts, &store, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	d.base = event_base_new();
	if (d.base == NULL) {
		fprintf(err, "sqlkcm run: cannot create the event loop\n");
		goto out;
	}
	copts.qps = opts.qps;
	copts.burst = (int)opts.burst;
	client = client_new(d.base, kc, &copts, &error);
	if (client == NULL) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	d.informers = informer_set_new(d.base, client, store);
	informer_set_watch_list(d.informers, opts.watch_list);
	if (any) {
		/* As kube-controller-manager, each controller writes through a client of its
		 * own, with its own rate limit; events go through another. */
		controller_client = client_new(d.base, kc, &copts, &error);
		events_client = controller_client != NULL ?
		    client_new(d.base, kc, &copts, &error) : NULL;
		if (events_client == NULL) {
			fprintf(err, "sqlkcm run: %s\n", error);
			goto out;
		}
		events = eventrecorder_new(events_client, "replicaset-controller");
		d.executor = executor_new(controller_client, store, d.informers, events);
		manager_add_informers(enabled, d.informers);
		mopts.enabled = enabled;
		mopts.workers = workers;
		mopts.metrics = NULL;
		mopts.client = controller_client;
		d.manager = manager_new(d.base, store, d.informers, d.executor, &mopts, &error);
		if (d.manager == NULL) {
			fprintf(err, "sqlkcm run: %s\n", error);
			goto out;
		}
	} else {
		/* No controller: mirror everything sqlkcm knows. */
		for (int i = 0; i < resource_count; i++)
			informer_set_add(d.informers, resource_all[i]);
	}
	if (opts.record != NULL) {
		d.recorder = recorder_open(opts.record, &error);
		if (d.recorder == NULL) {
			fprintf(err, "sqlkcm run: %s\n", error);
			goto out;
		}
		handlers = recorder_handlers(d.recorder);
		informer_set_add_handlers(d.informers, &handlers);
	}
	sigterm = evsignal_new(d.base, SIGTERM, run_stop, &d);
	sigint = evsignal_new(d.base, SIGINT, run_stop, &d);
	sighup = evsignal_new(d.base, SIGHUP, run_reopen, &d);
	evsignal_add(sigterm, NULL);
	evsignal_add(sigint, NULL);
	evsignal_add(sighup, NULL);

	log_info("sqlkcm %s starting server=%s db=%s controllers=\"%s\" qps=%g burst=%ld",
	    PACKAGE_VERSION, client_server(client), opts.db, opts.controllers, opts.qps,
	    opts.burst);
	if (informer_set_start(d.informers, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	if (d.manager != NULL)
		manager_start(d.manager);
	event_base_dispatch(d.base);
	{
		const struct informer_stats *st = informer_set_stats(d.informers);

		log_info("stopped: %lu events applied, %lu batches, %lu lists, %lu watches "
		    "(%lu WatchList), syncs: %lu by WatchList, %lu by LIST, %lu WatchList "
		    "fallbacks, %lu errors", st->events, st->batches, st->lists, st->watches,
		    st->watch_lists, st->syncs_by_watch_list, st->syncs_by_list,
		    st->watch_list_fallbacks, st->errors);
	}
	status = EXIT_OK;
out:
	free(error);
	if (sigterm != NULL)
		event_free(sigterm);
	if (sigint != NULL)
		event_free(sigint);
	if (sighup != NULL)
		event_free(sighup);
	if (d.drain_timer != NULL)
		event_free(d.drain_timer);
	manager_free(d.manager);
	executor_free(d.executor);
	eventrecorder_free(events);
	informer_set_free(d.informers);
	recorder_close(d.recorder);
	client_free(events_client);
	client_free(controller_client);
	client_free(client);
	free(enabled);
	free(workers);
	store_close(store);
	kube_config_free(kc);
	if (d.base != NULL)
		event_base_free(d.base);
	return status;
}
