"""Bounded time for any server: whole-request timeouts, paging bounds, Retry-After in any spelling,
the shapes of list answers. Through the real `kubernetes` client over HTTP on 127.0.0.1
(tests/hostileapi.py says whatever a scenario tells it to; tests/fakeapi.py is the honest cluster)."""

from __future__ import annotations

import time

import pytest

from fakeapi import FakeApiServer, raw_node, raw_pod, status_body, write_kubeconfig
from hostileapi import HostileApiServer, run_cli
from kubectl_tspread.snapshot.drainwriter import BackoffPolicy, EvictionBlocked, Writer, _retry_after
from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.snapshot.live import (RETRY_AFTER_CAP, Answer, ApiStatusError, KubeOptions, RetryPolicy,
                                           connect, retry_after_seconds)


def cluster(tmp_path, url: str, **kw):
    kc = write_kubeconfig(str(tmp_path / "config"), {"c": url}, {"u": {}}, {"c": {"cluster": "c", "user": "u"}}, "c")
    retry = kw.pop("retry", None) or RetryPolicy(base=0.01)
    return connect(KubeOptions(kubeconfig=kc, **kw), retry=retry, environ={})


# ---- Retry-After, one parser ----------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("3", 3.0), (3, 3.0), ("1.5", 1.5), (" 7 ", 7.0), ("0", 0.0),
    ("99999", 30.0), ("inf", 30.0), ("Infinity", 30.0), ("1e308", 30.0), (1e308, 30.0), (10 ** 400, 30.0),
    ("-5", 0.0), (-5, 0.0), ("-inf", 0.0),
    ("nan", None), ("soon", None), ("", None), (None, None), (True, None), ({"s": 1}, None), ([3], None),
    ("x" * 1000, None),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0), ("Fri, 31 Dec 9999 23:59:59 GMT", 30.0),
    ("Mon, 99 Foo 2015 99:99:99 GMT", None),
], ids=lambda v: repr(v)[:30])
def test_retry_after_is_read_defensively_and_capped(value, expected):
    assert retry_after_seconds(value, 30.0) == expected


@pytest.mark.parametrize("header, details, expected", [
    ("inf", {}, RETRY_AFTER_CAP), (None, {"retryAfterSeconds": "soon"}, None),
    (None, {"retryAfterSeconds": 1e308}, RETRY_AFTER_CAP), (None, {"retryAfterSeconds": -3}, None),
    (None, "details that are a string", None), (None, {"retryAfterSeconds": "12"}, 12.0),
], ids=["header inf", "details soon", "details 1e308", "details negative", "details not a map", "details text"])
def test_the_drain_writer_reads_retry_after_with_the_same_parser(header, details, expected):
    answer = Answer("POST", "/x", 429, {"kind": "Status", "details": details},
                    retry_after_seconds(header, RETRY_AFTER_CAP))
    assert _retry_after(answer) == expected


@pytest.mark.parametrize("retry_after", [99999.0, 30.0])
def test_the_writers_wait_is_capped(retry_after):
    assert BackoffPolicy(base=1.0, retry_after_cap=5.0).wait(1, retry_after) == 5.0
    assert BackoffPolicy(base=1.0, max_backoff=5.0).wait(10_000, None) == 5.0  # no overflow either
    assert BackoffPolicy().retry_after_cap == RETRY_AFTER_CAP


@pytest.mark.parametrize("header, details", [
    ("inf", None), ("1e308", None), ("99999", None), (None, {"retryAfterSeconds": "soon"}),
    (None, {"retryAfterSeconds": 1e308}),
], ids=["header inf", "header 1e308", "header 99999", "details soon", "details 1e308"])
def test_an_eviction_answered_429_with_an_absurd_retry_after_ends_by_its_deadline(tmp_path, header, details):
    """Before: `inf`/`1e308` raised OverflowError and "soon" ValueError mid-drain, and 99999 slept
    until the step's --timeout. Now each is read, capped, and the deadline ends the retries."""
    with FakeApiServer() as api:
        body = status_body(429, "Cannot evict pod as it would violate the pod's disruption budget",
                           details=details)
        api.fail("*/eviction", 429, times=None, method="POST", retry_after=header)
        api.faults[-1].body = body
        w = Writer(cluster(tmp_path, api.url, retry=RetryPolicy(attempts=1)), policy=BackoffPolicy(base=0.05))
        start = time.monotonic()
        with pytest.raises(EvictionBlocked, match="still refused when the timeout ran out"):
            w.evict("default", "web-1", time.monotonic() + 1.5)
        assert time.monotonic() - start < 5
        assert len(api.logged("POST")) >= 2  # it did retry, within the deadline


def test_a_write_answered_with_a_redirect_says_where_it_pointed(tmp_path):
    """Was 'failed to patch nodes (cluster-scoped) (302: HTTP 302)' (issue 58, third round)."""
    with HostileApiServer([{"status": 302, "headers": {"Location": "https://10.0.0.1:6443/"}}]) as api:
        w = Writer(cluster(tmp_path, api.url), policy=BackoffPolicy(base=0.05))
        with pytest.raises(ClusterError, match=r"answered PATCH /api/v1/nodes/n1 with a redirect \(302 to "
                                               r"https://10.0.0.1:6443/\), which tspread does not follow"):
            w.cordon("n1", time.monotonic() + 2)


# ---- reads: the whole request, retries included, ends by --request-timeout --------------------

def test_a_trickled_body_ends_at_the_request_timeout(tmp_path):
    """Headers at once, then a byte every 0.5 s: a per-read socket timeout never fires (it ran
    58 s before); the whole exchange is bounded."""
    with HostileApiServer([{"status": 200, "list": {}, "trickle": 0.5}]) as api:
        live = cluster(tmp_path, api.url, request_timeout=1.5)
        start = time.monotonic()
        with pytest.raises(ClusterError, match=r"did not answer a list of nodes within 1.5s; raise --request-timeout"):
            list(live.list("Node"))
        assert time.monotonic() - start < 2.5


def test_a_server_that_never_sends_headers_ends_at_the_request_timeout(tmp_path):
    with HostileApiServer([{"status": 200, "list": {}, "stall": 20}]) as api:
        live = cluster(tmp_path, api.url, request_timeout=1)
        start = time.monotonic()
        with pytest.raises(ClusterError, match="within 1s"):
            list(live.list("Node"))
        assert time.monotonic() - start < 2


def test_retries_and_their_waits_end_by_the_request_timeout(tmp_path):
    """A 5xx storm asking for 0.4 s each time: no wait is begun that the deadline leaves no room for."""
    with HostileApiServer([{"status": 503, "headers": {"Retry-After": "0.4"}}]) as api:
        live = cluster(tmp_path, api.url, request_timeout=1.0, retry=RetryPolicy(attempts=100, base=0.01))
        start = time.monotonic()
        with pytest.raises(ApiStatusError, match=r"\(503: injected\) \(still failing after [23] attempts"):
            list(live.list("Node"))
        assert time.monotonic() - start < 1.5


def test_without_a_request_timeout_the_waiting_has_a_budget(tmp_path):
    with HostileApiServer([{"status": 429, "headers": {"Retry-After": "99999"}}]) as api:
        live = cluster(tmp_path, api.url, retry=RetryPolicy(attempts=100, retry_after_cap=0.3, budget=1.0))
        start = time.monotonic()
        with pytest.raises(ApiStatusError, match=r"throttling .* \(still failing after [34] attempts"):
            list(live.list("Node"))
        assert 0.6 < time.monotonic() - start < 2


def test_a_status_bodys_retry_after_seconds_is_honoured_on_reads(tmp_path):
    waits: list[float] = []
    with HostileApiServer([{"status": 429, "status_details": {"retryAfterSeconds": 2}},
                           {"status": 429, "status_details": {"retryAfterSeconds": "soon"}},
                           {"status": 200, "list": {}}]) as api:
        live = cluster(tmp_path, api.url, retry=RetryPolicy(base=0.01, sleep=waits.append))
        assert list(live.list("Node")) == []
    assert waits == [2.0, 0.02]  # the hint, then plain backoff for a hint that says nothing


# ---- paging bounds and list shapes --------------------------------------------------------------

def test_the_same_continue_token_twice_stops_the_list(tmp_path):
    with HostileApiServer([{"status": 200, "list": {"continue": "same", "items": []}}]) as api:
        with pytest.raises(ClusterError, match="sent the same continue token twice while listing /api/v1/nodes"):
            list(cluster(tmp_path, api.url).list("Node"))
        assert len(api.requests) <= 4


def test_endless_empty_pages_stop_the_list(tmp_path):
    # pods are listed with a field selector: their pages may be sparse, or empty, for long stretches
    with HostileApiServer([{"status": 200, "list": {"continue": "new", "items": []}}]) as api:
        with pytest.raises(ClusterError, match="still paging /api/v1/namespaces/default/pods after 100 empty pages in a row"):
            list(cluster(tmp_path, api.url).list("Pod"))
        assert len(api.requests) <= 102


def test_a_page_bound_stops_a_list_that_never_ends(tmp_path, monkeypatch):
    from kubectl_tspread.snapshot import transport

    monkeypatch.setattr(transport, "MAX_PAGES", 5)
    with HostileApiServer([{"status": 200, "list": {"continue": "new", "items": [raw_pod("p")]}}]) as api:
        with pytest.raises(ClusterError, match="still paging /api/v1/namespaces/default/pods after 5 pages"):
            list(cluster(tmp_path, api.url).list("Pod"))


@pytest.mark.parametrize("items, said", [([], "3 pages in a row of 0 items "), ([raw_node("n")], "3 pages in a row of 1 item ")],
                         ids=["empty pages", "one node a page"])
def test_scant_pages_of_a_list_nothing_filters_stop_it_at_once(tmp_path, items, said):
    """Nodes (no selector) come in full pages but the last: a page of next to nothing with a continue
    token is a server paging nowhere. It ran 2,000 pages, each bounded by --request-timeout only."""
    with HostileApiServer([{"status": 200, "list": {"continue": "new", "items": items}, "stall": 0.2}]) as api:
        with pytest.raises(ClusterError, match=f"still paging /api/v1/nodes after {said}with a continue token, "
                                               "though 500 were asked for and nothing filters the list"):
            list(cluster(tmp_path, api.url).list("Node"))
        assert len(api.requests) <= 5


@pytest.mark.parametrize("answer, message", [
    ({"list": {"items": 5}}, "items that is a number (5), not a list of objects"),
    ({"list": {"items": [1, "x"]}}, "items[0] that is a number (1), not an object"),
    ({"list": {"items": {"a": 1}}}, "items that is an object, not a list of objects"),
    ({"raw": '{"metadata":"x","items":[]}'}, "metadata that is a string ('x'), not an object"),
    ({"raw": '{"metadata":{"continue":7},"items":[]}'}, "metadata.continue that is a number"),
    ({"raw": '[1, 2]'}, "with a list, not a JSON object; check that the kubeconfig's server URL"),
    ({"raw": '{"kind": '}, "something that is not JSON"),
], ids=["items a number", "items scalars", "items a map", "metadata a string", "continue a number",
        "a JSON array", "broken JSON"])
@pytest.mark.parametrize("kind", ["Node", "Pod"])
def test_a_list_answer_of_the_wrong_shape_is_named(tmp_path, answer, message, kind):
    with HostileApiServer([{"status": 200, **answer}]) as api:
        with pytest.raises(ClusterError) as e:
            list(cluster(tmp_path, api.url, all_namespaces=True).list(kind))
    assert message in str(e.value)


_STATUS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Forbidden",
           "message": "pods is forbidden", "code": 403}


@pytest.mark.parametrize("body, message", [
    (_STATUS, "with 200 and a Status (Failure, Forbidden: pods is forbidden), not a {kind}List: the request failed"),
    ({"kind": "Status", "status": "Success"}, "with 200 and a Status (Success), not a {kind}List"),
    ({"kind": "ServiceList", "apiVersion": "v1", "metadata": {}, "items": []}, "with a ServiceList, not a {kind}List"),
    ({"kind": "{kind}", "apiVersion": "v1", "metadata": {"name": "x", "namespace": "d"}},
     "with a {kind}, not a {kind}List"),
    ({"kind": 5, "items": []}, "with kind that is a number (5), not a {kind}List"),
], ids=["a Status Failure", "a Status Success", "another kind's list", "one object", "a kind that is a number"])
@pytest.mark.parametrize("kind, path", [("Node", "/api/v1/nodes"), ("Pod", "/api/v1/pods"),
                                        ("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets")])
def test_a_200_that_is_not_the_list_asked_for_is_named(tmp_path, body, message, kind, path):
    """Read as an empty list before (kubectl's client errs on a Status with a 200 too)."""
    import json

    raw = json.dumps(body).replace("{kind}", kind)
    with HostileApiServer([{"status": 200, "raw": raw}]) as api:
        with pytest.raises(ClusterError) as e:
            list(cluster(tmp_path, api.url, all_namespaces=True).list(kind))
    assert f"answered GET {path} (a list of " in str(e.value)
    assert message.replace("{kind}", kind) in str(e.value)


def test_a_200_status_with_403_for_an_optional_kind_is_skipped_like_a_403(tmp_path):
    """client-go reads a Status with a 200 as the error it carries: events a proxy forbids that
    way are skipped with a warning, as a real 403 is; pods are not optional: an error."""
    import json

    from kubectl_tspread.snapshot.live import load_live

    forbidden = json.dumps({**_STATUS, "message": "events is forbidden"})
    answers = [{"status": 200, "list": {"items": [raw_node("n1")]}}, {"status": 200, "list": {}},
               {"status": 200, "raw": forbidden}]
    with HostileApiServer(answers) as api:
        snap = load_live(KubeOptions(), ["Node", "Pod", "Event"], cluster=cluster(tmp_path, api.url,
                                                                                  all_namespaces=True))
    assert [n.name for n in snap.nodes] == ["n1"] and "Event" not in snap.kinds_read
    assert any("skipped events: " in w and "with 200 and a Status (Failure, Forbidden: events is forbidden)" in w
               for w in snap.warnings), snap.warnings
    with HostileApiServer([answers[0], {"status": 200, "raw": forbidden}]) as api:
        with pytest.raises(ApiStatusError) as e:
            load_live(KubeOptions(), ["Node", "Pod"], cluster=cluster(tmp_path, api.url, all_namespaces=True))
    assert e.value.status == 403 and "answered GET /api/v1/pods (a list of pods) with 200 and a Status" in str(e.value)


@pytest.mark.parametrize("list_kind", [None, "", "List", "PodList"])
def test_a_list_that_leaves_its_kind_out_or_is_a_plain_List_is_read(tmp_path, list_kind):
    """Some proxies strip the kind (client-go then reads the answer as what it asked for)."""
    import json

    page = {"apiVersion": "v1", "metadata": {}, "items": [{"metadata": {"name": "p", "namespace": "d"}}]}
    if list_kind is not None:
        page["kind"] = list_kind
    with HostileApiServer([{"status": 200, "raw": json.dumps(page)}]) as api:
        pods = list(cluster(tmp_path, api.url, all_namespaces=True).list("Pod"))
    assert [(p.namespace, p.name) for p in pods] == [("d", "p")]


@pytest.mark.parametrize("kind, item, field", [
    ("Node", {}, "metadata.name: expected a non-empty string, got null"),
    ("Node", {"metadata": {"name": ""}}, "metadata.name: expected a non-empty string, got ''"),
    ("Pod", {"spec": {"nodeName": "n"}}, "metadata.name: expected a non-empty string, got null"),
    ("Pod", {"metadata": {"name": "web-1"}}, "metadata.namespace: expected a non-empty string, got null"),
    ("Deployment", {"metadata": {"name": "web", "namespace": ""}}, "metadata.namespace: expected a non-empty"),
    ("PodDisruptionBudget", {"metadata": {"namespace": "d"}}, "metadata.name: expected a non-empty string"),
], ids=["node {}", "node name ''", "pod without metadata", "pod without a namespace",
        "deployment namespace ''", "pdb without a name"])
def test_an_item_without_its_name_or_namespace_is_named_with_its_place(tmp_path, kind, item, field):
    """The index counts the items of earlier pages: one page of two good objects, then the bad one."""
    import json

    good = [{"metadata": {"name": f"ok-{i}", "namespace": "d"}} for i in range(2)]
    pages = [{"status": 200, "list": {"continue": "new", "items": good}},
             {"status": 200, "raw": json.dumps({"kind": f"{kind}List", "metadata": {}, "items": [good[0], item]})}]
    with HostileApiServer(pages) as api:
        with pytest.raises(ClusterError) as e:
            list(cluster(tmp_path, api.url, all_namespaces=True).list(kind))
    assert f"(item 3 of the {kind}List from GET " in str(e.value)
    assert field in str(e.value)


# ---- what a user sees --------------------------------------------------------------------------

@pytest.mark.parametrize("answers, fragment", [
    ([{"status": 200, "list": {}, "trickle": 0.5}], "did not answer a list of nodes within 2s"),
    ([{"status": 200, "list": {"continue": "same"}}], "the same continue token twice"),
    ([{"status": 429, "headers": {"Retry-After": "99999"}}], "throttling requests (429 TooManyRequests)"),
    ([{"status": 200, "list": {"items": 5}}], "items that is a number (5)"),
], ids=["trickle", "same continue token", "429 Retry-After 99999", "items a number"])
def test_one_error_line_and_nothing_on_stdout_within_the_bound(tmp_path, answers, fragment):
    got = run_cli({"answers": answers, "request_timeout": "2s"}, str(tmp_path))
    assert got.code == 1 and got.stdout == "" and got.seconds < 4
    assert got.stderr.count("\n") == 1 and got.stderr.startswith("error: ") and fragment in got.stderr


def test_a_servers_message_is_one_clipped_line_of_the_error(tmp_path):
    with HostileApiServer([{"status": 400, "message": "bad\nerror: forged line\r\n" + "x" * 5000}]) as api:
        with pytest.raises(ApiStatusError) as e:
            list(cluster(tmp_path, api.url).list("Node"))
    text = str(e.value)
    assert "\n" not in text and "\r" not in text and "(400: bad error: forged line xxx" in text
    assert len(text) < 600 and text.endswith("…)")


def test_an_answer_larger_than_the_bound_stops_the_read(tmp_path, monkeypatch):
    from kubectl_tspread.snapshot import transport

    monkeypatch.setattr(transport, "MAX_RESPONSE_BYTES", 2 << 20)
    monkeypatch.setattr(transport, "_CHUNK", 64 << 10)
    big = [{"metadata": {"name": f"n{i}", "annotations": {"a": "x" * 1000}}} for i in range(3000)]  # ~3 MB
    with HostileApiServer([{"status": 200, "list": {"items": big}}]) as api:
        with pytest.raises(ClusterError, match=r"sent more than 2 MiB for one request to /api/v1/nodes"):
            list(cluster(tmp_path, api.url).list("Node"))
