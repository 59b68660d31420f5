#!/usr/bin/env bash
# clusterroleaggregation-kcm.t - kube-controller-manager 1.36's
# clusterrole-aggregation-controller ends in the states clusterroleaggregation.t asserts
# for sqlkcm's: the same scenario and checks, run against kube-controller-manager
# (--controllers=clusterrole-aggregation-controller).
# e2e: locks clusterrole-aggregation
E2E_CRA_CM=kcm exec bash "$(dirname "$0")/clusterroleaggregation.t"
