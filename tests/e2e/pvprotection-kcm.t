#!/usr/bin/env bash
# pvprotection-kcm.t - kube-controller-manager 1.36's persistentvolume-protection-controller
# and volumeattributesclass-protection-controller end in the states pvprotection.t asserts
# for sqlkcm's: the same scenario (a finalizer put back, a Bound volume kept until Released,
# an Available one let go, a class kept while a claim names it), the same checks, run
# against kube-controller-manager.
# e2e: locks pv-protection volumeattributesclass-protection persistentvolume-binder
E2E_PVP_CM=kcm exec bash "$(dirname "$0")/pvprotection.t"
