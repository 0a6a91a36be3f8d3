"""An expired continue token, from a real API server (tests/controlplane.py).

A continue token names the etcd revision of the list's first page; once etcd compacts past
that revision the API server answers the next page with 410 Expired. These tests start their
own small control plane whose API server serves pods from etcd (`--watch-cache-sizes=pods#0`:
the default watch cache would answer from its own snapshot and never expire a token), and put
a plain-HTTP relay in front of it. Before it relays a request that carries a continue token,
the relay writes a ConfigMap (etcd's revision moves past the token's) and compacts etcd at the
new revision through etcd's JSON gateway. The 410 the tool then gets is the API server's own;
the relay only picks the moment.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from controlplane import ControlPlane, bare_pod, binary_or_skip, start, tspread
from kubectl_tspread.snapshot.live import PAGE_SIZE, ApiStatusError, KubeOptions, connect

pytestmark = pytest.mark.e2e

PODS = PAGE_SIZE + 12  # the CLI's own page size leaves a second page


class ExpiringRelay:
    """127.0.0.1:port relays every request to the API server; the first `expire` requests
    with a continue token (every one when expire is None) find their token compacted away."""

    HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}

    def __init__(self, cp: ControlPlane, expire: int | None):
        self.cp, self.expire = cp, expire
        self.seen: list[tuple[bool, int]] = []  # (carried a continue token, the server's status)
        self.lock = threading.Lock()
        upstream = urllib.parse.urlsplit(cp.server)
        self.upstream = (upstream.hostname, upstream.port)
        self.tls = ssl.create_default_context(cafile=f"{cp.data_dir}/ca.crt")
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the tool only reads here
                relay.relay(self)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ExpiringRelay":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def etcd(self, call: str, body: dict) -> dict:
        req = urllib.request.Request(f"{self.cp.etcd}/v3/kv/{call}", data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.load(resp)

    def compact(self) -> None:
        """Move etcd's revision past every token handed out so far, and compact there."""
        self.cp.core().create_namespaced_config_map(
            "default", {"metadata": {"name": f"bump-{uuid.uuid4().hex[:8]}"}})
        revision = self.etcd("range", {"key": "Lw=="})["header"]["revision"]
        self.etcd("compaction", {"revision": revision, "physical": True})

    def relay(self, h: BaseHTTPRequestHandler) -> None:
        carries = "continue" in urllib.parse.parse_qs(urllib.parse.urlsplit(h.path).query)
        with self.lock:
            expire = carries and (self.expire is None or sum(c for c, _ in self.seen) < self.expire)
            if expire:
                self.compact()
            conn = http.client.HTTPSConnection(*self.upstream, context=self.tls, timeout=30)
            headers = {k: v for k, v in h.headers.items() if k.lower() not in self.HOP}
            conn.request("GET", h.path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            self.seen.append((carries, resp.status))
        h.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in self.HOP:
                h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
        conn.close()

    def kubeconfig(self, path) -> str:
        with open(f"{self.cp.data_dir}/admin.token") as f:
            token = f.read().split(",")[0].strip()
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "relay",
            "clusters": [{"name": "relay", "cluster": {"server": self.url}}],
            "users": [{"name": "admin", "user": {"token": token}}],
            "contexts": [{"name": "relay", "context": {"cluster": "relay", "user": "admin"}}]}))
        return str(path)


@pytest.fixture(scope="module")
def etcd_served(tmp_path_factory):
    """A control plane of its own (6 nodes) whose pods are read from etcd, with PODS pods in
    one namespace."""
    cp = start(binary_or_skip(), str(tmp_path_factory.mktemp("cluster-etcd")), nodes=6,
               extra=["--apiserver-arg=--watch-cache-sizes=pods#0"])
    try:
        assert cp.etcd, "the control plane did not say where its etcd listens"
        ns = cp.namespace("expire")
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: cp.create(bare_pod(f"p{i:04d}", {"app": "web"}, cpu="1m"), namespace=ns),
                          range(PODS)))
        yield cp, ns
    finally:
        cp.stop()


def names(kubeconfig: str, ns: str, page_size: int) -> list[str]:
    cluster = connect(KubeOptions(kubeconfig=kubeconfig, namespace=ns))
    cluster.page_size = page_size
    return [p.name for p in cluster.list("Pod")]


def test_pods_a_helper_process_decodes_are_the_pods_read_alone(etcd_served):
    """cli/workers.PageChild decodes pages of the real API server's list: the same records,
    in the same order, and the helper is reaped."""
    from forking import gone, page_helpers

    cp, ns = etcd_served
    made: list = []
    helped = connect(KubeOptions(kubeconfig=cp.kubeconfig, namespace=ns), page_helpers=page_helpers(made))
    alone = connect(KubeOptions(kubeconfig=cp.kubeconfig, namespace=ns))
    for _ in range(30):  # the scheduler may still be binding and the pods' status moving: read it still
        before = list(alone.list("Pod"))
        got = list(helped.list("Pod"))
        if before == list(alone.list("Pod")):
            break
        time.sleep(1)
    assert got == before and len(got) == PODS
    assert all(m.sent == 1 and gone(m.pid) for m in made)  # the first page; the last one is read here


def test_the_api_server_expires_a_token_once_etcd_is_compacted_past_it(etcd_served, tmp_path):
    """The relay's premise, with the real client alone: the server's own 410 Expired."""
    cp, ns = etcd_served
    from kubernetes.client.exceptions import ApiException

    first = cp.core().list_namespaced_pod(ns, limit=5)
    with ExpiringRelay(cp, expire=0) as relay:
        relay.compact()
    with pytest.raises(ApiException) as exc:
        cp.core().list_namespaced_pod(ns, limit=5, _continue=first.metadata._continue)
    assert exc.value.status == 410 and json.loads(exc.value.body)["reason"] == "Expired"


def test_a_list_whose_token_expires_is_read_again_from_the_top_and_is_whole(etcd_served, tmp_path):
    cp, ns = etcd_served
    want = names(cp.kubeconfig, ns, page_size=50)
    assert len(want) == PODS
    with ExpiringRelay(cp, expire=1) as relay:
        got = names(relay.kubeconfig(tmp_path / "relay.kubeconfig"), ns, page_size=50)
    assert got == want
    # first pass: page 1, then the expired page 2 (410); second pass from the top, to the end
    statuses = [(c, s) for c, s in relay.seen]
    assert statuses.count((True, 410)) == 1
    expired = statuses.index((True, 410))
    assert statuses[:expired] == [(False, 200)] and statuses[expired + 1] == (False, 200)
    assert all(s == 200 for _, s in statuses[expired + 1:])
    assert sum(c for c, _ in statuses[expired + 1:]) == (PODS - 1) // 50


def test_distribution_over_a_relay_that_expires_one_token_prints_the_same_answer(etcd_served, tmp_path):
    cp, ns = etcd_served
    code, direct, err = tspread(cp, "distribution", "-n", ns, "-o", "json")
    assert code == 0, err
    with ExpiringRelay(cp, expire=1) as relay:
        kubeconfig = relay.kubeconfig(tmp_path / "relay.kubeconfig")
        relayed = ControlPlane(kubeconfig, relay.url, cp.version, cp.data_dir)
        code, out, err = tspread(relayed, "distribution", "-n", ns, "-o", "json")
    assert code == 0, err
    assert (True, 410) in relay.seen
    assert json.loads(out)["workloads"] == json.loads(direct)["workloads"]


def test_a_token_that_expires_on_every_page_gives_one_error_line_and_no_output(etcd_served, tmp_path):
    cp, ns = etcd_served
    with ExpiringRelay(cp, expire=None) as relay:
        kubeconfig = relay.kubeconfig(tmp_path / "relay.kubeconfig")
        with pytest.raises(ApiStatusError, match="kept failing with 410 Gone") as exc:
            names(kubeconfig, ns, page_size=50)
        assert exc.value.status == 410
        relayed = ControlPlane(kubeconfig, relay.url, cp.version, cp.data_dir)
        code, out, err = tspread(relayed, "distribution", "-n", ns)
    assert code == 1 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "410 Gone" in err, err
    # one restart only: the first pass's expired page, then the second pass's, then it stops
    assert [s for c, s in relay.seen if c].count(410) == 4  # two lists (names, then the CLI) of two passes
