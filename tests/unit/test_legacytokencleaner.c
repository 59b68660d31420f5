/*
 * test_legacytokencleaner.c - the legacy service account token cleaner
 * (controllers/legacytokencleaner.c) against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's
 * pkg/controller/serviceaccount/legacy_serviceaccount_token_cleaner.go; the rows are
 * those of its TestLegacyServiceAccountTokenCleanUp: the token Secret token-secret-1
 * (uid 23456, resourceVersion 1) of ServiceAccount default/default (uid 12345), its
 * last-used and invalid-since labels, creation date and deletion, whether the
 * ServiceAccount lists it and a pod mounts it, the tracking ConfigMap's "since", and the
 * clean-up period as kube's test makes it: now minus a start date. The label written is
 * today's date (NOW's, 2026-01-01).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "action.h"
#include "controller.h"
#include "controllers/legacytokencleaner.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "util.h"

enum account { ACCOUNT_LISTS_IT, ACCOUNT_LISTS_NOTHING, NO_ACCOUNT };
#define NO_CONFIGMAP NULL
#define NO_SINCE ""		/* the ConfigMap without its "since" */

struct case_row {
	const char *name;
	const char *last_used, *invalid_since, *created, *account_name, *account_uid;
	int deleting;
	enum account account;
	int mounted;
	int opaque;		/* an Opaque Secret instead */
	const char *since;	/* the ConfigMap's since; NO_CONFIGMAP, NO_SINCE */
	const char *start;	/* the period is NOW minus this date */
	const char *expect;	/* "", "label 2026-01-01", "delete rv=1" */
};

static const struct case_row rows[] = {
	{ "configmap does not exist", "2022-12-27", "", "2022-12-27", "default", "12345", 0,
	    ACCOUNT_LISTS_IT, 0, 0, NO_CONFIGMAP, "2022-12-28", "" },
	{ "configmap exists, but the configmap does not have tracked-since label",
	    "2022-12-27", "", "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0,
	    NO_SINCE, "2022-12-28", "" },
	{ "configmap exists, the time period since 'tracked-since' is smaller than the "
	    "CleanUpPeriod", "2022-12-27", "", "2022-12-27", "default", "12345", 0,
	    ACCOUNT_LISTS_IT, 0, 0, "2022-12-29", "2022-12-29", "" },
	{ "configmap exists, the 'tracked-since' cannot be parsed", "2022-12-27", "",
	    "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-27-1",
	    "2022-12-29", "" },
	{ "secret is not SecretTypeServiceAccountToken type", "", "", "2022-12-27", "default",
	    "12345", 0, ACCOUNT_LISTS_IT, 0, 1, "2022-12-28", "2022-12-29", "" },
	{ "secret is not referenced by serviceaccount", "2022-12-27", "", "2022-12-27",
	    "default", "12345", 0, ACCOUNT_LISTS_NOTHING, 0, 0, "2022-12-27", "2022-12-29",
	    "" },
	{ "auto-generated secret has a late creation time", "2022-12-27", "", "2022-12-30",
	    "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-27", "2022-12-29", "" },
	{ "auto-generated secret has a deletion time", "2022-12-27", "", "2022-12-27",
	    "default", "12345", 1, ACCOUNT_LISTS_IT, 0, 0, "2022-12-27", "2022-12-30", "" },
	{ "auto-generated secret has a late last-used time", "2022-12-30", "", "2022-12-27",
	    "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-27", "2022-12-29", "" },
	{ "auto-generated secret has a last-used label, but it can not be parsed",
	    "2022-12-27-1", "", "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0,
	    "2022-12-27", "2022-12-29", "" },
	{ "secret-referenced service account does not exist", "2022-12-27", "", "2022-12-27",
	    "default", "12345", 0, NO_ACCOUNT, 0, 0, "2022-12-27", "2022-12-29", "" },
	{ "secret-referenced service account uid does not match", "2022-12-27", "",
	    "2022-12-27", "default", "123456", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-27",
	    "2022-12-29", "" },
	{ "secret-referenced service account name is empty", "2022-12-27", "", "2022-12-27",
	    "", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-27", "2022-12-29", "" },
	{ "auto-generated secret does not have 'last-used' label, has not been marked as "
	    "invalid", "", "", "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0,
	    "2022-12-28", "2022-12-30", "label 2026-01-01" },
	{ "auto-generated secret does not have 'last-used' label, has been marked as invalid, "
	    "invalid_since label can not be parsed", "", "2022-12-29-1", "2022-12-27",
	    "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-28", "2022-12-30",
	    "label 2026-01-01" },
	{ "auto-generated secret does not have 'last-used' label, has been marked as invalid, "
	    "time period since invalid is less than CleanUpPeriod", "", "2023-01-01",
	    "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-28",
	    "2022-12-29", "" },
	{ "auto-generated secret does not have 'last-used' label, has been marked as invalid, "
	    "time period since invalid is larger than CleanUpPeriod", "", "2022-12-29",
	    "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-28",
	    "2023-01-01", "delete rv=1" },
	{ "auto-generated secret is mounted by the pod", "2022-12-27", "", "2022-12-27",
	    "default", "12345", 0, ACCOUNT_LISTS_IT, 1, 0, "2022-12-28", "2022-12-29", "" },
	{ "auto-generated secret has 'last-used' label, the time period since last-used is "
	    "larger than CleanUpPeriod, secret has not been marked as invalid", "2022-12-27",
	    "", "2022-12-27", "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-28",
	    "2022-12-30", "label 2026-01-01" },
	{ "auto-generated secret has 'last-used' label, the time period since last-used is "
	    "larger than CleanUpPeriod, secret has been marked as invalid, time peroid since "
	    "invalid is less than CleanUpPeriod", "2022-12-27", "2023-05-01", "2022-12-27",
	    "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-28", "2022-12-30", "" },
	{ "auto-generated secret has 'last-used' label, the time period since last-used is "
	    "larger than CleanUpPeriod, secret has been marked as invalid, time peroid since "
	    "invalid is larger than CleanUpPeriod", "2022-12-27", "2023-01-05", "2022-12-27",
	    "default", "12345", 0, ACCOUNT_LISTS_IT, 0, 0, "2022-12-28", "2023-05-01",
	    "delete rv=1" },
};

/* Midnight UTC of date. */
static double
day(const char *date)
{
	struct tm tm;

	memset(&tm, 0, sizeof tm);
	assert_int_equal(sscanf(date, "%d-%d-%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday), 3);
	tm.tm_year -= 1900;
	tm.tm_mon--;
	return (double)timegm(&tm);
}

struct env {
	struct ctl_world *w;
	struct controller_config config;
	const char *flags[1];
	char period[32];
	const void *row;
};

static int
env_setup(void **state)
{
	struct env *e = xcalloc(1, sizeof *e);
	const struct case_row *row = *state;

	e->row = row;
	/* kube's configuredLegacyTokenCleanUpPeriod: now minus the start date. */
	snprintf(e->period, sizeof e->period, "%.0fs", NOW - day(row->start));
	e->flags[0] = e->period;
	e->config.flags = e->flags;
	e->w = ctl_world_new(&legacytokencleaner_controller_type, &e->config);
	*state = e;
	return 0;
}

static int
env_teardown(void **state)
{
	struct env *e = *state;

	ctl_world_free(e->w);
	free(e);
	return 0;
}

static void
case_row(void **state)
{
	struct env *e = *state;
	const struct case_row *r = e->row;
	struct buf b;
	cJSON *secret;
	const struct action *a;

	if (r->since != NO_CONFIGMAP) {
		buf_init(&b);
		buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
		    "\"name\":\"kube-apiserver-legacy-service-account-token-tracking\","
		    "\"namespace\":\"kube-system\",\"uid\":\"uid-cm\",\"resourceVersion\":\"1\"}");
		if (*r->since != '\0')
			buf_printf(&b, ",\"data\":{\"since\":\"%s\"}", r->since);
		buf_append_str(&b, "}");
		ctl_cache(e->w, resource_find("configmaps"), fixture_parse(b.data));
		buf_free(&b);
	}
	if (r->account != NO_ACCOUNT)
		ctl_cache(e->w, resource_find("serviceaccounts"), fixture_parse(
		    r->account == ACCOUNT_LISTS_IT ?
		    "{\"metadata\":{\"name\":\"default\",\"namespace\":\"default\","
		    "\"uid\":\"12345\",\"resourceVersion\":\"1\"},"
		    "\"secrets\":[{\"name\":\"token-secret-1\"}]}" :
		    "{\"metadata\":{\"name\":\"default\",\"namespace\":\"default\","
		    "\"uid\":\"12345\",\"resourceVersion\":\"1\"},\"secrets\":[]}"));
	ctl_cache(e->w, resource_find("pods"), fixture_parse(r->mounted ?
	    "{\"metadata\":{\"name\":\"pod-1\",\"namespace\":\"default\",\"uid\":\"uid-pod\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"volumes\":[{\"name\":\"foo\","
	    "\"secret\":{\"secretName\":\"token-secret-1\"}}]}}" :
	    "{\"metadata\":{\"name\":\"pod-1\",\"namespace\":\"default\",\"uid\":\"uid-pod\","
	    "\"resourceVersion\":\"1\"}}"));
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"23456\","
	    "\"resourceVersion\":\"1\",\"creationTimestamp\":\"%sT00:00:00Z\"%s,\"labels\":{",
	    r->opaque ? "regular-secret-1" : "token-secret-1", r->created,
	    r->deleting ? ",\"deletionTimestamp\":\"2025-12-31T00:00:00Z\"" : "");
	if (*r->last_used != '\0')
		buf_printf(&b, "\"kubernetes.io/legacy-token-last-used\":\"%s\"", r->last_used);
	if (*r->invalid_since != '\0')
		buf_printf(&b, "%s\"kubernetes.io/legacy-token-invalid-since\":\"%s\"",
		    *r->last_used != '\0' ? "," : "", r->invalid_since);
	buf_printf(&b, "},\"annotations\":{\"kubernetes.io/service-account.name\":\"%s\","
	    "\"kubernetes.io/service-account.uid\":\"%s\"}},\"type\":\"%s\"}",
	    r->account_name, r->account_uid,
	    r->opaque ? "Opaque" : "kubernetes.io/service-account-token");
	secret = fixture_parse(b.data);
	buf_free(&b);
	ctl_cache(e->w, resource_find("secrets"), secret);
	ctl_sync(e->w, r->opaque ? "default/regular-secret-1" : "default/token-secret-1",
	    NOW);
	buf_init(&b);
	for (int i = 0; i < e->w->result.nwrites; i++) {
		a = &e->w->result.writes[i];
		if (a->type == ACTION_DELETE) {
			assert_string_equal(a->name, "token-secret-1");
			buf_printf(&b, "delete rv=%s", a->precondition_rv);
		} else {
			const cJSON *labels = json_path(a->body, "metadata.labels");
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels,
			    "kubernetes.io/legacy-token-invalid-since");

			assert_int_equal(a->type, ACTION_PATCH);
			assert_true(a->merge_patch);
			assert_string_equal(json_string(a->body, "metadata.uid"), "23456");
			buf_printf(&b, "label %s", cJSON_IsString(v) ? v->valuestring : "?");
		}
	}
	assert_described(r->name, b.data != NULL ? b.data : "", r->expect);
	buf_free(&b);
	/* kube's pass comes again a day later to a token Secret (an Opaque one is none). */
	assert_true(e->w->result.requeue_after == (r->opaque ? 0 : 86400));
}

/* pod_secret_names finds every reference kube's VisitPodSecretNames visits, and no
 * other. */
static void
pod_secret_names_are_kubes(void **state)
{
	struct ctl_world *w = ctl_world_new(&legacytokencleaner_controller_type, NULL);
	sqlite3_stmt *stmt;
	struct buf b;

	(void)state;
	ctl_cache(w, resource_find("pods"), fixture_parse("{\"metadata\":{\"name\":\"p\","
	    "\"namespace\":\"ns\",\"uid\":\"u\",\"resourceVersion\":\"1\"},\"spec\":{"
	    "\"imagePullSecrets\":[{\"name\":\"pull\"},{\"name\":\"\"}],"
	    "\"containers\":[{\"name\":\"c\",\"envFrom\":[{\"secretRef\":{\"name\":\"envfrom\"}},"
	    "{\"configMapRef\":{\"name\":\"not-a-secret\"}}],\"env\":[{\"name\":\"x\","
	    "\"valueFrom\":{\"secretKeyRef\":{\"name\":\"env\",\"key\":\"k\"}}}]}],"
	    "\"initContainers\":[{\"name\":\"i\",\"envFrom\":[{\"secretRef\":"
	    "{\"name\":\"init\"}}]}],"
	    "\"ephemeralContainers\":[{\"name\":\"e\",\"env\":[{\"name\":\"y\",\"valueFrom\":"
	    "{\"secretKeyRef\":{\"name\":\"ephemeral\",\"key\":\"k\"}}}]}],"
	    "\"volumes\":[{\"name\":\"a\",\"secret\":{\"secretName\":\"volume\"}},"
	    "{\"name\":\"b\",\"projected\":{\"sources\":[{\"secret\":{\"name\":\"projected\"}},"
	    "{\"configMap\":{\"name\":\"cm\"}}]}},"
	    "{\"name\":\"c\",\"csi\":{\"driver\":\"d\",\"nodePublishSecretRef\":"
	    "{\"name\":\"csi\"}}},"
	    "{\"name\":\"d\",\"azureFile\":{\"secretName\":\"azure\",\"shareName\":\"s\"}},"
	    "{\"name\":\"e\",\"rbd\":{\"secretRef\":{\"name\":\"rbd\"}}},"
	    "{\"name\":\"f\",\"configMap\":{\"name\":\"cm2\"}}]}}"));
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store),
	    "SELECT secret FROM pod_secret_names WHERE namespace = 'ns' ORDER BY secret", -1,
	    &stmt, NULL), SQLITE_OK);
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s ", (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	assert_string_equal(b.data, "azure csi env envfrom ephemeral init projected pull rbd "
	    "volume ");
	buf_free(&b);
	ctl_world_free(w);
}

/* kube refuses a period that is not positive. */
static void
period_must_be_positive(void **state)
{
	static const char *const flags[] = { "0s" };
	struct controller_config config = { .flags = flags };
	struct ctl_world *w = ctl_world_new(NULL, NULL);

	(void)state;
	assert_int_equal(ctl_start(w, &legacytokencleaner_controller_type, &config), -1);
	assert_non_null(strstr(w->error, "invalid CleanUpPeriod"));
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(rows) + 2];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(rows); i++)
		tests[n++] = (struct CMUnitTest){ rows[i].name, case_row, env_setup,
		    env_teardown, (void *)&rows[i] };
	tests[n++] = (struct CMUnitTest){ "pod_secret_names: kube's VisitPodSecretNames",
	    pod_secret_names_are_kubes, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the period must be positive",
	    period_must_be_positive, NULL, NULL, NULL };
	return _cmocka_run_group_tests("legacytokencleaner", tests, n, NULL, NULL);
}
