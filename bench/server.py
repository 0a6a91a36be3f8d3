"""A fast stand-in for the Kubernetes API server, on 127.0.0.1, for what the tool and kubectl read.

Serves a cluster written by bench.generate: discovery (/version, /api, /apis, resource
lists), lists with `limit`/`continue`, label selectors (=, ==, !=, exists, !key, in,
notin) and the field selectors the tool and kubectl use (metadata.name,
metadata.namespace, spec.nodeName, status.phase, involvedObject.*, reason; = == !=),
namespaced and cluster-wide lists, and GET of one object. Items are kept as the
pre-encoded bytes written by the generator, so a page costs one join: the server
stays far cheaper than the clients it measures. Read-only: writes answer 405.

`/_bench/log` returns the request targets seen since the previous call (and clears
them): the runner replays exactly those for the floor.

    python -m bench.server DIR [--port 0]     # prints "listening http://127.0.0.1:PORT"
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

try:
    from orjson import loads as _loads
except ImportError:
    from json import loads as _loads

# (group/version prefix, plural) -> (kind, namespaced)
RESOURCES = {
    ("/api/v1", "nodes"): ("Node", False), ("/api/v1", "pods"): ("Pod", True),
    ("/api/v1", "services"): ("Service", True), ("/api/v1", "events"): ("Event", True),
    ("/api/v1", "namespaces"): ("Namespace", False), ("/api/v1", "replicationcontrollers"): ("ReplicationController", True),
    ("/api/v1", "persistentvolumes"): ("PersistentVolume", False),
    ("/api/v1", "persistentvolumeclaims"): ("PersistentVolumeClaim", True),
    ("/apis/apps/v1", "deployments"): ("Deployment", True), ("/apis/apps/v1", "replicasets"): ("ReplicaSet", True),
    ("/apis/apps/v1", "statefulsets"): ("StatefulSet", True), ("/apis/apps/v1", "daemonsets"): ("DaemonSet", True),
    ("/apis/batch/v1", "jobs"): ("Job", True),
    ("/apis/policy/v1", "poddisruptionbudgets"): ("PodDisruptionBudget", True),
    ("/apis/storage.k8s.io/v1", "storageclasses"): ("StorageClass", False),
}
RESOURCE_VERSION = "987654"


class Store:
    """Items and their selectable metadata, per kind, as written by the generator."""

    def __init__(self, directory: str):
        self.items: dict[str, list[bytes]] = {}
        self.meta: dict[str, list[list]] = {}
        for name in os.listdir(directory):
            if name.endswith(".items"):
                kind = name[:-6]
                with open(os.path.join(directory, name), "rb") as f:
                    self.items[kind] = f.read().split(b"\n")[:-1]
                with open(os.path.join(directory, kind + ".meta"), "rb") as f:
                    self.meta[kind] = [_loads(line) for line in f]
        self._cache: dict[tuple, list[int]] = {}
        self._lock = threading.Lock()

    def select(self, kind: str, namespace: str, labels: str, fields: str) -> list[int]:
        """Indices of the matching items, in API order (cached: pages of one list share it)."""
        key = (kind, namespace, labels, fields)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        label_test, field_test = parse_label_selector(labels), parse_field_selector(fields)
        out = [i for i, (ns, name, lab, fld) in enumerate(self.meta.get(kind, ()))
               if (not namespace or ns == namespace) and label_test(lab)
               and field_test(dict(fld, **{"metadata.name": name, "metadata.namespace": ns}))]
        with self._lock:
            self._cache[key] = out
        return out

    def find(self, kind: str, namespace: str, name: str) -> bytes | None:
        for i, (ns, n, _, _) in enumerate(self.meta.get(kind, ())):
            if n == name and ns == namespace:
                return self.items[kind][i]
        return None


class SelectorError(ValueError):
    pass


_TERM = re.compile(r"\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9_.-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def parse_label_selector(text: str):
    """'a=b,c!=d,e in (x,y),!f' -> predicate over a labels dict."""
    tests = []
    for term in re.split(r",(?![^(]*\))", text) if text else ():
        m = _TERM.match(term)
        if not m:
            raise SelectorError(f"unable to parse requirement: {term!r}")
        neg, key, op, val, setop, setvals = m.groups()
        values = {v.strip() for v in (setvals or "").split(",") if v.strip()}
        if op in ("=", "=="):
            tests.append(lambda lab, k=key, v=val: lab.get(k) == v)
        elif op == "!=":
            tests.append(lambda lab, k=key, v=val: lab.get(k) != v)
        elif setop == "in":
            tests.append(lambda lab, k=key, vs=values: lab.get(k) in vs)
        elif setop == "notin":
            tests.append(lambda lab, k=key, vs=values: lab.get(k) not in vs)
        else:
            tests.append(lambda lab, k=key, n=bool(neg): (k in lab) != n)
    return lambda lab: all(t(lab) for t in tests)


FIELDS = {"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase", "involvedObject.kind",
          "involvedObject.name", "involvedObject.namespace", "reason"}


def parse_field_selector(text: str):
    tests = []
    for term in text.split(",") if text else ():
        m = re.fullmatch(r"\s*([A-Za-z.]+)\s*(==|=|!=)\s*(.*?)\s*", term)
        if not m or m.group(1) not in FIELDS:
            raise SelectorError(f'"{term}" is not a known field selector: only "{", ".join(sorted(FIELDS))}"')
        key, op, val = m.groups()
        if op == "!=":
            tests.append(lambda f, k=key, v=val: f.get(k, "") != v)
        else:
            tests.append(lambda f, k=key, v=val: f.get(k, "") == v)
    return lambda f: all(t(f) for t in tests)


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset}).encode()).decode()


def _offset(token: str) -> int:
    try:
        return int(json.loads(base64.urlsafe_b64decode(token.encode()))["o"])
    except (ValueError, KeyError, TypeError):
        raise SelectorError("continue parameter is invalid") from None


def discovery(path: str) -> dict | None:
    if path == "/version":
        return {"major": "1", "minor": "37", "gitVersion": "v1.37.2", "platform": "linux/amd64"}
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:443"}]}
    groups = sorted({p for p, _ in RESOURCES if p.startswith("/apis/")})
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g.split("/")[2], "versions": [{"groupVersion": g[6:], "version": "v1"}],
             "preferredVersion": {"groupVersion": g[6:], "version": "v1"}} for g in groups]}
    if path == "/api/v1" or path in groups:
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": "v1" if path == "/api/v1" else path[6:],
                "resources": [{"name": plural, "singularName": kind.lower(), "namespaced": ns, "kind": kind,
                               "verbs": ["get", "list", "watch"]}
                              for (p, plural), (kind, ns) in RESOURCES.items() if p == path]}
    return None


def route(path: str) -> tuple[str, str, str] | None:
    """'/api/v1/namespaces/a/pods/x' -> ('Pod', 'a', 'x'); lists have an empty name."""
    for (prefix, plural), (kind, namespaced) in RESOURCES.items():
        if not path.startswith(prefix + "/"):
            continue
        rest = path[len(prefix) + 1:].split("/")
        ns = ""
        if namespaced and len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = unquote(rest[1]), rest[2:]
        if rest[0] == plural and len(rest) <= 2:
            return kind, ns, unquote(rest[1]) if len(rest) == 2 else ""
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as every client here pages over one connection
    server_version = "bench-apiserver"

    def setup(self):
        super().setup()
        # headers and body go out as two writes: without NODELAY the last segment waits for a delayed ACK
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):  # quiet: a benchmark prints its table, not an access log
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/_bench/log":
            with self.server.log_lock:
                log, self.server.request_log = self.server.request_log, []
            return self._send(200, json.dumps(log).encode())
        with self.server.log_lock:
            self.server.request_log.append(self.path)
        doc = discovery(url.path.rstrip("/"))
        if doc is not None:
            return self._send(200, json.dumps(doc).encode())
        target = route(url.path)
        if target is None:
            return self._status(404, "NotFound", f"the server could not find the requested resource ({url.path})")
        try:
            self._serve(*target, parse_qs(url.query))
        except SelectorError as e:
            self._status(400, "BadRequest", str(e))

    def _serve(self, kind: str, namespace: str, name: str, query: dict) -> None:
        store: Store = self.server.store
        if name:
            item = store.find(kind, namespace, name)
            if item is None:
                return self._status(404, "NotFound", f'{kind.lower()}s "{name}" not found')
            return self._send(200, item)
        one = lambda k: query.get(k, [""])[0]  # noqa: E731
        selected = store.select(kind, namespace, one("labelSelector"), one("fieldSelector"))
        start = _offset(one("continue")) if one("continue") else 0
        limit = int(one("limit") or 0) or len(selected)
        end = min(len(selected), start + limit)
        meta = {"resourceVersion": RESOURCE_VERSION}
        if end < len(selected):
            meta.update({"continue": _token(end), "remainingItemCount": len(selected) - end})
        items = store.items.get(kind, [])
        head = json.dumps({"kind": kind + "List", "apiVersion": _group_version(kind),
                           "metadata": meta})[:-1].encode()
        self._send(200, head + b',"items":[' + b",".join(items[i] for i in selected[start:end]) + b"]}")

    def do_POST(self):
        self._status(405, "MethodNotAllowed", "the benchmark server is read-only")

    do_PATCH = do_PUT = do_DELETE = do_POST

    def _status(self, code: int, reason: str, message: str) -> None:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                "reason": reason, "code": code}
        self._send(code, json.dumps(body).encode())

    def _send(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _group_version(kind: str) -> str:
    for (prefix, _), (k, _) in RESOURCES.items():
        if k == kind:
            return "v1" if prefix == "/api/v1" else prefix[6:]
    return "v1"


def make_server(directory: str, port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.store = Store(directory)
    server.request_log = []
    server.log_lock = threading.Lock()
    return server


def write_kubeconfig(path: str, url: str) -> str:
    """A kubeconfig whose only context points at the benchmark server (a token user, like most)."""
    cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "bench", "preferences": {},
           "clusters": [{"name": "bench", "cluster": {"server": url}}],
           "users": [{"name": "bench", "user": {"token": "bench-token"}}],
           "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench", "namespace": "default"}}]}
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)  # JSON is YAML: every kubeconfig reader accepts it
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    server = make_server(args.directory, args.port)
    print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
