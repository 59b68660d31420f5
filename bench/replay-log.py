#!/usr/bin/env python3
# replay-log.py - write a synthetic `sqlkcm run --record` log of ReplicaSets' pods churning.
#
# usage: bench/replay-log.py [--events N] [--replicasets R] [--batch B] > LOG
#
# R ReplicaSets of 3 replicas (100 per namespace) are added first; then, round by round,
# each ReplicaSet's pods move on by one event: three pods are created, scheduled and made
# ready, and from then on one pod at a time is replaced (a new pod added, scheduled, made
# ready; an old one marked for deletion, then deleted). Pod objects are ~2 KB of compact
# JSON, shaped as the apiserver returns them (no managedFields, as the recorder writes).
# Every B consecutive events share a time, one millisecond apart, as one committed
# informer batch. The output is the same for the same arguments.
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("--events", type=int, default=1000000)
p.add_argument("--replicasets", type=int, default=10000)
p.add_argument("--batch", type=int, default=100)
a = p.parse_args()

BASE = 1795000000  # 2026-11-19T...
out = sys.stdout
written = 0
rv = 1000


def stamp(ms):
    s, m = divmod(BASE * 1000 + ms, 1000)
    import time
    t = time.gmtime(s)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03d000Z" % (t[:6] + (m,))


def iso(sec):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sec))


def emit(resource, typ, obj):
    global written, rv
    if written >= a.events:
        return
    rv += 1
    obj["metadata"]["resourceVersion"] = str(rv)
    ms = written // a.batch
    out.write('{"time":"%s","resource":"%s","type":"%s","object":%s}\n' % (
        stamp(ms), resource, typ, json.dumps(obj, separators=(",", ":"))))
    written += 1


def rs_obj(i):
    ns, name = "ns-%03d" % (i // 100), "rs-%05d" % i
    return {"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": {
        "name": name, "namespace": ns, "uid": "00000000-0000-4000-8000-%012d" % i,
        "generation": 1, "creationTimestamp": iso(BASE),
        "labels": {"app": name, "tier": "web"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name, "tier": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.0"}]}}},
        "status": {"replicas": 0}}


def pod_obj(i, n, phase, ms):
    rs = rs_obj(i)
    name = "%s-%05d" % (rs["metadata"]["name"], n)
    now = iso(BASE + ms // 1000)
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {
        "name": name, "generateName": rs["metadata"]["name"] + "-",
        "namespace": rs["metadata"]["namespace"],
        "uid": "%08d-%04d-4000-9000-000000000000" % (i, n),
        "creationTimestamp": now,
        "labels": {"app": rs["metadata"]["name"], "tier": "web", "pod-template-hash": "5d8f9c7b6d"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": iso(BASE),
                        "prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                             "name": rs["metadata"]["name"], "uid": rs["metadata"]["uid"],
                             "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"containers": [{
            "name": "app", "image": "registry.example/app:1.0",
            "args": ["--listen=:8080", "--log-level=info"],
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                               "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}],
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "schedulerName": "default-scheduler",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}]},
        "status": {"phase": "Pending", "qosClass": "Burstable"}}
    if phase >= 1:
        pod["spec"]["nodeName"] = "node-%d" % (i % 50)
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]
    if phase >= 2:
        pod["status"]["phase"] = "Running"
        pod["status"]["podIP"] = "10.%d.%d.%d" % (i // 65536 % 256, i // 256 % 256, i % 256)
        pod["status"]["startTime"] = now
        pod["status"]["conditions"] += [{"type": t, "status": "True", "lastTransitionTime": now}
                                        for t in ("Initialized", "ContainersReady", "Ready")]
        pod["status"]["containerStatuses"] = [{"name": "app", "ready": True, "restartCount": 0,
                                               "image": "registry.example/app:1.0", "started": True,
                                               "state": {"running": {"startedAt": now}}}]
    if phase >= 3:
        pod["metadata"]["deletionTimestamp"] = iso(BASE + ms // 1000 + 30)
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
    return pod


# The ReplicaSets.
for i in range(a.replicasets):
    emit("replicasets", "ADDED", rs_obj(i))

# Each ReplicaSet's pod events, as (pod number, phase, type) steps.
def steps():
    s = []
    for n in range(3):
        s += [(n, 0, "ADDED"), (n, 1, "MODIFIED"), (n, 2, "MODIFIED")]
    n = 3
    while True:
        s += [(n, 0, "ADDED"), (n, 1, "MODIFIED"), (n, 2, "MODIFIED"),
              (n - 3, 3, "MODIFIED"), (n - 3, 3, "DELETED")]
        n += 1
        if len(s) > a.events // max(a.replicasets, 1) + 5:
            return s

plan = steps()
r = 0
while written < a.events:
    if r >= len(plan):
        plan += steps()[len(plan):]  # never reached with the defaults
    for i in range(a.replicasets):
        n, phase, typ = plan[r]
        emit("pods", typ, pod_obj(i, n, phase, written // a.batch))
        if written >= a.events:
            break
    r += 1
