#!/usr/bin/env bash
# csrapproving-kcm.t - kube-controller-manager 1.36's CSR approver (and signer) end in the
# states csrapproving.t asserts for sqlkcm's: the same CSRs, sent as the same identities,
# run against kube-controller-manager (--controllers=csrapproving,csrsigning).
# e2e: locks csr
E2E_APPROVE_CM=kcm exec bash "$(dirname "$0")/csrapproving.t"
