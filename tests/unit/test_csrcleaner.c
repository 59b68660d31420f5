/*
 * test_csrcleaner.c - the CSR cleaner (controllers/csrcleaner.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/certificates/cleaner/cleaner.go; the cases
 * are those of its TestCleanerWithApprovedExpiredCSR (cleaner_test.go), times given as
 * seconds before now, with certificates of sqlkcm's own (self-signed, one that expired in
 * 2020, one that expires in 2099); then when the next sync comes for a CSR not due yet.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action.h"
#include "controller.h"
#include "controllers/csrcleaner.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

/* The PEM of a certificate that expired on 2020-01-01, base64 as in status.certificate. */
#define EXPIRED_B64 \
	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJPekNCNHFBREFnRUNBaFFRWkNFb2hz" \
	"anFjamxoY3d2MnZYcDVxWXpoQ3pBS0JnZ3Foa2pPUFFRREFqQWUKTVJ3d0dnWURWUVFEREJO" \
	"emNXeHJZMjB0ZEdWemRDMWxlSEJwY21Wa01CNFhEVEU1TURFd01UQXdNREF3TUZvWApEVEl3" \
	"TURFd01UQXdNREF3TUZvd0hqRWNNQm9HQTFVRUF3d1RjM0ZzYTJOdExYUmxjM1F0Wlhod2FY" \
	"SmxaREJaCk1CTUdCeXFHU000OUFnRUdDQ3FHU000OUF3RUhBMElBQkEwT3djMlBDanFtNDEw" \
	"R0hWSWxxTGZGdmJhcUxUNTcKRUdDN09NYzBYWkZpcmFQT0x2MkFaRmtuSW1XVWxmVlgzNldT" \
	"UVBtNFZITzkxSGlRRmw3MTJGd3dDZ1lJS29aSQp6ajBFQXdJRFNBQXdSUUloQUpJVFlkTith" \
	"U3RkVzAzSDhlMTlHVGNteXRTOUJJM1dGMDJRYXBpaVIvTGJBaUJJCko5YjFvcmk0TXVNaUZw" \
	"cWxuUitNdld5S2hRMkQvd01IQytlKzRBUUh4dz09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0t" \
	"LS0K"
/* One that expires on 2099-01-01. */
#define UNEXPIRED_B64 \
	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJRRENCNktBREFnRUNBaFE0bzRaR2M4" \
	"NHROZkN0Um9tWk5ES1hXQXR6U2pBS0JnZ3Foa2pPUFFRREFqQWcKTVI0d0hBWURWUVFEREJW" \
	"emNXeHJZMjB0ZEdWemRDMTFibVY0Y0dseVpXUXdJQmNOTWpBd01UQXhNREF3TURBdwpXaGdQ" \
	"TWpBNU9UQXhNREV3TURBd01EQmFNQ0F4SGpBY0JnTlZCQU1NRlhOeGJHdGpiUzEwWlhOMExY" \
	"VnVaWGh3CmFYSmxaREJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEEwSUFCSy9CMGUw" \
	"OTh3MmxBVkZHVU5CbFFucW4KNWpJdjBQWXdJSG5Xck5BTE12dkkyUVZIU1NUZlg3UE95eFM2" \
	"Mm5QOWxmdFNwZHB3OUVrRC9YODhVblJFYXk4dwpDZ1lJS29aSXpqMEVBd0lEUndBd1JBSWdW" \
	"R2tCR05jUkhuZk9yOXE4UXVFeTRjTEdkZTZYTDVaV1B3RkNPalBFCnRUVUNJRUYrb2xoTEVI" \
	"MXFZdlNhVEtPamE5T2Z0SEQ0NnRMTm11ZDdpWjduczlFUgotLS0tLUVORCBDRVJUSUZJQ0FU" \
	"RS0tLS0tCg=="
#define GARBAGE_B64 "Z2FyYmFnZQ=="

#define MIN 60.0
#define HOURS 3600.0

struct cond {
	const char *type;
	double ago;		/* its lastUpdateTime, seconds before NOW */
};

struct case_row {
	const char *name;
	double created_ago;
	const char *certificate;	/* base64; NULL: not issued */
	struct cond conditions[2];
	int deleted;
};

static const struct case_row rows[] = {
	{ "no delete approved not passed deadline", 1 * MIN, UNEXPIRED_B64,
	    { { "Approved", 50 * MIN } }, 0 },
	{ "no delete approved passed deadline not issued", 1 * MIN, NULL,
	    { { "Approved", 50 * MIN } }, 0 },
	{ "delete approved passed deadline", 1 * MIN, UNEXPIRED_B64,
	    { { "Approved", 2 * HOURS } }, 1 },
	{ "no delete denied not passed deadline", 1 * MIN, NULL,
	    { { "Denied", 50 * MIN } }, 0 },
	{ "delete denied passed deadline", 1 * MIN, NULL, { { "Denied", 2 * HOURS } }, 1 },
	{ "no delete failed not passed deadline", 1 * MIN, NULL,
	    { { "Approved", 2 * HOURS }, { "Failed", 50 * MIN } }, 0 },
	{ "delete failed passed deadline", 1 * MIN, NULL,
	    { { "Approved", 2 * HOURS }, { "Failed", 2 * HOURS } }, 1 },
	{ "no delete pending not passed deadline", 5 * HOURS, NULL, { { NULL, 0 } }, 0 },
	{ "delete pending passed deadline", 25 * HOURS, NULL, { { NULL, 0 } }, 1 },
	{ "delete approved unissued past deadline", 1 * MIN, NULL,
	    { { "Approved", 25 * HOURS } }, 1 },
	{ "no delete approved unissued not past deadline", 1 * MIN, NULL,
	    { { "Approved", 5 * HOURS } }, 0 },
	{ "no delete approved not passed deadline unexpired", 1 * MIN, UNEXPIRED_B64,
	    { { "Approved", 50 * MIN } }, 0 },
	{ "delete approved not passed deadline expired", 1 * MIN, EXPIRED_B64,
	    { { "Approved", 50 * MIN } }, 1 },
	{ "delete approved passed deadline unparseable", 1 * MIN, GARBAGE_B64,
	    { { "Approved", 2 * HOURS } }, 1 },
};

static cJSON *
csr_new(const struct case_row *row)
{
	char created[TIME_RFC3339_SIZE], at[TIME_RFC3339_SIZE];
	struct buf b;
	cJSON *csr;

	time_format_rfc3339((time_t)(NOW - row->created_ago), created);
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"certificates.k8s.io/v1\","
	    "\"kind\":\"CertificateSigningRequest\",\"metadata\":{\"name\":\"csr\","
	    "\"uid\":\"uid-csr\",\"resourceVersion\":\"1\",\"creationTimestamp\":\"%s\"},"
	    "\"spec\":{\"signerName\":\"example.com/x\"},\"status\":{\"conditions\":[", created);
	for (int i = 0; i < 2 && row->conditions[i].type != NULL; i++) {
		time_format_rfc3339((time_t)(NOW - row->conditions[i].ago), at);
		buf_printf(&b, "%s{\"type\":\"%s\",\"status\":\"True\",\"lastUpdateTime\":\"%s\"}",
		    i > 0 ? "," : "", row->conditions[i].type, at);
	}
	buf_append_str(&b, "]");
	if (row->certificate != NULL)
		buf_printf(&b, ",\"certificate\":\"%s\"", row->certificate);
	buf_append_str(&b, "}}");
	csr = fixture_parse(b.data);
	buf_free(&b);
	return csr;
}

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&csrcleaner_controller_type, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

/* The row's CSR, synced at NOW: deleted (by uid) or not. */
static void
case_row(void **state)
{
	struct ctl_world *w = *state;
	const struct case_row *row = w->row;

	ctl_cache(w, resource_find("certificatesigningrequests"), csr_new(row));
	ctl_sync(w, "csr", NOW);
	assert_int_equal(w->result.nwrites, row->deleted);
	if (row->deleted) {
		assert_int_equal(w->result.writes[0].type, ACTION_DELETE);
		assert_string_equal(w->result.writes[0].uid, "uid-csr");
		assert_string_equal(w->result.writes[0].name, "csr");
	}
}

/* A CSR not due yet is looked at again one second after its next deadline. */
static void
next_deadline(void **state)
{
	static const struct {
		struct case_row row;
		double next;		/* seconds after NOW */
	} cases[] = {
		{ { "approved, issued, 50 min ago: 10 min", 1 * MIN, UNEXPIRED_B64,
		    { { "Approved", 50 * MIN } }, 0 }, 10 * MIN },
		{ { "approved, not issued, 5 h ago: 19 h", 1 * MIN, NULL,
		    { { "Approved", 5 * HOURS } }, 0 }, 19 * HOURS },
		{ { "pending, made 5 h ago: 19 h", 5 * HOURS, NULL, { { NULL, 0 } }, 0 },
		    19 * HOURS },
		{ { "denied 50 min ago: 10 min", 1 * MIN, NULL, { { "Denied", 50 * MIN } }, 0 },
		    10 * MIN },
	};
	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		cJSON *csr = csr_new(&cases[i].row);
		const char *why = NULL;
		double next = -1;

		assert_int_equal(csrcleaner_due(csr, NOW, &why, &next), 0);
		if (next != NOW + cases[i].next)
			fail_msg("%s: next %.0f s after now", cases[i].row.name, next - NOW);
		/* At the deadline, not yet (kube wants now after it); a second later, due. */
		assert_int_equal(csrcleaner_due(csr, next, &why, &next), 0);
		assert_int_equal(csrcleaner_due(csr, NOW + cases[i].next + 1, &why, &next), 1);
		cJSON_Delete(csr);
	}
}

/* The certificate's notAfter, through OpenSSL; what does not parse has none. */
static void
certificate_not_after(void **state)
{
	double t = 0;

	(void)state;
	assert_int_equal(csrcleaner_not_after(EXPIRED_B64, &t), 0);
	assert_true(t == 1577836800.0);		/* 2020-01-01T00:00:00Z */
	assert_int_equal(csrcleaner_not_after(UNEXPIRED_B64, &t), 0);
	assert_true(t == 4070908800.0);		/* 2099-01-01T00:00:00Z */
	assert_int_equal(csrcleaner_not_after(GARBAGE_B64, &t), -1);
	assert_int_equal(csrcleaner_not_after("", &t), -1);
	assert_int_equal(csrcleaner_not_after("not base64!", &t), -1);
	assert_int_equal(csrcleaner_not_after("LS0t", &t), -1);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(rows) + 2];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(rows); i++)
		tests[n++] = (struct CMUnitTest){ rows[i].name, case_row, world_setup,
		    world_teardown, (void *)&rows[i] };
	tests[n++] = (struct CMUnitTest){ "the next deadline", next_deadline, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "a certificate's notAfter", certificate_not_after,
	    NULL, NULL, NULL };
	return _cmocka_run_group_tests("csrcleaner", tests, n, NULL, NULL);
}
