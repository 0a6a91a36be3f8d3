"""What-if verification: a patched index view, the incremental fit and spread partitions derived
for changed nodes agree with re-indexing the changed snapshot and running every filter, for every
candidate fix (working or not), on random clusters; the original index is left as it was."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views import fixes, whatif
from kubectl_tspread.engine import filters, partition, resources, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HOSTNAME_KEY, ZONE_KEY, HostPort, PodAffinityTerm, Taint, Toleration
from pending_cases import zoned

KEYS = (ZONE_KEY, HOSTNAME_KEY, "rack")
WEB_ANTI = PodAffinityTerm(Selector.from_api({"matchLabels": {"app": "web"}}), HOSTNAME_KEY)


@st.composite
def clusters(draw):
    """2-6 nodes (zone a/b/c or none, maybe a rack, cordoned, tainted, small), web pods and
    fillers of random priority (some with a host port or anti-affinity against web), and a
    Pending web pod with 1-2 constraints, maybe a priority, a host port, a toleration, a
    nodeSelector or anti-affinity of its own."""
    nodes = []
    for i in range(draw(st.integers(2, 6))):
        labels = {"rack": f"r{draw(st.integers(1, 2))}"} if draw(st.booleans()) else {}
        zone = draw(st.sampled_from(["a", "b", "c", None]))
        taints = [Taint("dedicated", "infra")] if draw(st.integers(0, 4)) == 0 else []
        cpu = draw(st.sampled_from([1000, 2000, 4000]))
        nodes.append(make_node(f"n{i}", zone=zone, labels=labels, taints=taints,
                               unschedulable=draw(st.integers(0, 4)) == 0,
                               allocatable={"cpu": cpu, "memory": 8 << 30, "pods": draw(st.sampled_from([3, 110]))}))
    pods = []
    for k in range(draw(st.integers(0, 12))):
        kw = {}
        if draw(st.integers(0, 6)) == 0:
            kw["host_ports"] = (HostPort(8080),)
        if draw(st.integers(0, 6)) == 0:
            kw["pod_anti_affinity"] = (WEB_ANTI,)
        app = draw(st.sampled_from(["web", "web", "filler"]))
        pods.append(make_pod(f"{app}-{k}", node=draw(st.sampled_from(nodes)).name, labels={"app": app},
                             requests={"cpu": draw(st.sampled_from([100, 500, 1500]))},
                             priority=draw(st.sampled_from([0, 0, 10])),
                             terminating=draw(st.integers(0, 8)) == 0, **kw))
    constraints = [make_constraint(key=draw(st.sampled_from(KEYS)), max_skew=draw(st.integers(1, 2)),
                                   mode=draw(st.sampled_from(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"])),
                                   min_domains=draw(st.integers(1, 4)),
                                   node_taints_policy=draw(st.sampled_from(["Honor", "Ignore"])))
                   for _ in range(draw(st.integers(1, 2)))]
    kw = {"priority": draw(st.sampled_from([0, 5, 100]))}
    if draw(st.booleans()):
        kw["tolerations"] = (Toleration("dedicated", "Exists"),)
    if draw(st.integers(0, 3)) == 0:
        kw["host_ports"] = (HostPort(8080),)
    if draw(st.integers(0, 3)) == 0:
        kw["node_selector"] = {"rack": "r1"}
    if draw(st.integers(0, 4)) == 0:
        kw["pod_anti_affinity"] = (WEB_ANTI,)
    pending = make_pod("web-new", labels={"app": "web"}, spread=constraints,
                       requests={"cpu": draw(st.sampled_from([500, 1500, 3000]))}, **kw)
    return make_snapshot(nodes, pods + [pending]), pending


def _tables(index: ClusterIndex) -> dict:
    """Every list of the index as sorted pod keys (views may order pods differently)."""
    out = {"nodes": sorted((n.name, repr(n)) for n in index.nodes.values())}
    for name in ("pods_by_node", "pods_by_namespace", "_by_label", "anti_affinity_by_node"):
        out[name] = {k: sorted(repr(p) for p in v) for k, v in getattr(index, name).items() if v}
    return out


def _check_every_candidate(snap, pod):
    index = ClusterIndex(snap)
    partitions: dict = {}  # filled here, so that fixes changing nodes derive theirs from it
    state = spread.compute(index, pod, partitions=partitions)
    verdicts = filters.evaluate(index, pod, spread_state=state)
    before = _tables(index)
    base = whatif.Baseline.of(index, pod, verdicts, partitions)
    checked = 0
    for _action, group in fixes._candidate_groups(index, pod, verdicts, state):
        for cand in group:
            change = cand.apply
            assert isinstance(change, whatif.Change)
            changed = change(snap)
            reference = fixes.schedulable_nodes(changed, pod.key)
            assert whatif.fit_nodes(base, change) == reference, cand
            view, _touched = change.patch(index)
            assert view.snapshot == changed  # made on first read
            fresh = ClusterIndex(changed)
            assert _tables(view) == _tables(fresh), cand
            assert {n: resources.node_usage(view, n) for n in view.nodes} == \
                {n: resources.node_usage(fresh, n) for n in fresh.nodes}, cand
            checked += 1
    assert _tables(index) == before  # views copy what they change
    return checked


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_random_clusters_what_if_fit_matches_reindexing(case):
    snap, pod = case
    for n in snap.nodes:  # node usage cached before the candidates must not leak into views
        resources.node_usage(ClusterIndex(snap), n.name)
    _check_every_candidate(snap, pod)


def test_fixed_scenario_checks_several_kinds():
    snap, pod = zoned({"a": 3, "b": 1, "c": 0}, cordoned="c", full="b", pod_kw={"priority": 5})
    assert _check_every_candidate(snap, pod) >= 4


def test_view_writes_copy_and_leave_the_parent_alone():
    snap, pod = zoned({"a": 1, "b": 1})
    index = ClusterIndex(snap)
    a_pods = list(index.pods_by_node["a0"])
    usage = resources.node_usage(index, "a0")
    view = index.patched(snap)
    view.add_pod(make_pod("extra", node="a0", labels={"app": "web"}, requests={"cpu": 300}))
    assert index.pods_by_node["a0"] == a_pods and resources.node_usage(index, "a0") == usage
    assert resources.node_usage(view, "a0").requested["cpu"] == usage.requested["cpu"] + 300
    view.remove_pod(a_pods[0])
    assert index.pods_by_node["a0"] == a_pods


def test_node_usage_follows_add_and_remove_and_excludes_the_asked_pod():
    snap, _ = zoned({"a": 2})
    index = ClusterIndex(snap)
    first = index.pods_by_node["a0"][0]
    assert resources.node_usage(index, "a0").pods == 2
    assert resources.node_usage(index, "a0", exclude=first.key).pods == 1
    index.remove_pod(first)
    assert resources.node_usage(index, "a0").pods == 1
    index.add_pod(first)
    assert resources.node_usage(index, "a0").pods == 2


def test_derived_partitions_equal_fresh_ones(monkeypatch):
    snap, pod = zoned({"a": 2, "b": 1, "c": 1}, cordoned="c", nodes_per_zone=2,
                      constraint=make_constraint(node_taints_policy="Honor"))
    index = ClusterIndex(snap)
    parent: dict = {}
    spread.compute(index, pod, partitions=parent)
    change = whatif.Change(nodes=(index.nodes["c0"].uncordoned(), make_node("d0", zone="d")),
                           removed_nodes=frozenset({"a1"}))
    changed = change(snap)
    view, _ = change.patch(index, changed)
    fresh = spread.compute(ClusterIndex(changed), pod)
    judged = []
    real = partition._judge
    monkeypatch.setattr(partition, "_judge", lambda *a: judged.append(list(a[-1])) or real(*a))
    derived = spread.DerivedPartitions(parent, {"c0", "d0", "a1"})
    assert spread.compute(view, pod, partitions=derived) == fresh
    assert judged == [["c0", "d0"]]  # only the changed nodes still there were judged again


@pytest.mark.parametrize("policy, relabel", [
    pytest.param("Ignore", False, id="uncordon under nodeTaintsPolicy Ignore: c0 stays in zone c"),
    pytest.param("Honor", True, id="a label added to cordoned c0 under Honor: c0 stays excluded"),
])
def test_a_partition_no_changed_node_moves_is_the_parents(policy, relabel):
    snap, pod = zoned({"a": 1, "b": 1, "c": 0}, cordoned="c", constraint=make_constraint(node_taints_policy=policy))
    index = ClusterIndex(snap)
    parent: dict = {}
    before = spread.compute(index, pod, partitions=parent)
    c0 = index.nodes["c0"]
    changed = replace(c0, labels={**c0.labels, "extra": "1"}) if relabel else c0.uncordoned()
    view, _ = whatif.Change(nodes=(changed,)).patch(index)
    after = spread.compute(view, pod, partitions=spread.DerivedPartitions(parent, {"c0"}))
    assert after.constraints[0].node_domain is before.constraints[0].node_domain
    assert after == spread.compute(ClusterIndex(view.snapshot), pod)
