"""Fixes: each kind shown (verified) where it works and absent where it does not; every verified
fix re-checked independently; cheapest first."""

from __future__ import annotations

import pytest

from conftest import make_constraint, make_pod
from kubectl_tspread.views import fixes
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.views.fixes_nodes import ADD_NODE, DELETE_NODES, EVICT_LOWER_PRIORITY, LABEL_NODES, UNCORDON
from kubectl_tspread.model import IGNORE, PersistentVolumeClaim, Volume
from kubectl_tspread.views.pending import explain_pending
from pending_cases import index_of, zone_node, zoned

HUGE = {"cpu": 64000}  # more than any node has: nothing can make room


def _suggestions(snap, pod):
    r = explain_pending(index_of(snap), pod)
    return r, {s.action: s for s in reversed(r.suggestions)}  # first of each kind wins


WORKS = [
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 0}, cordoned="c"), UNCORDON, {"node": "c0"},
                 id="uncordon c0 of the cordoned empty zone"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, full="ab", extra_nodes=[zone_node("x0", None)]), LABEL_NODES,
                 {"nodes": ["x0"], "labels": {"x0": {"topology.kubernetes.io/zone": "a"}}, "guessed": True},
                 id="label the unlabelled node with room"),
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 0}, cordoned="c"), DELETE_NODES,
                 {"topologyKey": "topology.kubernetes.io/zone", "domains": ["c"], "nodes": ["c0"], "autoscalers": []},
                 id="delete the Node objects of drained zone c"),
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 0}, cordoned="c"), fixes.SET_NODE_TAINTS_POLICY_HONOR,
                 {"topologyKey": "topology.kubernetes.io/zone", "position": 0},
                 id="nodeTaintsPolicy Honor drops the cordoned zone"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, constraint=make_constraint(min_domains=3)),
                 fixes.LOWER_MIN_DOMAINS,
                 {"topologyKey": "topology.kubernetes.io/zone", "position": 0, "old": 3, "minDomains": 2},
                 id="minDomains 3 lowered to the 2 zones that exist"),
    pytest.param(lambda: zoned({"a": 5, "b": 5, "c": 3}, full="c"), fixes.RAISE_MAX_SKEW,
                 {"topologyKey": "topology.kubernetes.io/zone", "position": 0, "old": 1, "maxSkew": 3},
                 id="a=5 b=5 c=3 c full: maxSkew 3 is the smallest that works"),
    pytest.param(lambda: zoned({"a": 2, "b": 1}, full="b", pod_kw={"priority": 100}), EVICT_LOWER_PRIORITY,
                 {"node": "b0", "pods": ["filler-b0"], "podKeys": ["default/filler-b0"], "priorities": [0], "priority": 100},
                 id="evict the priority-0 filler from b0"),
    pytest.param(lambda: zoned({"a": 5, "b": 5, "c": 3}, full="c"), ADD_NODE,
                 {"topologyKey": "topology.kubernetes.io/zone", "domain": "c", "like": "c0", "name": "c0-new",
                  "requests": {"cpu": 500}},
                 id="add a node like c0 in zone c"),
    pytest.param(lambda: zoned({"a": 2, "b": 1}, full="b"), fixes.SCHEDULE_ANYWAY_ACTION,
                 {"topologyKey": "topology.kubernetes.io/zone", "position": 0, "maxSkew": 1},
                 id="ScheduleAnyway lets the pod into zone a"),
]


@pytest.mark.parametrize("build, action, params", WORKS)
def test_fix_is_proposed_and_verified_where_it_works(build, action, params):
    snap, pod = build()
    r, by_action = _suggestions(snap, pod)
    assert not r.schedulable
    assert action in by_action, [s.action for s in r.suggestions]
    s = by_action[action]
    assert s.verified and s.nodes and s.params == params


ABSENT = [
    pytest.param(lambda: zoned({"a": 2, "b": 1}, cordoned="b", full="b"), UNCORDON,
                 id="uncordoning b0 does not help: it is full too"),
    pytest.param(lambda: zoned({"a": 1}, full="a", extra_nodes=[zone_node("x0", None)], pod_kw={"requests": HUGE}),
                 LABEL_NODES, id="labelling does not help a pod larger than every node"),
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 0}, cordoned="c", full="ab"), DELETE_NODES,
                 id="deleting drained zone c does not help when a and b are full"),
    pytest.param(lambda: zoned({"a": 1, "b": 1, "c": 0}, cordoned="c", full="ab"), fixes.SET_NODE_TAINTS_POLICY_HONOR,
                 id="Honor does not help when the remaining zones are full"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, full="ab", constraint=make_constraint(min_domains=3)),
                 fixes.LOWER_MIN_DOMAINS, id="minDomains is not the problem when every node is full"),
    pytest.param(lambda: zoned({"a": 2, "b": 1}, full="ab"), fixes.RAISE_MAX_SKEW,
                 id="raising maxSkew does not help when every node is full"),
    pytest.param(lambda: zoned({"a": 2, "b": 1}, full="b", filler_priority=100, pod_kw={"priority": 100}),
                 EVICT_LOWER_PRIORITY, id="no lower-priority pod to evict: filler has the same priority"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, full="ab", pod_kw={"requests": HUGE}), ADD_NODE,
                 id="a node like the others cannot hold 64 cpu"),
    pytest.param(lambda: zoned({"a": 1, "b": 1}, full="ab"), fixes.SCHEDULE_ANYWAY_ACTION,
                 id="ScheduleAnyway does not help when capacity blocks everywhere"),
]


@pytest.mark.parametrize("build, action", ABSENT)
def test_fix_is_absent_where_it_does_not_work(build, action):
    snap, pod = build()
    r, by_action = _suggestions(snap, pod)
    assert not r.schedulable
    assert action not in by_action


def test_nothing_works_says_so_with_every_tried_action():
    # a claim that does not exist rejects the pod before any node: no node change helps
    snap, pod = zoned({"a": 1, "b": 1}, full="ab", pod_kw={"volumes": (Volume("data", pvc="gone"),)},
                      pvcs=[PersistentVolumeClaim("default", "other", volume_name="pv-1")])
    r = explain_pending(index_of(snap), pod)
    assert r.suggestions == []
    assert ADD_NODE in r.tried and fixes.RAISE_MAX_SKEW not in r.tried  # maxSkew: no candidate values


SCENARIOS = [p for p in WORKS] + [
    pytest.param(lambda: zoned({"a": 3, "b": 1, "c": 0}, cordoned="c", full="b", pod_kw={"priority": 5}),
                 None, None, id="cordoned c, full b, priority 5: many kinds at once"),
]


@pytest.mark.parametrize("build, _action, _params", SCENARIOS)
def test_every_verified_fix_really_schedules_the_pod_and_cheapest_come_first(build, _action, _params):
    snap, pod = build()
    index = index_of(snap)
    verdicts = filters.evaluate(index, pod)
    state = spread.compute(index, pod)
    found, _ = fixes.propose_fixes(index, pod, verdicts, state)
    assert found
    assert [fixes.cost(s) for s in found] == sorted(map(fixes.cost, found))
    candidates = [c for _a, group in fixes._candidate_groups(index, pod, verdicts, state) for c in group]
    for s in found:
        cand = next(c for c in candidates if c.action == s.action and c.params == s.params)
        changed = cand.apply(snap)
        assert fixes.schedulable_nodes(changed, pod.key) == s.nodes
        assert snap.nodes == index.snapshot.nodes  # the original snapshot is untouched


def test_constraint_edits_change_only_the_pending_pod():
    snap, pod = zoned({"a": 2, "b": 1}, full="b")
    apply = fixes.with_constraint(pod, 0, node_taints_policy="Honor")
    changed = apply(snap)
    assert next(p for p in changed.pods if p.key == pod.key).spread[0].node_taints_policy == "Honor"
    assert pod.spread[0].node_taints_policy == IGNORE
    assert [p for p in changed.pods if p.key != pod.key] == [p for p in snap.pods if p.key != pod.key]


def test_hostname_spread_adds_a_node_without_a_zone():
    host = make_constraint(key="kubernetes.io/hostname")
    snap, pod = zoned({"a": 1, "b": 1}, full="ab", constraint=host)
    r = explain_pending(index_of(snap), pod)
    add = next(s for s in r.suggestions if s.action == ADD_NODE)
    assert add.params["domain"] is None and add.params["topologyKey"] is None


def test_evicts_lowest_priority_first_and_stops_once_there_is_room():
    low = [make_pod(name, node="b0", requests={"cpu": cpu}, priority=prio)
           for name, cpu, prio in (("low-0", 200, 3), ("low-1", 200, 0), ("low-2", 1400, 1))]
    snap, pod = zoned({"a": 2, "b": 1}, pod_kw={"priority": 10}, extra_pods=low)
    r = explain_pending(index_of(snap), pod)
    evict = next(s for s in r.suggestions if s.action == EVICT_LOWER_PRIORITY)
    # b0 holds 1900m of 2000m and the pod needs 500m: priority 0, then 1 covers it; low-0 stays
    assert evict.params["pods"] == ["low-1", "low-2"] and evict.nodes == ("b0",)
