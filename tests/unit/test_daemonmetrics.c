/*
 * test_daemonmetrics.c - the metrics the daemon publishes about itself and its parts: the
 * process collector (read from a fake procfs the test writes), the leader election gauge,
 * and the informers' and the store's sqlkcm_* families as /metrics renders them.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <event2/event.h>

#include "daemonmetrics.h"
#include "informer.h"
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* Returns the registry rendered, malloc'd. */
static char *
render(struct metrics_registry *registry)
{
	struct buf out;

	buf_init(&out);
	metrics_render(registry, &out);
	return buf_detach(&out);
}

/* Returns the value of the sample named exactly sample (name and labels) in text; fails
 * the test when there is none. */
static double
sample_value(const char *text, const char *sample)
{
	size_t len = strlen(sample);

	for (const char *line = text; *line != '\0'; line = strchr(line, '\n') + 1) {
		if (strncmp(line, sample, len) == 0 && line[len] == ' ')
			return strtod(line + len + 1, NULL);
		if (strchr(line, '\n') == NULL)
			break;
	}
	fail_msg("no sample %s in:\n%s", sample, text);
	return NAN;
}

/* Writes text to dir/name. */
static void
write_file(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

/* Makes a fake procfs under a new temporary directory; returns its path. */
static char *
fake_proc(int open_fds)
{
	char *root = xstrdup("/tmp/sqlkcm-proc.XXXXXX"), *path;

	assert_non_null(mkdtemp(root));
	path = xasprintf("%s/self", root);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);
	path = xasprintf("%s/self/fd", root);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);
	for (int i = 0; i < open_fds; i++) {
		char *name = xasprintf("self/fd/%d", i);
		write_file(root, name, "");
		free(name);
	}
	write_file(root, "stat", "cpu  1 2 3 4\nintr 5\nbtime 1700000000\nprocesses 9\n");
	/* A command name with spaces and parentheses: fields count from its last ')'.
	 * utime 250, stime 150, starttime 500, vsize 1048576, rss 256 pages. */
	write_file(root, "self/stat", "4242 (sq (lk) m) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
	    "250 150 0 0 20 0 1 0 500 1048576 256 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 "
	    "0 17 1 0 0 0 0 0\n");
	return root;
}

/* Removes the fake procfs. */
static void
remove_fake_proc(char *root)
{
	char *cmd = xasprintf("rm -rf '%s'", root);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(root);
}

static void
process_metrics_read_procfs_at_each_render(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	char *root = fake_proc(3), *text, *error = NULL;
	double ticks = (double)sysconf(_SC_CLK_TCK), page = (double)sysconf(_SC_PAGESIZE);
	struct process_metrics *pm = process_metrics_new(registry, root, &error);
	struct rlimit limit;

	assert_non_null(pm);
	text = render(registry);
	assert_non_null(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
	assert_non_null(strstr(text, "# TYPE process_resident_memory_bytes gauge\n"));
	assert_true(sample_value(text, "process_cpu_seconds_total") == 400 / ticks);
	assert_true(sample_value(text, "process_resident_memory_bytes") == 256 * page);
	assert_true(sample_value(text, "process_virtual_memory_bytes") == 1048576);
	assert_true(fabs(sample_value(text, "process_start_time_seconds") -
	    (1700000000 + 500 / ticks)) < 1e-3);
	assert_true(sample_value(text, "process_open_fds") == 3);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &limit), 0);
	assert_true(sample_value(text, "process_max_fds") == (double)limit.rlim_cur);
	free(text);

	/* Read again at the next render. */
	write_file(root, "self/fd/3", "");
	text = render(registry);
	assert_true(sample_value(text, "process_open_fds") == 4);
	free(text);
	process_metrics_free(pm);
	metrics_registry_free(registry);
	remove_fake_proc(root);
}

static void
unreadable_procfs_gives_zero(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	char *root = fake_proc(0), *text, *error = NULL;
	struct process_metrics *pm;

	write_file(root, "self/stat", "garbage without the fields\n");
	write_file(root, "stat", "cpu 1\n");
	pm = process_metrics_new(registry, root, &error);
	text = render(registry);
	assert_true(sample_value(text, "process_cpu_seconds_total") == 0);
	assert_true(sample_value(text, "process_start_time_seconds") == 0);
	assert_true(sample_value(text, "process_open_fds") == 0);
	free(text);
	process_metrics_free(pm);
	metrics_registry_free(registry);
	remove_fake_proc(root);
}

static void
the_real_process_has_plausible_values(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	struct process_metrics *pm = process_metrics_new(registry, NULL, NULL);
	char *text = render(registry);
	double start = sample_value(text, "process_start_time_seconds");

	assert_true(sample_value(text, "process_resident_memory_bytes") > 0);
	assert_true(sample_value(text, "process_open_fds") >= 3);
	assert_true(start > 1.5e9 && start <= (double)time(NULL) + 1);
	free(text);
	/* Freed before the registry: the values stay, the procfs is no longer read. */
	process_metrics_free(pm);
	text = render(registry);
	assert_true(sample_value(text, "process_open_fds") >= 3);
	free(text);
	metrics_registry_free(registry);
}

static void
leader_election_status_is_a_gauge_per_lease(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	struct metrics_series *status = leader_election_status_metric(registry,
	    "kube-controller-manager");
	char *text;

	assert_non_null(status);
	assert_ptr_equal(status, leader_election_status_metric(registry,
	    "kube-controller-manager"));
	assert_null(leader_election_status_metric(NULL, "x"));
	metrics_gauge_set(status, 1);
	text = render(registry);
	assert_non_null(strstr(text, "# TYPE leader_election_master_status gauge\n"
	    "leader_election_master_status{name=\"kube-controller-manager\"} 1\n"));
	free(text);
	metrics_gauge_set(status, 0);
	text = render(registry);
	assert_true(sample_value(text,
	    "leader_election_master_status{name=\"kube-controller-manager\"}") == 0);
	free(text);
	metrics_registry_free(registry);
}

static void
informer_metrics_are_per_resource_and_survive_the_set(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	struct event_base *base = event_base_new();
	struct store *store = NULL;
	struct informer_set *set;
	char *error = NULL, *text;

	assert_int_equal(store_open(":memory:", NULL, &store, &error), 0);
	set = informer_set_new(base, NULL, store);
	informer_set_add(set, resource_find("pods"));
	informer_set_register_metrics(set, registry);
	/* Added after the registration: published too. */
	informer_set_add(set, resource_find("replicasets"));
	text = render(registry);
	assert_non_null(strstr(text, "# TYPE sqlkcm_informer_events_total counter\n"
	    "sqlkcm_informer_events_total{resource=\"pods\"} 0\n"
	    "sqlkcm_informer_events_total{resource=\"replicasets\"} 0\n"));
	assert_non_null(strstr(text, "# TYPE sqlkcm_informer_synced gauge\n"
	    "sqlkcm_informer_synced{resource=\"pods\"} 0\n"));
	assert_true(sample_value(text, "sqlkcm_informer_batches_total") == 0);
	assert_true(sample_value(text, "sqlkcm_informer_batch_failures_total") == 0);
	assert_true(sample_value(text,
	    "sqlkcm_informer_last_resource_version_timestamp_seconds{resource=\"pods\"}") == 0);
	assert_true(sample_value(text, "sqlkcm_informer_lists_total{resource=\"replicasets\"}")
	    == 0);
	assert_true(sample_value(text, "sqlkcm_informer_watches_total{resource=\"pods\"}") == 0);
	assert_true(sample_value(text, "sqlkcm_informer_relists_total{resource=\"pods\"}") == 0);
	assert_true(sample_value(text, "sqlkcm_informer_errors_total{resource=\"pods\"}") == 0);
	free(text);
	{
		struct buf names;

		buf_init(&names);
		assert_int_equal(informer_set_describe_unsynced(set, &names), 2);
		assert_string_equal(names.data, "pods,replicasets");
		buf_free(&names);
	}
	informer_set_free(set);
	text = render(registry);
	assert_true(sample_value(text, "sqlkcm_informer_events_total{resource=\"pods\"}") == 0);
	free(text);
	store_close(store);
	event_base_free(base);
	metrics_registry_free(registry);
}

static void
store_metrics_count_objects_and_time_commits(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	struct store *store = NULL;
	enum store_change change;
	char *error = NULL, *text;
	cJSON *pod = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	    "\"uid\":\"u1\",\"namespace\":\"ns\",\"name\":\"p\",\"resourceVersion\":\"7\","
	    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}}");

	assert_int_equal(store_open(":memory:", NULL, &store, &error), 0);
	store_register_metrics(store, registry);
	text = render(registry);
	assert_true(sample_value(text, "sqlkcm_store_objects{resource=\"pods\"}") == 0);
	assert_true(sample_value(text,
	    "sqlkcm_store_transaction_commit_duration_seconds_count") == 0);
	free(text);

	assert_int_equal(store_begin(store, &error), 0);
	assert_int_equal(store_upsert_object(store, resource_find("pods"), pod, 1, &change, NULL,
	    &error), 0);
	assert_int_equal(store_commit(store, &error), 0);
	text = render(registry);
	assert_true(sample_value(text, "sqlkcm_store_objects{resource=\"pods\"}") == 1);
	assert_true(sample_value(text, "sqlkcm_store_objects{resource=\"replicasets\"}") == 0);
	assert_true(sample_value(text,
	    "sqlkcm_store_transaction_commit_duration_seconds_count") == 1);
	assert_true(sample_value(text,
	    "sqlkcm_store_transaction_commit_duration_seconds_bucket{le=\"+Inf\"}") == 1);
	assert_true(sample_value(text, "sqlkcm_store_database_size_bytes") > 0);
	assert_true(sample_value(text, "sqlkcm_store_wal_size_bytes") == 0);
	free(text);
	/* Closed before the registry: the last values stay. */
	store_close(store);
	text = render(registry);
	assert_true(sample_value(text, "sqlkcm_store_objects{resource=\"pods\"}") == 1);
	free(text);
	cJSON_Delete(pod);
	metrics_registry_free(registry);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(process_metrics_read_procfs_at_each_render),
		cmocka_unit_test(unreadable_procfs_gives_zero),
		cmocka_unit_test(the_real_process_has_plausible_values),
		cmocka_unit_test(leader_election_status_is_a_gauge_per_lease),
		cmocka_unit_test(informer_metrics_are_per_resource_and_survive_the_set),
		cmocka_unit_test(store_metrics_count_objects_and_time_commits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
