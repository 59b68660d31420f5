#!/usr/bin/env bash
# nodelifecycle-kcm.t - kube-controller-manager 1.36's node-lifecycle-controller ends in the
# states nodelifecycle.t asserts for sqlkcm's nodelifecycle: the same scenario (nodes that
# join tainted not-ready by admission, a late node that takes a pod, cordon and uncordon,
# memory pressure, taints of others, the beta labels), the same checks, run against
# kube-controller-manager (--controllers=node-lifecycle-controller,serviceaccount-controller).
#
# e2e: cluster-options --all-admission --nodes 3
E2E_NL_CM=kcm exec bash "$(dirname "$0")/nodelifecycle.t"
