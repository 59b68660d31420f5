/*
 * attachdetach.h - the attach/detach controller (kube's attachdetach-controller), for CSI
 * volumes and in-tree ones migrated to CSI: VolumeAttachments for the volumes pods use on
 * managed nodes, their detach by kube's reconciler rules, and the nodes'
 * status.volumesAttached.
 */
#ifndef SQLKCM_CONTROLLERS_ATTACHDETACH_H
#define SQLKCM_CONTROLLERS_ATTACHDETACH_H

#include "controller.h"

extern const struct controller_type attachdetach_controller_type;

/* The annotation that hands a node's attachments to this controller (value "true"). */
#define ATTACHDETACH_MANAGED_ANNOTATION "volumes.kubernetes.io/controller-managed-attach-detach"

/* kube's name of the VolumeAttachment of CSI volume handle, of driver, on node: "csi-"
 * then the hex SHA-256 of the three concatenated (malloc'd). */
char *attachdetach_attachment_name(const char *handle, const char *driver, const char *node);

#endif
