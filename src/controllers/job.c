/*
 * job.c - the Job controller (kube's job-controller).
 *
 * A key is a Job's namespace/name. A Job managed by another controller (spec.managedBy
 * other than kubernetes.io/job-controller), a finished one (Complete or Failed) and one of
 * an unknown completion mode are left alone (the last with kube's UnknownCompletionMode
 * warning).
 *
 * Its pods are the ones it controls (ownerReferences), read through the view job_pods
 * (schema/023-job.sql). Each sync, as kube's syncJob:
 *
 *   - counts: active (not finished, not being deleted), ready, terminating (being deleted,
 *     not finished); succeeded and failed are the status's counters plus the finished pods
 *     not counted yet. A pod being deleted before it finished counts as failed, unless the
 *     Job only replaces failed pods (podReplacementPolicy Failed, or a podFailurePolicy);
 *   - decides whether the Job is finishing: a FailureTarget condition when more pods failed
 *     than backoffLimit (or, with restartPolicy OnFailure, its pods restarted that often:
 *     BackoffLimitExceeded) or it ran longer than activeDeadlineSeconds (DeadlineExceeded),
 *     or a failed pod matches a FailJob rule of its podFailurePolicy (PodFailurePolicy, with
 *     kube's message); a failed pod an Ignore rule matches is not counted;
 *     SuccessCriteriaMet when enough pods succeeded (completions, or any one when
 *     completions is unset) and none is active. A finishing Job's active pods are
 *     deleted first; its FailureTarget is written once they are;
 *   - otherwise manages its pods: none while suspended (the Suspended condition, and the
 *     start time cleared), else as many active as parallelism and the completions still
 *     wanted allow, created from the template with the tracking finalizer, at most 500 a
 *     sync; after failures, creation waits kube's backoff (10 s doubling per failure after
 *     the last success, at most 10 min), measured from the pods' finish times;
 *   - tracks finished pods as kube does, in the order that counts none twice and loses
 *     none across restarts: a finished pod that still carries the
 *     batch.kubernetes.io/job-tracking finalizer is first written into
 *     status.uncountedTerminatedPods, then its finalizer is removed, and once the cache
 *     shows it without the finalizer (or gone) its uid moves from uncountedTerminatedPods
 *     into succeeded or failed. The first two are ordered writes of one sync (the status
 *     update, then the pods' patches); the move happens in the sync that sees the
 *     finalizers gone (kube makes it at once, in the same sync: the end state is the same).
 *     A sync that removes finalizers writes nothing else of the status;
 *   - in the Indexed mode, each pod has an index below completions (the
 *     batch.kubernetes.io/job-completion-index annotation and label, the hostname
 *     <job>-<index>, JOB_COMPLETION_INDEX in every container, the name <job>-<index>-):
 *     the lowest indexes neither succeeded nor active are created; active pods of no
 *     valid index, past completions or repeating an index are deleted first; a succeeded
 *     pod counts by its index, in status.completedIndexes (kube's interval string "0,2-4"),
 *     written before its finalizer goes, and succeeded is the number of those indexes;
 *     an Indexed Job's successPolicy met (a rule's succeededIndexes all succeeded, or
 *     succeededCount of them) sets SuccessCriteriaMet (SuccessPolicy, "Matched rules at
 *     index N"), its active pods deleted, then Complete;
 *   - with backoffLimitPerIndex (Indexed), each pod carries the failures of its index
 *     before it (the batch.kubernetes.io/job-index-failure-count annotation, and
 *     job-index-ignored-failure-count for failures an Ignore rule matched): a failed pod
 *     past the limit, or one a FailIndex rule matches, fails its index
 *     (status.failedIndexes, written with completedIndexes); a failed index gets no new
 *     pod; the last failed pod of an index keeps its finalizer (and is not counted yet)
 *     until the index has its next pod, which is created after kube's backoff counted
 *     from that pod's failures and carries them on; more failed indexes than
 *     maxFailedIndexes fail the Job (MaxFailedIndexesExceeded), and so does every index
 *     finished with some failed (FailedIndexes). kube creates the pods of the indexes
 *     whose backoff has passed and waits for another event for the others; sqlkcm's
 *     sync also comes back when the first of those has passed;
 *   - finishes the Job: once the FailureTarget or SuccessCriteriaMet condition is written,
 *     no pod is uncounted and none is terminating, the Failed (with the FailureTarget's
 *     reason and message) or Complete condition and the completion time are written, with
 *     kube's events (Completed "Job completed", or a Warning of the failure's reason).
 *
 * Every status write is an update of the whole Job at the cached resourceVersion, so a
 * stale cache is refused (409) and synced again. Creations and deletions are counted by
 * expectations, kept in the store across restarts (the recovery below). Of kube's
 * job_controller_* metrics, all but terminated_pods_tracking_finalizer_total and
 * stale_sync_skips_total; a write's counters are added once it succeeds.
 * Claiming (controllerref.c) as kube's getPodsForJob: the namespace's orphans the
 * selector matches are adopted with the tracking finalizer, and counted as tracked in the
 * sync that adopts them; its own pods the selector no longer matches are released, the
 * finalizer removed with the reference, and no longer counted.
 * kube's workqueue backs a failed sync off from 1 s to 60 s, and runs
 * --concurrent-job-syncs workers (5).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consistency.h"
#include "controllerref.h"
#include "controllers/job.h"
#include "controllers/replicaset.h"
#include "expectations.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "resource.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"

#define TRACKING_FINALIZER "batch.kubernetes.io/job-tracking"
#define JOB_NAME_LABEL "batch.kubernetes.io/job-name"
#define INDEX_ANNOTATION "batch.kubernetes.io/job-completion-index"
#define FAILURE_COUNT_ANNOTATION "batch.kubernetes.io/job-index-failure-count"
#define IGNORED_COUNT_ANNOTATION "batch.kubernetes.io/job-index-ignored-failure-count"
#define MAX_INDEXED_COMPLETIONS 100000	/* the API's bound for an Indexed Job */
#define JOB_CONTROLLER_NAME "kubernetes.io/job-controller"
#define MAX_PODS_PER_SYNC 500		/* kube's MaxPodCreateDeletePerSync */
#define MAX_UNCOUNTED 500		/* kube's MaxUncountedPods */
#define POD_FAILURE_BACKOFF 10.0	/* kube's DefaultJobPodFailureBackOff */
#define MAX_POD_FAILURE_BACKOFF 600.0	/* kube's MaxJobPodFailureBackOff */
#define NELEM(a) (sizeof (a) / sizeof (a)[0])

enum {
	STMT_JOB,
	STMT_PODS,
	STMT_JOB_BY_UID,
	STMT_KEYS,
	STMT_IN_NAMESPACE,
	STMT_ORPHANED,
	STMT_FINISHED_HELD,
	STMT_COUNT
};

static const char *const job_sql[STMT_COUNT] = {
	/* Job ?2 in namespace ?1: uid, resourceVersion, body. */
	[STMT_JOB] =
	    "SELECT uid, resource_version, body FROM cache_objects"
	    " WHERE resource = 'jobs' AND namespace = ?1 AND name = ?2",
	/* The pods Job ?1 controls. */
	[STMT_PODS] =
	    "SELECT pod, pod_uid, phase, deleting, tracked, ready, body FROM job_pods"
	    " WHERE job_uid = ?1 ORDER BY pod",
	[STMT_JOB_BY_UID] =
	    "SELECT name FROM cache_objects WHERE resource = 'jobs' AND namespace = ?1"
	    " AND uid = ?2",
	/* Every Job, every Job gone whose pods still hold the tracking finalizer (the body's
	 * text is searched first: few pods hold it), and the Jobs that orphans holding it
	 * name in their job-name label. */
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'jobs'"
	    " UNION SELECT p.namespace, json_extract(o.value, '$.name') FROM cache_pods p,"
	    " json_each(p.body, '$.metadata.ownerReferences') o"
	    " WHERE instr(p.body, '\"" TRACKING_FINALIZER "\"') > 0"
	    " AND json_type(o.value, '$.name') = 'text'"
	    " AND json_extract(o.value, '$.controller') = 1"
	    " AND json_extract(o.value, '$.kind') = 'Job'"
	    " AND json_extract(o.value, '$.apiVersion') = 'batch/v1'"
	    " AND NOT EXISTS (SELECT 1 FROM cache_objects j WHERE j.uid = p.controller_uid"
	    " AND j.resource = 'jobs')"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.metadata.finalizers') f"
	    " WHERE f.value = '" TRACKING_FINALIZER "')"
	    " UNION SELECT p.namespace, coalesce(json_extract(p.body,"
	    " '$.metadata.labels.\"" JOB_NAME_LABEL "\"'), json_extract(p.body,"
	    " '$.metadata.labels.\"job-name\"')) AS job FROM cache_pods p"
	    " WHERE instr(p.body, '\"" TRACKING_FINALIZER "\"') > 0"
	    " AND p.controller_uid IS NULL AND job IS NOT NULL"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.metadata.finalizers') f"
	    " WHERE f.value = '" TRACKING_FINALIZER "')"
	    " ORDER BY 1, 2",
	/* The Jobs of namespace ?1 with their selectors: those that could adopt an orphan. */
	[STMT_IN_NAMESPACE] =
	    "SELECT name, json_extract(body, '$.spec.selector') FROM cache_objects"
	    " WHERE resource = 'jobs' AND namespace = ?1 ORDER BY name",
	/* The pods of namespace ?1 that still hold the tracking finalizer ?3 and that a
	 * batch/v1 Job named ?2 controls which is gone (a Job of that name made since has
	 * another uid), or that no one controls and whose job-name label names ?2 (the
	 * garbage collector orphaned them): name, uid, whether no one controls it, labels. */
	[STMT_ORPHANED] =
	    "SELECT p.name, p.uid, p.controller_uid IS NULL,"
	    " json_extract(p.body, '$.metadata.labels') FROM cache_pods p"
	    " WHERE p.namespace = ?1"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.metadata.finalizers') f"
	    " WHERE f.value = ?3)"
	    " AND (p.controller_uid IS NULL OR NOT EXISTS (SELECT 1 FROM cache_objects j"
	    " WHERE j.uid = p.controller_uid AND j.resource = 'jobs'))"
	    " AND (EXISTS (SELECT 1 FROM json_each(p.body, '$.metadata.ownerReferences') o"
	    " WHERE json_extract(o.value, '$.controller') = 1"
	    " AND json_extract(o.value, '$.kind') = 'Job'"
	    " AND json_extract(o.value, '$.apiVersion') = 'batch/v1'"
	    " AND json_extract(o.value, '$.name') = ?2)"
	    " OR (p.controller_uid IS NULL AND coalesce(json_extract(p.body,"
	    " '$.metadata.labels.\"" JOB_NAME_LABEL "\"'), json_extract(p.body,"
	    " '$.metadata.labels.\"job-name\"')) = ?2))"
	    " ORDER BY p.name",
	/* The pods of finished Job ?1 being deleted that still hold the tracking finalizer. */
	[STMT_FINISHED_HELD] =
	    "SELECT pod, pod_uid FROM job_pods WHERE job_uid = ?1 AND tracked AND deleting"
	    " ORDER BY pod",
};

/* The orphans of a namespace that a selector matches, in the columns of STMT_PODS: the
 * selector's expression (selector_to_sql) goes at the end, its parameters after ?1. */
#define ORPHANS_SQL \
	"SELECT p.name, p.uid, p.phase, p.deletion_timestamp IS NOT NULL, 0," \
	" coalesce(p.ready, 0), p.body FROM cache_pods p" \
	" WHERE p.namespace = ?1 AND p.controller_uid IS NULL AND "

/* kube's job_controller_* metrics, in the daemon (NULL otherwise). */
struct job_metrics {
	struct metrics_family *sync_seconds, *syncs, *finished, *external, *pods_finished;
	struct metrics_family *by_policy, *indexes, *creations;
};

/* A sync's kind and completion mode, kept from its sync to the end of its writes, for
 * job_syncs_total and job_sync_duration_seconds. */
struct job_sync_kind {
	char *key;
	const char *mode, *action;
};

struct job_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	/* The last orphan listing prepared, and its SQL (selectors of one shape, the
	 * controller-uid label of a generated one, share it). */
	sqlite3_stmt *orphans;
	struct buf orphans_sql, orphans_next;
	const struct resource *jobs, *pods;
	struct job_metrics m;
	struct job_sync_kind *kinds;
	int nkinds;
};

/* One pod of the Job, as the sync sees it. */
struct job_pod {
	char *name, *uid;
	int succeeded, failed;		/* finished so (failed: kube's isPodFailed) */
	int active, terminating, ready, tracked;
	double finished_at;		/* kube's getFinishedTime, for finished pods */
	long long restarts;		/* its containers' restarts, running or pending */
	int index;			/* its completion index; -1: none valid */
	/* A failed pod against the Job's podFailurePolicy: not counted (Ignore), its index
	 * failed at once (FailIndex), or the message of the FailJob rule it matches
	 * (malloc'd; NULL: none). */
	int ignored, fail_index;
	enum job_failure_action policy_action;
	char *fail_job;
	int orphan;			/* without a controller: adopted by this sync */
	/* The failures of its index before it, counted and ignored (the annotations kube
	 * writes on the pods of a Job with backoffLimitPerIndex). */
	long long index_failures, index_ignored;
};

/* --- rules ----------------------------------------------------------------------------- */

double
job_backoff_remaining(int failures_after_last_success, double last_failure, double now)
{
	double backoff = POD_FAILURE_BACKOFF;

	if (failures_after_last_success <= 0)
		return 0;
	for (int i = 1; i < failures_after_last_success && backoff < MAX_POD_FAILURE_BACKOFF;
	    i++)
		backoff *= 2;
	if (backoff > MAX_POD_FAILURE_BACKOFF)
		backoff = MAX_POD_FAILURE_BACKOFF;
	if (now - last_failure > backoff)
		return 0;
	return backoff - (now - last_failure);
}

static double
parse_time(const char *text)
{
	time_t t;

	return time_parse_rfc3339(text, &t) == 0 ? (double)t : -1;
}

/* kube's getFinishedTime: the last container's finish, else when Ready went False, else
 * the deletion, else the creation. */
static double
pod_finished_at(const cJSON *pod)
{
	static const char *const lists[] = { "status.initContainerStatuses",
	    "status.containerStatuses" };
	double best = -1, t;
	const cJSON *c;

	for (size_t i = 0; i < NELEM(lists); i++) {
		cJSON_ArrayForEach(c, json_path(pod, lists[i])) {
			t = parse_time(json_string(c, "state.terminated.finishedAt"));
			if (t > best)
				best = t;
		}
	}
	if (best >= 0)
		return best;
	cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
		if (strcmp(json_string(c, "type"), "Ready") == 0 &&
		    strcmp(json_string(c, "status"), "False") == 0 &&
		    (t = parse_time(json_string(c, "lastTransitionTime"))) >= 0)
			return t;
	}
	if ((t = parse_time(json_string(pod, "metadata.deletionTimestamp"))) >= 0)
		return t;
	return parse_time(json_string(pod, "metadata.creationTimestamp"));
}

static long long
pod_restarts(const cJSON *pod)
{
	static const char *const lists[] = { "status.initContainerStatuses",
	    "status.containerStatuses" };
	long long n = 0;
	const cJSON *c;

	for (size_t i = 0; i < NELEM(lists); i++)
		cJSON_ArrayForEach(c, json_path(pod, lists[i]))
			n += json_int(c, "restartCount", 0);
	return n;
}

static const cJSON *
condition_find(const cJSON *job, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(job, "status.conditions")) {
		if (strcmp(json_string(c, "type"), type) == 0)
			return c;
	}
	return NULL;
}

static int
condition_true(const cJSON *job, const char *type)
{
	const cJSON *c = condition_find(job, type);

	return c != NULL && strcmp(json_string(c, "status"), "True") == 0;
}

static cJSON *
condition_new(const char *type, const char *status, const char *reason, const char *message,
    double now)
{
	char stamp[TIME_RFC3339_SIZE];
	cJSON *c = cJSON_CreateObject();

	time_format_rfc3339((time_t)now, stamp);
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddStringToObject(c, "lastProbeTime", stamp);
	cJSON_AddStringToObject(c, "lastTransitionTime", stamp);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", message);
	return c;
}

/* kube's ensureJobConditionStatus on status (an object): a condition of type with that
 * status, reason and message, replaced when it differs; a False one is not added when
 * there is none. 1 when status changed. */
static int
condition_ensure(cJSON *status, const char *type, const char *value, const char *reason,
    const char *message, double now)
{
	cJSON *conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions"), *c;
	int i = 0;

	cJSON_ArrayForEach(c, conditions) {
		if (strcmp(json_string(c, "type"), type) == 0) {
			if (strcmp(json_string(c, "status"), value) == 0 &&
			    strcmp(json_string(c, "reason"), reason) == 0 &&
			    strcmp(json_string(c, "message"), message) == 0)
				return 0;
			cJSON_ReplaceItemInArray(conditions, i,
			    condition_new(type, value, reason, message, now));
			return 1;
		}
		i++;
	}
	if (strcmp(value, "True") != 0)
		return 0;
	if (!cJSON_IsArray(conditions)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		conditions = cJSON_AddArrayToObject(status, "conditions");
	}
	cJSON_AddItemToArray(conditions, condition_new(type, value, reason, message, now));
	return 1;
}

/* Whether uid is one of the strings of array. */
static int
uid_in(const cJSON *array, const char *uid)
{
	const cJSON *u;

	cJSON_ArrayForEach(u, array) {
		if (cJSON_IsString(u) && strcmp(u->valuestring, uid) == 0)
			return 1;
	}
	return 0;
}

/* kube's getCompletionIndex on the annotation's text: a whole number (Go's Atoi), -1 when
 * none or negative. */
int
job_completion_index(const char *text)
{
	const char *p = text;
	long long v = 0;
	int negative = 0;

	if (text == NULL)
		return -1;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	if (*p == '\0')
		return -1;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || v > 1000000000LL)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return negative || v > 2147483647LL ? -1 : (int)v;
}

long long
job_index_failure_count(const char *text)
{
	char *end;
	long long n;

	if (text == NULL || *text == '\0' || isspace((unsigned char)*text))
		return 0;
	errno = 0;
	n = strtoll(text, &end, 10);
	if (*end != '\0' || errno != 0 || n < 0 || n > INT32_MAX)
		return 0;
	return n;
}

/* A failure count annotation of pod, as job_index_failure_count reads it. */
static long long
failure_count(const cJSON *pod, const char *annotation)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(json_path(pod, "metadata.annotations"),
	    annotation);

	return cJSON_IsString(v) ? job_index_failure_count(v->valuestring) : 0;
}

/* kube's parseIndexesFromString: marks in done[0..completions) the indexes of text
 * ("1,3-5"); what does not parse is skipped, what lies past completions dropped. */
void
job_indexes_parse(const char *text, int completions, char *done)
{
	char *copy = xstrdup(text), *save = NULL, *part;

	for (part = strtok_r(copy, ",", &save); part != NULL; part = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(part, '-');
		int first, last;

		if (dash != NULL)
			*dash = '\0';
		first = job_completion_index(part);
		if (first < 0)
			continue;
		if (first >= completions)
			break;
		last = dash != NULL ? job_completion_index(dash + 1) : first;
		if (last < 0)
			continue;
		if (last >= completions)
			last = completions - 1;
		for (int i = first; i <= last; i++)
			done[i] = 1;
	}
	free(copy);
}

char *
job_indexes_format(const char *done, int completions)
{
	struct buf b;
	char *out;

	buf_init(&b);
	for (int i = 0; i < completions; i++) {
		int last = i;

		if (!done[i])
			continue;
		while (last + 1 < completions && done[last + 1])
			last++;
		buf_printf(&b, "%s%d", b.len > 0 ? "," : "", i);
		if (last == i + 1)
			buf_printf(&b, ",%d", last);
		else if (last > i)
			buf_printf(&b, "-%d", last);
		i = last;
	}
	out = xstrndup(b.data != NULL ? b.data : "", b.len);
	buf_free(&b);
	return out;
}

/* The first container of status list (containerStatuses, initContainerStatuses) of pod
 * that terminated with a non-zero exit code that requirement (an onExitCodes) matches. */
static const cJSON *
exit_code_match(const cJSON *pod, const char *list, const cJSON *requirement)
{
	const char *container = json_string(requirement, "containerName");
	const char *op = json_string(requirement, "operator");
	const cJSON *c, *v;

	cJSON_ArrayForEach(c, json_path(pod, list)) {
		const cJSON *code = json_path(c, "state.terminated.exitCode");
		int in = 0;

		if (json_path(c, "state.terminated") == NULL ||
		    (*container != '\0' && strcmp(container, json_string(c, "name")) != 0))
			continue;
		if (!cJSON_IsNumber(code) || code->valuedouble == 0)
			continue;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(requirement, "values"))
			in |= cJSON_IsNumber(v) && v->valuedouble == code->valuedouble;
		if ((strcmp(op, "In") == 0 && in) || (strcmp(op, "NotIn") == 0 && !in))
			return c;
	}
	return NULL;
}

enum job_failure_action
job_match_pod_failure_policy(const cJSON *policy, const cJSON *pod, char **message)
{
	const cJSON *rule;
	int index = 0;

	*message = NULL;
	cJSON_ArrayForEach(rule, json_path(policy, "rules")) {
		const char *action = json_string(rule, "action");
		const cJSON *exit_codes = cJSON_GetObjectItemCaseSensitive(rule, "onExitCodes");
		const cJSON *conditions = cJSON_GetObjectItemCaseSensitive(rule,
		    "onPodConditions");
		const cJSON *container = NULL, *condition = NULL, *c, *pattern;

		if (exit_codes != NULL && !cJSON_IsNull(exit_codes)) {
			container = exit_code_match(pod, "status.containerStatuses", exit_codes);
			if (container == NULL)
				container = exit_code_match(pod, "status.initContainerStatuses",
				    exit_codes);
		} else if (conditions != NULL && !cJSON_IsNull(conditions)) {
			cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
				cJSON_ArrayForEach(pattern, conditions) {
					if (condition == NULL && strcmp(json_string(c, "type"),
					    json_string(pattern, "type")) == 0 &&
					    strcmp(json_string(c, "status"),
					    json_string(pattern, "status")) == 0)
						condition = c;
				}
			}
		}
		if (container != NULL || condition != NULL) {
			if (strcmp(action, "Ignore") == 0)
				return JOB_FAILURE_IGNORE;
			if (strcmp(action, "Count") == 0)
				return JOB_FAILURE_COUNT;
			if (strcmp(action, "FailIndex") == 0)
				return JOB_FAILURE_FAIL_INDEX;
			if (strcmp(action, "FailJob") == 0) {
				*message = container != NULL ?
				    xasprintf("Container %s for pod %s/%s failed with exit code "
				    "%lld matching FailJob rule at index %d",
				    json_string(container, "name"),
				    json_string(pod, "metadata.namespace"),
				    json_string(pod, "metadata.name"),
				    json_int(container, "state.terminated.exitCode", 0), index) :
				    xasprintf("Pod %s/%s has condition %s matching FailJob rule at "
				    "index %d", json_string(pod, "metadata.namespace"),
				    json_string(pod, "metadata.name"), json_string(condition, "type"),
				    index);
				return JOB_FAILURE_FAIL_JOB;
			}
		}
		index++;
	}
	return JOB_FAILURE_NONE;
}

int
job_match_success_policy(const cJSON *policy, int completions, const char *done,
    char **message)
{
	const cJSON *rule;
	int total = 0, index = 0;

	*message = NULL;
	for (int i = 0; i < completions; i++)
		total += done[i] != 0;
	if (policy == NULL || total == 0)
		return 0;
	cJSON_ArrayForEach(rule, json_path(policy, "rules")) {
		const cJSON *indexes = cJSON_GetObjectItemCaseSensitive(rule, "succeededIndexes");
		const cJSON *count = cJSON_GetObjectItemCaseSensitive(rule, "succeededCount");
		int met = 0;

		if (cJSON_IsString(indexes)) {
			char *wanted = xcalloc((size_t)completions + 1, 1);
			int nwanted = 0, contains = 0;

			job_indexes_parse(indexes->valuestring, completions, wanted);
			for (int i = 0; i < completions; i++) {
				nwanted += wanted[i];
				contains += wanted[i] && done[i];
			}
			free(wanted);
			met = nwanted > 0 && (contains == nwanted ||
			    (cJSON_IsNumber(count) && contains >= count->valuedouble));
		} else if (cJSON_IsNumber(count)) {
			met = total >= count->valuedouble;
		}
		if (met) {
			*message = xasprintf("Matched rules at index %d", index);
			return 1;
		}
		index++;
	}
	return 0;
}

/* --- reading --------------------------------------------------------------------------- */

static void
pods_clear(struct job_pod *pods, int n)
{
	for (int i = 0; i < n; i++) {
		free(pods[i].name);
		free(pods[i].uid);
		free(pods[i].fail_job);
	}
	free(pods);
}

/* How a sync claims the Job's pods. */
struct job_claim {
	const cJSON *job;
	const struct selector *sel;	/* NULL: claims nothing, releases nothing */
	const char *namespace, *uid;
	int deleting;			/* the Job is being deleted */
	int orphans;			/* the rows being read are orphans */
	struct sync_result *out;	/* takes the adoptions and releases */
};

/* Claims one pod of stmt's current row (kube's ClaimPods with the tracking finalizer):
 * 1 when the Job counts it, kept or adopted; a release or an adoption goes into
 * claim->out. */
static int
pod_claimed(struct job_state *st, const struct job_claim *claim, sqlite3_stmt *stmt,
    const cJSON *body, int deleting)
{
	const char *name = (const char *)sqlite3_column_text(stmt, 0);
	const char *uid = (const char *)sqlite3_column_text(stmt, 1);
	int matches = claim->sel == NULL ||
	    selector_matches(claim->sel, json_path(body, "metadata.labels"));
	enum controllerref_claim decision = controllerref_decide(claim->orphans ?
	    CONTROLLERREF_ORPHAN : CONTROLLERREF_OURS, matches, deleting, claim->deleting, 0);
	cJSON *patch;

	if (decision == CONTROLLERREF_ADOPT) {
		patch = controllerref_adopt_patch(st->jobs, claim->job, uid);
		controllerref_patch_finalizer(patch, decision, TRACKING_FINALIZER);
		controllerref_claim_action(action_append(&claim->out->claims,
		    &claim->out->nclaims), decision, st->pods, claim->namespace, name, uid,
		    patch, xstrdup("an orphan the selector matches"));
		claim->out->recheck_owner = 1;
	} else if (decision == CONTROLLERREF_RELEASE) {
		patch = controllerref_release_patch(claim->uid, uid);
		controllerref_patch_finalizer(patch, decision, TRACKING_FINALIZER);
		controllerref_claim_action(action_append(&claim->out->claims,
		    &claim->out->nclaims), decision, st->pods, claim->namespace, name, uid,
		    patch, xstrdup("the selector no longer matches its labels"));
	}
	return decision == CONTROLLERREF_KEEP || decision == CONTROLLERREF_ADOPT;
}

/* Reads stmt's rows (pod, pod_uid, phase, deleting, tracked, ready, body) into *v; the
 * pods the selector does not match (claim: released, or not adopted) are left out. */
static int
pods_read(struct job_state *st, sqlite3_stmt *stmt, const struct job_claim *claim,
    int only_replace_failed, const cJSON *policy, struct job_pod **v, int *count,
    int *cap)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *phase = (const char *)sqlite3_column_text(stmt, 2);
		int deleting = sqlite3_column_int(stmt, 3);
		cJSON *body = controller_column_json(stmt, 6);
		int terminal;
		struct job_pod *p;

		if (phase == NULL)
			phase = "";
		if (!pod_claimed(st, claim, stmt, body, deleting)) {
			cJSON_Delete(body);
			continue;
		}
		if (*count == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*v = xrealloc(*v, (size_t)*cap * sizeof **v);
		}
		p = &(*v)[(*count)++];
		memset(p, 0, sizeof *p);
		p->name = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		p->uid = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		p->orphan = claim->orphans;
		/* kube counts an adopted pod as carrying the finalizer its adoption adds. */
		p->tracked = claim->orphans || sqlite3_column_int(stmt, 4);
		p->succeeded = strcmp(phase, "Succeeded") == 0;
		terminal = p->succeeded || strcmp(phase, "Failed") == 0;
		/* kube's isPodFailed. */
		p->failed = strcmp(phase, "Failed") == 0 ||
		    (!only_replace_failed && deleting && !p->succeeded);
		p->active = !deleting && !terminal;
		p->terminating = deleting && !terminal;
		p->ready = p->active && sqlite3_column_int(stmt, 5);
		p->index = -1;
		if (body != NULL) {
			const cJSON *ix = cJSON_GetObjectItemCaseSensitive(json_path(body,
			    "metadata.annotations"), INDEX_ANNOTATION);

			if (cJSON_IsString(ix))
				p->index = job_completion_index(ix->valuestring);
			if (policy != NULL && p->failed) {
				enum job_failure_action action =
				    job_match_pod_failure_policy(policy, body, &p->fail_job);

				p->ignored = action == JOB_FAILURE_IGNORE;
				p->fail_index = action == JOB_FAILURE_FAIL_INDEX;
				p->policy_action = action;
			}
			p->index_failures = failure_count(body, FAILURE_COUNT_ANNOTATION);
			p->index_ignored = failure_count(body, IGNORED_COUNT_ANNOTATION);
			if (p->succeeded || p->failed)
				p->finished_at = pod_finished_at(body);
			if (strcmp(phase, "Running") == 0 || strcmp(phase, "Pending") == 0)
				p->restarts = pod_restarts(body);
		}
		cJSON_Delete(body);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The statement listing the orphans sel matches in a namespace (kept until a selector of
 * another shape needs another), or NULL with *error set. */
static sqlite3_stmt *
orphans_stmt(struct job_state *st, struct controller *c, const struct selector *sel,
    char **error)
{
	sqlite3_stmt *stmt = NULL;

	buf_reset(&st->orphans_next);
	buf_append_str(&st->orphans_next, ORPHANS_SQL);
	selector_to_sql(sel, "p.id", &st->orphans_next);
	buf_append_str(&st->orphans_next, " ORDER BY p.name");
	if (st->orphans != NULL && st->orphans_sql.len == st->orphans_next.len &&
	    memcmp(st->orphans_sql.data, st->orphans_next.data, st->orphans_sql.len) == 0)
		return st->orphans;
	if (sqlite3_prepare_v3(store_db(c->store), st->orphans_next.data, -1,
	    SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK) {
		error_set(error, "job: listing orphan pods: %s",
		    sqlite3_errmsg(store_db(c->store)));
		sqlite3_finalize(stmt);
		return NULL;
	}
	sqlite3_finalize(st->orphans);
	st->orphans = stmt;
	buf_reset(&st->orphans_sql);
	buf_append_str(&st->orphans_sql, st->orphans_next.data);
	return stmt;
}

/* The Job's pods (kube's getPodsForJob): those it controls that its selector matches, and
 * the namespace's orphans it matches, adopted (claim says how; claim->sel NULL: the Job
 * adopts and releases nothing). */
static int
pods_load(struct job_state *st, struct controller *c, struct job_claim *claim,
    int only_replace_failed, const cJSON *policy, struct job_pod **out, int *n,
    char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PODS]);
	struct job_pod *v = NULL;
	int count = 0, cap = 0;

	claim->orphans = 0;
	sqlite3_bind_text(stmt, 1, claim->uid, -1, SQLITE_STATIC);
	if (pods_read(st, stmt, claim, only_replace_failed, policy, &v, &count, &cap) != 0)
		goto failed;
	if (claim->sel != NULL && !claim->deleting) {
		if ((stmt = orphans_stmt(st, c, claim->sel, error)) == NULL) {
			pods_clear(v, count);
			return -1;
		}
		sqlite3_bind_text(stmt, 1, claim->namespace, -1, SQLITE_STATIC);
		if (selector_bind(claim->sel, stmt, 2, error) < 0) {
			sqlite3_clear_bindings(stmt);
			pods_clear(v, count);
			return -1;
		}
		claim->orphans = 1;
		if (pods_read(st, stmt, claim, only_replace_failed, policy, &v, &count,
		    &cap) != 0)
			goto failed;
		sqlite3_clear_bindings(stmt);
	}
	*out = v;
	*n = count;
	return 0;
failed:
	pods_clear(v, count);
	return error_set(error, "job: reading the pods of job %s: %s", claim->uid,
	    sqlite3_errmsg(store_db(c->store)));
}

/* --- actions --------------------------------------------------------------------------- */

static void
pod_action(struct job_state *st, struct action *a, enum action_type type,
    const char *namespace, const struct job_pod *p, char *reason)
{
	a->type = type;
	a->resource = st->pods;
	a->namespace = xstrdup(namespace);
	a->name = p != NULL ? xstrdup(p->name) : NULL;
	a->uid = p != NULL ? xstrdup(p->uid) : NULL;
	a->reason = reason;
	if (type == ACTION_CREATE) {
		a->verb = "create";
		a->done_reason = "SuccessfulCreate";
		a->done_prefix = "Created pod: ";
		a->failed_reason = "FailedCreate";
		a->failed_prefix = "Error creating: ";
	} else {
		a->verb = "delete";
		a->done_reason = "SuccessfulDelete";
		a->done_prefix = "Deleted pod: ";
		a->failed_reason = "FailedDelete";
		a->failed_prefix = "Error deleting: ";
	}
}

static void remove_finalizer(struct job_state *st, struct sync_result *out,
    const char *namespace, const struct job_pod *p, const char *why);

/* Deletes pod p (active); uncount: its tracking finalizer is removed first. */
static void
delete_pod(struct job_state *st, struct sync_result *out, const char *namespace,
    struct job_pod *p, const char *why, int uncount)
{
	if (uncount && p->tracked)
		remove_finalizer(st, out, namespace, p, "deleted as not needed");
	pod_action(st, action_append(&out->manage, &out->nmanage), ACTION_DELETE, namespace,
	    p, xstrdup(why));
	p->active = p->ready = 0;
	p->terminating = 1;
}

/* Deletes up to 500 of the active pods, the first n of them; uncount: their tracking
 * finalizers are removed first (kube's deleteJobPods), so that they are never counted. */
static int
delete_active(struct job_state *st, struct sync_result *out, const char *namespace,
    struct job_pod *pods, int npods, int n, const char *why, int uncount)
{
	int done = 0;

	for (int i = 0; i < npods && done < n && done < MAX_PODS_PER_SYNC; i++) {
		if (!pods[i].active)
			continue;
		if (uncount && pods[i].tracked)
			remove_finalizer(st, out, namespace, &pods[i], "deleted as not needed");
		pod_action(st, action_append(&out->manage, &out->nmanage), ACTION_DELETE,
		    namespace, &pods[i], xstrdup(why));
		/* Counted as kube counts it once deleted: terminating, not ready. */
		pods[i].active = pods[i].ready = 0;
		pods[i].terminating = 1;
		done++;
	}
	return done;
}

/* Fills a as the status update (the whole Job at its cached resourceVersion, with
 * status). */
static void
status_update(struct job_state *st, struct action *a, const cJSON *job,
    const char *namespace, const char *name, const char *uid, const cJSON *status,
    char *reason)
{
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = st->jobs;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->body = cJSON_Duplicate(job, 1);
	json_set(a->body, "status", cJSON_Duplicate(status, 1));
	a->reason = reason;
}

/* The reason of a failure condition as a static string, for its event. */
static const char *
failure_reason(const char *reason)
{
	static const char *const known[] = { "BackoffLimitExceeded", "DeadlineExceeded",
	    "PodFailurePolicy", "MaxFailedIndexesExceeded", "FailedIndexes" };

	for (size_t i = 0; i < NELEM(known); i++) {
		if (strcmp(reason, known[i]) == 0)
			return known[i];
	}
	return "Failed";
}

/* A finishing condition that is a success (SuccessCriteriaMet or Complete). */
static int
is_success(const cJSON *condition)
{
	const char *type = json_string(condition, "type");

	return strcmp(type, "SuccessCriteriaMet") == 0 || strcmp(type, "Complete") == 0;
}

/* The array name of uncounted, made when missing. */
static cJSON *
uncounted_list(cJSON *uncounted, const char *name)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(uncounted, name);

	if (cJSON_IsArray(list))
		return list;
	cJSON_DeleteItemFromObjectCaseSensitive(uncounted, name);
	return cJSON_AddArrayToObject(uncounted, name);
}

/* Drops the empty lists of uncounted, as the apiserver gives them back (omitted). */
static void
uncounted_tidy(cJSON *uncounted)
{
	static const char *const names[] = { "succeeded", "failed" };

	for (size_t i = 0; i < NELEM(names); i++) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(uncounted, names[i]);

		if (list != NULL && cJSON_GetArraySize(list) == 0)
			cJSON_DeleteItemFromObjectCaseSensitive(uncounted, names[i]);
	}
}

/* Sets a counter of status; active, succeeded and failed are omitted when 0, as the
 * apiserver gives them back (ready and terminating are written as 0). */
static void
set_count(cJSON *status, const char *name, long long v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(status, name);
	if (v != 0 || strcmp(name, "ready") == 0 || strcmp(name, "terminating") == 0)
		cJSON_AddNumberToObject(status, name, (double)v);
}

/* --- metrics --------------------------------------------------------------------------- */

static const char *
completion_mode(const cJSON *job)
{
	return strcmp(json_string(job, "spec.completionMode"), "Indexed") == 0 ? "Indexed" :
	    "NonIndexed";
}

static struct metrics_series *
series(struct metrics_family *f, const char *a, const char *b, const char *c)
{
	const char *values[] = { a, b, c, NULL };

	return f != NULL ? metrics_series_get(f, values) : NULL;
}

/* The number of indexes of an interval string, as kube's indexesCount. */
static long long
indexes_count(const cJSON *text, int completions)
{
	char *done;
	long long n = 0;

	if (!cJSON_IsString(text) || completions <= 0)
		return 0;
	done = xcalloc((size_t)completions + 1, 1);
	job_indexes_parse(text->valuestring, completions, done);
	for (int i = 0; i < completions; i++)
		n += done[i];
	free(done);
	return n;
}

/* What status update a (of job, from its cached status old) counts once written, as
 * kube's recordJobPodFinished and recordJobFinished: the pods and indexes it finishes,
 * and the Job itself when it adds Complete or Failed. */
static void
count_status(struct job_state *st, struct action *a, const cJSON *job, const cJSON *old,
    int completions, int per_index)
{
	const struct job_metrics *m = &st->m;
	const cJSON *now = json_path(a->body, "status"), *c;
	const char *mode = completion_mode(job);
	long long succeeded;
	int k = 0;

	if (m->pods_finished == NULL)
		return;
	if (completions > 0) {
		const cJSON *was = json_path(old, "completedIndexes");
		const cJSON *is = json_path(now, "completedIndexes");

		succeeded = cJSON_Compare(was, is, 1) ? 0 :
		    indexes_count(is, completions) - indexes_count(was, completions);
		a->add_done[k] = series(m->indexes, "succeeded", per_index ? "perIndex" :
		    "global", NULL);
		a->add_by[k++] = (double)succeeded;
		if (per_index) {
			a->add_done[k] = series(m->indexes, "failed", "perIndex", NULL);
			a->add_by[k++] = (double)(indexes_count(json_path(now, "failedIndexes"),
			    completions) - indexes_count(json_path(old, "failedIndexes"),
			    completions));
		}
	} else {
		succeeded = json_int(now, "succeeded", 0) - json_int(old, "succeeded", 0);
	}
	a->add_done[k] = series(m->pods_finished, mode, "succeeded", NULL);
	a->add_by[k++] = (double)succeeded;
	a->add_done[k] = series(m->pods_finished, mode, "failed", NULL);
	a->add_by[k++] = (double)(json_int(now, "failed", 0) - json_int(old, "failed", 0));
	cJSON_ArrayForEach(c, json_path(now, "conditions")) {
		const char *type = json_string(c, "type");

		if ((strcmp(type, "Complete") != 0 && strcmp(type, "Failed") != 0) ||
		    strcmp(json_string(c, "status"), "True") != 0 ||
		    condition_true(job, type))
			continue;
		a->count_done = series(m->finished, mode, strcmp(type, "Complete") == 0 ?
		    "succeeded" : "failed", json_string(c, "reason"));
	}
}

/* kube's pod_failures_handled_by_failure_policy_total, for the failed pods a write
 * records: by[] counts them by action. */
static void
count_by_policy(struct job_state *st, struct action *a, const int *by)
{
	static const char *const names[] = { [JOB_FAILURE_IGNORE] = "Ignore",
		[JOB_FAILURE_COUNT] = "Count", [JOB_FAILURE_FAIL_INDEX] = "FailIndex",
		[JOB_FAILURE_FAIL_JOB] = "FailJob" };
	int k = 0;

	while (k < ACTION_ADD_DONE && a->add_done[k] != NULL)
		k++;
	for (int i = JOB_FAILURE_IGNORE; i <= JOB_FAILURE_FAIL_JOB && k < ACTION_ADD_DONE; i++) {
		if (by[i] == 0 || st->m.by_policy == NULL)
			continue;
		a->add_done[k] = series(st->m.by_policy, names[i], NULL, NULL);
		a->add_by[k++] = by[i];
	}
}

/* --- sync ------------------------------------------------------------------------------ */

struct job_sync {
	struct job_state *st;
	struct controller *c;
	struct sync_result *out;
	const char *namespace, *name, *uid;
	cJSON *job;			/* cached */
	cJSON *status;			/* the new status, built on the cached one */
	struct job_pod *pods;
	int npods;
	double now;
	/* An Indexed Job: its completions, and which of its indexes have succeeded. */
	int indexed, completions;
	char *done;
	/* With backoffLimitPerIndex (per_index): the limit, the indexes that failed, and
	 * for each index neither done, failed nor active its last failed pod, whose
	 * finalizer stays until the index has a new pod (kube's pods with delayed
	 * deletion; NULL: none). */
	int per_index;
	long long per_index_limit;
	char *failed_ix;
	struct job_pod **delayed;
	/* kube's sync action (job_syncs_total): reconciling, tracking, pods_created or
	 * pods_deleted. */
	const char *action;
};

/* Requeues at most after seconds. */
static void
requeue_within(struct sync_result *out, double seconds)
{
	if (seconds <= 0)
		seconds = 0.001;
	if (out->requeue_after == 0 || seconds < out->requeue_after)
		out->requeue_after = seconds;
}

/* kube's pastBackoffLimitOnFailure. */
static int
past_backoff_limit_on_failure(const struct job_sync *s, long long backoff_limit)
{
	long long restarts = 0;

	if (strcmp(json_string(s->job, "spec.template.spec.restartPolicy"), "OnFailure") != 0)
		return 0;
	for (int i = 0; i < s->npods; i++)
		restarts += s->pods[i].restarts;
	if (backoff_limit == 0)
		return restarts > 0;
	return restarts >= backoff_limit;
}

/* kube's isIndexFailed: pod p fails its index (a FailIndex rule, or a counted failure
 * past backoffLimitPerIndex). */
static int
index_failed_by(const struct job_sync *s, const struct job_pod *p)
{
	if (!p->failed)
		return 0;
	return p->fail_index || (!p->ignored && p->index_failures >= s->per_index_limit);
}

/* The pods kube counts as new: still tracked, of a valid index, and not yet recorded in
 * uncountedTerminatedPods (kube's getValidPodsWithFilter). */
static int
index_pod_valid(const struct job_sync *s, const struct job_pod *p)
{
	return p->tracked && p->index >= 0 && p->index < s->completions &&
	    !uid_in(json_path(s->status, "uncountedTerminatedPods.failed"), p->uid) &&
	    !uid_in(json_path(s->status, "uncountedTerminatedPods.succeeded"), p->uid);
}

/* kube's calculateFailedIndexes and getPodsWithDelayedDeletionPerIndex, into
 * s->failed_ix and s->delayed; returns how many indexes failed. */
static int
per_index_state(struct job_sync *s)
{
	char *busy = xcalloc((size_t)s->completions + 1, 1);
	int n = 0;

	job_indexes_parse(json_string(s->job, "status.failedIndexes"), s->completions,
	    s->failed_ix);
	for (int i = 0; i < s->npods; i++) {
		const struct job_pod *p = &s->pods[i];

		if (p->tracked && p->index >= 0 && p->index < s->completions &&
		    index_failed_by(s, p))
			s->failed_ix[p->index] = 1;
		if (p->active && p->index >= 0 && p->index < s->completions)
			busy[p->index] = 1;
	}
	for (int i = 0; i < s->npods; i++) {
		struct job_pod *p = &s->pods[i], *last;

		if (!p->failed || !index_pod_valid(s, p) || s->done[p->index] ||
		    s->failed_ix[p->index] || busy[p->index])
			continue;
		last = s->delayed[p->index];
		if (last == NULL || (last->index_failures + last->index_ignored <=
		    p->index_failures + p->index_ignored && p->finished_at >= last->finished_at))
			s->delayed[p->index] = p;
	}
	for (int i = 0; i < s->completions; i++)
		n += s->failed_ix[i];
	free(busy);
	return n;
}

/* kube's activePodsForRemoval for an Indexed Job: the active pods of no valid index, past
 * completions or repeating an index (one of each index stays, a ready one if any), then
 * more from the highest index down until at least rm_at_least go. Returns how many. */
static int
indexed_remove(struct job_sync *s, int rm_at_least, long long want)
{
	char *seen = xcalloc((size_t)s->completions + 1, 1), *why;
	int n = 0;

	(void)want;
	/* Ready pods claim their index first. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->npods && n < MAX_PODS_PER_SYNC; i++) {
			struct job_pod *p = &s->pods[i];

			if (!p->active || p->ready != (pass == 0))
				continue;
			if (p->index >= 0 && p->index < s->completions && !seen[p->index]) {
				seen[p->index] = 1;
				continue;
			}
			delete_pod(s->st, s->out, s->namespace, p,
			    p->index < 0 ? "no valid completion index" :
			    p->index >= s->completions ? "its index is past completions" :
			    "another pod has its index", 1);
			n++;
		}
	}
	free(seen);
	why = xasprintf("more active pods than wanted");
	for (int i = s->npods - 1; i >= 0 && n < rm_at_least && n < MAX_PODS_PER_SYNC; i--) {
		if (!s->pods[i].active)
			continue;
		delete_pod(s->st, s->out, s->namespace, &s->pods[i], why, 1);
		n++;
	}
	free(why);
	return n;
}

/* Adds JOB_COMPLETION_INDEX, from the index label, to each container of list. */
static void
add_index_env(cJSON *list)
{
	cJSON *c;

	cJSON_ArrayForEach(c, list) {
		cJSON *env = cJSON_GetObjectItemCaseSensitive(c, "env"), *e, *v;
		int has = 0;

		cJSON_ArrayForEach(e, env)
			has |= strcmp(json_string(e, "name"), "JOB_COMPLETION_INDEX") == 0;
		if (has)
			continue;
		if (!cJSON_IsArray(env)) {
			cJSON_DeleteItemFromObjectCaseSensitive(c, "env");
			env = cJSON_AddArrayToObject(c, "env");
		}
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", "JOB_COMPLETION_INDEX");
		v = cJSON_AddObjectToObject(cJSON_AddObjectToObject(e, "valueFrom"), "fieldRef");
		cJSON_AddStringToObject(v, "fieldPath",
		    "metadata.labels['" INDEX_ANNOTATION "']");
		cJSON_AddItemToArray(env, e);
	}
}

/* The pod of index ix of an Indexed Job (kube's: the annotation and label, the hostname,
 * JOB_COMPLETION_INDEX in every container, the name <job>-<index>-). */
static cJSON *
indexed_pod(struct job_sync *s, int ix)
{
	cJSON *pod = replicaset_pod_from_template_of(s->st->jobs, s->job);
	cJSON *meta = json_child_object(pod, "metadata"), *spec = json_child_object(pod, "spec");
	char number[16], *name;

	snprintf(number, sizeof number, "%d", ix);
	json_set(json_child_object(meta, "annotations"), INDEX_ANNOTATION,
	    cJSON_CreateString(number));
	json_set(json_child_object(meta, "labels"), INDEX_ANNOTATION,
	    cJSON_CreateString(number));
	name = xasprintf("%s-%d-", s->name, ix);
	if (strlen(name) > 58) {	/* kube's MaxGeneratedNameLength */
		char *cut = xasprintf("%.*s-%d-", (int)(58 - strlen(number) - 2), s->name, ix);
		free(name);
		name = cut;
	}
	json_set(meta, "generateName", cJSON_CreateString(name));
	free(name);
	if (*json_string(spec, "hostname") == '\0') {
		name = xasprintf("%s-%d", s->name, ix);
		json_set(spec, "hostname", cJSON_CreateString(name));
		free(name);
	}
	add_index_env(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"));
	add_index_env(cJSON_GetObjectItemCaseSensitive(spec, "containers"));
	return pod;
}

/* kube's firstPendingIndexes: creates pods for the lowest n indexes neither succeeded nor
 * active (nor terminating, when only failed pods are replaced). Returns how many. */
static int
indexed_create(struct job_sync *s, int n, int active, long long want)
{
	char *busy = xmalloc((size_t)s->completions + 1);
	int only_failed = strcmp(json_string(s->job, "spec.podReplacementPolicy"),
	    "Failed") == 0 || json_path(s->job, "spec.podFailurePolicy") != NULL;
	int made = 0;

	int *pending = xmalloc(((size_t)n + 1) * sizeof *pending), npending = 0, ready = 0;
	double wait = -1;

	memcpy(busy, s->done, (size_t)s->completions);
	for (int i = 0; i < s->npods; i++) {
		const struct job_pod *p = &s->pods[i];

		if (p->index >= 0 && p->index < s->completions &&
		    (p->active || (only_failed && p->terminating)))
			busy[p->index] = 1;
	}
	for (int ix = 0; s->per_index && ix < s->completions; ix++)
		busy[ix] |= s->failed_ix[ix];
	/* kube's firstPendingIndexes, then, with backoffLimitPerIndex, the indexes whose
	 * backoff (from the failures of the pod replaced) has passed; none of them: the
	 * sync comes back when the first one's has. */
	for (int ix = 0; ix < s->completions && npending < n; ix++) {
		const struct job_pod *last;
		double left = 0;

		if (busy[ix])
			continue;
		pending[npending++] = ix;
		if (s->per_index && (last = s->delayed[ix]) != NULL)
			left = job_backoff_remaining((int)(last->index_failures +
			    last->index_ignored + 1), last->finished_at, s->now);
		if (left > 0) {
			pending[npending - 1] = -1;
			if (wait < 0 || left < wait)
				wait = left;
		} else {
			ready++;
		}
	}
	if (npending > 0 && ready == 0) {
		requeue_within(s->out, wait);
		s->out->waiting = xasprintf("backing off %.0f s more before index %d's next "
		    "pod", wait, pending[0]);
		free(pending);
		free(busy);
		return 0;
	}
	if (wait > 0)
		requeue_within(s->out, wait);	/* sqlkcm's: kube waits for another event */
	s->out->creating = 1;
	for (int k = 0; k < npending; k++) {
		int ix = pending[k];
		struct action *a;

		if (ix < 0)
			continue;
		a = action_append(&s->out->manage, &s->out->nmanage);
		pod_action(s->st, a, ACTION_CREATE, s->namespace, NULL,
		    xasprintf("index %d; %d of %lld active", ix, active + made + 1, want));
		a->body = indexed_pod(s, ix);
		{
			cJSON *meta = json_child_object(a->body, "metadata");
			cJSON *finalizers = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");

			if (!cJSON_IsArray(finalizers)) {
				cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
				finalizers = cJSON_AddArrayToObject(meta, "finalizers");
			}
			cJSON_AddItemToArray(finalizers,
			    cJSON_CreateString(TRACKING_FINALIZER));
			if (s->per_index) {
				/* kube's getNewIndexFailureCounts from the pod replaced */
				const struct job_pod *last = s->delayed[ix];
				long long counted = 0, ignored = 0;
				char number[24];

				if (last != NULL) {
					counted = last->index_failures + !last->ignored;
					ignored = last->index_ignored + last->ignored;
				}
				snprintf(number, sizeof number, "%lld", counted);
				json_set(json_child_object(meta, "annotations"),
				    FAILURE_COUNT_ANNOTATION, cJSON_CreateString(number));
				if (ignored > 0) {
					snprintf(number, sizeof number, "%lld", ignored);
					json_set(json_child_object(meta, "annotations"),
					    IGNORED_COUNT_ANNOTATION, cJSON_CreateString(number));
				}
			}
		}
		made++;
	}
	free(pending);
	free(busy);
	return made;
}

/* Creates or deletes pods towards parallelism (kube's manageJob); returns
 * the active pods after it. */
static int
manage(struct job_sync *s, int active, long long succeeded, int suspended)
{
	const cJSON *spec = json_path(s->job, "spec");
	long long parallelism = json_int(spec, "parallelism", 1), want;
	const cJSON *completions = cJSON_GetObjectItemCaseSensitive(spec, "completions");
	int failures = 0, deleted, diff, terminating = 0;
	double last_success = -1, last_failure = -1, wait;
	cJSON *pod;

	if (suspended)
		return active - delete_active(s->st, s->out, s->namespace, s->pods, s->npods,
		    active, "the Job is suspended", 1);
	if (!cJSON_IsNumber(completions)) {
		want = succeeded > 0 ? active : parallelism;
	} else {
		want = (long long)completions->valuedouble - succeeded;
		if (want > parallelism)
			want = parallelism;
		if (want < 0)
			want = 0;
	}
	if (s->indexed && (deleted = indexed_remove(s, (int)(active > want ?
	    active - want : 0), want)) > 0)
		return active - deleted;
	if (active > want) {
		char *why = xasprintf("%d active, %lld wanted", active, want);
		deleted = delete_active(s->st, s->out, s->namespace, s->pods, s->npods,
		    (int)(active - want), why, 1);
		free(why);
		return active - deleted;
	}
	if (active == want)
		return active;
	/* Replacing failed pods only, a pod being deleted still holds its place until it
	 * has failed (kube's manageJob: wantActive - terminating - active). */
	if (strcmp(json_string(s->job, "spec.podReplacementPolicy"), "Failed") == 0 ||
	    json_path(s->job, "spec.podFailurePolicy") != NULL) {
		for (int i = 0; i < s->npods; i++)
			terminating += s->pods[i].terminating;
	}
	if (want - terminating - active <= 0)
		return active;
	/* kube's backoff after failures, from the pods' finish times. */
	for (int i = 0; i < s->npods; i++) {
		if (s->pods[i].succeeded && s->pods[i].finished_at > last_success)
			last_success = s->pods[i].finished_at;
	}
	for (int i = 0; i < s->npods; i++) {
		if (s->pods[i].failed && !s->pods[i].succeeded &&
		    s->pods[i].finished_at > last_success) {
			failures++;
			if (s->pods[i].finished_at > last_failure)
				last_failure = s->pods[i].finished_at;
		}
	}
	wait = s->per_index ? 0 : job_backoff_remaining(failures, last_failure, s->now);
	if (wait > 0) {
		requeue_within(s->out, wait);
		s->out->waiting = xasprintf("backing off %.0f s more after %d failures", wait,
		    failures);
		return active;
	}
	diff = (int)(want - terminating - active);
	if (diff > MAX_PODS_PER_SYNC)
		diff = MAX_PODS_PER_SYNC;
	if (s->indexed)
		return active + indexed_create(s, diff, active, want);
	pod = replicaset_pod_from_template_of(s->st->jobs, s->job);
	{
		cJSON *meta = json_child_object(pod, "metadata");
		cJSON *finalizers = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");

		if (!cJSON_IsArray(finalizers)) {
			cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
			finalizers = cJSON_AddArrayToObject(meta, "finalizers");
		}
		cJSON_AddItemToArray(finalizers, cJSON_CreateString(TRACKING_FINALIZER));
	}
	s->out->creating = 1;
	for (int i = 0; i < diff; i++) {
		struct action *a = action_append(&s->out->manage, &s->out->nmanage);

		pod_action(s->st, a, ACTION_CREATE, s->namespace, NULL,
		    xasprintf("%d of %lld active", active + i + 1, want));
		a->body = pod;
		a->body_borrowed = i > 0;
	}
	if (diff == 0)
		cJSON_Delete(pod);
	return active + diff;
}

/* The finalizer's removal from a pod (kube's strategic merge patch), a write. */
static void
remove_finalizer(struct job_state *st, struct sync_result *out, const char *namespace,
    const struct job_pod *p, const char *why)
{
	struct action *a = action_append(&out->writes, &out->nwrites);
	cJSON *list;

	a->type = ACTION_PATCH;
	a->verb = "remove-finalizer";
	a->resource = st->pods;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(p->name);
	a->uid = xstrdup(p->uid);
	a->body = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(cJSON_AddObjectToObject(a->body, "metadata"),
	    "$deleteFromPrimitiveList/finalizers");
	cJSON_AddItemToArray(list, cJSON_CreateString(TRACKING_FINALIZER));
	a->reason = xstrdup(why);
	/* Each is tried: a pod gone meanwhile stops none of the others. */
	a->failure_goes_on = 1;
	a->failure_stops_nothing = 1;
}

/* kube's cleanupPodFinalizers and syncOrphanPod: the pods statement which yields (name,
 * uid; bound to a and b, then the finalizer when b is not NULL) lose the tracking
 * finalizer. Without it the pods of a deleted or finished Job, or those the garbage
 * collector orphaned, would stay forever once deleted. The pods STMT_ORPHANED yields
 * that no one controls and that adoptable (the live Job's selector, or NULL) matches are
 * left to the Job's adoption. */
static int
release_held(struct job_state *st, struct controller *c, struct sync_result *out,
    const char *namespace, int which, const char *a, const char *b,
    const struct selector *adoptable, const char *why, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[which]);
	int rc;

	sqlite3_bind_text(stmt, 1, a, -1, SQLITE_STATIC);
	if (b != NULL) {
		sqlite3_bind_text(stmt, 2, b, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 3, TRACKING_FINALIZER, -1, SQLITE_STATIC);
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct job_pod p;

		if (adoptable != NULL && sqlite3_column_int(stmt, 2) == 1) {
			const char *text = (const char *)sqlite3_column_text(stmt, 3);
			cJSON *labels = text != NULL ? cJSON_Parse(text) : NULL;
			int adopt = labels != NULL && selector_matches(adoptable, labels);

			cJSON_Delete(labels);
			if (adopt)
				continue;
		}
		memset(&p, 0, sizeof p);
		p.name = (char *)sqlite3_column_text(stmt, 0);
		p.uid = (char *)sqlite3_column_text(stmt, 1);
		remove_finalizer(st, out, namespace, &p, why);
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "job: the pods of %s/%s that hold the finalizer: %s",
		    namespace, b != NULL ? b : a, sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* Moves the uncounted uids of list (in status.uncountedTerminatedPods) whose pods no
 * longer hold the finalizer (or are gone) into counter; 1 when some moved. */
static int
flush_uncounted(struct job_sync *s, cJSON *uncounted, const char *list, const char *counter)
{
	cJSON *uids = cJSON_GetObjectItemCaseSensitive(uncounted, list), *keep;
	const cJSON *u;
	int moved = 0;

	if (!cJSON_IsArray(uids))
		return 0;
	keep = cJSON_CreateArray();
	cJSON_ArrayForEach(u, uids) {
		int tracked = 0;

		for (int i = 0; cJSON_IsString(u) && i < s->npods; i++)
			tracked |= strcmp(s->pods[i].uid, u->valuestring) == 0 &&
			    s->pods[i].tracked;
		if (tracked)
			cJSON_AddItemToArray(keep, cJSON_Duplicate(u, 1));
		else
			moved++;
	}
	if (moved > 0) {
		set_count(s->status, counter, json_int(s->status, counter, 0) + moved);
		cJSON_ReplaceItemInObjectCaseSensitive(uncounted, list, keep);
	} else {
		cJSON_Delete(keep);
	}
	return moved > 0;
}

/* kube's getFailJobMessage: the message of the first failed pod a FailJob rule matches. */
static const char *
first_fail_job(const struct job_sync *s)
{
	for (int i = 0; i < s->npods; i++) {
		if (s->pods[i].failed && s->pods[i].fail_job != NULL)
			return s->pods[i].fail_job;
	}
	return NULL;
}

static int
job_sync_one(struct job_sync *s, char **error)
{
	struct sync_result *out = s->out;
	const cJSON *spec = json_path(s->job, "spec");
	const cJSON *completions = cJSON_GetObjectItemCaseSensitive(spec, "completions");
	long long backoff_limit = json_int(spec, "backoffLimit", 6);
	int suspended = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend"));
	int deleting = json_is_set(s->job, "metadata.deletionTimestamp");
	const cJSON *deadline = cJSON_GetObjectItemCaseSensitive(spec, "activeDeadlineSeconds");
	const cJSON *old_status = json_path(s->job, "status");
	cJSON *uncounted, *finishing = NULL, *remove_list;
	long long succeeded, failed;
	int active = 0, ready = 0, terminating = 0, satisfied, changed = 0, nremove = 0;
	int suspend_changed = 0, nfailed_ix = 0, by_policy[JOB_FAILURE_FAIL_JOB + 1];
	const char *fail_job;
	double start = -1;
	const char *start_text;

	s->action = "reconciling";
	if (expectations_satisfied(s->c->expectations, out->key, s->now, &satisfied, error) != 0)
		return -1;
	s->status = cJSON_IsObject(old_status) ? cJSON_Duplicate(old_status, 1) :
	    cJSON_CreateObject();
	uncounted = json_child_object(s->status, "uncountedTerminatedPods");
	for (int i = 0; i < s->npods; i++) {
		active += s->pods[i].active;
		ready += s->pods[i].ready;
		terminating += s->pods[i].terminating;
	}

	/* The uncounted pods whose finalizers are gone move into the counters. */
	changed |= flush_uncounted(s, uncounted, "succeeded", "succeeded");
	changed |= flush_uncounted(s, uncounted, "failed", "failed");
	succeeded = json_int(s->status, "succeeded", 0);
	failed = json_int(s->status, "failed", 0);
	for (int i = 0; i < s->npods; i++) {
		const struct job_pod *p = &s->pods[i];
		int in = uid_in(json_path(uncounted, "succeeded"), p->uid) ||
		    uid_in(json_path(uncounted, "failed"), p->uid);

		if (p->tracked && (p->succeeded || p->failed || in)) {
			if (s->indexed) {
				/* Its index counts; a failure of no valid index does not. */
				if (p->succeeded && p->index >= 0 && p->index < s->completions)
					s->done[p->index] = 1;
				if (!p->succeeded && p->failed &&
				    (p->index < 0 || p->index >= s->completions))
					continue;
			}
			succeeded += p->succeeded;
			failed += !p->succeeded && p->failed && !p->ignored;
		}
	}

	if (s->indexed) {
		succeeded = 0;
		for (int i = 0; i < s->completions; i++)
			succeeded += s->done[i];
	}
	if (s->per_index)
		nfailed_ix = per_index_state(s);
	start_text = json_string(s->status, "startTime");
	if (*start_text != '\0')
		start = parse_time(start_text);
	else if (!suspended) {
		char stamp[TIME_RFC3339_SIZE];

		time_format_rfc3339((time_t)s->now, stamp);
		cJSON_AddStringToObject(s->status, "startTime", stamp);
		start = s->now;
		changed = 1;
	}

	/* Finishing? */
	if (condition_true(s->job, "SuccessCriteriaMet")) {
		const cJSON *c = condition_find(s->job, "SuccessCriteriaMet");
		finishing = condition_new("Complete", "True", json_string(c, "reason"),
		    json_string(c, "message"), s->now);
	} else if (condition_true(s->job, "FailureTarget")) {
		const cJSON *c = condition_find(s->job, "FailureTarget");
		finishing = condition_new("Failed", "True", json_string(c, "reason"),
		    json_string(c, "message"), s->now);
	} else if ((fail_job = first_fail_job(s)) != NULL) {
		finishing = condition_new("FailureTarget", "True", "PodFailurePolicy", fail_job,
		    s->now);
	} else if (failed > backoff_limit ||
	    past_backoff_limit_on_failure(s, backoff_limit)) {
		finishing = condition_new("FailureTarget", "True", "BackoffLimitExceeded",
		    "Job has reached the specified backoff limit", s->now);
	} else if (cJSON_IsNumber(deadline) && start >= 0 && !suspended &&
	    s->now - start >= deadline->valuedouble) {
		finishing = condition_new("FailureTarget", "True", "DeadlineExceeded",
		    "Job was active longer than specified deadline", s->now);
	} else if (cJSON_IsNumber(deadline) && start >= 0 && !suspended) {
		requeue_within(out, start + deadline->valuedouble - s->now);
	}
	if (finishing == NULL && s->per_index) {
		const cJSON *max = json_path(s->job, "spec.maxFailedIndexes");

		if (cJSON_IsNumber(max) && nfailed_ix > max->valuedouble)
			finishing = condition_new("FailureTarget", "True",
			    "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal "
			    "number of failed indexes", s->now);
		else if (nfailed_ix > 0 && nfailed_ix + succeeded >= s->completions)
			finishing = condition_new("FailureTarget", "True", "FailedIndexes",
			    "Job has failed indexes", s->now);
	}
	if (finishing == NULL && s->indexed) {
		char *message;

		if (job_match_success_policy(json_path(s->job, "spec.successPolicy"),
		    s->completions, s->done, &message)) {
			finishing = condition_new("SuccessCriteriaMet", "True", "SuccessPolicy",
			    message, s->now);
			free(message);
		}
	}

	if (finishing != NULL) {
		/* Its active pods go first; the condition is written once they have. */
		if (satisfied && active > 0)
			active -= delete_active(s->st, out, s->namespace, s->pods, s->npods,
			    active, "the Job is finishing", 0);
		if (active > 0 || !satisfied) {
			cJSON_Delete(finishing);
			finishing = NULL;
		}
	} else {
		int managed = 0;

		if (satisfied && !deleting) {
			int before = out->nmanage;

			active = manage(s, active, succeeded, suspended);
			managed = 1;
			s->action = "tracking";
			if (out->waiting != NULL && out->nmanage == before)
				s->action = "pods_created";	/* kube's, backing off */
			for (int i = before; i < out->nmanage; i++) {
				struct action *a = &out->manage[i];
				/* kube's recordJobPodsCreationTotal */
				const char *why = strcmp(json_string(s->job,
				    "spec.podReplacementPolicy"), "Failed") == 0 && failed > 0 ?
				    "recreate_failed" : failed > 0 || terminating > 0 ?
				    "recreate_terminating_or_failed" : "new";

				if (a->type != ACTION_CREATE) {
					s->action = "pods_deleted";
					continue;
				}
				s->action = "pods_created";
				a->count_done = series(s->st->m.creations, why, "succeeded", NULL);
				a->count_failed[0] = series(s->st->m.creations, why, "failed", NULL);
			}
		}
		if (cJSON_IsNumber(completions) ? succeeded >= (long long)completions->valuedouble &&
		    active == 0 : succeeded > 0 && active == 0) {
			finishing = condition_new("SuccessCriteriaMet", "True",
			    "CompletionsReached", "Reached expected number of succeeded pods",
			    s->now);
		} else if (managed && suspended) {
			if (condition_ensure(s->status, "Suspended", "True", "JobSuspended",
			    "Job suspended", s->now)) {
				suspend_changed = 1;
				sync_result_add_event(out, "Normal", "Suspended",
				    xstrdup("Job suspended"));
				/* MutableSchedulingDirectivesForSuspendedJobs (beta, on). */
				cJSON_DeleteItemFromObjectCaseSensitive(s->status, "startTime");
			}
		} else if (managed) {
			if (condition_ensure(s->status, "Suspended", "False", "JobResumed",
			    "Job resumed", s->now)) {
				char stamp[TIME_RFC3339_SIZE];

				suspend_changed = 1;
				sync_result_add_event(out, "Normal", "Resumed",
				    xstrdup("Job resumed"));
				time_format_rfc3339((time_t)s->now, stamp);
				cJSON_DeleteItemFromObjectCaseSensitive(s->status, "startTime");
				cJSON_AddStringToObject(s->status, "startTime", stamp);
			}
		}
	}
	if (!satisfied && out->nmanage == 0) {
		long long adds = 0, dels = 0;
		int found;

		expectations_get(s->c->expectations, out->key, &found, &adds, &dels, NULL, NULL);
		out->waiting = xasprintf("expecting %lld creations and %lld deletions to be "
		    "observed", adds, dels);
	}
	changed |= suspend_changed;
	ready = terminating = 0;
	for (int i = 0; i < s->npods; i++) {
		ready += s->pods[i].ready;
		terminating += s->pods[i].terminating;
	}
	set_count(s->status, "active", active);
	set_count(s->status, "ready", ready);
	set_count(s->status, "terminating", terminating);

	/* Tracking: finished pods into uncountedTerminatedPods, then their finalizers off. */
	remove_list = cJSON_CreateArray();
	memset(by_policy, 0, sizeof by_policy);
	for (int i = 0; i < s->npods; i++) {
		const struct job_pod *p = &s->pods[i];
		cJSON *list;

		if (!p->tracked)
			continue;
		if (!(deleting || finishing != NULL || p->succeeded || p->failed))
			continue;
		if (s->per_index && !deleting && finishing == NULL && !p->succeeded &&
		    p->index >= 0 && p->index < s->completions && s->delayed[p->index] == p)
			continue;	/* its failure counts pass to its index's next pod */
		if (nremove + cJSON_GetArraySize(json_path(uncounted, "succeeded")) +
		    cJSON_GetArraySize(json_path(uncounted, "failed")) >= MAX_UNCOUNTED)
			break;
		cJSON_AddItemToArray(remove_list, cJSON_CreateNumber(i));
		nremove++;
		if (p->failed && !p->succeeded && p->policy_action != JOB_FAILURE_NONE &&
		    (!s->indexed || (p->index >= 0 && p->index < s->completions)))
			by_policy[p->policy_action]++;
		if (s->indexed && p->succeeded)
			continue;	/* counted by its index (completedIndexes) */
		if (s->indexed && (p->index < 0 || p->index >= s->completions))
			continue;	/* of no index the Job counts */
		if (p->succeeded && !uid_in(json_path(uncounted, "failed"), p->uid)) {
			if (uid_in(json_path(uncounted, "succeeded"), p->uid))
				continue;
			list = uncounted_list(uncounted, "succeeded");
		} else if (p->failed || (finishing != NULL && !is_success(finishing))) {
			if (uid_in(json_path(uncounted, "failed"), p->uid) || p->ignored)
				continue;
			list = uncounted_list(uncounted, "failed");
		} else {
			continue;
		}
		cJSON_AddItemToArray(list, cJSON_CreateString(p->uid));
		changed = 1;
	}

	if (s->indexed) {
		char *text = job_indexes_format(s->done, s->completions);

		if (strcmp(text, json_string(s->status, "completedIndexes")) != 0) {
			json_set(s->status, "completedIndexes", cJSON_CreateString(text));
			changed = 1;
		}
		set_count(s->status, "succeeded", succeeded);
		free(text);
		if (s->per_index) {
			text = job_indexes_format(s->failed_ix, s->completions);
			if (!cJSON_IsString(json_path(s->status, "failedIndexes")) ||
			    strcmp(text, json_string(s->status, "failedIndexes")) != 0) {
				json_set(s->status, "failedIndexes", cJSON_CreateString(text));
				changed = 1;
			}
			free(text);
		}
	}

	/* The finishing condition's first step: FailureTarget or SuccessCriteriaMet. */
	if (finishing != NULL) {
		const char *type = json_string(finishing, "type");

		if (strcmp(type, "FailureTarget") == 0 ||
		    strcmp(type, "SuccessCriteriaMet") == 0) {
			cJSON *conditions = uncounted_list(s->status, "conditions");
			cJSON *next = condition_new(strcmp(type, "FailureTarget") == 0 ?
			    "Failed" : "Complete", "True", json_string(finishing, "reason"),
			    json_string(finishing, "message"), s->now);

			cJSON_AddItemToArray(conditions, finishing);
			finishing = next;
			changed = 1;
		}
	}

	if (nremove > 0) {
		/* kube's order: the uids recorded, then the finalizers off; the counters
		 * move in the sync that sees the finalizers gone. */
		const cJSON *ix;

		int first = out->nwrites;

		uncounted_tidy(uncounted);
		if (changed) {
			struct action *a = action_append(&out->writes, &out->nwrites);

			status_update(s->st, a, s->job, s->namespace, s->name, s->uid, s->status,
			    xstrdup("finished pods recorded in uncountedTerminatedPods"));
			count_status(s->st, a, s->job, old_status, s->indexed ? s->completions : 0,
			    s->per_index);
		}
		cJSON_ArrayForEach(ix, remove_list)
			remove_finalizer(s->st, out, s->namespace, &s->pods[(int)ix->valuedouble],
			    "finished, recorded in uncountedTerminatedPods");
		count_by_policy(s->st, &out->writes[first], by_policy);
		cJSON_Delete(remove_list);
		cJSON_Delete(finishing);
		return 0;
	}
	cJSON_Delete(remove_list);
	uncounted_tidy(uncounted);

	/* kube's enactJobFinished. */
	if (finishing != NULL && cJSON_GetArraySize(json_path(uncounted, "succeeded")) == 0 &&
	    cJSON_GetArraySize(json_path(uncounted, "failed")) == 0 && terminating == 0) {
		const char *type = json_string(finishing, "type");

		condition_ensure(s->status, type, "True", json_string(finishing, "reason"),
		    json_string(finishing, "message"), s->now);
		if (strcmp(type, "Complete") == 0) {
			char stamp[TIME_RFC3339_SIZE];

			time_format_rfc3339((time_t)s->now, stamp);
			cJSON_DeleteItemFromObjectCaseSensitive(s->status, "completionTime");
			cJSON_AddStringToObject(s->status, "completionTime", stamp);
			if (cJSON_IsNumber(completions) &&
			    json_int(s->status, "succeeded", 0) > (long long)completions->valuedouble)
				sync_result_add_event(out, "Warning", "TooManySucceededPods",
				    xstrdup("Too many succeeded pods running after completion "
				    "count reached"));
			sync_result_add_event(out, "Normal", "Completed", xstrdup("Job completed"));
		} else {
			sync_result_add_event(out, "Warning",
			    failure_reason(json_string(finishing, "reason")),
			    xstrdup(json_string(finishing, "message")));
		}
		changed = 1;
	}
	cJSON_Delete(finishing);
	if (changed || !cJSON_Compare(s->status, old_status, 1)) {
		out->status = xcalloc(1, sizeof *out->status);
		status_update(s->st, out->status, s->job, s->namespace, s->name, s->uid,
		    s->status, xasprintf("active=%d ready=%d terminating=%d succeeded=%lld "
		    "failed=%lld", active, ready, terminating,
		    json_int(s->status, "succeeded", 0), json_int(s->status, "failed", 0)));
		count_status(s->st, out->status, s->job, old_status,
		    s->indexed ? s->completions : 0, s->per_index);
	}
	return 0;
}

static int
job_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct job_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_JOB]);
	struct job_sync s;
	struct job_claim claim;
	struct selector *sel = NULL;
	char *namespace = NULL, *rv = NULL, *sel_error = NULL;
	const char *name, *managed_by, *mode;
	int rc, only_replace_failed;

	memset(&s, 0, sizeof s);
	memset(&claim, 0, sizeof claim);
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->jobs;
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "job: %s is not a namespace/name key", key);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		rv = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		s.job = controller_column_json(stmt, 2);
	}
	sqlite3_reset(stmt);
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    error_set(error, "job: reading job %s: %s", key, sqlite3_errmsg(store_db(c->store)));
	if (rc != 0 || out->owner_uid == NULL) {
		if (rc == 0)
			rc = release_held(st, c, out, namespace, STMT_ORPHANED, namespace, name,
			    NULL, "its Job is gone", error);
		/* (a result that forgets sends nothing; the Job's deletion event has
		 * forgotten its bookkeeping already) */
		out->forget_expectations = rc == 0 && out->nwrites == 0;
		goto out;
	}
	if (s.job == NULL) {
		rc = error_set(error, "job: job %s: the cached body is not JSON", key);
		goto out;
	}
	out->owner = cJSON_Duplicate(s.job, 1);
	managed_by = json_string(s.job, "spec.managedBy");
	if (*managed_by != '\0' && strcmp(managed_by, JOB_CONTROLLER_NAME) != 0)
		goto out;	/* someone else's */
	if (condition_true(s.job, "Complete") || condition_true(s.job, "Failed")) {
		/* finished: its pods deleted since lose the finalizer (kube's deletePod
		 * and syncOrphanPod) */
		rc = release_held(st, c, out, namespace, STMT_FINISHED_HELD, out->owner_uid,
		    NULL, NULL, "its Job is finished", error);
		if (rc == 0)
			rc = release_held(st, c, out, namespace, STMT_ORPHANED, namespace, name,
			    NULL, "its Job is gone", error);
		goto out;
	}
	mode = json_string(s.job, "spec.completionMode");
	if (*mode != '\0' && strcmp(mode, "NonIndexed") != 0 && strcmp(mode, "Indexed") != 0) {
		sync_result_add_event(out, "Warning", "UnknownCompletionMode",
		    xstrdup("Skipped Job sync because completion mode is unknown"));
		goto out;
	}
	if (strcmp(mode, "Indexed") == 0) {
		long long completions = json_int(s.job, "spec.completions", 0);

		if (completions <= 0 || completions > MAX_INDEXED_COMPLETIONS) {
			log_v(2, "job %s: an Indexed Job of %lld completions", key, completions);
			goto out;
		}
		s.indexed = 1;
		s.completions = (int)completions;
		s.done = xcalloc((size_t)completions + 1, 1);
		job_indexes_parse(json_string(s.job, "status.completedIndexes"), s.completions,
		    s.done);
		if (cJSON_IsNumber(json_path(s.job, "spec.backoffLimitPerIndex"))) {
			s.per_index = 1;
			s.per_index_limit = json_int(s.job, "spec.backoffLimitPerIndex", 0);
			s.failed_ix = xcalloc((size_t)completions + 1, 1);
			s.delayed = xcalloc((size_t)completions, sizeof *s.delayed);
		}
	}
	if ((rc = controller_caught_up(c, key, out->owner_uid, out, error)) <= 0)
		goto out;
	only_replace_failed = strcmp(json_string(s.job, "spec.podReplacementPolicy"),
	    "Failed") == 0 || json_path(s.job, "spec.podFailurePolicy") != NULL;
	claim.job = s.job;
	claim.namespace = namespace;
	claim.uid = out->owner_uid;
	claim.deleting = json_is_set(s.job, "metadata.deletionTimestamp");
	claim.out = out;
	if ((sel = selector_from_json(json_path(s.job, "spec.selector"), &sel_error)) == NULL) {
		/* kube's "couldn't convert Job selector": retried, as kube retries it. */
		rc = error_set(error, "job: job %s: its selector: %s", key, sel_error);
		free(sel_error);
		goto out;
	}
	claim.sel = sel;
	/* Pods of an earlier Job of this name, or orphans of it that this one's selector
	 * does not match, are nobody's (kube's orphan queue). */
	if ((rc = release_held(st, c, out, namespace, STMT_ORPHANED, namespace, name, sel,
	    "its Job is gone", error)) != 0)
		goto out;
	if ((rc = pods_load(st, c, &claim, only_replace_failed,
	    json_path(s.job, "spec.podFailurePolicy"), &s.pods, &s.npods, error)) != 0)
		goto out;
	s.st = st;
	s.c = c;
	s.out = out;
	s.namespace = namespace;
	s.name = name;
	s.uid = out->owner_uid;
	s.now = now;
	rc = job_sync_one(&s, error);
	if (st->m.syncs != NULL) {
		/* for job_processed */
		struct job_sync_kind *k = NULL;

		for (int i = 0; i < st->nkinds && k == NULL; i++)
			if (strcmp(st->kinds[i].key, key) == 0)
				k = &st->kinds[i];
		if (k == NULL) {
			st->kinds = xrealloc(st->kinds, (size_t)(st->nkinds + 1) * sizeof *k);
			k = &st->kinds[st->nkinds++];
			k->key = xstrdup(key);
		}
		k->mode = completion_mode(s.job);
		k->action = s.action;
	}
out:
	selector_free(sel);
	pods_clear(s.pods, s.npods);
	free(s.done);
	free(s.failed_ix);
	free(s.delayed);
	cJSON_Delete(s.status);
	cJSON_Delete(s.job);
	free(rv);
	free(namespace);
	return rc;
}

/* --- handlers -------------------------------------------------------------------------- */

/* Whether pod holds the tracking finalizer. */
static int
has_tracking_finalizer(const cJSON *pod)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, json_path(pod, "metadata.finalizers")) {
		if (cJSON_IsString(f) && strcmp(f->valuestring, TRACKING_FINALIZER) == 0)
			return 1;
	}
	return 0;
}

/* The key of the Job that controls pod, if cached (malloc'd), or NULL. */
static char *
pod_job_key(struct job_state *st, const cJSON *pod)
{
	const cJSON *ref = controllerref_of(pod);
	const char *namespace = json_string(pod, "metadata.namespace");
	sqlite3_stmt *stmt;
	char *key = NULL;

	if (ref == NULL || strcmp(json_string(ref, "kind"), "Job") != 0)
		return NULL;
	stmt = controller_stmt(st->stmt[STMT_JOB_BY_UID]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, json_string(ref, "uid"), -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		key = xasprintf("%s/%s", namespace, (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_reset(stmt);
	return key;
}

static void
observe_failed(const struct controller *c, const char *what, const char *key, char *error)
{
	log_error("%s: recording %s for %s: %s", c->type->name, what, key, error);
	free(error);
}

/* An orphan pod added or changed: every Job of its namespace whose selector matches it
 * looks at it (kube's getPodJobs), and the Job that has just released it (kube's
 * updatePod) looks again. */
static void
orphan_event(struct job_state *st, const struct informer_event *ev, const char *namespace,
    const struct controller_queue *q)
{
	const cJSON *labels = json_path(ev->object, "metadata.labels");
	cJSON *old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;
	char *key;

	if (ev->type == INFORMER_ADDED || old == NULL ||
	    !cJSON_Compare(json_path(old, "metadata.labels"), labels, 1) ||
	    controllerref_of(old) != NULL)
		controller_enqueue_matching(st->stmt[STMT_IN_NAMESPACE], namespace, labels, q);
	if (old != NULL && (key = pod_job_key(st, old)) != NULL) {
		q->add(key, q->arg);
		free(key);
	}
	cJSON_Delete(old);
}

static void
job_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct job_state *st = c->state;
	const char *namespace = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	char *key, *pod_key, *error = NULL;

	(void)now;
	if (strcmp(ev->resource->name, "jobs") == 0) {
		const char *managed_by = json_string(ev->object, "spec.managedBy");

		if (ev->type == INFORMER_ADDED && *managed_by != '\0' &&
		    strcmp(managed_by, JOB_CONTROLLER_NAME) != 0)
			metrics_counter_add(series(st->m.external, managed_by, NULL, NULL), 1);
		key = xasprintf("%s/%s", namespace, name);
		if (ev->type == INFORMER_DELETED) {
			if (expectations_delete(c->expectations, key, &error) != 0)
				observe_failed(c, "the deletion of expectations", key, error);
			error = NULL;
			if (consistency_forget(c->writes, key, &error) != 0)
				observe_failed(c, "the deletion of writes", key, error);
		}
		q->add(key, q->arg);
		free(key);
		return;
	}
	if (strcmp(ev->resource->name, "pods") != 0)
		return;
	key = pod_job_key(st, ev->object);
	if (key == NULL) {
		const cJSON *ref = controllerref_of(ev->object);

		if (ev->type != INFORMER_DELETED && ref == NULL) {
			orphan_event(st, ev, namespace, q);
			if (has_tracking_finalizer(ev->object)) {
				/* orphaned by the garbage collector: the key of the Job
				 * its label names takes the finalizer off, that Job gone */
				const cJSON *labels = json_path(ev->object, "metadata.labels");
				const cJSON *job = cJSON_GetObjectItemCaseSensitive(labels,
				    JOB_NAME_LABEL);

				if (!cJSON_IsString(job))
					job = cJSON_GetObjectItemCaseSensitive(labels, "job-name");
				if (cJSON_IsString(job) && *job->valuestring != '\0') {
					key = xasprintf("%s/%s", namespace,
					    job->valuestring);
					q->add(key, q->arg);
					free(key);
				}
			}
		} else if (ev->type != INFORMER_DELETED && has_tracking_finalizer(ev->object) &&
		    strcmp(json_string(ref, "kind"), "Job") == 0 &&
		    strcmp(json_string(ref, "apiVersion"), "batch/v1") == 0) {
			/* its Job is gone: that key's sync takes the finalizer off */
			key = xasprintf("%s/%s", namespace, json_string(ref, "name"));
			q->add(key, q->arg);
			free(key);
		}
		return;
	}
	if (ev->type == INFORMER_DELETED ||
	    json_is_set(ev->object, "metadata.deletionTimestamp")) {
		pod_key = xasprintf("%s/%s", namespace, name);
		if (expectations_deletion_observed(c->expectations, key, pod_key, &error) != 0)
			observe_failed(c, "a deletion", key, error);
		free(pod_key);
	} else if (ev->type == INFORMER_ADDED || ev->old_body == NULL) {
		if (expectations_creation_observed(c->expectations, key, &error) != 0)
			observe_failed(c, "a creation", key, error);
	}
	q->add(key, q->arg);
	free(key);
}

/* kube's job_syncs_total and job_sync_duration_seconds, once a sync's writes are done. */
static void
job_processed(struct controller *c, const char *key, double seconds, int failed)
{
	struct job_state *st = c->state;

	for (int i = 0; i < st->nkinds; i++) {
		struct job_sync_kind *k = &st->kinds[i];

		if (strcmp(k->key, key) != 0)
			continue;
		metrics_counter_add(series(st->m.syncs, k->mode, failed ? "error" : "success",
		    k->action), 1);
		if (seconds >= 0)
			metrics_histogram_observe(series(st->m.sync_seconds, k->mode,
			    failed ? "error" : "success", k->action), seconds);
		free(k->key);
		*k = st->kinds[--st->nkinds];
		return;
	}
}

static int
job_register_metrics(struct job_state *st, struct metrics_registry *r, char **error)
{
	static const char *const sync_labels[] = { "completion_mode", "result", "action", NULL };
	static const char *const finished_labels[] = { "completion_mode", "result", "reason",
		NULL };
	static const char *const pods_labels[] = { "completion_mode", "result", NULL };
	static const char *const controller[] = { "controller_name", NULL };
	static const char *const action[] = { "action", NULL };
	static const char *const indexes[] = { "status", "backoffLimit", NULL };
	static const char *const creation[] = { "reason", "status", NULL };
	static const double buckets[] = { 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256,
		0.512, 1.024, 2.048, 4.096, 8.192, 16.384, 32.768, 65.536 };
	const struct metrics_spec specs[] = {
		{ METRICS_HISTOGRAM, "job_controller_job_sync_duration_seconds",
		    "The time it took to sync a job", sync_labels, buckets, NELEM(buckets) },
		{ METRICS_COUNTER, "job_controller_job_syncs_total", "The number of job syncs",
		    sync_labels, NULL, 0 },
		{ METRICS_COUNTER, "job_controller_jobs_finished_total",
		    "The number of finished jobs", finished_labels, NULL, 0 },
		{ METRICS_COUNTER, "job_controller_jobs_by_external_controller_total",
		    "The number of Jobs managed by an external controller", controller, NULL, 0 },
		{ METRICS_COUNTER, "job_controller_job_pods_finished_total",
		    "The number of finished Pods that are fully tracked", pods_labels, NULL, 0 },
		{ METRICS_COUNTER, "job_controller_pod_failures_handled_by_failure_policy_total",
		    "The number of failed Pods handled by failure policy, by the action of the "
		    "rule they matched: FailJob, FailIndex, Ignore or Count", action, NULL, 0 },
		{ METRICS_COUNTER, "job_controller_job_finished_indexes_total",
		    "The number of finished indexes, by status (succeeded or failed) and "
		    "backoffLimit (perIndex or global)", indexes, NULL, 0 },
		{ METRICS_COUNTER, "job_controller_job_pods_creation_total",
		    "The number of Pods created by the Job controller, by the reason for the "
		    "creation (new, recreate_terminating_or_failed, recreate_failed) and the "
		    "status of the request (succeeded, failed)", creation, NULL, 0 },
	};
	struct metrics_family **f[] = { &st->m.sync_seconds, &st->m.syncs, &st->m.finished,
		&st->m.external, &st->m.pods_finished, &st->m.by_policy, &st->m.indexes,
		&st->m.creations };

	for (size_t i = 0; i < NELEM(specs); i++)
		if ((*f[i] = metrics_family_register(r, &specs[i], error)) == NULL)
			return -1;
	return 0;
}

static int
job_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct job_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "job", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
job_init(struct controller *c, char **error)
{
	struct job_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->jobs = resource_find("jobs");
	st->pods = resource_find("pods");
	if (st->jobs == NULL || st->pods == NULL)
		return error_set(error, "job: jobs and pods must be known resources");
	if (c->config->metrics != NULL &&
	    job_register_metrics(st, c->config->metrics, error) != 0)
		return -1;
	return store_prepare_statements(store_db(c->store), job_sql, STMT_COUNT, st->stmt,
	    "job", error);
}

static void
job_fini(struct controller *c)
{
	struct job_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	sqlite3_finalize(st->orphans);
	buf_free(&st->orphans_sql);
	buf_free(&st->orphans_next);
	for (int i = 0; i < st->nkinds; i++)
		free(st->kinds[i].key);
	free(st->kinds);
	free(st);
	c->state = NULL;
}

/* A pod of a live LIST is active as kube's controller.IsPodActive says. */
static int
job_pod_active(const cJSON *pod)
{
	const char *phase = json_string(pod, "status.phase");

	return !json_is_set(pod, "metadata.deletionTimestamp") &&
	    strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0;
}

/* After a restart: a Job's inherited expectations go once the cache shows the same
 * active pods as a live LIST by its selector. */
static const struct controller_recovery job_recovery = {
	.owners_sql =
	    "SELECT e.key, j.uid, json_extract(j.body, '$.spec.selector'), j.namespace,"
	    " e.set_at FROM expectations e"
	    " JOIN cache_objects j ON j.resource = 'jobs'"
	    " AND j.namespace || '/' || j.name = e.key"
	    " WHERE e.controller = ?1 AND (e.adds > 0 OR e.deletes > 0)",
	.dependents = "pods",
	.cached_sql =
	    "SELECT p.uid FROM object_owners o"
	    " JOIN cache_pods p ON p.id = o.object_id WHERE o.owner_uid = ?1"
	    " AND o.controller = 1 AND p.deletion_timestamp IS NULL"
	    " AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed') ORDER BY p.uid",
	.active = job_pod_active,
};

static const char *const job_resources[] = { "pods", "jobs", NULL };

const struct controller_type job_controller_type = {
	.name = "job",
	.resources = job_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-job-syncs",
	.workers_help = "Jobs synced at once",
	.enable_flag = NULL,
	.max_backoff = 60,		/* kube's MaxJobApiBackOff */
	.base_backoff = 1,		/* kube's DefaultJobApiBackOff */
	.flags = NULL,
	.event_component = "job-controller",
	.client_name = "job-controller",
	.recovery = &job_recovery,
	.init = job_init,
	.fini = job_fini,
	.handle_event = job_handle_event,
	.list_keys = job_list_keys,
	.sync = job_sync,
	.processed = job_processed,
};
