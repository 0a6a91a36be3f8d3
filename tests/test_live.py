"""The live snapshot path through the real `kubernetes` client over HTTP on 127.0.0.1.

Nothing here patches the client: `tests/fakeapi.py` is a real HTTP server and every
assertion is on what it received or on what the snapshot layer made of its answers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from fakeapi import (FakeApiServer, exec_user, make_self_signed_cert, raw_event, raw_node, raw_pod,
                     token_user, write_kubeconfig)
from kubectl_tspread.model.errors import ClusterError, TspreadError, UsageError
from kubectl_tspread.snapshot.live import (ApiStatusError, KubeOptions, LiveCluster, RetryPolicy, connect,
                                           describe_request, load_live)

TOKEN = "t0k-alice"
RBAC_HINT = "the read-only ClusterRole in deploy/rbac/tspread-readonly.yaml grants it"


@pytest.fixture
def api():
    with FakeApiServer(user_for_token={TOKEN: "alice"}) as server:
        yield server


@pytest.fixture
def kubeconfig(env, api):
    return write_kubeconfig(str(env / "config"), {"fake": api.url}, {"alice": token_user(TOKEN)},
                            {"fake": {"cluster": "fake", "user": "alice", "namespace": "prod"}}, "fake")


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(round(seconds, 6))


def fast(sleeps: Sleeps | None = None) -> RetryPolicy:
    return RetryPolicy(base=0.01, sleep=sleeps if sleeps is not None else (lambda s: None))


def live(kubeconfig: str, sleeps: Sleeps | None = None, **opts) -> LiveCluster:
    return connect(KubeOptions(kubeconfig=kubeconfig, **opts), retry=fast(sleeps))


# ---- paging ---------------------------------------------------------------------------------

def test_pods_are_read_in_pages_of_500_following_continue_tokens(api, kubeconfig):
    api.add(*[raw_pod(f"p{i:04d}", "prod", node="n1") for i in range(1201)])
    api.add(raw_pod("finished", "prod", phase="Succeeded"), raw_pod("failed", "prod", phase="Failed"))
    pods = list(live(kubeconfig).list("Pod"))
    assert [p.name for p in pods] == [f"p{i:04d}" for i in range(1201)]
    reqs = api.logged("GET", "/api/v1/namespaces/prod/pods")
    assert len(reqs) == 3
    assert all(r.query["limit"] == "500" for r in reqs)
    assert all(r.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed" for r in reqs)
    assert "continue" not in reqs[0].query and reqs[1].query["continue"] and reqs[2].query["continue"]


def test_the_next_page_is_asked_for_while_this_one_is_decoded(api, kubeconfig, monkeypatch):
    """A list page's continue token is read from its head: the next page's GET is made in a
    thread while the page is decoded (the server makes it meanwhile); the pods come out the
    same and in order, one GET per page."""
    from kubectl_tspread.snapshot import live as livemod

    api.add(*[raw_pod(f"p{i:04d}", "prod", node="n1") for i in range(1201)])
    real, seen = livemod.DECODERS["Pod"], []

    def decode(item):
        if not seen:  # the first pod of the first page: the second page is asked for already
            deadline = time.monotonic() + 5
            while len(api.logged("GET", "/api/v1/namespaces/prod/pods")) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            seen.append(len(api.logged("GET", "/api/v1/namespaces/prod/pods")))
        return real[0](item)

    monkeypatch.setitem(livemod.DECODERS, "Pod", (decode, real[1]))
    pods = list(live(kubeconfig).list("Pod"))
    assert seen == [2]
    assert [p.name for p in pods] == [f"p{i:04d}" for i in range(1201)]
    reqs = api.logged("GET", "/api/v1/namespaces/prod/pods")
    assert len(reqs) == 3 and "continue" not in reqs[0].query
    assert reqs[1].query["continue"] != reqs[2].query["continue"]


def test_a_token_misread_from_the_head_costs_a_request_never_a_wrong_list(api, kubeconfig):
    """The head's first "continue" is not the list's (another field holds one before the
    metadata): the page asked for ahead is dropped and the list's own token is followed."""
    import json
    import re

    pods = [raw_pod(f"p{i}", "prod") for i in range(2)]
    items = [{k: v for k, v in p.items() if k not in ("kind", "apiVersion")} for p in pods]

    def page(req):
        token = req.query.get("continue")
        if token is None:
            return 200, (b'{"kind":"PodList","apiVersion":"v1","x":{"continue":"decoy"},'
                         b'"metadata":{"continue":"real"},"items":' + json.dumps(items[:1]).encode() + b"}"), {}
        if token == "real":
            return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items[1:]}, {}
        return 410, {"kind": "Status", "code": 410, "reason": "Expired", "message": "no such token"}, {}

    api.add_route("GET", re.compile(r"^/api/v1/namespaces/prod/pods$"), lambda server, req, m: page(req))
    assert [p.name for p in live(kubeconfig).list("Pod")] == ["p0", "p1"]
    deadline = time.monotonic() + 10  # the page asked for ahead may still be on its way
    while len(api.logged("GET", "/api/v1/namespaces/prod/pods")) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    asked = [r.query.get("continue") for r in api.logged("GET", "/api/v1/namespaces/prod/pods")]
    assert asked[0] is None and sorted(asked[1:]) == ["decoy", "real"]


@pytest.mark.parametrize("head, token", [
    pytest.param(b'{"kind":"PodList","metadata":{"resourceVersion":"7","continue":"eyJ2Ijoi"},"items":[]}',
                 "eyJ2Ijoi", id="the token"),
    pytest.param(b'{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"metadata":'
                 b'{"annotations":{"continue":"no"}}}]}', None, id="last page: an item's continue is not read"),
    pytest.param(b'{"kind":"PodList","metadata":{"continue":"a\\"b"},"items":[]}', None,
                 id="an escaped token: read with the page"),
    pytest.param(b'{"kind":"PodList","metadata":{"continue":"x"}}', None, id="no items key"),
    pytest.param(b'{"kind":"Status","code":410}', None, id="not a list"),
])
def test_peek_continue(head, token):
    from kubectl_tspread.snapshot.live import peek_continue
    assert peek_continue(head) == token


def test_expired_continue_token_restarts_the_list_once_without_duplicates(api, kubeconfig):
    api.add(*[raw_pod(f"p{i}", "prod") for i in range(5)])
    cluster = live(kubeconfig)
    cluster.page_size = 2
    api.expire_continue(1)
    assert [p.name for p in cluster.list("Pod")] == [f"p{i}" for i in range(5)]
    first_pages = [r for r in api.logged("GET") if "continue" not in r.query]
    assert len(first_pages) == 2  # the list started over once


def test_a_second_410_is_an_error(api, kubeconfig):
    api.add(*[raw_pod(f"p{i}", "prod") for i in range(5)])
    cluster = live(kubeconfig)
    cluster.page_size = 2
    api.expire_continue(2)
    with pytest.raises(ApiStatusError, match="410 Gone") as exc:
        list(cluster.list("Pod"))
    assert exc.value.status == 410


def test_list_items_get_their_kind_from_the_request(api, kubeconfig):
    api.add({"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "web", "namespace": "prod"},
             "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}},
            {"apiVersion": "apps/v1", "kind": "StatefulSet",
             "metadata": {"name": "db", "namespace": "prod"}, "spec": {"selector": {"matchLabels": {"app": "db"}}}})
    snap = load_live(KubeOptions(kubeconfig=kubeconfig), ["Deployment", "StatefulSet"], retry=fast())
    assert sorted((w.kind, w.name, w.replicas) for w in snap.workloads) == [
        ("Deployment", "web", 3), ("StatefulSet", "db", 1)]


def test_selectors_are_sent_server_side(api, kubeconfig):
    api.add(raw_pod("a", "prod", node="n1", labels={"app": "web"}), raw_pod("b", "prod", node="n2", labels={"app": "web"}),
            raw_pod("c", "prod", node="n1", labels={"app": "db"}))
    api.add(raw_event("e1", "prod", "Pod", "a"), raw_event("e2", "prod", "Node", "n1"))
    cluster = live(kubeconfig)
    got = [p.name for p in cluster.list("Pod", label_selector="app in (web)", field_selector="spec.nodeName=n1")]
    assert got == ["a"]
    assert api.requests[-1].query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed,spec.nodeName=n1"
    assert [e.object_name for e in cluster.list("Event")] == ["a"]
    assert api.requests[-1].query["fieldSelector"] == "involvedObject.kind=Pod"


@pytest.mark.parametrize("opts, kind, path", [
    ({}, "Pod", "/api/v1/namespaces/prod/pods"),
    ({"namespace": "dev"}, "Deployment", "/apis/apps/v1/namespaces/dev/deployments"),
    ({"all_namespaces": True}, "PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets"),
    ({"namespace": "dev"}, "Node", "/api/v1/nodes"),
    ({}, "StorageClass", "/apis/storage.k8s.io/v1/storageclasses"),
    ({}, "Job", "/apis/batch/v1/namespaces/prod/jobs"),
], ids=["pods in the context namespace", "-n dev deployments", "-A pdbs cluster-wide",
        "nodes are cluster-scoped whatever -n says", "storageclasses", "jobs in batch/v1"])
def test_resource_paths(api, kubeconfig, opts, kind, path):
    list(live(kubeconfig, **opts).list(kind))
    assert api.requests[-1].path == path


def test_load_live_builds_a_snapshot(api, kubeconfig):
    api.add(raw_node("n1", "a"), raw_node("n2", "b"), raw_pod("p", "prod", node="n1"), raw_pod("q", "dev", node="n2"))
    snap = load_live(KubeOptions(kubeconfig=kubeconfig), ["Node", "Pod"], retry=fast())
    assert (len(snap.nodes), [p.key for p in snap.pods], snap.namespace) == (2, ["prod/p"], "prod")
    assert snap.source == f"cluster {api.url}"
    snap = load_live(KubeOptions(kubeconfig=kubeconfig, all_namespaces=True), ["Pod"], retry=fast())
    assert ([p.key for p in snap.pods], snap.namespace) == (["dev/q", "prod/p"], None)


# ---- retries --------------------------------------------------------------------------------

def test_500_is_retried_with_exponential_backoff_then_succeeds(api, kubeconfig):
    api.add(raw_node("n1"))
    api.fail("/api/v1/nodes", 500, times=3)
    sleeps = Sleeps()
    assert [n.name for n in live(kubeconfig, sleeps).list("Node")] == ["n1"]
    assert sleeps == [0.01, 0.02, 0.04]
    assert len(api.logged("GET", "/api/v1/nodes")) == 4


@pytest.mark.parametrize("retry_after, waited", [("3", 3.0), ("120", 10.0)],
                         ids=["Retry-After 3 honoured", "Retry-After 120 capped at 10 s"])
def test_429_honours_retry_after_then_succeeds(api, kubeconfig, retry_after, waited):
    api.add(raw_node("n1"))
    api.fail("/api/v1/nodes", 429, times=1, retry_after=retry_after)
    sleeps = Sleeps()
    assert [n.name for n in live(kubeconfig, sleeps).list("Node")] == ["n1"]
    assert sleeps == [waited]


def test_persistent_503_gives_up_after_five_attempts(api, kubeconfig):
    api.fail("/api/v1/nodes", 503, times=None)
    sleeps = Sleeps()
    with pytest.raises(ApiStatusError, match=r"503.*after 5 attempts") as exc:
        list(live(kubeconfig, sleeps).list("Node"))
    assert (exc.value.status, len(api.requests), len(sleeps)) == (503, 5, 4)


@pytest.mark.parametrize("status", [401, 403, 404, 400], ids=["401", "403", "404", "400"])
def test_client_errors_are_never_retried(api, kubeconfig, status):
    api.fail("/api/v1/nodes", status, times=None)
    sleeps = Sleeps()
    with pytest.raises(ApiStatusError) as exc:
        list(live(kubeconfig, sleeps).list("Node"))
    assert (exc.value.status, len(api.requests), sleeps) == (status, 1, [])


def test_writes_are_never_retried(api, kubeconfig):
    api.fail("/api/v1/namespaces/prod/pods/p/eviction", 500, method="POST", times=None)
    with pytest.raises(ApiStatusError) as exc:
        live(kubeconfig).request("POST", "/api/v1/namespaces/prod/pods/p/eviction", {"kind": "Eviction"})
    assert (exc.value.status, len(api.requests)) == (500, 1)
    assert api.requests[0].json() == {"kind": "Eviction"}


# ---- error messages -------------------------------------------------------------------------

@pytest.mark.parametrize("opts, kind, pattern, message", [
    ({}, "Pod", "/api/v1/namespaces/prod/pods",
     f'cannot list pods in namespace "prod": your RBAC lacks list on pods; {RBAC_HINT}'),
    ({}, "Node", "/api/v1/nodes",
     f"cannot list nodes (cluster-scoped): your RBAC lacks list on nodes; {RBAC_HINT}"),
    ({"all_namespaces": True}, "Deployment", "/apis/apps/v1/deployments",
     f"cannot list deployments.apps in all namespaces: your RBAC lacks list on deployments.apps; {RBAC_HINT}"
     ", or drop -A to read one namespace"),
], ids=["pods in prod", "nodes cluster-scoped", "deployments across -A"])
def test_403_names_verb_resource_and_namespace(api, kubeconfig, opts, kind, pattern, message):
    api.fail(pattern, 403, times=None)
    with pytest.raises(ClusterError) as exc:
        list(live(kubeconfig, **opts).list(kind))
    assert str(exc.value) == message
    assert exc.value.body["reason"] == "Forbidden"  # the fake sent a real Status


def test_403_on_an_optional_kind_becomes_a_warning(api, kubeconfig):
    api.add(raw_node("n1"))
    api.fail("/api/v1/namespaces/prod/events", 403, times=None)
    snap = load_live(KubeOptions(kubeconfig=kubeconfig), ["Node", "Event"], retry=fast())
    assert len(snap.nodes) == 1 and snap.events == ()
    assert len(snap.warnings) == 1 and snap.warnings[0].startswith("skipped events: cannot list events")


def test_401_names_the_user(api, env):
    cfg = write_kubeconfig(str(env / "config"), {"fake": api.url}, {"bob": token_user("stale")},
                           {"fake": {"cluster": "fake", "user": "bob"}}, "fake")
    with pytest.raises(ClusterError, match=r'credentials of user "bob" \(401 Unauthorized\)'):
        list(live(cfg).list("Node"))


def test_unreachable_server_names_the_url_and_what_to_check(env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    cfg = write_kubeconfig(str(env / "config"), {"gone": url}, {"u": token_user("x")},
                           {"gone": {"cluster": "gone", "user": "u"}}, "gone")
    sleeps = Sleeps()
    with pytest.raises(ClusterError) as exc:
        list(live(cfg, sleeps).list("Node"))
    msg = str(exc.value)
    assert msg.startswith(f'cannot reach the API server at {url} (context "gone"): ')
    assert "check --context, your VPN" in msg and len(sleeps) == 4 and "\n" not in msg


def test_slow_server_names_request_timeout(api, kubeconfig):
    from fakeapi import COLLECTION

    def slow(server, req, m):
        time.sleep(1.0)
        return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": []}, {}

    api.add_route("GET", COLLECTION, slow)
    with pytest.raises(ClusterError, match=r"within 0.2s; raise --request-timeout"):
        list(live(kubeconfig, request_timeout=0.2).list("Node"))


def test_get_returns_a_record_and_404_is_a_status_error(api, kubeconfig):
    api.add(raw_pod("p", "prod", node="n1"))
    cluster = live(kubeconfig)
    assert cluster.get("Pod", "p").node_name == "n1"
    assert cluster.get_raw("/api/v1/namespaces/prod/pods/p")["metadata"]["name"] == "p"
    with pytest.raises(ApiStatusError) as exc:
        cluster.get("Pod", "missing")
    assert str(exc.value) == f'pods "missing" not found in namespace "prod" (404 on {api.url})'
    assert exc.value.status == 404


def test_an_api_group_the_server_does_not_serve(api, kubeconfig):
    api.fail("/apis/policy/v1/*", 404, times=None, message="the server could not find the requested resource")
    with pytest.raises(ApiStatusError, match=r"does not serve poddisruptionbudgets.policy \(404\); the cluster "
                                             "may be older"):
        list(live(kubeconfig).list("PodDisruptionBudget"))


@pytest.mark.parametrize("method, path, want", [
    ("GET", "/api/v1/namespaces/a/pods", ("list", "pods", "a")),
    ("GET", "/api/v1/nodes/n1", ("get", "nodes", None)),
    ("POST", "/api/v1/namespaces/a/pods/p/eviction", ("create", "pods/eviction", "a")),
    ("PATCH", "/api/v1/nodes/n1", ("patch", "nodes", None)),
    ("GET", "/apis/apps/v1/namespaces/b/replicasets", ("list", "replicasets.apps", "b")),
], ids=["list pods", "get node", "create eviction", "patch node", "list replicasets"])
def test_describe_request(method, path, want):
    assert describe_request(method, path) == want


# ---- configuration --------------------------------------------------------------------------

@pytest.mark.parametrize("kubeconfig_env, tried", [
    (None, ["home/.kube/config"]),
    (["a.yaml", "b.yaml"], ["a.yaml", "b.yaml"]),
], ids=["default ~/.kube/config missing", "KUBECONFIG with two missing files"])
def test_no_kubeconfig_lists_the_paths_tried(env, monkeypatch, kubeconfig_env, tried):
    if kubeconfig_env:
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join(str(env / p) for p in kubeconfig_env))
    with pytest.raises(ClusterError) as exc:
        connect(KubeOptions())
    msg = str(exc.value)
    assert msg.startswith("no kubeconfig found (tried " + ", ".join(str(env / p) for p in tried) + ")")
    assert msg.endswith("pass --kubeconfig PATH or set KUBECONFIG, or run inside a cluster")


def test_in_cluster_without_a_token_says_where_it_looked(env, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(ClusterError, match=r"in-cluster config failed \(Service token file does not exist.\); "
                                           r"mount the service account token at .*/sa or pass --kubeconfig"):
        connect(KubeOptions(), service_account_dir=str(env / "sa"))


def test_missing_kubeconfig_flag_file(env):
    with pytest.raises(ClusterError, match=r"nope.yaml \(--kubeconfig\) does not exist"):
        connect(KubeOptions(kubeconfig=str(env / "nope.yaml")))


def test_kubeconfig_env_merges_files_first_file_wins(env, monkeypatch):
    with FakeApiServer(user_for_token={"one": "u1"}) as first, FakeApiServer(user_for_token={"two": "u2"}) as second:
        a = write_kubeconfig(str(env / "a"), {"shared": first.url}, {"u": token_user("one")},
                             {"shared": {"cluster": "shared", "user": "u", "namespace": "from-a"}}, "shared")
        b = write_kubeconfig(str(env / "b"), {"shared": second.url, "other": second.url},
                             {"u": token_user("bad"), "u2": token_user("two")},
                             {"shared": {"cluster": "other", "user": "u2"},
                              "other": {"cluster": "other", "user": "u2", "namespace": "from-b"}}, "other")
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join([a, str(env / "missing"), b]))
        cluster = connect(KubeOptions(), retry=fast())
        assert (cluster.server, cluster.namespace) == (first.url, "from-a")  # current-context of the first file
        list(cluster.list("Node"))
        other = connect(KubeOptions(context="other"), retry=fast())
        assert (other.server, other.namespace) == (second.url, "from-b")  # entries of later files are usable
        list(other.list("Node"))
        assert len(first.requests) == len(second.requests) == 1  # and both authenticated


@pytest.mark.parametrize("opts, namespace", [
    ({}, "prod"), ({"namespace": "dev"}, "dev"), ({"context": "bare"}, "default"),
], ids=["context namespace", "-n wins", "no namespace anywhere -> default"])
def test_namespace_defaulting(env, api, opts, namespace):
    cfg = write_kubeconfig(str(env / "config"), {"fake": api.url}, {"alice": token_user(TOKEN)},
                           {"fake": {"cluster": "fake", "user": "alice", "namespace": "prod"},
                            "bare": {"cluster": "fake", "user": "alice"}}, "fake")
    assert connect(KubeOptions(kubeconfig=cfg, **opts)).namespace == namespace


@pytest.mark.parametrize("opts, message", [
    ({"context": "nope"}, 'context "nope" (--context) does not exist in the kubeconfig; available contexts: bare, fake'),
    ({"cluster": "nope"}, 'cluster "nope" is not in the kubeconfig; pass --cluster NAME (available clusters: fake)'),
    ({"user": "nope"}, 'user "nope" is not in the kubeconfig; pass --user NAME (available users: alice)'),
], ids=["unknown context", "unknown cluster", "unknown user"])
def test_unknown_names_list_what_exists(env, api, opts, message):
    cfg = write_kubeconfig(str(env / "config"), {"fake": api.url}, {"alice": token_user(TOKEN)},
                           {"fake": {"cluster": "fake", "user": "alice"}, "bare": {"cluster": "fake"}}, "fake")
    with pytest.raises(ClusterError) as exc:
        connect(KubeOptions(kubeconfig=cfg, **opts))
    assert str(exc.value) == message


def test_no_current_context_asks_for_one(env, api):
    cfg = write_kubeconfig(str(env / "config"), {"fake": api.url}, {}, {"fake": {"cluster": "fake"}})
    with pytest.raises(ClusterError, match=r"no current-context; pass --context NAME \(available contexts: fake\)"):
        connect(KubeOptions(kubeconfig=cfg))


def test_cluster_and_user_flags_override_the_context(env, api):
    cfg = write_kubeconfig(str(env / "config"), {"fake": api.url, "dead": "http://127.0.0.1:9"},
                           {"alice": token_user(TOKEN), "nobody": token_user("bad")},
                           {"ctx": {"cluster": "dead", "user": "nobody"}}, "ctx")
    cluster = live(cfg, cluster="fake", user="alice")
    assert cluster.server == api.url
    list(cluster.list("Node"))
    assert api.requests[-1].headers["Authorization"] == f"Bearer {TOKEN}"


def test_exec_auth_plugin_supplies_the_token(env):
    with FakeApiServer(user_for_token={"exec-tok": "sso-user"}) as server:
        cfg = write_kubeconfig(str(env / "config"), {"c": server.url}, {"sso": exec_user(str(env), "exec-tok")},
                               {"c": {"cluster": "c", "user": "sso"}}, "c")
        list(live(cfg).list("Node"))
        assert server.requests[-1].headers["Authorization"] == "Bearer exec-tok"


def test_failing_exec_plugin_is_one_clear_error(env, api):
    cfg = write_kubeconfig(str(env / "config"), {"c": api.url}, {"sso": exec_user(str(env), "x", exit_code=3)},
                           {"c": {"cluster": "c", "user": "sso"}}, "c")
    with pytest.raises(ClusterError) as exc:
        connect(KubeOptions(kubeconfig=cfg))
    msg = str(exc.value)
    assert msg.startswith(f'the auth exec plugin "{sys.executable}" of user "sso" failed (')
    assert "process returned 3" in msg and "login required" in msg and "\n" not in msg


def test_impersonation_headers(api, kubeconfig):
    list(live(kubeconfig, as_user="jane", as_groups=("devs", "ops")).list("Node"))
    headers = api.requests[-1].headers
    assert headers["Impersonate-User"] == "jane"
    assert headers.get_all("Impersonate-Group") == ["devs", "ops"]


def test_as_group_without_as_is_a_usage_error(kubeconfig):
    with pytest.raises(UsageError, match="--as-group needs --as"):
        connect(KubeOptions(kubeconfig=kubeconfig, as_groups=("devs",)))


def test_in_cluster_service_account(env, monkeypatch):
    sa = env / "sa"
    sa.mkdir()
    tls = make_self_signed_cert(str(env))
    if tls is None:
        pytest.skip("openssl CLI not installed: cannot make a TLS certificate for the in-cluster test")
    (sa / "ca.crt").write_bytes(open(tls[0], "rb").read())
    (sa / "token").write_text("sa-token")
    (sa / "namespace").write_text("kube-team\n")
    with FakeApiServer(tls=tls, user_for_token={"sa-token": "system:serviceaccount:kube-team:tspread"}) as server:
        server.add(raw_node("n1"))
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.port))
        cluster = connect(KubeOptions(), retry=fast(), service_account_dir=str(sa))
        assert (cluster.server, cluster.namespace) == (f"https://127.0.0.1:{server.port}", "kube-team")
        assert [n.name for n in cluster.list("Node")] == ["n1"]


def test_nothing_on_stdout_and_kubeconfig_untouched(env, capfd):
    with FakeApiServer(user_for_token={"exec-tok": "sso-user"}) as server:
        server.add(raw_node("n1"))
        cfg = write_kubeconfig(str(env / "config"), {"c": server.url}, {"sso": exec_user(str(env), "exec-tok")},
                               {"c": {"cluster": "c", "user": "sso"}}, "c")
        before = (open(cfg, "rb").read(), os.stat(cfg).st_mtime_ns)
        capfd.readouterr()
        snap = load_live(KubeOptions(kubeconfig=cfg), ["Node", "Pod"], retry=fast())
        out, _ = capfd.readouterr()
        assert len(snap.nodes) == 1
        assert out == ""
        assert (open(cfg, "rb").read(), os.stat(cfg).st_mtime_ns) == before


def test_malformed_kubeconfig_is_an_input_error(env):
    bad = env / "config"
    bad.write_text("clusters: [unclosed\n")
    with pytest.raises(TspreadError, match=r"is not valid YAML .*; fix it or pass another --kubeconfig"):
        connect(KubeOptions(kubeconfig=str(bad)))


def test_importing_the_live_module_does_not_import_kubernetes():
    code = ("import sys, kubectl_tspread.snapshot.live as m; "
            "print(any(k == 'kubernetes' or k.startswith('kubernetes.') for k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
