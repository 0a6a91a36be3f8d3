"""explain_pending: per-node verdicts, the message beside the live one, the spread intersection, traps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import make_constraint, make_pod
from kubectl_tspread.engine.traps import CORDONED_DOMAIN, ENFORCED_ONLY_AT_PLACEMENT, MIN_DOMAINS_UNREACHABLE, MISSING_LABELS
from kubectl_tspread.model.labels import IN, Requirement
from kubectl_tspread.model import (
    Event, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim, PodCondition, Volume, ZONE_KEY,
)
from kubectl_tspread.views.pending import (
    ALLOWED_DOMAINS_BLOCKED, CAUSE_NOMINATED_NODE, CAUSE_OTHER_SCHEDULER, CAUSE_STALE_MESSAGE,
    CAUSE_UNSEEN_PROFILE, NO_DOMAIN_ALLOWED, SPREAD_NOT_BLOCKING, VOLUME_PINNING, explain_pending, explain_pods,
)
from pending_cases import index_of, zone_node, zoned

SPREAD = "node(s) didn't match pod topology spread constraints"
MISSING = SPREAD + " (missing required label)"


def _pinned_pv_cluster():
    """zones a=2 b=1: spread allows only b, the pod's bound PV lives in zone a."""
    pv = PersistentVolume("pv-a", node_affinity=(NodeSelectorTerm((Requirement(ZONE_KEY, IN, ("a",)),)),),
                          claim="default/data")
    pvc = PersistentVolumeClaim("default", "data", volume_name="pv-a", phase="Bound")
    return zoned({"a": 2, "b": 1}, pod_kw={"volumes": (Volume("data", pvc="data"),)}, pvs=[pv], pvcs=[pvc])


def _two_constraints_cluster():
    """zone allows only b, rack allows only r1, which is only in zone a: spread alone refuses both nodes."""
    rack = make_constraint(key="rack", selector={"role": "db"})
    snap, pod = zoned({"a": 2, "b": 1}, constraint=make_constraint())
    nodes = tuple(replace(n, labels={**n.labels, "rack": "r1" if n.name == "a0" else "r2"}) for n in snap.nodes)
    dbs = tuple(make_pod(f"db-{i}", node="b0", labels={"role": "db"}) for i in range(2))
    pod = replace(pod, labels={"app": "web", "role": "db"}, spread=pod.spread + (rack,))
    pods = tuple(p for p in snap.pods if p.name != "web-new") + dbs + (pod,)
    return replace(snap, nodes=nodes, pods=pods), pod


CASES = [
    pytest.param(lambda: zoned({"a": 5, "b": 5, "c": 3}, full="c"),
                 f"0/3 nodes are available: 1 Insufficient cpu, 2 {SPREAD}.",
                 ALLOWED_DOMAINS_BLOCKED, ["c"], {ENFORCED_ONLY_AT_PLACEMENT},
                 id="zones a=5 b=5 c=3, maxSkew 1: spread allows only c, c is full"),
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 1}, full="abc"),
                 "0/3 nodes are available: 3 Insufficient cpu.",
                 ALLOWED_DOMAINS_BLOCKED, ["a", "b", "c"], set(),
                 id="zones 1/1/1 all full: blocked only by capacity"),
    pytest.param(lambda: zoned({"a": 2, "b": 1}, full="b"),
                 f"0/2 nodes are available: 1 Insufficient cpu, 1 {SPREAD}.",
                 ALLOWED_DOMAINS_BLOCKED, ["b"], set(),
                 id="spread refuses a, capacity refuses b: blocked by both in different domains"),
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 0}, cordoned="c"),
                 f"0/3 nodes are available: 1 node(s) were unschedulable, 2 {SPREAD}.",
                 ALLOWED_DOMAINS_BLOCKED, ["c"], {CORDONED_DOMAIN},
                 id="zone c cordoned with 0 pods: globalMin 0, a and b refuse"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, constraint=make_constraint(min_domains=3)),
                 f"0/2 nodes are available: 2 {SPREAD}.",
                 NO_DOMAIN_ALLOWED, [], {MIN_DOMAINS_UNREACHABLE},
                 id="minDomains 3 over 2 zones holding 1 each: no domain allowed"),
    pytest.param(_pinned_pv_cluster,
                 f"0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 {SPREAD}.",
                 ALLOWED_DOMAINS_BLOCKED, ["b"], {VOLUME_PINNING},
                 id="bound PV pins zone a, spread allows only b"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, full="ab", extra_nodes=[zone_node("x0", None)]),
                 f"0/3 nodes are available: 1 {MISSING}, 2 Insufficient cpu.",
                 ALLOWED_DOMAINS_BLOCKED, ["a", "b"], {MISSING_LABELS},
                 id="the only node with room lacks the zone label"),
    pytest.param(_two_constraints_cluster,
                 f"0/2 nodes are available: 2 {SPREAD}.",
                 SPREAD_NOT_BLOCKING, ["b"], set(),
                 id="zone allows only b, rack only r1 in a: blocked only by spread"),
]


@pytest.mark.parametrize("build, message, code, allowed, traps", CASES)
def test_blocked_pod_scenarios(build, message, code, allowed, traps):
    snap, pod = build()
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    assert not r.schedulable and r.fit_nodes == []
    assert r.message.split(" no new claims")[0].split(" preemption:")[0] == message
    first = r.constraints[0]
    assert first.summary.code == code
    assert [d.value for d in first.domains if d.allowed] == allowed
    assert {t.code for t in first.traps} == traps


def test_every_filter_is_recorded_even_after_the_first():
    """c0 is full and spread would refuse it too once c held the most pods: both failures listed."""
    snap, pod = zoned({"a": 1, "b": 1, "c": 3}, full="c")
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    c0 = next(v for v in r.verdicts if v.node == "c0")
    assert [f.plugin for f in c0.failures] == ["NodeResourcesFit", "PodTopologySpread"]
    assert c0.first.reason == "Insufficient cpu"


def test_missing_label_node_is_unresolvable():
    snap, pod = zoned({"a": 1}, extra_nodes=[zone_node("x0", None)])
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    x0 = next(v for v in r.verdicts if v.node == "x0")
    assert (x0.status, x0.first.reason) == ("UnschedulableAndUnresolvable", MISSING)


def test_intersection_lists_allowed_nodes_that_pass_everything_else():
    snap, pod = zoned({"a": 2, "b": 1, "c": 1}, full="c")
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    c = r.constraints[0]
    assert r.schedulable and r.fit_nodes == ["b0"]
    assert c.summary.code == SPREAD_NOT_BLOCKING and c.candidates == ("b0",)
    rows = {d.value: (d.pods, d.skew_if_placed, d.allowed, d.fit_nodes) for d in c.domains}
    assert rows == {"a": (2, 2, False, ("a0",)), "b": (1, 1, True, ("b0",)), "c": (1, 1, True, ())}
    assert r.suggestions == []  # a pod that fits needs no fix


def _with_live(snap, pod, *, condition=None, events=()):
    if condition is not None:
        pod2 = replace(pod, conditions=(PodCondition("PodScheduled", "False", "Unschedulable", condition,
                                                     "2026-01-01T00:00:10Z"),))
        snap = replace(snap, pods=tuple(pod2 if p.key == pod.key else p for p in snap.pods))
        pod = pod2
    return replace(snap, events=tuple(events)), pod


def _event(msg, when, name="web-new"):
    return Event("default", "Pod", name, "FailedScheduling", msg, last_seen=when)


LIVE = [
    pytest.param({}, None, None, [], id="no condition, no event: nothing to compare"),
    pytest.param({"condition": "{same}"}, True, True, [], id="condition identical byte for byte"),
    pytest.param({"events": [_event("0/9 nodes are available: 9 Insufficient cpu.", "2026-01-01T00:00:01Z"),
                             _event("{same}", "2026-01-01T00:00:05Z"),
                             _event("{same}", "2026-01-01T00:00:09Z", name="other-pod")]},
                 True, True, [], id="latest FailedScheduling event of this pod is used"),
    pytest.param({"condition": "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match "
                               "pod topology spread constraints."},
                 True, False, [], id="same counts without the PostFilter text: agree, not exact"),
    pytest.param({"condition": "0/4 nodes are available: 4 Insufficient cpu."}, False, False,
                 [CAUSE_STALE_MESSAGE], id="another node count: stale message"),
    pytest.param({"condition": "0/3 nodes are available: 3 Insufficient memory."}, False, False,
                 [CAUSE_UNSEEN_PROFILE], id="same node count, other reasons, nothing else known: unseen profile"),
]


@pytest.mark.parametrize("live, agree, exact, causes", LIVE)
def test_live_message_comparison(live, agree, exact, causes):
    snap, pod = zoned({"a": 1, "b": 1, "c": 0}, cordoned="c")
    rebuilt = explain_pending(index_of(snap), pod, with_fixes=False).message
    fill = {k: (v.replace("{same}", rebuilt) if isinstance(v, str) else
                [replace(e, message=e.message.replace("{same}", rebuilt)) for e in v]) for k, v in live.items()}
    snap, pod = _with_live(snap, pod, **fill)
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    assert (r.agree, r.exact, r.causes) == (agree, exact, causes)


def test_old_taint_spelling_agrees():
    snap, pod = zoned({"a": 1}, extra_nodes=[zone_node("t0", "a", taints=["gpu=yes:NoSchedule"])],
                      full="a")
    old = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had taints that the pod didn't tolerate."
    snap, pod = _with_live(snap, pod, condition=old)
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    assert r.message.startswith("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).")
    assert (r.agree, r.exact) == (True, False)


@pytest.mark.parametrize("change, cause", [
    pytest.param({"scheduler_name": "batch-scheduler"}, CAUSE_OTHER_SCHEDULER, id="other schedulerName"),
    pytest.param({"nominated_node": "a0"}, CAUSE_NOMINATED_NODE, id="nominated node"),
])
def test_disagreement_causes_from_the_pod(change, cause):
    snap, pod = zoned({"a": 1, "b": 1})
    snap, pod = zoned({"a": 1, "b": 1}, full="ab", pod_kw=change)
    snap, pod = _with_live(snap, pod, condition="0/2 nodes are available: 2 Insufficient memory.")
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    assert r.agree is False and r.causes[0] == cause


def test_explain_pods_separates_pods_that_are_not_pending():
    snap, pod = zoned({"a": 2, "b": 1}, full="b")
    running = next(p for p in snap.pods if p.name == "web-a0")
    out = explain_pods(index_of(snap), [running, pod], with_fixes=False)
    assert [n.pod.name for n in out.not_pending] == ["web-a0"]
    assert [r.pod.name for r in out.reports] == ["web-new"] and out.any_unschedulable


def test_the_one_sentence_for_a_full_allowed_zone():
    from kubectl_tspread.render.pending import summary_text

    snap, pod = zoned({"a": 5, "b": 5, "c": 3}, full="c", nodes_per_zone=3)
    r = explain_pending(index_of(snap), pod, with_fixes=False)
    assert summary_text(r.constraints[0].summary) == (
        "Spread allows only zone c (a=5 b=5 c=3, maxSkew 1); zone c's 3 nodes are full (Insufficient cpu); "
        "nodes that pass the other filters are only in zones a and b, which spread forbids.")


def test_pending_domain_code_imports_no_ui_or_client_library():
    import subprocess
    import sys

    code = ("import sys, kubectl_tspread.views.pending, kubectl_tspread.views.fixes; "
            "print(sorted(m for m in ('click', 'rich', 'kubernetes') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
