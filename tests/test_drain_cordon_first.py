"""drain-safe cordons like `kubectl drain a b c`: every target node at step 1, before the first
eviction, so no replacement is placed on a node a later step drains and no pod moves twice;
the plan's table and JSON say when each node is cordoned; the StageCordons remedy (cordons
staged step by step, --stage-cordons) is offered, verified, where that makes an unsafe plan
safe, and not where it does not help."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from apiobjects import as_dump, node_obj, pod_obj, spread_obj, workload_obj
from conftest import GI, make_constraint, make_node, make_pod, make_snapshot, make_workload
from kubectl_tspread.cli import main
from kubectl_tspread.views.drain import plan as plan_module
from kubectl_tspread.views.drain import remedies
from kubectl_tspread.model.plan import PlanOptions
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.model import HONOR, IGNORE, TIER_NO_POD_CHANGE

FAST = PlanOptions(verify_remedies=False)
STAGED = replace(FAST, stage_cordons=True)


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _moved_twice(plan, snapshot) -> list[str]:
    """The evictions of pods that were not on that node before the drain (replacements)."""
    before = {(p.node_name, p.key) for p in snapshot.pods}
    return [f"{e.namespace}/{e.name}" for s in plan.steps for e in s.evictions
            if (e.node, f"{e.namespace}/{e.name}") not in before]


# ---- no pod moves twice ------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_zone(tmp_path_factory):
    """The benchmark's tiny cluster and its zone b (7 nodes, PDBs, a trap under Ignore)."""
    import benchclusters

    snapshot = benchclusters.load("tiny", str(tmp_path_factory.mktemp("bench")))
    targets = benchclusters.zone_targets(snapshot)
    return snapshot, targets, benchclusters.plan_options(snapshot, targets)


def test_a_zone_drain_evicts_no_replacement_again(tiny_zone):
    """Each step cordoning its own node (the staged cordons, as drain-safe planned before),
    replacements land on zone b's nodes drained later and are evicted again under invented
    names (`-newN`): 85 of the plan's 164 evictions. With every target cordoned first none is,
    and the same pods strand."""
    snapshot, targets, options = tiny_zone
    staged = plan_drain(snapshot, targets, replace(options, stage_cordons=True))
    again = _moved_twice(staged, snapshot)
    assert len(again) == staged.evicted_again == 85
    assert all("-new" in key for key in again)
    plan = plan_drain(snapshot, targets, options)
    assert _moved_twice(plan, snapshot) == [] and plan.evicted_again == 0
    assert not any("-new" in e.name for s in plan.steps for e in s.evictions)
    assert plan.steps[0].cordon == tuple(targets) and all(s.cordon == () for s in plan.steps[1:])
    assert sum(len(s.evictions) for s in plan.steps) == 74  # each pod on the zone's nodes once
    assert len(plan.stranded) == len(staged.stranded) == 80


def test_a_replacement_never_goes_to_a_node_drained_later():
    """zones a=2 b=4 c=2, maxSkew 2: draining c2, a1, b2 in that order, c2's replacement went to
    a1 (drained next) and moved again; a1 is cordoned from step 1 now."""
    c = make_constraint(max_skew=2)
    caps = {"a1": 1, "a2": 3, "b1": 3, "b2": 2, "b3": 3, "c1": 1, "c2": 3, "c3": 3}
    nodes = [make_node(n, zone=n[0], allocatable={"cpu": 4000, "memory": 16 * GI, "pods": cap})
             for n, cap in caps.items()]
    pods = [make_pod(f"web-{n}-{i}", node=n, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n, k in {"a2": 2, "b1": 3, "b2": 1, "c1": 1, "c2": 1}.items() for i in range(k)]
    snap = make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "web-1", {"app": "web"})])
    targets = ["c2", "a1", "b2"]
    for plan in (plan_drain(snap, targets, FAST), plan_module._plan(snap, targets, FAST, *_sim(snap))[0]):
        placed = [e.predicted_node for s in plan.steps for e in s.evictions]
        assert placed and not set(placed) & set(targets)
        assert plan.evicted_again == 0
    staged = plan_drain(snap, targets, STAGED)
    assert staged.evicted_again == 1 and [s.cordon for s in staged.steps] == [(s.nodes[0],) for s in staged.steps]


def _sim(snap):
    from kubectl_tspread.views.drain.core.placement import Placer
    from kubectl_tspread.views.drain.core.simulate import SimCluster

    return SimCluster(snap), Placer()


# ---- already cordoned nodes (a rerun, a resumed --execute) --------------------------------

def _web_cluster(cordoned=()):
    c = make_constraint(max_skew=1, node_taints_policy=HONOR)
    nodes = [make_node(n, zone=n[0], unschedulable=n in cordoned,
                       taints=("node.kubernetes.io/unschedulable:NoSchedule",) if n in cordoned else ())
             for n in ("a1", "a2", "a3", "b1", "b2", "b3")]
    pods = [make_pod(f"web-{n}", node=n, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in ("a1", "a2", "a3", "b1", "b2", "b3")]
    return make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "web-1", {"app": "web"})])


@pytest.mark.parametrize("cordoned, first", [
    ((), ("a1", "b1")),
    (("a1",), ("b1",)),
    (("a1", "b1"), ()),
], ids=["none yet", "a1 cordoned by an earlier run", "both"])
def test_step_1_cordons_the_targets_not_cordoned_yet(cordoned, first):
    snap = _web_cluster(cordoned)
    plan = plan_drain(snap, ["a1", "b1"], FAST)
    assert plan.safe and plan.already_cordoned == cordoned
    assert plan.steps[0].cordon == first and all(s.cordon == () for s in plan.steps[1:])
    assert [s.nodes for s in plan.steps] in ([("a1",), ("b1",)], [("b1",), ("a1",)])
    placed = [e.predicted_node for s in plan.steps for e in s.evictions]
    assert len(placed) == 2 and not set(placed) & {"a1", "b1"}


# ---- the table and JSON --------------------------------------------------------------------

def _dump(names, policy="Ignore", cordoned=()):
    nodes = [node_obj(n, zone=n[0], unschedulable=n in cordoned,
                      taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}] if n in cordoned
                      else ()) for n in names]
    rs = workload_obj("ReplicaSet", "web-5d8f", {"app": "web"})
    pods = [pod_obj(f"web-5d8f-{n}", node=n, labels={"app": "web"}, spread=[spread_obj(nodeTaintsPolicy=policy)],
                    owner=("ReplicaSet", "web-5d8f")) for n in names]
    return as_dump(nodes + [rs] + pods)


@pytest.fixture
def dump(tmp_path):
    def write(doc):
        p = tmp_path / "cluster.json"
        p.write_text(json.dumps(doc))
        return str(p)
    return write


def test_the_table_and_json_say_step_1_cordons_every_target(capsys, dump):
    path = dump(_dump(["a1", "a2", "a3", "b1", "b2", "b3"]))
    code, out, err = run(capsys, "drain-safe", "a1", "b1", "--from-file", path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "step 1: node/a1, node/b1 cordoned before any eviction" in lines
    assert not [x for x in lines if "cordoned" in x and x != "step 1: node/a1, node/b1 cordoned before any eviction"]
    assert lines.index("step 1: node/a1, node/b1 cordoned before any eviction") < \
        next(i for i, x in enumerate(lines) if x.startswith("STEP   NODES"))
    code, out, _ = run(capsys, "drain-safe", "a1", "b1", "--from-file", path, "-o", "json")
    doc = json.loads(out)
    assert [s["cordon"] for s in doc["steps"]] == [["a1", "b1"], []]
    assert (doc["cordonFirst"], doc["cordonedAtStep"], doc["evictedAgain"]) == (True, {"a1": 1, "b1": 1}, 0)
    # staged: each step its own node, just before its evictions
    code, out, _ = run(capsys, "drain-safe", "a1", "b1", "--stage-cordons", "--from-file", path)
    assert code == 0
    assert [x for x in out.splitlines() if "cordoned" in x] == [
        "step 1: node/a1 cordoned just before its evictions", "step 2: node/b1 cordoned just before its evictions"]
    code, out, _ = run(capsys, "drain-safe", "a1", "b1", "--stage-cordons", "--from-file", path, "-o", "json")
    doc = json.loads(out)
    assert (doc["cordonFirst"], doc["cordonedAtStep"]) == (False, {"a1": 1, "b1": 2})
    assert [s["cordon"] for s in doc["steps"]] == [["a1"], ["b1"]]


def test_a_long_cordon_line_is_cut_unless_wide(capsys, dump):
    names = [f"{z}{i}" for z in "abc" for i in range(1, 5)]
    path = dump(_dump(names, policy="Honor"))
    targets = ["a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2"]
    _, out, _ = run(capsys, "drain-safe", *targets, "--from-file", path)
    assert ("step 1: node/a1, node/a2, node/a3, node/b1, node/b2, node/b3 and 2 more (-o wide lists every one) "
            "cordoned before any eviction") in out
    _, out, _ = run(capsys, "drain-safe", *targets, "--from-file", path, "-o", "wide")
    assert "step 1: " + ", ".join(f"node/{n}" for n in targets) + " cordoned before any eviction" in out


def test_already_cordoned_targets_are_not_cordoned_again(capsys, dump):
    path = dump(_dump(["a1", "a2", "a3", "b1", "b2", "b3"], cordoned=("a1",)))
    _, out, _ = run(capsys, "drain-safe", "a1", "b1", "--from-file", path, "-o", "json")
    doc = json.loads(out)
    assert (doc["alreadyCordoned"], doc["cordonedAtStep"]) == (["a1"], {"b1": 1})
    path = dump(_dump(["a1", "a2", "a3", "b1", "b2", "b3"], cordoned=("a1", "b1")))
    _, out, _ = run(capsys, "drain-safe", "a1", "b1", "--from-file", path)
    assert "cordoned before any eviction" not in out and "Already cordoned: a1, b1" in out


# ---- the StageCordons remedy ---------------------------------------------------------------

def _honor_skew():
    """Found by a random search. Zone a: a1 (room for 1 pod) with w-0, a2 with w-4, a3 with w-3,
    a4 empty; zone b: 5 pods; zone spread maxSkew 2 under nodeTaintsPolicy Honor (skew 2 now).
    Draining a4, a1 and a2 with every target cordoned first takes w-0 and w-4 out of a's count
    at step 1 (Honor leaves cordoned nodes out), so after step 1 a holds 2 and b 5: skew 3.
    Staged, a1's replacement goes to a2 (not cordoned yet), a is never short, and the plan is
    safe: one pod, a1's replacement, is evicted again with a2's."""
    caps = {"a1": 1, "a2": 4, "a3": 3, "a4": 3, "b1": 3, "b2": 3, "b3": 4}
    nodes = [make_node(n, zone=n[0], allocatable={"cpu": 4000, "memory": 16 * GI, "pods": cap})
             for n, cap in caps.items()]
    c = make_constraint(max_skew=2, node_taints_policy=HONOR, selector={"app": "w"})
    on = {"w-0": "a1", "w-1": "b2", "w-2": "b3", "w-3": "a3", "w-4": "a2", "w-5": "b3", "w-6": "b3", "w-7": "b1"}
    pods = [make_pod(name, node=n, labels={"app": "w"}, spread=[c], owner="ReplicaSet/w") for name, n in on.items()]
    return make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "w", {"app": "w"})]), ["a4", "a1", "a2"]


@pytest.mark.parametrize("forked", [False, True], ids=["in-process", "forked"])
def test_stage_cordons_is_offered_where_the_cordons_first_make_the_plan_unsafe(forked, forks, results):
    """The re-plan's count of pods evicted again reaches the remedy whether the re-plan ran in
    this process or in a forked one (its verdict)."""
    snap, targets = _honor_skew()
    staged = plan_drain(snap, targets, STAGED)
    assert staged.safe and staged.evicted_again == 1
    plan = plan_drain(snap, targets, workers=forks if forked else None)
    # forked: the staged re-plan's verdict came back from a child
    assert any(v is not None and v.evicted_again == 1 for _, v in results) is forked
    assert not plan.safe and not plan.no_safe_order and plan.stranded == ()
    after = plan.steps[0].constraints_after[0]
    assert (dict(after.distribution), after.skew, after.limit) == ({"a": 2, "b": 5}, 3, 2)
    (f,) = plan.findings
    assert f.code == "SkewExceeded" and f.step == 1
    stage = next(r for r in f.remedies if r.action == "StageCordons")
    assert stage.verified and stage.makes_safe and stage.verifies == "PlanSafe"
    assert stage.params == {"nodes": targets}
    assert [(e.code, e.params) for e in stage.side_effects] == [("MovesPodsTwice", {"pods": 1})]
    # moving a replacement twice deletes nothing and edits no template: listed first
    assert stage.tier == TIER_NO_POD_CHANGE and f.remedies[0] is stage


def test_the_stage_cordons_remedy_in_the_table_and_json(capsys, dump):
    snap, targets = _honor_skew()
    c = spread_obj(max_skew=2, match_labels={"app": "w"}, nodeTaintsPolicy="Honor")
    nodes = [node_obj(n.name, zone=n.name[0], pods=str(n.allocatable["pods"])) for n in snap.nodes]
    pods = [pod_obj(p.name, node=p.node_name, labels={"app": "w"}, spread=[c], owner=("ReplicaSet", "w"))
            for p in snap.pods]
    path = dump(as_dump(nodes + [workload_obj("ReplicaSet", "w", {"app": "w"})] + pods))
    code, out, _ = run(capsys, "drain-safe", *targets, "--from-file", path)
    assert code == 3
    assert ("  fix (verified, makes the plan safe): cordon each step's nodes just before its evictions instead of "
            "every node first (rerun with --stage-cordons)") in out
    assert "    side effect: 1 replacement(s) land on nodes drained later and are evicted again (a pod moves twice)" \
        in out
    code, out, _ = run(capsys, "drain-safe", *targets, "--from-file", path, "-o", "json")
    r = next(r for r in json.loads(out)["findings"][0]["remedies"] if r["action"] == "StageCordons")
    # the one vocabulary's side-effect numbers (details), no old `count` key: the code is new
    assert r["sideEffects"] == [{
        "code": "MovesPodsTwice", "objects": [], "details": {"pods": 1},
        "message": "1 replacement(s) land on nodes drained later and are evicted again (a pod moves twice)"}]
    assert r["makesPlanSafe"] is True and r["details"] == {"nodes": targets}
    assert r["category"] == "NoChangeToRunningPods" and "deprecatedAction" not in r
    code, out, _ = run(capsys, "drain-safe", *targets, "--stage-cordons", "--from-file", path, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["safe"] and doc["evictedAgain"] == 1 and not doc["cordonFirst"]


def test_stage_cordons_is_not_a_candidate_when_no_order_is_safe():
    """A whole zone under Ignore: forced.py proves the drained cluster traps replacements
    however the cordons are staged, so no re-plan is spent on it."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    nodes = [make_node(f"{z}{i}", zone=z) for z in "abc" for i in (1, 2)]
    pods = [make_pod(f"web-{n.name}", node=n.name, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in nodes]
    snap = make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "web-1", {"app": "web"})])
    made = []

    def replan(s, o):
        made.append(o)
        return plan_drain(s, ["a1", "a2"], o)

    bare = plan_drain(snap, ["a1", "a2"], FAST)
    assert bare.no_safe_order and not bare.safe
    found = remedies.attach_remedies(snap, ["a1", "a2"], PlanOptions(), bare, list(bare.findings), replan)
    assert made and not any(o.stage_cordons for o in made)
    assert not any(r.action == "StageCordons" for f in found for r in (*f.remedies, *f.unchecked))
    # the staged plan is indeed no safer
    assert not plan_drain(snap, ["a1", "a2"], STAGED).safe


def test_stage_cordons_is_not_offered_where_it_does_not_make_the_plan_safe():
    """Found by a random search: w1 (zone spread maxSkew 1, Honor, minDomains 3) strands a
    replacement at step 3 with the cordons first and staged alike; StageCordons is re-planned
    (no proof rules it out) and left out."""
    nodes = [make_node(n, zone=n[0], allocatable={"cpu": 4000, "memory": 16 * GI, "pods": cap})
             for n, cap in {"a1": 110, "a2": 4, "b1": 3, "b2": 110, "c1": 110}.items()]
    w0 = make_constraint(max_skew=2, node_taints_policy=IGNORE, min_domains=3, selector={"app": "w0"})
    w1 = make_constraint(max_skew=1, node_taints_policy=HONOR, min_domains=3, selector={"app": "w1"})
    pods = [make_pod(f"w0-{i}", node=n, labels={"app": "w0"}, spread=[w0], owner="ReplicaSet/w0")
            for i, n in enumerate(("b1", "a2", "c1", "b1"))]
    pods += [make_pod(f"w1-{i}", node=n, labels={"app": "w1"}, spread=[w1], owner="ReplicaSet/w1")
             for i, n in enumerate(("c1", "a1", "b2"))]
    snap = make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", w, {"app": w}) for w in ("w0", "w1")])
    targets = ["c1", "b1", "a1"]
    assert not plan_drain(snap, targets, STAGED).safe
    bare = plan_drain(snap, targets, FAST)
    assert not bare.safe and not bare.no_safe_order
    wanted = remedies.first_replans(snap, targets, PlanOptions(), bare, list(bare.findings))
    assert "StageCordons" in [action for _, action, _, _ in wanted]
    plan = plan_drain(snap, targets)
    (f,) = plan.findings
    assert f.code == "SpreadBlocked" and f.failed >= 1
    assert "StageCordons" not in {r.action for r in (*f.remedies, *f.unchecked)}


def test_one_target_gets_no_stage_cordons_candidate():
    snap, _ = _honor_skew()
    bare = plan_drain(snap, ["a1"], FAST)
    wanted = remedies.first_replans(snap, ["a1"], PlanOptions(), bare, list(bare.findings))
    assert "StageCordons" not in [action for _, action, _, _ in wanted]


@pytest.mark.parametrize("options, expected", [
    pytest.param(STAGED, ["b1", "a1"], id="staged: a1 is zone a's last open node, drained last"),
    pytest.param(FAST, ["a1", "b1"], id="cordon-first: every target is cordoned, none is a last open node"),
])
def test_the_order_drains_a_domains_last_open_node_last(options, expected):
    """The order heuristic's first key, at a level past the first: a2 drained (and cordoned), a1 is the only open
    node left in zone a, and draining it would close the zone; b1 is not. Nothing else tells them apart (neither
    holds web's pods, which go to pool x only), so by name a1 would come first."""
    from kubectl_tspread.views.drain.core.search import Search
    from kubectl_tspread.views.drain.core.steps import run_batch

    nodes = [make_node("a1", zone="a"), make_node("a2", zone="a", labels={"pool": "x"}),
             make_node("b1", zone="b"), make_node("b2", zone="b", labels={"pool": "x"}),
             make_node("c1", zone="c", labels={"pool": "x"})]
    c = make_constraint(max_skew=5, node_affinity_policy=IGNORE)
    pods = [make_pod(f"web-{n}", node=n, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1",
                     node_selector={"pool": "x"}) for n in ("a2", "b2", "c1")]
    snap = make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "web-1", {"app": "web"})])
    ctx, world = plan_module._new_world(snap, ["a2", "a1", "b1"], options)
    assert run_batch(ctx, world, ["a2"])
    assert world.sim.nodes["a2"].unschedulable and world.sim.nodes["a1"].unschedulable == (options is FAST)
    assert Search(ctx, 1, 0).order(world, world.todo_nodes(ctx.targets)) == expected
