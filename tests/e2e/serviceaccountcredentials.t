#!/usr/bin/env bash
# serviceaccountcredentials.t - --use-service-account-credentials: sqlkcm runs with
# kube-controller-manager's own kubeconfig (the user system:kube-controller-manager, whose
# bootstrap ClusterRole may list and watch everything and ask for ServiceAccount tokens,
# but may not create ReplicaSets or pods), so the Deployment and ReplicaSet controllers
# can only do their work as their own ServiceAccounts, under the system:controller:*
# ClusterRoles the apiserver's bootstrap policy binds to them. The ServiceAccounts are
# made in kube-system under kube's names, the Deployment gets its ReplicaSet and pods,
# the apiserver's audit log shows the ReplicaSet created by
# system:serviceaccount:kube-system:deployment-controller and the pods and their events
# by ...:replicaset-controller (User-Agent sqlkcm/VERSION/system:serviceaccount:...), and
# no token appears in sqlkcm's log at -v 6. With E2E_SACREDS_CM=kcm the same scenario and
# checks run against kube-controller-manager (serviceaccountcredentials-kcm.t), whose
# User-Agent starts kube-controller-manager/ where sqlkcm's starts sqlkcm/.
# e2e: locks replicaset deployment
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-sacreds.XXXXXX")
ns=sacreds-$RANDOM
cleanup() {
	kcm_stop sa
	kubectl delete deployment -n "$ns" --all --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT
kubectl create namespace "$ns" >/dev/null

cm=${E2E_SACREDS_CM:-sqlkcm}
agent=sqlkcm/
[ "$cm" = kcm ] && agent=kube-controller-manager/
kcm_user=system:kube-controller-manager
kcm_kubeconfig=$cluster/controller-manager.kubeconfig
check "kube-controller-manager's own user may not create pods" \
    test "$(kubectl auth can-i create pods -n "$ns" --as "$kcm_user")" = no
check "nor ReplicaSets" \
    test "$(kubectl auth can-i create replicasets.apps -n "$ns" --as "$kcm_user")" = no
check "but may ask for ServiceAccount tokens in kube-system" \
    test "$(kubectl auth can-i create serviceaccounts/token -n kube-system --as "$kcm_user")" = yes

# audit_creates RESOURCE USER: how many creates of RESOURCE in the test's namespace the
# audit log shows by USER with the manager's User-Agent for that user.
audit_creates() {
	cat "$cluster"/logs/audit*.log 2>/dev/null | python3 -c '
import json, sys
resource, user, ns, agent = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
n = 0
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    ref = e.get("objectRef", {})
    if (e.get("verb") == "create" and ref.get("resource") == resource
            and ref.get("namespace") == ns and e.get("user", {}).get("username") == user
            and e.get("userAgent", "").startswith(agent)
            and e.get("userAgent", "").endswith("/" + user)
            and e.get("responseStatus", {}).get("code") == 201):
        n += 1
print(n)' "$1" "$2" "$ns" "$agent"
}

if [ "$cm" = kcm ]; then
	kcm_start sa --kubeconfig="$kcm_kubeconfig" --use-service-account-credentials \
	    --controllers=replicaset-controller,deployment-controller --v=2
else
	sqlkcm_start sa --kubeconfig "$kcm_kubeconfig" --db "$work/cache.db" \
	    --controllers replicaset,deployment --use-service-account-credentials --v 6
fi

kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: c, image: pause}]
EOF

pods_made() {
	[ "$(kubectl get pods -n "$ns" -l app=web -o name | wc -l)" -eq 2 ]
}
check "the Deployment gets its two pods" cluster_wait_until 90 "two pods" pods_made
check "the ServiceAccount kube-system/deployment-controller exists" \
    kubectl get serviceaccount -n kube-system deployment-controller
check "and kube-system/replicaset-controller" \
    kubectl get serviceaccount -n kube-system replicaset-controller

sa=system:serviceaccount:kube-system
audit_shows() {
	[ "$(audit_creates "$1" "$2")" -ge "$3" ]
}
check "the audit log shows the ReplicaSet created by the deployment-controller" \
    cluster_wait_until 30 "the audit log" audit_shows replicasets "$sa:deployment-controller" 1
check "and the two pods by the replicaset-controller" \
    cluster_wait_until 30 "the audit log" audit_shows pods "$sa:replicaset-controller" 2
check "and the pods' events by the replicaset-controller" \
    cluster_wait_until 30 "the audit log" audit_shows events "$sa:replicaset-controller" 1
check "no forbidden write in $cm's log" \
    sh -c "! grep -i 'forbidden' '$work/sa.log'"
# A JWT (every token the apiserver issues) starts with the base64 of '{"': eyJ.
check "no token in $cm's log" sh -c "! grep -q 'eyJ' '$work/sa.log'"
if [ "$cm" = kcm ]; then
	check "kube-controller-manager is still running" \
	    kill -0 "$(cat "$cluster/pids/kcm-$test_name-sa.pid")"
	kcm_stop sa
else
	check "sqlkcm is still running" kill -0 "$(cat "$(sqlkcm_pidfile sa)")"
	sqlkcm_stop sa
fi

tap_done
