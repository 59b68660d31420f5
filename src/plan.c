/*
 * plan.c - `sqlkcm plan`: the actions the controllers would take now, from the cache.
 *
 * Opens the cache read-only (so it is safe beside a running daemon, which keeps writing
 * it in WAL mode), runs sync once for every key of every enabled controller, at the
 * current time, and prints each sync's actions as JSON lines (action.h). Nothing is sent
 * to any apiserver and nothing is written to the database: expectations and the record
 * of the controllers' own writes are read, so a key the daemon is waiting on shows as
 * "wait", as the daemon would treat it.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "exitstatus.h"
#include "log.h"
#include "plan.h"
#include "registry.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* The controllers' flags' option values: this plus their code. */
#define PLAN_OPT_FLAG 4096

const char plan_usage[] =
    "usage: sqlkcm plan [--db FILE] [--controllers LIST]\n"
    "\n"
    "Runs every enabled controller once over the cache in FILE and prints the actions\n"
    "they would take now, as JSON lines. Opens the database read-only: it writes nothing,\n"
    "to the apiserver or to the file, and is safe while `sqlkcm run` uses it.\n"
    "\n"
    "Flags:\n"
    "  --db FILE                 the cache database (default: sqlkcm.db)\n"
    "  --controllers LIST        controllers to plan for: '*', NAME or -NAME,\n"
    "                            comma-separated (default: '*')\n"
    "  -v, --v N                 log verbosity, as klog (default: 0)\n"
    "  -h, --help                this help\n"
    "and the controllers' own flags, as `sqlkcm run` takes them (below), so that plan\n"
    "decides as the daemon does; the root CA publisher plans with --root-ca-file's CA,\n"
    "and with an empty one without it.\n"
    "\n"
    "Each line is an object with controller, key (the owner's namespace/name; for the\n"
    "garbage collector, the object's uid), action (create, delete, adopt, release,\n"
    "update-status, wait, ...), resource, namespace, name, uid, reason and body (the object\n"
    "or patch that would be sent). The garbage collector confirms that an owner missing\n"
    "from the cache is gone with a live read before it acts; plan reads nothing live, and\n"
    "prints that read as an action confirm-absent: the deletions and patches after it are\n"
    "made only if the owner is really gone. In the same way the namespace controller lists\n"
    "each resource live before it finalizes a namespace (confirm-empty): the finalize is\n"
    "made only if the namespace holds nothing.\n";

/* What one plan run shares with the key callback. */
struct plan {
	struct controller *controller;
	double now;
	struct buf out;
	FILE *outf;
	int failed;
};

/* Syncs one key and prints its actions. */
static void
plan_key(const char *key, void *arg)
{
	struct plan *p = arg;
	struct sync_result r;
	char *error = NULL;

	memset(&r, 0, sizeof r);
	if (p->controller->type->sync(p->controller, key, p->now, &r, &error) != 0) {
		log_error("plan: %s %s: %s", p->controller->type->name, key, error);
		free(error);
		p->failed = 1;
	} else {
		buf_reset(&p->out);
		sync_result_print(&r, NULL, &p->out);
		if (p->out.len > 0)
			fwrite(p->out.data, 1, p->out.len, p->outf);
	}
	sync_result_clear(&r);
}

int
plan_command(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option fixed[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "controllers", required_argument, NULL, 'c' },
		{ "v", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct option *longopts = controller_longopts_new(fixed, PLAN_OPT_FLAG);
	struct controller_config *configs = controller_configs_new();
	const char *db = "sqlkcm.db", *list = "*";
	struct store_options so = { .read_only = 1 };
	struct store *store = NULL;
	struct plan p;
	char *error = NULL, *end;
	int *enabled = NULL, c, rc = EXIT_FAILURE_RUN;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:v:h", longopts, NULL)) != -1) {
		if (c >= PLAN_OPT_FLAG && c < PLAN_OPT_FLAG + CONTROLLER_FLAG_CODES) {
			if (controller_configs_set(configs, c - PLAN_OPT_FLAG, optarg,
			    &error) != 0) {
				fprintf(err, "sqlkcm plan: %s\n", error);
				rc = EXIT_USAGE;
				goto out;
			}
			continue;
		}
		switch (c) {
		case 'd': db = optarg; break;
		case 'c': list = optarg; break;
		case 'v':
			log_verbosity = (int)strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || log_verbosity < 0 ||
			    log_verbosity > 10) {
				fprintf(err, "sqlkcm plan: invalid value \"%s\" for --v: want a "
				    "whole number from 0 to 10\n", optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case 'h':
			fputs(plan_usage, out);
			controller_flags_usage(out);
			rc = EXIT_OK;
			goto out;
		case ':':
			fprintf(err, "sqlkcm plan: %s needs a value\n", argv[optind - 1]);
			rc = EXIT_USAGE;
			goto out;
		default:
			fprintf(err, "sqlkcm plan: unknown flag %s (see sqlkcm plan --help)\n",
			    argv[optind - 1]);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(err, "sqlkcm plan: unexpected argument \"%s\"\n", argv[optind]);
		rc = EXIT_USAGE;
		goto out;
	}
	enabled = xcalloc((size_t)controller_type_count, sizeof *enabled);
	if (controller_parse_list(list, enabled, NULL, &error) != 0) {
		fprintf(err, "sqlkcm plan: %s\n", error);
		rc = EXIT_USAGE;
		goto out;
	}
	if (store_open(db, &so, &store, &error) != 0 ||
	    store_register_api_resources(store, &error) != 0) {
		fprintf(err, "sqlkcm plan: %s\n", error);
		goto out;
	}
	memset(&p, 0, sizeof p);
	buf_init(&p.out);
	p.outf = out;
	p.now = time_now();
	rc = EXIT_OK;
	for (int i = 0; i < controller_type_count; i++) {
		if (!enabled[i])
			continue;
		p.controller = controller_new(controller_types[i], store, &configs[i], &error);
		if (p.controller == NULL ||
		    controller_types[i]->list_keys(p.controller, plan_key, &p, &error) != 0) {
			fprintf(err, "sqlkcm plan: %s: %s\n", controller_types[i]->name, error);
			rc = EXIT_FAILURE_RUN;
		}
		controller_free(p.controller);
		free(error);
		error = NULL;
	}
	if (p.failed)
		rc = EXIT_FAILURE_RUN;
	buf_free(&p.out);
	fflush(out);
out:
	free(error);
	free(enabled);
	free(longopts);
	controller_configs_free(configs);
	store_close(store);
	resource_metadata_free_all();
	return rc;
}
