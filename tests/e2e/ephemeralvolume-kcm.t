#!/usr/bin/env bash
# ephemeralvolume-kcm.t - kube-controller-manager 1.36's ephemeral-volume-controller ends
# in the states ephemeralvolume.t asserts for sqlkcm's: the same scenario (a claim made
# from the template with the pod as controller, kube's FailedBinding for a claim the pod
# does not own, a deleted claim made again, none for a pod being deleted), the same
# checks, run against kube-controller-manager.
# e2e: locks ephemeral-volume
E2E_EPH_CM=kcm exec bash "$(dirname "$0")/ephemeralvolume.t"
