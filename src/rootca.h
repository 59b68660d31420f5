/*
 * rootca.h - the root CA file (--root-ca-file) as kube-controller-manager reads it: a
 * PEM text of at least one certificate, which the root CA publisher puts in every
 * namespace and the token controller in every service account token Secret.
 */
#ifndef SQLKCM_ROOTCA_H
#define SQLKCM_ROOTCA_H

#include <stddef.h>

/* The largest root CA file read (a ConfigMap holds 1 MiB at most). */
#define ROOTCA_FILE_MAX (1 << 20)

/* Checks that the n bytes at pem hold a certificate, as kube's ParseCertsPEM does: every
 * CERTIFICATE block without headers must be an X.509 certificate, and there must be one;
 * other blocks are skipped. -1 with *error saying what is wrong. */
int rootca_check_certificates(const char *pem, size_t n, char **error);

/* Reads the file path into *ca (malloc'd, text without a NUL), as kube's readCA: -1 with
 * *error saying why when it cannot be read or holds no certificate. */
int rootca_read_file(const char *path, char **ca, char **error);

#endif
