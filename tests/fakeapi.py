"""A small in-memory Kubernetes API server on 127.0.0.1 for tests of the live path.

The real `kubernetes` client talks to it over real HTTP. It holds objects in a dict keyed
by (resource, namespace, name) — resource is the collection path without namespace, e.g.
"/api/v1/pods" or "/apis/apps/v1/deployments" — and routes requests through a table of
(method, regex, handler), so tests can add verbs (PATCH a node, POST an eviction):

    def evict(server, req, m):                       # -> (status, body dict, headers)
        ...
    server.add_route("POST", SUBRESOURCE, evict)      # SUBRESOURCE matches .../{name}/{sub}

Lists honour limit/continue (opaque tokens, expirable for 410), labelSelector and
fieldSelector (field labels checked per resource like the API server: unknown ones are a
400). Faults are injected per path pattern; errors carry real `Status` bodies; every
request is logged. `write_kubeconfig`, `exec_user` and `token_user` build kubeconfigs.
"""

from __future__ import annotations

import base64
import fnmatch
import itertools
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

import yaml

# kind -> (API prefix, plural, namespaced)
KINDS: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True),
    "Service": ("/api/v1", "services", True),
    "ReplicationController": ("/api/v1", "replicationcontrollers", True),
    "PersistentVolume": ("/api/v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
    "Event": ("/api/v1", "events", True),
    "Deployment": ("/apis/apps/v1", "deployments", True),
    "ReplicaSet": ("/apis/apps/v1", "replicasets", True),
    "StatefulSet": ("/apis/apps/v1", "statefulsets", True),
    "DaemonSet": ("/apis/apps/v1", "daemonsets", True),
    "Job": ("/apis/batch/v1", "jobs", True),
    "PodDisruptionBudget": ("/apis/policy/v1", "poddisruptionbudgets", True),
    "StorageClass": ("/apis/storage.k8s.io/v1", "storageclasses", False),
}
_BY_RESOURCE = {f"{p}/{plural}": kind for kind, (p, plural, _) in KINDS.items()}

# field labels the real API server accepts per plural (others get 400 BadRequest)
_COMMON_FIELDS = {"metadata.name", "metadata.namespace"}
FIELD_LABELS: dict[str, set[str]] = {
    "pods": _COMMON_FIELDS | {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                              "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                              "status.podIP", "status.nominatedNodeName"},
    "nodes": _COMMON_FIELDS | {"spec.unschedulable"},
    "events": _COMMON_FIELDS | {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                                "involvedObject.uid", "involvedObject.apiVersion",
                                "involvedObject.resourceVersion", "involvedObject.fieldPath",
                                "reason", "reportingComponent", "source", "type"},
}

_PREFIX = r"(?P<prefix>/api/v1|/apis/[^/]+/[^/]+)(?:/namespaces/(?P<ns>[^/]+))?"
COLLECTION = re.compile(_PREFIX + r"/(?P<plural>[^/]+)$")
NAMED = re.compile(_PREFIX + r"/(?P<plural>[^/]+)/(?P<name>[^/]+)$")
SUBRESOURCE = re.compile(_PREFIX + r"/(?P<plural>[^/]+)/(?P<name>[^/]+)/(?P<sub>[^/]+)$")

_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            409: "Conflict", 410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
            503: "ServiceUnavailable", 504: "Timeout"}


def status_body(code: int, message: str, reason: str | None = None, details: dict | None = None,
                metadata: dict | None = None) -> dict:
    """A metav1.Status as the API server sends it with an error."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": metadata or {}, "status": "Failure",
            "message": message, "reason": reason or _REASONS.get(code, ""), "code": code}
    if details:
        body["details"] = details
    return body


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Any  # email.message.Message: .get(name), .get_all(name)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Fault:
    method: str
    pattern: str  # fnmatch pattern on the path (no query)
    status: int
    times: int | None  # None = forever
    retry_after: str | None = None
    body: dict | None = None
    when: Callable[[Request], bool] | None = None

    def matches(self, req: Request) -> bool:
        return (self.times is None or self.times > 0) and req.method == self.method \
            and fnmatch.fnmatchcase(req.path, self.pattern) and (self.when is None or self.when(req))


Handler = Callable[["FakeApiServer", Request, dict], tuple[int, Any, dict]]


class FakeApiServer:
    """Start with `with FakeApiServer() as api:`; `api.url` is the server URL."""

    def __init__(self, tls: tuple[str, str] | None = None, user_for_token: dict[str, str] | None = None):
        self.objects: dict[tuple[str, str, str], dict] = {}
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        self.user_for_token = user_for_token  # None = no authentication; else token -> user name
        self.resource_version = 1000
        self._tokens: dict[str, tuple[str, str, tuple[str, str]]] = {}
        self._token_ids = itertools.count(1)
        self._expire_next_continue = 0
        self.routes: list[tuple[str, re.Pattern, Handler]] = [
            ("GET", COLLECTION, FakeApiServer._list),
            ("GET", NAMED, FakeApiServer._get),
            ("GET", re.compile(r"^/version$"), FakeApiServer._version),
        ]
        self.git_version = "v1.37.2"
        self._lock = threading.RLock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self._httpd.daemon_threads = True
        scheme = "http"
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
            scheme = "https"
        self.port = self._httpd.server_address[1]
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self) -> "FakeApiServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # ---- objects -------------------------------------------------------------------------

    @staticmethod
    def resource_of(kind: str) -> str:
        prefix, plural, _ = KINDS[kind]
        return f"{prefix}/{plural}"

    def add(self, *objs: dict) -> None:
        """Store objects (with kind and metadata.name; namespaced kinds default to "default")."""
        with self._lock:
            for obj in objs:
                kind = obj["kind"]
                meta = obj.setdefault("metadata", {})
                ns = meta.setdefault("namespace", "default") if KINDS[kind][2] else ""
                self.resource_version += 1
                meta.setdefault("resourceVersion", str(self.resource_version))
                self.objects[(self.resource_of(kind), ns, meta["name"])] = obj

    def get_object(self, kind: str, name: str, namespace: str = "") -> dict | None:
        return self.objects.get((self.resource_of(kind), namespace if KINDS[kind][2] else "", name))

    def add_route(self, method: str, pattern: re.Pattern, handler: Handler) -> None:
        """Route a verb; later routes are tried first, so a test may override a default."""
        self.routes.insert(0, (method, pattern, handler))

    # ---- faults and log ------------------------------------------------------------------

    def fail(self, pattern: str, status: int, times: int | None = 1, method: str = "GET",
             retry_after: str | int | None = None, message: str | None = None,
             when: Callable[[Request], bool] | None = None) -> Fault:
        """Answer `times` matching requests with `status` (a real Status body; 403 messages
        name the user, verb and resource as the API server does)."""
        fault = Fault(method, pattern, status, times, None if retry_after is None else str(retry_after),
                      status_body(status, message) if message else None, when)
        self.faults.append(fault)
        return fault

    def expire_continue(self, times: int = 1) -> None:
        """The next `times` requests that carry a continue token get 410 Expired."""
        self._expire_next_continue += times

    def logged(self, method: str | None = None, path: str | None = None) -> list[Request]:
        return [r for r in self.requests if (method is None or r.method == method)
                and (path is None or fnmatch.fnmatchcase(r.path, path))]

    # ---- request handling ----------------------------------------------------------------

    def handle(self, req: Request) -> tuple[int, Any, dict]:
        with self._lock:
            self.requests.append(req)
            user = self._authenticate(req)
            if user is None:
                return 401, status_body(401, "Unauthorized"), {}
            for fault in self.faults:
                if fault.matches(req):
                    if fault.times is not None:
                        fault.times -= 1
                    return self._fault_response(fault, req, user)
            for method, pattern, handler in self.routes:
                m = pattern.match(req.path)
                if method == req.method and m:
                    return handler(self, req, m.groupdict())
            return 404, status_body(404, "the server could not find the requested resource"), {}

    def _authenticate(self, req: Request) -> str | None:
        if self.user_for_token is None:
            return "anonymous"
        auth = req.headers.get("Authorization") or ""
        if not auth.lower().startswith("bearer "):
            return None
        return self.user_for_token.get(auth[7:].strip())

    def _fault_response(self, fault: Fault, req: Request, user: str) -> tuple[int, Any, dict]:
        headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
        if fault.body is not None:
            return fault.status, fault.body, headers
        if fault.status == 403:
            return 403, forbidden_body(req, user), headers
        return fault.status, status_body(fault.status, f"injected {fault.status}"), headers

    def _list(self, req: Request, m: dict) -> tuple[int, Any, dict]:
        resource = f"{m['prefix']}/{m['plural']}"
        kind = _BY_RESOURCE.get(resource)
        if kind is None:
            return 404, status_body(404, "the server could not find the requested resource"), {}
        try:
            fields = parse_field_selector(req.query.get("fieldSelector", ""), m["plural"])
            labels = parse_label_selector(req.query.get("labelSelector", ""))
        except ValueError as e:
            return 400, status_body(400, str(e)), {}
        token = req.query.get("continue")
        after: tuple[str, str] | None = None
        if token:
            if self._expire_next_continue > 0 or token not in self._tokens:
                self._expire_next_continue = max(0, self._expire_next_continue - 1)
                return 410, status_body(410, "The provided continue parameter is too old to display a "
                                        "consistent list result. You can start a new list without the "
                                        "continue parameter.", "Expired"), {}
            resource_t, ns_t, after = self._tokens.pop(token)
            if (resource_t, ns_t) != (resource, m["ns"] or ""):
                return 400, status_body(400, "the continue token belongs to another list"), {}
        ns = m["ns"] or ""
        keys = sorted((n, name) for (r, n, name) in self.objects
                      if r == resource and (not ns or n == ns) and (after is None or (n, name) > after))
        matching = []
        for key in keys:
            obj = self.objects[(resource, *key)]
            if all(f(obj) for f in fields) and all(f(obj.get("metadata", {}).get("labels") or {}) for f in labels):
                matching.append((key, obj))
        limit = int(req.query.get("limit") or 0)
        page = matching[:limit] if limit else matching
        meta: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        if limit and len(matching) > limit:
            new = base64.urlsafe_b64encode(json.dumps({"id": next(self._token_ids)}).encode()).decode()
            self._tokens[new] = (resource, ns, page[-1][0])
            meta["continue"] = new
            meta["remainingItemCount"] = len(matching) - limit
        items = [{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")} for _, obj in page]
        version = m["prefix"].split("/", 2)[-1] if m["prefix"] != "/api/v1" else "v1"
        return 200, {"kind": f"{kind}List", "apiVersion": version, "metadata": meta, "items": items}, {}

    def _version(self, req: Request, m: dict) -> tuple[int, Any, dict]:
        minor = self.git_version.split(".")[1]
        return 200, {"major": "1", "minor": minor, "gitVersion": self.git_version, "platform": "linux/amd64"}, {}

    def _get(self, req: Request, m: dict) -> tuple[int, Any, dict]:
        resource = f"{m['prefix']}/{m['plural']}"
        obj = self.objects.get((resource, m["ns"] or "", m["name"]))
        if obj is None:
            group = m["prefix"].split("/")[2] if m["prefix"].startswith("/apis/") else ""
            return 404, status_body(404, f'{m["plural"]} "{m["name"]}" not found',
                                    details={"name": m["name"], "group": group, "kind": m["plural"]}), {}
        return 200, obj, {}


def forbidden_body(req: Request, user: str) -> dict:
    """The 403 Status the API server's RBAC authorizer returns for this request."""
    m = SUBRESOURCE.match(req.path) or NAMED.match(req.path) or COLLECTION.match(req.path)
    gd = m.groupdict() if m else {}
    group = gd.get("prefix", "").split("/")[2] if gd.get("prefix", "").startswith("/apis/") else ""
    plural = gd.get("plural", "")
    verb = {"GET": "get" if gd.get("name") else "list", "POST": "create", "PATCH": "patch",
            "DELETE": "delete", "PUT": "update"}[req.method]
    resource = f'"{plural}"' + (f' "{gd["sub"]}"' if gd.get("sub") else "")
    scope = f' in the namespace "{gd["ns"]}"' if gd.get("ns") else " at the cluster scope"
    name = f' "{gd["name"]}"' if gd.get("name") else ""
    msg = (f'{plural}{name} is forbidden: User "{user}" cannot {verb} resource {resource} '
           f'in API group "{group}"{scope}')
    return status_body(403, msg, details={"name": gd.get("name") or "", "group": group, "kind": plural})


def _path_value(obj: dict, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


def parse_field_selector(text: str, plural: str) -> list[Callable[[dict], bool]]:
    """`a.b=x,c!=y` -> predicates on the object; unknown field labels raise ValueError."""
    allowed = FIELD_LABELS.get(plural, _COMMON_FIELDS)
    out = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        m = re.fullmatch(r"([^!=]+)(==|=|!=)(.*)", term)
        if not m:
            raise ValueError(f'invalid selector: "{text}"; can\'t understand "{term}"')
        key, op, value = m.groups()
        if key not in allowed:
            raise ValueError(f'field label not supported: {key}')
        if op == "!=":
            out.append(lambda o, k=key, v=value: _path_value(o, k) != v)
        else:
            out.append(lambda o, k=key, v=value: _path_value(o, k) == v)
    return out


def _split_terms(text: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    return [t.strip() for t in terms + [cur] if t.strip()]


def parse_label_selector(text: str) -> list[Callable[[dict], bool]]:
    """Kubernetes label selector syntax (independent of the code under test)."""
    out = []
    for term in _split_terms(text):
        if m := re.fullmatch(r"(\S+)\s+(in|notin)\s+\((.*)\)", term):
            key, op, vals = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            if op == "in":
                out.append(lambda lb, k=key, vs=vals: k in lb and lb[k] in vs)
            else:
                out.append(lambda lb, k=key, vs=vals: k not in lb or lb[k] not in vs)
        elif m := re.fullmatch(r"([^!=\s]+)\s*(==|=|!=)\s*(\S*)", term):
            key, op, val = m.groups()
            if op == "!=":
                out.append(lambda lb, k=key, v=val: lb.get(k) != v)
            else:
                out.append(lambda lb, k=key, v=val: k in lb and lb[k] == v)
        elif m := re.fullmatch(r"!\s*(\S+)", term):
            out.append(lambda lb, k=m.group(1): k not in lb)
        elif re.fullmatch(r"\S+", term):
            out.append(lambda lb, k=term: k in lb)
        else:
            raise ValueError(f"unable to parse requirement: {term}")
    return out


def _handler_class(server: FakeApiServer) -> type:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like the API server; urllib3 pools connections
        # headers and body go out in two writes: without TCP_NODELAY, Nagle and delayed ACKs add ~40ms each
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            req = Request(self.command, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                          self.headers, body)
            status, payload, headers = server.handle(req)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except ConnectionError:
                self.close_connection = True  # the client gave up (a timeout test): nothing to report

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return H


# ---- raw object builders --------------------------------------------------------------------

def raw_node(name: str, zone: str = "a", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone,
                                                  "kubernetes.io/hostname": name, **labels}},
            "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                   "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def raw_pod(name: str, namespace: str = "default", node: str = "", phase: str = "Running",
            labels: dict | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": spec, "status": {"phase": phase}}


def raw_event(name: str, namespace: str, kind: str, obj: str, reason: str = "FailedScheduling") -> dict:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {"kind": kind, "name": obj, "namespace": namespace},
            "reason": reason, "message": "0/3 nodes are available", "count": 1}


# ---- kubeconfig helpers ---------------------------------------------------------------------

def token_user(token: str) -> dict:
    return {"token": token}


def exec_user(directory: str, token: str, exit_code: int = 0) -> dict:
    """A kubeconfig `user` whose exec plugin is a tiny python script printing an ExecCredential."""
    script = os.path.join(directory, f"exec-plugin-{token}.py")
    cred = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
            "status": {"token": token, "expirationTimestamp": "2999-01-01T00:00:00Z"}}
    with open(script, "w", encoding="utf-8") as f:
        f.write("import json, os, sys\n"
                "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
                "assert info['kind'] == 'ExecCredential'\n"
                f"if {exit_code}:\n    sys.stderr.write('plugin: login required\\n'); sys.exit({exit_code})\n"
                f"print(json.dumps({cred!r}))\n")
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [script], "interactiveMode": "Never"}}


def write_kubeconfig(path: str, clusters: dict[str, str | dict], users: dict[str, dict],
                     contexts: dict[str, dict], current: str | None = None) -> str:
    """clusters: name -> server URL, or the whole cluster dict; users: name -> user dict;
    contexts: name -> context dict."""
    doc: dict = {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": n, "cluster": s if isinstance(s, dict) else {"server": s}} for n, s in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
    }
    if current:
        doc["current-context"] = current
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


def make_self_signed_cert(directory: str) -> tuple[str, str] | None:
    """(cert, key) for 127.0.0.1 via the openssl CLI, or None when it is not installed."""
    if not shutil.which("openssl"):
        return None
    cert, key = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


__all__ = ["FakeApiServer", "Request", "Fault", "KINDS", "COLLECTION", "NAMED", "SUBRESOURCE", "status_body",
           "forbidden_body", "raw_node", "raw_pod", "raw_event", "token_user", "exec_user", "write_kubeconfig",
           "make_self_signed_cert", "parse_field_selector", "parse_label_selector"]
