#!/usr/bin/env bash
# namespace-kcm.t - kube-controller-manager 1.36's namespace, serviceaccount,
# root-ca-cert-publisher and podgc controllers end in the states namespace.t asserts for
# sqlkcm's. The same scenarios (a pod admitted once the "default" ServiceAccount exists;
# kube-root-ca.crt published, restored after a deletion and edits, --root-ca-file after a
# restart; 20 Succeeded pods under --terminated-pod-gc-threshold=5; a pod whose node was
# deleted; an unscheduled pod being deleted; a namespace deleted with a Deployment,
# ConfigMaps, custom resources and a pod, a ConfigMap and a custom resource held by a
# finalizer), the same checks, run against kube-controller-manager
# (--controllers=namespace,serviceaccount,root-ca-cert-publisher,podgc,deployment,replicaset):
# every value namespace.t expects of sqlkcm is shown to be kcm's too. The checks about
# sqlkcm's own exit and log are skipped there.
#
# e2e: cluster-options --service-account-admission --nodes 2
E2E_NS_CM=kcm exec bash "$(dirname "$0")/namespace.t"
