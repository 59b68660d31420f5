#!/usr/bin/env bash
# pvcprotection-kcm.t - kube-controller-manager 1.36's
# persistentvolumeclaim-protection-controller ends in the states pvcprotection.t asserts
# for sqlkcm's: the same scenario (a finalizer put back, claims kept while a running or a
# finished pod uses them, one only an unscheduled pod names let go, an ephemeral volume's
# claim kept until its pod is shut down, one of that name the pod does not own let go),
# the same checks, run against kube-controller-manager.
# e2e: locks pvc-protection
E2E_PVCP_CM=kcm exec bash "$(dirname "$0")/pvcprotection.t"
