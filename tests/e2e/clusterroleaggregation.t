#!/usr/bin/env bash
# clusterroleaggregation.t - the ClusterRole aggregation controller: a role of the test's
# own aggregated as kube's edit is (a CRD ships an aggregate-to-<role> ClusterRole for its
# resource), so that a user bound to the aggregated role may create the CRD's objects;
# the rules follow the picked roles as they change, appear, lose their label, and a rule
# added by hand to the aggregated role goes. The writes are server-side applies by the
# field manager clusterrole-aggregation-controller.
#
# The cluster's own admin, edit and view roles are left alone by the test (another
# aggregation controller may run beside it): its roles carry a label of its own. With
# E2E_CRA_CM=kcm the same runs against kube-controller-manager 1.36
# (clusterroleaggregation-kcm.t).
# e2e: locks clusterrole-aggregation
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_CRA_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-cra.XXXXXX")
p=cra-$cm-$RANDOM
ns=$p
group=$p.example.com
label=example.com/aggregate-to-$p
cleanup() {
	kcm_stop cra
	kubectl delete clusterrole "$p-edit" "$p-widgets" "$p-gadgets" "$p-other" \
	    --wait=false >/dev/null 2>&1
	kubectl delete crd "widgets.$group" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start cra --controllers=clusterrole-aggregation-controller
	check "kube-controller-manager started its aggregation controller" \
	    kcm_synced "$work/cra.log"
else
	sqlkcm_start cra --db "$work/cache.db" --controllers clusterrole-aggregation -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/cra.log"
fi

# rules ROLE: the role's rules, one line each: verbs/apiGroups/resources.
rules() {
	kubectl get clusterrole "$1" -o go-template='{{range .rules}}{{range .verbs}}{{.}} {{end}}/{{range .apiGroups}}{{.}} {{end}}/{{range .resources}}{{.}} {{end}}{{"\n"}}{{end}}'
}
# rules_are ROLE TEXT: its rules are TEXT (read at each call).
rules_are() { [ "$(rules "$1")" = "$2" ]; }
# as_user VERB RESOURCE: the test's user, bound to the aggregated role in its namespace,
# may (yes) or may not (no) do VERB on RESOURCE there.
as_user() { kubectl auth can-i "$1" "$2" -n "$ns" --as "$p-user" 2>/dev/null; }

# A CRD, and the role its makers ship so that whoever may edit may use it.
kubectl apply -f - >/dev/null <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.$group}
spec:
  group: $group
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $p-edit}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {$label: "true"}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $p-widgets
  labels: {$label: "true"}
rules: [{apiGroups: [$group], resources: [widgets], verbs: [get, list, create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $p-other
  labels: {$label: "false"}
rules: [{apiGroups: [$group], resources: [secrets-of-others], verbs: [get]}]
YAML
kubectl create rolebinding "$p-edit" -n "$ns" --clusterrole "$p-edit" --user "$p-user" \
    >/dev/null

check "the aggregated role gets the rules of the role its selector picks, and only those" \
    cluster_wait_until 60 "the rules" rules_are "$p-edit" "get list create /$group /widgets "
check "a user bound to the aggregated role may create the CRD's objects" \
    cluster_wait_until 30 "the answer" eval '[ "$(as_user create widgets.'"$group"')" = yes ]'
check "and does create one" cluster_wait_until 30 "the widget" eval \
    'printf "%s\n" "apiVersion: '"$group"'/v1" "kind: Widget" "metadata: {name: w1}" |
     kubectl create -n '"$ns"' --as '"$p-user"' -f - >/dev/null'
check "the write is a server-side apply of the field manager clusterrole-aggregation-controller" \
    eval '[ "$(kubectl get clusterrole '"$p-edit"' --show-managed-fields -o jsonpath="{.metadata.managedFields[?(@.manager==\"clusterrole-aggregation-controller\")].operation}")" = Apply ]'

# A second picked role: its rules come after those of the first by name (gadgets <
# widgets), and a rule both hold is kept once, where it first comes.
kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: $p-gadgets
  labels: {$label: "true"}
rules:
- {apiGroups: [$group], resources: [gadgets], verbs: [get]}
- {apiGroups: [$group], resources: [widgets], verbs: [get, list, create]}
YAML
check "a role that gains the label adds its rules, in order of the roles' names, once each" \
    cluster_wait_until 60 "the rules" rules_are "$p-edit" \
    "get /$group /gadgets 
get list create /$group /widgets "

kubectl patch clusterrole "$p-widgets" --type=json \
    -p '[{"op":"add","path":"/rules/0/verbs/-","value":"delete"}]' >/dev/null
check "a picked role's changed rule is followed" \
    cluster_wait_until 60 "the rules" rules_are "$p-edit" \
    "get /$group /gadgets 
get list create /$group /widgets 
get list create delete /$group /widgets "
check "and the user may now delete widgets" \
    cluster_wait_until 30 "the answer" eval '[ "$(as_user delete widgets.'"$group"')" = yes ]'

kubectl patch clusterrole "$p-edit" --type=json \
    -p '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]' \
    >/dev/null
check "a rule added by hand to the aggregated role is taken away" \
    cluster_wait_until 60 "the rules" rules_are "$p-edit" \
    "get /$group /gadgets 
get list create /$group /widgets 
get list create delete /$group /widgets "

kubectl label clusterrole "$p-widgets" "$label=false" --overwrite >/dev/null
check "a role that loses the label takes its rules away" \
    cluster_wait_until 60 "the rules" rules_are "$p-edit" \
    "get /$group /gadgets 
get list create /$group /widgets "
check "and the user may no longer delete widgets" \
    cluster_wait_until 30 "the answer" eval '[ "$(as_user delete widgets.'"$group"')" = no ]'

kubectl delete clusterrole "$p-gadgets" >/dev/null
check "a picked role deleted takes its rules away: none is left" \
    cluster_wait_until 60 "the rules" rules_are "$p-edit" ""
check "the user may no longer create widgets" \
    cluster_wait_until 30 "the answer" eval '[ "$(as_user create widgets.'"$group"')" = no ]'
check "the roles the selector does not pick were never taken" \
    eval '! kubectl get clusterrole '"$p-edit"' -o yaml | grep -q secrets-of-others'

tap_done
