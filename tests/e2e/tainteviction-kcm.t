#!/usr/bin/env bash
# tainteviction-kcm.t - kube-controller-manager 1.36's taint-eviction-controller ends in the
# states tainteviction.t asserts for sqlkcm's: the same scenario (a pod deleted at once, one
# after its tolerationSeconds, one tolerated forever, a deletion cancelled by the taint's
# removal), the same checks, run against kube-controller-manager
# (--controllers=taint-eviction-controller,daemonset-controller: see tainteviction.t).
# e2e: locks tainteviction daemonset nodes
E2E_TE_CM=kcm exec bash "$(dirname "$0")/tainteviction.t"
