/*
 * csrcleaner.c - the CSR cleaner (kube's certificatesigningrequest-cleaner-controller).
 *
 * A key is a CSR's name. A sync deletes the CSR when one of kube's rules calls for it
 * (csrcleaner_due), each measured from a time the CSR carries:
 *
 *   issued (status.certificate set), approved more than 1 h ago
 *   denied more than 1 h ago                 (the Denied condition's lastUpdateTime)
 *   failed more than 1 h ago                 (the Failed condition's)
 *   pending (no condition), made more than 24 h ago
 *   issued and approved, its certificate expired (its first certificate's notAfter)
 *   approved, not issued, more than 24 h after the approval
 *
 * Otherwise the key is synced again when the next of these times comes. kube's cleaner
 * looks at every CSR once an hour (its worker lists them all) and deletes what it finds
 * past a deadline then; this deletes at the deadline. The handlers queue a CSR when it is
 * added or changes; list_keys gives every cached CSR. kube runs one worker.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "controllers/csrcleaner.h"
#include "controllers/csrs.h"
#include "json.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define HOUR 3600.0

struct csrcleaner_state {
	struct csrs csrs;		/* first: csrs_handle_event and _list_keys */
};

/* --- the rules ------------------------------------------------------------------------- */

int
csrcleaner_not_after(const char *b64, double *not_after)
{
	size_t len = strlen(b64), pad = 0;
	unsigned char *pem;
	int n, rc = -1;
	BIO *bio;
	X509 *cert;
	struct tm tm;

	if (len == 0 || len % 4 != 0 || len > 1 << 24)
		return -1;
	pem = xmalloc(len / 4 * 3 + 1);
	n = EVP_DecodeBlock(pem, (const unsigned char *)b64, (int)len);
	while (pad < 2 && b64[len - 1 - pad] == '=')
		pad++;
	if (n < 0 || (size_t)n < pad) {
		free(pem);
		return -1;
	}
	bio = BIO_new_mem_buf(pem, n - (int)pad);
	cert = bio != NULL ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
	if (cert != NULL && ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1) {
		*not_after = (double)timegm(&tm);
		rc = 0;
	}
	X509_free(cert);
	BIO_free(bio);
	free(pem);
	return rc;
}

/* The lastUpdateTime of csr's condition of type, or -1 when it has none (or none set). */
static double
condition_time(const cJSON *csr, const char *type)
{
	const cJSON *c;
	time_t t;

	cJSON_ArrayForEach(c, json_path(csr, "status.conditions")) {
		if (strcmp(json_string(c, "type"), type) == 0 &&
		    time_parse_rfc3339(json_string(c, "lastUpdateTime"), &t) == 0)
			return (double)t;
	}
	return -1;
}

/* Notes a rule's deadline: past (now is after it): due; else a candidate for *next. */
static int
deadline(double at, double now, double *next)
{
	if (now > at)
		return 1;
	if (*next == 0 || at < *next)
		*next = at;
	return 0;
}

int
csrcleaner_due(const cJSON *csr, double now, const char **why, double *next)
{
	const char *certificate = json_string(csr, "status.certificate");
	const cJSON *conditions = json_path(csr, "status.conditions");
	double approved = condition_time(csr, "Approved");
	double denied = condition_time(csr, "Denied");
	double failed = condition_time(csr, "Failed");
	int issued = *certificate != '\0', has_approved = 0;
	double not_after;
	const cJSON *c;
	time_t created;

	*next = 0;
	cJSON_ArrayForEach(c, conditions)
		has_approved |= strcmp(json_string(c, "type"), "Approved") == 0;
	if (issued && approved >= 0 && deadline(approved + HOUR, now, next)) {
		*why = "issued, and approved more than 1h ago";
		return 1;
	}
	if (denied >= 0 && deadline(denied + HOUR, now, next)) {
		*why = "denied more than 1h ago";
		return 1;
	}
	if (failed >= 0 && deadline(failed + HOUR, now, next)) {
		*why = "failed more than 1h ago";
		return 1;
	}
	if (cJSON_GetArraySize(conditions) == 0 &&
	    time_parse_rfc3339(json_string(csr, "metadata.creationTimestamp"), &created) == 0 &&
	    deadline((double)created + 24 * HOUR, now, next)) {
		*why = "pending for more than 24h";
		return 1;
	}
	if (has_approved && issued && csrcleaner_not_after(certificate, &not_after) == 0 &&
	    deadline(not_after, now, next)) {
		*why = "its certificate has expired";
		return 1;
	}
	if (!issued && approved >= 0 && deadline(approved + 24 * HOUR, now, next)) {
		*why = "approved more than 24h ago and never issued";
		return 1;
	}
	return 0;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
csrcleaner_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct csrcleaner_state *st = c->state;
	const char *why = NULL;
	double next = 0;
	struct action *a;
	int rc = csrs_read(&st->csrs, c, key, out, NULL, error);

	if (rc <= 0)
		return rc;
	if (!csrcleaner_due(out->owner, now, &why, &next)) {
		/* One second past the deadline: kube's rules want now after it. */
		if (next > 0)
			out->requeue_after = next - now + 1;
		return 0;
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_DELETE;
	a->verb = "delete";
	a->resource = st->csrs.resource;
	a->namespace = xstrdup("");
	a->name = xstrdup(key);
	a->uid = xstrdup(out->owner_uid);
	a->reason = xstrdup(why);
	return 0;
}

/* --- the type -------------------------------------------------------------------------- */

static int
csrcleaner_init(struct controller *c, char **error)
{
	struct csrcleaner_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	return csrs_init(&st->csrs, c, NULL, error);
}

static void
csrcleaner_fini(struct controller *c)
{
	struct csrcleaner_state *st = c->state;

	if (st == NULL)
		return;
	csrs_fini(&st->csrs);
	free(st);
	c->state = NULL;
}

static const char *const csrcleaner_resources[] = { "certificatesigningrequests", NULL };

const struct controller_type csrcleaner_controller_type = {
	.name = "csrcleaner",
	.resources = csrcleaner_resources,
	.default_workers = 1,		/* kube starts its cleaner with one */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "csrcleaner",
	.client_name = "certificate-controller",
	.recovery = NULL,
	.init = csrcleaner_init,
	.fini = csrcleaner_fini,
	.handle_event = csrs_handle_event,
	.list_keys = csrs_list_keys,
	.sync = csrcleaner_sync,
};
