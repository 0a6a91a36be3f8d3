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


def _random_drain(seed: int):
    """3 zones of 2-4 nodes (a few without a rack label), 2-4 workloads spread over zone, hostname or rack, some
    ScheduleAnyway; zone b drained, or two random nodes; its drained nodes deleted or not."""
    import random
    rng = random.Random(seed)
    nodes = [make_node(f"{z}{i}", zone=z, labels={"rack": f"r{rng.randint(1, 2)}"} if rng.random() < 0.7 else {},
                       allocatable={"cpu": 4000, "memory": 16 * GI, "pods": rng.randint(3, 8)})
             for z in "abc" for i in range(1, rng.randint(2, 4) + 1)]
    pods, workloads = [], []
    for w in range(rng.randint(2, 4)):
        app = f"w{w}"
        c = make_constraint(key=rng.choice(["topology.kubernetes.io/zone", HOSTNAME_KEY, "rack"]),
                            max_skew=rng.choice((1, 2)), selector={"app": app},
                            mode=rng.choice(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"]),
                            node_taints_policy=rng.choice([IGNORE, HONOR]))
        workloads.append(make_workload("ReplicaSet", f"{app}-1", {"app": app}))
        pods += [make_pod(f"{app}-{k}", node=rng.choice(nodes).name, labels={"app": app}, spread=[c],
                          owner=f"ReplicaSet/{app}-1") for k in range(rng.randint(3, 10))]
    names = [n.name for n in nodes]
    targets = [n for n in names if n[0] == "b"] if rng.random() < 0.5 else rng.sample(names, 2)
    options = PlanOptions(verify_remedies=False, delete_drained_nodes=rng.random() < 0.5, search_budget=0)
    return make_snapshot(nodes, pods, workloads=workloads), targets, options


def test_a_verdict_only_plan_keeps_what_its_verdict_reads():
    """A remedy's re-plan (Context.verdict_only) keeps the domain counts of its exceeded constraints only: its
    verdict, stranded pods and findings are the full plan's, and its steps differ from the full plan's only in the
    counts of the constraints within their limits, which no finding quotes."""
    from kubectl_tspread.views.drain.findings import build_findings
    from kubectl_tspread.views.drain.plan import _plan
    from kubectl_tspread.views.drain.core.placement import Placer
    from kubectl_tspread.views.drain.core.steps import UNRECORDED
    kept = dropped = 0
    for seed in range(60):
        snap, targets, options = _random_drain(seed)
        full, refused = _plan(snap, targets, options, SimCluster(snap), Placer())
        lean, lean_refused = _plan(snap, targets, options, SimCluster(snap), Placer(), verdict_only=True)
        assert (lean.safe, lean.stranded, lean.evicted_again) == (full.safe, full.stranded, full.evicted_again)
        assert build_findings(lean, lean_refused) == build_findings(full, refused)
        assert len(lean.steps) == len(full.steps)
        for a, b in zip(full.steps, lean.steps):
            assert replace(b, constraints_after=()) == replace(a, constraints_after=())
            for ca, cb in zip(a.constraints_after, b.constraints_after, strict=True):
                assert replace(cb, distribution=ca.distribution) == ca
                if ca.exceeded:
                    assert dict(cb.distribution) == dict(ca.distribution)
                    kept += 1
                else:
                    assert cb.distribution is UNRECORDED
                    dropped += 1
    assert kept and dropped  # both kinds were seen
