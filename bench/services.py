#!/usr/bin/env python3
"""services.py - the apiserver side of bench/services: make, reset, flip, current, watch,
writes, ds-done.

usage: services.py make KUBECONFIG S P N
       services.py reset KUBECONFIG
       services.py flip KUBECONFIG
       services.py current KUBECONFIG S P FLIPPED
       services.py watch KUBECONFIG OUT
       services.py writes WATCH SINCE
       services.py ds-done KUBECONFIG NAMESPACE NAME N

make: namespace bench with S Services svc-0..svc-(S-1) (port 80 to the named target port
"web"), each selecting its P pods p-<s>-<j>, bound at once (spec.nodeName) round-robin to
the N nodes kwok-node-*, 16 requests at a time; then waits until every pod is Running and
Ready (kwok makes them so).

reset: with no controller running, deletes the EndpointSlices and Endpoints of namespace
bench, and makes every pod Ready again (its Ready condition True).

flip: sets the Ready condition of every fifth pod (p-<s>-<j> with s*P+j a multiple of 5,
20% of them) to False, through the status subresource, 16 requests at a time; prints how
many and the seconds it took, and the time it began (time.time()) on its last line.

current: exits 0 when, for every Service, its EndpointSlices hold its P pods once each,
those flipped (FLIPPED 1) with ready false and the others ready true, and its Endpoints
object lists as many addresses and notReadyAddresses.

watch: watches EndpointSlices and Endpoints of namespace bench (plain HTTP streams, from
the resourceVersion of a list) and writes each event's arrival time and type to OUT, a line
each. Runs until killed.

writes: the number of ADDED, MODIFIED and DELETED events in WATCH that arrived after SINCE
(time.time() seconds), by resource: each is one write of a controller.

ds-done: exits 0 when DaemonSet NAMESPACE/NAME has rolled out to its newest generation on
N nodes: observedGeneration current, N desired, updated and available.
"""
import concurrent.futures
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodes import Client  # noqa: E402

NS = "bench"
PARALLEL = 16
_local = threading.local()


def client(kubeconfig):
    if getattr(_local, "client", None) is None:
        _local.client = Client(kubeconfig)
    return _local.client


def pod_names(s, p):
    return [(f"p-{i}-{j}", i, (i * p + j) % 5 == 0) for i in range(s) for j in range(p)]


def each(kubeconfig, fn, items):
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as ex:
        for status, body in ex.map(lambda it: fn(client(kubeconfig), it), items):
            if status not in (200, 201, 409):
                raise SystemExit(f"services.py: {status} {body}")


def make(kubeconfig, s, p, n):
    c = Client(kubeconfig)
    c.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}},
              "application/json")

    def service(cl, i):
        return cl.request("POST", f"/api/v1/namespaces/{NS}/services", {
            "metadata": {"name": f"svc-{i}"},
            "spec": {"selector": {"app": f"svc-{i}"},
                     "ports": [{"name": "http", "port": 80, "targetPort": "web"}]}},
            "application/json")

    def pod(cl, item):
        name, i, _ = item
        k = int(name.rsplit("-", 1)[1]) + i * p
        return cl.request("POST", f"/api/v1/namespaces/{NS}/pods", {
            "metadata": {"name": name, "labels": {"app": f"svc-{i}"}},
            "spec": {"nodeName": f"kwok-node-{k % n}",
                     "containers": [{"name": "c", "image": "pause",
                                     "ports": [{"name": "web", "containerPort": 8080}]}]}},
            "application/json")
    at = time.time()
    each(kubeconfig, service, range(s))
    each(kubeconfig, pod, pod_names(s, p))
    while True:
        status, body = c.request("GET", f"/api/v1/namespaces/{NS}/pods")
        ready = sum(1 for x in body["items"] if x["status"].get("phase") == "Running"
                    and any(k["type"] == "Ready" and k["status"] == "True"
                            for k in x["status"].get("conditions", [])))
        if ready == s * p:
            break
        time.sleep(2)
    print(f"{s} Services and {s * p} pods on {n} nodes, Running and Ready, in"
          f" {time.time() - at:.1f} s")


def set_ready(cl, name, value):
    return cl.request("PATCH", f"/api/v1/namespaces/{NS}/pods/{name}/status",
                      {"status": {"conditions": [{"type": "Ready", "status": value}]}},
                      "application/strategic-merge-patch+json")


def reset(kubeconfig):
    c = Client(kubeconfig)
    for path in (f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices",
                 f"/api/v1/namespaces/{NS}/endpoints"):
        status, body = c.request("DELETE", path)
        if status != 200:
            raise SystemExit(f"services.py: DELETE {path}: {status} {body}")
    status, body = c.request("GET", f"/api/v1/namespaces/{NS}/pods")
    down = [x["metadata"]["name"] for x in body["items"]
            if not any(k["type"] == "Ready" and k["status"] == "True"
                       for k in x["status"].get("conditions", []))]
    each(kubeconfig, lambda cl, name: set_ready(cl, name, "True"), down)


def flip(kubeconfig):
    c = Client(kubeconfig)
    status, body = c.request("GET", f"/api/v1/namespaces/{NS}/services")
    s = sum(1 for x in body["items"] if x["metadata"]["name"].startswith("svc-"))
    status, body = c.request("GET", f"/api/v1/namespaces/{NS}/pods")
    p = len(body["items"]) // s
    names = [name for name, _, flipped in pod_names(s, p) if flipped]
    at = time.time()
    each(kubeconfig, lambda cl, name: set_ready(cl, name, "False"), names)
    print(f"{len(names)} pods made not Ready in {time.time() - at:.1f} s")
    print(f"{at:.6f}")


def current(kubeconfig, s, p, flipped):
    c = Client(kubeconfig)
    want = {}
    for name, i, f in pod_names(s, p):
        want.setdefault(f"svc-{i}", {})[name] = not (f and flipped)
    status, body = c.request("GET", f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices")
    got = {}
    for sl in body["items"]:
        svc = sl["metadata"].get("labels", {}).get("kubernetes.io/service-name")
        for e in sl.get("endpoints") or []:
            pod = (e.get("targetRef") or {}).get("name")
            got.setdefault(svc, []).append((pod, e.get("conditions", {}).get("ready")))
    for svc, pods in want.items():
        have = got.get(svc, [])
        if len(have) != len(pods) or dict(have) != pods:
            return 1
    status, body = c.request("GET", f"/api/v1/namespaces/{NS}/endpoints")
    eps = {x["metadata"]["name"]: x for x in body["items"]}
    for svc, pods in want.items():
        ready = sum(1 for r in pods.values() if r)
        subsets = (eps.get(svc) or {}).get("subsets") or []
        a = sum(len(x.get("addresses") or []) for x in subsets)
        na = sum(len(x.get("notReadyAddresses") or []) for x in subsets)
        if a != ready or na != len(pods) - ready:
            return 1
    return 0


def watch(kubeconfig, out):
    lock = threading.Lock()
    f = open(out, "a", buffering=1)

    def loop(path, kind):
        cl = Client(kubeconfig)
        rv = None
        while True:
            try:
                if rv is None:
                    status, body = cl.request("GET", path)
                    rv = body["metadata"]["resourceVersion"]
                conn = cl.connect()
                conn.request("GET", f"{path}?watch=1&allowWatchBookmarks=true"
                             f"&resourceVersion={rv}&timeoutSeconds=3000")
                r = conn.getresponse()
                if r.status != 200:
                    rv = None
                    continue
                while True:
                    raw = r.readline()
                    if not raw:
                        break
                    t = time.time()
                    ev = json.loads(raw)
                    if ev["type"] == "ERROR":
                        rv = None
                        break
                    rv = ev["object"]["metadata"]["resourceVersion"]
                    if ev["type"] != "BOOKMARK":
                        with lock:
                            f.write(f"{t:.6f} {kind} {ev['type']}\n")
            except (OSError, ValueError):
                time.sleep(0.5)
    for path, kind in ((f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices",
                        "endpointslices"),
                       (f"/api/v1/namespaces/{NS}/endpoints", "endpoints")):
        threading.Thread(target=loop, args=(path, kind), daemon=True).start()
    while True:
        time.sleep(3600)


def writes(watch_file, since):
    counts = {"endpointslices": 0, "endpoints": 0}
    for line in open(watch_file):
        t, kind, _ = line.split()
        if float(t) >= since:
            counts[kind] += 1
    print(f"{counts['endpointslices'] + counts['endpoints']} {counts['endpointslices']}"
          f" {counts['endpoints']}")


def ds_done(kubeconfig, ns, name, n):
    status, ds = Client(kubeconfig).request("GET", f"/apis/apps/v1/namespaces/{ns}/daemonsets/{name}")
    st = ds.get("status", {}) if status == 200 else {}
    ok = (st.get("observedGeneration") == ds["metadata"]["generation"]
          and st.get("desiredNumberScheduled") == n and st.get("updatedNumberScheduled") == n
          and st.get("numberAvailable") == n and st.get("numberUnavailable", 0) == 0)
    return 0 if ok else 1


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "make" and len(args) == 4:
        make(args[0], *map(int, args[1:]))
    elif cmd == "reset" and len(args) == 1:
        reset(args[0])
    elif cmd == "flip" and len(args) == 1:
        flip(args[0])
    elif cmd == "current" and len(args) == 4:
        return current(args[0], *map(int, args[1:]))
    elif cmd == "watch" and len(args) == 2:
        watch(*args)
    elif cmd == "writes" and len(args) == 2:
        writes(args[0], float(args[1]))
    elif cmd == "ds-done" and len(args) == 4:
        return ds_done(args[0], args[1], args[2], int(args[3]))
    else:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
