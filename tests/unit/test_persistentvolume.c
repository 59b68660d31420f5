/*
 * test_persistentvolume.c - the PersistentVolume binder (controllers/persistentvolume.c)
 * against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/volume/persistentvolume; the rows are those
 * of its binder_test.go (TestSync: sets 1 to 4 and 13), provision_test.go's external
 * provisioning rows, delete_test.go's and recycle_test.go's rows that apply without an
 * in-tree plugin, then rows of sqlkcm's own. A row gives the volumes and claims cached,
 * the key synced, and the volumes, claims and events expected once the sync's writes
 * are carried out (the test applies each merge patch in order, checking the
 * resourceVersion a write carries against the object's). Where kube's table expects no
 * events it only means it reads none: the rows here list every event the sync records.
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
#include "controllers/persistentvolume.h"
#include "fixtures.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define BBC "pv.kubernetes.io/bound-by-controller"
#define BC "pv.kubernetes.io/bind-completed"
#define SP "volume.kubernetes.io/storage-provisioner"
#define SN "volume.kubernetes.io/selected-node"
#define PB "pv.kubernetes.io/provisioned-by"

/* A volume as kube's newVolume makes it: RWO+ROX, Filesystem, a GCE PD source, claimRef
 * to default/claim (with uid) when claim is set; anns: annotations set to "yes" (PB to
 * the provisioner of the row's prov). */
struct vol {
	const char *name, *cap, *uid, *claim, *phase, *policy, *class;
	const char *anns[3];
	const char *message;	/* expected status.message (NULL: none) */
	const char *source;	/* the volume source member: NULL gcePersistentDisk */
	const char *labels;	/* JSON, or NULL */
	int deleting;
	const char *finalizers;	/* JSON, or NULL */
};

/* A claim as kube's newClaim makes it: RWO+ROX, Filesystem; a Bound one has the status of
 * its request (or cap). class NULL: none (nil); anns set to "yes" (SP to prov). */
struct claim {
	const char *name, *uid, *req, *volume, *phase, *class;
	const char *anns[3];
	const char *cap;	/* the Bound status's capacity, when not req */
	const char *selector;	/* matchLabels JSON, or NULL */
	const char *modes;	/* accessModes JSON, or NULL: RWO+ROX */
	const char *selected_node;
};

#define MAXV 4
#define MAXC 2

struct binder_case {
	const char *name;
	struct vol vols[MAXV], evols[MAXV];
	struct claim claims[MAXC], eclaims[MAXC];
	const char *events;	/* "Type Reason" comma-separated, in order; NULL: none */
	int sync_volume;	/* the key is vols[0]; else claims[0] */
	int failed;		/* the sync fails (kube's returns an error) */
	const char *prov;	/* the provisioner of annotations SP and PB: NULL mock */
	const char *pods;	/* pod JSONs, comma-separated in an array, or NULL */
	int confirm;		/* the sync asks a live read to confirm the claim absent */
	const char *default_class;	/* a StorageClass "default-sc" annotated default */
	int skip_claims_check;	/* the claims are not compared (gone) */
};


#define V(n, c, u, cl, ph, po, cls, ...) { n, c, u, cl, ph, po, cls, { __VA_ARGS__ }, \
	NULL, NULL, NULL, 0, NULL }
#define C(n, u, r, v, ph, cls, ...) { n, u, r, v, ph, cls, { __VA_ARGS__ }, NULL, NULL, \
	NULL, NULL }

/* Rows leave out the members they do not need (zero: none). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct binder_case binder_cases[] = {
	/* [set 1] the user did not ask for a volume */
	{ "1-1 - successful bind",
	  { V("volume1-1", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-1", "1Gi", "uid1-1", "claim1-1", "Bound", "Retain", "", BBC) },
	  { C("claim1-1", "uid1-1", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-1", "uid1-1", "1Gi", "volume1-1", "Bound", NULL, BBC, BC) } },
	{ "1-2 - noop",
	  { V("volume1-2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim1-2", "uid1-2", "10Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-2", "uid1-2", "10Gi", "", "Pending", NULL, NULL) },
	  "Normal FailedBinding" },
	{ "1-3 - reset to Pending",
	  { V("volume1-3", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-3", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim1-3", "uid1-3", "10Gi", "", "Bound", NULL, NULL) },
	  { C("claim1-3", "uid1-3", "10Gi", "", "Pending", NULL, NULL) },
	  "Normal FailedBinding" },
	{ "1-4 - smallest volume",
	  { V("volume1-4_1", "10Gi", "", "", "Available", "Retain", "", NULL),
	    V("volume1-4_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-4_1", "10Gi", "", "", "Available", "Retain", "", NULL),
	    V("volume1-4_2", "1Gi", "uid1-4", "claim1-4", "Bound", "Retain", "", BBC) },
	  { C("claim1-4", "uid1-4", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-4", "uid1-4", "1Gi", "volume1-4_2", "Bound", NULL, BBC, BC) } },
	{ "1-5 - prebound volume by name - success",
	  { V("volume1-5_1", "10Gi", "", "claim1-5", "Available", "Retain", "", NULL),
	    V("volume1-5_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-5_1", "10Gi", "uid1-5", "claim1-5", "Bound", "Retain", "", NULL),
	    V("volume1-5_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim1-5", "uid1-5", "1Gi", "", "Pending", NULL, NULL) },
	  { { "claim1-5", "uid1-5", "1Gi", "volume1-5_1", "Bound", NULL, { BBC, BC }, "10Gi",
	      NULL, NULL, NULL } } },
	{ "1-6 - prebound volume by UID - success",
	  { V("volume1-6_1", "10Gi", "uid1-6", "claim1-6", "Available", "Retain", "", NULL),
	    V("volume1-6_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-6_1", "10Gi", "uid1-6", "claim1-6", "Bound", "Retain", "", NULL),
	    V("volume1-6_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim1-6", "uid1-6", "1Gi", "", "Pending", NULL, NULL) },
	  { { "claim1-6", "uid1-6", "1Gi", "volume1-6_1", "Bound", NULL, { BBC, BC }, "10Gi",
	      NULL, NULL, NULL } } },
	{ "1-7 - prebound volume to different claim",
	  { V("volume1-7", "10Gi", "uid1-777", "claim1-7", "Available", "Retain", "", NULL) },
	  { V("volume1-7", "10Gi", "uid1-777", "claim1-7", "Available", "Retain", "", NULL) },
	  { C("claim1-7", "uid1-7", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-7", "uid1-7", "1Gi", "", "Pending", NULL, NULL) },
	  "Normal FailedBinding" },
	{ "1-8 - complete bind after crash - PV bound",
	  { V("volume1-8", "1Gi", "uid1-8", "claim1-8", "Available", "Retain", "", BBC) },
	  { V("volume1-8", "1Gi", "uid1-8", "claim1-8", "Bound", "Retain", "", BBC) },
	  { C("claim1-8", "uid1-8", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-8", "uid1-8", "1Gi", "volume1-8", "Bound", NULL, BBC, BC) } },
	{ "1-9 - complete bind after crash - PV status saved",
	  { V("volume1-9", "1Gi", "uid1-9", "claim1-9", "Bound", "Retain", "", BBC) },
	  { V("volume1-9", "1Gi", "uid1-9", "claim1-9", "Bound", "Retain", "", BBC) },
	  { C("claim1-9", "uid1-9", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-9", "uid1-9", "1Gi", "volume1-9", "Bound", NULL, BBC, BC) } },
	{ "1-10 - complete bind after crash - PVC bound",
	  { V("volume1-10", "1Gi", "uid1-10", "claim1-10", "Bound", "Retain", "", BBC) },
	  { V("volume1-10", "1Gi", "uid1-10", "claim1-10", "Bound", "Retain", "", BBC) },
	  { C("claim1-10", "uid1-10", "1Gi", "volume1-10", "Pending", NULL, BBC, BC) },
	  { C("claim1-10", "uid1-10", "1Gi", "volume1-10", "Bound", NULL, BBC, BC) } },
	{ "1-11 - bind when selector matches",
	  { { "volume1-1", "1Gi", "", "", "Available", "Retain", "", { NULL }, NULL, NULL,
	      "{\"foo\":\"true\",\"bar\":\"false\"}", 0 } },
	  { V("volume1-1", "1Gi", "uid1-1", "claim1-1", "Bound", "Retain", "", BBC) },
	  { { "claim1-1", "uid1-1", "1Gi", "", "Pending", NULL, { NULL }, NULL,
	      "{\"foo\":\"true\",\"bar\":\"false\"}", NULL, NULL } },
	  { C("claim1-1", "uid1-1", "1Gi", "volume1-1", "Bound", NULL, BBC, BC) } },
	{ "1-12 - do not bind when selector does not match",
	  { V("volume1-1", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-1", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { { "claim1-1", "uid1-1", "1Gi", "", "Pending", NULL, { NULL }, NULL,
	      "{\"foo\":\"true\",\"bar\":\"false\"}", NULL, NULL } },
	  { C("claim1-1", "uid1-1", "1Gi", "", "Pending", NULL, NULL) },
	  "Normal FailedBinding" },
	{ "1-13 - delayed binding",
	  { V("volume1-1", "1Gi", "", "", "Available", "Retain", "wait", NULL) },
	  { V("volume1-1", "1Gi", "", "", "Available", "Retain", "wait", NULL) },
	  { C("claim1-1", "uid1-1", "1Gi", "", "Pending", "wait", NULL) },
	  { C("claim1-1", "uid1-1", "1Gi", "", "Pending", "wait", NULL) },
	  "Normal WaitForFirstConsumer" },
	{ "1-14 - successful prebound PV",
	  { V("volume1-1", "1Gi", "", "claim1-1", "Available", "Retain", "wait", NULL) },
	  { V("volume1-1", "1Gi", "uid1-1", "claim1-1", "Bound", "Retain", "wait", NULL) },
	  { C("claim1-1", "uid1-1", "1Gi", "", "Pending", "wait", NULL) },
	  { C("claim1-1", "uid1-1", "1Gi", "volume1-1", "Bound", "wait", BBC, BC) } },
	{ "1-15 - successful prebound PVC",
	  { V("volume1-15_1", "10Gi", "", "", "Available", "Retain", "", NULL),
	    V("volume1-15_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-15_1", "10Gi", "uid1-15", "claim1-15", "Bound", "Retain", "", BBC),
	    V("volume1-15_2", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim1-15", "uid1-15", "1Gi", "volume1-15_1", "Pending", NULL, NULL) },
	  { { "claim1-15", "uid1-15", "1Gi", "volume1-15_1", "Bound", NULL, { BC }, "10Gi",
	      NULL, NULL, NULL } } },
	/* kube's table reads no event here; its rule records VolumeMismatch. */
	{ "1-16 - prebound PVC, different access mode",
	  { V("volume1-16", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume1-16", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { { "claim1-16", "uid1-16", "1Gi", "volume1-16", "Pending", NULL, { NULL }, NULL,
	      NULL, "[\"ReadWriteMany\"]", NULL } },
	  { C("claim1-16", "uid1-16", "1Gi", "volume1-16", "Pending", NULL, NULL) },
	  "Warning VolumeMismatch" },
	{ "1-17 - skip non-available PV if it's not pre-bind",
	  { V("volume1-17-pending", "1Gi", "", "", "Pending", "Retain", "", NULL),
	    V("volume1-17-failed", "1Gi", "", "", "Failed", "Retain", "", NULL),
	    V("volume1-17-released", "1Gi", "", "", "Released", "Retain", "", NULL),
	    V("volume1-17-empty", "1Gi", "", "", "", "Retain", "", NULL) },
	  { V("volume1-17-pending", "1Gi", "", "", "Pending", "Retain", "", NULL),
	    V("volume1-17-failed", "1Gi", "", "", "Failed", "Retain", "", NULL),
	    V("volume1-17-released", "1Gi", "", "", "Released", "Retain", "", NULL),
	    V("volume1-17-empty", "1Gi", "", "", "", "Retain", "", NULL) },
	  { C("claim1-17", "uid1-17", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim1-17", "uid1-17", "1Gi", "", "Pending", NULL, NULL) },
	  "Normal FailedBinding" },
	{ "1-18 - successful pre-bound PV to PVC provisioning",
	  { V("volume1-18", "1Gi", "uid1-18", "claim1-18", "Available", "Retain", "wait", NULL) },
	  { V("volume1-18", "1Gi", "uid1-18", "claim1-18", "Bound", "Retain", "wait", NULL) },
	  { { "claim1-18", "uid1-18", "1Gi", "", "Pending", "wait", { NULL }, NULL, NULL, NULL,
	      "node1" } },
	  { { "claim1-18", "uid1-18", "1Gi", "volume1-18", "Bound", "wait", { BBC, BC }, NULL,
	      NULL, NULL, "node1" } } },

	/* [set 2] the user asked for a volume */
	{ "2-1 - claim prebound to non-existing volume - noop",
	  { { NULL } }, { { NULL } },
	  { C("claim2-1", "uid2-1", "10Gi", "volume2-1", "Pending", NULL, NULL) },
	  { C("claim2-1", "uid2-1", "10Gi", "volume2-1", "Pending", NULL, NULL) } },
	{ "2-2 - claim prebound to non-existing volume - reset status",
	  { { NULL } }, { { NULL } },
	  { C("claim2-2", "uid2-2", "10Gi", "volume2-2", "Bound", NULL, NULL) },
	  { C("claim2-2", "uid2-2", "10Gi", "volume2-2", "Pending", NULL, NULL) } },
	{ "2-3 - claim prebound to unbound volume",
	  { V("volume2-3", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume2-3", "1Gi", "uid2-3", "claim2-3", "Bound", "Retain", "", BBC) },
	  { C("claim2-3", "uid2-3", "1Gi", "volume2-3", "Pending", NULL, NULL) },
	  { C("claim2-3", "uid2-3", "1Gi", "volume2-3", "Bound", NULL, BC) } },
	{ "2-4 - claim prebound to prebound volume by name",
	  { V("volume2-4", "1Gi", "", "claim2-4", "Available", "Retain", "", NULL) },
	  { V("volume2-4", "1Gi", "uid2-4", "claim2-4", "Bound", "Retain", "", NULL) },
	  { C("claim2-4", "uid2-4", "1Gi", "volume2-4", "Pending", NULL, NULL) },
	  { C("claim2-4", "uid2-4", "1Gi", "volume2-4", "Bound", NULL, BC) } },
	{ "2-5 - claim prebound to prebound volume by UID",
	  { V("volume2-5", "1Gi", "uid2-5", "claim2-5", "Available", "Retain", "", NULL) },
	  { V("volume2-5", "1Gi", "uid2-5", "claim2-5", "Bound", "Retain", "", NULL) },
	  { C("claim2-5", "uid2-5", "1Gi", "volume2-5", "Pending", NULL, NULL) },
	  { C("claim2-5", "uid2-5", "1Gi", "volume2-5", "Bound", NULL, BC) } },
	{ "2-6 - claim prebound to already bound volume",
	  { V("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", "Bound", "Retain", "", NULL) },
	  { V("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", "Bound", "Retain", "", NULL) },
	  { C("claim2-6", "uid2-6", "1Gi", "volume2-6", "Bound", NULL, NULL) },
	  { C("claim2-6", "uid2-6", "1Gi", "volume2-6", "Pending", NULL, NULL) },
	  "Warning FailedBinding" },
	{ "2-7 - claim bound by controller to already bound volume",
	  { V("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", "Bound", "Retain", "", NULL) },
	  { V("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", "Bound", "Retain", "", NULL) },
	  { C("claim2-7", "uid2-7", "1Gi", "volume2-7", "Bound", NULL, BBC) },
	  { C("claim2-7", "uid2-7", "1Gi", "volume2-7", "Bound", NULL, BBC) },
	  "Warning FailedBinding", 0, 1 },
	{ "2-8 - claim prebound to unbound volume that does not match the selector",
	  { V("volume2-8", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume2-8", "1Gi", "uid2-8", "claim2-8", "Bound", "Retain", "", BBC) },
	  { { "claim2-8", "uid2-8", "1Gi", "volume2-8", "Pending", NULL, { NULL }, NULL,
	      "{\"foo\":\"true\",\"bar\":\"false\"}", NULL, NULL } },
	  { C("claim2-8", "uid2-8", "1Gi", "volume2-8", "Bound", NULL, BC) } },
	{ "2-9 - claim prebound to unbound volume that size is smaller than requested",
	  { V("volume2-9", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume2-9", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim2-9", "uid2-9", "2Gi", "volume2-9", "Bound", NULL, NULL) },
	  { C("claim2-9", "uid2-9", "2Gi", "volume2-9", "Pending", NULL, NULL) },
	  "Warning VolumeMismatch" },
	{ "2-10 - claim prebound to unbound volume that class is different",
	  { V("volume2-10", "1Gi", "1", "", "Available", "Retain", "gold", NULL) },
	  { V("volume2-10", "1Gi", "", "", "Available", "Retain", "gold", NULL) },
	  { C("claim2-10", "uid2-10", "1Gi", "volume2-10", "Bound", NULL, NULL) },
	  { C("claim2-10", "uid2-10", "1Gi", "volume2-10", "Pending", NULL, NULL) },
	  "Warning VolumeMismatch" },

	/* [set 3] syncBoundClaim */
	{ "3-1 - bound claim with missing VolumeName",
	  { { NULL } }, { { NULL } },
	  { C("claim3-1", "uid3-1", "10Gi", "", "Bound", NULL, BBC, BC) },
	  { C("claim3-1", "uid3-1", "10Gi", "", "Lost", NULL, BBC, BC) },
	  "Warning ClaimLost" },
	{ "3-2 - bound claim with missing volume",
	  { { NULL } }, { { NULL } },
	  { C("claim3-2", "uid3-2", "10Gi", "volume3-2", "Bound", NULL, BBC, BC) },
	  { C("claim3-2", "uid3-2", "10Gi", "volume3-2", "Lost", NULL, BBC, BC) },
	  "Warning ClaimLost" },
	{ "3-3 - bound claim with unbound volume",
	  { V("volume3-3", "10Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume3-3", "10Gi", "uid3-3", "claim3-3", "Bound", "Retain", "", BBC) },
	  { C("claim3-3", "uid3-3", "10Gi", "volume3-3", "Pending", NULL, BBC, BC) },
	  { C("claim3-3", "uid3-3", "10Gi", "volume3-3", "Bound", NULL, BBC, BC) } },
	{ "3-4 - bound claim with prebound volume",
	  { V("volume3-4", "10Gi", "claim3-4-x", "claim3-4", "Available", "Retain", "", NULL) },
	  { V("volume3-4", "10Gi", "claim3-4-x", "claim3-4", "Available", "Retain", "", NULL) },
	  { C("claim3-4", "uid3-4", "10Gi", "volume3-4", "Pending", NULL, BBC, BC) },
	  { C("claim3-4", "uid3-4", "10Gi", "volume3-4", "Lost", NULL, BBC, BC) },
	  "Warning ClaimMisbound" },
	{ "3-5 - bound claim with bound volume",
	  { V("volume3-5", "10Gi", "uid3-5", "claim3-5", "Available", "Retain", "", NULL) },
	  { V("volume3-5", "10Gi", "uid3-5", "claim3-5", "Bound", "Retain", "", NULL) },
	  { C("claim3-5", "uid3-5", "10Gi", "volume3-5", "Pending", NULL, BC) },
	  { C("claim3-5", "uid3-5", "10Gi", "volume3-5", "Bound", NULL, BC) } },
	{ "3-6 - bound claim with bound volume to another claim",
	  { V("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", "Available", "Retain", "", NULL) },
	  { V("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", "Available", "Retain", "", NULL) },
	  { C("claim3-6", "uid3-6", "10Gi", "volume3-6", "Pending", NULL, BC) },
	  { C("claim3-6", "uid3-6", "10Gi", "volume3-6", "Lost", NULL, BC) },
	  "Warning ClaimMisbound" },
	{ "3-7 - bound claim with unbound volume where selector doesn't match",
	  { V("volume3-3", "10Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume3-3", "10Gi", "uid3-3", "claim3-3", "Bound", "Retain", "", BBC) },
	  { { "claim3-3", "uid3-3", "10Gi", "volume3-3", "Pending", NULL, { BBC, BC }, NULL,
	      "{\"foo\":\"true\",\"bar\":\"false\"}", NULL, NULL } },
	  { C("claim3-3", "uid3-3", "10Gi", "volume3-3", "Bound", NULL, BBC, BC) } },

	/* [set 4] syncVolume */
	{ "4-1 - pending volume",
	  { V("volume4-1", "10Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume4-1", "10Gi", "", "", "Available", "Retain", "", NULL) },
	  { { NULL } }, { { NULL } }, NULL, 1 },
	{ "4-2 - pending prebound volume",
	  { V("volume4-2", "10Gi", "", "claim4-2", "Available", "Retain", "", NULL) },
	  { V("volume4-2", "10Gi", "", "claim4-2", "Available", "Retain", "", NULL) },
	  { { NULL } }, { { NULL } }, NULL, 1 },
	{ "4-3 - bound volume with missing claim",
	  { V("volume4-3", "10Gi", "uid4-3", "claim4-3", "Bound", "Retain", "", NULL) },
	  { V("volume4-3", "10Gi", "uid4-3", "claim4-3", "Released", "Retain", "", NULL) },
	  { { NULL } }, { { NULL } }, NULL, 1, .confirm = 1 },
	{ "4-4 - volume bound to claim with different UID",
	  { V("volume4-4", "10Gi", "uid4-4", "claim4-4", "Bound", "Retain", "", NULL) },
	  { V("volume4-4", "10Gi", "uid4-4", "claim4-4", "Released", "Retain", "", NULL) },
	  { C("claim4-4", "uid4-4-x", "10Gi", "volume4-4", "Bound", NULL, BC) },
	  { C("claim4-4", "uid4-4-x", "10Gi", "volume4-4", "Bound", NULL, BC) },
	  NULL, 1, .confirm = 1 },
	{ "4-5 - volume bound by controller to unbound claim",
	  { V("volume4-5", "10Gi", "uid4-5", "claim4-5", "Bound", "Retain", "", BBC) },
	  { V("volume4-5", "10Gi", "uid4-5", "claim4-5", "Bound", "Retain", "", BBC) },
	  { C("claim4-5", "uid4-5", "10Gi", "", "Pending", NULL, NULL) },
	  { C("claim4-5", "uid4-5", "10Gi", "", "Pending", NULL, NULL) }, NULL, 1 },
	{ "4-5 - volume bound by user to bound claim",
	  { V("volume4-5", "10Gi", "uid4-5", "claim4-5", "Bound", "Retain", "", NULL) },
	  { V("volume4-5", "10Gi", "uid4-5", "claim4-5", "Bound", "Retain", "", NULL) },
	  { C("claim4-5", "uid4-5", "10Gi", "", "Pending", NULL, NULL) },
	  { C("claim4-5", "uid4-5", "10Gi", "", "Pending", NULL, NULL) }, NULL, 1 },
	{ "4-6 - volume bound by to bound claim",
	  { V("volume4-6", "10Gi", "uid4-6", "claim4-6", "Available", "Retain", "", NULL) },
	  { V("volume4-6", "10Gi", "uid4-6", "claim4-6", "Bound", "Retain", "", NULL) },
	  { C("claim4-6", "uid4-6", "10Gi", "volume4-6", "Bound", NULL, NULL) },
	  { C("claim4-6", "uid4-6", "10Gi", "volume4-6", "Bound", NULL, NULL) }, NULL, 1 },
	{ "4-7 - volume bound by controller to claim bound somewhere else",
	  { V("volume4-7", "10Gi", "uid4-7", "claim4-7", "Bound", "Retain", "", BBC) },
	  { V("volume4-7", "10Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim4-7", "uid4-7", "10Gi", "volume4-7-x", "Bound", NULL, NULL) },
	  { C("claim4-7", "uid4-7", "10Gi", "volume4-7-x", "Bound", NULL, NULL) }, NULL, 1 },
	{ "4-8 - volume bound by user to claim bound somewhere else",
	  { V("volume4-8", "10Gi", "uid4-8", "claim4-8", "Bound", "Retain", "", NULL) },
	  { V("volume4-8", "10Gi", "", "claim4-8", "Available", "Retain", "", NULL) },
	  { C("claim4-8", "uid4-8", "10Gi", "volume4-8-x", "Bound", NULL, NULL) },
	  { C("claim4-8", "uid4-8", "10Gi", "volume4-8-x", "Bound", NULL, NULL) }, NULL, 1 },
	{ "4-9 - volume bound to bound claim, with Delete",
	  { V("volume4-9", "10Gi", "uid4-9", "claim4-9", "Available", "Delete", "", NULL) },
	  { V("volume4-9", "10Gi", "uid4-9", "claim4-9", "Bound", "Delete", "", NULL) },
	  { C("claim4-9", "uid4-9", "10Gi", "volume4-9", "Bound", NULL, NULL) },
	  { C("claim4-9", "uid4-9", "10Gi", "volume4-9", "Bound", NULL, NULL) }, NULL, 1 },
	{ "4-10 - volume bound to missing claim",
	  { V("volume4-10", "10Gi", "uid4-10", "claim4-10", "Available", "Delete", "", NULL) },
	  { { "volume4-10", "10Gi", "uid4-10", "claim4-10", "Failed", "Delete", "", { NULL },
	      "error getting deleter volume plugin for volume \"volume4-10\": no volume plugin "
	      "matched", NULL, NULL, 0 } },
	  { { NULL } }, { { NULL } }, "Warning VolumeFailedDelete", 1, .confirm = 1 },

	/* [set 13] classes */
	{ "13-1 - binding to class",
	  { V("volume13-1-1", "1Gi", "", "", "Available", "Retain", "", NULL),
	    V("volume13-1-2", "10Gi", "", "", "Available", "Retain", "gold", NULL) },
	  { V("volume13-1-1", "1Gi", "", "", "Available", "Retain", "", NULL),
	    V("volume13-1-2", "10Gi", "uid13-1", "claim13-1", "Bound", "Retain", "gold", BBC) },
	  { C("claim13-1", "uid13-1", "1Gi", "", "Pending", "gold", NULL) },
	  { { "claim13-1", "uid13-1", "1Gi", "volume13-1-2", "Bound", "gold", { BBC, BC },
	      "10Gi", NULL, NULL, NULL } } },
	{ "13-2 - binding without a class",
	  { V("volume13-2-1", "1Gi", "", "", "Available", "Retain", "gold", NULL),
	    V("volume13-2-2", "10Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume13-2-1", "1Gi", "", "", "Available", "Retain", "gold", NULL),
	    V("volume13-2-2", "10Gi", "uid13-2", "claim13-2", "Bound", "Retain", "", BBC) },
	  { C("claim13-2", "uid13-2", "1Gi", "", "Pending", NULL, NULL) },
	  { { "claim13-2", "uid13-2", "1Gi", "volume13-2-2", "Bound", NULL, { BBC, BC },
	      "10Gi", NULL, NULL, NULL } } },
	{ "13-3 - binding to specific a class",
	  { V("volume13-3-1", "1Gi", "", "", "Available", "Retain", "silver", NULL),
	    V("volume13-3-2", "10Gi", "", "", "Available", "Retain", "gold", NULL) },
	  { V("volume13-3-1", "1Gi", "", "", "Available", "Retain", "silver", NULL),
	    V("volume13-3-2", "10Gi", "uid13-3", "claim13-3", "Bound", "Retain", "gold", BBC) },
	  { C("claim13-3", "uid13-3", "1Gi", "", "Pending", "gold", NULL) },
	  { { "claim13-3", "uid13-3", "1Gi", "volume13-3-2", "Bound", "gold", { BBC, BC },
	      "10Gi", NULL, NULL, NULL } } },
	{ "13-4 - empty class",
	  { V("volume13-4", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume13-4", "1Gi", "uid13-4", "claim13-4", "Bound", "Retain", "", BBC) },
	  { C("claim13-4", "uid13-4", "1Gi", "", "Pending", "", NULL) },
	  { C("claim13-4", "uid13-4", "1Gi", "volume13-4", "Bound", "", BBC, BC) } },
	{ "13-5 - nil class",
	  { V("volume13-5", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume13-5", "1Gi", "uid13-5", "claim13-5", "Bound", "Retain", "", BBC) },
	  { C("claim13-5", "uid13-5", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim13-5", "uid13-5", "1Gi", "volume13-5", "Bound", NULL, BBC, BC) } },

	/* provision_test.go: external provisioning (no in-tree plugin). */
	{ "11-17 - external provisioner",
	  { { NULL } }, { { NULL } },
	  { C("claim11-17", "uid11-17", "1Gi", "", "Pending", "external", NULL) },
	  { C("claim11-17", "uid11-17", "1Gi", "", "Pending", "external", SP,
	      "volume.beta.kubernetes.io/storage-provisioner") },
	  "Normal ExternalProvisioning", .prov = "vendor.com/my-volume" },
	{ "11-17b - external provisioner, annotated already: the event again",
	  { { NULL } }, { { NULL } },
	  { C("claim11-17", "uid11-17", "1Gi", "", "Pending", "external", SP) },
	  { C("claim11-17", "uid11-17", "1Gi", "", "Pending", "external", SP) },
	  "Normal ExternalProvisioning", .prov = "vendor.com/my-volume" },
	{ "11-9 - provisioning with unknown class",
	  { { NULL } }, { { NULL } },
	  { C("claim11-9", "uid11-9", "1Gi", "", "Pending", "silver-unknown", NULL) },
	  { C("claim11-9", "uid11-9", "1Gi", "", "Pending", "silver-unknown", NULL) },
	  "Warning ProvisioningFailed" },
	{ "11-18 - unknown in-tree provisioner",
	  { { NULL } }, { { NULL } },
	  { C("claim11-18", "uid11-18", "1Gi", "", "Pending", "intree-unknown", NULL) },
	  { C("claim11-18", "uid11-18", "1Gi", "", "Pending", "intree-unknown", NULL) },
	  "Warning ProvisioningFailed" },
	{ "11-24 - a migrated in-tree provisioner is handed to its CSI driver",
	  { { NULL } }, { { NULL } },
	  { C("claim11-24", "uid11-24", "1Gi", "", "Pending", "migrated", NULL) },
	  { C("claim11-24", "uid11-24", "1Gi", "", "Pending", "migrated", SP,
	      "volume.beta.kubernetes.io/storage-provisioner", "pv.kubernetes.io/migrated-to") },
	  "Normal ExternalProvisioning", .prov = "pd.csi.storage.gke.io" },
	{ "11-20 - delayed binding waits for its pod",
	  { { NULL } }, { { NULL } },
	  { C("claim11-20", "uid11-20", "1Gi", "", "Pending", "wait", NULL) },
	  { C("claim11-20", "uid11-20", "1Gi", "", "Pending", "wait", NULL) },
	  "Normal WaitForPodScheduled",
	  .pods = "{\"metadata\":{\"name\":\"pod1\",\"namespace\":\"default\",\"uid\":\"p1\","
	      "\"resourceVersion\":\"1\"},\"spec\":{\"volumes\":[{\"name\":\"v\","
	      "\"persistentVolumeClaim\":{\"claimName\":\"claim11-20\"}}]},"
	      "\"status\":{\"phase\":\"Pending\"}}" },
	{ "11-21 - delayed binding with a selected node is provisioned",
	  { { NULL } }, { { NULL } },
	  { { "claim11-21", "uid11-21", "1Gi", "", "Pending", "wait", { NULL }, NULL, NULL, NULL,
	      "node1" } },
	  { { "claim11-21", "uid11-21", "1Gi", "", "Pending", "wait",
	      { SP, "volume.beta.kubernetes.io/storage-provisioner" }, NULL, NULL, NULL,
	      "node1" } },
	  "Normal ExternalProvisioning", .prov = "vendor.com/wait" },

	/* delete_test.go: external volumes are the provisioner's; in-tree ones fail. */
	{ "8-10 - external provisioner: the volume is left to it",
	  { { "volume8-10", "1Gi", "uid8-10", "claim8-10", "Bound", "Delete", "", { PB }, NULL,
	      NULL, NULL, 0 } },
	  { { "volume8-10", "1Gi", "uid8-10", "claim8-10", "Released", "Delete", "", { PB },
	      NULL, NULL, NULL, 0 } },
	  { { NULL } }, { { NULL } }, NULL, 1, .prov = "vendor.com/my-volume", .confirm = 1 },
	{ "8-12 - csi volume without annotation is left to its driver",
	  { { "volume8-12", "1Gi", "uid8-12", "claim8-12", "Released", "Delete", "", { NULL },
	      NULL, "\"csi\":{\"driver\":\"d\",\"volumeHandle\":\"h\"}", NULL, 0 } },
	  { { "volume8-12", "1Gi", "uid8-12", "claim8-12", "Released", "Delete", "", { NULL },
	      NULL, NULL, NULL, 0 } },
	  { { NULL } }, { { NULL } }, NULL, 1 },
	/* Its in-tree finalizer given (the migration step's first sync adds it). */
	{ "8-1 - in-tree volume: no deleter",
	  { { "volume8-1", "1Gi", "uid8-1", "claim8-1", "Released", "Delete", "", { PB }, NULL,
	      NULL, NULL, 0, "[\"kubernetes.io/pv-controller\"]" } },
	  { { "volume8-1", "1Gi", "uid8-1", "claim8-1", "Failed", "Delete", "", { PB },
	      "no volume plugin matched name: kubernetes.io/mock-plugin", NULL, NULL, 0 } },
	  { { NULL } }, { { NULL } }, "Warning VolumeFailedDelete", 1 },
	{ "8-11 - bound to a claim bound elsewhere, provisioned, Delete: released",
	  { { "volume8-11", "1Gi", "uid8-11", "claim8-11", "Bound", "Delete", "", { PB }, NULL,
	      NULL, NULL, 0 } },
	  { { "volume8-11", "1Gi", "uid8-11", "claim8-11", "Released", "Delete", "", { PB },
	      NULL, NULL, NULL, 0 } },
	  { C("claim8-11", "uid8-11", "1Gi", "volume8-12-6", "Bound", NULL, NULL) },
	  { C("claim8-11", "uid8-11", "1Gi", "volume8-12-6", "Bound", NULL, NULL) },
	  NULL, 1, .prov = "vendor.com/my-volume" },

	/* recycle_test.go: no recycler for the volume. */
	{ "6-3 - recycle: no plugin",
	  { V("volume6-8", "1Gi", "uid6-8", "claim6-8", "Bound", "Recycle", "", NULL) },
	  { { "volume6-8", "1Gi", "uid6-8", "claim6-8", "Failed", "Recycle", "", { NULL },
	      "No recycler plugin found for the volume!", NULL, NULL, 0 } },
	  { { NULL } }, { { NULL } }, "Warning VolumeFailedRecycle", 1, .confirm = 1 },
	{ "6-11 - recycle: volume used by a pod while its claim is gone",
	  { V("volume6-11", "1Gi", "uid6-11", "claim6-11", "Released", "Recycle", "", NULL) },
	  { V("volume6-11", "1Gi", "uid6-11", "claim6-11", "Released", "Recycle", "", NULL) },
	  { { NULL } }, { { NULL } }, "Normal VolumeFailedRecycle", 1,
	  .pods = "{\"metadata\":{\"name\":\"runningPod\",\"namespace\":\"default\","
	      "\"uid\":\"p2\",\"resourceVersion\":\"1\"},\"spec\":{\"nodeName\":\"n\","
	      "\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":"
	      "\"claim6-11\"}}]},\"status\":{\"phase\":\"Running\"}}" },
	{ "unknown reclaim policy",
	  { V("volume9-1", "1Gi", "uid9-1", "claim9-1", "Released", "Keep", "", NULL) },
	  { { "volume9-1", "1Gi", "uid9-1", "claim9-1", "Failed", "Keep", "", { NULL },
	      "Volume has unrecognized PersistentVolumeReclaimPolicy", NULL, NULL, 0 } },
	  { { NULL } }, { { NULL } }, "Warning VolumeUnknownReclaimPolicy", 1 },

	/* sqlkcm's: the default class, retroactively (kube's TestRetroactiveStorageClass). */
	{ "default class given to a claim without one",
	  { { NULL } }, { { NULL } },
	  { C("claim-d", "uid-d", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim-d", "uid-d", "1Gi", "", "Pending", "default-sc", NULL) },
	  NULL, .default_class = "default-sc" },
	{ "default class not given to a claim with an empty class",
	  { { NULL } }, { { NULL } },
	  { C("claim-e", "uid-e", "1Gi", "", "Pending", "", NULL) },
	  { C("claim-e", "uid-e", "1Gi", "", "Pending", "", NULL) },
	  "Normal FailedBinding", .default_class = "default-sc" },
	{ "a matching volume wins over the default class",
	  { V("volume-f", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { V("volume-f", "1Gi", "uid-f", "claim-f", "Bound", "Retain", "", BBC) },
	  { C("claim-f", "uid-f", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim-f", "uid-f", "1Gi", "volume-f", "Bound", NULL, BBC, BC) },
	  NULL, .default_class = "default-sc" },
	{ "a volume being deleted is not bound",
	  { { "volume-g", "1Gi", "", "", "Available", "Retain", "", { NULL }, NULL, NULL, NULL,
	      1 } },
	  { V("volume-g", "1Gi", "", "", "Available", "Retain", "", NULL) },
	  { C("claim-g", "uid-g", "1Gi", "", "Pending", NULL, NULL) },
	  { C("claim-g", "uid-g", "1Gi", "", "Pending", NULL, NULL) },
	  "Normal FailedBinding" },
	{ "decimal and binary sizes compare exactly: 1G is less than 1Gi",
	  { V("volume-h1", "1G", "", "", "Available", "Retain", "", NULL),
	    V("volume-h2", "1100M", "", "", "Available", "Retain", "", NULL) },
	  { V("volume-h1", "1G", "", "", "Available", "Retain", "", NULL),
	    V("volume-h2", "1100M", "uid-h", "claim-h", "Bound", "Retain", "", BBC) },
	  { C("claim-h", "uid-h", "1Gi", "", "Pending", NULL, NULL) },
	  { { "claim-h", "uid-h", "1Gi", "volume-h2", "Bound", NULL, { BBC, BC }, "1100M",
	      NULL, NULL, NULL } } },
};

#pragma GCC diagnostic pop

/* --- objects -------------------------------------------------------------------------- */

static cJSON *
vol_new(const struct vol *v, const char *prov)
{
	cJSON *o = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(o, "metadata");
	cJSON *spec = cJSON_AddObjectToObject(o, "spec"), *modes, *src;
	char *text;

	cJSON_AddStringToObject(meta, "name", v->name);
	text = xasprintf("pv-%s", v->name);
	cJSON_AddStringToObject(meta, "uid", text);
	free(text);
	cJSON_AddStringToObject(meta, "resourceVersion", "1");
	if (v->deleting)
		cJSON_AddStringToObject(meta, "deletionTimestamp", "2026-01-01T00:00:00Z");
	if (v->labels != NULL)
		cJSON_AddItemToObject(meta, "labels", fixture_parse(v->labels));
	if (v->finalizers != NULL)
		cJSON_AddItemToObject(meta, "finalizers", fixture_parse(v->finalizers));
	for (int i = 0; i < 3 && v->anns[i] != NULL; i++)
		cJSON_AddStringToObject(json_child_object(meta, "annotations"), v->anns[i],
		    strcmp(v->anns[i], PB) == 0 ? (prov != NULL ? prov :
		    "kubernetes.io/mock-plugin") : "yes");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "capacity"), "storage", v->cap);
	text = xasprintf("{%s}", v->source != NULL ? v->source :
	    "\"gcePersistentDisk\":{\"pdName\":\"\"}");
	src = fixture_parse(text);
	free(text);
	while (src->child != NULL) {
		cJSON *item = cJSON_DetachItemViaPointer(src, src->child);

		cJSON_AddItemToObject(spec, item->string, item);
	}
	cJSON_Delete(src);
	modes = cJSON_AddArrayToObject(spec, "accessModes");
	cJSON_AddItemToArray(modes, cJSON_CreateString("ReadWriteOnce"));
	cJSON_AddItemToArray(modes, cJSON_CreateString("ReadOnlyMany"));
	cJSON_AddStringToObject(spec, "persistentVolumeReclaimPolicy", v->policy);
	cJSON_AddStringToObject(spec, "storageClassName", v->class);
	cJSON_AddStringToObject(spec, "volumeMode", "Filesystem");
	if (*v->claim != '\0') {
		cJSON *ref = cJSON_AddObjectToObject(spec, "claimRef");

		cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
		cJSON_AddStringToObject(ref, "apiVersion", "v1");
		if (*v->uid != '\0')
			cJSON_AddStringToObject(ref, "uid", v->uid);
		cJSON_AddStringToObject(ref, "namespace", "default");
		cJSON_AddStringToObject(ref, "name", v->claim);
	}
	if (*v->phase != '\0')
		cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "status"), "phase", v->phase);
	return o;
}

static cJSON *
claim_new(const struct claim *c, const char *prov)
{
	cJSON *o = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(o, "metadata");
	cJSON *spec = cJSON_AddObjectToObject(o, "spec"), *modes;

	cJSON_AddStringToObject(meta, "name", c->name);
	cJSON_AddStringToObject(meta, "namespace", "default");
	cJSON_AddStringToObject(meta, "uid", c->uid);
	cJSON_AddStringToObject(meta, "resourceVersion", "1");
	for (int i = 0; i < 3 && c->anns[i] != NULL; i++)
		cJSON_AddStringToObject(json_child_object(meta, "annotations"), c->anns[i],
		    strstr(c->anns[i], "provisioner") != NULL ? (prov != NULL ? prov :
		    "kubernetes.io/mock-plugin") : "yes");
	if (c->selected_node != NULL)
		cJSON_AddStringToObject(json_child_object(meta, "annotations"), SN,
		    c->selected_node);
	modes = c->modes != NULL ? fixture_parse(c->modes) : NULL;
	if (modes == NULL) {
		modes = cJSON_CreateArray();
		cJSON_AddItemToArray(modes, cJSON_CreateString("ReadWriteOnce"));
		cJSON_AddItemToArray(modes, cJSON_CreateString("ReadOnlyMany"));
	}
	cJSON_AddItemToObject(spec, "accessModes", modes);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec,
	    "resources"), "requests"), "storage", c->req);
	if (*c->volume != '\0')
		cJSON_AddStringToObject(spec, "volumeName", c->volume);
	if (c->class != NULL)
		cJSON_AddStringToObject(spec, "storageClassName", c->class);
	cJSON_AddStringToObject(spec, "volumeMode", "Filesystem");
	if (c->selector != NULL)
		cJSON_AddItemToObject(cJSON_AddObjectToObject(spec, "selector"), "matchLabels",
		    fixture_parse(c->selector));
	if (*c->phase != '\0') {
		cJSON *status = cJSON_AddObjectToObject(o, "status");

		cJSON_AddStringToObject(status, "phase", c->phase);
		if (strcmp(c->phase, "Bound") == 0) {
			cJSON_AddItemToObject(status, "accessModes", cJSON_Duplicate(modes, 1));
			cJSON_AddStringToObject(cJSON_AddObjectToObject(status, "capacity"),
			    "storage", c->cap != NULL ? c->cap : c->req);
		}
	}
	return o;
}

static cJSON *
class_new(const char *name, const char *provisioner, const char *mode, int is_default)
{
	cJSON *o = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(o, "metadata");
	char *uid = xasprintf("sc-%s", name);

	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "uid", uid);
	cJSON_AddStringToObject(meta, "resourceVersion", "1");
	cJSON_AddStringToObject(meta, "creationTimestamp", "2026-01-01T00:00:00Z");
	if (is_default)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"),
		    "storageclass.kubernetes.io/is-default-class", "true");
	cJSON_AddStringToObject(o, "provisioner", provisioner);
	cJSON_AddStringToObject(o, "volumeBindingMode", mode);
	free(uid);
	return o;
}

/* --- applying a sync's writes --------------------------------------------------------- */

/* The object of array objs named name (and namespace), or NULL. */
static cJSON *
find_object(cJSON *objs, const char *namespace, const char *name)
{
	cJSON *o;

	cJSON_ArrayForEach(o, objs) {
		if (strcmp(json_string(o, "metadata.name"), name) == 0 &&
		    strcmp(json_string(o, "metadata.namespace"), namespace) == 0)
			return o;
	}
	return NULL;
}

static void
apply_writes(const char *row_name, const struct sync_result *r, cJSON *vols,
    cJSON *claims, struct buf *events, struct buf *pod_writes)
{
	int next_rv = 100;

	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];
		cJSON *objs = strcmp(a->resource->name, "persistentvolumes") == 0 ? vols : claims;
		cJSON *o = find_object(objs, a->namespace, a->name);
		const char *rv = json_string(a->body, "metadata.resourceVersion");
		char text[16];

		if (strcmp(a->resource->name, "pods") == 0) {
			/* The recycler pod: created and deleted, as kube's recycler does. */
			assert_true(a->type == ACTION_CREATE || a->type == ACTION_DELETE);
			buf_printf(pod_writes, "%s%s %s/%s", pod_writes->len > 0 ? "," : "",
			    a->verb, a->namespace, a->name);
			if (a->done_reason != NULL)
				buf_printf(events, "%s%s %s", events->len > 0 ? "," : "",
				    a->done_type != NULL ? a->done_type : "Normal", a->done_reason);
			continue;
		}
		/* kube's role grants update, not patch: every other write is a PUT. */
		assert_int_equal(a->type, ACTION_UPDATE);
		if (o == NULL)
			fail_msg("%s: write %d to %s/%s: no such object", row_name, i, a->namespace,
			    a->name);
		if (*rv != '\0' && strcmp(rv, json_string(o, "metadata.resourceVersion")) != 0)
			fail_msg("%s: write %d to %s: resourceVersion %s, the object's is %s",
			    row_name, i, a->name, rv, json_string(o, "metadata.resourceVersion"));
		if (a->subresource != NULL) {
			/* A status update writes the status alone. */
			assert_string_equal(a->subresource, "status");
			json_set(o, "status", cJSON_Duplicate(json_path(a->body, "status"), 1));
		} else {
			/* An update needs the object's resourceVersion (an unconditional one
			 * would overwrite what the cache has not seen), and keeps its status. */
			cJSON *status = cJSON_DetachItemFromObjectCaseSensitive(o, "status");
			cJSON *copy = cJSON_Duplicate(a->body, 1);

			if (*rv == '\0')
				fail_msg("%s: write %d to %s: an update without resourceVersion",
				    row_name, i, a->name);
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "status");
			if (status != NULL)
				cJSON_AddItemToObject(copy, "status", status);
			cJSON_ReplaceItemViaPointer(objs, o, copy);
			o = copy;
		}
		snprintf(text, sizeof text, "%d", next_rv++);
		json_set(json_child_object(o, "metadata"), "resourceVersion",
		    cJSON_CreateString(text));
		if (a->done_reason != NULL)
			buf_printf(events, "%s%s %s", events->len > 0 ? "," : "",
			    a->done_type != NULL ? a->done_type : "Normal", a->done_reason);
	}
}

/* --- comparing ------------------------------------------------------------------------ */

static void
check_annotations(const char *row, const char *what, const cJSON *o, const char *const *want)
{
	const cJSON *anns = json_path(o, "metadata.annotations"), *a;
	int wanted = 0, have = 0;

	for (int i = 0; i < 3 && want[i] != NULL; i++) {
		if (json_annotation(o, want[i]) == NULL)
			fail_msg("%s: %s: annotation %s missing", row, what, want[i]);
		if (strcmp(want[i], PB) != 0)
			wanted++;
	}
	cJSON_ArrayForEach(a, anns) {
		if (strcmp(a->string, SN) != 0 && strcmp(a->string, PB) != 0)
			have++;
	}
	if (have != wanted) {
		char *text = cJSON_PrintUnformatted(anns);

		fail_msg("%s: %s: annotations %s, want %d of them", row, what, text, wanted);
	}
}

static void
check_volume(const struct binder_case *row, const struct vol *want, cJSON *vols)
{
	const cJSON *v = find_object(vols, "", want->name);
	const char *msg;

	if (v == NULL)
		fail_msg("%s: volume %s gone", row->name, want->name);
	if (strcmp(json_string(v, "spec.claimRef.name"), want->claim) != 0 ||
	    strcmp(json_string(v, "spec.claimRef.uid"), want->uid) != 0)
		fail_msg("%s: volume %s: claimRef %s (%s), want %s (%s)", row->name, want->name,
		    json_string(v, "spec.claimRef.name"), json_string(v, "spec.claimRef.uid"),
		    want->claim, want->uid);
	if (strcmp(json_string(v, "status.phase"), want->phase) != 0)
		fail_msg("%s: volume %s: phase %s, want %s", row->name, want->name,
		    json_string(v, "status.phase"), want->phase);
	msg = json_string(v, "status.message");
	if (strcmp(msg, want->message != NULL ? want->message : "") != 0)
		fail_msg("%s: volume %s: message \"%s\", want \"%s\"", row->name, want->name,
		    msg, want->message != NULL ? want->message : "");
	check_annotations(row->name, want->name, v, want->anns);
}

static void
check_claim(const struct binder_case *row, const struct claim *want, cJSON *claims)
{
	const cJSON *c = find_object(claims, "default", want->name);
	const cJSON *class;

	if (c == NULL)
		fail_msg("%s: claim %s gone", row->name, want->name);
	if (strcmp(json_string(c, "spec.volumeName"), want->volume) != 0)
		fail_msg("%s: claim %s: volumeName \"%s\", want \"%s\"", row->name, want->name,
		    json_string(c, "spec.volumeName"), want->volume);
	if (strcmp(json_string(c, "status.phase"), want->phase) != 0)
		fail_msg("%s: claim %s: phase %s, want %s", row->name, want->name,
		    json_string(c, "status.phase"), want->phase);
	class = json_path(c, "spec.storageClassName");
	if ((want->class == NULL) != (class == NULL) ||
	    (want->class != NULL && strcmp(json_string(c, "spec.storageClassName"),
	    want->class) != 0))
		fail_msg("%s: claim %s: class \"%s\", want \"%s\"", row->name, want->name,
		    json_string(c, "spec.storageClassName"),
		    want->class != NULL ? want->class : "(nil)");
	if (strcmp(want->phase, "Bound") == 0) {
		const char *cap = json_string(c, "status.capacity.storage");

		if (strcmp(cap, want->cap != NULL ? want->cap : want->req) != 0)
			fail_msg("%s: claim %s: capacity %s, want %s", row->name, want->name, cap,
			    want->cap != NULL ? want->cap : want->req);
		if (!cJSON_IsArray(json_path(c, "status.accessModes")))
			fail_msg("%s: claim %s: no access modes", row->name, want->name);
	} else if (json_path(c, "status.capacity") != NULL) {
		fail_msg("%s: claim %s: capacity kept while %s", row->name, want->name,
		    want->phase);
	}
	check_annotations(row->name, want->name, c, want->anns);
	for (int i = 0; i < 3 && want->anns[i] != NULL; i++) {
		const cJSON *a = json_annotation(c, want->anns[i]);

		if (strstr(want->anns[i], "provisioner") != NULL && row->prov != NULL &&
		    strcmp(a->valuestring, row->prov) != 0)
			fail_msg("%s: claim %s: %s is %s, want %s", row->name, want->name,
			    want->anns[i], a->valuestring, row->prov);
	}
}

static void
binder_row(void **state)
{
	const struct binder_case *row = *state;
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	const struct resource *pvs = resource_find("persistentvolumes");
	const struct resource *pvcs = resource_find("persistentvolumeclaims");
	const struct resource *scs = resource_find("storageclasses");
	cJSON *vols = cJSON_CreateArray(), *claims = cJSON_CreateArray();
	struct buf events = { 0 };
	const char *key;
	char *claim_key = NULL;

	ctl_cache(w, scs, class_new("gold", "kubernetes.io/mock-plugin", "Immediate", 0));
	ctl_cache(w, scs, class_new("silver", "kubernetes.io/mock-plugin", "Immediate", 0));
	ctl_cache(w, scs, class_new("wait", "vendor.com/wait", "WaitForFirstConsumer", 0));
	ctl_cache(w, scs, class_new("external", "vendor.com/my-volume", "Immediate", 0));
	ctl_cache(w, scs, class_new("intree-unknown", "kubernetes.io/unknown", "Immediate", 0));
	ctl_cache(w, scs, class_new("migrated", "kubernetes.io/gce-pd", "Immediate", 0));
	if (row->default_class != NULL)
		ctl_cache(w, scs, class_new(row->default_class, "vendor.com/default",
		    "Immediate", 1));
	for (int i = 0; i < MAXV && row->vols[i].name != NULL; i++) {
		cJSON *v = vol_new(&row->vols[i], row->prov);

		cJSON_AddItemToArray(vols, cJSON_Duplicate(v, 1));
		ctl_cache(w, pvs, v);
	}
	for (int i = 0; i < MAXC && row->claims[i].name != NULL; i++) {
		cJSON *c = claim_new(&row->claims[i], row->prov);

		cJSON_AddItemToArray(claims, cJSON_Duplicate(c, 1));
		ctl_cache(w, pvcs, c);
	}
	if (row->pods != NULL)
		ctl_cache(w, resource_find("pods"), fixture_parse(row->pods));
	if (row->sync_volume) {
		key = row->vols[0].name;
	} else {
		claim_key = xasprintf("default/%s", row->claims[0].name);
		key = claim_key;
	}
	ctl_sync(w, key, NOW);
	if (w->result.failed != row->failed)
		fail_msg("%s: failed %d, want %d", row->name, w->result.failed, row->failed);
	if ((w->result.nconfirm_absent > 0) != row->confirm)
		fail_msg("%s: %d live reads, want %s", row->name, w->result.nconfirm_absent,
		    row->confirm ? "one" : "none");
	assert_true(w->result.requeue_after == 15);
	for (int i = 0; i < w->result.nevents; i++)
		buf_printf(&events, "%s%s %s", events.len > 0 ? "," : "",
		    w->result.events[i].type, w->result.events[i].reason);
	{
		struct buf pod_writes = { 0 };

		apply_writes(row->name, &w->result, vols, claims, &events, &pod_writes);
		if (pod_writes.len > 0)
			fail_msg("%s: pod writes %s", row->name, pod_writes.data);
		buf_free(&pod_writes);
	}
	if (strcmp(events.data != NULL ? events.data : "", row->events != NULL ? row->events :
	    "") != 0)
		fail_msg("%s: events \"%s\", want \"%s\"", row->name,
		    events.data != NULL ? events.data : "", row->events != NULL ? row->events : "");
	for (int i = 0; i < MAXV && row->evols[i].name != NULL; i++)
		check_volume(row, &row->evols[i], vols);
	for (int i = 0; i < MAXC && row->eclaims[i].name != NULL; i++)
		check_claim(row, &row->eclaims[i], claims);
	buf_free(&events);
	free(claim_key);
	cJSON_Delete(vols);
	cJSON_Delete(claims);
	ctl_world_free(w);
}

/* --- the recycler --------------------------------------------------------------------- */

#define HOSTPATH "\"hostPath\":{\"path\":\"/tmp/v\"}"
#define NFS "\"nfs\":{\"server\":\"nfs.example\",\"path\":\"/export\"}"

/*
 * kube's recycle_test.go (TestRecycleSync, TestRecycleMultiSync) with the recycler pod
 * kube's hostPath and NFS plugins run, played: the volume (its claim gone, or another
 * claim of its name there) is synced, which creates the pod; the pod then ends as each
 * round of outcomes says ("Succeeded", "Failed", "Failed:MESSAGE", "deleted": gone
 * before it ended), the volume being synced after each. A row names the pod writes
 * and events of every round, in order, and the volume at the end.
 */
struct recycle_case {
	const char *name;
	struct vol vol, evol;
	struct claim claim;		/* a claim of the volume's claim's name, or none */
	const char *pods;		/* pods using claims, JSON objects comma-separated */
	const char *outcomes;		/* comma-separated; NULL: the pod is never created */
	const char *pod_writes;		/* e.g. "create default/recycler-for-v,delete ..." */
	const char *events;
	long long deadline;		/* the pod's activeDeadlineSeconds */
	const char *source;		/* the pod's volume, as JSON */
	int old_pod;			/* a pod of the name is there before the first sync */
};

#define POD_USING(name, claim, phase) "{\"metadata\":{\"name\":\"" name "\"," \
	"\"namespace\":\"default\",\"uid\":\"uid-" name "\",\"resourceVersion\":\"1\"}," \
	"\"spec\":{\"nodeName\":\"n\",\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":" \
	"{\"claimName\":\"" claim "\"}}]},\"status\":{\"phase\":\"" phase "\"}}"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct recycle_case recycle_cases[] = {
	{ "6-1 - successful recycle",
	  { "volume6-1", "1Gi", "uid6-1", "claim6-1", "Bound", "Recycle", "", { BBC }, NULL,
	    HOSTPATH },
	  V("volume6-1", "1Gi", "", "", "Available", "Recycle", "", NULL),
	  { NULL }, NULL, "Succeeded",
	  "create default/recycler-for-volume6-1,delete default/recycler-for-volume6-1",
	  "Normal VolumeRecycled", 60, "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "6-2 - successful recycle with prebound volume",
	  { "volume6-2", "1Gi", "uid6-2", "claim6-2", "Bound", "Recycle", "", { NULL }, NULL,
	    HOSTPATH },
	  V("volume6-2", "1Gi", "", "claim6-2", "Available", "Recycle", "", NULL),
	  { NULL }, NULL, "Succeeded",
	  "create default/recycler-for-volume6-2,delete default/recycler-for-volume6-2",
	  "Normal VolumeRecycled", 60, "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "6-5 - recycle returns error",
	  { "volume6-5", "1Gi", "uid6-5", "claim6-5", "Bound", "Recycle", "", { NULL }, NULL,
	    HOSTPATH },
	  { "volume6-5", "1Gi", "uid6-5", "claim6-5", "Failed", "Recycle", "", { NULL },
	    "Recycle failed: failed to recycle volume: Mock recycle error" },
	  { NULL }, NULL, "Failed:Mock recycle error",
	  "create default/recycler-for-volume6-5,delete default/recycler-for-volume6-5",
	  "Warning VolumeFailedRecycle", 60,
	  "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "recycler pod failed without a message",
	  { "volume-r1", "1Gi", "uid-r1", "claim-r1", "Released", "Recycle", "", { NULL },
	    NULL, HOSTPATH },
	  { "volume-r1", "1Gi", "uid-r1", "claim-r1", "Failed", "Recycle", "", { NULL },
	    "Recycle failed: failed to recycle volume: pod failed, pod.Status.Message unknown" },
	  { NULL }, NULL, "Failed",
	  "create default/recycler-for-volume-r1,delete default/recycler-for-volume-r1",
	  "Warning VolumeFailedRecycle", 60,
	  "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "recycler pod deleted before it ended",
	  { "volume-r2", "1Gi", "uid-r2", "claim-r2", "Released", "Recycle", "", { NULL },
	    NULL, HOSTPATH },
	  { "volume-r2", "1Gi", "uid-r2", "claim-r2", "Failed", "Recycle", "", { NULL },
	    "Recycle failed: failed to recycle volume: recycler pod was deleted" },
	  { NULL }, NULL, "deleted", "create default/recycler-for-volume-r2",
	  "Warning VolumeFailedRecycle", 60,
	  "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "an old recycler pod is deleted and the recycle fails, to be tried again",
	  { "volume-r3", "1Gi", "uid-r3", "claim-r3", "Released", "Recycle", "", { NULL },
	    NULL, HOSTPATH },
	  { "volume-r3", "1Gi", "uid-r3", "claim-r3", "Failed", "Recycle", "", { NULL },
	    "Recycle failed: old recycler pod found, will retry later" },
	  { NULL }, NULL, NULL, "delete default/recycler-for-volume-r3",
	  "Warning VolumeFailedRecycle", 0, NULL, 1 },
	{ "7-1 - recycle returns error, then succeeds",
	  { "volume7-1", "1Gi", "uid7-1", "claim7-1", "Bound", "Recycle", "", { NULL }, NULL,
	    HOSTPATH },
	  V("volume7-1", "1Gi", "", "claim7-1", "Available", "Recycle", "", NULL),
	  { NULL }, NULL, "Failed:Mock recycle error,Succeeded",
	  "create default/recycler-for-volume7-1,delete default/recycler-for-volume7-1,"
	  "create default/recycler-for-volume7-1,delete default/recycler-for-volume7-1",
	  "Warning VolumeFailedRecycle,Normal VolumeRecycled", 60,
	  "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "6-9 - prebound volume is recycled while the claim exists",
	  { "volume6-9", "1Gi", "uid6-9", "claim6-9", "Bound", "Recycle", "", { NULL }, NULL,
	    HOSTPATH },
	  V("volume6-9", "1Gi", "", "claim6-9", "Available", "Recycle", "", NULL),
	  C("claim6-9", "uid6-9-x", "10Gi", "", "Pending", NULL, NULL), NULL, "Succeeded",
	  "create default/recycler-for-volume6-9,delete default/recycler-for-volume6-9",
	  "Normal VolumeRecycled", 60, "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "6-12 - used by pending pod",
	  { "volume6-12", "1Gi", "uid6-12", "pendingClaim", "Bound", "Recycle", "", { BBC },
	    NULL, HOSTPATH },
	  V("volume6-12", "1Gi", "uid6-12", "pendingClaim", "Released", "Recycle", "", BBC),
	  { NULL }, POD_USING("pendingPod", "pendingClaim", "Pending"), NULL, NULL,
	  "Normal VolumeFailedRecycle" },
	{ "6-13 - used by completed pod",
	  { "volume6-13", "1Gi", "uid6-13", "completedClaim", "Bound", "Recycle", "", { BBC },
	    NULL, HOSTPATH },
	  V("volume6-13", "1Gi", "", "", "Available", "Recycle", "", NULL),
	  { NULL }, POD_USING("completedPod", "completedClaim", "Succeeded"), "Succeeded",
	  "create default/recycler-for-volume6-13,delete default/recycler-for-volume6-13",
	  "Normal VolumeRecycled", 60, "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "6-14 - seemingly used by running pod",
	  { "volume6-14", "1Gi", "uid6-14", "runningClaim", "Bound", "Recycle", "", { BBC },
	    NULL, HOSTPATH },
	  V("volume6-14", "1Gi", "", "", "Available", "Recycle", "", NULL),
	  { "runningClaim", "uid6-14-x", "10Gi", "", "Bound", NULL, { NULL } },
	  POD_USING("runningPod", "runningClaim", "Running"), "Succeeded",
	  "create default/recycler-for-volume6-14,delete default/recycler-for-volume6-14",
	  "Normal VolumeRecycled", 60, "{\"name\":\"vol\",\"hostPath\":{\"path\":\"/tmp/v\"}}" },
	{ "an NFS volume's pod mounts its export, 30 s per GiB past the 300 s minimum",
	  { "volume-n1", "20Gi", "uid-n1", "claim-n1", "Released", "Recycle", "", { BBC },
	    NULL, NFS },
	  V("volume-n1", "20Gi", "", "", "Available", "Recycle", "", NULL),
	  { NULL }, NULL, "Succeeded",
	  "create default/recycler-for-volume-n1,delete default/recycler-for-volume-n1",
	  "Normal VolumeRecycled", 600,
	  "{\"name\":\"vol\",\"nfs\":{\"server\":\"nfs.example\",\"path\":\"/export\"}}" },
	{ "a volume of a plugin that cannot recycle fails (6-3)",
	  V("volume6-3", "1Gi", "uid6-3", "claim6-3", "Bound", "Recycle", "", NULL),
	  { "volume6-3", "1Gi", "uid6-3", "claim6-3", "Failed", "Recycle", "", { NULL },
	    "No recycler plugin found for the volume!" },
	  { NULL }, NULL, NULL, NULL, "Warning VolumeFailedRecycle" },
};
#pragma GCC diagnostic pop

/* Caches every object of arr (copies) into r's table. */
static void
cache_all(struct ctl_world *w, const struct resource *r, const cJSON *arr)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, arr)
		ctl_cache(w, r, cJSON_Duplicate(o, 1));
}

/* Syncs volume key, checks the sync asks no live read it should not, applies its writes
 * to vols and claims (and the cache) and appends its events and pod writes. Returns the
 * recycler pod the sync created (taken), or NULL. */
static cJSON *
recycle_round(struct ctl_world *w, const char *row, const char *key, cJSON *vols,
    cJSON *claims, struct buf *events, struct buf *pod_writes)
{
	cJSON *created = NULL;

	ctl_sync(w, key, NOW);
	for (int i = 0; i < w->result.nevents; i++)
		buf_printf(events, "%s%s %s", events->len > 0 ? "," : "",
		    w->result.events[i].type, w->result.events[i].reason);
	for (int i = 0; i < w->result.nwrites; i++) {
		if (w->result.writes[i].type == ACTION_CREATE)
			created = cJSON_Duplicate(w->result.writes[i].body, 1);
	}
	apply_writes(row, &w->result, vols, claims, events, pod_writes);
	cache_all(w, resource_find("persistentvolumes"), vols);
	return created;
}

static void
recycle_row(void **state)
{
	const struct recycle_case *row = *state;
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	const struct resource *pods = resource_find("pods");
	cJSON *vols = cJSON_CreateArray(), *claims = cJSON_CreateArray(), *pod;
	struct buf events = { 0 }, pod_writes = { 0 };
	char *outcomes = row->outcomes != NULL ? xstrdup(row->outcomes) : NULL, *next, *o;

	cJSON_AddItemToArray(vols, vol_new(&row->vol, NULL));
	cache_all(w, resource_find("persistentvolumes"), vols);
	if (row->claim.name != NULL) {
		cJSON_AddItemToArray(claims, claim_new(&row->claim, NULL));
		cache_all(w, resource_find("persistentvolumeclaims"), claims);
	}
	if (row->pods != NULL) {
		char *text = xasprintf("[%s]", row->pods);
		cJSON *arr = fixture_parse(text);

		cache_all(w, pods, arr);
		cJSON_Delete(arr);
		free(text);
	}
	if (row->old_pod) {
		char *text = xasprintf("{\"metadata\":{\"name\":\"recycler-for-%s\","
		    "\"namespace\":\"default\",\"uid\":\"old\",\"resourceVersion\":\"1\"},"
		    "\"spec\":{},\"status\":{\"phase\":\"Running\"}}", row->vol.name);

		ctl_cache(w, pods, fixture_parse(text));
		free(text);
	}
	pod = recycle_round(w, row->name, row->vol.name, vols, claims, &events, &pod_writes);
	for (o = outcomes; o != NULL; o = next) {
		char *colon;

		next = strchr(o, ',');
		if (next != NULL)
			*next++ = '\0';
		if (pod == NULL)
			fail_msg("%s: no recycler pod created before outcome %s", row->name, o);
		if (json_int(pod, "spec.activeDeadlineSeconds", -1) != row->deadline)
			fail_msg("%s: activeDeadlineSeconds %lld, want %lld", row->name,
			    json_int(pod, "spec.activeDeadlineSeconds", -1), row->deadline);
		{
			char *src = cJSON_PrintUnformatted(cJSON_GetArrayItem(json_path(pod,
			    "spec.volumes"), 0));

			if (strcmp(src, row->source) != 0)
				fail_msg("%s: the pod's volume %s, want %s", row->name, src,
				    row->source);
			free(src);
		}
		/* kube's pod: its image, command and mount. */
		assert_string_equal(json_string(pod, "metadata.namespace"), "default");
		assert_string_equal(json_string(cJSON_GetArrayItem(json_path(pod,
		    "spec.containers"), 0), "image"),
		    "registry.k8s.io/build-image/debian-base:bookworm-v1.0.6");
		assert_string_equal(json_string(pod, "spec.restartPolicy"), "Never");
		assert_null(json_path(pod, "metadata.generateName"));
		json_set(json_child_object(pod, "metadata"), "uid", cJSON_CreateString("rp"));
		json_set(json_child_object(pod, "metadata"), "resourceVersion",
		    cJSON_CreateString("1"));
		json_set(pod, "status", fixture_parse("{\"phase\":\"Running\"}"));
		/* The pod runs: the volume waits for it. */
		ctl_cache(w, pods, cJSON_Duplicate(pod, 1));
		cJSON_Delete(recycle_round(w, row->name, row->vol.name, vols, claims, &events,
		    &pod_writes));
		if (strcmp(o, "deleted") == 0) {
			ctl_uncache(w, pods, "rp");
		} else {
			colon = strchr(o, ':');
			if (colon != NULL)
				*colon++ = '\0';
			json_set(pod, "status", cJSON_CreateObject());
			cJSON_AddStringToObject(json_child_object(pod, "status"), "phase", o);
			if (colon != NULL)
				cJSON_AddStringToObject(json_child_object(pod, "status"), "message",
				    colon);
			json_set(json_child_object(pod, "metadata"), "resourceVersion",
			    cJSON_CreateString("2"));
			ctl_cache(w, pods, cJSON_Duplicate(pod, 1));
		}
		cJSON_Delete(pod);
		pod = recycle_round(w, row->name, row->vol.name, vols, claims, &events,
		    &pod_writes);
		if (pod != NULL)	/* the pod gone: the next round's pod */
			ctl_uncache(w, pods, "rp");
		else if (next != NULL && strcmp(o, "deleted") != 0) {
			ctl_uncache(w, pods, "rp");
			pod = recycle_round(w, row->name, row->vol.name, vols, claims, &events,
			    &pod_writes);
		}
	}
	cJSON_Delete(pod);
	assert_described("pod writes", pod_writes.data != NULL ? pod_writes.data : "",
	    row->pod_writes);
	assert_described("events", events.data != NULL ? events.data : "", row->events);
	check_volume((const struct binder_case *)&(struct binder_case){ .name = row->name },
	    &row->evol, vols);
	free(outcomes);
	buf_free(&events);
	buf_free(&pod_writes);
	cJSON_Delete(vols);
	cJSON_Delete(claims);
	ctl_world_free(w);
}

/* kube's CalculateTimeoutForVolume: the increment per whole GiB, at least the minimum. */
static void
recycler_timeout_per_gib(void **state)
{
	static const struct {
		long long minimum, increment;
		const char *cap;
		long long want;
	} rows[] = {
		{ 60, 30, "1Gi", 60 }, { 60, 30, "10Gi", 300 }, { 300, 30, "10Gi", 300 },
		{ 300, 30, "20Gi", 600 }, { 60, 30, "2.5Gi", 60 }, { 10, 30, "1500Mi", 30 },
		{ 60, 30, NULL, 60 }, { 0, 30, "1G", 0 }, { 0, 30, "2G", 30 },
		{ 60, 30, "junk", 60 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		cJSON *v = fixture_parse("{\"spec\":{\"capacity\":{}}}");

		if (rows[i].cap != NULL)
			cJSON_AddStringToObject(json_child_object(json_child_object(v, "spec"),
			    "capacity"), "storage", rows[i].cap);
		if (persistentvolume_recycler_timeout(rows[i].minimum, rows[i].increment, v) !=
		    rows[i].want)
			fail_msg("%lld/%lld %s: %lld, want %lld", rows[i].minimum, rows[i].increment,
			    rows[i].cap != NULL ? rows[i].cap : "(none)",
			    persistentvolume_recycler_timeout(rows[i].minimum, rows[i].increment, v),
			    rows[i].want);
		cJSON_Delete(v);
	}
}

/* --- CSI migration: annotations and finalizers ----------------------------------------- */

#define MT "pv.kubernetes.io/migrated-to"
#define FIT "kubernetes.io/pv-controller"
#define FEXT "external-provisioner.volume.kubernetes.io/finalizer"
#define FCUSTOM "test.volume.kubernetes.io/finalizer"

/* kube's TestAnnealMigrationAnnotations: the provisioner annotation of a volume or claim,
 * the migrated-to it has and the one it should have (NULL: none). kube's gce-pd is
 * migrated (to pd.csi.storage.gke.io); rbd is not. */
struct migration_case {
	const char *name;
	int claim;		/* a claim (else a volume, of policy Retain) */
	const char *key;	/* the provisioner annotation */
	const char *provisioner;
	const char *migrated_to, *want;
	int modified;
};

static const struct migration_case migration_cases[] = {
	{ "migration on: a volume gets migrated-to", 0, PB, "kubernetes.io/gce-pd", NULL,
	  "pd.csi.storage.gke.io", 1 },
	{ "migration on: a claim gets migrated-to", 1, SP, "kubernetes.io/gce-pd", NULL,
	  "pd.csi.storage.gke.io", 1 },
	{ "migration on: a claim of the beta annotation gets migrated-to", 1,
	  "volume.beta.kubernetes.io/storage-provisioner", "kubernetes.io/gce-pd", NULL,
	  "pd.csi.storage.gke.io", 1 },
	{ "migration on: a wrong migrated-to is corrected", 0, PB, "kubernetes.io/gce-pd",
	  "other.csi.driver", "pd.csi.storage.gke.io", 1 },
	{ "migration on: the right migrated-to is kept", 1, SP, "kubernetes.io/gce-pd",
	  "pd.csi.storage.gke.io", "pd.csi.storage.gke.io", 0 },
	{ "migration off: a volume gets none", 0, PB, "kubernetes.io/rbd", NULL, NULL, 0 },
	{ "migration off: a claim gets none", 1, SP, "kubernetes.io/rbd", NULL, NULL, 0 },
	{ "migration off removes migrated-to (rollback) of a volume", 0, PB,
	  "kubernetes.io/rbd", "rbd.csi.ceph.com", NULL, 1 },
	{ "migration off removes migrated-to (rollback) of a claim", 1, SP,
	  "kubernetes.io/rbd", "rbd.csi.ceph.com", NULL, 1 },
	{ "migration off removes migrated-to (rollback), beta annotation", 1,
	  "volume.beta.kubernetes.io/storage-provisioner", "kubernetes.io/rbd",
	  "rbd.csi.ceph.com", NULL, 1 },
	{ "a statically provisioned volume is left alone", 0, NULL, NULL, "x.csi", "x.csi", 0 },
	{ "an external provisioner's volume loses a stale migrated-to", 0, PB,
	  "vendor.com/csi", "vendor.com/csi", NULL, 1 },
};

/* kube's TestModifyDeletionFinalizers (13-x): a volume's provisioner, policy and
 * finalizers, and the finalizers it should have. */
struct finalizer_case {
	const char *name;
	const char *provisioner;	/* provisioned-by; NULL: none */
	const char *migrated_to;
	const char *policy;
	const char *have, *want;	/* JSON arrays; NULL: none */
	int modified;
};

static const struct finalizer_case finalizer_cases[] = {
	{ "13-1 an external provisioner's finalizer is kept", "rbd.csi.ceph.com", NULL,
	  "Delete", "[\"" FEXT "\"]", "[\"" FEXT "\"]", 0 },
	{ "13-2 an external provisioner's volume gets no finalizer", "rbd.csi.ceph.com", NULL,
	  "Delete", NULL, NULL, 0 },
	{ "13-3 an in-tree Delete volume gets the in-tree finalizer after the others",
	  "kubernetes.io/mock-plugin", NULL, "Delete", "[\"" FCUSTOM "\"]",
	  "[\"" FCUSTOM "\",\"" FIT "\"]", 1 },
	{ "13-4 an in-tree Delete volume without finalizers gets the in-tree one",
	  "kubernetes.io/mock-plugin", NULL, "Delete", NULL, "[\"" FIT "\"]", 1 },
	{ "13-5 an in-tree volume's external finalizer is replaced by the in-tree one",
	  "kubernetes.io/mock-plugin", NULL, "Delete", "[\"" FEXT "\"]", "[\"" FIT "\"]", 1 },
	{ "13-6 the same among other finalizers", "kubernetes.io/mock-plugin", NULL, "Delete",
	  "[\"" FEXT "\",\"" FCUSTOM "\"]", "[\"" FCUSTOM "\",\"" FIT "\"]", 1 },
	{ "13-7 a migrated plugin's volume loses the in-tree finalizer",
	  "kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "Delete",
	  "[\"" FEXT "\",\"" FIT "\"]", "[\"" FEXT "\"]", 1 },
	{ "13-10 no provisioner annotation: finalizers kept", NULL, NULL, "Delete",
	  "[\"" FEXT "\"]", "[\"" FEXT "\"]", 0 },
	{ "13-11 no provisioner annotation nor finalizers", NULL, NULL, "Delete", NULL, NULL,
	  0 },
	{ "13-12 an in-tree Retain volume gets no finalizer", "kubernetes.io/mock-plugin",
	  NULL, "Retain", NULL, NULL, 0 },
	{ "13-13 an in-tree Recycle volume gets no finalizer", "kubernetes.io/mock-plugin",
	  NULL, "Recycle", NULL, NULL, 0 },
	{ "13-14 an in-tree Retain volume loses the in-tree finalizer",
	  "kubernetes.io/mock-plugin", NULL, "Retain", "[\"" FIT "\"]", NULL, 1 },
	{ "an in-tree Recycle volume loses the in-tree finalizer, keeps the others",
	  "kubernetes.io/nfs", NULL, "Recycle", "[\"" FCUSTOM "\",\"" FIT "\"]",
	  "[\"" FCUSTOM "\"]", 1 },
};

/* A volume bound to claim "c" (uid "cu") and that claim, both Bound: a sync of either
 * writes nothing but what the migration asks. */
static void
cache_bound_pair(struct ctl_world *w, cJSON *vol_anns, const char *policy,
    const char *finalizers, cJSON *claim_anns)
{
	cJSON *v = fixture_parse("{\"metadata\":{\"name\":\"v\",\"uid\":\"vu\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},"
	    "\"accessModes\":[\"ReadWriteOnce\"],\"volumeMode\":\"Filesystem\","
	    "\"storageClassName\":\"\",\"gcePersistentDisk\":{\"pdName\":\"\"},"
	    "\"claimRef\":{\"kind\":\"PersistentVolumeClaim\",\"namespace\":\"default\","
	    "\"name\":\"c\",\"uid\":\"cu\"}},\"status\":{\"phase\":\"Bound\"}}");
	cJSON *c = fixture_parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"default\","
	    "\"uid\":\"cu\",\"resourceVersion\":\"1\",\"annotations\":{\"" BC "\":\"yes\"}},"
	    "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"volumeMode\":\"Filesystem\","
	    "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},\"storageClassName\":\"\","
	    "\"volumeName\":\"v\"},\"status\":{\"phase\":\"Bound\","
	    "\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\"1Gi\"}}}");

	json_set(json_child_object(v, "spec"), "persistentVolumeReclaimPolicy",
	    cJSON_CreateString(policy));
	if (vol_anns != NULL)
		json_set(json_child_object(v, "metadata"), "annotations", vol_anns);
	if (finalizers != NULL)
		json_set(json_child_object(v, "metadata"), "finalizers", fixture_parse(finalizers));
	if (claim_anns != NULL) {
		cJSON *a;

		while ((a = claim_anns->child) != NULL) {
			cJSON_DetachItemViaPointer(claim_anns, a);
			json_set(json_child_object(json_child_object(c, "metadata"), "annotations"),
			    a->string, a);
		}
		cJSON_Delete(claim_anns);
	}
	ctl_cache(w, resource_find("persistentvolumes"), v);
	ctl_cache(w, resource_find("persistentvolumeclaims"), c);
}

static void
migration_row(void **state)
{
	const struct migration_case *row = *state;
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	cJSON *anns = cJSON_CreateObject();
	const struct action *a;

	if (row->key != NULL)
		cJSON_AddStringToObject(anns, row->key, row->provisioner);
	if (row->migrated_to != NULL)
		cJSON_AddStringToObject(anns, MT, row->migrated_to);
	if (row->claim)
		cache_bound_pair(w, NULL, "Retain", NULL, anns);
	else
		cache_bound_pair(w, anns, "Retain", NULL, NULL);
	ctl_sync(w, row->claim ? "default/c" : "v", NOW);
	if (w->result.nwrites != row->modified)
		fail_msg("%s: %d writes, want %d", row->name, w->result.nwrites, row->modified);
	if (row->modified) {
		const cJSON *mt;

		a = &w->result.writes[0];
		assert_int_equal(a->type, ACTION_UPDATE);
		assert_null(a->subresource);
		assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "1");
		assert_string_equal(a->resource->name, row->claim ? "persistentvolumeclaims" :
		    "persistentvolumes");
		mt = json_annotation(a->body, MT);
		if (row->want == NULL ? mt != NULL : (!cJSON_IsString(mt) ||
		    strcmp(mt->valuestring, row->want) != 0))
			fail_msg("%s: migrated-to %s, want %s", row->name,
			    cJSON_IsString(mt) ? mt->valuestring : "(none)",
			    row->want != NULL ? row->want : "(none)");
		if (row->key != NULL && json_annotation(a->body, row->key) == NULL)
			fail_msg("%s: the provisioner annotation is lost", row->name);
	}
	ctl_world_free(w);
}

static void
finalizer_row(void **state)
{
	const struct finalizer_case *row = *state;
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	cJSON *anns = cJSON_CreateObject();

	if (row->provisioner != NULL)
		cJSON_AddStringToObject(anns, PB, row->provisioner);
	if (row->migrated_to != NULL)
		cJSON_AddStringToObject(anns, MT, row->migrated_to);
	cache_bound_pair(w, anns, row->policy, row->have, NULL);
	ctl_sync(w, "v", NOW);
	if (w->result.nwrites != row->modified)
		fail_msg("%s: %d writes, want %d", row->name, w->result.nwrites, row->modified);
	if (row->modified) {
		const cJSON *got = json_path(w->result.writes[0].body, "metadata.finalizers");
		char *text = got != NULL ? cJSON_PrintUnformatted(got) : NULL;

		if (row->want == NULL ? text != NULL : (text == NULL ||
		    strcmp(text, row->want) != 0))
			fail_msg("%s: finalizers %s, want %s", row->name,
			    text != NULL ? text : "(none)", row->want != NULL ? row->want : "(none)");
		free(text);
		assert_int_equal(w->result.writes[0].type, ACTION_UPDATE);
		assert_null(w->result.writes[0].subresource);
	}
	ctl_world_free(w);
}

/* --- metrics ------------------------------------------------------------------------- */

/* kube's pv_collector gauges (its metrics_test.go's collector cases): volumes by plugin
 * and mode, bound and unbound by class; claims bound and unbound by namespace, class and
 * volume attributes class; counted from the cache at each scrape, so that a class whose
 * last volume went is no longer reported. */
static void
pv_collector_counts_the_cache(void **state)
{
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { .metrics = registry };
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, &config);
	const struct resource *pvs = resource_find("persistentvolumes");
	const struct resource *pvcs = resource_find("persistentvolumeclaims");
	static const char *const want[] = {
		"pv_collector_bound_pv_count{storage_class=\"a\"} 1\n",
		"pv_collector_unbound_pv_count{storage_class=\"a\"} 1\n",
		"pv_collector_unbound_pv_count{storage_class=\"b\"} 2\n",
		"pv_collector_total_pv_count{plugin_name=\"kubernetes.io/host-path\","
		    "volume_mode=\"Filesystem\"} 1\n",
		"pv_collector_total_pv_count{plugin_name=\"kubernetes.io/csi:d.example\","
		    "volume_mode=\"Block\"} 1\n",
		"pv_collector_total_pv_count{plugin_name=\"kubernetes.io/nfs\","
		    "volume_mode=\"Filesystem\"} 1\n",
		"pv_collector_total_pv_count{plugin_name=\"N/A\",volume_mode=\"Filesystem\"} 1\n",
		"pv_collector_bound_pvc_count{namespace=\"ns1\",storage_class=\"a\","
		    "volume_attributes_class=\"\"} 1\n",
		"pv_collector_unbound_pvc_count{namespace=\"ns1\",storage_class=\"a\","
		    "volume_attributes_class=\"\"} 1\n",
		"pv_collector_unbound_pvc_count{namespace=\"ns2\",storage_class=\"old\","
		    "volume_attributes_class=\"gold\"} 1\n",
		"retroactive_storageclass_total 0\n",
		"retroactive_storageclass_errors_total 0\n",
	};
	struct buf out = { 0 };

	(void)state;
	ctl_cache(w, pvs, fixture_parse("{\"metadata\":{\"name\":\"p1\",\"uid\":\"p1\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":\"a\",\"volumeMode\":"
	    "\"Filesystem\",\"hostPath\":{\"path\":\"/x\"}},\"status\":{\"phase\":\"Bound\"}}"));
	ctl_cache(w, pvs, fixture_parse("{\"metadata\":{\"name\":\"p2\",\"uid\":\"p2\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":\"a\",\"volumeMode\":"
	    "\"Block\",\"csi\":{\"driver\":\"d.example\",\"volumeHandle\":\"h\"}},"
	    "\"status\":{\"phase\":\"Available\"}}"));
	ctl_cache(w, pvs, fixture_parse("{\"metadata\":{\"name\":\"p3\",\"uid\":\"p3\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":\"b\",\"volumeMode\":"
	    "\"Filesystem\",\"nfs\":{\"server\":\"s\",\"path\":\"/\"}},"
	    "\"status\":{\"phase\":\"Released\"}}"));
	ctl_cache(w, pvs, fixture_parse("{\"metadata\":{\"name\":\"p4\",\"uid\":\"p4\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":\"b\",\"volumeMode\":"
	    "\"Filesystem\",\"gcePersistentDisk\":{\"pdName\":\"x\"}},"
	    "\"status\":{\"phase\":\"Failed\"}}"));
	ctl_cache(w, pvcs, fixture_parse("{\"metadata\":{\"name\":\"c1\",\"namespace\":\"ns1\","
	    "\"uid\":\"c1\",\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":\"a\"},"
	    "\"status\":{\"phase\":\"Bound\"}}"));
	ctl_cache(w, pvcs, fixture_parse("{\"metadata\":{\"name\":\"c2\",\"namespace\":\"ns1\","
	    "\"uid\":\"c2\",\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":\"a\"},"
	    "\"status\":{\"phase\":\"Pending\"}}"));
	ctl_cache(w, pvcs, fixture_parse("{\"metadata\":{\"name\":\"c3\",\"namespace\":\"ns2\","
	    "\"uid\":\"c3\",\"resourceVersion\":\"1\",\"annotations\":{"
	    "\"volume.beta.kubernetes.io/storage-class\":\"old\"}},\"spec\":{"
	    "\"storageClassName\":\"a\",\"volumeAttributesClassName\":\"gold\"},"
	    "\"status\":{\"phase\":\"Lost\"}}"));
	metrics_render(registry, &out);
	for (size_t i = 0; i < NELEM(want); i++) {
		if (strstr(out.data, want[i]) == NULL)
			fail_msg("no %s in:\n%s", want[i], out.data);
	}
	assert_non_null(strstr(out.data, "# HELP pv_collector_bound_pv_count [ALPHA] Gauge "
	    "measuring number of persistent volume currently bound\n"));
	/* Recounted at each scrape: the bound volume gone, its class is not reported. */
	ctl_uncache(w, pvs, "p1");
	buf_reset(&out);
	metrics_render(registry, &out);
	assert_null(strstr(out.data, "pv_collector_bound_pv_count"));
	assert_non_null(strstr(out.data, "pv_collector_unbound_pv_count{storage_class=\"b\"} 2\n"));
	buf_free(&out);
	ctl_world_free(w);
	metrics_registry_free(registry);
}

/* volume_operation_total_seconds: a provisioning timed from its hand-over to the
 * provisioner until the claim binds to the volume made (kube's operationTimestamps, 12-1);
 * one whose claim is deleted first is forgotten (5-8); a deletion handed to the
 * provisioner timed until the volume is gone. */
static void
provisioning_is_timed(void **state)
{
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { .metrics = registry };
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, &config);
	struct claim c = C("claim-p", "uid-p", "1Gi", "", "Pending", "fast");
	struct claim gone = C("claim-q", "uid-q", "1Gi", "", "Pending", "fast");
	struct vol v = V("volume-p", "1Gi", "uid-p", "claim-p", "Available", "Delete", "fast");
	struct buf out = { 0 };

	(void)state;
	ctl_cache(w, resource_find("storageclasses"), class_new("fast", "vendor.com/fast",
	    "Immediate", 0));
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&c, NULL));
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&gone, NULL));
	ctl_sync(w, "default/claim-p", NOW);	/* handed over */
	ctl_sync(w, "default/claim-q", NOW);
	ctl_tell(w, INFORMER_DELETED, resource_find("persistentvolumeclaims"),
	    claim_new(&gone, NULL), NULL);
	ctl_cache(w, resource_find("persistentvolumes"), vol_new(&v, "vendor.com/fast"));
	ctl_sync(w, "default/claim-p", NOW + 7);	/* the volume found: bound */
	metrics_render(registry, &out);
	if (strstr(out.data, "volume_operation_total_seconds_count{operation_name="
	    "\"provision\",plugin_name=\"vendor.com/fast\"} 1\n") == NULL ||
	    strstr(out.data, "volume_operation_total_seconds_sum{operation_name="
	    "\"provision\",plugin_name=\"vendor.com/fast\"} 7\n") == NULL ||
	    strstr(out.data, "volume_operation_total_seconds_bucket{operation_name="
	    "\"provision\",plugin_name=\"vendor.com/fast\",le=\"5\"} 0\n") == NULL)
		fail_msg("no provisioning of 7 s in:\n%s", out.data);
	/* bound again: not timed twice */
	ctl_sync(w, "default/claim-p", NOW + 9);
	buf_free(&out);
	metrics_render(registry, &out);
	assert_non_null(strstr(out.data, "volume_operation_total_seconds_count{operation_name="
	    "\"provision\",plugin_name=\"vendor.com/fast\"} 1\n"));
	buf_free(&out);
	/* claim-q, deleted before it bound, made again: timed from its new hand-over */
	{
		struct vol q = V("volume-q", "1Gi", "uid-q", "claim-q", "Available", "Delete",
		    "fast");

		ctl_sync(w, "default/claim-q", NOW + 20);
		ctl_cache(w, resource_find("persistentvolumes"), vol_new(&q, "vendor.com/fast"));
		ctl_sync(w, "default/claim-q", NOW + 21);
		metrics_render(registry, &out);
		if (strstr(out.data, "volume_operation_total_seconds_sum{operation_name="
		    "\"provision\",plugin_name=\"vendor.com/fast\"} 8\n") == NULL)
			fail_msg("claim-q's provisioning not 1 s");
		buf_free(&out);
	}
	/* a Released volume of Delete handed to its provisioner, timed until it is gone */
	{
		struct vol r = V("volume-r", "1Gi", "uid-x", "claim-x", "Released", "Delete",
		    "fast", PB);
		cJSON *released = vol_new(&r, "vendor.com/fast");

		ctl_cache(w, resource_find("persistentvolumes"), cJSON_Duplicate(released, 1));
		ctl_sync(w, "volume-r", NOW + 10);
		ctl_tell_at(w, INFORMER_DELETED, resource_find("persistentvolumes"), released,
		    NULL, NOW + 13);
		metrics_render(registry, &out);
		if (strstr(out.data, "volume_operation_total_seconds_sum{operation_name="
		    "\"delete\",plugin_name=\"vendor.com/fast\"} 3\n") == NULL)
			fail_msg("no deletion of 3 s");
		buf_free(&out);
	}
	ctl_world_free(w);
	metrics_registry_free(registry);
}

/* A default class given to a claim counts in retroactive_storageclass_total once written,
 * and in both it and _errors_total when the write fails. */
static void
retroactive_class_is_counted(void **state)
{
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { .metrics = registry };
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, &config);
	struct claim c = C("claim-d", "uid-d", "1Gi", "", "Pending", NULL, NULL);

	(void)state;
	ctl_cache(w, resource_find("storageclasses"), class_new("default-sc", "vendor.com/d",
	    "Immediate", 1));
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&c, NULL));
	ctl_sync(w, "default/claim-d", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_non_null(w->result.writes[0].count_done);
	assert_ptr_equal(w->result.writes[0].count_failed[0], w->result.writes[0].count_done);
	assert_non_null(w->result.writes[0].count_failed[1]);
	assert_ptr_not_equal(w->result.writes[0].count_failed[1],
	    w->result.writes[0].count_done);
	ctl_world_free(w);
	metrics_registry_free(registry);
}

/* --- sqlkcm's own --------------------------------------------------------------------- */

/* The handlers queue a claim, and the volume it named when it is deleted; a volume, and
 * the claim its claimRef names. */
static void
handlers_queue_claims_and_volumes(void **state)
{
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	const struct resource *pvs = resource_find("persistentvolumes");
	const struct resource *pvcs = resource_find("persistentvolumeclaims");
	struct claim c = C("c1", "u1", "1Gi", "v1", "Bound", NULL, NULL);
	struct vol v = V("v1", "1Gi", "u1", "c1", "Bound", "Retain", "", NULL);
	char *keys;

	(void)state;
	ctl_tell(w, INFORMER_ADDED, pvcs, claim_new(&c, NULL), NULL);
	ctl_tell(w, INFORMER_DELETED, pvcs, claim_new(&c, NULL), NULL);
	ctl_tell(w, INFORMER_UPDATED, pvs, vol_new(&v, NULL), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/c1,v1");
	free(keys);
	ctl_world_free(w);
}

/* Every claim and volume is listed for plan and resyncs. */
static void
list_keys_lists_claims_and_volumes(void **state)
{
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	struct claim c = C("c1", "u1", "1Gi", "", "Pending", NULL, NULL);
	struct vol v = V("v1", "1Gi", "", "", "Available", "Retain", "", NULL);
	char *keys;

	(void)state;
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&c, NULL));
	ctl_cache(w, resource_find("persistentvolumes"), vol_new(&v, NULL));
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/c1,v1");
	free(keys);
	ctl_world_free(w);
}

/* The view lists the candidates of a pending claim in the order the binder takes them. */
static void
view_lists_candidates_in_order(void **state)
{
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	struct claim c = C("c1", "u1", "1Gi", "", "Pending", NULL, NULL);
	struct vol vs[] = {
		V("big", "10Gi", "", "", "Available", "Retain", "", NULL),
		V("small", "2Gi", "", "", "Available", "Retain", "", NULL),
		V("tiny", "512Mi", "", "", "Available", "Retain", "", NULL),
		V("gold", "1Gi", "", "", "Available", "Retain", "gold", NULL),
		V("taken", "1Gi", "x", "other", "Bound", "Retain", "", NULL),
	};
	sqlite3_stmt *stmt;
	struct buf got = { 0 };

	(void)state;
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&c, NULL));
	for (size_t i = 0; i < NELEM(vs); i++)
		ctl_cache(w, resource_find("persistentvolumes"), vol_new(&vs[i], NULL));
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store),
	    "SELECT volume_name FROM persistentvolume_claim_candidates WHERE claim_name = 'c1'"
	    " ORDER BY access_mode_count, prebound DESC, capacity_bytes, volume_name", -1,
	    &stmt, NULL), SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&got, "%s%s", got.len > 0 ? "," : "", sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	assert_string_equal(got.data, "small,big");
	buf_free(&got);
	ctl_world_free(w);
}

/* A volume chosen for one claim is not matched to another while the cache does not show
 * it bound (kube's controller writes its bindings into its own cache); after 10 s it may
 * be, the apiserver's resourceVersion check deciding. */
static void
volume_chosen_is_kept_from_other_claims(void **state)
{
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	struct claim c1 = C("c1", "u1", "1Gi", "", "Pending", NULL, NULL);
	struct claim c2 = C("c2", "u2", "1Gi", "", "Pending", NULL, NULL);
	struct vol v = V("v1", "1Gi", "", "", "Available", "Retain", "", NULL);

	(void)state;
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&c1, NULL));
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim_new(&c2, NULL));
	ctl_cache(w, resource_find("persistentvolumes"), vol_new(&v, NULL));
	ctl_sync(w, "default/c1", NOW);
	assert_true(w->result.nwrites > 0);
	assert_string_equal(w->result.writes[0].name, "v1");
	ctl_sync(w, "default/c2", NOW + 1);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "FailedBinding");
	ctl_sync(w, "default/c1", NOW + 2);	/* its own: still its */
	assert_true(w->result.nwrites > 0);
	ctl_sync(w, "default/c2", NOW + 13);
	assert_true(w->result.nwrites > 0);
	assert_string_equal(w->result.writes[0].name, "v1");
	ctl_world_free(w);
}

/* The binder's reads of the volumes go by schema/032's indexes: the free volumes of a
 * class, and the volumes pre-bound to a claim, not every volume. */
static void
volume_reads_use_the_indexes(void **state)
{
	struct ctl_world *w = ctl_world_new(&persistentvolume_controller_type, NULL);
	sqlite3 *db = store_db(w->store);
	sqlite3_stmt *s = NULL, *plan;
	int free_seen = 0, prebound_seen = 0;

	(void)state;
	while ((s = sqlite3_next_stmt(db, s)) != NULL) {
		const char *sql = sqlite3_sql(s);
		char *eqp;
		struct buf got = { 0 };

		if (strstr(sql, "resource = 'persistentvolumes' AND namespace = ''") == NULL ||
		    (strstr(sql, "'Available'") == NULL && strstr(sql, "claimRef.name") == NULL))
			continue;
		eqp = xasprintf("EXPLAIN QUERY PLAN %s", sql);
		assert_int_equal(sqlite3_prepare_v2(db, eqp, -1, &plan, NULL), SQLITE_OK);
		while (sqlite3_step(plan) == SQLITE_ROW)
			buf_printf(&got, "%s;", sqlite3_column_text(plan, 3));
		sqlite3_finalize(plan);
		free(eqp);
		if (strstr(sql, "'Available'") != NULL) {
			free_seen = 1;
			if (strstr(got.data, "USING INDEX persistentvolume_free") == NULL)
				fail_msg("the free volumes' read: %s", got.data);
		} else {
			prebound_seen = 1;
			if (strstr(got.data, "USING INDEX persistentvolume_claim_ref") == NULL)
				fail_msg("the pre-bound volumes' read: %s", got.data);
		}
		buf_free(&got);
	}
	assert_true(free_seen && prebound_seen);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(binder_cases) + NELEM(migration_cases) +
	    NELEM(finalizer_cases) + NELEM(recycle_cases) + 9];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(binder_cases); i++) {
		tests[n].name = binder_cases[i].name;
		tests[n].test_func = binder_row;
		tests[n].setup_func = NULL;
		tests[n].teardown_func = NULL;
		tests[n].initial_state = (void *)&binder_cases[i];
		n++;
	}
	for (size_t i = 0; i < NELEM(recycle_cases); i++) {
		tests[n].name = recycle_cases[i].name;
		tests[n].test_func = recycle_row;
		tests[n].setup_func = NULL;
		tests[n].teardown_func = NULL;
		tests[n].initial_state = (void *)&recycle_cases[i];
		n++;
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(recycler_timeout_per_gib);
	for (size_t i = 0; i < NELEM(migration_cases); i++) {
		tests[n].name = migration_cases[i].name;
		tests[n].test_func = migration_row;
		tests[n].setup_func = NULL;
		tests[n].teardown_func = NULL;
		tests[n].initial_state = (void *)&migration_cases[i];
		n++;
	}
	for (size_t i = 0; i < NELEM(finalizer_cases); i++) {
		tests[n].name = finalizer_cases[i].name;
		tests[n].test_func = finalizer_row;
		tests[n].setup_func = NULL;
		tests[n].teardown_func = NULL;
		tests[n].initial_state = (void *)&finalizer_cases[i];
		n++;
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(pv_collector_counts_the_cache);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(retroactive_class_is_counted);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(provisioning_is_timed);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(handlers_queue_claims_and_volumes);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(list_keys_lists_claims_and_volumes);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(view_lists_candidates_in_order);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(volume_reads_use_the_indexes);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(volume_chosen_is_kept_from_other_claims);
	return _cmocka_run_group_tests("persistentvolume", tests, n, NULL, NULL);
}
