#!/usr/bin/env bash
# replicationcontroller-kcm.t - kube-controller-manager 1.36's replicationcontroller
# controller ends in the states replicationcontroller.t asserts for sqlkcm's: the same
# scenarios, the same checks.
# e2e: locks replicationcontroller
E2E_RC_CM=kcm exec bash "$(dirname "$0")/replicationcontroller.t"
