"""The drain's writes (cordon, policy/v1 eviction) and its progress reporting, piece by piece.

Writes go through the real `kubernetes` client to `fakeapi.FakeApiServer` on 127.0.0.1;
answers the fake cluster does not give by itself are injected with `api.fail`.
"""

from __future__ import annotations

import io
import json
import socket
import time

import pytest

from fakeapi import FakeApiServer, raw_node, write_kubeconfig
from fakecluster import PDB_VIOLATION, FakeCluster, ready_pod
from kubectl_tspread.cli import progress as P
from kubectl_tspread.snapshot.drainwriter import GONE, EVICTED, BackoffPolicy, Cancelled, ConnectionLost, EvictionBlocked, \
    EvictionRefused, Writer, _retry_after
from kubectl_tspread.model.errors import ClusterError, UsageError
from kubectl_tspread.snapshot.live import Answer, KubeOptions, RetryPolicy, connect

LABELS = {"app": "web", "pod-template-hash": "abc12"}


@pytest.fixture
def api():
    with FakeApiServer() as server:
        FakeCluster(server)
        server.add(raw_node("n1"), ready_pod("web-1", "n1", "web-abc12", LABELS))
        yield server


def cluster_for(tmp_path, url: str):
    kc = write_kubeconfig(str(tmp_path / "config"), {"c": url}, {"u": {}}, {"c": {"cluster": "c", "user": "u"}}, "c")
    return connect(KubeOptions(kubeconfig=kc), retry=RetryPolicy(attempts=1), environ={})


def writer(tmp_path, api, dry_run=False, **policy) -> Writer:
    return Writer(cluster_for(tmp_path, api.url), dry_run, BackoffPolicy(**{"base": 0.01, "max_backoff": 0.02,
                                                                           **policy}))


def far() -> float:
    return time.monotonic() + 5


# ---- backoff ---------------------------------------------------------------------------------

@pytest.mark.parametrize("attempt, retry_after, expected", [
    (1, None, 1.0), (2, None, 2.0), (4, None, 8.0), (10, None, 30.0), (1, 5.0, 5.0), (3, 1.0, 4.0), (1, 0.0, 1.0),
], ids=["first wait is base", "doubles", "doubles again", "capped at max_backoff",
        "a longer Retry-After wins", "a shorter Retry-After does not shorten the backoff", "Retry-After 0 = no hint"])
def test_backoff(attempt, retry_after, expected):
    assert BackoffPolicy(base=1.0, max_backoff=30.0).wait(attempt, retry_after) == expected


@pytest.mark.parametrize("header, details, expected", [
    (3.0, {"retryAfterSeconds": 10}, 3.0), (None, {"retryAfterSeconds": 10}, 10.0), (None, {}, None),
    (None, {"retryAfterSeconds": 0}, None),
], ids=["the header wins", "else the Status details", "no hint", "0 seconds is no hint"])
def test_retry_after_from_header_or_status(header, details, expected):
    answer = Answer("POST", "/x", 429, {"kind": "Status", "details": details}, header)
    assert _retry_after(answer) == expected


# ---- eviction ---------------------------------------------------------------------------------

def test_eviction_sends_a_policy_v1_eviction(tmp_path, api):
    assert writer(tmp_path, api).evict("default", "web-1", far()) == EVICTED
    req = api.logged("POST")[-1]
    assert req.path == "/api/v1/namespaces/default/pods/web-1/eviction"
    assert req.json() == {"apiVersion": "policy/v1", "kind": "Eviction",
                          "metadata": {"name": "web-1", "namespace": "default"}}
    assert api.objects[("/api/v1/pods", "default", "web-1")]["metadata"]["deletionTimestamp"]


def test_server_dry_run_eviction_changes_nothing(tmp_path, api):
    assert writer(tmp_path, api, dry_run=True).evict("default", "web-1", far()) == EVICTED
    assert api.logged("POST")[-1].json()["deleteOptions"] == {"dryRun": ["All"]}
    assert "deletionTimestamp" not in api.objects[("/api/v1/pods", "default", "web-1")]["metadata"]


def test_a_missing_pod_is_already_gone(tmp_path, api):
    assert writer(tmp_path, api).evict("default", "nope", far()) == GONE


def test_429_until_the_deadline_is_blocked_with_the_servers_words(tmp_path, api):
    api.fail("*/eviction", 429, times=None, method="POST", message=PDB_VIOLATION)
    retries = []
    with pytest.raises(EvictionBlocked) as exc:
        writer(tmp_path, api).evict("default", "web-1", time.monotonic() + 0.1, lambda *a: retries.append(a))
    assert PDB_VIOLATION in str(exc.value) and "--timeout" in str(exc.value)
    assert exc.value.server_message == f"429: {PDB_VIOLATION}"
    assert len(retries) >= 2 and len(api.logged("POST")) == len(retries) + 1


@pytest.mark.parametrize("status, fragment", [
    (403, 'cannot create pods/eviction in namespace "default": your RBAC lacks create on pods/eviction; '
          'the drain ClusterRole in deploy/rbac/tspread-drain.yaml grants it'),
    (422, "failed to create pods/eviction"),
], ids=["403 names the missing permission", "422 stops with the server's message"])
def test_other_errors_stop_at_once(tmp_path, api, status, fragment):
    api.fail("*/eviction", status, times=None, method="POST")
    with pytest.raises(EvictionRefused, match=fragment) as exc:
        writer(tmp_path, api).evict("default", "web-1", far())
    assert exc.value.status == status and len(api.logged("POST")) == 1


def test_cancel_stops_before_anything_is_sent(tmp_path, api):
    w = writer(tmp_path, api)
    w.policy.cancel.set()
    with pytest.raises(Cancelled):
        w.evict("default", "web-1", far())
    assert not api.logged("POST")


def test_cancel_cuts_a_backoff_wait_short(tmp_path, api):
    api.fail("*/eviction", 429, times=None, method="POST", retry_after="30")
    w = writer(tmp_path, api)
    started = time.monotonic()
    with pytest.raises(Cancelled):
        w.evict("default", "web-1", far(), lambda *a: w.policy.cancel.set())
    assert time.monotonic() - started < 5


def test_an_unreachable_server_is_a_lost_connection_after_a_few_tries(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    w = Writer(cluster_for(tmp_path, f"http://127.0.0.1:{port}"), policy=BackoffPolicy(base=0.01,
                                                                                       connection_attempts=3))
    retries = []
    with pytest.raises(ConnectionLost, match=f"cannot reach the API server at http://127.0.0.1:{port}"):
        w.evict("default", "web-1", far(), lambda *a: retries.append(a))
    assert len(retries) == 2


# ---- cordon ------------------------------------------------------------------------------------

def test_cordon_is_a_merge_patch_and_retries_server_errors(tmp_path, api):
    api.fail("/api/v1/nodes/n1", 503, times=1, method="PATCH")
    writer(tmp_path, api).cordon("n1", far())
    reqs = api.logged("PATCH")
    assert len(reqs) == 2 and reqs[-1].json() == {"spec": {"unschedulable": True}}
    assert reqs[-1].headers.get("Content-Type") == "application/merge-patch+json"
    assert api.objects[("/api/v1/nodes", "", "n1")]["spec"]["unschedulable"] is True


def test_dry_run_cordon_changes_nothing(tmp_path, api):
    writer(tmp_path, api, dry_run=True).cordon("n1", far())
    assert api.logged("PATCH")[-1].query == {"dryRun": "All"}
    assert "unschedulable" not in api.objects[("/api/v1/nodes", "", "n1")]["spec"]


def test_cordon_of_a_missing_node_fails_with_the_servers_message(tmp_path, api):
    with pytest.raises(ClusterError, match='nodes "gone" not found'):
        writer(tmp_path, api).cordon("gone", far())


# ---- progress ------------------------------------------------------------------------------------

@pytest.mark.parametrize("event, label, line", [
    ({"action": "cordon", "object": "node/n1", "result": "cordoned"}, "step 1/2", "step 1/2: node/n1 cordoned"),
    ({"action": "retry", "object": "pod/d/w", "result": "retrying in 1.0s", "message": "429: no"}, "",
     "pod/d/w retrying in 1.0s: 429: no"),
    ({"action": "done", "object": "", "result": "drained n1"}, "step 2/2", "drained n1"),
], ids=["action with a step", "retry with the server's message", "the end carries no step"])
def test_plain_lines(event, label, line):
    assert P.plain_line(event, label) == line


def test_log_lines_are_appended_json_across_runs(tmp_path):
    log = tmp_path / "drain.jsonl"
    for run in range(2):
        with P.Progress(io.StringIO(), interactive=False, log_path=str(log), now=lambda: "T") as progress:
            progress.record(P.EVICT, f"pod/default/web-{run}", "evicted", step=1)
    assert [json.loads(x) for x in log.read_text().splitlines()] == [
        {"time": "T", "action": "evict", "object": f"pod/default/web-{i}", "result": "evicted", "step": 1}
        for i in range(2)]


def test_an_unwritable_log_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot open --log file"):
        with P.Progress(io.StringIO(), interactive=False, log_path=str(tmp_path / "no" / "such" / "dir.log")):
            pass


def test_interactive_progress_draws_bars_and_keeps_action_lines(tmp_path):
    out = io.StringIO()
    with P.Progress(out, interactive=True) as progress:
        progress.steps(0, 2, ["n1"])
        progress.evictions(1, 3)
        progress.replacements(0, 1)
        progress.record(P.CORDON, "node/n1", "cordoned")
    assert "node/n1 cordoned" in out.getvalue()


def test_listeners_see_every_record_and_may_interrupt():
    seen = []

    def listener(event):
        seen.append(event["action"])
        if event["action"] == P.EVICT:
            raise KeyboardInterrupt

    with P.Progress(io.StringIO(), interactive=False, listeners=[listener]) as progress:
        progress.record(P.CORDON, "node/n1", "cordoned")
        with pytest.raises(KeyboardInterrupt):
            progress.record(P.EVICT, "pod/d/w", "evicted")
    assert seen == [P.CORDON, P.EVICT]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("color,environ,colored", [
    ("never", {}, False),
    ("auto", {"NO_COLOR": "1"}, False),
    ("auto", {}, True),
], ids=["--color never: bars without colors", "NO_COLOR: bars without colors", "a terminal: colored bars"])
def test_progress_bars_follow_the_color_setting(monkeypatch, color, environ, colored):
    import re

    monkeypatch.delenv("NO_COLOR", raising=False)
    for k, v in environ.items():
        monkeypatch.setenv(k, v)
    out = _Terminal()
    with P.Progress(out, interactive=True, color=color) as progress:
        progress.steps(0, 2, ["n1"])
        progress.evictions(1, 3)
        progress.record(P.CORDON, "node/n1", "cordoned")
    assert "node/n1 cordoned" in out.getvalue()
    assert bool(re.search(r"\x1b\[[0-9;]*m", out.getvalue())) is colored
