/*
 * csrcleaner.h - the CSR cleaner (kube's certificatesigningrequest-cleaner-controller):
 * CertificateSigningRequests that are done with, or never will be, are deleted.
 */
#ifndef SQLKCM_CONTROLLERS_CSRCLEANER_H
#define SQLKCM_CONTROLLERS_CSRCLEANER_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type csrcleaner_controller_type;

/*
 * kube's rules for csr (a CertificateSigningRequest) at now (Unix seconds): 1 when it is
 * to be deleted, with *why saying by which rule; else 0, with *next the time (after now)
 * at which a rule will call for it, or 0 when none will.
 */
int csrcleaner_due(const cJSON *csr, double now, const char **why, double *next);

/* The notAfter of the first certificate of the PEM text a CSR's status.certificate holds
 * (base64 in its JSON: b64); -1 when there is none that parses. */
int csrcleaner_not_after(const char *b64, double *not_after);

#endif
