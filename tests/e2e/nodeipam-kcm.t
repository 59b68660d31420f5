#!/usr/bin/env bash
# nodeipam-kcm.t - kube-controller-manager 1.36's node-ipam-controller ends in the states
# nodeipam.t asserts for sqlkcm's nodeipam: the same nodes, the same blocks, the same
# restart, run against kube-controller-manager (--controllers=node-ipam-controller).
# e2e: locks nodeipam nodes
E2E_IPAM_CM=kcm exec bash "$(dirname "$0")/nodeipam.t"
