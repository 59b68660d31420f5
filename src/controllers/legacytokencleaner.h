/*
 * legacytokencleaner.h - the legacy service account token cleaner (kube's
 * legacy-serviceaccount-token-cleaner-controller): auto-generated service account token
 * Secrets unused for --legacy-service-account-token-clean-up-period are labelled invalid,
 * and deleted a period later.
 */
#ifndef SQLKCM_CONTROLLERS_LEGACYTOKENCLEANER_H
#define SQLKCM_CONTROLLERS_LEGACYTOKENCLEANER_H

#include "controller.h"

extern const struct controller_type legacytokencleaner_controller_type;

#endif
