#!/usr/bin/env bash
# rbac.t - the in-cluster manifests (contrib/kubernetes/): their RBAC rules are enough for
# the ReplicaSet and Deployment controllers, leader election and the reviews of who may read /metrics, and
# grant nothing more; rbac-garbagecollector.yaml's are enough for the garbage collector. sqlkcm runs with
# the ServiceAccount's own token, as it would in the Deployment, on the control plane with
# RBAC on; the Deployment manifest is checked by the apiserver (server-side dry run).
# rbac-namespace.yaml, rbac-serviceaccount.yaml, rbac-root-ca-cert-publisher.yaml and
# rbac-podgc.yaml are enough for those four controllers, rbac-replicationcontroller.yaml
# for ReplicationControllers, rbac-nodelifecycle.yaml for the node lifecycle controller,
# rbac-ttl.yaml for the TTL controller, rbac-taint-eviction-controller.yaml,
# rbac-csrcleaner.yaml, rbac-nodeipam.yaml, rbac-csrsigning.yaml and
# rbac-csrapproving.yaml for theirs, rbac-daemonset.yaml for the DaemonSet controller;
# rbac-endpoint.yaml, rbac-endpointslice.yaml and rbac-endpointslicemirroring.yaml for the
# Endpoints, EndpointSlice and mirroring controllers; rbac-ttl-after-finished.yaml for the
# TTL-after-finished controller; rbac-job.yaml for the Job controller; rbac-cronjob.yaml
# for the CronJob controller; rbac-disruption.yaml for the disruption controller;
# rbac-resourcequota.yaml for the resource quota controller; rbac-statefulset.yaml for
# the StatefulSet controller; rbac-clusterrole-aggregation.yaml for the ClusterRole
# aggregation controller; rbac-serviceaccount-token.yaml for the token controller;
# rbac-pv-protection.yaml, rbac-volumeattributesclass-protection.yaml and
# rbac-pvc-protection.yaml for the PersistentVolume, VolumeAttributesClass and
# PersistentVolumeClaim protection controllers; rbac-ephemeral-volume.yaml for the
# ephemeral volume controller; rbac-persistentvolume-expander.yaml for the volume expand
# controller;
# rbac-legacy-service-account-token-cleaner.yaml for the legacy token cleaner;
# rbac-service-cidr-controller.yaml for the Service CIDR controller;
# rbac-persistentvolume-binder.yaml for the PersistentVolume binder;
# rbac-attachdetach.yaml for the attach/detach controller.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-rbac.XXXXXX")
ns=rbac-$RANDOM
sa=system:serviceaccount:sqlkcm-system:sqlkcm
ad_va=csi-$(printf '%s%s%s' "$ns-ad" "$ns.example.com" "$ns-ad" | sha256sum | cut -d' ' -f1)
manifests=$top/contrib/kubernetes
cleanup() {
	# The CronJob first: the namespace stays Terminating (no namespace controller runs),
	# and another test's CronJob controller would go on trying to create its Jobs.
	kubectl delete cronjobs -n "$ns" --all --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
	# Everything of rbac.yaml but the namespace: no namespace controller runs in the test
	# cluster, so a deleted namespace would stay Terminating and refuse the next run.
	kubectl delete clusterrolebinding,clusterrole sqlkcm:replicaset-controller \
	    sqlkcm:deployment-controller sqlkcm:garbage-collector --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:namespace-controller \
	    sqlkcm:service-account-controller sqlkcm:root-ca-cert-publisher \
	    sqlkcm:pod-garbage-collector sqlkcm:replicationcontroller-controller \
	    sqlkcm:node-controller sqlkcm:ttl-controller sqlkcm:taint-eviction-controller \
	    sqlkcm:csr-cleaner sqlkcm:node-ipam-controller sqlkcm:csr-signer \
	    sqlkcm:csr-approver sqlkcm:daemon-set-controller "$ns-bootstrappers" "$ns-bootstrap-csrs" \
	    sqlkcm:endpoint-controller sqlkcm:endpointslice-controller \
	    sqlkcm:endpointslicemirroring-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete pod -n "$ns" doomed-by-taint --grace-period=0 --force >/dev/null 2>&1
	kubectl delete node "$ns-node" "$ns-ipam" --wait=false >/dev/null 2>&1
	kubectl delete namespace "$ns-doomed" --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding sqlkcm:auth-delegator --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:ttl-after-finished-controller \
	    sqlkcm:job-controller --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:cronjob-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:disruption-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:resourcequota-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:statefulset-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole \
	    sqlkcm:clusterrole-aggregation-controller --wait=false >/dev/null 2>&1
	kubectl delete clusterrole "$ns-aggregated" "$ns-aggregated-part" --wait=false \
	    >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole \
	    sqlkcm:serviceaccount-token-controller --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole \
	    sqlkcm:legacy-service-account-token-cleaner --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:persistent-volume-binder \
	    --wait=false >/dev/null 2>&1
	kubectl patch pvc -n "$ns" "$ns-claim" --type merge \
	    -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
	kubectl patch pv "$ns-pv" --type merge -p '{"metadata":{"finalizers":null}}' \
	    >/dev/null 2>&1
	kubectl delete pv "$ns-pv" --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:service-cidrs-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete servicecidr "$ns-cidr" --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:pv-protection-controller \
	    sqlkcm:volumeattributesclass-protection-controller \
	    sqlkcm:pvc-protection-controller sqlkcm:ephemeral-volume-controller \
	    --wait=false >/dev/null 2>&1
	# Every claim of the namespace (the StatefulSet's, the ephemeral volume's): no
	# pvc-protection runs after the test to free them, and they would hold it.
	kubectl get pvc -n "$ns" -o name 2>/dev/null | while read -r c; do
		kubectl patch "$c" -n "$ns" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
	kubectl patch pvc "$ns-pvcp" -n "$ns" --type=json \
	    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	kubectl patch pv "$ns-pvp" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' \
	    >/dev/null 2>&1
	kubectl delete pv "$ns-pvp" --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:expand-controller \
	    --wait=false >/dev/null 2>&1
	kubectl patch pvc "$ns-exp" -n "$ns" --type merge \
	    -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
	kubectl patch pv "$ns-exp" --type merge -p '{"metadata":{"finalizers":null}}' \
	    >/dev/null 2>&1
	kubectl delete pv "$ns-exp" --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding,clusterrole sqlkcm:attachdetach-controller \
	    --wait=false >/dev/null 2>&1
	kubectl delete volumeattachment "$ad_va" --wait=false >/dev/null 2>&1
	kubectl delete node "$ns-ad" --wait=false >/dev/null 2>&1
	kubectl patch pv "$ns-ad" --type merge -p '{"metadata":{"finalizers":null}}' \
	    >/dev/null 2>&1
	kubectl delete pv "$ns-ad" --wait=false >/dev/null 2>&1
	kubectl delete storageclass "$ns-exp" --wait=false >/dev/null 2>&1
	[ -n "${tracking_since:-}" ] && kubectl patch configmap -n kube-system \
	    kube-apiserver-legacy-service-account-token-tracking --type=merge \
	    -p "{\"data\":{\"since\":\"$tracking_since\"}}" >/dev/null 2>&1
	kubectl patch job "$ns-ttl" -n "$ns" --type=merge -p '{"metadata":{"finalizers":null}}' \
	    >/dev/null 2>&1
	kubectl delete -n sqlkcm-system rolebinding,role sqlkcm:leader-election \
	    --wait=false >/dev/null 2>&1
	kubectl delete -n sqlkcm-system serviceaccount/sqlkcm lease/sqlkcm \
	    --wait=false >/dev/null 2>&1
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
check "the RBAC manifest applies" kubectl apply -f "$manifests/rbac.yaml"
check "the Deployment manifest passes the apiserver's validation (server-side dry run)" \
    kubectl apply --dry-run=server -f "$manifests/deployment.yaml"

# A kubeconfig with the ServiceAccount's token and nothing else of the admin's.
token=$(kubectl create token sqlkcm -n sqlkcm-system --duration=1h)
python3 - "$cluster/kubeconfig" "$work/kubeconfig" "$token" <<'PY'
import sys, yaml
src, dst, token = sys.argv[1], sys.argv[2], sys.argv[3]
cfg = yaml.safe_load(open(src))
cluster = cfg["clusters"][0]["cluster"]
out = {"apiVersion": "v1", "kind": "Config", "current-context": "sa",
       "clusters": [{"name": "c", "cluster": {"server": cluster["server"],
           "certificate-authority-data": cluster["certificate-authority-data"]}}],
       "users": [{"name": "sa", "user": {"token": token}}],
       "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}]}
with open(dst, "w") as f:
    yaml.safe_dump(out, f)
PY
chmod 600 "$work/kubeconfig"

# can / cannot VERB RESOURCE[/NAME] [ARGS]: the apiserver answers yes / no to the
# ServiceAccount (asked with its own token; an error is neither).
answer() {
	kubectl --kubeconfig "$work/kubeconfig" auth can-i "$@" 2>/dev/null
}
can() {
	[ "$(answer "$@")" = yes ]
}
cannot() {
	[ "$(answer "$@")" = no ]
}
check "it may create, delete, patch, list and watch pods" eval \
    'for v in create delete patch list watch; do can $v pods -n '"$ns"' || exit 1; done'
check "it may get, list and watch ReplicaSets and update their status" eval \
    'for v in get list watch; do can $v replicasets.apps -n '"$ns"' || exit 1; done;
     can update replicasets.apps --subresource=status -n '"$ns"
check "it may create, patch and delete ReplicaSets, and update Deployments and their status" eval \
    'for v in create patch delete; do can $v replicasets.apps -n '"$ns"' || exit 1; done;
     for v in get list watch update; do can $v deployments.apps -n '"$ns"' || exit 1; done;
     can update deployments.apps --subresource=status -n '"$ns"
check "it may create and patch events" eval \
    'can create events -n '"$ns"' && can patch events -n '"$ns"
check "it may create Leases in sqlkcm-system and update only its own" eval \
    'can create leases.coordination.k8s.io -n sqlkcm-system &&
     can update leases.coordination.k8s.io/sqlkcm -n sqlkcm-system &&
     cannot update leases.coordination.k8s.io/kube-controller-manager -n sqlkcm-system'
check "it may not touch Leases elsewhere (kube-controller-manager's in kube-system)" eval \
    'cannot get leases.coordination.k8s.io -n kube-system &&
     cannot update leases.coordination.k8s.io/kube-controller-manager -n kube-system'
check "it may not read secrets, update pods or pod status, replace ReplicaSets or touch StatefulSets" eval \
    'cannot get secrets -n '"$ns"' && cannot list secrets -A && cannot update pods -n '"$ns"' &&
     cannot update pods --subresource=status -n '"$ns"' &&
     cannot update replicasets.apps -n '"$ns"' && cannot delete deployments.apps -n '"$ns"' &&
     cannot patch deployments.apps -n '"$ns"' && cannot list statefulsets.apps -n '"$ns"' &&
     cannot create pods --subresource=eviction -n '"$ns"' && cannot list nodes'

# Nothing more: every rule the apiserver reports for it, beyond what every authenticated
# user gets (system:basic-user, system:discovery, system:public-info-viewer), is one of
# the rules of rbac.yaml.
granted() {
	kubectl --kubeconfig "$work/kubeconfig" auth can-i --list -n "$1" | python3 -c '
import re, sys
rows = sys.stdin.read().splitlines()[1:]
everyone = {"selfsubjectreviews.authentication.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io",
            "selfsubjectrulesreviews.authorization.k8s.io"}
for row in rows:
    cols = re.split(r"\s{2,}", row.strip())
    if len(cols) < 4 or cols[0] in everyone:
        continue   # a non-resource URL row, or what every user may do
    verbs = " ".join(sorted(cols[3].strip("[]").split()))
    print(f"{cols[0]} {cols[2]} {verbs}")' | sort
}
cat >"$work/want-ns" <<'WANT'
events [] create patch
pods [] create delete list patch watch
replicasets.apps/finalizers [] update
replicasets.apps/status [] update
replicasets.apps [] create delete get list patch watch
deployments.apps/finalizers [] update
deployments.apps/status [] update
deployments.apps [] get list update watch
subjectaccessreviews.authorization.k8s.io [] create
tokenreviews.authentication.k8s.io [] create
WANT
sort -o "$work/want-ns" "$work/want-ns"
{ cat "$work/want-ns"; printf '%s\n' 'leases.coordination.k8s.io [] create' \
    'leases.coordination.k8s.io [sqlkcm] get update'; } | sort >"$work/want-system"
check "in a namespace of workloads it has exactly the rules of rbac.yaml" \
    diff "$work/want-ns" <(granted "$ns")
check "in sqlkcm-system it has those and the Lease rules, nothing more" \
    diff "$work/want-system" <(granted sqlkcm-system)

# The controller at work with those rights only.
cat >"$work/rs.yaml" <<'RS'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 5
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: c, image: pause}]
RS
port=$(cluster_free_port)
sqlkcm_start sa --kubeconfig "$work/kubeconfig" --db "$work/cache.db" \
    --controllers replicaset,deployment --leader-elect=true \
    --leader-elect-resource-namespace=sqlkcm-system \
    --leader-elect-resource-name=sqlkcm --secure-port "$port" -v 2
kubectl apply -n "$ns" -f "$work/rs.yaml" >/dev/null

ready_is() {
	[ "$(kubectl get rs -n "$ns" web -o jsonpath='{.status.readyReplicas}')" = "$1" ] &&
	    [ "$(kubectl get pods -n "$ns" -l app=web -o name | wc -l)" = "$1" ]
}
check "it takes the Lease in sqlkcm-system" cluster_wait_until 30 "the lease" eval \
    '[ -n "$(kubectl get lease -n sqlkcm-system sqlkcm -o jsonpath="{.spec.holderIdentity}" 2>/dev/null)" ]'
check "it creates the 5 pods and writes the status" cluster_wait_until 60 "5 ready" ready_is 5
kubectl run orphan -n "$ns" --image=pause --labels=app=web >/dev/null
kubectl scale rs -n "$ns" web --replicas=3 >/dev/null
check "it adopts an orphan and scales down to 3 (patch and delete allowed)" \
    cluster_wait_until 60 "3 ready" ready_is 3
check "its events are recorded" cluster_wait_until 30 "SuccessfulCreate events" eval \
    'kubectl get events -n '"$ns"' --field-selector reason=SuccessfulCreate -o name | grep -q .'
kubectl create deployment -n "$ns" dep --image=pause --replicas=2 >/dev/null
check "it rolls out a Deployment (ReplicaSet creation, status) with those rights" \
    kubectl rollout status -n "$ns" deploy/dep --timeout=60s
kubectl set image -n "$ns" deploy/dep pause=pause:2 >/dev/null
check "and a new revision (scaling patches)" \
    kubectl rollout status -n "$ns" deploy/dep --timeout=60s
# metrics_as TOKEN: the status of GET /metrics with TOKEN as bearer token.
metrics_as() {
	curl -sk --max-time 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" \
	    "https://127.0.0.1:$port/metrics"
}
check "it may review tokens: /metrics for the admin's token (system:masters) is 200" \
    test "$(metrics_as "$(cat "$cluster/token")")" = 200
check "and access: /metrics for its own token is 403 (not allowed), not 500" \
    test "$(metrics_as "$token")" = 403
check "no request of sqlkcm was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/sa.log" | grep -v "being terminated"'
check "its log never shows the token" eval '! grep -F -q -- "$token" "$work/sa.log"'
sqlkcm_stop sa
status=$?
check "SIGTERM: exit 0" test "$status" = 0
check "SIGTERM released the Lease for a standby" eval \
    '[ -z "$(kubectl get lease -n sqlkcm-system sqlkcm -o jsonpath="{.spec.holderIdentity}")" ]'

# The garbage collector's own manifest: with it, the collector works under the same
# ServiceAccount (every resource's metadata watched, owners confirmed, dependents deleted
# and patched), and nothing it asks for is forbidden.
check "rbac-garbagecollector.yaml applies" \
    kubectl apply -f "$manifests/rbac-garbagecollector.yaml"
check "with it, it may list, watch, get, patch and delete any resource, and update none" eval \
    'cluster_wait_until 30 "the role" can delete configmaps -n '"$ns"' &&
     for v in get list watch patch delete; do can $v widgets.example.com -n '"$ns"' || exit 1; done;
     cannot update configmaps -n '"$ns"' && cannot update secrets -n '"$ns"
sqlkcm_start gcsa --kubeconfig "$work/kubeconfig" --db "$work/gc.db" \
    --controllers garbagecollector,replicaset,deployment -v 2
check "the collector syncs every resource's metadata with those rights" \
    cluster_wait_until 90 "its caches" grep -q "controller=garbagecollector: caches synced" \
    "$work/gcsa.log"
kubectl create secret generic -n "$ns" owner >/dev/null
owner_uid=$(kubectl get secret -n "$ns" owner -o jsonpath='{.metadata.uid}')
kubectl create -n "$ns" -f - >/dev/null <<CM
apiVersion: v1
kind: ConfigMap
metadata:
  name: owned
  ownerReferences: [{apiVersion: v1, kind: Secret, name: owner, uid: $owner_uid}]
CM
kubectl delete deployment -n "$ns" dep --wait=false >/dev/null
kubectl delete secret -n "$ns" owner >/dev/null
check "it collects a ConfigMap whose Secret is deleted" cluster_wait_until 60 "the ConfigMap" \
    eval '! kubectl get configmap -n '"$ns"' owned >/dev/null 2>&1'
check "and a deleted Deployment's ReplicaSets" cluster_wait_until 60 "dep's ReplicaSets" \
    eval '[ -z "$(kubectl get rs -n '"$ns"' -l app=dep -o name)" ]'
check "no request of the collector was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/gcsa.log" | grep -v "being terminated"'
sqlkcm_stop gcsa

# The namespace, ServiceAccount, root CA publisher and pod GC controllers' manifests: with
# them, the four work under the same ServiceAccount and nothing they ask for is forbidden.
# The collector's rights, which cover much of theirs, are taken away first.
kubectl delete clusterrolebinding sqlkcm:garbage-collector >/dev/null
check "rbac-namespace.yaml, rbac-serviceaccount.yaml, rbac-root-ca-cert-publisher.yaml and rbac-podgc.yaml apply" \
    kubectl apply -f "$manifests/rbac-namespace.yaml" -f "$manifests/rbac-serviceaccount.yaml" \
    -f "$manifests/rbac-root-ca-cert-publisher.yaml" -f "$manifests/rbac-podgc.yaml"
check "with them, it may finalize namespaces, delete any collection, create ServiceAccounts, update ConfigMaps, patch pod status, get nodes" eval \
    'cluster_wait_until 30 "the roles" can update namespaces --subresource=finalize &&
     can update namespaces --subresource=status && can delete namespaces &&
     can deletecollection widgets.example.com -n '"$ns"' &&
     can create serviceaccounts -n '"$ns"' && can update configmaps -n '"$ns"' &&
     can patch pods --subresource=status -n '"$ns"' && can get nodes'
check "and still may not update pods, ServiceAccounts or nodes, nor create secrets" eval \
    'cannot update pods -n '"$ns"' && cannot update serviceaccounts -n '"$ns"' &&
     cannot update nodes && cannot create secrets -n '"$ns"
sqlkcm_start nssa --kubeconfig "$work/kubeconfig" --db "$work/ns.db" \
    --controllers namespace,serviceaccount,root-ca-cert-publisher,podgc -v 2
check "the four controllers sync their caches with those rights" \
    cluster_wait_until 90 "their caches" grep -q "controller=namespace: caches synced" \
    "$work/nssa.log"
kubectl create namespace "$ns-doomed" >/dev/null
check "a new namespace gets its ServiceAccount default and kube-root-ca.crt" \
    cluster_wait_until 60 "default and kube-root-ca.crt" \
    kubectl get -n "$ns-doomed" serviceaccount/default configmap/kube-root-ca.crt
kubectl create configmap -n "$ns-doomed" c --from-literal=k=v >/dev/null
kubectl delete namespace "$ns-doomed" --wait=false >/dev/null
check "deleted with its content, it is gone" cluster_wait_until 60 "the namespace" \
    eval '! kubectl get namespace '"$ns-doomed"' >/dev/null 2>&1'
# (A write into a namespace being deleted is refused with a 403 too, whatever the rights.)
check "no request of those controllers was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/nssa.log" | grep -v "being terminated"'
sqlkcm_stop nssa

# The ReplicationController controller's manifest, beside rbac.yaml (whose pod rules it
# shares with the ReplicaSet controller).
check "rbac-replicationcontroller.yaml applies" \
    kubectl apply -f "$manifests/rbac-replicationcontroller.yaml"
check "with it, it may update ReplicationControllers' status and finalizers, not the objects" \
    eval 'cluster_wait_until 30 "the role" can update replicationcontrollers \
     --subresource=status -n '"$ns"' &&
     can update replicationcontrollers --subresource=finalizers -n '"$ns"' &&
     cannot update replicationcontrollers -n '"$ns"
sqlkcm_start rcsa --kubeconfig "$work/kubeconfig" --db "$work/rc.db" \
    --controllers replicationcontroller -v 2
check "the ReplicationController controller syncs its caches with those rights" \
    cluster_wait_until 90 "its caches" grep -q "controller=replicationcontroller: caches synced" \
    "$work/rcsa.log"
kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ReplicationController
metadata:
  name: rbac-rc
spec:
  replicas: 2
  selector:
    app: rbac-rc
  template:
    metadata:
      labels:
        app: rbac-rc
    spec:
      containers:
      - name: c
        image: pause
YAML
check "a ReplicationController gets its pods and its status" cluster_wait_until 60 \
    "2 replicas" eval '[ "$(kubectl get rc -n '"$ns"' rbac-rc -o jsonpath={.status.replicas})" = 2 ]'
check "no request of the ReplicationController controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/rcsa.log" | grep -v "being terminated"'
sqlkcm_stop rcsa
kubectl delete rc -n "$ns" rbac-rc --cascade=orphan --wait=false >/dev/null 2>&1

# The node lifecycle controller's manifest. Its node is one of the test's own, cordoned and
# tainted NoExecute, which no pod of the other tests may land on, and no kwok runs.
check "rbac-nodelifecycle.yaml applies" kubectl apply -f "$manifests/rbac-nodelifecycle.yaml"
# (rbac-namespace.yaml's deletion of any resource covers nodes: not asked here.)
check "with it, it may patch nodes and update their status and pods', watch leases, not update nodes" \
    eval 'cluster_wait_until 30 "the role" can patch nodes && cannot update nodes &&
     can update nodes --subresource=status && can update pods --subresource=status -n '"$ns"' &&
     can watch leases.coordination.k8s.io -n kube-node-lease && cannot patch nodes --subresource=status'
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $ns-node
spec:
  unschedulable: true
  taints: [{key: example.com/keep-off, effect: NoExecute}]
YAML
sqlkcm_start nlsa --kubeconfig "$work/kubeconfig" --db "$work/nl.db" \
    --controllers nodelifecycle --node-startup-grace-period 5s -v 2
check "the cordoned node gets the unschedulable taint from the node lifecycle controller" \
    cluster_wait_until 90 "the taint" eval '[ "$(kubectl get node '"$ns-node"' -o \
     jsonpath="{.spec.taints[?(@.key==\"node.kubernetes.io/unschedulable\")].effect}")" = NoSchedule ]'
check "the node, which never posted, goes Unknown after the startup grace (its status updated)" \
    cluster_wait_until 90 "the condition" eval '[ "$(kubectl get node '"$ns-node"' -o \
     jsonpath="{.status.conditions[?(@.type==\"Ready\")].reason}")" = NodeStatusNeverUpdated ]'
check "no request of the node lifecycle controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/nlsa.log" | grep -v "being terminated"'
sqlkcm_stop nlsa

# The TTL controller's manifest, alone: the node lifecycle controller's is taken away.
kubectl delete clusterrolebinding sqlkcm:node-controller >/dev/null
check "rbac-ttl.yaml applies" kubectl apply -f "$manifests/rbac-ttl.yaml"
check "with it alone, it may patch nodes, not update them" \
    eval 'cluster_wait_until 30 "the role" can patch nodes && cannot update nodes'
kubectl annotate node "$ns-node" --overwrite node.alpha.kubernetes.io/ttl=7 >/dev/null
sqlkcm_start ttlsa --kubeconfig "$work/kubeconfig" --db "$work/ttl.db" --controllers ttl -v 2
check "the TTL controller sets the node's annotation with those rights" \
    cluster_wait_until 90 "the annotation" eval '[ "$(kubectl get node '"$ns-node"' -o \
     jsonpath="{.metadata.annotations.node\\.alpha\\.kubernetes\\.io/ttl}")" = 0 ]'
check "no request of the TTL controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/ttlsa.log" | grep -v "being terminated"'
sqlkcm_stop ttlsa

# The taint eviction controller's manifest, with none of the other node or pod garbage
# collector rights: a pod bound to the test's node, which is tainted NoExecute, does not
# tolerate it and goes.
kubectl delete clusterrolebinding sqlkcm:ttl-controller sqlkcm:pod-garbage-collector \
    >/dev/null 2>&1
check "rbac-taint-eviction-controller.yaml applies" \
    kubectl apply -f "$manifests/rbac-taint-eviction-controller.yaml"
check "with it, it may watch nodes, patch pods' status and delete pods, not patch nodes" \
    eval 'cluster_wait_until 30 "the role" can watch nodes && cannot patch nodes &&
     can patch pods --subresource=status -n '"$ns"' && can delete pods -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: doomed-by-taint}
spec:
  nodeName: $ns-node
  containers: [{name: c, image: pause}]
YAML
sqlkcm_start tesa --kubeconfig "$work/kubeconfig" --db "$work/te.db" \
    --controllers taint-eviction-controller -v 2
check "the taint eviction controller deletes the pod with those rights" \
    cluster_wait_until 90 "the pod to go" eval '[ -n "$(kubectl get pod -n '"$ns"' \
     doomed-by-taint -o jsonpath="{.metadata.deletionTimestamp}" 2>/dev/null)" ] ||
     ! kubectl get pod -n '"$ns"' doomed-by-taint >/dev/null 2>&1'
check "no request of the taint eviction controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/tesa.log" | grep -v "being terminated"'
sqlkcm_stop tesa
kubectl delete pod -n "$ns" doomed-by-taint --grace-period=0 --force >/dev/null 2>&1
kubectl delete node "$ns-node" --wait=false >/dev/null 2>&1

# Node IPAM's manifest, alone: the taint eviction controller's is taken away. Its range
# is the one nodeipam.t gives the cluster's nodes, whose blocks (if any) lie in it.
kubectl delete clusterrolebinding sqlkcm:taint-eviction-controller >/dev/null 2>&1
check "rbac-nodeipam.yaml applies" kubectl apply -f "$manifests/rbac-nodeipam.yaml"
check "with it alone, it may watch and patch nodes, not update them" \
    eval 'cluster_wait_until 30 "the role" can watch nodes && can patch nodes &&
     cannot update nodes'
nodes_hold_blocks	# the cluster's, before the allocator would give them the first ones
kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata: {name: $ns-ipam}
spec:
  unschedulable: true
  taints: [{key: example.com/no-kubelet, effect: NoExecute}]
YAML
sqlkcm_start ipamsa --kubeconfig "$work/kubeconfig" --db "$work/ipam.db" \
    --controllers nodeipam --allocate-node-cidrs --cluster-cidr 10.244.0.0/16 -v 2
check "node IPAM gives the node its pod CIDR with those rights" \
    cluster_wait_until 90 "the pod CIDR" eval '[ -n "$(kubectl get node '"$ns-ipam"' -o \
     jsonpath="{.spec.podCIDR}")" ]'
check "no request of node IPAM was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/ipamsa.log" | grep -v "being terminated"'
sqlkcm_stop ipamsa
kubectl delete node "$ns-ipam" --wait=false >/dev/null 2>&1

# The CSR cleaner's manifest.
check "rbac-csrcleaner.yaml applies" kubectl apply -f "$manifests/rbac-csrcleaner.yaml"
check "with it, it may list, watch and delete CSRs, not update them nor approve them" \
    eval 'cluster_wait_until 30 "the role" can watch certificatesigningrequests.certificates.k8s.io &&
     can list certificatesigningrequests.certificates.k8s.io &&
     can delete certificatesigningrequests.certificates.k8s.io &&
     cannot update certificatesigningrequests.certificates.k8s.io &&
     cannot update certificatesigningrequests.certificates.k8s.io --subresource=approval'

# The CSR signer's manifest, and the signer run with it: an approved client CSR gets its
# certificate (the apiserver checks the right to sign for its signer as it takes it).
check "rbac-csrsigning.yaml applies" kubectl apply -f "$manifests/rbac-csrsigning.yaml"
check "with it, it may update CSRs' status, not approve them nor replace them" \
    eval 'cluster_wait_until 30 "the role" can update certificatesigningrequests.certificates.k8s.io --subresource=status &&
     can get certificatesigningrequests.certificates.k8s.io &&
     cannot update certificatesigningrequests.certificates.k8s.io &&
     cannot update certificatesigningrequests.certificates.k8s.io --subresource=approval'
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$work/signed.key" -subj "/CN=$ns-user" -out "$work/signed.csr" 2>/dev/null
kubectl create -f - >/dev/null <<YAML
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: $ns-signed}
spec:
  request: $(base64 -w0 <"$work/signed.csr")
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
YAML
kubectl certificate approve "$ns-signed" >/dev/null
sqlkcm_start sign --kubeconfig "$work/kubeconfig" --db "$work/sign.db" \
    --controllers csrsigning --cluster-signing-cert-file "$cluster/pki/ca.crt" \
    --cluster-signing-key-file "$cluster/pki/ca.key" -v 2
check "the CSR signer issues the certificate with those rights" \
    cluster_wait_until 60 "the certificate" eval '[ -n "$(kubectl get csr '"$ns"'-signed \
     -o jsonpath="{.status.certificate}")" ]'
check "no request of the CSR signer was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/sign.log" | grep -v "being terminated"'
sqlkcm_stop sign
kubectl delete csr "$ns-signed" --wait=false >/dev/null 2>&1

# The CSR approver's manifest, and the approver run with it: a kubelet's client CSR sent
# under a bootstrap identity (whose group may be approved as node clients) is approved.
check "rbac-csrapproving.yaml applies" kubectl apply -f "$manifests/rbac-csrapproving.yaml"
# (kubectl auth can-i cannot ask about a signer: its name holds a slash. The approval
# below shows the right to approve for kubelets' client signer.)
check "with it, it may approve CSRs and review access" \
    eval 'cluster_wait_until 30 "the role" can update certificatesigningrequests.certificates.k8s.io --subresource=approval &&
     can create subjectaccessreviews.authorization.k8s.io'
# What kubeadm binds for bootstrap tokens: they may send CSRs, and be approved as nodes.
kubectl create clusterrolebinding "$ns-bootstrap-csrs" \
    --clusterrole=system:node-bootstrapper --group=system:bootstrappers >/dev/null
kubectl create clusterrolebinding "$ns-bootstrappers" \
    --clusterrole=system:certificates.k8s.io:certificatesigningrequests:nodeclient \
    --group=system:bootstrappers >/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$work/kubelet.key" -subj "/O=system:nodes/CN=system:node:$ns-node" \
    -out "$work/kubelet.csr" 2>/dev/null
kubectl create --as=system:bootstrap:abcdef --as-group=system:bootstrappers -f - \
    >/dev/null <<YAML
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: $ns-kubelet}
spec:
  request: $(base64 -w0 <"$work/kubelet.csr")
  signerName: kubernetes.io/kube-apiserver-client-kubelet
  usages: [digital signature, client auth]
YAML
sqlkcm_start approve --kubeconfig "$work/kubeconfig" --db "$work/approve.db" \
    --controllers csrapproving -v 2
check "the CSR approver approves it with those rights" \
    cluster_wait_until 60 "the approval" eval '[ "$(kubectl get csr '"$ns"'-kubelet \
     -o jsonpath="{.status.conditions[?(@.type==\"Approved\")].reason}")" = AutoApproved ]'
check "no request of the CSR approver was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/approve.log" | grep -v "being terminated"'
sqlkcm_stop approve
kubectl delete csr "$ns-kubelet" --wait=false >/dev/null 2>&1

# The DaemonSet controller's manifest, and the controller run with it: a DaemonSet whose
# nodeSelector picks no node gets its ControllerRevision and its status.
check "rbac-daemonset.yaml applies" kubectl apply -f "$manifests/rbac-daemonset.yaml"
check "with it, it may update DaemonSets' status, keep ControllerRevisions, not update DaemonSets" \
    eval 'cluster_wait_until 30 "the role" can update daemonsets.apps --subresource=status -n '"$ns"' &&
     can create controllerrevisions.apps -n '"$ns"' && can delete controllerrevisions.apps -n '"$ns"' &&
     can update controllerrevisions.apps -n '"$ns"' && cannot update daemonsets.apps -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: rbac-ds}
spec:
  selector: {matchLabels: {app: rbac-ds}}
  template:
    metadata: {labels: {app: rbac-ds}}
    spec:
      nodeSelector: {sqlkcm-rbac-no-such-node: "true"}
      containers: [{name: c, image: pause}]
YAML
sqlkcm_start dssa --kubeconfig "$work/kubeconfig" --db "$work/ds.db" --controllers daemonset -v 2
check "the DaemonSet gets its revision and its status with those rights" \
    cluster_wait_until 90 "the revision and status" eval '[ "$(kubectl get ds -n '"$ns"' rbac-ds \
     -o jsonpath={.status.observedGeneration})" = 1 ] &&
     [ "$(kubectl get controllerrevisions -n '"$ns"' -o name | wc -l)" = 1 ]'
check "no request of the DaemonSet controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/dssa.log" | grep -v "being terminated"'
sqlkcm_stop dssa
kubectl delete ds -n "$ns" rbac-ds --wait=false >/dev/null 2>&1
# The Endpoints and EndpointSlice controllers' manifests: a Service of one pod gets its
# Endpoints and its slice with those rights.
check "rbac-endpoint.yaml and rbac-endpointslice.yaml apply" \
    kubectl apply -f "$manifests/rbac-endpoint.yaml" -f "$manifests/rbac-endpointslice.yaml"
check "with them, it may write Endpoints and EndpointSlices, and update no Service" \
    eval 'cluster_wait_until 30 "the role" can create endpointslices.discovery.k8s.io -n '"$ns"' &&
     can update endpoints -n '"$ns"' && can update services --subresource=finalizers -n '"$ns"' &&
     cannot update services -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: eps-pod, labels: {app: rbac-eps}}
spec:
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
---
apiVersion: v1
kind: Service
metadata: {name: rbac-eps}
spec:
  selector: {app: rbac-eps}
  ports: [{port: 80}]
YAML
sqlkcm_start epssa --kubeconfig "$work/kubeconfig" --db "$work/eps.db" \
    --controllers endpoint,endpointslice -v 2
check "the EndpointSlice controller writes the Service's slice with those rights" \
    cluster_wait_until 60 "the slice" eval '[ "$(kubectl get endpointslices -n '"$ns"' \
     -l kubernetes.io/service-name=rbac-eps -o jsonpath="{.items[0].endpoints[0].targetRef.name}")" = eps-pod ]'
check "the Endpoints controller writes its Endpoints with those rights" \
    cluster_wait_until 60 "the Endpoints" eval '[ "$(kubectl get endpoints -n '"$ns"' rbac-eps \
     -o jsonpath="{.subsets[0].addresses[0].targetRef.name}" 2>/dev/null)" = eps-pod ]'
check "no request of the endpoint controllers was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/epssa.log" | grep -v "being terminated"'
sqlkcm_stop epssa

# The mirroring controller's manifest, without the other two: a selector-less Service's
# hand-written Endpoints gets its mirrored slice.
kubectl delete clusterrolebinding sqlkcm:endpoint-controller sqlkcm:endpointslice-controller \
    >/dev/null 2>&1
check "rbac-endpointslicemirroring.yaml applies" \
    kubectl apply -f "$manifests/rbac-endpointslicemirroring.yaml"
check "with it, it may write EndpointSlices and not Endpoints" \
    eval 'cluster_wait_until 30 "the role" can create endpointslices.discovery.k8s.io -n '"$ns"' &&
     can update endpoints --subresource=finalizers -n '"$ns"' && cannot update endpoints -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null 2>&1 <<YAML
apiVersion: v1
kind: Service
metadata: {name: rbac-mirror}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: rbac-mirror}
subsets: [{addresses: [{ip: 10.9.9.9}], ports: [{port: 80}]}]
YAML
sqlkcm_start mirrorsa --kubeconfig "$work/kubeconfig" --db "$work/mirror.db" \
    --controllers endpointslicemirroring -v 2
check "the mirroring controller writes the Endpoints' slice with those rights" \
    cluster_wait_until 60 "the slice" eval '[ "$(kubectl get endpointslices -n '"$ns"' \
     -l kubernetes.io/service-name=rbac-mirror -o jsonpath="{.items[0].endpoints[0].addresses[0]}")" = 10.9.9.9 ]'
check "no request of the mirroring controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/mirrorsa.log" | grep -v "being terminated"'
sqlkcm_stop mirrorsa
# The TTL-after-finished controller's manifest: a Job managed elsewhere, finished with a
# TTL of 0 (its status written here), is deleted. No garbage collector runs, so the Job
# stays with the foregroundDeletion finalizer, which the cleanup takes off.
check "rbac-ttl-after-finished.yaml applies" \
    kubectl apply -f "$manifests/rbac-ttl-after-finished.yaml"
check "with it, it may delete Jobs, not update them" \
    eval 'cluster_wait_until 30 "the role" can delete jobs.batch -n '"$ns"' &&
     cannot update jobs.batch -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $ns-ttl}
spec:
  managedBy: example.com/elsewhere
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
YAML
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl patch job "$ns-ttl" -n "$ns" --subresource=status --type=merge -p '{"status":{
    "startTime":"'"$now"'","completionTime":"'"$now"'","succeeded":1,"conditions":[
    {"type":"SuccessCriteriaMet","status":"True","lastTransitionTime":"'"$now"'"},
    {"type":"Complete","status":"True","lastTransitionTime":"'"$now"'"}]}}' >/dev/null
sqlkcm_start ttlafsa --kubeconfig "$work/kubeconfig" --db "$work/ttlaf.db" \
    --controllers ttl-after-finished -v 2
check "the TTL-after-finished controller deletes the finished Job with those rights" \
    cluster_wait_until 60 "the deletion" eval '[ -n "$(kubectl get job '"$ns"'-ttl -n '"$ns"' \
     -o jsonpath="{.metadata.deletionTimestamp}")" ]'
check "no request of the TTL-after-finished controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/ttlafsa.log" | grep -v "being terminated"'
sqlkcm_stop ttlafsa

# The Job controller's manifest: a Job of one completion, its pod kept off every node and
# finished by the test, completes (pods created, a finalizer patched off, status updated).
check "rbac-job.yaml applies" kubectl apply -f "$manifests/rbac-job.yaml"
check "with it, it may update Jobs' status and finalizers and patch pods" \
    eval 'cluster_wait_until 30 "the role" can update jobs.batch --subresource=status -n '"$ns"' &&
     can update jobs.batch --subresource=finalizers -n '"$ns"' && can patch pods -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $ns-job}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {example.com/no-such-node: "true"}
      containers: [{name: c, image: busybox}]
YAML
sqlkcm_start jobsa --kubeconfig "$work/kubeconfig" --db "$work/job.db" --controllers job -v 2
check "the Job controller creates the Job's pod with those rights" \
    cluster_wait_until 60 "the pod" eval '[ -n "$(kubectl get pods -n '"$ns"' \
     -l batch.kubernetes.io/job-name='"$ns"'-job -o name)" ]'
kubectl patch "$(kubectl get pods -n "$ns" -l "batch.kubernetes.io/job-name=$ns-job" -o name)" \
    -n "$ns" --subresource=status --type=merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
check "and completes the Job once the pod has succeeded" \
    cluster_wait_until 60 "Complete" eval '[ "$(kubectl get job '"$ns"'-job -n '"$ns"' \
     -o jsonpath="{.status.conditions[?(@.type==\"Complete\")].status}")" = True ]'
check "no request of the Job controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/jobsa.log" | grep -v "being terminated"'
sqlkcm_stop jobsa

# The CronJob controller's manifest: a CronJob due every minute gets its Job (created,
# owned by it, cronjobs/finalizers) and its status (lastScheduleTime) written.
check "rbac-cronjob.yaml applies" kubectl apply -f "$manifests/rbac-cronjob.yaml"
check "with it, it may create Jobs and update CronJobs' status and finalizers" \
    eval 'cluster_wait_until 30 "the role" can create jobs.batch -n '"$ns"' &&
     can update cronjobs.batch --subresource=status -n '"$ns"' &&
     can update cronjobs.batch --subresource=finalizers -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: CronJob
metadata: {name: $ns-cron}
spec:
  schedule: "*/1 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          nodeSelector: {example.com/no-such-node: "true"}
          containers: [{name: c, image: busybox}]
YAML
sqlkcm_start cronsa --kubeconfig "$work/kubeconfig" --db "$work/cron.db" \
    --controllers cronjob -v 2
check "the CronJob controller creates the scheduled Job and writes the status with those rights" \
    cluster_wait_until 75 "the Job" eval '[ -n "$(kubectl get cronjob '"$ns"'-cron -n '"$ns"' \
     -o jsonpath="{.status.lastScheduleTime}")" ] &&
     [ -n "$(kubectl get jobs -n '"$ns"' -o name)" ]'
check "no request of the CronJob controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/cronsa.log" | grep -v "being terminated"'
sqlkcm_stop cronsa

# The disruption controller's manifest: a budget over a ReplicaSet's pod gets its status
# (expectedPods from the ReplicaSet's scale), written with those rights.
check "rbac-disruption.yaml applies" kubectl apply -f "$manifests/rbac-disruption.yaml"
check "with it, it may update budgets' status and pods' status" \
    eval 'cluster_wait_until 30 "the role" can update poddisruptionbudgets.policy \
     --subresource=status -n '"$ns"' &&
     can update pods --subresource=status -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: $ns-pdbrs}
spec:
  replicas: 2
  selector: {matchLabels: {app: $ns-pdb}}
  template:
    metadata: {labels: {app: $ns-pdb}}
    spec:
      nodeSelector: {example.com/no-such-node: "true"}
      containers: [{name: c, image: busybox}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $ns-pdb}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: $ns-pdb}}
YAML
rsuid=$(kubectl get rs "$ns-pdbrs" -n "$ns" -o jsonpath='{.metadata.uid}')
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $ns-pdbpod
  labels: {app: $ns-pdb}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: $ns-pdbrs, uid: $rsuid, controller: true}
spec:
  nodeSelector: {example.com/no-such-node: "true"}
  containers: [{name: c, image: busybox}]
YAML
sqlkcm_start pdbsa --kubeconfig "$work/kubeconfig" --db "$work/pdb.db" \
    --controllers disruption -v 2
check "the disruption controller writes the budget's status with those rights" \
    cluster_wait_until 60 "the status" eval '[ "$(kubectl get pdb '"$ns"'-pdb -n '"$ns"' \
     -o jsonpath="{.status.expectedPods}/{.status.desiredHealthy}")" = 2/1 ]'
check "no request of the disruption controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/pdbsa.log" | grep -v "being terminated"'
sqlkcm_stop pdbsa

# The resource quota controller's manifest: a quota's status (hard, and used counted from
# what the controller lists) is written.
check "rbac-resourcequota.yaml applies" kubectl apply -f "$manifests/rbac-resourcequota.yaml"
check "with it, it may list secrets and update quotas' status, not quotas" \
    eval 'cluster_wait_until 30 "the role" can list secrets -n '"$ns"' &&
     can update resourcequotas --subresource=status -n '"$ns"' &&
     cannot update resourcequotas -n '"$ns"
kubectl create configmap "$ns-counted" -n "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: ResourceQuota
metadata: {name: $ns-quota}
spec:
  hard: {count/configmaps: "100", pods: "100"}
YAML
sqlkcm_start rqsa --kubeconfig "$work/kubeconfig" --db "$work/rq.db" \
    --controllers resourcequota -v 2
check "the resource quota controller writes the quota's status with those rights" \
    cluster_wait_until 60 "status.used" eval '[ "$(kubectl get resourcequota '"$ns"'-quota \
     -n '"$ns"' -o go-template="{{with .status.used}}{{index . \"count/configmaps\"}}{{end}}")" \
     = "$(kubectl get configmaps -n '"$ns"' --no-headers | wc -l)" ]'
check "no request of the resource quota controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/rqsa.log" | grep -v "being terminated"'
sqlkcm_stop rqsa

# The StatefulSet controller's manifest: a StatefulSet of one pod with a claim template
# gets its revision, its claim, its pod and its status with those rights.
check "rbac-statefulset.yaml applies" kubectl apply -f "$manifests/rbac-statefulset.yaml"
check "with it, it may create pods and claims, keep revisions, update StatefulSets' status" \
    eval 'cluster_wait_until 30 "the role" can create pods -n '"$ns"' &&
     can create persistentvolumeclaims -n '"$ns"' && can update persistentvolumeclaims -n '"$ns"' &&
     can create controllerrevisions.apps -n '"$ns"' &&
     can update statefulsets.apps --subresource=status -n '"$ns"' &&
     cannot update statefulsets.apps -n '"$ns"
kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: rbac-sts}
spec:
  replicas: 1
  serviceName: rbac-sts
  selector: {matchLabels: {app: rbac-sts}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Delete}
  template:
    metadata: {labels: {app: rbac-sts}}
    spec:
      nodeSelector: {sqlkcm-rbac-no-such-node: "true"}
      containers: [{name: c, image: pause}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
YAML
sqlkcm_start stssa --kubeconfig "$work/kubeconfig" --db "$work/sts.db" \
    --controllers statefulset -v 2
check "the StatefulSet gets its revision, claim, pod and status with those rights" \
    cluster_wait_until 90 "the pod and status" eval '[ "$(kubectl get sts -n '"$ns"' rbac-sts \
     -o jsonpath={.status.observedGeneration})" = 1 ] &&
     kubectl get pvc -n '"$ns"' data-rbac-sts-0 >/dev/null 2>&1 &&
     kubectl get pod -n '"$ns"' rbac-sts-0 >/dev/null 2>&1'
check "no request of the StatefulSet controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/stssa.log" | grep -v "being terminated"'
sqlkcm_stop stssa
kubectl delete sts -n "$ns" rbac-sts --wait=false >/dev/null 2>&1

# The ClusterRole aggregation controller's manifest: an aggregated role of the test's own
# gets the rule of the role its selector picks, a rule the controller itself does not hold
# (so writing it takes escalate).
check "rbac-clusterrole-aggregation.yaml applies" \
    kubectl apply -f "$manifests/rbac-clusterrole-aggregation.yaml"
check "with it, it may escalate and patch ClusterRoles" \
    eval 'cluster_wait_until 30 "the role" can escalate clusterroles.rbac.authorization.k8s.io &&
     can patch clusterroles.rbac.authorization.k8s.io'
kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $ns-aggregated}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {example.com/aggregate-to-$ns: "true"}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $ns-aggregated-part
  labels: {example.com/aggregate-to-$ns: "true"}
rules: [{apiGroups: [example.com], resources: [gadgets], verbs: [get, delete]}]
YAML
sqlkcm_start aggsa --kubeconfig "$work/kubeconfig" --db "$work/agg.db" \
    --controllers clusterrole-aggregation -v 2
check "the aggregation controller writes the picked role's rule with those rights" \
    cluster_wait_until 60 "the rule" eval '[ "$(kubectl get clusterrole '"$ns"'-aggregated \
     -o jsonpath="{.rules[0].resources[0]}/{.rules[0].verbs[1]}")" = gadgets/delete ]'
check "no request of the aggregation controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/aggsa.log" | grep -v "being terminated"'
sqlkcm_stop aggsa

# The token controller's manifest: a token Secret of a ServiceAccount of the test's gets
# its token (an update of the Secret read live), and one naming no ServiceAccount that
# exists is deleted.
check "rbac-serviceaccount-token.yaml applies" \
    kubectl apply -f "$manifests/rbac-serviceaccount-token.yaml"
check "with it, it may update and delete Secrets, not patch them (kube's rules)" \
    eval 'cluster_wait_until 30 "the role" can update secrets -n '"$ns"' &&
     can delete secrets -n '"$ns"' && cannot patch secrets -n '"$ns"
kubectl create serviceaccount "$ns-robot" -n "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $ns-robot-token
  annotations: {kubernetes.io/service-account.name: $ns-robot}
type: kubernetes.io/service-account-token
---
apiVersion: v1
kind: Secret
metadata:
  name: $ns-ghost-token
  annotations: {kubernetes.io/service-account.name: $ns-nobody}
type: kubernetes.io/service-account-token
YAML
sqlkcm_start tokensa --kubeconfig "$work/kubeconfig" --db "$work/token.db" \
    --controllers serviceaccount-token -v 2 \
    --service-account-private-key-file "$cluster/pki/sa.key"
check "the token controller fills in a token Secret with those rights" \
    cluster_wait_until 60 "the token" eval '[ -n "$(kubectl get secret '"$ns"'-robot-token \
     -n '"$ns"' -o jsonpath="{.data.token}")" ]'
check "and deletes one whose ServiceAccount does not exist" \
    cluster_wait_until 60 "the deletion" eval '! kubectl get secret '"$ns"'-ghost-token \
     -n '"$ns"' >/dev/null 2>&1'
check "no request of the token controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/tokensa.log" | grep -v "being terminated"'
sqlkcm_stop tokensa

# The legacy token cleaner's manifest: an auto-generated token (listed by its
# ServiceAccount, mounted by no pod, never used) is labelled invalid, with a clean-up
# period of a second and the apiserver's tracking made to start in 2020 (put back at the
# end). Its deletion would come a period after the label's day: tomorrow. A second one,
# labelled invalid since 2020-01-02 already, is deleted.
check "rbac-legacy-service-account-token-cleaner.yaml applies" \
    kubectl apply -f "$manifests/rbac-legacy-service-account-token-cleaner.yaml"
check "with it, it may patch and delete Secrets and get the tracking ConfigMap" \
    eval 'cluster_wait_until 30 "the role" can patch secrets -n '"$ns"' &&
     can delete secrets -n '"$ns"' && can get configmaps/kube-apiserver-legacy-service-account-token-tracking -n kube-system'
tracking_since=$(kubectl get configmap -n kube-system \
    kube-apiserver-legacy-service-account-token-tracking -o jsonpath='{.data.since}')
kubectl patch configmap -n kube-system kube-apiserver-legacy-service-account-token-tracking \
    --type=merge -p '{"data":{"since":"2020-01-01"}}' >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: $ns-legacy}
secrets: [{name: $ns-legacy-token}, {name: $ns-legacy-old-token}]
---
apiVersion: v1
kind: Secret
metadata:
  name: $ns-legacy-token
  annotations: {kubernetes.io/service-account.name: $ns-legacy}
type: kubernetes.io/service-account-token
---
apiVersion: v1
kind: Secret
metadata:
  name: $ns-legacy-old-token
  annotations: {kubernetes.io/service-account.name: $ns-legacy}
  labels: {kubernetes.io/legacy-token-invalid-since: "2020-01-02"}
type: kubernetes.io/service-account-token
YAML
sleep 2		# older than the period: made more than a second before the sync
sqlkcm_start cleanersa --kubeconfig "$work/kubeconfig" --db "$work/cleaner.db" \
    --controllers legacy-service-account-token-cleaner -v 2 \
    --legacy-service-account-token-clean-up-period 1s
check "the cleaner labels the unused auto-generated token invalid with those rights" \
    cluster_wait_until 60 "the label" eval '[ "$(kubectl get secret '"$ns"'-legacy-token \
     -n '"$ns"' -o jsonpath="{.metadata.labels.kubernetes\.io/legacy-token-invalid-since}")" = \
     "$(date -u +%Y-%m-%d)" ]'
check "and deletes the one invalid since a day more than a period ago" \
    cluster_wait_until 60 "the deletion" eval '! kubectl get secret '"$ns"'-legacy-old-token \
     -n '"$ns"' >/dev/null 2>&1'
check "no request of the cleaner was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/cleanersa.log" | grep -v "being terminated"'
sqlkcm_stop cleanersa

# The Service CIDR controller's manifest: a ServiceCIDR of the test's own gets its
# finalizer and its Ready condition (a server-side apply of the status).
check "rbac-service-cidr-controller.yaml applies" \
    kubectl apply -f "$manifests/rbac-service-cidr-controller.yaml"
check "with it, it may patch ServiceCIDRs and their status, and watch IPAddresses" \
    eval 'cluster_wait_until 30 "the role" can patch servicecidrs.networking.k8s.io &&
     can patch servicecidrs.networking.k8s.io --subresource=status &&
     can watch ipaddresses.networking.k8s.io'
kubectl apply -f - >/dev/null <<YAML
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: $ns-cidr}
spec: {cidrs: [10.201.$((RANDOM % 200 + 20)).0/24]}
YAML
sqlkcm_start cidrsa --kubeconfig "$work/kubeconfig" --db "$work/cidr.db" \
    --controllers service-cidr-controller -v 2
check "the Service CIDR controller makes the ServiceCIDR Ready with those rights" \
    cluster_wait_until 60 "Ready" eval '[ "$(kubectl get servicecidr '"$ns"'-cidr \
     -o jsonpath="{.metadata.finalizers[0]}/{.status.conditions[?(@.type==\"Ready\")].status}")" = \
     networking.k8s.io/service-cidr-finalizer/True ]'
check "no request of the Service CIDR controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/cidrsa.log" | grep -v "being terminated"'
sqlkcm_stop cidrsa
kubectl delete servicecidr "$ns-cidr" --wait=false >/dev/null 2>&1

# The PersistentVolume binder's manifest: a claim and a volume of a class of the test's
# own (no StorageClass object: nothing provisions) are bound, both updated and their
# status written.
check "rbac-persistentvolume-binder.yaml applies" \
    kubectl apply -f "$manifests/rbac-persistentvolume-binder.yaml"
check "with it, it may update volumes, claims and their status, not patch them, and create and delete (recycler) pods" \
    eval 'cluster_wait_until 30 "the role" can update persistentvolumes &&
     can update persistentvolumes --subresource=status &&
     can update persistentvolumeclaims -n '"$ns"' &&
     can update persistentvolumeclaims --subresource=status -n '"$ns"' &&
     can watch storageclasses.storage.k8s.io && cannot patch persistentvolumes &&
     can create pods -n default && can delete pods -n default'
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-class
  csi: {driver: rbac.e2e.sqlkcm.io, volumeHandle: $ns-pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $ns-claim, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-class
  resources: {requests: {storage: 1Gi}}
YAML
sqlkcm_start pvsa --kubeconfig "$work/kubeconfig" --db "$work/pv.db" \
    --controllers persistentvolume-binder -v 2
check "the binder binds the claim to the volume with those rights" \
    cluster_wait_until 60 "the binding" eval '[ "$(kubectl get pvc '"$ns"'-claim -n '"$ns"' \
     -o jsonpath="{.status.phase}/{.spec.volumeName}")" = "Bound/'"$ns"'-pv" ] &&
     [ "$(kubectl get pv '"$ns"'-pv -o jsonpath="{.status.phase}")" = Bound ]'
check "no request of the binder was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/pvsa.log" | grep -v "being terminated"'
sqlkcm_stop pvsa

# The protection controllers' manifests: a volume of the test's own that lost its
# finalizer gets it back; a claim too, and once deleted it goes (after the live list of
# the namespace's pods).
check "rbac-pv-protection.yaml applies" kubectl apply -f "$manifests/rbac-pv-protection.yaml"
check "rbac-volumeattributesclass-protection.yaml applies" \
    kubectl apply -f "$manifests/rbac-volumeattributesclass-protection.yaml"
check "rbac-pvc-protection.yaml applies" kubectl apply -f "$manifests/rbac-pvc-protection.yaml"
check "with them, they may update PersistentVolumes, VolumeAttributesClasses and claims" \
    eval 'cluster_wait_until 30 "the role" can update persistentvolumes &&
     cluster_wait_until 30 "the role" can update volumeattributesclasses.storage.k8s.io &&
     cluster_wait_until 30 "the role" can update persistentvolumeclaims &&
     can watch persistentvolumeclaims'
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-pvp}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-pvp
  csi: {driver: rbac.example.com, volumeHandle: $ns-pvp}
YAML
kubectl patch pv "$ns-pvp" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' \
    >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $ns-pvcp}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-pvcp
  resources: {requests: {storage: 1Gi}}
YAML
kubectl patch pvc "$ns-pvcp" -n "$ns" --type=json \
    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
sqlkcm_start pvpsa --kubeconfig "$work/kubeconfig" --db "$work/pvp.db" \
    --controllers pv-protection,volumeattributesclass-protection,pvc-protection -v 2
check "the PV protection controller puts the finalizer back with those rights" \
    cluster_wait_until 60 "the finalizer" eval '[ "$(kubectl get pv '"$ns"'-pvp \
     -o jsonpath="{.metadata.finalizers[0]}")" = kubernetes.io/pv-protection ]'
check "the PVC protection controller puts the claim's back" \
    cluster_wait_until 60 "the finalizer" eval '[ "$(kubectl get pvc '"$ns"'-pvcp -n '"$ns"' \
     -o jsonpath="{.metadata.finalizers[0]}")" = kubernetes.io/pvc-protection ]'
kubectl delete pvc "$ns-pvcp" -n "$ns" --wait=false >/dev/null
check "and lets the claim go once deleted" cluster_wait_until 60 "the claim gone" \
    eval '! kubectl get pvc '"$ns"'-pvcp -n '"$ns"' >/dev/null 2>&1'
check "no request of the protection controllers was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/pvpsa.log" | grep -v "being terminated"'
sqlkcm_stop pvpsa

# The ephemeral volume controller's: a pod's ephemeral volume gets its claim, owned by the
# pod with blockOwnerDeletion (which asks for the update of pods/finalizers).
check "rbac-ephemeral-volume.yaml applies" \
    kubectl apply -f "$manifests/rbac-ephemeral-volume.yaml"
check "with it, it may create claims" cluster_wait_until 30 "the role" \
    can create persistentvolumeclaims
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $ns-eph}
spec:
  nodeSelector: {example.com/no-such-node: "true"}
  containers: [{name: c, image: pause}]
  volumes:
  - name: data
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes: [ReadWriteOnce]
          storageClassName: $ns-eph
          resources: {requests: {storage: 1Gi}}
YAML
sqlkcm_start ephsa --kubeconfig "$work/kubeconfig" --db "$work/eph.db" \
    --controllers ephemeral-volume -v 2
check "the ephemeral volume controller makes the pod's claim with those rights" \
    cluster_wait_until 60 "the claim" eval '[ "$(kubectl get pvc '"$ns"'-eph-data -n '"$ns"' \
     -o jsonpath="{.metadata.ownerReferences[0].blockOwnerDeletion}")" = true ]'
check "no request of the ephemeral volume controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/ephsa.log" | grep -v "being terminated"'
sqlkcm_stop ephsa

# The volume expand controller's: a Bound claim on an awsElasticBlockStore volume (which
# kube migrates to CSI) resized gets the resizer annotation, through the claim's status.
check "rbac-persistentvolume-expander.yaml applies" \
    kubectl apply -f "$manifests/rbac-persistentvolume-expander.yaml"
check "with it, it may patch claims' status" cluster_wait_until 30 "the role" \
    can patch persistentvolumeclaims --subresource=status -n "$ns"
kubectl apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $ns-exp}
provisioner: e2e.sqlkcm.io-$ns
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $ns-exp, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-exp
  volumeName: $ns-exp
  resources: {requests: {storage: 1Gi}}
YAML
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-exp}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-exp
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: $ns, name: $ns-exp, uid: $(kubectl get pvc "$ns-exp" -n "$ns" -o jsonpath='{.metadata.uid}')}
  awsElasticBlockStore: {volumeID: vol-rbac}
YAML
kubectl patch pvc "$ns-exp" -n "$ns" --subresource=status --type=merge \
    -p '{"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}}' >/dev/null
kubectl patch pvc "$ns-exp" -n "$ns" --type=merge \
    -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}' >/dev/null
sqlkcm_start expsa --kubeconfig "$work/kubeconfig" --db "$work/exp.db" \
    --controllers persistentvolume-expander -v 2
check "the volume expand controller names the claim's resizer with those rights" \
    cluster_wait_until 60 "the annotation" eval '[ "$(kubectl get pvc '"$ns"'-exp -n '"$ns"' \
     -o jsonpath="{.metadata.annotations.volume\.kubernetes\.io/storage-resizer}")" = ebs.csi.aws.com ]'
check "no request of the volume expand controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/expsa.log"'
sqlkcm_stop expsa

# The attach/detach controller's: a pod's CSI volume on a managed node of the test's own
# gets its VolumeAttachment; marked attached, the node's status lists it; the pod gone,
# the attachment is deleted.
check "rbac-attachdetach.yaml applies" \
    kubectl apply -f "$manifests/rbac-attachdetach.yaml"
check "with it, it may create VolumeAttachments and patch nodes' status" \
    cluster_wait_until 30 "the role" eval \
    'can create volumeattachments.storage.k8s.io && can patch nodes --subresource=status'
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $ns-ad
  annotations:
    kwok.x-k8s.io/node: fake
    volumes.kubernetes.io/controller-managed-attach-detach: "true"
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $ns-ad, namespace: $ns}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-ad
  volumeName: $ns-ad
  resources: {requests: {storage: 1Gi}}
YAML
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-ad}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $ns-ad
  claimRef: {namespace: $ns, name: $ns-ad, uid: $(kubectl get pvc "$ns-ad" -n "$ns" -o jsonpath='{.metadata.uid}')}
  csi: {driver: $ns.example.com, volumeHandle: $ns-ad}
YAML
kubectl patch pvc "$ns-ad" -n "$ns" --subresource=status --type=merge \
    -p '{"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}}' >/dev/null
sqlkcm_start adsa --kubeconfig "$work/kubeconfig" --db "$work/ad.db" \
    --controllers attachdetach -v 2
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $ns-ad}
spec:
  nodeName: $ns-ad
  containers: [{name: c, image: pause}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: $ns-ad}}]
YAML
check "the attach/detach controller creates the VolumeAttachment with those rights" \
    cluster_wait_until 60 "the VolumeAttachment" kubectl get volumeattachment "$ad_va"
kubectl patch volumeattachment "$ad_va" --subresource=status --type=merge \
    -p '{"status":{"attached":true}}' >/dev/null
check "and patches the node's volumesAttached" cluster_wait_until 60 "volumesAttached" \
    eval '[ -n "$(kubectl get node '"$ns-ad"' -o jsonpath="{.status.volumesAttached}")" ]'
kubectl delete pod "$ns-ad" -n "$ns" --wait=false >/dev/null
check "and deletes the VolumeAttachment once the pod is gone" \
    cluster_wait_until 90 "the detach" eval '! kubectl get volumeattachment '"$ad_va"' >/dev/null 2>&1'
check "no request of the attach/detach controller was forbidden" eval \
    '! grep -i -E "forbidden|code=403|HTTP 403" "$work/adsa.log"'
sqlkcm_stop adsa

tap_done
