#!/usr/bin/env bash
# garbagecollector-kcm.t - kube-controller-manager 1.36's garbage collector ends in the states
# garbagecollector.t asserts for sqlkcm's. The same scenarios (a Deployment deleted in the
# background, orphaned, in the foreground; a foreground deletion held by a dependent; a chain
# across kinds; references that never pointed at anything; two owners losing one; a custom
# resource whose CRD is created while it runs; a cluster-scoped object with a namespaced
# owner), the same checks, run against kube-controller-manager
# (--controllers=garbagecollector,deployment,replicaset): every value garbagecollector.t
# expects of sqlkcm is shown to be kcm's too, so the two end in the same state. The restart
# checks, which are about sqlkcm's stored cache, are skipped there.
E2E_GC_CM=kcm exec bash "$(dirname "$0")/garbagecollector.t"
