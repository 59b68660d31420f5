/*
 * run.c - `sqlkcm run`: the daemon.
 *
 * Parses the flags (kube-controller-manager's names where the meaning is the same), then
 * builds the process from the bottom up on one libevent loop: the kubeconfig, the store,
 * the REST client, the informers, the event recorder, the leader elector.
 *
 * Health and metrics: one metrics registry is shared by the REST clients, the informers,
 * the store, the workqueues and the process collector; the HTTP server (httpserver.c)
 * serves it with the health checks and the effective configuration from the start, before
 * the caches sync. /readyz fails until they have, and again once the daemon is stopping.
 *
 * Leader election (on by default, as kube-controller-manager's): the informers start at
 * once, so a standby keeps a warm cache, but the controllers start only when the lease
 * is ours. Losing it stops them and exits 1, for the supervisor to restart the process
 * as a standby. With no controller enabled (--controllers ''), sqlkcm only mirrors the
 * cluster and writes nothing, so it takes no lease: any number of mirrors may run beside
 * the leader.
 *
 * SIGTERM or SIGINT: the controllers take no new key and send no further creation batch,
 * the requests in flight finish (up to RUN_DRAIN_SECONDS), the lease is released
 * (holderIdentity emptied) so a standby takes over at once, the watches stop, what was applied is committed, the write-ahead log is
 * checkpointed into the database file, and the process exits 0. SIGHUP reopens the
 * --record file, for log rotation.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "client.h"
#include "clientbuilder.h"
#include "controller.h"
#include "daemonmetrics.h"
#include "kubeevents.h"
#include "executor.h"
#include "exitstatus.h"
#include "httpauth.h"
#include "httpserver.h"
#include "informer.h"
#include "kcmflags.h"
#include "kubeconfig.h"
#include "leaderelection.h"
#include "log.h"
#include "manager.h"
#include "metadatacache.h"
#include "metrics.h"
#include "registry.h"
#include "watchrecord.h"
#include "resource.h"
#include "run.h"
#include "store.h"
#include "timeutil.h"
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
    "  --db FILE                 the cache database (default: sqlkcm.db), made 0600\n"
    "                            with its -wal and -shm files, and locked through\n"
    "                            FILE-lock: one daemon writes a cache at a time\n"
    "  --rebuild-cache           if --db is not an sqlkcm cache (not SQLite, another\n"
    "                            program's database, damaged), move it aside to\n"
    "                            FILE.corrupt-TIME and rebuild the cache by listing the\n"
    "                            cluster; without it such a file is refused\n"
    "  --db-cache-mib N          SQLite page cache bound in MiB (default: 2, as\n"
    "                            SQLite's own; the kernel caches the file as well)\n"
    "  --record FILE             append every applied event to FILE as a JSON line\n"
    "                            (the input of `sqlkcm replay`); SIGHUP reopens it\n"
    "  --controllers LIST        controllers to run: '*', NAME or -NAME, comma-separated\n"
    "                            (default: '*'; `sqlkcm run --help` lists them). ''\n"
    "                            runs no controller and mirrors every resource sqlkcm knows\n"
    "  --concurrent-NAME-syncs N objects a controller syncs at once (each controller's\n"
    "                            flag and default: `sqlkcm run --help`)\n"
    "  --watch-list MODE         how informers get the initial state: auto (WatchList,\n"
    "                            a paginated LIST if the server refuses it), true\n"
    "                            (WatchList only) or false (LIST only) (default: auto)\n"
    "  --watch-batch-period DURATION\n"
    "                            how long informers hold what the watches of Leases,\n"
    "                            Nodes and the garbage collector's metadata bring before\n"
    "                            applying it, in one transaction; 0 applies each as it\n"
    "                            arrives (default: 100ms, at most 10s)\n"
    "  --kube-api-qps N          requests per second to the apiserver (default: 20)\n"
    "  --kube-api-burst N        requests allowed in a burst (default: 30)\n"
    "  --bind-address IP         address the HTTP endpoints listen on; 0.0.0.0 or ::\n"
    "                            for every interface (default: 127.0.0.1)\n"
    "  --secure-port N           HTTPS port of /healthz, /livez, /readyz, /metrics and\n"
    "                            /configz; 0 turns HTTPS off (default: 10257)\n"
    "  --port N                  plain HTTP port of the same endpoints; 0 turns it off\n"
    "                            (default: 0)\n"
    "  --tls-cert-file FILE      PEM certificate (chain) for HTTPS (default: a\n"
    "                            self-signed one made in memory at start)\n"
    "  --tls-private-key-file FILE\n"
    "                            PEM private key of --tls-cert-file\n"
    "  --authorization-always-allow-paths LIST\n"
    "                            HTTPS paths served to anyone, comma-separated ('/x*'\n"
    "                            for a prefix); any other request needs a bearer token\n"
    "                            the apiserver accepts (TokenReview) for a user it\n"
    "                            allows (SubjectAccessReview), as kube-controller-\n"
    "                            manager's (default: /healthz,/readyz,/livez)\n"
    "  --use-service-account-credentials[=BOOL]\n"
    "                            each controller writes and records its events as its\n"
    "                            own ServiceAccount in kube-system, named as kube's,\n"
    "                            with tokens from the TokenRequest API renewed at 80%\n"
    "                            of their life; the informers keep the kubeconfig's\n"
    "                            user (default: false)\n"
    "  --leader-elect[=BOOL]     run the controllers only while holding a Lease, so that\n"
    "                            several sqlkcm can run for availability (default: true;\n"
    "                            not used with --controllers '')\n"
    "  --leader-elect-lease-duration DURATION\n"
    "                            how long a standby waits, after it last saw the lease\n"
    "                            change, before it takes it over (default: 15s)\n"
    "  --leader-elect-renew-deadline DURATION\n"
    "                            how long the leader retries a renewal before it stops\n"
    "                            leading and exits 1 (default: 10s)\n"
    "  --leader-elect-retry-period DURATION\n"
    "                            time between attempts to acquire or renew (default: 2s)\n"
    "  --leader-elect-resource-lock KIND\n"
    "                            the lock's kind; only leases (default: leases)\n"
    "  --leader-elect-resource-namespace NS\n"
    "                            the Lease's namespace (default: kube-system)\n"
    "  --leader-elect-resource-name NAME\n"
    "                            the Lease's name (default: sqlkcm)\n"
    "                            DURATION is Go's: 15s, 1m30s, 500ms\n"
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
	double watch_batch_period;
	long db_cache_mib;
	int rebuild_cache;
	long *workers;		/* per controller type: its --concurrent-*-syncs */
	struct buf ignored;	/* kube-controller-manager flags given that sqlkcm ignores */
	double qps;
	long burst;
	long verbosity;
	const char *bind_address;
	long secure_port;
	long port;
	const char *tls_cert_file;
	const char *tls_key_file;
	const char *always_allow_paths;
	int leader_elect;
	int use_sa_credentials;	/* each controller acts as its own ServiceAccount */
	int *disabled;		/* per controller type: its enable_flag said false */
	struct controller_config *configs;	/* per controller type: its flags' values */
	double lease_duration;
	double renew_deadline;
	double retry_period;
	const char *lease_namespace;
	const char *lease_name;
};

/* How long the first read of discovery may hold the informers' start back. */
#define RUN_DISCOVERY_WAIT_SECONDS 30.0

/* How long a stopping daemon waits for requests in flight. */
#define RUN_DRAIN_SECONDS 10
/* While the apiserver does not answer: connection attempts a second, all clients together. */
#define RUN_OUTAGE_ATTEMPTS_PER_SECOND 2.0

/* Everything the daemon holds, for the signal callbacks. */
struct daemon {
	struct event_base *base;
	struct informer_set *informers;
	struct metadatacache *metadata;	/* every resource's metadata; NULL: not needed */
	struct watchrecord *watchrecord;
	struct manager *manager;
	struct executor *executor;
	struct event *drain_timer;
	struct timeval drain_deadline;
	struct metrics_registry *metrics;
	struct process_metrics *process_metrics;
	struct httpserver *http;
	struct httpauth *auth;		/* who may ask over HTTPS; NULL without HTTPS */
	struct leader_elector *elector;	/* NULL: no leader election */
	struct metrics_series *leading;	/* leader_election_master_status */
	int lost;			/* the lease was lost: exit 1 */
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

/* Parses a Go boolean (strconv.ParseBool's spellings) for flag. */
static int
parse_bool(const char *flag, const char *text, int *out, FILE *err)
{
	if (text_parse_bool(text, out) == 0)
		return 0;
	fprintf(err, "sqlkcm run: invalid value \"%s\" for %s: want true or false\n", text,
	    flag);
	return -1;
}

/* Parses a Go duration ("15s", "1m30s", "500ms") for flag into seconds. */
static int
parse_duration(const char *flag, const char *text, double *out, FILE *err)
{
	if (time_parse_duration(text, out) != 0) {
		fprintf(err, "sqlkcm run: invalid value \"%s\" for %s: want a duration such as "
		    "15s, 1m30s or 500ms\n", text, flag);
		return -1;
	}
	return 0;
}

/* Checks the leader election flags together, as kube-controller-manager does. */
static int
check_leader_election(const struct run_options *opts, FILE *err)
{
	struct leader_config lc;
	char *error = NULL;

	if (!opts->leader_elect)
		return 0;
	memset(&lc, 0, sizeof lc);
	lc.lease_namespace = opts->lease_namespace;
	lc.lease_name = opts->lease_name;
	lc.identity = "check";
	lc.lease_duration = opts->lease_duration;
	lc.renew_deadline = opts->renew_deadline;
	lc.retry_period = opts->retry_period;
	if (leader_config_check(&lc, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		free(error);
		return -1;
	}
	return 0;
}

/* Checks --controllers: every name must be one sqlkcm or kube-controller-manager has. */
static int
check_controllers(const char *list, FILE *err)
{
	int *enabled = xcalloc((size_t)controller_type_count, sizeof *enabled);
	char *error = NULL;
	int rc = controller_parse_list(list, enabled, NULL, &error);

	if (rc != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		free(error);
	}
	free(enabled);
	return rc;
}

/* Checks --bind-address: an IPv4 or IPv6 address. */
static int
run_check_address(const char *text, FILE *err)
{
	unsigned char addr[sizeof(struct in6_addr)];

	if (inet_pton(AF_INET, text, addr) == 1 || inet_pton(AF_INET6, text, addr) == 1)
		return 0;
	fprintf(err, "sqlkcm run: invalid value \"%s\" for --bind-address: want an IPv4 or "
	    "IPv6 address\n", text);
	return -1;
}

/* Checks --authorization-always-allow-paths: paths, each starting with '/', with '*' only
 * at the end of one. */
static int
run_check_paths(const char *text, FILE *err)
{
	const char *p = text;

	while (*p != '\0') {
		size_t len = strcspn(p, ",");
		const char *star = memchr(p, '*', len);

		if (len > 0 && (*p != '/' || (star != NULL && star != p + len - 1))) {
			fprintf(err, "sqlkcm run: invalid value \"%s\" for "
			    "--authorization-always-allow-paths: each path starts with '/' and may "
			    "end with '*'\n", text);
			return -1;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Prints the controllers, each with its workers flag and default, after the usage. */
void
run_usage_controllers(FILE *out)
{
	fputs("\nControllers (--controllers NAME) and their flags:\n", out);
	for (int i = 0; i < controller_type_count; i++) {
		const struct controller_type *t = controller_types[i];

		fprintf(out, "  %s\n", t->name);
		if (t->workers_flag != NULL)
			fprintf(out, "      --%s N\n                            %s (default: %d)\n",
			    t->workers_flag, t->workers_help, t->default_workers);
		if (t->enable_flag != NULL)
			fprintf(out, "      --%s[=BOOL]\n                            false turns "
			    "%s off whatever --controllers says (default: true)\n",
			    t->enable_flag, t->name);
		for (const struct controller_flag *f = t->flags; f != NULL && f->name != NULL;
		    f++)
			fprintf(out, "      --%s%s\n                            %s (default: %s)\n",
			    f->name, controller_flag_metavar(f), f->help,
			    *f->default_value != '\0' ? f->default_value : "none");
	}
}

/* Returns 1 if name is among the first n options. */
static int
run_longopts_have(const struct option *o, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(o[i].name, name) == 0)
			return 1;
	}
	return 0;
}

/* The long options (malloc'd): the fixed ones; each controller type's workers flag, whose
 * value is OPT_WORKERS plus the type's index, and its enable flag if it has one
 * (OPT_ENABLE plus the index); and every other flag of
 * kube-controller-manager (kcmflags.c), whose value is OPT_KCM plus its index there, so
 * that its command line is accepted as it is. */
#define OPT_WORKERS 1024
#define OPT_ENABLE 1536
#define OPT_FLAG 4096		/* plus the flag's code (controller_flag_options) */
#define OPT_KCM 2048
static struct option *
run_longopts_new(const struct option *fixed)
{
	size_t n = 0;
	struct option *o;

	while (fixed[n].name != NULL)
		n++;
	o = xcalloc(n + 2 * (size_t)controller_type_count + (size_t)controller_flag_count() +
	    kcm_flag_count + 1, sizeof *o);
	memcpy(o, fixed, n * sizeof *o);
	for (int i = 0; i < controller_type_count; i++) {
		if (controller_types[i]->workers_flag != NULL) {
			o[n].name = controller_types[i]->workers_flag;
			o[n].has_arg = required_argument;
			o[n++].val = OPT_WORKERS + i;
		}
		if (controller_types[i]->enable_flag != NULL) {
			o[n].name = controller_types[i]->enable_flag;
			o[n].has_arg = optional_argument;
			o[n++].val = OPT_ENABLE + i;
		}
	}
	n = controller_flag_options(o, n, OPT_FLAG);
	for (size_t i = 0; i < kcm_flag_count; i++) {
		if (run_longopts_have(o, n, kcm_flags[i].name))
			continue;	/* sqlkcm's own */
		o[n].name = kcm_flags[i].name;
		o[n].has_arg = kcm_flags[i].takes_value ? required_argument : optional_argument;
		o[n++].val = OPT_KCM + (int)i;
	}
	return o;
}

/* Parses argv into opts; returns -1 (message written) on a bad command line, 1 for --help. */
/* --- the flags, as a table ------------------------------------------------------------- */

/* What a flag's value is, and where it goes in struct run_options. */
enum run_flag_kind {
	FLAG_STRING,		/* const char *, as given */
	FLAG_FILE,		/* const char *, not empty */
	FLAG_LONG,		/* long, from min to max */
	FLAG_DURATION,		/* double seconds, a Go duration */
	FLAG_BOOL,		/* int, a Go bool; alone (--flag) is true */
	FLAG_SET,		/* int, set to 1; takes no value */
	FLAG_CHECKED,		/* const char *, once check accepts it */
	FLAG_CUSTOM,		/* parse does it all */
};

struct run_flag {
	const char *name;
	enum run_flag_kind kind;
	size_t offset;		/* of the field in struct run_options; NO_FIELD: none */
	long min, max;		/* FLAG_LONG */
	/* FLAG_CHECKED: 0 when value is good, else -1 with a message on err. FLAG_CUSTOM:
	 * parses value into opts, the same way. */
	int (*check)(const char *value, FILE *err);
	int (*parse)(const char *value, struct run_options *opts, FILE *err);
};

static int
parse_watch_list(const char *value, struct run_options *opts, FILE *err)
{
	if (informer_watch_list_parse(value, &opts->watch_list) == 0)
		return 0;
	fprintf(err, "sqlkcm run: invalid value \"%s\" for --watch-list: want auto, true or "
	    "false\n", value);
	return -1;
}

static int
parse_qps(const char *value, struct run_options *opts, FILE *err)
{
	char *end;

	errno = 0;
	opts->qps = strtod(value, &end);
	if (*value == '\0' || *end != '\0' || errno != 0 || !(opts->qps > 0) || opts->qps > 1e6) {
		fprintf(err, "sqlkcm run: invalid value \"%s\" for --kube-api-qps: want a number "
		    "above 0\n", value);
		return -1;
	}
	return 0;
}

static int
check_lock(const char *value, FILE *err)
{
	if (strcmp(value, "leases") == 0)
		return 0;
	fprintf(err, "sqlkcm run: invalid value \"%s\" for --leader-elect-resource-lock: only "
	    "leases is supported\n", value);
	return -1;
}

#define FIELD(f) offsetof(struct run_options, f)
#define NO_FIELD ((size_t)-1)

/* sqlkcm's own flags, as kube-controller-manager spells them; --v and --help are apart. */
static const struct run_flag run_flags[] = {
	{ "kubeconfig", FLAG_STRING, FIELD(kubeconfig), 0, 0, NULL, NULL },
	{ "context", FLAG_STRING, FIELD(context), 0, 0, NULL, NULL },
	{ "master", FLAG_STRING, FIELD(master), 0, 0, NULL, NULL },
	{ "db", FLAG_FILE, FIELD(db), 0, 0, NULL, NULL },
	{ "db-cache-mib", FLAG_LONG, FIELD(db_cache_mib), 1, 65536, NULL, NULL },
	{ "rebuild-cache", FLAG_SET, FIELD(rebuild_cache), 0, 0, NULL, NULL },
	{ "record", FLAG_STRING, FIELD(record), 0, 0, NULL, NULL },
	{ "controllers", FLAG_STRING, FIELD(controllers), 0, 0, NULL, NULL },
	{ "watch-list", FLAG_CUSTOM, NO_FIELD, 0, 0, NULL, parse_watch_list },
	{ "watch-batch-period", FLAG_DURATION, FIELD(watch_batch_period), 0, 0, NULL, NULL },
	{ "kube-api-qps", FLAG_CUSTOM, NO_FIELD, 0, 0, NULL, parse_qps },
	{ "kube-api-burst", FLAG_LONG, FIELD(burst), 1, 1000000, NULL, NULL },
	{ "bind-address", FLAG_CHECKED, FIELD(bind_address), 0, 0, run_check_address, NULL },
	{ "secure-port", FLAG_LONG, FIELD(secure_port), 0, 65535, NULL, NULL },
	{ "port", FLAG_LONG, FIELD(port), 0, 65535, NULL, NULL },
	{ "tls-cert-file", FLAG_STRING, FIELD(tls_cert_file), 0, 0, NULL, NULL },
	{ "tls-private-key-file", FLAG_STRING, FIELD(tls_key_file), 0, 0, NULL, NULL },
	{ "authorization-always-allow-paths", FLAG_CHECKED, FIELD(always_allow_paths), 0, 0,
	  run_check_paths, NULL },
	{ "leader-elect", FLAG_BOOL, FIELD(leader_elect), 0, 0, NULL, NULL },
	{ "use-service-account-credentials", FLAG_BOOL, FIELD(use_sa_credentials), 0, 0, NULL,
	  NULL },
	{ "leader-elect-lease-duration", FLAG_DURATION, FIELD(lease_duration), 0, 0, NULL, NULL },
	{ "leader-elect-renew-deadline", FLAG_DURATION, FIELD(renew_deadline), 0, 0, NULL, NULL },
	{ "leader-elect-retry-period", FLAG_DURATION, FIELD(retry_period), 0, 0, NULL, NULL },
	{ "leader-elect-resource-lock", FLAG_CHECKED, NO_FIELD, 0, 0, check_lock, NULL },
	{ "leader-elect-resource-namespace", FLAG_STRING, FIELD(lease_namespace), 0, 0, NULL,
	  NULL },
	{ "leader-elect-resource-name", FLAG_STRING, FIELD(lease_name), 0, 0, NULL, NULL },
};
#define RUN_FLAG_COUNT (sizeof run_flags / sizeof run_flags[0])

/* The getopt values: sqlkcm's flags from OPT_OWN (their index in run_flags), the
 * controllers' workers flags from OPT_WORKERS, kube-controller-manager's others from
 * OPT_KCM. */
#define OPT_OWN 256

/* Sets flag f's value in opts; 0, or -1 with a message on err. */
static int
run_flag_set(const struct run_flag *f, const char *value, struct run_options *opts, FILE *err)
{
	char *field = f->offset != NO_FIELD ? (char *)opts + f->offset : NULL;
	char *flag = xasprintf("--%s", f->name);
	int rc = 0;

	switch (f->kind) {
	case FLAG_FILE:
		if (*value == '\0') {
			fprintf(err, "sqlkcm run: %s needs a file name\n", flag);
			rc = -1;
			break;
		}
		/* FALLTHROUGH */
	case FLAG_STRING:
		*(const char **)(void *)field = value;
		break;
	case FLAG_LONG:
		rc = parse_long(flag, value, f->min, f->max, (long *)(void *)field, err);
		break;
	case FLAG_DURATION:
		rc = parse_duration(flag, value, (double *)(void *)field, err);
		break;
	case FLAG_BOOL:
		if (value == NULL)
			*(int *)(void *)field = 1;
		else
			rc = parse_bool(flag, value, (int *)(void *)field, err);
		break;
	case FLAG_SET:
		*(int *)(void *)field = 1;
		break;
	case FLAG_CHECKED:
		rc = f->check(value, err);
		if (rc == 0 && f->offset != NO_FIELD)
			*(const char **)(void *)field = value;
		break;
	case FLAG_CUSTOM:
		rc = f->parse(value, opts, err);
		break;
	}
	free(flag);
	return rc;
}

/* A flag of kube-controller-manager that sqlkcm ignores: noted, once its value is checked
 * (a bool's value must still be one, as pflag wants). */
static int
run_kcm_flag(const struct kcm_flag *f, const char *value, struct run_options *opts, FILE *err)
{
	char *flag = xasprintf("--%s", f->name);
	int ignored, rc = !f->takes_value && value != NULL ?
	    parse_bool(flag, value, &ignored, err) : 0;

	if (rc == 0)
		buf_printf(&opts->ignored, "%s%s", opts->ignored.len > 0 ? ", " : "", flag);
	free(flag);
	return rc;
}

static int
run_parse_options(int argc, char **argv, struct run_options *opts,
    const struct option *longopts, FILE *out, FILE *err);

static int
run_parse(int argc, char **argv, struct run_options *opts, FILE *out, FILE *err)
{
	struct option *own = xcalloc(RUN_FLAG_COUNT + 3, sizeof *own), *all;
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < RUN_FLAG_COUNT; i++) {
		own[n].name = run_flags[i].name;
		own[n].has_arg = run_flags[i].kind == FLAG_SET ? no_argument :
		    run_flags[i].kind == FLAG_BOOL ? optional_argument : required_argument;
		own[n++].val = OPT_OWN + (int)i;
	}
	own[n++] = (struct option){ "v", required_argument, NULL, 'v' };
	own[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	all = run_longopts_new(own);
	opts->workers = xcalloc((size_t)controller_type_count, sizeof *opts->workers);
	opts->disabled = xcalloc((size_t)controller_type_count, sizeof *opts->disabled);
	opts->configs = controller_configs_new();
	buf_init(&opts->ignored);
	for (int i = 0; i < controller_type_count; i++)
		opts->workers[i] = controller_types[i]->default_workers;
	rc = run_parse_options(argc, argv, opts, all, out, err);
	free(all);
	free(own);
	return rc;
}

static int
run_parse_options(int argc, char **argv, struct run_options *opts,
    const struct option *longopts, FILE *out, FILE *err)
{
	int c;

	opts->db = "sqlkcm.db";
	opts->controllers = "*";
	opts->db_cache_mib = 2;
	opts->watch_batch_period = 0.1;
	opts->qps = 20;
	opts->burst = 30;
	opts->bind_address = "127.0.0.1";
	opts->secure_port = 10257;
	opts->always_allow_paths = HTTPAUTH_ALWAYS_ALLOW_PATHS;
	opts->leader_elect = 1;
	opts->lease_duration = 15;
	opts->renew_deadline = 10;
	opts->retry_period = 2;
	opts->lease_namespace = "kube-system";
	opts->lease_name = "sqlkcm";
	opterr = 0;
	optind = 0;	/* GNU: start over, whoever parsed before */
	while ((c = getopt_long(argc, argv, "+:v:h", longopts, NULL)) != -1) {
		int rc = 0;

		if (c == 'h') {
			fputs(run_usage, out);
			run_usage_controllers(out);
			return 1;
		} else if (c == ':') {
			fprintf(err, "sqlkcm run: %s needs a value\n", argv[optind - 1]);
			return -1;
		} else if (c == 'v') {
			rc = parse_long("--v", optarg, 0, 10, &opts->verbosity, err);
		} else if (c >= OPT_OWN && c < OPT_OWN + (int)RUN_FLAG_COUNT) {
			rc = run_flag_set(&run_flags[c - OPT_OWN], optarg, opts, err);
		} else if (c >= OPT_WORKERS && c < OPT_WORKERS + controller_type_count) {
			char *flag = xasprintf("--%s", controller_types[c - OPT_WORKERS]->workers_flag);
			rc = parse_long(flag, optarg, 1, 10000, &opts->workers[c - OPT_WORKERS], err);
			free(flag);
		} else if (c >= OPT_ENABLE && c < OPT_ENABLE + controller_type_count) {
			char *flag = xasprintf("--%s", controller_types[c - OPT_ENABLE]->enable_flag);
			int on = 1;

			rc = optarg != NULL ? parse_bool(flag, optarg, &on, err) : 0;
			opts->disabled[c - OPT_ENABLE] = !on;
			free(flag);
		} else if (c >= OPT_FLAG && c < OPT_FLAG + CONTROLLER_FLAG_CODES) {
			char *why = NULL;

			if (controller_configs_set(opts->configs, c - OPT_FLAG, optarg,
			    &why) != 0) {
				fprintf(err, "sqlkcm run: %s\n", why);
				free(why);
				return -1;
			}
		} else if (c >= OPT_KCM && c < OPT_KCM + (int)kcm_flag_count) {
			rc = run_kcm_flag(&kcm_flags[c - OPT_KCM], optarg, opts, err);
		} else {
			fprintf(err, "sqlkcm run: unknown flag %s (see sqlkcm run --help)\n",
			    argv[optind - 1]);
			return -1;
		}
		if (rc != 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(err, "sqlkcm run: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if ((opts->tls_cert_file == NULL) != (opts->tls_key_file == NULL)) {
		fprintf(err, "sqlkcm run: --tls-cert-file and --tls-private-key-file go together\n");
		return -1;
	}
	if (opts->secure_port != 0 && opts->secure_port == opts->port) {
		fprintf(err, "sqlkcm run: --secure-port and --port are both %ld\n", opts->port);
		return -1;
	}
	if (opts->watch_batch_period < 0 || opts->watch_batch_period > 10) {
		fprintf(err, "sqlkcm run: --watch-batch-period must be from 0 to 10s\n");
		return -1;
	}
	if (check_controllers(opts->controllers, err) != 0)
		return -1;
	return check_leader_election(opts, err);
}

/* The last step of a stop: the watches stop, their last events are committed, and the
 * loop is left. */
static void
run_released(void *arg)
{
	struct daemon *d = arg;

	informer_set_stop(d->informers);
	event_base_loopexit(d->base, NULL);
}

/* The lease is ours: the controllers start (once the caches have synced). */
static void
run_started_leading(void *arg)
{
	struct daemon *d = arg;

	metrics_gauge_set(d->leading, 1);
	if (d->drain_timer == NULL && d->manager != NULL)
		manager_start(d->manager);
}

/* The lease is lost: another sqlkcm may be acting already, so the controllers stop at
 * once, without waiting for what is in flight, and the process exits 1. */
static void
run_stopped_leading(void *arg)
{
	struct daemon *d = arg;

	d->lost = 1;
	metrics_gauge_set(d->leading, 0);
	if (d->manager != NULL)
		manager_stop(d->manager);
	informer_set_stop(d->informers);
	event_base_loopbreak(d->base);
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
	if (d->elector != NULL) {
		/* Nothing of ours is in flight any more: a standby may take over. */
		leader_elector_release(d->elector, run_released, d);
		return;
	}
	run_released(d);
}

/* SIGTERM, SIGINT: take no new work (no new key, no further creation batch), let the
 * requests in flight finish (bounded), release the lease, stop the watches, commit, leave
 * the loop. */
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
	if (d->executor != NULL)
		executor_stop(d->executor);
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
	if (d->watchrecord == NULL)
		return;
	if (watchrecord_reopen(d->watchrecord, &error) != 0) {
		log_error("%s", error);
		free(error);
	} else {
		log_info("reopened the record file");
	}
}

/* --- health and metrics ------------------------------------------------------------- */

/* /readyz "informer-sync": the caches hold complete lists. (With leader election, a
 * standby that starts no informer must pass here: ready means "synced leader or standby".) */
static int
run_check_synced(void *arg, char **reason)
{
	struct daemon *d = arg;
	struct buf names;

	if (d->informers == NULL) {
		*reason = xstrdup("the informers have not started");
		return -1;
	}
	buf_init(&names);
	if (informer_set_describe_unsynced(d->informers, &names) == 0) {
		buf_free(&names);
		return 0;
	}
	*reason = xasprintf("caches not synced: %s", names.data);
	buf_free(&names);
	return -1;
}

/* /readyz "informer-watch": every informer is watching (or listing); none is backing off
 * after a failure or a dead connection. */
static int
run_check_watching(void *arg, char **reason)
{
	struct daemon *d = arg;
	struct buf down;

	if (d->informers == NULL)
		return 0;	/* informer-sync says why */
	buf_init(&down);
	if (informer_set_describe_down(d->informers, &down) == 0) {
		buf_free(&down);
		return 0;
	}
	*reason = xasprintf("not watching: %s", down.data);
	buf_free(&down);
	return -1;
}

/* /readyz "shutdown": fails once a signal has asked the daemon to stop. */
static int
run_check_running(void *arg, char **reason)
{
	struct daemon *d = arg;

	if (d->drain_timer == NULL)
		return 0;
	*reason = xstrdup("the daemon is stopping");
	return -1;
}

/* Returns the effective configuration as a JSON object, malloc'd: every flag under its
 * name with its value, defaults included. Nothing secret: paths, never what they hold. */
static char *
run_configz(const struct run_options *opts, const struct client *client)
{
	cJSON *root = cJSON_CreateObject(), *flags = cJSON_AddObjectToObject(root, "flags");
	char *text;

#define ADD_STRING(name, value) do {						\
	if ((value) != NULL)							\
		cJSON_AddStringToObject(flags, name, value);			\
	else									\
		cJSON_AddNullToObject(flags, name);				\
} while (0)
	ADD_STRING("kubeconfig", opts->kubeconfig);
	ADD_STRING("context", opts->context);
	ADD_STRING("master", opts->master);
	ADD_STRING("db", opts->db);
	cJSON_AddNumberToObject(flags, "db-cache-mib", (double)opts->db_cache_mib);
	cJSON_AddNumberToObject(flags, "watch-batch-period", opts->watch_batch_period);
	cJSON_AddBoolToObject(flags, "rebuild-cache", opts->rebuild_cache);
	ADD_STRING("record", opts->record);
	ADD_STRING("controllers", opts->controllers);
	for (int i = 0; i < controller_type_count; i++) {
		if (controller_types[i]->workers_flag != NULL)
			cJSON_AddNumberToObject(flags, controller_types[i]->workers_flag,
			    (double)opts->workers[i]);
		if (controller_types[i]->enable_flag != NULL)
			cJSON_AddBoolToObject(flags, controller_types[i]->enable_flag,
			    !opts->disabled[i]);
		for (int j = 0; controller_types[i]->flags != NULL &&
		    controller_types[i]->flags[j].name != NULL; j++) {
			const struct controller_flag *f = &controller_types[i]->flags[j];
			/* A flag two controllers share (--root-ca-file) appears once. */
			if (cJSON_GetObjectItemCaseSensitive(flags, f->name) != NULL)
				continue;
			const char *v = opts->configs[i].flags[j] != NULL ?
			    opts->configs[i].flags[j] :
			    f->default_value;

			int on = 0;

			if (f->type == CONTROLLER_FLAG_INT ||
			    f->type == CONTROLLER_FLAG_NUMBER)
				cJSON_AddNumberToObject(flags, f->name, strtod(v, NULL));
			else if (f->type == CONTROLLER_FLAG_BOOL)
				cJSON_AddBoolToObject(flags, f->name,
				    text_parse_bool(v, &on) == 0 && on);
			else
				cJSON_AddStringToObject(flags, f->name, v);
		}
	}
	cJSON_AddNumberToObject(flags, "kube-api-qps", opts->qps);
	cJSON_AddNumberToObject(flags, "kube-api-burst", (double)opts->burst);
	ADD_STRING("bind-address", opts->bind_address);
	cJSON_AddNumberToObject(flags, "secure-port", (double)opts->secure_port);
	cJSON_AddNumberToObject(flags, "port", (double)opts->port);
	ADD_STRING("tls-cert-file", opts->tls_cert_file);
	ADD_STRING("tls-private-key-file", opts->tls_key_file);
	ADD_STRING("authorization-always-allow-paths", opts->always_allow_paths);
	cJSON_AddBoolToObject(flags, "leader-elect", opts->leader_elect);
	cJSON_AddBoolToObject(flags, "use-service-account-credentials",
	    opts->use_sa_credentials);
	cJSON_AddNumberToObject(flags, "leader-elect-lease-duration", opts->lease_duration);
	cJSON_AddNumberToObject(flags, "leader-elect-renew-deadline", opts->renew_deadline);
	cJSON_AddNumberToObject(flags, "leader-elect-retry-period", opts->retry_period);
	cJSON_AddStringToObject(flags, "leader-elect-resource-lock", "leases");
	ADD_STRING("leader-elect-resource-namespace", opts->lease_namespace);
	ADD_STRING("leader-elect-resource-name", opts->lease_name);
	cJSON_AddNumberToObject(flags, "v", (double)opts->verbosity);
#undef ADD_STRING
	cJSON_AddStringToObject(root, "server", client_server(client));
	cJSON_AddStringToObject(root, "version", PACKAGE_VERSION);
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

/* /healthz, /readyz "leader-election": fails once the lease is lost (the process is about
 * to exit 1). A standby passes: ready means a synced leader or a synced standby. */
static int
run_check_leader(void *arg, char **reason)
{
	struct daemon *d = arg;

	if (!d->lost)
		return 0;
	*reason = xstrdup("the lease was lost");
	return -1;
}

/* Starts the HTTP endpoints on the daemon's loop, with its checks and configuration. */
static int
run_start_http(struct daemon *d, const struct run_options *opts, const struct client *client,
    char **error)
{
	struct httpserver_options hopts = { opts->bind_address, (int)opts->secure_port,
	    (int)opts->port, opts->tls_cert_file, opts->tls_key_file, d->metrics, d->auth };
	char *configz;

	d->http = httpserver_new(d->base, &hopts, error);
	if (d->http == NULL)
		return -1;
	httpserver_add_check(d->http, HTTPSERVER_READYZ, "informer-sync", run_check_synced, d);
	httpserver_add_check(d->http, HTTPSERVER_READYZ, "informer-watch", run_check_watching, d);
	httpserver_add_check(d->http, HTTPSERVER_READYZ, "shutdown", run_check_running, d);
	if (d->elector != NULL)
		httpserver_add_check(d->http, HTTPSERVER_HEALTHZ | HTTPSERVER_READYZ,
		    "leader-election", run_check_leader, d);
	configz = run_configz(opts, client);
	httpserver_set_configz(d->http, configz);
	cJSON_free(configz);
	return 0;
}

/* Frees what run_parse allocated in opts. */
static void
run_options_free(struct run_options *opts)
{
	controller_configs_free(opts->configs);
	free(opts->workers);
	free(opts->disabled);
	buf_free(&opts->ignored);
}

/* The PEM of the CA kc trusts for the apiserver (its data, or its file's), or NULL when
 * it names none or the file cannot be read (said in the log). */
static char *
run_cluster_ca(const struct kube_config *kc)
{
	struct buf b;
	char *error = NULL;

	if (kc->ca_pem != NULL)
		return xstrndup(kc->ca_pem, kc->ca_pem_len);
	if (kc->ca_file == NULL)
		return NULL;
	buf_init(&b);
	if (file_read_all(kc->ca_file, "the cluster's CA file", 1 << 20, &b, NULL,
	    &error) != 0) {
		log_warning("%s", error);
		free(error);
		buf_free(&b);
		return NULL;
	}
	return buf_detach(&b);
}

/* The client type t (index i) records its events through: events_client, or with the
 * builder one of its own identity, shared by the controllers of one identity (kube's
 * controllers send their events through their own clients). */
static struct client *
run_events_client(struct daemon *d, struct kube_config *kc, const struct client_options *copts,
    struct clientbuilder *builder, const struct controller_type *t, struct client *events_client,
    struct client **identity_events, int i)
{
	char *error = NULL;

	if (builder == NULL || t->client_is_root)
		return events_client;
	for (int j = 0; j < i; j++) {
		if (identity_events[j] != NULL && !controller_types[j]->client_is_root &&
		    strcmp(controller_types[j]->client_name, t->client_name) == 0)
			return identity_events[j];
	}
	identity_events[i] = client_new(d->base, kc, copts, &error);
	if (identity_events[i] == NULL) {
		/* client_new fails only when curl cannot start: the shared one then
		 * serves, under the kubeconfig's identity. */
		log_error("%s: no events client of its own: %s", t->name, error);
		free(error);
		return events_client;
	}
	clientbuilder_attach(builder, t->client_name, identity_events[i]);
	return identity_events[i];
}

int
run_command(int argc, char **argv, FILE *out, FILE *err)
{
	struct run_options opts = { 0 };
	struct store_options sopts = { 0, 0, 0 };
	struct client_options copts;
	struct daemon d = { 0 };
	struct kube_config *kc = NULL;
	struct store *store = NULL;
	struct client *client = NULL, *controller_client = NULL, *events_client = NULL;
	struct client **controller_clients = NULL;
	struct client *lease_client = NULL, *auth_client = NULL;
	struct client_gate *gate = NULL;
	struct clientbuilder *builder = NULL;	/* --use-service-account-credentials */
	struct client **identity_events = NULL;	/* per controller: its events' own client */
	struct kubeevents **events = xcalloc((size_t)controller_type_count, sizeof *events);
	struct kubeevents *lease_events = NULL;
	struct buf unrun;	/* --controllers names of kcm's that sqlkcm does not run */
	struct leader_config lconfig;
	struct leader_callbacks lcallbacks;
	char *identity = NULL;
	int *enabled = xcalloc((size_t)controller_type_count, sizeof *enabled);
	int *workers = xcalloc((size_t)controller_type_count, sizeof *workers);
	int any = 0;
	struct manager_options mopts;
	char *cluster_ca = NULL;
	struct event *sigterm = NULL, *sigint = NULL, *sighup = NULL;
	struct informer_handlers handlers;
	char *error = NULL;
	int rc, status = EXIT_FAILURE_RUN;

	rc = run_parse(argc, argv, &opts, out, err);
	if (rc != 0) {
		free(enabled);
		free(workers);
		free(events);
		run_options_free(&opts);
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	}
	buf_init(&unrun);
	controller_parse_list(opts.controllers, enabled, &unrun, NULL);
	/* As kube-controller-manager: --enable-garbage-collector=false wins over
	 * --controllers. */
	for (int i = 0; i < controller_type_count; i++) {
		if (opts.disabled[i] && enabled[i]) {
			log_info("--%s=false: %s does not run", controller_types[i]->enable_flag,
			    controller_types[i]->name);
			enabled[i] = 0;
		}
	}
	for (int i = 0; i < controller_type_count; i++) {
		any |= enabled[i];
		workers[i] = (int)opts.workers[i];
	}
	log_verbosity = (int)opts.verbosity;
	if (opts.ignored.len > 0)
		log_info("ignoring kube-controller-manager flags sqlkcm has no use for (those of "
		    "controllers it does not run, or of kube-controller-manager's own machinery): %s",
		    opts.ignored.data);
	if (unrun.len > 0)
		log_info("--controllers: ignoring kube-controller-manager controllers sqlkcm does "
		    "not run: %s", unrun.data);
	buf_free(&unrun);
	signal(SIGPIPE, SIG_IGN);

	if (kube_config_resolve(opts.kubeconfig, opts.context, opts.master, &kc, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	/* The cache before the apiserver: a daemon that cannot have it contacts nobody. */
	sopts.cache_size_kib = (int)opts.db_cache_mib * 1024;
	sopts.rebuild_cache = opts.rebuild_cache;
	rc = store_open(opts.db, &sopts, &store, &error);
	if (rc != 0) {
		fprintf(err, "sqlkcm run: %s%s\n", error, rc != STORE_OPEN_NOT_A_CACHE ? "" :
		    "; start with --rebuild-cache to move it aside and rebuild the cache from the cluster");
		goto out;
	}
	/* The resources an earlier run cached by their metadata, until discovery is read. */
	if (store_register_api_resources(store, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	d.base = event_base_new();
	if (d.base == NULL) {
		fprintf(err, "sqlkcm run: cannot create the event loop\n");
		goto out;
	}
	/* Three priorities before any event exists, so that every event but those given
	 * another gets the middle one: 0 for leader election, 1 for everything else, 2 for
	 * the informers' commit at the end of a loop turn (informer.c). */
	event_base_priority_init(d.base, 3);
	d.metrics = metrics_registry_new();
	d.process_metrics = process_metrics_new(d.metrics, NULL, &error);
	if (d.process_metrics == NULL) {
		log_warning("no process metrics: %s", error);
		free(error);
		error = NULL;
	}
	store_register_metrics(store, d.metrics);
	copts.qps = opts.qps;
	copts.burst = (int)opts.burst;
	copts.metrics = d.metrics;
	/* Every client talks to the one apiserver: while it does not answer they share one
	 * budget of connection attempts (client.c). */
	gate = client_gate_new(RUN_OUTAGE_ATTEMPTS_PER_SECOND);
	copts.gate = gate;
	client = client_new(d.base, kc, &copts, &error);
	if (client == NULL) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	if (opts.secure_port > 0) {
		/* Reviews of who asks for /metrics go through a client of their own, so that
		 * a scraper never waits behind the informers' or controllers' requests. */
		auth_client = client_new(d.base, kc, &copts, &error);
		if (auth_client == NULL) {
			fprintf(err, "sqlkcm run: %s\n", error);
			goto out;
		}
		d.auth = httpauth_new(auth_client, opts.always_allow_paths);
	}
	d.informers = informer_set_new(d.base, client, store);
	informer_set_register_metrics(d.informers, d.metrics);
	informer_set_watch_list(d.informers, opts.watch_list);
	informer_set_batch_period(d.informers, opts.watch_batch_period,
	    resource_held_in_batches);
	/* Controllers act on the cache: a stored one is confirmed current first. */
	informer_set_confirm_warm_start(d.informers, any);
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
		/* With --use-service-account-credentials each controller's writes and events
		 * go as its own ServiceAccount (kube's client builder), whose token the root
		 * client asks for; controller_client then serves only the restart recovery's
		 * reads, with the kubeconfig's identity as kube's informers have it. */
		if (opts.use_sa_credentials) {
			builder = clientbuilder_new(client, NULL);
			identity_events = xcalloc((size_t)controller_type_count,
			    sizeof *identity_events);
		}
		/* Each controller records its events as its own component. */
		for (int i = 0; i < controller_type_count; i++) {
			if (enabled[i])
				events[i] = kubeevents_new(run_events_client(&d, kc, &copts,
				    builder, controller_types[i], events_client, identity_events, i),
				    controller_types[i]->event_component);
		}
		d.executor = executor_new(controller_client, store, d.informers, events);
		/* The first enabled controller writes through controller_client, each other
		 * (every one, with the flag) through a client of its own. */
		controller_clients = xcalloc((size_t)controller_type_count,
		    sizeof *controller_clients);
		for (int i = 0, first = builder == NULL; i < controller_type_count; i++) {
			const struct controller_type *t = controller_types[i];
			struct client_options own = copts;

			if (!enabled[i])
				continue;
			/* kube's multiples of the rate, for the controllers it gives them. */
			if (t->qps_scale > 1)
				own.qps *= t->qps_scale;
			if (t->burst_scale > 1)
				own.burst *= t->burst_scale;
			if (!first || t->qps_scale > 1 || t->burst_scale > 1) {
				controller_clients[i] = client_new(d.base, kc, &own, &error);
				if (controller_clients[i] == NULL) {
					fprintf(err, "sqlkcm run: %s\n", error);
					goto out;
				}
				if (builder != NULL && !t->client_is_root)
					clientbuilder_attach(builder, t->client_name,
					    controller_clients[i]);
				executor_use_client(d.executor, controller_types[i],
				    controller_clients[i]);
			}
			first = 0;
		}
		manager_add_informers(enabled, d.informers);
		for (int i = 0; i < controller_type_count && d.metadata == NULL; i++) {
			if (enabled[i] && controller_types[i]->watches_metadata)
				d.metadata = metadatacache_new(d.base, client, store, d.informers);
		}
		if (d.metadata != NULL)
			metadatacache_register_metrics(d.metadata, d.metrics);
		cluster_ca = run_cluster_ca(kc);
		for (int i = 0; i < controller_type_count; i++) {
			opts.configs[i].cluster_ca = cluster_ca;
			opts.configs[i].metrics = d.metrics;
		}
		mopts.configs = opts.configs;
		mopts.enabled = enabled;
		mopts.workers = workers;
		mopts.metrics = d.metrics;
		mopts.client = controller_client;
		d.manager = manager_new(d.base, store, d.informers, d.executor, &mopts, &error);
		if (d.manager == NULL) {
			fprintf(err, "sqlkcm run: %s\n", error);
			goto out;
		}
		if (opts.leader_elect) {
			/* Its own client, as kube-controller-manager's: renewals never wait
			 * behind the controllers' requests for a token or a stream. */
			lease_client = client_new(d.base, kc, &copts, &error);
			if (lease_client == NULL || (identity = leader_identity_new(&error)) == NULL) {
				fprintf(err, "sqlkcm run: %s\n", error);
				goto out;
			}
			lease_events = kubeevents_new(events_client, "sqlkcm");
			memset(&lconfig, 0, sizeof lconfig);
			lconfig.lease_namespace = opts.lease_namespace;
			lconfig.lease_name = opts.lease_name;
			lconfig.identity = identity;
			lconfig.lease_duration = opts.lease_duration;
			lconfig.renew_deadline = opts.renew_deadline;
			lconfig.retry_period = opts.retry_period;
			lconfig.events = lease_events;
			lcallbacks.started_leading = run_started_leading;
			lcallbacks.stopped_leading = run_stopped_leading;
			lcallbacks.arg = &d;
			d.elector = leader_elector_new(d.base, lease_client, &lconfig, &lcallbacks);
			d.leading = leader_election_status_metric(d.metrics, opts.lease_name);
			metrics_gauge_set(d.leading, 0);
		}
	} else {
		/* No controller: mirror everything sqlkcm knows. Nothing is written to the
		 * cluster, so no lease is needed. */
		if (opts.leader_elect)
			log_info("no controller enabled: leader election is not needed");
		for (int i = 0; i < resource_count; i++)
			informer_set_add(d.informers, resource_all[i]);
	}
	if (opts.record != NULL) {
		d.watchrecord = watchrecord_open(opts.record, &error);
		if (d.watchrecord == NULL) {
			fprintf(err, "sqlkcm run: %s\n", error);
			goto out;
		}
		handlers = watchrecord_handlers(d.watchrecord);
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
	if (run_start_http(&d, &opts, client, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	if (d.metadata != NULL)
		metadatacache_start(d.metadata, RUN_DISCOVERY_WAIT_SECONDS, METADATACACHE_PERIOD);
	if (informer_set_start(d.informers, &error) != 0) {
		fprintf(err, "sqlkcm run: %s\n", error);
		goto out;
	}
	if (d.elector != NULL)
		leader_elector_start(d.elector);
	else if (d.manager != NULL)
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
	if (store_checkpoint(store, &error) != 0) {
		log_warning("%s", error);
		free(error);
		error = NULL;
	}
	status = d.lost ? EXIT_FAILURE_RUN : EXIT_OK;
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
	httpserver_free(d.http);
	httpauth_free(d.auth);
	leader_elector_free(d.elector);
	manager_free(d.manager);
	executor_free(d.executor);
	for (int i = 0; i < controller_type_count; i++)
		kubeevents_free(events[i]);
	free(events);
	run_options_free(&opts);
	free(cluster_ca);
	kubeevents_free(lease_events);
	informer_set_free(d.informers);
	metadatacache_free(d.metadata);
	resource_metadata_free_all();
	watchrecord_close(d.watchrecord);
	client_free(lease_client);
	client_free(auth_client);
	client_free(events_client);
	for (int i = 0; controller_clients != NULL && i < controller_type_count; i++)
		client_free(controller_clients[i]);
	free(controller_clients);
	for (int i = 0; identity_events != NULL && i < controller_type_count; i++)
		client_free(identity_events[i]);
	free(identity_events);
	clientbuilder_free(builder);
	client_free(controller_client);
	client_free(client);
	client_gate_free(gate);
	free(enabled);
	free(workers);
	free(identity);
	store_close(store);
	process_metrics_free(d.process_metrics);
	metrics_registry_free(d.metrics);
	kube_config_free(kc);
	if (d.base != NULL)
		event_base_free(d.base);
	return status;
}
