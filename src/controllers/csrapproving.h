/*
 * csrapproving.h - the CSR approver (kube's certificatesigningrequest-approving-controller,
 * alias csrapproving): kubelets' client CSRs approved once a SubjectAccessReview says the
 * requester may have them.
 */
#ifndef SQLKCM_CONTROLLERS_CSRAPPROVING_H
#define SQLKCM_CONTROLLERS_CSRAPPROVING_H

#include <cjson/cJSON.h>

#include "controller.h"

/* kube's recognizers, in the order it tries them. */
enum csrapproving_kind {
	CSRAPPROVING_SELF_NODE_CLIENT,	/* a node asking for its own client certificate */
	CSRAPPROVING_NODE_CLIENT,	/* anyone asking for a node's client certificate */
	CSRAPPROVING_KINDS
};

/*
 * Which of kube's recognizers take csr (a CertificateSigningRequest), as flags
 * (1 << kind): none when it is issued, approved or denied, not of the signer
 * kubernetes.io/kube-apiserver-client-kubelet, or not a kubelet's client request (kube's
 * IsKubeletClientCSR: O=system:nodes alone, CN system:node:..., no SANs, the usages of a
 * kubelet's client); self-node-client also wants spec.username to be the CN. -1 with
 * *error when its request does not parse (kube's sync fails then, and retries).
 */
int csrapproving_recognize(const cJSON *csr, char **error);

/* The SubjectAccessReview kube sends for kind about csr (malloc'd). */
cJSON *csrapproving_review(const cJSON *csr, enum csrapproving_kind kind);

/* The subresource and the approval message of kind, as kube's. */
const char *csrapproving_subresource(enum csrapproving_kind kind);
const char *csrapproving_message(enum csrapproving_kind kind);

extern const struct controller_type csrapproving_controller_type;

#endif
