"""Remedies are re-planned on forks of the untouched simulation (SimCluster.forked_to)
sharing the filter cache; the verdicts must equal re-planning each candidate snapshot
from scratch, and a fork must equal a simulation built fresh on the candidate."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot, make_workload
from drain_builders import nodes_in, web
from kubectl_tspread.model.plan import PlanOptions
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.views.drain.remedies import attach_remedies
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.engine import spread
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HONOR, HOSTNAME_KEY, IGNORE, Pdb

RS = make_workload("ReplicaSet", "web-1", {"app": "web"})


def _pdb(name, allowed):
    return Pdb("default", name, Selector.from_api({"matchLabels": {"app": "web"}}), disruptions_allowed=allowed)


SCENARIOS = [
    ("whole zone a under Ignore: cordoned-domain trap", make_snapshot(
        nodes_in({"a": 2, "b": 2, "c": 2}),
        web({"a1": 1, "a2": 1, "b1": 1, "b2": 1, "c1": 1, "c2": 1}, [make_constraint(node_taints_policy=IGNORE)]),
        workloads=[RS]), ["a1", "a2"]),
    ("hostname maxSkew 1, every node full", make_snapshot(
        nodes_in({"a": 3}), web({"a1": 1, "a2": 1, "a3": 1}, [make_constraint(HOSTNAME_KEY)]), workloads=[RS]),
     ["a1"]),
    ("no capacity for a 3000m pod", make_snapshot(
        nodes_in({"a": 2}), [make_pod("big-1", node="a1", labels={"app": "big"}, owner="ReplicaSet/big-1",
                                    requests={"cpu": 3000}),
                           make_pod("x", node="a2", labels={"app": "x"}, owner="ReplicaSet/x-1",
                                    requests={"cpu": 2000})]), ["a1"]),
    ("PDB allows 0 disruptions", make_snapshot(
        nodes_in({"a": 2}), web({"a1": 1, "a2": 1}, []), workloads=[RS], pdbs=[_pdb("web", 0)]), ["a1"]),
    ("pod under two PDBs", make_snapshot(
        nodes_in({"a": 2}), web({"a1": 1, "a2": 1}, []), workloads=[RS], pdbs=[_pdb("web", 1), _pdb("too", 1)]),
     ["a1"]),
]


@pytest.mark.parametrize("snap, targets", [(s, t) for _, s, t in SCENARIOS], ids=[i for i, _, _ in SCENARIOS])
def test_forked_remedies_equal_fresh_replans(snap, targets):
    plan = plan_drain(snap, targets)
    assert not plan.safe and any(f.remedies for f in plan.findings)
    bare = plan_drain(snap, targets, PlanOptions(verify_remedies=False))
    fresh = attach_remedies(snap, targets, PlanOptions(), replace(bare, findings=()), list(bare.findings),
                            lambda s, opts: plan_drain(s, targets, opts))
    assert list(plan.findings) == fresh


def test_a_fork_moved_to_an_edited_snapshot_equals_a_fresh_simulation():
    c = make_constraint(node_taints_policy=IGNORE)
    snap = make_snapshot(nodes_in({"a": 2, "b": 2}), web({"a1": 2, "a2": 1, "b1": 1}, [c]), workloads=[RS])
    edited_pods = tuple(replace(p, spread=(replace(c, node_taints_policy=HONOR, max_skew=2),))
                        if p.name in ("web-1", "web-4") else p for p in snap.pods)
    extra = make_node("new-b-1", zone="b", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
    edited = replace(snap, pods=edited_pods, nodes=snap.nodes + (extra,), pdbs=(_pdb("web", 1),))
    base = SimCluster(snap)
    fork = base.forked_to(edited)
    fresh = SimCluster(edited)
    assert fork is not None
    assert list(fork.nodes) == list(fresh.nodes) and fork.pods == fresh.pods
    for p in edited.pods:
        probe = fresh.replacement_for(p)
        assert fork.spread_state(probe) == fresh.spread_state(probe) == spread.compute(fresh.index, probe)
    # the base simulation is untouched
    probe = base.replacement_for(snap.pods[0])
    assert base.spread_state(probe) == spread.compute(SimCluster(snap).index, probe)
    assert "new-b-1" not in base.nodes


def test_a_snapshot_with_other_services_gets_no_fork():
    snap = make_snapshot(nodes_in({"a": 1}), web({"a1": 1}, []), workloads=[RS])
    assert SimCluster(snap).forked_to(replace(snap, pdbs=(_pdb("web", 1),))) is not None
    assert SimCluster(snap).forked_to(replace(snap, workloads=())) is None


def test_a_fork_to_the_same_snapshot_is_a_copy_its_steps_leave_the_base_alone():
    """A re-plan that changes the options alone (delete the drained nodes, a kubectl flag)
    forks to the very snapshot: a copy, nothing matched again, and playing on it leaves
    the simulation it came from as it was."""
    snap = make_snapshot(nodes_in({"a": 2, "b": 2}), web({"a1": 2, "a2": 1, "b1": 1}, [make_constraint()]),
                         workloads=[RS])
    base = SimCluster(snap)
    fork = base.forked_to(snap)
    assert fork is not None and fork is not base and fork.base is snap
    assert list(fork.nodes) == list(base.nodes) and fork.pods == base.pods
    gone = next(p for p in snap.pods if p.node_name == "a1")
    fork.cordon(["a1"])
    fork.evict(gone)
    fork.delete_node("b2")
    probe = base.replacement_for(gone)
    assert base.spread_state(probe) == spread.compute(SimCluster(snap).index, probe)
    assert "b2" in base.nodes and not base.nodes["a1"].unschedulable
    assert base.pods == SimCluster(snap).pods
