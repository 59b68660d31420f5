#!/usr/bin/env python3
"""nodes.py - the apiserver side of bench/nodes: watch, silence, revive, report.

usage: nodes.py watch KUBECONFIG OUT
       nodes.py silence KUBECONFIG OUT NODE...
       nodes.py revive KUBECONFIG NODE...
       nodes.py done WATCH SILENCE
       nodes.py report WATCH SILENCE NAME JSON

watch: one watch on the nodes labelled bench-silent=1 and one on the pods of namespace
bench, each a plain HTTP stream (no kubectl in between); every event is written to OUT as a
JSON line with its arrival time (time.time(), to the microsecond; behind the write by the
apiserver's watch delivery on loopback). Lists first, then
watches from the list's resourceVersion, again on a stream's end. Runs until killed.

silence: takes the Lease of each NODE in kube-node-lease (holderIdentity bench-silencer,
leaseDurationSeconds 3600), so that kwok renews it no more, then takes the annotation
kwok.x-k8s.io/node off the node. kwok still posts the node's status (Ready, a new
lastHeartbeatTime) about 10 minutes after the last one, its stage
node-heartbeat-with-lease, whoever holds the Lease; taking the annotation off did not
stop the one already due (2026-11-28: 5 of 50 nodes came back to life so, in each run).
The report counts from such a heartbeat.
Writes to OUT, as JSON, each Lease's renewTime as the patch's answer gave it: the node's
last heartbeat. A Lease kwok renewed back meanwhile (checked 15 s later) is taken again.

revive: gives each NODE its annotation back and sets its Lease's renewTime to 2000-01-01,
expired, so that kwok manages the node and takes the Lease again.

done: exits 0 once every silenced node has been seen with the unreachable:NoExecute taint
and every pod bound to one of them seen deleted or being deleted.

report: the figures of one manager's run, one line each, and JSON of them to the file JSON.
"""
import base64
import datetime
import http.client
import json
import os
import ssl
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse

import yaml

UNREACHABLE = "node.kubernetes.io/unreachable"


def rfc3339(s):
    """Seconds since the epoch of a Kubernetes time (Time or MicroTime)."""
    if s is None:
        return None
    s = s.rstrip("Z")
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in s else "%Y-%m-%dT%H:%M:%S"
    return datetime.datetime.strptime(s, fmt).replace(tzinfo=datetime.timezone.utc).timestamp()


class Client:
    def __init__(self, kubeconfig):
        cfg = yaml.safe_load(open(kubeconfig))
        cl, us = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]

        # ssl reads certificates and keys from files only: each is written to a private
        # temporary file (0600) and removed once loaded.
        files = []

        def tmp(data):
            f = tempfile.NamedTemporaryFile(delete=False)
            files.append(f.name)
            f.write(base64.b64decode(data))
            f.close()
            return f.name
        try:
            self.ctx = ssl.create_default_context(cafile=tmp(cl["certificate-authority-data"]))
            self.ctx.load_cert_chain(tmp(us["client-certificate-data"]),
                                     tmp(us["client-key-data"]))
        finally:
            for name in files:
                os.unlink(name)
        url = urllib.parse.urlparse(cl["server"])
        self.host, self.port = url.hostname, url.port
        self.conn = None

    def connect(self):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx)

    def request(self, verb, path, body=None, ctype="application/merge-patch+json"):
        for attempt in range(5):
            try:
                if self.conn is None:
                    self.conn = self.connect()
                self.conn.request(verb, path, json.dumps(body) if body is not None else None,
                                  {"Content-Type": ctype} if body is not None else {})
                r = self.conn.getresponse()
                data = r.read()
                return r.status, json.loads(data) if data else None
            except (OSError, http.client.HTTPException):
                self.conn = None
                time.sleep(0.2)
        raise SystemExit(f"nodes.py: {verb} {path} failed")


def node_line(t, event, obj):
    ready = next((c for c in obj.get("status", {}).get("conditions", [])
                  if c["type"] == "Ready"), {})
    return {"t": t, "k": "node", "e": event, "n": obj["metadata"]["name"],
            "taints": [f'{x["key"]}:{x["effect"]}@{x.get("timeAdded", "")}'
                       for x in obj.get("spec", {}).get("taints", [])],
            "ready": ready.get("status"), "hb": ready.get("lastHeartbeatTime")}


def pod_line(t, event, obj):
    meta = obj["metadata"]
    return {"t": t, "k": "pod", "e": event, "n": meta["name"],
            "node": obj.get("spec", {}).get("nodeName"),
            "del": meta.get("deletionTimestamp")}


def watch(kubeconfig, out):
    lock = threading.Lock()
    f = open(out, "a", buffering=1)

    def emit(line):
        with lock:
            f.write(json.dumps(line) + "\n")

    def loop(path, query, to_line):
        client = Client(kubeconfig)
        rv = None
        while True:
            try:
                if rv is None:
                    status, body = client.request("GET", f"{path}?{query}")
                    t = time.time()
                    rv = body["metadata"]["resourceVersion"]
                    for obj in body["items"]:
                        emit(to_line(t, "LIST", obj))
                c = client.connect()
                c.request("GET", f"{path}?{query}&watch=1&allowWatchBookmarks=true"
                          f"&resourceVersion={rv}&timeoutSeconds=3000")
                r = c.getresponse()
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
                        emit(to_line(t, ev["type"], ev["object"]))
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.5)
    threads = [threading.Thread(target=loop, daemon=True,
                                args=("/api/v1/nodes", "labelSelector=bench-silent%3D1",
                                      node_line)),
               threading.Thread(target=loop, daemon=True,
                                args=("/api/v1/namespaces/bench/pods", "limit=0", pod_line))]
    for th in threads:
        th.start()
    while True:
        time.sleep(3600)


def lease_path(node):
    return f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}"


def silence(kubeconfig, out, nodes):
    client = Client(kubeconfig)
    spec = {"spec": {"holderIdentity": "bench-silencer", "leaseDurationSeconds": 3600}}
    last, at = {}, time.time()
    for n in nodes:
        status, body = client.request("PATCH", lease_path(n), spec)
        if status != 200:
            raise SystemExit(f"nodes.py: lease {n}: {status} {body}")
        last[n] = body["spec"]["renewTime"]
    for n in nodes:
        client.request("PATCH", f"/api/v1/nodes/{n}",
                       {"metadata": {"annotations": {"kwok.x-k8s.io/node": None}}})
    took = time.time() - at
    time.sleep(15)
    retaken = 0
    for n in nodes:
        status, body = client.request("GET", lease_path(n))
        if body["spec"].get("holderIdentity") != "bench-silencer":
            retaken += 1
            status, body = client.request("PATCH", lease_path(n), spec)
            last[n] = body["spec"]["renewTime"]
    json.dump({"at": at, "took": took, "retaken": retaken, "renew": last}, open(out, "w"))
    print(f"{len(nodes)} Leases taken in {took:.2f} s"
          + (f"; {retaken} renewed back by kwok, taken again" if retaken else ""))


def revive(kubeconfig, nodes):
    client = Client(kubeconfig)
    for n in nodes:
        client.request("PATCH", f"/api/v1/nodes/{n}",
                       {"metadata": {"annotations": {"kwok.x-k8s.io/node": "fake"}}})
        client.request("PATCH", lease_path(n),
                       {"spec": {"renewTime": "2000-01-01T00:00:00.000000Z"}})


def analyse(watch_file, silence_file):
    """Per silenced node: its last heartbeat, when it was first seen tainted
    unreachable:NoExecute (and the taint's timeAdded), and first seen Unknown after that
    heartbeat; per pod on them: first seen deleted or being deleted; the pods elsewhere seen
    being deleted. The last heartbeat is the Lease's renewTime at the silence, or a later
    status heartbeat (Ready's lastHeartbeatTime, whole seconds) seen before the taint:
    kwok's stage node-heartbeat-with-lease may still post one (see silence)."""
    sil = json.load(open(silence_file))
    at = sil["at"]
    nodes = {n: {"renew": rfc3339(r), "events": []} for n, r in sil["renew"].items()}
    pods, elsewhere = {}, set()
    for raw in open(watch_file):
        ln = json.loads(raw)
        if ln["k"] == "node" and ln["n"] in nodes:
            nodes[ln["n"]]["events"].append(ln)
        elif ln["k"] == "pod":
            if ln["node"] in nodes:
                p = pods.setdefault(ln["n"], {"node": ln["node"]})
                if ln["t"] >= at and (ln["e"] == "DELETED" or ln["del"]) and "gone" not in p:
                    p["gone"] = ln["t"]
            elif ln["t"] >= at and (ln["e"] == "DELETED" or ln["del"]):
                elsewhere.add(ln["n"])
    for d in nodes.values():
        events = d.pop("events")
        for ln in events:
            taint = next((x for x in ln["taints"]
                          if x.startswith(UNREACHABLE + ":NoExecute@")), None)
            if ln["t"] >= at and taint:
                d["taint"] = ln["t"]
                d["added"] = rfc3339(taint.split("@", 1)[1] or None)
                break
        hb, hb_seen = d["renew"], at
        for ln in events:
            if ln["t"] >= d.get("taint", float("inf")):
                break
            if ln["hb"] and rfc3339(ln["hb"]) > hb:
                hb, hb_seen = rfc3339(ln["hb"]), max(ln["t"], at)
        d["hb"] = hb
        if hb > d["renew"] + 1:
            d["revived"] = 1
        for ln in events:
            if ln["t"] > hb_seen and ln["ready"] == "Unknown":
                d["unknown"] = ln["t"]
                break
    return nodes, pods, elsewhere


def done(watch_file, silence_file):
    nodes, pods, _ = analyse(watch_file, silence_file)
    return all("taint" in d for d in nodes.values()) and all("gone" in p for p in pods.values())


def report(watch_file, silence_file, name, out):
    nodes, pods, elsewhere = analyse(watch_file, silence_file)

    def spread(values):
        values = sorted(values)
        if not values:
            return None
        return {"first": values[0], "median": statistics.median(values), "last": values[-1]}

    def show(what, s, unit="s"):
        if s is None:
            print(f"{name}: {what}: none seen")
        else:
            print(f"{name}: {what}: first {s['first']:.1f} {unit}, median {s['median']:.1f},"
                  f" last {s['last']:.1f}")
    unknown = spread([d["unknown"] - d["hb"] for d in nodes.values() if "unknown" in d])
    taint = spread([d["taint"] - d["hb"] for d in nodes.values() if "taint" in d])
    gone = spread([p["gone"] - nodes[p["node"]]["hb"] for p in pods.values() if "gone" in p])
    # From the node's taint to the last of its pods gone: the taint-eviction controller's own.
    node_gone = {}
    for p in pods.values():
        if "gone" in p:
            node_gone[p["node"]] = max(node_gone.get(p["node"], 0), p["gone"])
    after = spread([node_gone[n] - d["taint"] for n, d in nodes.items()
                    if "taint" in d and n in node_gone])
    stamp = [d["taint"] - d["added"] for d in nodes.values() if d.get("added")]
    show("Ready Unknown after the last heartbeat", unknown)
    show("unreachable:NoExecute taint after the last heartbeat", taint)
    show("pods deleted after their node's last heartbeat", gone)
    show("a node's last pod deleted after its taint", after)
    tainted = sum("taint" in d for d in nodes.values())
    evicted = sum("gone" in p for p in pods.values())
    print(f"{name}: {tainted}/{len(nodes)} nodes tainted, {evicted}/{len(pods)} pods evicted;"
          f" {len(elsewhere)} pods on healthy nodes deleted")
    revived = sum("revived" in d for d in nodes.values())
    if revived:
        print(f"{name}: {revived} silenced nodes had a status heartbeat from kwok after the"
              f" silence: their times count from it, and they join the limiter's queue late")
    if stamp:
        print(f"{name}: the taint seen {statistics.median(stamp):.2f} s (median) after its"
              f" timeAdded (second precision)")
    json.dump({"unknown": unknown, "taint": taint, "gone": gone, "after": after},
              open(out, "w"))


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "watch" and len(argv) == 4:
        watch(argv[2], argv[3])
    elif cmd == "silence" and len(argv) >= 4:
        silence(argv[2], argv[3], argv[4:])
    elif cmd == "revive" and len(argv) >= 3:
        revive(argv[2], argv[3:])
    elif cmd == "done" and len(argv) == 4:
        sys.exit(0 if done(argv[2], argv[3]) else 1)
    elif cmd == "report" and len(argv) == 6:
        report(argv[2], argv[3], argv[4], argv[5])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
