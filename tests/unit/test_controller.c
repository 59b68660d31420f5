/*
 * test_controller.c - what the kit gives every controller: the flags a controller type
 * declares, checked as run checks them and read back as given or by their default.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <getopt.h>

#include <event2/event.h>

#include "controller.h"
#include "registry.h"
#include "util.h"
#include "workqueue.h"

static const struct controller_flag test_flags[] = {
	{ "terminated-widget-threshold", CONTROLLER_FLAG_INT, "12500", 0, 1000000,
	    "widgets kept" },
	{ "widget-sync-period", CONTROLLER_FLAG_DURATION, "5m0s", 0, 0, "how often" },
	{ "widget-file", CONTROLLER_FLAG_STRING, "", 0, 0, "a file" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

static int
test_init(struct controller *c, char **error)
{
	(void)c;
	(void)error;
	return 0;
}

static const char *const no_resources[] = { NULL };

static const struct controller_type test_type = {
	.name = "widget",
	.resources = no_resources,
	.default_workers = 1,
	.flags = test_flags,
	.init = test_init,
};

struct flag_case {
	int flag;		/* index in test_flags */
	const char *value;
	const char *error;	/* a part of the message; NULL: accepted */
};

static void
flag_values_are_checked_by_their_type(void **state)
{
	static const struct flag_case cases[] = {
		{ 0, "0", NULL },
		{ 0, "1000000", NULL },
		{ 0, "1000001", "for --terminated-widget-threshold: want a whole number from 0 "
		    "to 1000000" },
		{ 0, "-1", "want a whole number" },
		{ 0, "12k", "invalid value \"12k\"" },
		{ 0, "", "invalid value \"\"" },
		{ 0, "99999999999999999999999", "want a whole number" },
		{ 1, "30s", NULL },
		{ 1, "1h2m3.5s", NULL },
		{ 1, "0s", NULL },
		{ 1, "300", "for --widget-sync-period: want a duration" },
		{ 1, "-5m", "want a duration" },
		{ 1, "", "want a duration" },
		{ 2, "", NULL },
		{ 2, "/etc/ca.crt", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *error = NULL;
		int rc = controller_flag_check(&test_flags[cases[i].flag], cases[i].value,
		    &error);

		if (cases[i].error == NULL) {
			if (rc != 0)
				fail_msg("case %zu: %s refused: %s", i, cases[i].value, error);
			continue;
		}
		if (rc == 0 || error == NULL || strstr(error, cases[i].error) == NULL)
			fail_msg("case %zu: %s: got %s, want an error with \"%s\"", i,
			    cases[i].value, error != NULL ? error : "no error", cases[i].error);
		free(error);
	}
}

static void
flags_read_back_as_given_or_by_default(void **state)
{
	const char *given[] = { "5", NULL, "/tmp/ca.pem" };
	struct controller_config config = { given, "PEM", NULL };
	struct controller defaults = { .type = &test_type };
	struct controller configured = { .type = &test_type, .config = &config };
	static const struct controller_config none;

	(void)state;
	defaults.config = &none;
	assert_int_equal(controller_flag_int(&defaults, "terminated-widget-threshold"), 12500);
	assert_true(controller_flag_seconds(&defaults, "widget-sync-period") == 300.0);
	assert_string_equal(controller_flag_text(&defaults, "widget-file"), "");
	assert_int_equal(controller_flag_int(&configured, "terminated-widget-threshold"), 5);
	assert_true(controller_flag_seconds(&configured, "widget-sync-period") == 300.0);
	assert_string_equal(controller_flag_text(&configured, "widget-file"), "/tmp/ca.pem");
	assert_string_equal(configured.config->cluster_ca, "PEM");
}

/* A clock that stands still: the bucket then never refills, and the backoff decides. */
static double
still_now(void *arg)
{
	(void)arg;
	return 100.0;
}

/*
 * The backoff of each controller's failed syncs, as kube-controller-manager builds its
 * queues: 5 ms (200 ms for the CSR signer's certificate queue) doubling per failure,
 * capped at 60 s for the namespace controller
 * (nsControllerRateLimiter: "a faster than normal recycle time") and at client-go's 1000 s
 * for the others (DefaultTypedControllerRateLimiter; kube's podgc has no queue, and its
 * node lifecycle controller's update pass drops a failed node until its next change, where
 * sqlkcm retries it as the others). Every
 * controller sqlkcm runs must be in the table.
 */
static void
failed_syncs_back_off_as_kubes_queue_of_the_controller(void **state)
{
	static const struct {
		const char *controller;
		double cap;
	} cases[] = {
		{ "csrcleaner", 1000 },
		{ "csrapproving", 1000 },
		{ "csrsigning", 1000 },
		{ "daemonset", 1000 },
		{ "deployment", 1000 },
		{ "endpoint", 1000 },
		{ "endpointslice", 1000 },
		{ "endpointslicemirroring", 100 },
		{ "garbagecollector", 1000 },
		{ "namespace", 60 },
		{ "nodeipam", 1000 },
		{ "nodelifecycle", 1000 },
		{ "podgc", 1000 },
		{ "replicaset", 1000 },
		{ "replicationcontroller", 1000 },
		{ "root-ca-cert-publisher", 1000 },
		{ "serviceaccount", 1000 },
		{ "taint-eviction-controller", 1000 },
		{ "ttl", 1000 },
		{ "ttl-after-finished", 1000 },
		{ "job", 60 },
		{ "cronjob", 1000 },
		{ "disruption", 1000 },
		{ "resourcequota", 1000 },
		{ "statefulset", 1000 },
		{ "service-cidr-controller", 1000 },
		{ "legacy-service-account-token-cleaner", 1000 },
		{ "serviceaccount-token", 1000 },
		{ "clusterrole-aggregation", 1000 },
		{ "pv-protection", 1000 },
		{ "volumeattributesclass-protection", 1000 },
		{ "pvc-protection", 1000 },
		{ "ephemeral-volume", 1000 },
		{ "persistentvolume-expander", 1000 },
		{ "attachdetach", 1000 },
		{ "persistentvolume-binder", 1000 },
	};
	/* Where kube's queue starts at another backoff than client-go's 5 ms. */
	static const struct {
		const char *controller;
		double base;
	} bases[] = {
		{ "csrapproving", 0.2 },	/* kube's certificate controllers' queue */
		{ "csrsigning", 0.2 },
		{ "endpointslice", 1 },		/* kube's service queue */
		{ "endpointslicemirroring", 1 },
		{ "job", 1 },			/* kube's DefaultJobApiBackOff */
	};
	struct event_base *base = event_base_new();

	(void)state;
	assert_int_equal(controller_type_count, (int)(sizeof cases / sizeof cases[0]));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct controller_type *t = controller_type_find(cases[i].controller);
		struct workqueue_options qo = { .priority = -1, .now = still_now };
		struct workqueue *q;
		double want = 0.005, got;

		if (t == NULL)
			fail_msg("no controller %s", cases[i].controller);
		for (size_t k = 0; k < sizeof bases / sizeof bases[0]; k++) {
			if (strcmp(bases[k].controller, t->name) == 0)
				want = bases[k].base;
		}
		controller_queue_options(t, &qo);
		q = workqueue_new(base, t->name, &qo);
		/* 30 failures: past both caps, within the bucket's burst of 100. */
		for (int n = 0; n < 30; n++) {
			got = workqueue_when(q, "ns/key");
			if (got != want)
				fail_msg("%s: failure %d waits %g s, want %g s", t->name, n + 1, got,
				    want);
			want = want * 2 > cases[i].cap ? cases[i].cap : want * 2;
		}
		assert_true(got == cases[i].cap);
		workqueue_free(q);
	}
	event_base_free(base);
}

/* Every flag of every registered controller gets a command-line option of a code of its
 * own (the codes had room for 32 controllers once, and a 33rd aborted every run). */
static void
every_registered_flag_gets_an_option(void **state)
{
	int count = controller_flag_count();
	struct option *o = calloc((size_t)count + 1, sizeof *o);
	size_t n;

	(void)state;
	assert_non_null(o);
	assert_true(controller_type_count * CONTROLLER_FLAGS_PER_TYPE <= CONTROLLER_FLAG_CODES);
	/* A flag two types declare alike is one option. */
	n = controller_flag_options(o, 0, 4096);
	assert_true(n > 0 && n <= (size_t)count);
	for (size_t i = 0; i < n; i++) {
		assert_true(o[i].val >= 4096 && o[i].val < 4096 + CONTROLLER_FLAG_CODES);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(o[i].val, o[j].val);
	}
	free(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flag_values_are_checked_by_their_type),
		cmocka_unit_test(flags_read_back_as_given_or_by_default),
		cmocka_unit_test(failed_syncs_back_off_as_kubes_queue_of_the_controller),
		cmocka_unit_test(every_registered_flag_gets_an_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
