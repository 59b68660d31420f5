/*
 * shell.c - `sqlkcm shell`: the cache, read-only, in the sqlite3 program.
 *
 * Checks that the file is there and is an sqlkcm cache (an SQLite database whose schema
 * version sqlkcm wrote), then runs sqlite3 on it with -readonly, headers and column mode,
 * and a busy timeout so that a query never fails because the daemon is committing. The
 * cache is in WAL mode: a reader sees the last committed state and never blocks the
 * writer, so the shell is safe beside `sqlkcm run`. Arguments after the flags are passed
 * to sqlite3 as SQL to run instead of the interactive prompt.
 *
 * The child gets the terminal; this process waits for it, ignoring SIGINT and SIGQUIT
 * meanwhile so that ^C interrupts the query in sqlite3 and not the wait, and exits with
 * the child's status.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "exitstatus.h"
#include "shell.h"
#include "util.h"

const char shell_usage[] =
    "usage: sqlkcm shell [--db FILE] [--sqlite3 PROGRAM] [SQL ...]\n"
    "\n"
    "Opens the cache in FILE read-only in the sqlite3 program, with headers and column\n"
    "mode. Safe while `sqlkcm run` writes to it. With SQL, runs it and exits; without,\n"
    "starts sqlite3's prompt.\n"
    "\n"
    "Flags:\n"
    "  --db FILE                 the cache database (default: sqlkcm.db)\n"
    "  --sqlite3 PROGRAM         the sqlite3 program to run (default: sqlite3, from PATH)\n"
    "  -h, --help                this help\n"
    "\n"
    "The views pods, replicasets, deployments, replicaset_diff, replicaset_pods,\n"
    "replicaset_pod_rank, deployment_replicasets, deployment_diff and, with the\n"
    "garbage collector on,\n"
    "objects, object_graph, dependents and dangling_owner_refs are documented in the\n"
    "schema files;\n"
    "`.tables` lists everything, `.schema NAME` shows one.\n";

/* How long a query waits for the daemon's commit before it gives up, in ms. */
#define SHELL_BUSY_TIMEOUT_MS 5000

/* Checks that path is an SQLite file that sqlkcm's schema was applied to. */
static int
shell_check_cache(const char *path, char **error)
{
	struct stat st;
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	int version = 0, rc;

	if (stat(path, &st) != 0)
		return error_set(error, "cannot open the cache %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return error_set(error, "%s is not a file", path);
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, SHELL_BUSY_TIMEOUT_MS);
		rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, NULL);
	}
	if (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		version = sqlite3_column_int(stmt, 0);
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_OK) {
		error_set(error, "%s is not a readable SQLite database: %s", path,
		    db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	} else if (version <= 0) {
		error_set(error, "%s is not an sqlkcm cache (no schema version; create one with "
		    "`sqlkcm run --db %s`)", path, path);
		rc = SQLITE_ERROR;
	}
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/* Runs argv as a child and returns its exit status (128 + signal if killed), or -1. */
static int
shell_spawn(char **argv, char **error)
{
	struct sigaction ignore, old_int, old_quit;
	pid_t pid;
	int status;

	memset(&ignore, 0, sizeof ignore);
	ignore.sa_handler = SIG_IGN;
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "sqlkcm shell: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		error_set(error, "cannot start %s: %s", argv[0], strerror(errno));
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (pid < 0)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int
shell_command(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "sqlite3", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db = "sqlkcm.db", *program = "sqlite3";
	char *error = NULL, *path, *timeout, **child;
	int c, n = 0, rc;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 's': program = optarg; break;
		case 'h':
			fputs(shell_usage, out);
			return EXIT_OK;
		case ':':
			fprintf(err, "sqlkcm shell: %s needs a value\n", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(err, "sqlkcm shell: unknown flag %s (see sqlkcm shell --help)\n",
			    argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (*db == '\0' || *program == '\0') {
		fprintf(err, "sqlkcm shell: --%s needs a value\n", *db == '\0' ? "db" : "sqlite3");
		return EXIT_USAGE;
	}
	if (shell_check_cache(db, &error) != 0) {
		fprintf(err, "sqlkcm shell: %s\n", error);
		free(error);
		return EXIT_FAILURE_RUN;
	}

	/* sqlite3 would read a name starting with '-' as an option. */
	path = db[0] == '-' ? xasprintf("./%s", db) : xstrdup(db);
	timeout = xasprintf(".timeout %d", SHELL_BUSY_TIMEOUT_MS);
	child = xcalloc((size_t)(argc - optind) + 8, sizeof *child);
	child[n++] = (char *)program;
	child[n++] = (char *)"-readonly";
	child[n++] = (char *)"-header";
	child[n++] = (char *)"-column";
	child[n++] = (char *)"-cmd";
	child[n++] = timeout;
	child[n++] = path;
	for (int i = optind; i < argc; i++)
		child[n++] = argv[i];
	child[n] = NULL;

	fflush(out);
	fflush(err);
	rc = shell_spawn(child, &error);
	if (rc < 0) {
		fprintf(err, "sqlkcm shell: %s\n", error);
		free(error);
		rc = EXIT_FAILURE_RUN;
	}
	free(child);
	free(timeout);
	free(path);
	return rc;
}
