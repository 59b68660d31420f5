#!/usr/bin/env python3
"""workloads.py - the apiserver side of bench/workloads: make-jobs, jobs-done, sts-done,
make-pdbs, pdbs-done, pods-ready.

usage: workloads.py make-jobs KUBECONFIG NAMESPACE J C P
       workloads.py jobs-done KUBECONFIG NAMESPACE J
       workloads.py sts-done KUBECONFIG NAMESPACE NAME R
       workloads.py make-pdbs KUBECONFIG NAMESPACE D
       workloads.py pdbs-done KUBECONFIG NAMESPACE D
       workloads.py pods-ready KUBECONFIG NAMESPACE N
       workloads.py make-quota-pods KUBECONFIG Q P
       workloads.py make-quotas KUBECONFIG Q
       workloads.py quotas-done KUBECONFIG Q P
       workloads.py make-volumes KUBECONFIG NAMESPACE V
       workloads.py volumes-done KUBECONFIG NAMESPACE V

make-jobs: J Jobs job-0..job-(J-1) in NAMESPACE (created), each of C completions at
parallelism P, 16 requests at a time.

The -done and pods-ready commands poll each second, with one connection, until what they
wait for holds (exit 0) or 3600 s have passed (exit 1).

jobs-done: exits 0 when J Jobs of NAMESPACE have the condition Complete True.

sts-done: exits 0 when StatefulSet NAMESPACE/NAME has rolled out to its newest generation:
observedGeneration current, R ready, R updated, currentRevision the updateRevision.

make-pdbs: D PodDisruptionBudgets pdb-0..pdb-(D-1) in NAMESPACE, each with minAvailable 1
over the pods of Deployment d-<i> (label app: d-<i>), 16 requests at a time; D
Deployments d-0..d-(D-1) of 2 replicas each, unless they exist.

pdbs-done: exits 0 when the D budgets of NAMESPACE have a status of their generation with
2 expected pods, 2 healthy, 1 disruption allowed.

pods-ready: exits 0 when NAMESPACE has N pods Running and Ready.

make-quota-pods: Q namespaces quota-0..quota-(Q-1), each with P pods requesting 10m of cpu
and 10Mi of memory, of a scheduler that does not exist (they stay Pending, bound to no
node), 16 requests at a time.

make-quotas: in each of those namespaces, deletes every ResourceQuota and makes 5 anew,
without status: pods, requests.cpu, requests.memory, count/configmaps, and pods of the
BestEffort scope.

quotas-done: exits 0 when every quota of those Q namespaces has a status of its spec's
hard limits, and the pods quota's used is P.

make-volumes: V PersistentVolumes NAMESPACE-pv-0.. (1Gi, ReadWriteOnce, a CSI volume of a
driver that does not exist, StorageClass NAMESPACE, which is not made) and V claims
claim-0.. of NAMESPACE (created) of that class asking for 1Gi, 16 requests at a time.

volumes-done: exits 0 when the V claims of NAMESPACE are Bound.
"""
import concurrent.futures
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodes import Client  # noqa: E402

PARALLEL = 16
_local = threading.local()


def client(kubeconfig):
    if getattr(_local, "client", None) is None:
        _local.client = Client(kubeconfig)
    return _local.client


def each(kubeconfig, fn, items):
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as ex:
        for status, body in ex.map(lambda it: fn(client(kubeconfig), it), items):
            if status not in (200, 201, 409):
                raise SystemExit(f"workloads.py: {status} {body}")


def namespace(kubeconfig, ns):
    Client(kubeconfig).request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}},
                               "application/json")


def make_jobs(kubeconfig, ns, j, c, p):
    namespace(kubeconfig, ns)

    def job(cl, i):
        return cl.request("POST", f"/apis/batch/v1/namespaces/{ns}/jobs", {
            "metadata": {"name": f"job-{i}"},
            "spec": {"completions": c, "parallelism": p, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}]}}}},
            "application/json")
    each(kubeconfig, job, range(j))


def list_items(kubeconfig, path):
    status, body = client(kubeconfig).request("GET", path)
    return body.get("items", []) if status == 200 else []


def poll(check, *args):
    """Calls check(*args) each second until it returns 0 (then 0), for an hour at most."""
    deadline = time.time() + 3600
    while time.time() < deadline:
        if check(*args) == 0:
            return 0
        time.sleep(1)
    return 1


def jobs_done(kubeconfig, ns, j):
    done = sum(1 for x in list_items(kubeconfig, f"/apis/batch/v1/namespaces/{ns}/jobs")
               if any(k["type"] == "Complete" and k["status"] == "True"
                      for k in x.get("status", {}).get("conditions", [])))
    return 0 if done == j else 1


def sts_done(kubeconfig, ns, name, r):
    status, s = client(kubeconfig).request(
        "GET", f"/apis/apps/v1/namespaces/{ns}/statefulsets/{name}")
    st = s.get("status", {}) if status == 200 else {}
    ok = (status == 200 and st.get("observedGeneration") == s["metadata"]["generation"]
          and st.get("readyReplicas") == r and st.get("updatedReplicas") == r
          and st.get("currentRevision") == st.get("updateRevision"))
    return 0 if ok else 1


def make_pdbs(kubeconfig, ns, d):
    namespace(kubeconfig, ns)

    def deployment(cl, i):
        return cl.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", {
            "metadata": {"name": f"d-{i}"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": f"d-{i}"}},
                     "template": {"metadata": {"labels": {"app": f"d-{i}"}},
                                  "spec": {"containers": [{"name": "c",
                                                           "image": "pause"}]}}}},
            "application/json")

    def pdb(cl, i):
        return cl.request("POST", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {
            "metadata": {"name": f"pdb-{i}"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": f"d-{i}"}}}},
            "application/json")
    each(kubeconfig, deployment, range(d))
    each(kubeconfig, pdb, range(d))


def pdbs_done(kubeconfig, ns, d):
    done = 0
    for x in list_items(kubeconfig, f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"):
        st = x.get("status", {})
        done += (st.get("observedGeneration") == x["metadata"]["generation"]
                 and st.get("expectedPods") == 2 and st.get("currentHealthy") == 2
                 and st.get("disruptionsAllowed") == 1)
    return 0 if done == d else 1


def pods_ready(kubeconfig, ns, n):
    ready = sum(1 for x in list_items(kubeconfig, f"/api/v1/namespaces/{ns}/pods")
                if x["status"].get("phase") == "Running"
                and any(k["type"] == "Ready" and k["status"] == "True"
                        for k in x["status"].get("conditions", [])))
    return 0 if ready == n else 1


QUOTAS = {
    "q-pods": {"hard": {"pods": "100000"}},
    "q-cpu": {"hard": {"requests.cpu": "1000"}},
    "q-memory": {"hard": {"requests.memory": "1000Gi"}},
    "q-configmaps": {"hard": {"count/configmaps": "1000"}},
    "q-besteffort": {"hard": {"pods": "100000"}, "scopes": ["BestEffort"]},
}


def make_quota_pods(kubeconfig, q, p):
    for i in range(q):
        namespace(kubeconfig, f"quota-{i}")

    def pod(cl, item):
        i, k = item
        return cl.request("POST", f"/api/v1/namespaces/quota-{i}/pods", {
            "metadata": {"name": f"p-{k}"},
            "spec": {"schedulerName": "no-such-scheduler",
                     "containers": [{"name": "c", "image": "pause", "resources": {
                         "requests": {"cpu": "10m", "memory": "10Mi"}}}]}},
            "application/json")
    each(kubeconfig, pod, [(i, k) for i in range(q) for k in range(p)])


def make_quotas(kubeconfig, q):
    def reset(cl, i):
        status, body = cl.request("DELETE", f"/api/v1/namespaces/quota-{i}/resourcequotas")
        if status != 200:
            return status, body
        for name, spec in QUOTAS.items():
            status, body = cl.request("POST", f"/api/v1/namespaces/quota-{i}/resourcequotas",
                                      {"metadata": {"name": name}, "spec": spec},
                                      "application/json")
            if status != 201:
                return status, body
        return 201, None
    each(kubeconfig, reset, range(q))


def quotas_done(kubeconfig, q, p):
    items = list_items(kubeconfig, "/api/v1/resourcequotas")
    done = sum(1 for x in items if x["metadata"]["namespace"].startswith("quota-")
               and x.get("status", {}).get("hard") == x["spec"]["hard"]
               and set(x["status"].get("used", {})) == set(x["spec"]["hard"])
               and (x["metadata"]["name"] != "q-pods"
                    or x["status"]["used"]["pods"] == str(p)))
    return 0 if done == q * len(QUOTAS) else 1


def make_volumes(kubeconfig, ns, v):
    namespace(kubeconfig, ns)

    def volume(cl, i):
        return cl.request("POST", "/api/v1/persistentvolumes", {
            "metadata": {"name": f"{ns}-pv-{i}"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": ns, "persistentVolumeReclaimPolicy": "Retain",
                     "csi": {"driver": "bench.example.com", "volumeHandle": f"{ns}-{i}"}}},
            "application/json")

    def claim(cl, i):
        return cl.request("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", {
            "metadata": {"name": f"claim-{i}"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": ns,
                     "resources": {"requests": {"storage": "1Gi"}}}},
            "application/json")
    each(kubeconfig, volume, range(v))
    each(kubeconfig, claim, range(v))


def volumes_done(kubeconfig, ns, v):
    bound = sum(1 for x in list_items(kubeconfig,
                                      f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
                if x.get("status", {}).get("phase") == "Bound")
    return 0 if bound == v else 1


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "make-jobs" and len(args) == 5:
        make_jobs(args[0], args[1], *map(int, args[2:]))
    elif cmd == "jobs-done" and len(args) == 3:
        return poll(jobs_done, args[0], args[1], int(args[2]))
    elif cmd == "sts-done" and len(args) == 4:
        return poll(sts_done, args[0], args[1], args[2], int(args[3]))
    elif cmd == "make-pdbs" and len(args) == 3:
        make_pdbs(args[0], args[1], int(args[2]))
    elif cmd == "pdbs-done" and len(args) == 3:
        return poll(pdbs_done, args[0], args[1], int(args[2]))
    elif cmd == "pods-ready" and len(args) == 3:
        return poll(pods_ready, args[0], args[1], int(args[2]))
    elif cmd == "make-quota-pods" and len(args) == 3:
        make_quota_pods(args[0], *map(int, args[1:]))
    elif cmd == "make-quotas" and len(args) == 2:
        make_quotas(args[0], int(args[1]))
    elif cmd == "quotas-done" and len(args) == 3:
        return poll(quotas_done, args[0], *map(int, args[1:]))
    elif cmd == "make-volumes" and len(args) == 3:
        make_volumes(args[0], args[1], int(args[2]))
    elif cmd == "volumes-done" and len(args) == 3:
        return poll(volumes_done, args[0], args[1], int(args[2]))
    else:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
