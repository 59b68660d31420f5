#!/usr/bin/env bash
# ttl-kcm.t - kube-controller-manager 1.36's ttl-controller ends in the states ttl.t asserts
# for sqlkcm's ttl: the same scenario (a node joining a small cluster, an annotation changed
# by hand, the cluster grown past 100 nodes and shrunk below 90), the same checks, run
# against kube-controller-manager (--controllers=ttl-controller).
# e2e: locks ttl nodes
E2E_TTL_CM=kcm exec bash "$(dirname "$0")/ttl.t"
