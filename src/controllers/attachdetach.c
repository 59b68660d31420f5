/*
 * attachdetach.c - the attach/detach controller (kube's attachdetach-controller, named
 * persistentvolume-attach-detach-controller in --controllers), for CSI volumes and the
 * in-tree volumes of plugins migrated to CSI.
 *
 * A key is a node's name. A node carrying the annotation
 * volumes.kubernetes.io/controller-managed-attach-detach (any value: kube asks only that it
 * is there) is managed; one seen with it since the controller started stays managed while
 * it exists, as kube's desired state keeps it (after a restart, only the annotation
 * counts, as in kube). The sync of a node compares what should be attached to it (the view
 * attachdetach_desired, schema/037-attachdetach-volumes.sql: the volumes of its pods that
 * are not terminated, through Bound claims, that are CSI or translated from a migrated
 * in-tree source (attachdetach_volumes), whose CSIDriver does not say attachRequired
 * false) with the VolumeAttachments that name it (attachdetach_attachments), and writes,
 * in this order:
 *   - attach: a VolumeAttachment for each desired volume that has none of kube's name
 *     ("csi-" and the SHA-256 of handle, driver and node), spec {attacher, nodeName,
 *     source.persistentVolumeName}, as kube's CSI attacher creates it; an external
 *     attacher then sets its status.attached;
 *   - the node's status.volumesAttached (a patch of the status): every volume whose
 *     VolumeAttachment says attached and that is not detached now, as
 *     {name: kubernetes.io/csi/<driver>^<handle>, devicePath: ""}; entries that are not
 *     CSI volumes are kept as they are;
 *   - detach: kube's reconciler rules for a VolumeAttachment no pod wants any more
 *     (deleted after the volume left volumesAttached, as kube updates the node's status
 *     before it detaches). While the node lists the volume in status.volumesInUse it
 *     waits, unless the node has the taint node.kubernetes.io/out-of-service (detached at
 *     once), or the node is not Ready (or gone) and the wait, counted from the first sync
 *     that wanted the detach, passed --attach-detach-reconcile-max-wait-unmount-duration
 *     (kube's six minutes; never with --disable-force-detach-on-timeout). A forced detach
 *     (the wait passed, or the taint) counts in kube's
 *     attach_detach_controller_attachdetach_controller_forced_detaches{reason}.
 *
 * Events on the pods of the node that want a volume, as kube's operation executor
 * records them: SuccessfulAttachVolume when it is newly listed in volumesAttached;
 * FailedAttachVolume "AttachVolume.Attach failed for volume ... : <error>" when its
 * VolumeAttachment carries the attacher's status.attachError, or is still not attached
 * two minutes (kube's CSI timeout) into an attempt; after each failure the next attempt
 * waits kube's exponential backoff (0.5 s doubling to 2m2s), so the event repeats as
 * kube's does (counted on one Event by the recorder).
 *
 * A volume that may be attached to one node only (access modes set, none of them
 * ReadWriteMany or ReadOnlyMany) is not attached while another node has a
 * VolumeAttachment of it; while that one is attached, the pods that wait get kube's
 * Multi-Attach error (FailedAttachVolume), once while they wait.
 *
 * A node without the annotation wants nothing: its attachments are detached by the rules
 * above (kube's actual state holds every VolumeAttachment it found at start). A node that
 * is gone keeps the volumes its pods still want (kube's desired state keeps such a
 * node), gets no new attachment and no status; the rest is detached, counting the volumes
 * in use from its last status as the deletion showed it (none after a restart, as kube).
 *
 * Not done (kube does them): inline volumes of migrated plugins in pods (a
 * VolumeAttachment with spec.source.inlineVolumeSpec); iSCSI and FC volumes, which kube
 * "attaches" with no VolumeAttachment and lists in volumesAttached; a
 * VolumeAttachment whose volume is no longer cached (left alone: its volume's name in
 * volumesInUse is not known). kube's --attach-detach-reconcile-sync-period and
 * --disable-attach-detach-reconcile-sync (its periodic check of the attachments' status,
 * which the informer gives here) are accepted and ignored (src/kcmflags.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "controllers/attachdetach.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "util.h"

#define CSI_PREFIX "kubernetes.io/csi/"

#define NO_FORCE_FLAG "disable-force-detach-on-timeout"
#define MAX_WAIT_FLAG "attach-detach-reconcile-max-wait-unmount-duration"

/* kube's CSI attacher waits this long for an attachment to say attached (csiTimeout). */
#define ATTACH_TIMEOUT 120.0
/* kube's operation backoff after a failed attach: 0.5 s, doubled at each failure up to
 * 2m2s (exponentialbackoff). */
#define BACKOFF_INITIAL 0.5
#define BACKOFF_MAX 122.0

enum {
	STMT_NODE,
	STMT_DESIRED,
	STMT_ATTACHMENTS,
	STMT_KEYS,
	STMT_PODS,
	STMT_ELSEWHERE,
	STMT_USERS,
	STMT_WANTED_ON,
	STMT_CLAIM_NODES,
	STMT_ATTACHED_TO,
	STMT_COUNT
};

static const char *const attachdetach_sql[STMT_COUNT] = {
	[STMT_NODE] = "SELECT uid, body FROM cache_objects"
	    " WHERE resource = 'nodes' AND namespace = ?1 AND name = ?2",
	/* The volumes node ?1 should have attached, once each, and whether each may be
	 * attached to several nodes (kube's IsMultiAttachAllowed). Whether the node is
	 * managed the sync decides (a node may be remembered managed). */
	[STMT_DESIRED] = "SELECT DISTINCT volume, driver, volume_handle, unique_name,"
	    " multi_attach FROM attachdetach_desired WHERE node = ?1"
	    " ORDER BY unique_name, volume",
	/* How many VolumeAttachments of volume ?1 name another node than ?2, and how many
	 * of them are attached. */
	[STMT_ELSEWHERE] = "SELECT count(*), coalesce(sum(json_extract(body,"
	    " '$.status.attached') = 1), 0) FROM cache_objects"
	    " WHERE resource = 'volumeattachments' AND namespace = ''"
	    " AND json_extract(body, '$.spec.source.persistentVolumeName') = ?1"
	    " AND json_extract(body, '$.spec.nodeName') <> ?2",
	/* The pods that want volume ?1 on the other nodes it is attached to (?2: this one),
	 * those nodes managed or gone (kube's desired state of those nodes). */
	[STMT_USERS] = "SELECT DISTINCT namespace, pod FROM attachdetach_desired"
	    " WHERE volume = ?1 AND managed IS NOT 0"
	    " AND node IN (SELECT json_extract(body, '$.spec.nodeName')"
	    " FROM cache_objects WHERE resource = 'volumeattachments' AND namespace = ''"
	    " AND json_extract(body, '$.spec.source.persistentVolumeName') = ?1"
	    " AND json_extract(body, '$.spec.nodeName') <> ?2"
	    " AND json_extract(body, '$.status.attached') = 1)"
	    " ORDER BY namespace, pod",
	/* The nodes that want volume ?1. */
	[STMT_WANTED_ON] = "SELECT DISTINCT node FROM attachdetach_desired WHERE volume = ?1",
	/* The nodes of the pods that name claim ?2 of namespace ?1, in a persistentVolumeClaim
	 * volume or as a generic ephemeral volume's claim, whatever its state. */
	[STMT_CLAIM_NODES] = "SELECT DISTINCT p.node_name FROM cache_pods p,"
	    " json_each(p.body, '$.spec.volumes') v"
	    " WHERE p.namespace = ?1 AND p.node_name IS NOT NULL AND p.node_name <> ''"
	    " AND (json_extract(v.value, '$.persistentVolumeClaim.claimName') = ?2"
	    " OR (json_type(v.value, '$.ephemeral') = 'object'"
	    " AND p.name || '-' || json_extract(v.value, '$.name') = ?2))",
	/* The nodes that VolumeAttachments of volume ?1 name. */
	[STMT_ATTACHED_TO] = "SELECT DISTINCT json_extract(body, '$.spec.nodeName')"
	    " FROM cache_objects WHERE resource = 'volumeattachments' AND namespace = ''"
	    " AND json_extract(body, '$.spec.source.persistentVolumeName') = ?1",
	/* The attachments of node ?1, with what the reconciler weighs. */
	[STMT_ATTACHMENTS] = "SELECT a.attachment, o.uid, a.unique_name, a.attached,"
	    " a.deleting, a.in_use, a.wanted, a.ready, a.out_of_service, a.attach_error,"
	    " a.volume, a.driver"
	    " FROM attachdetach_attachments a JOIN cache_objects o"
	    " ON o.resource = 'volumeattachments' AND o.namespace = '' AND o.name = a.attachment"
	    " WHERE a.node = ?1 ORDER BY a.attachment",
	/* Every node to sync: the managed ones, and those VolumeAttachments name (unmanaged
	 * or gone, whose attachments are detached). */
	[STMT_KEYS] = "SELECT name FROM cache_objects WHERE resource = 'nodes'"
	    " AND namespace = '' AND json_type(body, '$.metadata.annotations.\""
	    ATTACHDETACH_MANAGED_ANNOTATION "\"') IS NOT NULL"
	    " UNION SELECT json_extract(body, '$.spec.nodeName') FROM cache_objects"
	    " WHERE resource = 'volumeattachments' AND namespace = ''"
	    " AND coalesce(json_extract(body, '$.spec.nodeName'), '') <> ''"
	    " AND json_extract(body, '$.spec.source.persistentVolumeName') IS NOT NULL"
	    " ORDER BY 1",
	/* The pods of node ?1 that want volume ?2 (kube's scheduled pods of a volume). */
	[STMT_PODS] = "SELECT DISTINCT d.namespace, d.pod, p.uid, d.volume"
	    " FROM attachdetach_desired d JOIN cache_pods p"
	    " ON p.namespace = d.namespace AND p.name = d.pod"
	    " WHERE d.node = ?1 AND d.unique_name = ?2 ORDER BY d.namespace, d.pod",
};

/* What the controller remembers between syncs, as kube's desired and actual states of the
 * world do in memory (and, as there, not across a restart): entries keyed by a node's
 * name, or by "node\nunique volume name". */
struct memo_entry {
	char *key;
	double at;		/* detach requests: when first wanted; attach attempts: when
				   the current one began */
	double retry_at;	/* attach attempts: when the next may begin after a failure
				   (0: one is under way) */
	int failures;		/* attach attempts: failures in a row */
	cJSON *in_use;		/* gone nodes: status.volumesInUse as the deletion showed it */
};

struct memo {
	struct memo_entry *e;
	int n;
};

struct attachdetach_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *nodes;
	const struct resource *attachments;
	const struct resource *pods;
	double max_wait;		/* --attach-detach-reconcile-max-wait-unmount-duration */
	int no_force_on_timeout;	/* --disable-force-detach-on-timeout */
	/* kube's forced detach counter, by reason: timeout, out-of-service */
	struct metrics_series *forced[2];
	/* The volumes whose Multi-Attach error was reported: once while the volume waits,
	 * as kube's desired state of the world flags it. */
	struct memo multi_reported;
	/* When each attachment no pod wants was first seen so (kube's detachRequestedTime). */
	struct memo detach_requests;
	/* Each attach under way: when it began, its failures (kube's attach operation and
	 * its backoff). */
	struct memo attach_attempts;
	/* The nodes seen with the annotation (kube's desired state keeps them managed). */
	struct memo managed;
	/* The nodes deleted, with the volumes their last status had in use. */
	struct memo gone;
};

enum { FORCED_TIMEOUT, FORCED_OUT_OF_SERVICE };

static struct memo_entry *
memo_find(struct memo *m, const char *key)
{
	for (int i = 0; i < m->n; i++) {
		if (strcmp(m->e[i].key, key) == 0)
			return &m->e[i];
	}
	return NULL;
}

/* The entry of key, added (zeroed) if there is none. */
static struct memo_entry *
memo_get(struct memo *m, const char *key)
{
	struct memo_entry *e = memo_find(m, key);

	if (e != NULL)
		return e;
	m->e = xrealloc(m->e, (size_t)(m->n + 1) * sizeof *m->e);
	e = &m->e[m->n++];
	memset(e, 0, sizeof *e);
	e->key = xstrdup(key);
	return e;
}

static void
memo_remove(struct memo *m, const char *key)
{
	struct memo_entry *e = memo_find(m, key);

	if (e == NULL)
		return;
	free(e->key);
	cJSON_Delete(e->in_use);
	*e = m->e[--m->n];
}

/* Forgets the entries of node ("node\n...") but those whose volume is among the n kept
 * (unique names). */
static void
memo_forget_node(struct memo *m, const char *node, char **kept, int n)
{
	size_t len = strlen(node);
	int k = 0;

	for (int i = 0; i < m->n; i++) {
		struct memo_entry *e = &m->e[i];
		int keep = strncmp(e->key, node, len) != 0 || e->key[len] != '\n';

		for (int j = 0; !keep && j < n; j++)
			keep = strcmp(e->key + len + 1, kept[j]) == 0;
		if (keep) {
			m->e[k++] = *e;
		} else {
			free(e->key);
			cJSON_Delete(e->in_use);
		}
	}
	m->n = k;
}

static void
memo_free(struct memo *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->e[i].key);
		cJSON_Delete(m->e[i].in_use);
	}
	free(m->e);
	m->e = NULL;
	m->n = 0;
}

/* A list of names (unique volume names), owned. */
struct names {
	char **v;
	int n;
};

static void
names_add(struct names *l, const char *name)
{
	for (int i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], name) == 0)
			return;
	}
	l->v = xrealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
	l->v[l->n++] = xstrdup(name);
}

static int
names_have(const struct names *l, const char *name)
{
	for (int i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], name) == 0)
			return 1;
	}
	return 0;
}

static void
names_free(struct names *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

char *
attachdetach_attachment_name(const char *handle, const char *driver, const char *node)
{
	char *text = xasprintf("%s%s%s", handle, driver, node);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];

	if (EVP_Digest(text, strlen(text), md, &len, EVP_sha256(), NULL) != 1)
		len = 0;
	free(text);
	for (unsigned int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[2 * len] = '\0';
	return xasprintf("csi-%s", hex);
}

/* --- sync ------------------------------------------------------------------------------ */

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether list (the node's volumesAttached) names name. */
static int
lists(const cJSON *list, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, list) {
		if (strcmp(json_string(e, "name"), name) == 0)
			return 1;
	}
	return 0;
}

/* The node's new status.volumesAttached, or NULL when it is already what r says. */
static cJSON *
volumes_attached(const cJSON *node, struct names *r)
{
	const cJSON *current = json_path(node, "status.volumesAttached"), *e;
	int same = 1, ncsi = 0;
	cJSON *list;

	cJSON_ArrayForEach(e, current) {
		const char *name = json_string(e, "name");

		if (strncmp(name, CSI_PREFIX, strlen(CSI_PREFIX)) != 0)
			continue;
		ncsi++;
	}
	for (int i = 0; i < r->n; i++)
		same = same && lists(current, r->v[i]);
	if (same && ncsi == r->n)
		return NULL;
	if (r->n > 1)
		qsort(r->v, (size_t)r->n, sizeof *r->v, name_cmp);
	list = cJSON_CreateArray();
	cJSON_ArrayForEach(e, current) {
		if (strncmp(json_string(e, "name"), CSI_PREFIX, strlen(CSI_PREFIX)) != 0)
			cJSON_AddItemToArray(list, cJSON_Duplicate(e, 1));
	}
	for (int i = 0; i < r->n; i++) {
		cJSON *v = cJSON_CreateObject();

		cJSON_AddStringToObject(v, "name", r->v[i]);
		cJSON_AddStringToObject(v, "devicePath", "");
		cJSON_AddItemToArray(list, v);
	}
	return list;
}

/* Records an event of type and reason on each pod of node that wants the volume called
 * unique_name: message is a format whose one %s is the volume's name (kube's name of the
 * spec: the PersistentVolume's). */
static int
pod_events(struct attachdetach_state *st, struct sync_result *out, const char *node,
    const char *unique_name, const char *type, const char *reason, const char *message,
    char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PODS]);
	int rc;

	sqlite3_bind_text(stmt, 1, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, unique_name, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *pod = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(pod,
		    "metadata");
		const char *volume = (const char *)sqlite3_column_text(stmt, 3);
		struct buf text;
		const char *p;

		cJSON_AddStringToObject(meta, "name",
		    (const char *)sqlite3_column_text(stmt, 1));
		cJSON_AddStringToObject(meta, "namespace",
		    (const char *)sqlite3_column_text(stmt, 0));
		cJSON_AddStringToObject(meta, "uid", (const char *)sqlite3_column_text(stmt, 2));
		/* message is the controller's own text: only its %s is replaced, so a volume
		 * or an attacher's error with a % in it is taken as it is */
		buf_init(&text);
		p = strstr(message, "%s");
		buf_printf(&text, "%.*s%s%s", (int)(p - message), message,
		    volume != NULL ? volume : "", p + 2);
		sync_result_add_object_event(out, st->pods, pod, type, reason,
		    buf_detach(&text));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "attachdetach: reading the pods of %s that want %s: %s",
		    node, unique_name, sqlite3_errmsg(sqlite3_db_handle(stmt)));
	return 0;
}

/* kube's reportMultiAttachError: a FailedAttachVolume warning on each pod of node that
 * wants volume (unique_name), naming the pods of its namespace that hold the volume on
 * the other nodes it is attached to, and counting those of other namespaces. */
static int
multi_attach_events(struct attachdetach_state *st, struct sync_result *out,
    const char *node, const char *volume, const char *unique_name, char **error)
{
	sqlite3_stmt *users = controller_stmt(st->stmt[STMT_USERS]);
	sqlite3_stmt *pods = controller_stmt(st->stmt[STMT_PODS]);
	struct {
		char *namespace, *name;
	} *held = NULL;
	int nheld = 0, rc;

	sqlite3_bind_text(users, 1, volume, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(users, 2, node, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(users)) == SQLITE_ROW) {
		held = xrealloc(held, (size_t)(nheld + 1) * sizeof *held);
		held[nheld].namespace = controller_column_strdup(users, 0);
		held[nheld].name = controller_column_strdup(users, 1);
		nheld++;
	}
	sqlite3_reset(users);
	if (rc != SQLITE_DONE) {
		rc = error_set(error, "attachdetach: reading the pods that hold %s: %s", volume,
		    sqlite3_errmsg(sqlite3_db_handle(users)));
		goto done;
	}
	sqlite3_bind_text(pods, 1, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(pods, 2, unique_name, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(pods)) == SQLITE_ROW) {
		const char *ns = (const char *)sqlite3_column_text(pods, 0);
		cJSON *pod = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(pod,
		    "metadata");
		struct buf msg;
		int local = 0, others = 0;

		cJSON_AddStringToObject(meta, "name", (const char *)sqlite3_column_text(pods, 1));
		cJSON_AddStringToObject(meta, "namespace", ns);
		cJSON_AddStringToObject(meta, "uid", (const char *)sqlite3_column_text(pods, 2));
		buf_init(&msg);
		buf_printf(&msg, "Multi-Attach error for volume \"%s\" ", volume);
		if (nheld == 0) {
			buf_printf(&msg, "Volume is already exclusively attached to one node and "
			    "can't be attached to another");
		} else {
			for (int i = 0; i < nheld; i++) {
				if (strcmp(held[i].namespace, ns) != 0) {
					others++;
					continue;
				}
				buf_printf(&msg, "%s%s", local++ == 0 ?
				    "Volume is already used by pod(s) " : ", ", held[i].name);
			}
			if (local == 0)
				buf_printf(&msg, "Volume is already used by %d pod(s) in different "
				    "namespaces", others);
			else if (others > 0)
				buf_printf(&msg, " and %d pod(s) in different namespaces", others);
		}
		sync_result_add_object_event(out, st->pods, pod, "Warning", "FailedAttachVolume",
		    buf_detach(&msg));
	}
	sqlite3_reset(pods);
	if (rc != SQLITE_DONE)
		rc = error_set(error, "attachdetach: reading the pods of %s that want %s: %s",
		    node, unique_name, sqlite3_errmsg(sqlite3_db_handle(pods)));
	else
		rc = 0;
done:
	for (int i = 0; i < nheld; i++) {
		free(held[i].namespace);
		free(held[i].name);
	}
	free(held);
	return rc;
}

/* Whether volume may be attached to node now: 1, or 0 when it may be attached to one node
 * only and another node has a VolumeAttachment of it (kube attaches such a volume to one
 * node at a time); then, the first time, the Multi-Attach error of kube on the pods when
 * the other attachment is attached. */
static int
may_attach(struct attachdetach_state *st, struct sync_result *out, const char *node,
    const char *volume, const char *unique_name, int *ok, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_ELSEWHERE]);
	int rc, elsewhere = 0, attached = 0;

	sqlite3_bind_text(stmt, 1, volume, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, node, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		elsewhere = sqlite3_column_int(stmt, 0);
		attached = sqlite3_column_int(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return error_set(error, "attachdetach: reading the attachments of %s: %s",
		    volume, sqlite3_errmsg(sqlite3_db_handle(stmt)));
	*ok = elsewhere == 0;
	if (attached > 0) {
		char *entry = xasprintf("%s\n%s", node, unique_name);
		int reported = memo_find(&st->multi_reported, entry) != NULL;

		if (!reported)
			memo_get(&st->multi_reported, entry);
		free(entry);
		if (!reported)
			return multi_attach_events(st, out, node, volume, unique_name, error);
	}
	return 0;
}

/* Asks for a sync after seconds, unless one comes sooner. */
static void
requeue(struct sync_result *out, double seconds)
{
	if (seconds <= 0)
		seconds = 0.001;
	if (out->requeue_after == 0 || seconds < out->requeue_after)
		out->requeue_after = seconds;
}

/* kube's attach operation for a desired volume whose VolumeAttachment (created now, or
 * cached and neither attached nor being deleted) is awaited: an attempt fails when the
 * attachment carries the attacher's error, or when it is still not attached
 * ATTACH_TIMEOUT after the attempt began; each failure records FailedAttachVolume on the
 * pods that want the volume and backs off before the next attempt. attach_error is the
 * attachment's status.attachError.message, or NULL. */
static int
attach_attempt(struct attachdetach_state *st, struct sync_result *out, const char *node,
    const char *unique_name, const char *driver, const char *attach_error, double now,
    char **error)
{
	char *key = xasprintf("%s\n%s", node, unique_name);
	struct memo_entry *e = memo_find(&st->attach_attempts, key);
	const char *handle = strchr(unique_name, '^');
	char *message = NULL;
	double backoff;
	int rc;

	if (e == NULL) {
		e = memo_get(&st->attach_attempts, key);
		e->at = now;
	}
	free(key);
	if (e->retry_at > now) {
		requeue(out, e->retry_at - now);
		return 0;
	}
	if (e->retry_at != 0) {		/* the backoff is over: a new attempt */
		e->at = now;
		e->retry_at = 0;
	}
	if (attach_error != NULL) {
		message = xasprintf("AttachVolume.Attach failed for volume \"%%s\" : %s",
		    attach_error);
	} else if (now - e->at >= ATTACH_TIMEOUT) {
		message = xasprintf("AttachVolume.Attach failed for volume \"%%s\" : timed out "
		    "waiting for external-attacher of %s CSI driver to attach volume %s", driver,
		    handle != NULL ? handle + 1 : "");
	} else {
		requeue(out, e->at + ATTACH_TIMEOUT - now);
		return 0;
	}
	backoff = BACKOFF_INITIAL;
	for (int i = 0; i < e->failures && backoff < BACKOFF_MAX; i++)
		backoff *= 2;
	if (backoff > BACKOFF_MAX)
		backoff = BACKOFF_MAX;
	e->failures++;
	e->retry_at = now + backoff;
	requeue(out, backoff);
	rc = pod_events(st, out, node, unique_name, "Warning", "FailedAttachVolume", message,
	    error);
	free(message);
	return rc;
}

static void
attach(struct attachdetach_state *st, struct sync_result *out, const char *name,
    const char *volume, const char *driver, const char *node)
{
	struct action *a = action_append(&out->writes, &out->nwrites);
	cJSON *spec;

	a->type = ACTION_CREATE;
	a->verb = "attach";
	a->resource = st->attachments;
	a->namespace = xstrdup("");
	a->name = xstrdup(name);
	a->body = cJSON_CreateObject();
	cJSON_AddStringToObject(a->body, "apiVersion", "storage.k8s.io/v1");
	cJSON_AddStringToObject(a->body, "kind", "VolumeAttachment");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(a->body, "metadata"), "name", name);
	spec = cJSON_AddObjectToObject(a->body, "spec");
	cJSON_AddStringToObject(spec, "attacher", driver);
	cJSON_AddStringToObject(spec, "nodeName", node);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "source"),
	    "persistentVolumeName", volume);
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(a->body, "status"), "attached", 0);
	a->exists_ok = 1;
	a->reason = xasprintf("volume %s of %s is wanted on %s", volume, driver, node);
}

/* What a sync knows of its node. */
struct node_view {
	const char *name;
	int exists;
	int managed;		/* kube's desired state has it: annotated, remembered, or gone
				   (its pods' volumes stay desired) */
	const cJSON *gone_in_use;	/* a gone node's last volumesInUse, or NULL */
};

/* A detach the sync decided, and its forced reason (-1: none). */
struct detach {
	char *name, *uid, *reason;
	int forced;
};

/* kube's reconciler for one VolumeAttachment no pod wants (the current row of stmt):
 * whether to detach it now (*detach_now) and why, or to wait for the node to unmount it,
 * then asking for a sync when the wait may end by itself. */
static void
detach_rules(struct attachdetach_state *st, struct sync_result *out,
    const struct node_view *nv, sqlite3_stmt *stmt, const char *unique_name, double now,
    struct names *undesired, int *detach_now, int *forced, char **why)
{
	char *key = xasprintf("%s\n%s", nv->name, unique_name);
	struct memo_entry *e = memo_find(&st->detach_requests, key);
	int in_use = sqlite3_column_int(stmt, 5) != 0;
	int ready = nv->exists && sqlite3_column_int(stmt, 7) != 0;
	int out_of_service = nv->exists && sqlite3_column_int(stmt, 8) != 0;
	int expired, force_timeout;
	double elapsed;

	if (e == NULL) {
		e = memo_get(&st->detach_requests, key);
		e->at = now;
	}
	free(key);
	names_add(undesired, unique_name);
	if (!nv->exists && nv->gone_in_use != NULL) {
		const cJSON *u;

		cJSON_ArrayForEach(u, nv->gone_in_use) {
			if (cJSON_IsString(u) && strcmp(u->valuestring, unique_name) == 0)
				in_use = 1;
		}
	}
	elapsed = now - e->at;
	expired = elapsed > st->max_wait;
	force_timeout = expired && !st->no_force_on_timeout;
	*forced = -1;
	*why = NULL;
	if (in_use && !(force_timeout && !ready) && !out_of_service) {
		*detach_now = 0;
		if (!ready && !st->no_force_on_timeout && !expired)
			requeue(out, st->max_wait - elapsed + 0.001);
		return;
	}
	*detach_now = 1;
	if (force_timeout) {
		*forced = FORCED_TIMEOUT;
		*why = xasprintf("no pod wants the volume and %s, force detaching",
		    in_use ? "the node still uses it, not Ready, past the wait for unmount" :
		    "the wait for unmount passed");
	} else if (out_of_service) {
		*forced = FORCED_OUT_OF_SERVICE;
		*why = xstrdup("no pod wants the volume and the node is out of service, "
		    "force detaching");
	} else {
		*why = xstrdup("no pod wants the volume and the node does not use it");
	}
}

static int
attachdetach_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct attachdetach_state *st = c->state;
	sqlite3_stmt *stmt;
	struct names report = { NULL, 0 }, cached = { NULL, 0 }, pending = { NULL, 0 };
	struct names undesired = { NULL, 0 }, waiting = { NULL, 0 };
	struct node_view nv = { key, 0, 0, NULL };
	struct detach *detach = NULL;
	int rc, ndetach = 0;
	cJSON *list;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->nodes;
	if (controller_read_owner(st->stmt[STMT_NODE], key, "attachdetach", out, error) != 0)
		return -1;
	nv.exists = out->owner != NULL;
	if (nv.exists) {
		if (json_annotation(out->owner, ATTACHDETACH_MANAGED_ANNOTATION) != NULL)
			memo_get(&st->managed, key);
		nv.managed = memo_find(&st->managed, key) != NULL;
		memo_remove(&st->gone, key);
	} else {
		struct memo_entry *g = memo_find(&st->gone, key);

		nv.managed = 1;
		nv.gone_in_use = g != NULL ? g->in_use : NULL;
	}

	/* The attachments that name the node: what stays, what is detached. */
	stmt = controller_stmt(st->stmt[STMT_ATTACHMENTS]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);
		const char *unique = (const char *)sqlite3_column_text(stmt, 2);
		int attached = sqlite3_column_int(stmt, 3) == 1;
		int deleting = sqlite3_column_int(stmt, 4) != 0;
		int desired = nv.managed && sqlite3_column_int(stmt, 6) != 0;
		int detach_now = 0, forced;
		char *why;

		names_add(&cached, name);
		if (unique == NULL || deleting)
			continue;	/* its volume is not known; or detaching already */
		if (desired) {
			char *entry = xasprintf("%s\n%s", key, unique);

			if (attached) {
				/* kube touches an attached desired volume: its detach
				 * request, if any, starts over */
				memo_remove(&st->detach_requests, entry);
				names_add(&report, unique);
			} else if (nv.exists) {
				names_add(&pending, unique);
				if (attach_attempt(st, out, key, unique,
				    (const char *)sqlite3_column_text(stmt, 11),
				    (const char *)sqlite3_column_text(stmt, 9), now, error) != 0)
					rc = -1;
			}
			free(entry);
			if (rc == -1)
				break;
			continue;
		}
		detach_rules(st, out, &nv, stmt, unique, now, &undesired, &detach_now,
		    &forced, &why);
		if (!detach_now) {
			if (attached)
				names_add(&report, unique);
			continue;
		}
		detach = xrealloc(detach, (size_t)(ndetach + 1) * sizeof *detach);
		detach[ndetach].name = xstrdup(name);
		detach[ndetach].uid = controller_column_strdup(stmt, 1);
		detach[ndetach].reason = why;
		detach[ndetach].forced = forced;
		ndetach++;
	}
	sqlite3_reset(stmt);
	if (rc == -1)
		goto done;
	if (rc != SQLITE_DONE) {
		rc = error_set(error, "attachdetach: reading the attachments of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}

	/* Attach what is wanted and has no attachment of kube's name (a gone node gets
	 * none). */
	stmt = controller_stmt(st->stmt[STMT_DESIRED]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
	while (nv.exists && nv.managed && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *volume = (const char *)sqlite3_column_text(stmt, 0);
		const char *driver = (const char *)sqlite3_column_text(stmt, 1);
		const char *handle = (const char *)sqlite3_column_text(stmt, 2);
		const char *unique = (const char *)sqlite3_column_text(stmt, 3);
		char *name;
		int ok = 1;

		rc = 0;
		if (volume == NULL || driver == NULL || handle == NULL || unique == NULL)
			continue;
		name = attachdetach_attachment_name(handle, driver, key);
		if (names_have(&cached, name)) {
			free(name);
			continue;
		}
		if (sqlite3_column_int(stmt, 4) == 0) {
			rc = may_attach(st, out, key, volume, unique, &ok, error);
			if (rc == 0 && !ok)
				names_add(&waiting, unique);
		}
		if (rc == 0 && ok) {
			attach(st, out, name, volume, driver, key);
			names_add(&pending, unique);
			rc = attach_attempt(st, out, key, unique, driver, NULL, now, error);
		}
		free(name);
		if (rc != 0) {
			rc = -1;
			break;
		}
	}
	sqlite3_reset(stmt);
	if (rc == -1)
		goto done;
	if (nv.exists && nv.managed && rc != SQLITE_DONE) {
		rc = error_set(error, "attachdetach: reading what %s should attach: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}
	rc = 0;
	memo_forget_node(&st->multi_reported, key, waiting.v, waiting.n);
	memo_forget_node(&st->attach_attempts, key, pending.v, pending.n);
	memo_forget_node(&st->detach_requests, key, undesired.v, undesired.n);

	/* The node's status (none for a gone node), then the detaches. */
	list = nv.exists ? volumes_attached(out->owner, &report) : NULL;
	for (int i = 0; list != NULL && i < report.n; i++) {
		if (!lists(json_path(out->owner, "status.volumesAttached"), report.v[i]) &&
		    (rc = pod_events(st, out, key, report.v[i], "Normal",
		    "SuccessfulAttachVolume",
		    /* kube's message ends with the empty suffix after a space */
		    "AttachVolume.Attach succeeded for volume \"%s\" ", error)) != 0) {
			cJSON_Delete(list);
			goto done;
		}
	}
	if (list != NULL) {
		struct action *a = action_append(&out->writes, &out->nwrites);

		a->type = ACTION_PATCH;
		a->verb = "update-volumes-attached";
		a->resource = st->nodes;
		a->namespace = xstrdup("");
		a->name = xstrdup(key);
		a->uid = xstrdup(out->owner_uid);
		a->subresource = "status";
		a->body = cJSON_CreateObject();
		a->reason = xasprintf("%d CSI volumes attached", report.n);
		if (cJSON_GetArraySize(list) == 0) {
			cJSON_Delete(list);
			list = cJSON_CreateNull();
		}
		cJSON_AddItemToObject(cJSON_AddObjectToObject(a->body, "status"),
		    "volumesAttached", list);
	}
	for (int i = 0; i < ndetach; i++) {
		struct action *a = action_append(&out->writes, &out->nwrites);

		a->type = ACTION_DELETE;
		a->verb = "detach";
		a->resource = st->attachments;
		a->namespace = xstrdup("");
		a->name = detach[i].name;
		a->uid = detach[i].uid;
		a->reason = detach[i].reason;
		if (detach[i].forced >= 0)
			a->count_done = st->forced[detach[i].forced];
		detach[i].name = detach[i].uid = detach[i].reason = NULL;
	}
done:
	for (int i = 0; i < ndetach; i++) {
		free(detach[i].name);
		free(detach[i].uid);
		free(detach[i].reason);
	}
	free(detach);
	names_free(&report);
	names_free(&cached);
	names_free(&pending);
	names_free(&undesired);
	names_free(&waiting);
	return rc;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
queue_node_of(const cJSON *o, const char *path, const struct controller_queue *q)
{
	const char *node = json_string(o, path);

	if (*node != '\0')
		q->add(node, q->arg);
}

static void
queue_managed(struct attachdetach_state *st, const struct controller_queue *q)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_KEYS]);

	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);

		if (name != NULL)
			q->add(name, q->arg);
	}
	sqlite3_reset(stmt);
}

/* Queues the nodes statement which (its parameters a and b, b may be NULL) yields. */
static void
queue_rows(struct attachdetach_state *st, int which, const char *a, const char *b,
    const struct controller_queue *q)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[which]);

	if (*a == '\0')
		return;
	sqlite3_bind_text(stmt, 1, a, -1, SQLITE_TRANSIENT);
	if (b != NULL)
		sqlite3_bind_text(stmt, 2, b, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);

		if (name != NULL && *name != '\0')
			q->add(name, q->arg);
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
}

/* Queues the nodes whose wants object o (of resource r) may change. */
static void
queue_for(struct attachdetach_state *st, const char *r, const cJSON *o,
    const struct controller_queue *q)
{
	if (strcmp(r, "nodes") == 0) {
		queue_node_of(o, "metadata.name", q);
	} else if (strcmp(r, "pods") == 0) {
		queue_node_of(o, "spec.nodeName", q);
	} else if (strcmp(r, "volumeattachments") == 0) {
		queue_node_of(o, "spec.nodeName", q);
		/* a volume that attaches to one node at a time waits for this one */
		queue_rows(st, STMT_WANTED_ON, json_string(o, "spec.source.persistentVolumeName"),
		    NULL, q);
	} else if (strcmp(r, "persistentvolumeclaims") == 0) {
		queue_rows(st, STMT_CLAIM_NODES, json_string(o, "metadata.namespace"),
		    json_string(o, "metadata.name"), q);
	} else if (strcmp(r, "persistentvolumes") == 0) {
		queue_rows(st, STMT_CLAIM_NODES, json_string(o, "spec.claimRef.namespace"),
		    json_string(o, "spec.claimRef.name"), q);
		queue_rows(st, STMT_ATTACHED_TO, json_string(o, "metadata.name"), NULL, q);
	}
}

/* What kube's node handlers keep: a node seen with the annotation is managed from then on
 * (addNodeToDswp); a node deleted is managed no more, and the volumes its last status
 * had in use count as mounted until they are detached (processVolumesInUse). */
static void
node_seen(struct attachdetach_state *st, const struct informer_event *ev)
{
	const char *name = json_string(ev->object, "metadata.name");

	if (*name == '\0')
		return;
	if (ev->type == INFORMER_DELETED) {
		struct memo_entry *g;

		memo_remove(&st->managed, name);
		g = memo_get(&st->gone, name);
		cJSON_Delete(g->in_use);
		g->in_use = cJSON_Duplicate(json_path(ev->object, "status.volumesInUse"), 1);
		return;
	}
	memo_remove(&st->gone, name);
	if (json_annotation(ev->object, ATTACHDETACH_MANAGED_ANNOTATION) != NULL)
		memo_get(&st->managed, name);
}

static void
attachdetach_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	struct attachdetach_state *st = c->state;
	const char *r = ev->resource->name;

	(void)now;
	if (strcmp(r, "nodes") == 0)
		node_seen(st, ev);
	if (strcmp(r, "csidrivers") == 0) {
		/* a driver's attachRequired may change what any node wants */
		queue_managed(st, q);
		return;
	}
	queue_for(st, r, ev->object, q);
	if (ev->type == INFORMER_UPDATED && ev->old_body != NULL) {
		cJSON *old = cJSON_Parse(ev->old_body);

		if (old != NULL)
			queue_for(st, r, old, q);
		cJSON_Delete(old);
	}
}

static int
attachdetach_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct attachdetach_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "attachdetach", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

/* Registers kube's counter of forced detaches, by reason. */
static int
register_metrics(struct attachdetach_state *st, struct metrics_registry *registry,
    char **error)
{
	static const char *const labels[] = { "reason", NULL };
	static const struct metrics_spec forced = { METRICS_COUNTER,
	    "attach_detach_controller_attachdetach_controller_forced_detaches",
	    "Number of times the A/D Controller performed a forced detach", labels, NULL, 0 };
	struct metrics_family *f = metrics_family_register(registry, &forced, error);
	const char *timeout[] = { "timeout" }, *out_of_service[] = { "out-of-service" };

	if (f == NULL)
		return -1;
	st->forced[FORCED_TIMEOUT] = metrics_series_get(f, timeout);
	st->forced[FORCED_OUT_OF_SERVICE] = metrics_series_get(f, out_of_service);
	return 0;
}

static int
attachdetach_init(struct controller *c, char **error)
{
	struct attachdetach_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->nodes = resource_find("nodes");
	st->attachments = resource_find("volumeattachments");
	st->pods = resource_find("pods");
	if (st->nodes == NULL || st->attachments == NULL || st->pods == NULL)
		return error_set(error, "attachdetach: nodes, volumeattachments or pods are "
		    "not known resources");
	st->max_wait = controller_flag_seconds(c, MAX_WAIT_FLAG);
	st->no_force_on_timeout = controller_flag_bool(c, NO_FORCE_FLAG);
	if (c->config->metrics != NULL && register_metrics(st, c->config->metrics, error) != 0)
		return -1;
	return store_prepare_statements(store_db(c->store), attachdetach_sql, STMT_COUNT,
	    st->stmt, "attachdetach", error);
}

static void
attachdetach_fini(struct controller *c)
{
	struct attachdetach_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	memo_free(&st->multi_reported);
	memo_free(&st->detach_requests);
	memo_free(&st->attach_attempts);
	memo_free(&st->managed);
	memo_free(&st->gone);
	free(st);
	c->state = NULL;
}

static const char *const attachdetach_resources[] = {
	"nodes", "pods", "persistentvolumeclaims", "persistentvolumes", "csidrivers",
	"volumeattachments", NULL
};

static const struct controller_flag attachdetach_flags[] = {
	{ NO_FORCE_FLAG, CONTROLLER_FLAG_BOOL, "false", 0, 0,
	    "Prevent force detaching volumes based on maximum unmount time and node status. "
	    "If this flag is set to true, the non-graceful node shutdown feature must be used "
	    "to recover from node failure." },
	{ MAX_WAIT_FLAG, CONTROLLER_FLAG_DURATION, "6m0s", 0, 0,
	    "how long a volume no pod wants may stay in use on a node that is not Ready "
	    "before it is force detached (sqlkcm's own flag: kube's is six minutes, fixed)" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type attachdetach_controller_type = {
	.name = "attachdetach",
	.resources = attachdetach_resources,
	.default_workers = 1,		/* kube's one reconciler loop; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = attachdetach_flags,
	.event_component = "attachdetach-controller",
	.client_name = "attachdetach-controller",
	.recovery = NULL,
	.init = attachdetach_init,
	.fini = attachdetach_fini,
	.handle_event = attachdetach_handle_event,
	.list_keys = attachdetach_list_keys,
	.sync = attachdetach_sync,
};
