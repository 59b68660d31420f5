#!/usr/bin/env bash
# serviceaccounttoken.t - the service account token controller: a Secret of type
# kubernetes.io/service-account-token naming a ServiceAccount gets a legacy token signed
# with --service-account-private-key-file (the cluster's sa.key, whose public half the
# apiserver verifies with), which authenticates as the ServiceAccount; ca.crt is
# --root-ca-file's and namespace the Secret's. A token Secret naming a ServiceAccount that
# does not exist, or one of another uid, is deleted, and so are a ServiceAccount's tokens
# when it is deleted. The token is never printed: it goes into a kubeconfig file.
# e2e: locks serviceaccount-token
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-satoken.XXXXXX")
ns=satoken-$RANDOM
cleanup() {
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
sqlkcm_start satoken --db "$work/cache.db" --controllers serviceaccount-token -v 2 \
    --service-account-private-key-file "$cluster/pki/sa.key" \
    --root-ca-file "$cluster/pki/ca.crt"
check "sqlkcm's caches synced" \
    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/satoken.log"

# token_secret NAME ACCOUNT [UID]: a token Secret naming ACCOUNT (and UID).
token_secret() {
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $1
  annotations:
    kubernetes.io/service-account.name: "$2"
${3:+    kubernetes.io/service-account.uid: "$3"}
type: kubernetes.io/service-account-token
YAML
}
data() { kubectl get secret "$1" -n "$ns" -o go-template="{{index .data \"$2\"}}"; }
gone() { ! kubectl get secret "$1" -n "$ns" >/dev/null 2>&1; }

kubectl create serviceaccount robot -n "$ns" >/dev/null
token_secret robot-token robot
check "the Secret gets a token" cluster_wait_until 60 "the token" eval \
    '[ -n "$(data robot-token token)" ]'
check "its namespace is the Secret's" cluster_wait_until 30 "the namespace" \
    eval '[ "$(data robot-token namespace | base64 -d)" = "'"$ns"'" ]'
check "its ca.crt is --root-ca-file's" \
    eval '[ "$(data robot-token ca.crt | base64 -d)" = "$(cat "$cluster/pki/ca.crt")" ]'
check "its annotations name the ServiceAccount's uid" eval \
    '[ "$(kubectl get secret robot-token -n '"$ns"' -o jsonpath="{.metadata.annotations.kubernetes\\.io/service-account\\.uid}")" = "$(kubectl get sa robot -n '"$ns"' -o jsonpath="{.metadata.uid}")" ]'

# A kubeconfig of the token alone (written by the shell: the token is no argument).
server=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
token=$(data robot-token token | base64 -d)
umask 077
printf '%s\n' "apiVersion: v1" "kind: Config" "clusters:" \
    "- name: c" "  cluster: {server: \"$server\", certificate-authority: \"$cluster/pki/ca.crt\"}" \
    "users:" "- name: u" "  user: {token: \"$token\"}" \
    "contexts:" "- name: x" "  context: {cluster: c, user: u}" "current-context: x" \
    >"$work/token.kubeconfig"
unset token
check "the token authenticates as the ServiceAccount" eval \
    '[ "$(kubectl --kubeconfig "$work/token.kubeconfig" auth whoami -o jsonpath="{.status.userInfo.username}")" = "system:serviceaccount:'"$ns"':robot" ]'
check "and reaches the API" \
    eval 'kubectl --kubeconfig "$work/token.kubeconfig" get --raw /api >/dev/null'
check "the log holds no token" eval '! grep -q "eyJ" "$work/satoken.log"'

token_secret ghost-token nobody
check "a token Secret naming no ServiceAccount that exists is deleted" \
    cluster_wait_until 60 "the deletion" gone ghost-token
kubectl create serviceaccount other -n "$ns" >/dev/null
token_secret stale-token other 00000000-0000-0000-0000-000000000000
check "one naming a ServiceAccount of another uid is deleted" \
    cluster_wait_until 60 "the deletion" gone stale-token

kubectl delete serviceaccount robot -n "$ns" >/dev/null
check "a ServiceAccount deleted takes its token Secret with it" \
    cluster_wait_until 60 "the deletion" gone robot-token
check "the token no longer authenticates (the apiserver finds no Secret of it)" \
    cluster_wait_until 30 "the refusal" eval \
    '! kubectl --kubeconfig "$work/token.kubeconfig" auth whoami >/dev/null 2>&1'

tap_done
