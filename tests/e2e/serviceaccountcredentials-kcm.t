#!/usr/bin/env bash
# serviceaccountcredentials-kcm.t - kube-controller-manager 1.36 with
# --use-service-account-credentials ends in the states serviceaccountcredentials.t asserts
# for sqlkcm: with its own kubeconfig (system:kube-controller-manager), the Deployment gets
# its pods, the ServiceAccounts deployment-controller and replicaset-controller exist, and
# the audit log shows the ReplicaSet, the pods and their events created under those
# identities; the same scenario and checks (--controllers=replicaset-controller,
# deployment-controller).
# e2e: locks replicaset deployment
E2E_SACREDS_CM=kcm exec bash "$(dirname "$0")/serviceaccountcredentials.t"
