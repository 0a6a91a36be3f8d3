"""The distribution summary shows what matters: pending pods (PENDING, workloads[].pending), domains
that accept nothing now because of cordons or taints (marked; HEADROOM says what they accept now),
NO DOMAINS instead of `<no domains> 0 OK`, and DoNotSchedule before ScheduleAnyway at equal status."""

from __future__ import annotations

import json

from conftest import make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views.distribution import compute_distribution
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import Requirement
from kubectl_tspread.model import SCHEDULE_ANYWAY, ZONE_KEY, NodeSelectorTerm, Toleration
from kubectl_tspread.render import structured, table
from kubectl_tspread.views.targets import resolve


def _pods(name, nodes, spread=None, **kw):
    spread = [make_constraint(selector={"app": name})] if spread is None else spread
    return [make_pod(f"{name}-{i}", node=n, labels={"app": name}, spread=spread, owner=f"ReplicaSet/{name}-rs",
                     created=f"2026-01-01T00:00:{i:02d}Z", **kw) for i, n in enumerate(nodes)]


def _report(pods, nodes):
    idx = ClusterIndex(make_snapshot(nodes, pods))
    return compute_distribution(idx, resolve(idx, "default", None, None), namespace="default")


def _summary(report) -> list[str]:
    return table.summary_text(report).splitlines()


def _detail(report) -> str:
    return table.detail_text(report)


def _doc(report) -> dict:
    return json.loads(structured.dump(structured.distribution_view(report), "json"))


ZONES = [make_node("a0", zone="a"), make_node("b0", zone="b"), make_node("c0", zone="c")]
NOWHERE = (NodeSelectorTerm(match_expressions=(Requirement(ZONE_KEY, "In", ("z",)),)),)


def test_a_workload_with_none_of_its_pods_running_is_not_ok():
    # both replicas ask for zone z, which no node has: no domain, both pending
    r = _report(_pods("web", [None, None], node_affinity=NOWHERE), ZONES)
    (w,) = r.workloads
    assert (w.pods, w.pending, w.running) == (2, 2, 0)
    (row,) = _summary(r)[1:]
    cells = row.split()
    assert cells[2:4] == ["2", "2"]  # PODS, PENDING
    assert row.rstrip().endswith("<no domains>   0      NO DOMAINS")
    c = _doc(r)["workloads"][0]
    assert (c["pending"], c["running"]) == (2, 0) and c["constraints"][0]["status"] == "NO DOMAINS"


def test_pending_column_counts_the_waiting_replicas():
    r = _report(_pods("web", ["a0", "b0", None]), ZONES)
    (row,) = _summary(r)[1:]
    assert row.split()[2:4] == ["3", "1"]
    assert _doc(r)["workloads"][0]["pending"] == 1
    assert "3 pods (1 pending)" in _detail(r)


def test_cordoned_and_tainted_domains_are_marked_and_accept_nothing_now():
    nodes = [make_node("a0", zone="a"), make_node("b0", zone="b", taints=["dedicated=infra:NoSchedule"]),
             make_node("c0", zone="c", unschedulable=True)]
    r = _report(_pods("web", ["a0"]), nodes)
    (row,) = _summary(r)[1:]
    assert "a=1 b=0(tainted) c=0(cordoned)" in row
    detail = _detail(r)
    assert "0 (cordoned; spread allows 1)" in detail and "0 (tainted; spread allows 1)" in detail
    domains = {d["value"]: d for d in _doc(r)["workloads"][0]["constraints"][0]["domains"]}
    assert (domains["c"]["headroom"], domains["c"]["acceptsNow"], domains["c"]["state"]) == (1, 0, "cordoned")
    assert (domains["b"]["acceptsNow"], domains["b"]["state"]) == (0, "tainted")
    assert (domains["a"]["acceptsNow"], domains["a"]["state"]) == (0, None)


def test_a_tolerated_taint_does_not_mark_the_domain():
    nodes = [make_node("a0", zone="a"), make_node("b0", zone="b", taints=["dedicated=infra:NoSchedule"])]
    tol = (Toleration("dedicated", "Equal", "infra", "NoSchedule"),)
    r = _report(_pods("web", ["a0"], tolerations=tol), nodes)
    assert "a=1 b=0 " in _summary(r)[1] + " "
    assert _doc(r)["workloads"][0]["constraints"][0]["domains"][1]["acceptsNow"] == 1


def test_hostname_summary_counts_the_domains_that_accept_nothing_now():
    nodes = [make_node(f"n{i}", zone="a", unschedulable=i < 2) for i in range(8)]
    host = [make_constraint(key="kubernetes.io/hostname", selector={"app": "web"})]
    r = _report(_pods("web", ["n2", "n3"], spread=host), nodes)
    assert "8 domains, min 0, max 1, 2 cordoned" in _summary(r)[1]


def test_do_not_schedule_rows_come_before_schedule_anyway_at_equal_status():
    soft = [make_constraint(selector={"app": "aaa"}, mode=SCHEDULE_ANYWAY)]
    r = _report(_pods("aaa", ["a0", "b0", "c0"], spread=soft) + _pods("zzz", ["a0", "b0", "c0"]), ZONES)
    rows = _summary(r)[1:]
    assert [row.split()[1] for row in rows] == ["replicaset/zzz-rs", "replicaset/aaa-rs"]
    assert all(row.rstrip().endswith("OK") for row in rows)
