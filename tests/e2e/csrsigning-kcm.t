#!/usr/bin/env bash
# csrsigning-kcm.t - kube-controller-manager 1.36's certificatesigningrequest-signing-controller
# ends in the states csrsigning.t asserts for sqlkcm's csrsigning: the same CSRs (a kubelet's
# client CSR, a client CSR of 600 s, kubelet-serving CSRs that break its rules, one of an
# unknown signer, one pending), the same checks, run against kube-controller-manager
# (--controllers=csrsigning, the cluster CA's files).
# e2e: locks csr
E2E_CSR_CM=kcm exec bash "$(dirname "$0")/csrsigning.t"
