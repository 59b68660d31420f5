#!/usr/bin/env bash
# csrcleaner-kcm.t - kube-controller-manager 1.36's CSR cleaner ends in the states
# csrcleaner.t asserts for sqlkcm's: the same CSRs, the same checks, run against
# kube-controller-manager (--controllers=csrcleaner).
E2E_CSR_CM=kcm exec bash "$(dirname "$0")/csrcleaner.t"
