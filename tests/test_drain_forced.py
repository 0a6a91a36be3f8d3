"""forced.py's proof that no order is safe: the numbers on small traps, the policies that
rule it out, and — on random small clusters — that whenever it claims a proof, an
exhaustive search finds no safe order either."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from conftest import make_constraint, make_pod, make_snapshot, make_workload
from drain_builders import nodes_in, web
from kubectl_tspread.views.drain.core import search
from kubectl_tspread.views.drain.forced import ForcedHarm, forced_harm
from kubectl_tspread.model.plan import MULTIPLE_PDBS, PDB_BLOCKS, DrainFlags, PlanOptions
from kubectl_tspread.views.drain.plan import _new_world, _settle, plan_drain
from kubectl_tspread.model import (
    DO_NOT_SCHEDULE, HONOR, HOSTNAME_KEY, IGNORE, SCHEDULE_ANYWAY, ZONE_KEY, Pdb, Selector, Toleration,
)

RS = make_workload("ReplicaSet", "web-1")


def _one_per_node(per_zone: int, constraint, zones: str = "abc"):
    nodes = nodes_in({z: per_zone for z in zones})
    pods = [make_pod(f"web-{n.name}", node=n.name, labels={"app": "web"}, spread=[constraint],
                     owner="ReplicaSet/web-1") for n in nodes]
    return make_snapshot(nodes, pods, workloads=[RS])


def _forced(snap, targets, **opts):
    ctx, world = _new_world(snap, targets, PlanOptions(verify_remedies=False, **opts))
    _settle(ctx, world)
    return forced_harm(ctx, world)


@pytest.mark.parametrize("max_skew, expected", [
    # zone b closed at 0 pods; a and c hold 3 each and may reach 0 + maxSkew: room 2 × K − 6
    pytest.param(1, [ForcedHarm("default", "ReplicaSet/web-1", ZONE_KEY, 3, 0)], id="maxSkew 1: room 0 for 3 replacements"),
    pytest.param(4, [ForcedHarm("default", "ReplicaSet/web-1", ZONE_KEY, 3, 2)], id="maxSkew 4: room 2 for 3 replacements"),
    pytest.param(5, [], id="maxSkew 5: room 4 for 3 replacements, no proof"),
])
def test_a_zone_drained_under_ignore_is_proven_unsafe_when_the_open_zones_lack_room(max_skew, expected):
    snap = _one_per_node(3, make_constraint(max_skew=max_skew, node_taints_policy=IGNORE))
    targets = ["b1", "b2", "b3"]
    assert _forced(snap, targets) == expected
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False))
    # the bound is tight here: one more unit of maxSkew and an order exists
    assert plan.safe == (not expected)
    if expected:  # proven: no depth-first search, only the fallback's levels
        assert plan.explored <= search.GREEDY_CANDIDATES * len(targets) and not plan.search_exhausted


@pytest.mark.parametrize("constraint, opts", [
    pytest.param(make_constraint(max_skew=1, node_taints_policy=HONOR), {},
                 id="nodeTaintsPolicy Honor: cordoned nodes make no domain, nothing is closed"),
    pytest.param(make_constraint(max_skew=1, mode=SCHEDULE_ANYWAY), {},
                 id="ScheduleAnyway: never unsafe"),
    pytest.param(make_constraint(max_skew=1, node_taints_policy=IGNORE), {"delete_drained_nodes": True},
                 id="drained nodes deleted: their domain goes with them"),
])
def test_no_proof_where_a_closed_domain_cannot_pin_the_minimum(constraint, opts):
    snap = _one_per_node(3, constraint)
    assert _forced(snap, ["b1", "b2", "b3"], **opts) == []


def test_a_partly_drained_zone_is_not_closed():
    snap = _one_per_node(3, make_constraint(max_skew=1, node_taints_policy=IGNORE))
    assert _forced(snap, ["b1", "b2"]) == []


def test_hostname_constraints_count_each_drained_node_as_a_closed_domain():
    """4 nodes, 2 pods each, hostname maxSkew 1: a drained node pins globalMin to 0 and
    the 3 others may hold 1 each: room 3 × 1 − 6 < 2 replacements."""
    c = make_constraint(max_skew=1, key=HOSTNAME_KEY, node_taints_policy=IGNORE)
    nodes = nodes_in({"a": 4})
    pods = [make_pod(f"web-{n.name}-{k}", node=n.name, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in nodes for k in range(2)]
    snap = make_snapshot(nodes, pods, workloads=[RS])
    assert _forced(snap, ["a1"]) == [ForcedHarm("default", "ReplicaSet/web-1", HOSTNAME_KEY, 2, 0)]


def test_a_deleted_node_takes_its_matching_pods_out_of_an_open_domain():
    """Zone b closed (db's pod, which no PDB lets go, keeps b2) with web's count 0 once web-b1 is evicted: zones a and
    c may then hold one web pod each. Counted as they stand, a (a1's DaemonSet pod, which web's selector matches) and c
    (web-c1) are full, and web-b1's replacement would have no room. But a1 is drained too and deleted with its
    DaemonSet pod: drained first, it leaves zone a room, so there is no proof, and an order exists."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    pods = [make_pod("web-b1", node="b1", labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1"),
            make_pod("web-c1", node="c1", labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1"),
            make_pod("agent-a1", node="a1", labels={"app": "web"}, owner="DaemonSet/agent"),
            make_pod("db-b2", node="b2", labels={"app": "db"}, owner="ReplicaSet/db-1")]
    plan = _unproven_and_harmless_but_for_db(nodes_in({"a": 2, "b": 2, "c": 2}), pods, ["a1", "b1", "b2"])
    step_of = {n: s.number for s in plan.steps for n in s.nodes}
    assert step_of["a1"] < step_of["b1"] and "a1" in plan.steps[step_of["a1"] - 1].deleted_nodes


def test_a_closed_domain_whose_nodes_are_all_deleted_does_not_hold_the_minimum():
    """Zones b and d drained and deleted, web's pod on d1 replaced. Zone b stays (db's pod, which no PDB lets go, keeps
    b1) and keeps 1 web pod (a DaemonSet's, which web's selector matches); zone d goes once d1 and d2 are deleted. The
    minimum is then 1 and zones a and c have room for the replacement: no proof. Counting d's 0 as a closed domain's
    would prove harm where draining d2 before d1 is safe."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    pods = [make_pod(f"web-{n}", node=n, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in ("a1", "c1", "d1")]
    pods += [make_pod("agent-b1", node="b1", labels={"app": "web"}, owner="DaemonSet/agent"),
             make_pod("db-b1", node="b1", labels={"app": "db"}, owner="ReplicaSet/db-1")]
    plan = _unproven_and_harmless_but_for_db(nodes_in({"a": 1, "b": 1, "c": 1, "d": 2}), pods, ["b1", "d1", "d2"])
    step_of = {n: s.number for s in plan.steps for n in s.nodes}
    assert step_of["d2"] < step_of["d1"]


def _bare(name: str, node: str):
    """A pod of no controller that web's selector matches: `--force` evicts it, and nothing replaces it."""
    return make_pod(name, node=node, labels={"app": "web"})


@pytest.mark.parametrize("force, expected", [
    pytest.param(True, [ForcedHarm("default", "ReplicaSet/web-1", ZONE_KEY, 1, 0)],
                 id="--force: zone b closes at 0, and a and c already hold 0 + maxSkew and more"),
    pytest.param(False, [], id="no --force: kubectl refuses b's nodes, the two pods stay, b closes at 2"),
])
def test_pods_evicted_without_a_replacement_leave_the_closed_domains_count(force, expected):
    """Zone b holds web-b1 and two of web's pods that nothing replaces; a and c hold two web pods each (maxSkew 1, as
    today's skew). Evicted too, those two leave b's count: the minimum falls to 0, and the open zones, which may then
    hold 1 each, already hold 4 pods between them."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    pods = web({"a1": 1, "a2": 1, "b1": 1, "c1": 2}, [c]) + [_bare("bare-1", "b1"), _bare("bare-2", "b2")]
    snap = make_snapshot(nodes_in({"a": 2, "b": 2, "c": 2}), pods, workloads=[RS])
    assert _forced(snap, ["b1", "b2"], flags=DrainFlags(force=force)) == expected


def test_a_deleted_node_keeps_none_of_the_pods_evicted_from_it():
    """Zone b closed at 0 (db's pod, which no PDB lets go, keeps b2). a2, drained and deleted, held two of web's pods
    that nothing replaces: evicted, they are already out of zone a's count, and the deletion takes nothing more. Zones a
    (0 pods) and c (2) may hold 1 each: c's two and web-b1's replacement do not fit."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    pods = web({"b1": 1, "c1": 2}, [c]) + [_bare("bare-1", "a2"), _bare("bare-2", "a2"),
                                            make_pod("db-b2", node="b2", labels={"app": "db"}, owner="ReplicaSet/db-1")]
    snap = make_snapshot(nodes_in({"a": 2, "b": 2, "c": 2}), pods,
                         workloads=[RS, make_workload("ReplicaSet", "db-1", {"app": "db"})],
                         pdbs=[Pdb("default", "db", Selector.from_api({"matchLabels": {"app": "db"}}),
                                   max_unavailable=0)])
    assert _forced(snap, ["a2", "b1", "b2"], flags=DrainFlags(force=True), delete_drained_nodes=True) == \
        [ForcedHarm("default", "ReplicaSet/web-1", ZONE_KEY, 1, 0)]


def _unproven_and_harmless_but_for_db(nodes, pods, targets):
    """The plan that deletes the drained `targets`, DaemonSet pods left in place, with db's pods kept by a PDB that
    allows no disruption; asserts that nothing is proven and that the plan's only harm is db's pods."""
    snap = make_snapshot(nodes, pods, workloads=[RS, make_workload("ReplicaSet", "db-1", {"app": "db"})],
                         pdbs=[Pdb("default", "db", Selector.from_api({"matchLabels": {"app": "db"}}),
                                   max_unavailable=0)])
    options = {"flags": DrainFlags(ignore_daemonsets=True), "delete_drained_nodes": True}
    assert _forced(snap, targets, **options) == []
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False, search_budget=10_000, **options))
    assert [s.reason for s in plan.stranded] == [PDB_BLOCKS]
    assert not any(c.exceeded for s in plan.steps for c in s.constraints_after)
    return plan


def _random_cluster(rng: random.Random, blocked: bool = False):
    """Up to two workloads under random spread constraints on 2-3 zones of 1-3 nodes; with `blocked`, also pods of a
    workload whose PDB allows no disruption on a random half of the nodes (they keep those nodes)."""
    zones = "abc"[:rng.choice((2, 3))]
    nodes = nodes_in({z: rng.choice((1, 2, 3)) for z in zones}, pods_cap=rng.choice((4, 110)))
    pods = []
    for w in range(rng.choice((1, 2))):
        key = rng.choice((ZONE_KEY, ZONE_KEY, HOSTNAME_KEY))
        c = make_constraint(max_skew=rng.choice((1, 1, 2, 3)), key=key, selector={"app": f"w{w}"},
                            node_taints_policy=rng.choice((IGNORE, IGNORE, HONOR)),
                            mode=rng.choice((DO_NOT_SCHEDULE, DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)))
        for k in range(rng.randint(1, 7)):
            pods.append(make_pod(f"w{w}-{k}", node=rng.choice(nodes).name, labels={"app": f"w{w}"}, spread=[c],
                                 owner=f"ReplicaSet/w{w}-1", requests={"cpu": 100}))
    workloads = [make_workload("ReplicaSet", f"w{w}-1", {"app": f"w{w}"}) for w in range(2)]
    pdbs = []
    if blocked:
        pods += [make_pod(f"db-{n.name}", node=n.name, labels={"app": "db"}, owner="ReplicaSet/db-1")
                 for n in nodes if rng.random() < 0.5]
        workloads.append(make_workload("ReplicaSet", "db-1", {"app": "db"}))
        pdbs.append(Pdb("default", "db", Selector.from_api({"matchLabels": {"app": "db"}}), max_unavailable=0))
    snap = make_snapshot(nodes, pods, workloads=workloads, pdbs=pdbs)
    names = [n.name for n in nodes]
    zone = rng.choice(zones)
    targets = [n for n in names if n.startswith(zone)] if rng.random() < 0.6 else rng.sample(names, rng.randint(1, 2))
    return snap, targets


@pytest.mark.parametrize("delete", [False, True], ids=["drained nodes kept", "drained nodes deleted"])
def test_whenever_the_proof_holds_an_exhaustive_search_finds_no_safe_order(monkeypatch, delete):
    """With the drained nodes deleted, half the clusters hold PDB-blocked pods: a node of theirs is never emptied, so
    its domain stays, and the proof holds there; without them every closed domain goes with its nodes. A third of the
    plans stage their cordons: the proof reads the end of the drain, when every target is cordoned either way."""
    proven = 0
    for seed in range(400 if delete else 160):
        snap, targets = _random_cluster(random.Random(seed), blocked=delete and seed % 2 == 0)
        options = {"delete_drained_nodes": delete, "stage_cordons": seed % 3 == 2}
        forced = _forced(snap, targets, **options)
        if not forced:
            continue
        assert not delete or snap.pdbs, (seed, forced)
        proven += 1
        with monkeypatch.context() as m:  # the search without the proof, every order allowed
            m.setattr(search, "forced_harm", lambda ctx, world: [])
            plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False, search_budget=10_000, **options))
        assert not plan.safe and not plan.search_exhausted, (seed, targets, forced)
        # the harm is the proof's, not only the blocked pods' (which leave a plan unsafe however it is ordered)
        assert any(s.reason not in (PDB_BLOCKS, MULTIPLE_PDBS) for s in plan.stranded) \
            or any(c.exceeded for s in plan.steps for c in s.constraints_after), (seed, forced)
    assert proven >= 20  # the clusters do reach the proof (else this checks nothing)


def test_no_proof_for_pods_that_tolerate_the_cordon():
    """Their replacements may land on the cordoned nodes of zone b: nothing is closed to them."""
    cordon = Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
    snap = _one_per_node(3, make_constraint(max_skew=1, node_taints_policy=IGNORE))
    snap = replace(snap, pods=tuple(replace(p, tolerations=(cordon,)) for p in snap.pods))
    assert _forced(snap, ["b1", "b2", "b3"]) == []


@pytest.mark.parametrize("seed", range(6))
def test_the_pods_leaving_a_state_are_what_its_shifts_take_out(seed):
    """counts.leaving, from which the proof takes the evictions out of each constraint's
    counts, against the simulation evicting the same pods: every domain and node count, a
    node outside the domains (no zone label) included."""
    from kubectl_tspread.views.drain.core import counts
    from kubectl_tspread.views.drain.core.simulate import SimCluster
    from conftest import make_node

    rng = random.Random(seed)
    nodes = nodes_in({"a": 2, "b": 2, "c": 1}) + [make_node("x1")]  # x1: no zone, outside the domains
    c = make_constraint(max_skew=2)
    pods = [make_pod(f"web-{k}", node=rng.choice(nodes).name, labels={"app": "web"}, spread=[c],
                     owner="ReplicaSet/web-1") for k in range(rng.randint(8, 20))]
    sim = SimCluster(make_snapshot(nodes, pods, workloads=[RS]))
    probe = make_pod("probe", labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
    [before] = sim.spread_state(probe).constraints
    gone = rng.sample(pods, rng.randint(1, len(pods)))
    by_domain, by_node = counts.leaving(before, gone)
    for p in gone:
        sim.evict(p)
    [after] = sim.spread_state(probe).constraints
    assert {v: d.pods for v, d in after.domains.items()} == \
        {v: d.pods - by_domain.get(v, 0) for v, d in before.domains.items()}
    assert {n: after.node_counts.get(n, 0) for n in sim.nodes} == \
        {n: before.node_counts.get(n, 0) - by_node.get(n, 0) for n in sim.nodes}
    assert sum(by_node.values()) == len(gone)


def test_deleting_the_drained_nodes_is_judged_by_proof_only_where_its_re_plan_clears_no_spread_finding():
    """remedies.judged_by_proof takes DeleteDrainedNodes as failing every spread finding, without its re-plan, when the
    proof under node deletion covers each one's constraint. On random clusters (half with PDB-blocked pods keeping
    nodes, so zones stay), the re-plan it saves keeps every one of those findings, code and workload alike."""
    from kubectl_tspread.views.drain import remedies

    judged = 0
    for seed in range(1000):
        snap, targets = _random_cluster(random.Random(seed), blocked=seed % 2 == 0)
        options = PlanOptions(verify_remedies=False, stage_cordons=seed % 3 == 2)
        plan = plan_drain(snap, targets, options)
        proven = remedies.judged_by_proof(snap, targets, options, plan.deletion_fails, list(plan.findings))
        if not proven:
            continue
        judged += 1
        [(key, _, edit, replan_options)] = remedies.deleting_replans(snap, targets, options)
        assert set(proven) == {key} and not proven[key].safe, seed
        replanned = plan_drain(edit(), targets, replan_options)
        kept = {(g.code, g.workload) for g in replanned.findings}
        assert all((f.code, f.workload) in kept for f in proven[key].findings), (seed, targets)
    assert judged >= 40  # the clusters do reach it (else this checks nothing)
