/*
 * attachdetach.c - the attach/detach controller (kube's attachdetach-controller, named
 * persistentvolume-attach-detach-controller in --controllers), for CSI volumes.
 *
 * A key is a node's name. Only a node annotated
 * volumes.kubernetes.io/controller-managed-attach-detach: "true" is managed, as in kube.
 * The sync of such a node compares what should be attached to it (the view
 * attachdetach_desired, schema/036-attachdetach.sql: the CSI volumes of its pods that are
 * not terminated, through Bound claims, whose CSIDriver does not say attachRequired
 * false) with the VolumeAttachments that name it (the view attachdetach_attachments), and
 * writes, in this order:
 *   - attach: a VolumeAttachment for each desired volume that has none of kube's name
 *     ("csi-" and the SHA-256 of handle, driver and node), spec {attacher, nodeName,
 *     source.persistentVolumeName}, as kube's CSI attacher creates it; an external
 *     attacher then sets its status.attached;
 *   - the node's status.volumesAttached (a patch of the status): every volume whose
 *     VolumeAttachment says attached and that is still desired or still in use, as
 *     {name: kubernetes.io/csi/<driver>^<handle>, devicePath: ""}; entries that are not
 *     CSI volumes are kept as they are;
 *   - detach: a VolumeAttachment no pod wants any more is deleted once the node no longer
 *     lists its volume in status.volumesInUse, after the volume left volumesAttached (the
 *     patch above comes first, as kube updates the node's status before it detaches).
 *
 * A volume newly listed there brings kube's SuccessfulAttachVolume event on each pod of
 * the node that wants it.
 *
 * A volume that may be attached to one node only (access modes set, none of them
 * ReadWriteMany or ReadOnlyMany) is not attached while another node has a
 * VolumeAttachment of it; while that one is attached, the pods that wait get kube's
 * Multi-Attach error (FailedAttachVolume), once while they wait.
 *
 * Not done (kube does them): FailedAttachVolume with the attacher's error; the
 * six-minute force detach of a
 * volume still in use on an unhealthy or out-of-service node (here it waits for the
 * node); in-tree volumes and their CSI migration, inline CSI volumes in pods; the
 * attachments of a node that was deleted or lost its annotation (left alone); a
 * VolumeAttachment whose volume is no longer cached (left alone: its volume's name in
 * volumesInUse is not known). kube's attach-detach flags are accepted and ignored
 * (src/kcmflags.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "controllers/attachdetach.h"
#include "json.h"
#include "resource.h"
#include "util.h"

#define CSI_PREFIX "kubernetes.io/csi/"

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
	/* The volumes node ?1 should have attached, once each. */
	/* The volumes node ?1 should have attached, once each, and whether each may be
	 * attached to several nodes (kube's IsMultiAttachAllowed: no access modes, or
	 * ReadWriteMany or ReadOnlyMany among them). */
	[STMT_DESIRED] = "SELECT DISTINCT d.volume, d.driver, d.volume_handle, d.unique_name,"
	    " coalesce(json_array_length(pv.body, '$.spec.accessModes'), 0) = 0"
	    " OR EXISTS (SELECT 1 FROM json_each(pv.body, '$.spec.accessModes') m"
	    " WHERE m.value IN ('ReadWriteMany', 'ReadOnlyMany'))"
	    " FROM attachdetach_desired d JOIN cache_objects pv"
	    " ON pv.resource = 'persistentvolumes' AND pv.namespace = '' AND pv.name = d.volume"
	    " WHERE d.node = ?1 ORDER BY d.unique_name, d.volume",
	/* How many VolumeAttachments of volume ?1 name another node than ?2, and how many
	 * of them are attached. */
	[STMT_ELSEWHERE] = "SELECT count(*), coalesce(sum(json_extract(body,"
	    " '$.status.attached') = 1), 0) FROM cache_objects"
	    " WHERE resource = 'volumeattachments' AND namespace = ''"
	    " AND json_extract(body, '$.spec.source.persistentVolumeName') = ?1"
	    " AND json_extract(body, '$.spec.nodeName') <> ?2",
	/* The pods that want volume ?1 on the other nodes it is attached to (?2: this one). */
	[STMT_USERS] = "SELECT DISTINCT namespace, pod FROM attachdetach_desired"
	    " WHERE volume = ?1 AND node IN (SELECT json_extract(body, '$.spec.nodeName')"
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
	[STMT_ATTACHMENTS] = "SELECT a.attachment, o.uid, a.unique_name, a.attached,"
	    " a.deleting, a.in_use, a.desired"
	    " FROM attachdetach_attachments a JOIN cache_objects o"
	    " ON o.resource = 'volumeattachments' AND o.namespace = '' AND o.name = a.attachment"
	    " WHERE a.node = ?1 ORDER BY a.attachment",
	/* Every managed node. */
	[STMT_KEYS] = "SELECT name FROM cache_objects WHERE resource = 'nodes'"
	    " AND namespace = '' AND json_extract(body, '$.metadata.annotations.\""
	    ATTACHDETACH_MANAGED_ANNOTATION "\"') = 'true' ORDER BY name",
	/* The pods of node ?1 that want volume ?2 (kube's scheduled pods of a volume). */
	[STMT_PODS] = "SELECT DISTINCT d.namespace, d.pod, p.uid, d.volume"
	    " FROM attachdetach_desired d JOIN cache_pods p"
	    " ON p.namespace = d.namespace AND p.name = d.pod"
	    " WHERE d.node = ?1 AND d.unique_name = ?2 ORDER BY d.namespace, d.pod",
};

struct attachdetach_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *nodes;
	const struct resource *attachments;
	const struct resource *pods;
	/* The volumes whose Multi-Attach error was reported, as "node\nunique name": once
	 * while the volume waits, as kube's desired state of the world flags it. */
	char **multi_reported;
	int nmulti_reported;
};

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

/* A volume the node's status should list. */
struct reported {
	char **names;
	int n;
};

static void
reported_add(struct reported *r, const char *name)
{
	for (int i = 0; i < r->n; i++) {
		if (strcmp(r->names[i], name) == 0)
			return;
	}
	r->names = xrealloc(r->names, (size_t)(r->n + 1) * sizeof *r->names);
	r->names[r->n++] = xstrdup(name);
}

static void
reported_free(struct reported *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->names[i]);
	free(r->names);
}

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
volumes_attached(const cJSON *node, struct reported *r)
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
		same = same && lists(current, r->names[i]);
	if (same && ncsi == r->n)
		return NULL;
	if (r->n > 1)
		qsort(r->names, (size_t)r->n, sizeof *r->names, name_cmp);
	list = cJSON_CreateArray();
	cJSON_ArrayForEach(e, current) {
		if (strncmp(json_string(e, "name"), CSI_PREFIX, strlen(CSI_PREFIX)) != 0)
			cJSON_AddItemToArray(list, cJSON_Duplicate(e, 1));
	}
	for (int i = 0; i < r->n; i++) {
		cJSON *v = cJSON_CreateObject();

		cJSON_AddStringToObject(v, "name", r->names[i]);
		cJSON_AddStringToObject(v, "devicePath", "");
		cJSON_AddItemToArray(list, v);
	}
	return list;
}

/* kube's SuccessfulAttachVolume, on each pod of node that wants the volume called
 * unique_name, now that it is attached and about to be listed in the node's status. */
static int
attached_events(struct attachdetach_state *st, struct sync_result *out, const char *node,
    const char *unique_name, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PODS]);
	int rc;

	sqlite3_bind_text(stmt, 1, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, unique_name, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *pod = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(pod,
		    "metadata");

		cJSON_AddStringToObject(meta, "name",
		    (const char *)sqlite3_column_text(stmt, 1));
		cJSON_AddStringToObject(meta, "namespace",
		    (const char *)sqlite3_column_text(stmt, 0));
		cJSON_AddStringToObject(meta, "uid", (const char *)sqlite3_column_text(stmt, 2));
		/* kube's message ends with the empty suffix after a space */
		sync_result_add_object_event(out, st->pods, pod, "Normal",
		    "SuccessfulAttachVolume", xasprintf("AttachVolume.Attach succeeded for "
		    "volume \"%s\" ", (const char *)sqlite3_column_text(stmt, 3)));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "attachdetach: reading the pods of %s that want %s: %s",
		    node, unique_name, sqlite3_errmsg(sqlite3_db_handle(stmt)));
	return 0;
}

/* Whether the Multi-Attach error of entry ("node\nunique name") was reported; with
 * set, records it as reported. */
static int
multi_reported(struct attachdetach_state *st, const char *entry, int set)
{
	for (int i = 0; i < st->nmulti_reported; i++) {
		if (strcmp(st->multi_reported[i], entry) == 0)
			return 1;
	}
	if (set) {
		st->multi_reported = xrealloc(st->multi_reported,
		    (size_t)(st->nmulti_reported + 1) * sizeof *st->multi_reported);
		st->multi_reported[st->nmulti_reported++] = xstrdup(entry);
	}
	return 0;
}

/* Forgets the reports of node's volumes but those of the n in waiting (unique names):
 * a volume attached at last, or no longer wanted, is reported again if it waits again. */
static void
multi_forget(struct attachdetach_state *st, const char *node, char **waiting, int n)
{
	size_t len = strlen(node);
	int k = 0;

	for (int i = 0; i < st->nmulti_reported; i++) {
		char *e = st->multi_reported[i];
		int keep = strncmp(e, node, len) != 0 || e[len] != '\n';

		for (int j = 0; !keep && j < n; j++)
			keep = strcmp(e + len + 1, waiting[j]) == 0;
		if (keep)
			st->multi_reported[k++] = e;
		else
			free(e);
	}
	st->nmulti_reported = k;
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
		int reported = multi_reported(st, entry, 1);

		free(entry);
		if (!reported)
			return multi_attach_events(st, out, node, volume, unique_name, error);
	}
	return 0;
}

/* Whether the attachment called name is among the n cached ones. */
static int
cached(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i], name) == 0)
			return 1;
	}
	return 0;
}

static struct action *
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
	return a;
}

static int
attachdetach_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct attachdetach_state *st = c->state;
	sqlite3_stmt *stmt;
	struct reported report = { NULL, 0 };
	char **names = NULL, **waiting = NULL;
	int rc, n = 0, ndetach = 0, nwaiting = 0;
	struct {
		char *name, *uid;
	} *detach = NULL;
	cJSON *list;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->nodes;
	if (controller_read_owner(st->stmt[STMT_NODE], key, "attachdetach", out, error) != 0)
		return -1;
	if (out->owner == NULL)
		return 0;		/* gone: its attachments are left (see above) */
	{
		const cJSON *managed = json_annotation(out->owner,
		    ATTACHDETACH_MANAGED_ANNOTATION);

		if (!cJSON_IsString(managed) || strcmp(managed->valuestring, "true") != 0)
			return 0;
	}

	/* The attachments that name the node. */
	stmt = controller_stmt(st->stmt[STMT_ATTACHMENTS]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);
		int known = sqlite3_column_type(stmt, 2) == SQLITE_TEXT;
		int attached = sqlite3_column_int(stmt, 3) == 1;
		int deleting = sqlite3_column_int(stmt, 4) != 0;
		int in_use = sqlite3_column_int(stmt, 5) != 0;
		int desired = sqlite3_column_int(stmt, 6) != 0;

		names = xrealloc(names, (size_t)(n + 1) * sizeof *names);
		names[n++] = xstrdup(name);
		if (!known)
			continue;	/* its volume is not cached */
		if (attached && !deleting && (desired || in_use))
			reported_add(&report, (const char *)sqlite3_column_text(stmt, 2));
		if (!desired && !in_use && !deleting) {
			detach = xrealloc(detach, (size_t)(ndetach + 1) * sizeof *detach);
			detach[ndetach].name = xstrdup(name);
			detach[ndetach].uid = controller_column_strdup(stmt, 1);
			ndetach++;
		}
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		rc = error_set(error, "attachdetach: reading the attachments of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}

	/* Attach what is wanted and has no attachment of kube's name. */
	stmt = controller_stmt(st->stmt[STMT_DESIRED]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *volume = (const char *)sqlite3_column_text(stmt, 0);
		const char *driver = (const char *)sqlite3_column_text(stmt, 1);
		const char *handle = (const char *)sqlite3_column_text(stmt, 2);
		char *name;

		if (volume == NULL || driver == NULL || handle == NULL ||
		    *driver == '\0' || *handle == '\0')
			continue;	/* the apiserver requires both: not a CSI volume */
		name = attachdetach_attachment_name(handle, driver, key);
		if (!cached(names, n, name)) {
			int ok = 1;

			if (sqlite3_column_int(stmt, 4) == 0) {
				const char *unique = (const char *)sqlite3_column_text(stmt, 3);

				if (may_attach(st, out, key, volume, unique, &ok, error) != 0) {
					free(name);
					sqlite3_reset(stmt);
					rc = -1;
					goto done;
				}
				if (!ok) {
					waiting = xrealloc(waiting,
					    (size_t)(nwaiting + 1) * sizeof *waiting);
					waiting[nwaiting++] = xstrdup(unique);
				}
			}
			if (ok)
				attach(st, out, name, volume, driver, key);
		}
		free(name);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		rc = error_set(error, "attachdetach: reading what %s should attach: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}
	rc = 0;
	multi_forget(st, key, waiting, nwaiting);

	/* The node's status, then the detaches. */
	list = volumes_attached(out->owner, &report);
	for (int i = 0; list != NULL && i < report.n; i++) {
		if (!lists(json_path(out->owner, "status.volumesAttached"), report.names[i]) &&
		    (rc = attached_events(st, out, key, report.names[i], error)) != 0) {
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
		a->reason = xstrdup("no pod wants the volume and the node does not use it");
		detach[i].name = detach[i].uid = NULL;
	}
done:
	for (int i = 0; i < ndetach; i++) {
		free(detach[i].name);
		free(detach[i].uid);
	}
	free(detach);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	for (int i = 0; i < nwaiting; i++)
		free(waiting[i]);
	free(waiting);
	reported_free(&report);
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

static void
attachdetach_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	struct attachdetach_state *st = c->state;
	const char *r = ev->resource->name;

	(void)now;
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
	for (int i = 0; i < st->nmulti_reported; i++)
		free(st->multi_reported[i]);
	free(st->multi_reported);
	free(st);
	c->state = NULL;
}

static const char *const attachdetach_resources[] = {
	"nodes", "pods", "persistentvolumeclaims", "persistentvolumes", "csidrivers",
	"volumeattachments", NULL
};

const struct controller_type attachdetach_controller_type = {
	.name = "attachdetach",
	.resources = attachdetach_resources,
	.default_workers = 1,		/* kube's one reconciler loop; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "attachdetach-controller",
	.client_name = "attachdetach-controller",
	.recovery = NULL,
	.init = attachdetach_init,
	.fini = attachdetach_fini,
	.handle_event = attachdetach_handle_event,
	.list_keys = attachdetach_list_keys,
	.sync = attachdetach_sync,
};
