"""The SetNodeTaintsPolicyHonor re-plan carried along by the plan (views/drain/core/shared.py): it must answer
what the re-plan from scratch answers (the plan's findings and remedies equal the in-process
plan's, whose re-plans always start from scratch), and on a zone trap it must take over the
plan's world late, not start from the beginning.

Only a plan with staged cordons (--stage-cordons) carries it: with every target cordoned at
step 1, Honor leaves the pods still running on them out of the counts from the first step on,
so the re-plan reads the constraint differently at every level (the last test here)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot, make_workload
from kubectl_tspread.views.drain.core import shared
from kubectl_tspread.model.plan import PlanOptions
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.engine import spread
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HOSTNAME_KEY, IGNORE, ZONE_KEY, Pdb, Taint, Toleration
from forking import gone, no_fork_plan

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")

APPS = ("web", "api")
WORKLOADS = [make_workload("ReplicaSet", f"{a}-1", {"app": a}) for a in APPS] + [
    make_workload("ReplicaSet", f"canary-{a}", {"app": a}) for a in APPS]
GPU = Taint("dedicated", "gpu", "NoSchedule")
CORDON = Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
STAGED = PlanOptions(stage_cordons=True)  # the only plans that carry the re-plan (see above)


def _node(name: str, zone: str, pods: int, taints=()):
    return make_node(name, zone=zone, taints=taints, allocatable={"cpu": 8000, "memory": 16 * GI, "pods": pods})


def _trap(b_nodes: int = 4, spare: int = 4, per_node: int = 1, pdb: int | None = None, gpu: bool = False,
          max_skew: int = 1, tolerate_cordon: bool = False, canary: bool = False):
    """Zones a, b, c of `b_nodes` nodes; each node holds `per_node` pods of web and of api
    (zone spread, DoNotSchedule, nodeTaintsPolicy Ignore) and b's nodes have no room left,
    a's and c's `spare` pods more: draining zone b strands replacements from its first step
    (they may only go to b, the zone at the minimum), and forced.py proves it for both
    workloads. `gpu` adds a tainted node to each zone that neither tolerates; `pdb`, a
    budget for web that splits a node's evictions into steps; `canary`, on b1, pods of other
    workloads that web's and api's selectors count and that tolerate the gpu taint."""
    nodes, pods = [], []
    for z in "abc":
        for i in range(1, b_nodes + 1):
            cap = 2 * per_node + (0 if z == "b" else spare) + (len(APPS) if canary and f"{z}{i}" == "b1" else 0)
            nodes.append(_node(f"{z}{i}", z, cap))
            for app in APPS:
                for k in range(per_node):
                    tolerations = (CORDON,) if tolerate_cordon and app == "web" else ()
                    pods.append(make_pod(f"{app}-{z}{i}-{k}", node=f"{z}{i}", labels={"app": app},
                                         owner=f"ReplicaSet/{app}-1", tolerations=tolerations,
                                         spread=[make_constraint(ZONE_KEY, max_skew=max_skew, selector={"app": app},
                                                                 node_taints_policy=IGNORE)]))
        if gpu:
            nodes.append(_node(f"{z}-gpu", z, 8, taints=(GPU,)))
    if canary:
        pods += [make_pod(f"canary-{app}", node="b1", labels={"app": app}, owner=f"ReplicaSet/canary-{app}",
                          tolerations=(Toleration("dedicated", "Equal", "gpu", "NoSchedule"),)) for app in APPS]
    pdbs = [Pdb("default", "web", Selector.from_api({"matchLabels": {"app": "web"}}), disruptions_allowed=pdb)] \
        if pdb is not None else []
    targets = [n.name for n in nodes if n.labels[ZONE_KEY] == "b"]
    return make_snapshot(nodes, pods, workloads=WORKLOADS, pdbs=pdbs), targets


def _watch_arm(monkeypatch) -> list:
    """What each call of shared.arm answered (a Sharer, or None where the checks refused)."""
    armed, real = [], shared.arm

    def arm(*args):
        armed.append(real(*args))
        return armed[-1]

    monkeypatch.setattr(shared, "arm", arm)
    return armed


def _carried(results):
    """The verdicts of carried re-plans that were used: (steps taken over, verdict)."""
    return [(v.carried, v) for _, v in results if v is not None and v.carried is not None]


@pytest.mark.parametrize("kw", [
    pytest.param({}, id="one pod per node"),
    pytest.param({"gpu": True}, id="a tainted node in each zone that the workloads do not tolerate"),
    pytest.param({"per_node": 2, "pdb": 1}, id="a budget of one: each node takes two steps"),
    pytest.param({"b_nodes": 6, "max_skew": 2}, id="maxSkew 2"),
])
def test_the_honor_replan_is_carried_to_the_last_level(kw, forks, results):
    snap, targets = _trap(**kw)
    forked = plan_drain(snap, targets, STAGED, workers=forks)
    assert not forked.safe and forked.stranded[0].step < forked.steps[-1].number
    carried = _carried(results)
    assert len(carried) == 1, "the SetNodeTaintsPolicyHonor re-plan was not carried"
    # handed over at the start of the level that cordons zone b's last node (its steps are
    # the plan's last; with a budget of one a node takes several)
    last_level = [s for s in forked.steps if s.nodes == forked.steps[-1].nodes]
    assert carried[0][0] == len(forked.steps) - len(last_level)
    assert all(gone(c.pid) for c in forks.started)
    in_process = no_fork_plan(snap, targets, STAGED)
    assert repr(forked.findings) == repr(in_process.findings)
    assert repr(forked.steps) == repr(in_process.steps) and repr(forked.stranded) == repr(in_process.stranded)
    assert any(r.action == "SetNodeTaintsPolicyHonor" for f in forked.findings for r in f.remedies)


# found by a random search: web's replacements wait Pending from the first level on, and a
# later level's batch cordons web pods in b before evicting them, which under Honor would
# leave b at the minimum (so b accepts web under Honor and not under Ignore)
WINDOW_NODES = {"a1": 4, "a2": 5, "a3": 4, "a4": 4, "a5": 5, "b1": 2, "b2": 2, "b3": 1, "b4": 3, "b5": 1,
                "c1": 3, "c2": 4, "c3": 5, "c4": 2, "c5": 5}
WINDOW_PODS = [("web", "a1", 1), ("web", "a1", 2), ("api", "a1", 1), ("web", "a2", 1), ("web", "a2", 2),
               ("api", "a2", 1), ("api", "a2", 2), ("web", "a3", 2), ("api", "a3", 2), ("api", "a3", 2),
               ("web", "a4", 2), ("web", "a4", 1), ("api", "a4", 1), ("api", "a4", 1), ("web", "a5", 2),
               ("web", "a5", 1), ("api", "a5", 2), ("web", "b1", 1), ("web", "b1", 1), ("api", "b2", 2),
               ("api", "b2", 1), ("web", "b3", 1), ("web", "b4", 1), ("web", "b4", 2), ("api", "b4", 1),
               ("web", "b5", 2), ("web", "c1", 1), ("api", "c2", 1), ("web", "c3", 2), ("web", "c3", 2),
               ("api", "c3", 2), ("api", "c4", 2), ("api", "c4", 1), ("web", "c5", 1)]


def test_a_retry_that_honor_would_read_otherwise_hands_over_that_level(forks, results, monkeypatch):
    nodes = [_node(n, n[0], cap) for n, cap in WINDOW_NODES.items()]
    nodes += [_node(f"{z}-gpu", z, 8, taints=(GPU,)) for z in "bc"]
    pods = [make_pod(f"{app}-{node}-{i}", node=node, labels={"app": app}, owner=f"ReplicaSet/{app}-1",
                     spread=[make_constraint(ZONE_KEY, max_skew=skew, selector={"app": app}, node_taints_policy=IGNORE)])
            for i, (app, node, skew) in enumerate(WINDOW_PODS)]
    snap = make_snapshot(nodes, pods, workloads=WORKLOADS)
    targets = [n.name for n in nodes if n.labels[ZONE_KEY] == "b"]
    diverged, fork = [], shared.Sharer.fork

    def watched(self, world):
        diverged.append(self.diverged)
        return fork(self, world)

    monkeypatch.setattr(shared.Sharer, "fork", watched)
    options = PlanOptions(max_parallel=2, stage_cordons=True)
    forked = plan_drain(snap, targets, options, workers=forks)
    carried = _carried(results)
    assert diverged == [True] and len(carried) == 1
    assert carried[0][0] < len(forked.steps) - 1  # handed over before the last level
    in_process = no_fork_plan(snap, targets, options)
    assert repr(forked.findings) == repr(in_process.findings)
    assert repr(forked.stranded) == repr(in_process.stranded)


@pytest.mark.parametrize("kw, why", [
    pytest.param({"tolerate_cordon": True}, "web tolerates the cordon: its replacements may land on drained nodes",
                 id="tolerates the cordon"),
    pytest.param({"b_nodes": 1}, "the first stranding's level cordons zone b's only node", id="one node in b"),
    pytest.param({"gpu": True, "canary": True}, "a pod the constraint counts may land on a gpu node, which Honor "
                 "leaves out", id="a counted pod tolerates what the workload does not"),
])
def test_no_carrying_when_the_checks_fail(kw, why, forks, results, monkeypatch):
    snap, targets = _trap(**kw)
    armed = _watch_arm(monkeypatch)  # the checks at the first stranding refuse it already
    forked = plan_drain(snap, targets, STAGED, workers=forks)
    assert all(sharer is None for sharer in armed), why
    assert armed or kw.get("tolerate_cordon"), "the checks were not asked"  # web's, forced.py leaves out
    assert not _carried(results) and forks.started, why  # re-planned in children, from scratch
    in_process = no_fork_plan(snap, targets, STAGED)
    assert repr(forked.findings) == repr(in_process.findings)


@pytest.mark.parametrize("kw", [pytest.param({}, id="one pod per node"),
                                pytest.param({"gpu": True}, id="a tainted node in each zone")])
def test_a_plan_with_the_cordons_first_carries_nothing(kw, forks, results, monkeypatch):
    """With every target cordoned at step 1, Honor leaves the pods still on b's nodes out of
    the counts from the first step, Ignore counts them until their own step: the checks refuse
    the carry at once, and the re-plan from scratch gives the in-process answer (which the
    staged plan of the same trap carries: test_the_honor_replan_is_carried_to_the_last_level)."""
    snap, targets = _trap(**kw)
    armed = _watch_arm(monkeypatch)
    forked = plan_drain(snap, targets, workers=forks)
    assert armed and all(sharer is None for sharer in armed)
    assert not _carried(results) and forks.started
    assert forked.steps[0].cordon == tuple(targets) and not forked.safe
    in_process = no_fork_plan(snap, targets)
    assert repr(forked.findings) == repr(in_process.findings)
    assert any(r.action == "SetNodeTaintsPolicyHonor" for f in forked.findings for r in f.remedies)


def test_a_hostname_constraint_is_not_carried(forks, results):
    """Under Honor a cordoned node is no hostname domain at once: the two differ from the
    first cordon."""
    nodes = [_node(f"{z}{i}", z, 1) for z in "abc" for i in (1, 2)]
    pods = [make_pod(f"web-{n.name}", node=n.name, labels={"app": "web"}, owner="ReplicaSet/web-1",
                     spread=[make_constraint(HOSTNAME_KEY, selector={"app": "web"}, node_taints_policy=IGNORE)])
            for n in nodes]
    snap = make_snapshot(nodes, pods, workloads=WORKLOADS[:1])
    forked = plan_drain(snap, ["b1", "b2"], STAGED, workers=forks)
    assert not _carried(results) and forks.started
    assert repr(forked.findings) == repr(no_fork_plan(snap, ["b1", "b2"], STAGED).findings)


def test_accepting_takes_the_held_pods_out_of_the_counts():
    """A retry between a cordon and its evictions: 2 of web's pods sit on a cordoned node of
    b. Under Ignore the counts are a 3, b 3, c 2 (only c accepts at maxSkew 1); under Honor
    a 3, b 1, c 2 (only b accepts)."""
    nodes = [_node(n, n[0], 8) for n in ("a1", "b1", "b2", "c1")]
    pods = [make_pod(f"web-{i}", node=n, labels={"app": "web"}) for i, n in
            enumerate(["a1", "a1", "a1", "b1", "b1", "b2", "c1", "c1"])]
    from kubectl_tspread.engine.index import ClusterIndex
    probe = make_pod("probe", labels={"app": "web"}, spread=[make_constraint(selector={"app": "web"})])
    cs = spread.compute(ClusterIndex(make_snapshot(nodes, pods)), probe).constraints[0]
    assert shared._accepting(cs, {}) == ["c"]
    assert shared._accepting(cs, {"b": 2}) == ["b"]
    assert shared._accepting(cs, {"a": 1}) == ["a", "c"]  # a 2, b 3, c 2: a accepts too


def test_kept_needs_a_lasting_open_node_or_more_than_a_batch():
    todo = {"b1", "b2", "b3"}
    assert shared._kept({"a": {"a1"}, "b": {"b1", "b2"}}, todo, 1)  # a1 is no target: a stays
    assert not shared._kept({"b": {"b3"}}, todo, 1)  # b's last open node may go in this level
    assert not shared._kept({"b": {"b1", "b2"}}, todo, 2)  # a batch of two may take both
    assert shared._kept({"b": {"b1", "b2", "b3"}}, todo, 2)
    assert not shared._kept({"b": set()}, todo, 1)  # gone already


@st.composite
def traps(draw):
    kw = {"b_nodes": draw(st.integers(2, 5)), "spare": draw(st.integers(0, 3)), "per_node": draw(st.integers(1, 2)),
          "gpu": draw(st.booleans()), "max_skew": draw(st.integers(1, 2))}
    if draw(st.booleans()):
        kw["pdb"] = draw(st.integers(1, 2))
    return kw, draw(st.integers(1, 2)), draw(st.booleans())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(case=traps())
def test_carried_or_not_the_answer_is_the_in_process_one(case, forks, results):
    kw, max_parallel, staged = case
    snap, targets = _trap(**kw)
    options = PlanOptions(max_parallel=max_parallel, stage_cordons=staged)
    before = len(forks.started)  # the fixture is the test's, shared by its examples
    forked = plan_drain(snap, targets, options, workers=forks)
    assert len(forks.started) > before
    in_process = plan_drain(snap, targets, options)
    assert repr(forked.findings) == repr(in_process.findings)
    assert repr(forked.stranded) == repr(in_process.stranded)
