/*
 * daemonmetrics.c - metrics about the daemon itself: its process and its leader election
 * status.
 *
 * The process metrics carry the names client_golang's process collector gives them, so
 * dashboards made for kube-controller-manager show sqlkcm too. They are read from procfs
 * when /metrics is rendered, never in between:
 *   process_cpu_seconds_total      utime + stime of <proc>/self/stat, in clock ticks
 *   process_resident_memory_bytes  rss of <proc>/self/stat, in pages
 *   process_virtual_memory_bytes   vsize of <proc>/self/stat
 *   process_start_time_seconds     btime of <proc>/stat plus starttime of <proc>/self/stat
 *   process_open_fds               entries of <proc>/self/fd
 *   process_max_fds                the soft RLIMIT_NOFILE
 * A file that cannot be read or parsed gives 0 for the metrics it feeds. The procfs root is
 * a parameter so that tests can point it at files of their own.
 *
 * leader_election_master_status is only registered here, so that its name, label and help
 * are defined once; the leader election sets it.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemonmetrics.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

/* The fields of <proc>/self/stat the metrics use. */
struct process_stat {
	unsigned long long utime;	/* clock ticks */
	unsigned long long stime;
	unsigned long long starttime;	/* clock ticks after boot */
	unsigned long long vsize;	/* bytes */
	long long rss;			/* pages */
};

enum {
	PROCESS_CPU,
	PROCESS_MAX_FDS,
	PROCESS_OPEN_FDS,
	PROCESS_RESIDENT,
	PROCESS_START_TIME,
	PROCESS_VIRTUAL,
	PROCESS_METRIC_COUNT
};

struct process_metrics;

/* One series and what it needs to compute its value. */
struct process_metric {
	struct process_metrics *pm;
	int which;
	struct metrics_series *series;
};

struct process_metrics {
	char *root;
	struct process_metric metrics[PROCESS_METRIC_COUNT];
};

static const struct metrics_spec process_specs[PROCESS_METRIC_COUNT] = {
	[PROCESS_CPU] = { METRICS_COUNTER, "process_cpu_seconds_total",
	    "User and system CPU time the process has used, in seconds.", NULL, NULL, 0 },
	[PROCESS_MAX_FDS] = { METRICS_GAUGE, "process_max_fds",
	    "The most file descriptors the process may open.", NULL, NULL, 0 },
	[PROCESS_OPEN_FDS] = { METRICS_GAUGE, "process_open_fds",
	    "File descriptors the process has open.", NULL, NULL, 0 },
	[PROCESS_RESIDENT] = { METRICS_GAUGE, "process_resident_memory_bytes",
	    "Bytes of the process's memory resident in RAM.", NULL, NULL, 0 },
	[PROCESS_START_TIME] = { METRICS_GAUGE, "process_start_time_seconds",
	    "Unix time the process started, in seconds.", NULL, NULL, 0 },
	[PROCESS_VIRTUAL] = { METRICS_GAUGE, "process_virtual_memory_bytes",
	    "Bytes of virtual memory the process has mapped.", NULL, NULL, 0 },
};

/* Reads <root>/<name> whole into a malloc'd string; NULL if it cannot be read. */
static char *
process_read_file(const char *root, const char *name)
{
	char *path = xasprintf("%s/%s", root, name);
	FILE *f = fopen(path, "r");
	struct buf b;
	char chunk[4096];
	size_t n;

	free(path);
	if (f == NULL)
		return NULL;
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	return buf_detach(&b);
}

/* Parses the text of /proc/self/stat; -1 when it is not one. The command name (field 2)
 * may hold spaces and parentheses, so the fields are counted from its last ')'. */
static int
process_stat_parse(const char *text, struct process_stat *out)
{
	const char *p = text != NULL ? strrchr(text, ')') : NULL;
	unsigned long long utime, stime, starttime, vsize;
	long long rss;

	/* After the name: state, then fields 4 to 24, of which the metrics need 14, 15,
	 * 22, 23 and 24. */
	if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
	    "%llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld", &utime, &stime, &starttime,
	    &vsize, &rss) != 5)
		return -1;
	out->utime = utime;
	out->stime = stime;
	out->starttime = starttime;
	out->vsize = vsize;
	out->rss = rss;
	return 0;
}

/* Returns the boot time (seconds since the epoch) that <root>/stat gives, or -1. */
static long long
process_boot_time(const char *root)
{
	char *text = process_read_file(root, "stat");
	const char *line;
	long long btime = -1;

	for (line = text; line != NULL && *line != '\0'; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
		btime = -1;
	}
	free(text);
	return btime;
}

/* Counts the entries of <root>/self/fd (0 if it cannot be read). */
static double
process_open_fds(const char *root)
{
	char *path = xasprintf("%s/self/fd", root);
	DIR *dir = opendir(path);
	struct dirent *e;
	double n = 0;

	free(path);
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	}
	closedir(dir);
	return n;
}

/* Computes one process metric's value. */
static double
process_metric_read(void *arg)
{
	const struct process_metric *m = arg;
	const char *root = m->pm->root;
	struct process_stat st;
	struct rlimit limit;
	double ticks = (double)sysconf(_SC_CLK_TCK);
	char *text;
	int parsed;
	long long btime;

	switch (m->which) {
	case PROCESS_OPEN_FDS:
		return process_open_fds(root);
	case PROCESS_MAX_FDS:
		if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
			return 0;
		return (double)limit.rlim_cur;
	}
	text = process_read_file(root, "self/stat");
	parsed = process_stat_parse(text, &st) == 0;
	free(text);
	if (!parsed || ticks <= 0)
		return 0;
	switch (m->which) {
	case PROCESS_CPU:
		return (double)(st.utime + st.stime) / ticks;
	case PROCESS_RESIDENT:
		return (double)st.rss * (double)sysconf(_SC_PAGESIZE);
	case PROCESS_VIRTUAL:
		return (double)st.vsize;
	case PROCESS_START_TIME:
		btime = process_boot_time(root);
		return btime < 0 ? 0 : (double)btime + (double)st.starttime / ticks;
	}
	return 0;
}

/* Registers the process metrics, computed from procfs at each render. */
struct process_metrics *
process_metrics_new(struct metrics_registry *registry, const char *proc_root, char **error)
{
	struct process_metrics *pm = xcalloc(1, sizeof *pm);

	pm->root = xstrdup(proc_root != NULL ? proc_root : "/proc");
	for (int i = 0; i < PROCESS_METRIC_COUNT; i++) {
		struct process_metric *m = &pm->metrics[i];
		struct metrics_family *family;

		family = metrics_family_register(registry, &process_specs[i], error);
		if (family == NULL) {
			process_metrics_free(pm);
			return NULL;
		}
		m->pm = pm;
		m->which = i;
		m->series = metrics_series_get(family, NULL);
		if (process_specs[i].type == METRICS_COUNTER)
			metrics_counter_set_callback(m->series, process_metric_read, m);
		else
			metrics_gauge_set_callback(m->series, process_metric_read, m);
	}
	return pm;
}

/* Detaches the process metrics from procfs (keeping their last values) and frees them. */
void
process_metrics_free(struct process_metrics *pm)
{
	if (pm == NULL)
		return;
	for (int i = 0; i < PROCESS_METRIC_COUNT; i++)
		metrics_gauge_set_callback(pm->metrics[i].series, NULL, NULL);
	free(pm->root);
	free(pm);
}

/* Returns the leader election status series of a lease. */
struct metrics_series *
leader_election_status_metric(struct metrics_registry *registry, const char *lease_name)
{
	static const char *const labels[] = { "name", NULL };
	static const struct metrics_spec spec = { METRICS_GAUGE,
	    "leader_election_master_status",
	    "[ALPHA] 1 while this process holds the lease named by name, 0 while it stands by.",
	    labels, NULL, 0 };
	const char *values[] = { lease_name, NULL };
	struct metrics_family *family;
	char *error = NULL;

	if (registry == NULL)
		return NULL;
	family = metrics_family_register(registry, &spec, &error);
	if (family == NULL) {
		log_error("leader election: no metric: %s", error);
		free(error);
		return NULL;
	}
	return metrics_series_get(family, values);
}
