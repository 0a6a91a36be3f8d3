"""The planner's work is bounded: the greedy fallback simulates at most GREEDY_CANDIDATES
batches per level once harm is unavoidable, backtracking is capped by the number of
targets, and remedies are verified by a number of re-plans that shrinks with the
drain — never offered unverified."""

from __future__ import annotations

import dataclasses
import itertools
import pytest

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot, make_workload
from drain_builders import nodes_in
from kubectl_tspread.views.drain import remedies
from kubectl_tspread.views.drain.core import search
from kubectl_tspread.model.plan import CORDONED_DOMAIN_TRAP, DrainPlan, Finding, PlanOptions
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.model import HOSTNAME_KEY, IGNORE, ZONE_KEY

RS = make_workload("ReplicaSet", "web-1")


def _zone_trap(per_zone: int):
    """3 zones of `per_zone` nodes, one web pod per node, zone maxSkew 1 under Ignore:
    draining zone b strands replacements whatever the order."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    nodes = nodes_in({z: per_zone for z in "abc"})
    pods = [make_pod(f"web-{n.name}", node=n.name, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in nodes]
    return make_snapshot(nodes, pods, workloads=[RS]), [f"b{i}" for i in range(1, per_zone + 1)]


def _pinned(count: int):
    """`count` nodes, each holding a web pod whose nodeSelector pins it to that node:
    every replacement strands (NoCapacity), so every candidate of every level does harm."""
    nodes = [make_node(f"n{i}", zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
             for i in range(1, count + 1)]
    pods = [make_pod(f"web-{n.name}", node=n.name, labels={"app": "web"}, owner="ReplicaSet/web-1",
                     node_selector={HOSTNAME_KEY: n.name}) for n in nodes]
    return make_snapshot(nodes, pods, workloads=[RS]), [n.name for n in nodes]


def _as_dicts(totals, todo=None) -> tuple[dict[str, int], dict[str, int]]:
    """({node: holds}, {node: surplus}) of a search's _Totals, the nodes with a non-zero total (of `todo` if given)."""
    return ({n: int(h) for n, h in zip(totals.names, totals.holds) if h and (todo is None or n in todo)},
            {n: int(s) for n, s in zip(totals.names, totals.surplus) if s and (todo is None or n in todo)})


@pytest.mark.parametrize("count", [
    pytest.param(6, id="6 pinned nodes: every level strands one pod"),
    pytest.param(12, id="12 pinned nodes: every level strands one pod"),
])
def test_the_greedy_fallback_tries_a_constant_number_of_candidates_per_level(count):
    snap, targets = _pinned(count)
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False, search_budget=0))
    assert not plan.safe and len(plan.stranded) == count
    # no backtracking allowed: the depth-first search spends one step per target, then the
    # fallback at most GREEDY_CANDIDATES per level (trying every candidate would be 27 / 86)
    assert plan.explored <= count + search.GREEDY_CANDIDATES * count


def test_backtracking_is_capped_by_the_number_of_targets_above_the_floor(monkeypatch):
    """Zone b of 5 nodes under Ignore: the last node always strands, so the depth-first
    search backtracks through every order it can (81 steps without the cap). forced.py
    proves this trap before any search, so the proof is turned off to reach the cap."""
    monkeypatch.setattr(search, "BACKTRACK_FLOOR", 0)
    monkeypatch.setattr(search, "forced_harm", lambda ctx, world: [])
    snap, targets = _zone_trap(5)
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False, search_budget=10_000))
    t = len(targets)
    assert not plan.safe
    assert plan.explored <= t + t + search.GREEDY_CANDIDATES * t


def _findings(n: int):
    return [Finding(CORDONED_DOMAIN_TRAP, f"ReplicaSet/web-{i}", (f"default/web-{i}-x",), 1,
                    {"topologyKey": ZONE_KEY, "maxSkew": 1, "namespace": "default", "distribution": {"a": 0}})
            for i in range(n)]


@pytest.mark.parametrize("extra_targets,replans", [
    pytest.param(0, 8, id="2 targets: the full allowance of 8 re-plans"),
    pytest.param(198, 2, id="200 targets: 400 steps / 200 = 2 re-plans"),
])
def test_remedies_are_verified_by_a_bounded_number_of_re_plans(extra_targets, replans):
    snap, targets = _zone_trap(2)
    targets = targets + [f"x{i}" for i in range(extra_targets)]
    calls = []

    def replan(s, opts):
        calls.append(opts)
        return DrainPlan(nodes=tuple(targets), safe=True, steps=(), stranded=(), findings=())

    found = remedies.attach_remedies(snap, targets, PlanOptions(), DrainPlan(
        nodes=tuple(targets), safe=False, steps=(), stranded=(), findings=()), _findings(6), replan)
    assert len(calls) == replans == remedies.replan_allowance(len(targets))
    # the first finding got its own remedies, the last only shared, already verified ones
    # (StageCordons names no workload either: one re-plan serves every finding)
    assert "DeleteDrainedNodes" in {r.action for r in found[0].remedies}
    assert {r.action for r in found[-1].remedies} <= {"DeleteDrainedNodes", "StageCordons", "AddNode"}
    assert all(r.verified for f in found for r in f.remedies)


def test_each_domains_node_to_copy_is_looked_up_once_for_all_findings(monkeypatch):
    """AddNode's node to copy is found once per (key, domain) for every finding of a drain
    (a zone's hundreds of findings try the same zones, and each look walks every node), and
    it is the node _template_node picks."""
    snap, targets = _zone_trap(2)
    real, looked = remedies._template_node, []

    def template_node(*args):
        looked.append(args[2:])
        return real(*args)

    monkeypatch.setattr(remedies, "_template_node", template_node)

    def replan(s, opts):
        return DrainPlan(nodes=tuple(targets), safe=True, steps=(), stranded=(), findings=())

    found = remedies.attach_remedies(snap, targets, PlanOptions(), DrainPlan(
        nodes=tuple(targets), safe=False, steps=(), stranded=(), findings=()), _findings(6), replan)
    assert looked and len(looked) == len(set(looked))
    added = [r.params for f in found for r in f.remedies if r.action == "AddNode"]
    assert len(added) > len(set(looked))  # the same domains, for several findings
    for params in added:
        assert params["like"] == real(snap, targets, params["topologyKey"], params["domain"]).name


def test_a_drain_deeper_than_the_recursion_limit_is_planned(monkeypatch):
    """The order search keeps its levels on an explicit stack: draining a zone of a big
    cluster is one level per node, past Python's recursion limit (a RecursionError before)."""
    import inspect
    import sys

    targets = [f"a{i}" for i in range(1, 121)]
    snap = make_snapshot(nodes_in({"a": 120, "b": 2}), [])
    depth = len(inspect.stack(0))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 80)  # far fewer frames than the 120 levels
    try:
        plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False))
    finally:
        sys.setrecursionlimit(limit)
    assert plan.safe and sorted(n for s in plan.steps for n in s.nodes) == sorted(targets)
    assert len(plan.steps) == 120 and plan.explored == 120


def _mixed_cluster(seed: int):
    """Four zones of three nodes, four workloads (zone and hostname constraints) on random nodes."""
    import random
    rng = random.Random(seed)
    nodes = nodes_in({z: 3 for z in "abcd"})
    pods, workloads = [], []
    for w in range(4):
        key = ZONE_KEY if w % 2 == 0 else HOSTNAME_KEY
        c = make_constraint(key=key, max_skew=rng.choice((1, 2)), selector={"app": f"w{w}"})
        workloads.append(make_workload("ReplicaSet", f"w{w}-1", {"app": f"w{w}"}))
        pods += [make_pod(f"w{w}-{k}", node=rng.choice(nodes).name, labels={"app": f"w{w}"}, spread=[c],
                          owner=f"ReplicaSet/w{w}-1") for k in range(rng.randint(3, 9))]
    return make_snapshot(nodes, pods, workloads=workloads), [n.name for n in nodes if n.name[0] in "ab"]


@pytest.mark.parametrize("seed", range(6))
def test_the_order_heuristic_kept_between_levels_equals_a_fresh_one(seed):
    """Search.order moves its per-node totals by the constraint states that changed since
    its last call: down a branch, back up to the root and down another, it orders the
    nodes as a Search that never saw the other worlds."""
    from kubectl_tspread.views.drain.plan import _new_world
    from kubectl_tspread.views.drain.core.steps import run_batch
    snap, targets = _mixed_cluster(seed)
    ctx, root = _new_world(snap, targets, PlanOptions(verify_remedies=False))
    kept = search.Search(ctx, 1, 0)

    def fresh_order(world):
        return search.Search(ctx, 1, 0).order(world, world.todo_nodes(targets))

    worlds = [root]
    for first in (targets[0], targets[-1]):  # two branches from the root
        w = root.copy()
        for node in [first] + [t for t in targets if t != first][:2]:
            assert kept.order(w, w.todo_nodes(targets)) == fresh_order(w)
            run_batch(ctx, w, [node])
            worlds.append(w)
            w = w.copy()
    for w in reversed(worlds):  # and back up
        assert kept.order(w, w.todo_nodes(targets)) == fresh_order(w)


def test_a_target_played_again_after_a_revert_is_counted_afresh():
    """A played target stays in its domains' target sets as its pods leave (Search._share_totals).
    With staged cordons a1's replacement lands on the unplayed, empty a2 (a3 takes one pod), a2
    is then played, and the search comes back to the world before: there a2 holds no web pod,
    and its totals must be a fresh search's, not keep web's share from the branch."""
    from kubectl_tspread.views.drain.plan import _new_world
    from kubectl_tspread.views.drain.core.steps import run_batch
    c = make_constraint(max_skew=3, node_taints_policy=IGNORE)
    small, one_pod = {"cpu": 4000, "memory": 16 * GI, "pods": 110}, {"cpu": 64000, "memory": 256 * GI, "pods": 1}
    nodes = [make_node(n, zone="a", allocatable=small) for n in ("a0", "a1", "a2")] + \
        [make_node("a3", zone="a", allocatable=one_pod)]
    pods = [make_pod(f"web-{n}", node=n, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in ("a0", "a1")]
    snap, targets = make_snapshot(nodes, pods, workloads=[RS]), ["a0", "a1", "a2"]
    ctx, w = _new_world(snap, targets, PlanOptions(verify_remedies=False, stage_cordons=True))
    kept = search.Search(ctx, 1, 0)

    def same_as_fresh(world):
        todo = world.todo_nodes(targets)
        fresh = search.Search(ctx, 1, 0)
        assert kept.order(world, todo) == fresh.order(world, todo)
        assert _as_dicts(kept._totals, set(todo)) == _as_dicts(fresh._totals, set(todo))
        return _as_dicts(kept._totals, set(todo))

    run_batch(ctx, w, ["a0"])  # its replacement takes a3: the counts are now an overlay
    before = w.copy()
    assert same_as_fresh(w) == ({"a1": 1}, {})
    run_batch(ctx, w, ["a1"])
    assert [p.name for p in w.sim.pods_on("a2")] == ["web-new2"], "a1's replacement should take a2"
    same_as_fresh(w)
    run_batch(ctx, w, ["a2"])
    same_as_fresh(w)
    assert same_as_fresh(before) == ({"a1": 1}, {})  # a2: none; web's only domain, a, holds the minimum


def _plan_record(plan):
    return (repr([(s.number, s.nodes, s.evictions, s.safe, s.constraints_after) for s in plan.steps]),
            plan.stranded, plan.explored, plan.search_exhausted, plan.safe)


def _fingerprint(world) -> tuple:
    """What a world is, as far as the rest of a plan can tell: every pod where it is (and
    whether terminating), the nodes (cordons), each node's pod list in order, the steps,
    strandings, pending replacements, what is left to evict, the budgets, the scheduler's
    start index, the replacement counter and the unbound pods."""
    sim = world.sim
    pods = tuple(sorted((key, p.node_name, p.terminating, p.phase) for key, p in sim.pods.items()))
    nodes = tuple((name, n.unschedulable) for name, n in sim.nodes.items())
    lists = tuple((name, tuple(p.key for p in sim.index.pods_by_node.get(name, ()))) for name in sim.nodes)
    return (pods, nodes, lists, repr(world.steps), repr(world.stranded),
            tuple((r.key, e.key) for r, e in world.pending), tuple(sorted(world.done)),
            tuple(sorted((n, tuple(p.key for p in ps)) for n, ps in world.remaining.items())),
            repr(world.budgets), sim.next_start, sim.seq, tuple(sorted(p.key for p in sim.index._unbound.get("", ()))))


def _batches(steps) -> list[tuple[str, ...]]:
    """The batches that played `steps`: a batch's later steps (PDB-deferred pods) cordon
    nothing and repeat its nodes."""
    out: list[tuple[str, ...]] = []
    for step in steps:
        if not out or step.nodes != out[-1] or step.cordoned:
            out.append(step.nodes)
    return out


def test_every_candidate_starts_from_the_world_its_path_leads_to(monkeypatch):
    """The search plays every candidate on its one world after a mark, and a failure or a
    step back up reverts it (World.fork / revert): on random clusters where it backtracks
    and falls back, every candidate starts from the world that playing its path (the
    batches of the steps before it) on a fresh copy of the root gives, and so does the
    plan's final world."""
    import random

    from test_drain_forced import _random_cluster
    from kubectl_tspread.views.drain.plan import _new_world
    from kubectl_tspread.views.drain.core.steps import run_batch

    monkeypatch.setattr(search, "forced_harm", lambda ctx, world: [])  # backtrack through traps too
    real = search.run_batch
    backtracked = fell_back = checked = 0
    for seed in range(120):
        snap, targets = _random_cluster(random.Random(seed))
        ctx, root = _new_world(snap, targets, PlanOptions(verify_remedies=False))
        pristine = root.copy()
        starts = []

        def recorded(ctx, world, batch):
            starts.append((_batches(world.steps), _fingerprint(world)))
            return real(ctx, world, batch)

        monkeypatch.setattr(search, "run_batch", recorded)
        s = search.Search(ctx, 1, 10_000)
        final, found = s.run(root)
        for path, print_ in starts:
            fresh = pristine.copy()
            for batch in path:
                run_batch(ctx, fresh, list(batch))
            assert _fingerprint(fresh) == print_, (seed, path)
            checked += 1
        fresh = pristine.copy()
        for batch in _batches(final.steps):
            run_batch(ctx, fresh, list(batch))
        assert _fingerprint(fresh) == _fingerprint(final), seed
        assert not final.marks and not final.sim.marks
        backtracked += s.explored > len(targets)
        fell_back += not found and s.deepest is not None
    assert backtracked >= 20 and fell_back >= 10 and checked >= 300, (backtracked, fell_back, checked)


def _caches_sound(sim) -> None:
    """Every value the simulation and its index keep derived from the pods (each node's usage
    totals in both, each memoised spread state's counts) is what computing it afresh gives."""
    from kubectl_tspread.engine import resources, spread

    index = sim.index
    for name, entry in index.node_cache.items():
        pods = index.pods_by_node.get(name, ())
        assert entry[0] == resources._usage(pods) and entry[1] == frozenset(p.key for p in pods), name
    for name, usage in sim._usage.items():
        rows = [sim._row_of(p) for p in index.pods_by_node.get(name, ())]
        assert usage == (tuple(map(sum, zip(*rows))) if rows else sim._row_of.zero), name
    for states in sim._spread.values():
        for st in states.values():
            fresh = spread.compute(index, st.pod)
            for cs, want in zip(st.constraints, fresh.constraints):
                assert {v: d.pods for v, d in cs.domains.items()} == {v: d.pods for v, d in want.domains.items()}
                assert dict(cs.node_counts.items()) == dict(want.node_counts.items())
                assert (cs.global_min, cs.skew) == (want.global_min, want.skew)


def test_revert_gives_back_the_world_and_what_follows_from_it():
    """World.fork / revert / commit / redo on the drains of random clusters, nested: a reverted
    world is the world a copy kept before the fork, and playing on from it gives what playing
    on from the copy gives (the caches keyed by node versions and states stay sound); an
    outer revert also undoes what an inner commit kept; a revert put back (under a mark of
    its own, kept) is the world played."""
    import random

    from test_drain_forced import _random_cluster
    from kubectl_tspread.views.drain.plan import _new_world
    from kubectl_tspread.views.drain.core.steps import run_batch

    reverted = redone = 0
    for seed in range(60):
        rng = random.Random(seed)
        snap, targets = _random_cluster(rng)
        if seed % 2:  # an extended resource: every placement takes the node-by-node walk and its caches
            for n in snap.nodes:
                n.allocatable["example.com/dongle"] = 3
            pods = tuple(dataclasses.replace(p, requests={**p.requests, "example.com/dongle": 1}) for p in snap.pods)
            snap = make_snapshot(snap.nodes, pods, workloads=snap.workloads)
        for options in (PlanOptions(verify_remedies=False), PlanOptions(verify_remedies=False, stage_cordons=True),
                        PlanOptions(verify_remedies=False, delete_drained_nodes=True)):
            ctx, world = _new_world(snap, targets, options)
            order = list(targets)
            rng.shuffle(order)
            for node in order:
                if node in world.done:
                    continue
                kept = world.copy()
                world.fork()
                run_batch(ctx, world, [node])
                world.fork()
                for other in order:
                    if other not in world.done:
                        run_batch(ctx, world, [other])
                        break
                world.commit()
                if rng.random() < 0.5:
                    world.revert()
                    assert _fingerprint(world) == _fingerprint(kept), (seed, node)
                    _caches_sound(world.sim)
                    reverted += 1
                    run_batch(ctx, world, [node])
                    run_batch(ctx, kept, [node])
                    assert _fingerprint(world) == _fingerprint(kept), (seed, node)
                else:  # reverted to be put back, as the fallback keeps its least bad candidate
                    played = _fingerprint(world)
                    undone = world.revert(redo=True)
                    assert _fingerprint(world) == _fingerprint(kept), (seed, node)
                    world.fork()
                    world.redo(undone)
                    assert _fingerprint(world) == played, (seed, node)
                    world.commit()
                    _caches_sound(world.sim)
                    redone += 1
                assert not world.marks and not world.sim.marks
    assert reverted >= 100 and redone >= 100, (reverted, redone)


def test_a_search_that_never_backtracks_copies_no_world(monkeypatch):
    """120 levels, each taking its first candidate: played on the one world, never copied."""
    from kubectl_tspread.views.drain.core.steps import World

    copies = []
    copy = World.copy
    monkeypatch.setattr(World, "copy", lambda self: copies.append(1) or copy(self))
    targets = [f"a{i}" for i in range(1, 121)]
    plan = plan_drain(make_snapshot(nodes_in({"a": 120, "b": 2}), []), targets, PlanOptions(verify_remedies=False))
    assert plan.safe and plan.explored == 120
    assert not copies


def test_without_a_backtracking_allowance_a_failed_level_ends_the_search(monkeypatch):
    """A remedy's re-plan (search_budget 0) may simulate one step per target: once every
    candidate of a level failed, no complete order fits in what is left, so the search
    does not go back up (at scale that was most of a re-plan's work); the fallback goes
    on from that level. Two plain nodes and twelve whose pods are pinned to them: the
    third level has only pinned nodes left and fails after DFS_CANDIDATES of them, with
    budget to spare."""
    snap, pinned = _pinned(12)
    free = [make_node(f"g{i}", zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
            for i in (1, 2)]
    spare = make_node("spare", zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
    pods = [make_pod(f"app-{n.name}", node=n.name, labels={"app": "other"}, owner="ReplicaSet/web-1")
            for n in free]
    snap = make_snapshot(snap.nodes + tuple(free) + (spare,), snap.pods + tuple(pods), workloads=[RS])
    targets = pinned + [n.name for n in free]
    tried = []
    real = search.run_batch

    def recorded(ctx, world, batch):
        ok = real(ctx, world, batch)
        tried.append((len(world.done) - len(batch), ok))
        return ok

    monkeypatch.setattr(search, "run_batch", recorded)
    for budget, goes_back in ((0, False), (10_000, True)):
        tried.clear()
        plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False, search_budget=budget))
        assert not plan.safe and len(plan.stranded) == 12
        first_failed_level = 2  # g1 and g2 drained, then only pinned nodes
        levels = [depth for depth, _ in tried]
        failed_at = levels.index(first_failed_level)
        went_back = any(d < first_failed_level for d in levels[failed_at:])
        assert went_back == goes_back, (budget, tried)


def _small_nodes_trap(per_zone: int, pods_per_node: int):
    """_zone_trap on nodes that hold `pods_per_node` pods: zone b's open nodes take the
    replacements (the other zones are at the skew limit) until they are full, then every
    level strands some, with candidates left to compare."""
    c = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    nodes = [make_node(f"{z}{i}", zone=z, allocatable={"cpu": 4000, "memory": 16 * GI, "pods": pods_per_node})
             for z in "abc" for i in range(1, per_zone + 1)]
    pods = [make_pod(f"web-{n.name}", node=n.name, labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for n in nodes]
    return make_snapshot(nodes, pods, workloads=[RS]), [f"b{i}" for i in range(1, per_zone + 1)]


def _unproven(monkeypatch) -> None:
    """forced.py's proof turned off: _small_nodes_trap's harm is then harm the fallback weighs
    (with the proof, every level's harm is proven and its first candidate is taken at once)."""
    monkeypatch.setattr(search, "forced_harm", lambda ctx, world: [])


def _greedy_on_copies(ctx, world, s):
    """The fallback's choice rule with every candidate played on a copy of the level's world
    (search.Search._greedy plays them on the world itself, reverting each): the reference."""
    proven = search._Proven(s.forced)
    while True:
        remaining = world.todo_nodes(ctx.targets)
        if not remaining:
            return world
        floor = (0, 0, -min(s.max_parallel, len(remaining)))
        before = search._before(ctx, world, proven)
        best, best_cost = None, None
        for batch in list(itertools.islice(s.batches(world, remaining), search.GREEDY_CANDIDATES)):
            w = world.copy()
            search.run_batch(ctx, w, batch)
            cost = search._badness(ctx, before, w, len(batch), proven)
            if best_cost is None or cost < best_cost:
                best, best_cost = w, cost
            if cost <= floor:
                break
        world = best


@pytest.mark.parametrize("staged", [False, True], ids=["cordons first", "staged cordons"])
@pytest.mark.parametrize("per_zone, pods_per_node", [(12, 2), (12, 3), (10, 110)])
def test_the_greedy_fallback_played_in_place_gives_the_plan_of_copies(per_zone, pods_per_node, staged, monkeypatch):
    """The fallback plays each candidate on the level's world after a mark, keeps the first
    that does no new harm, reverts the others and plays the least bad again: the world it
    ends with is the one the same rule played on copies ends with. With the cordons first,
    zone b is closed at step 1 and every level strands; with staged cordons zone b's open
    nodes take replacements first, and the harm comes later."""
    from kubectl_tspread.views.drain.plan import _new_world

    snap, targets = _small_nodes_trap(per_zone, pods_per_node)
    _unproven(monkeypatch)
    options = PlanOptions(verify_remedies=False, stage_cordons=staged)
    ctx, world = _new_world(snap, targets, options)
    reference = _greedy_on_copies(ctx, world.copy(), search.Search(ctx, 1, 0))
    in_place = search.Search(ctx, 1, 0)._greedy(world)
    assert in_place is world
    assert reference.stranded and _fingerprint(in_place) == _fingerprint(reference)
    plan = plan_drain(snap, targets, options)
    assert not plan.safe and plan.steps == tuple(reference.steps)


@pytest.mark.parametrize("per_zone, pods_per_node", [(12, 2), (16, 2), (16, 3), (24, 3)])
def test_each_candidate_of_a_harmful_level_starts_from_the_level_world(per_zone, pods_per_node, monkeypatch):
    """Where every candidate does harm the fallback plays them all, each after a mark that it
    then reverts, and puts the least bad back (World.redo) unless it was the last: each
    candidate starts from the level's world as it was before any candidate (same pods where
    they were, same steps and strandings), none is simulated twice, and no world is copied."""
    from kubectl_tspread.views.drain.core.steps import World

    snap, targets = _small_nodes_trap(per_zone, pods_per_node)
    _unproven(monkeypatch)
    starts: list[tuple[int, tuple]] = []
    copies: list[int] = []
    real_run, real_copy = search.run_batch, World.copy

    def recorded(ctx, world, batch):
        pods = tuple(sorted((key, world.sim.pods[key].node_name) for key in world.sim.pods))
        starts.append((len(world.done), (pods, len(world.steps), len(world.stranded), sorted(world.done))))
        return real_run(ctx, world, batch)

    monkeypatch.setattr(search, "run_batch", recorded)
    monkeypatch.setattr(World, "copy", lambda self: copies.append(len(self.done)) or real_copy(self))
    redone = []
    real_redo = World.redo
    monkeypatch.setattr(World, "redo", lambda self, redo: redone.append(len(self.done)) or real_redo(self, redo))
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False))
    assert not plan.safe and plan.stranded
    levels: dict[int, list[tuple]] = {}
    for done, state in starts:
        levels.setdefault(done, []).append(state)
    harmful = [done for done, states in levels.items() if len(states) >= search.GREEDY_CANDIDATES]
    assert len(harmful) >= 3, "too few harmful levels"
    for done in harmful:  # the root's plays are the depth-first search's candidates too
        assert done == 0 or len(levels[done]) == search.GREEDY_CANDIDATES, done
        assert all(state == levels[done][0] for state in levels[done]), done
    assert redone, "no least bad put back"
    assert not copies


def _order_options(case: str) -> PlanOptions:
    """The options of an _order_case: the zone case stages its cordons, so that replacements
    move into zone b's open target nodes and its shares change by a node or two at a level
    with the same minimum (with every target cordoned first, the closed zone b holds the
    minimum and lowers it at every level: no share is moved, each is made afresh)."""
    return PlanOptions(verify_remedies=False, delete_drained_nodes=case.startswith("deleting"),
                       stage_cordons=case.startswith("zone"))


def _order_case(case: str, host_skew: int = 1):
    """(snapshot, targets) of the order heuristic's tests: zone b of a trap of small nodes, or
    six nodes of three zones holding two workloads with a zone and a hostname constraint."""
    if case.startswith("zone"):
        return _small_nodes_trap(12, 2)
    zone = make_constraint(max_skew=1, node_taints_policy=IGNORE)
    host = make_constraint(HOSTNAME_KEY, max_skew=host_skew, node_taints_policy=IGNORE)
    nodes = [make_node(f"{z}{i}", zone=z, allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 6})
             for z in "abc" for i in range(1, 9)]
    pods = [make_pod(f"{app}-{n.name}-{k}", node=n.name, labels={"app": app}, spread=[zone, host],
                     owner=f"ReplicaSet/{app}-1")
            for n in nodes for app in ("web", "api") for k in range(1 + (len(n.name) + ord(n.name[-1])) % 2)]
    snap = make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "web-1", {"app": "web"}),
                                                make_workload("ReplicaSet", "api-1", {"app": "api"})])
    return snap, ["a1", "b2", "c3", "a4", "b5", "c6"]


@pytest.mark.parametrize("case", ["zone b, small nodes", "10 % with hostname spread", "deleting drained nodes"])
def test_the_order_heuristics_totals_kept_across_levels_are_fresh_ones(case, monkeypatch):
    """Search._share_totals moves each node's totals by the domains whose count or target
    nodes changed since the last level (Search._shares_after, from the count overlays; all
    of a state's domains when the minimum moved): at every level they are what a search with
    no memory computes, for every target not yet played. Each case takes both ways and the full computation."""
    snap, targets = _order_case(case)
    checked = []
    real = search.Search._share_totals

    def totals(self, hard, todo):
        got = real(self, hard, todo)
        fresh = real(search.Search(self.ctx, self.max_parallel, 0), hard, todo)
        assert _as_dicts(got, todo) == _as_dicts(fresh, todo), f"level {len(checked)}"
        checked.append(1)
        return got

    monkeypatch.setattr(search.Search, "_share_totals", totals)
    plan_drain(snap, targets, _order_options(case))
    assert len(checked) >= len(targets)


def test_the_order_heuristics_sort_is_by_empties_holds_surplus_then_name():
    """_Totals.ordered sorts the remaining nodes (numpy's lexsort) as sorted() with the
    heuristic's key tuple would, on random totals with many ties, moved one node at a time
    and by sets of nodes."""
    import random

    rng = random.Random(7)
    names = tuple(f"node-{rng.randrange(10_000):05d}-{i}" for i in range(300))
    holds = {n: rng.randrange(3) for n in names}
    surplus = {n: rng.randrange(-2, 3) for n in names}
    empties = {n: 1 for n in rng.sample(names, 20)}
    remaining = rng.sample(names, 200)
    want = sorted(remaining, key=lambda n: (empties.get(n, 0), holds[n], -surplus[n], n))
    totals = search._Totals(names)
    for n in names:  # one node at a time, then a set of many, taken out again
        totals.add([n], holds[n], surplus[n])
    big = frozenset(rng.sample(names, 50))
    totals.add(big, 2, 3)
    totals.add(big, -2, -3)
    assert totals.ordered(remaining, empties) == want
    assert _as_dicts(totals) == ({n: v for n, v in holds.items() if v}, {n: v for n, v in surplus.items() if v})


@pytest.mark.parametrize("per_zone, pods_per_node", [(12, 2), (8, 110)])
def test_each_steps_judgement_made_from_the_last_is_a_fresh_one(per_zone, pods_per_node, monkeypatch):
    """judge re-judges only the constraints whose state changed since its last answer (on
    any branch) and moves the total excess with them: after every simulated step, the
    answer and its excess are those of a judge with no memory."""
    import dataclasses

    from kubectl_tspread.views.drain.core import steps
    from kubectl_tspread.views.drain.core.memo import ObjectMemo

    snap, targets = _small_nodes_trap(per_zone, pods_per_node)
    real, checked = steps.judge, []

    def judge(ctx, sim):
        got = real(ctx, sim)
        fresh_ctx = dataclasses.replace(ctx, judged={}, last_judged=None, excesses=ObjectMemo())
        fresh = real(fresh_ctx, sim)
        assert [(a.workload, a.topology_key, dict(a.distribution), a.global_min, a.skew, a.limit, a.status)
                for a in got] == \
            [(a.workload, a.topology_key, dict(a.distribution), a.global_min, a.skew, a.limit, a.status)
             for a in fresh]
        assert steps.excess(ctx, got) == sum(a.skew - a.limit for a in fresh if a.exceeded)
        checked.append(steps.excess(ctx, got))
        return got

    monkeypatch.setattr(steps, "judge", judge)
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False))
    assert len(checked) >= len(targets) and any(checked) and not plan.safe


def test_the_nodes_left_to_do_follow_what_each_world_played():
    """World.todo_nodes keeps its last answer and takes out what was played since: on worlds
    that play batches, copies that go their own ways and another list of targets, it is what
    walking the targets gives each time."""
    from kubectl_tspread.views.drain.plan import _new_world
    from kubectl_tspread.views.drain.core.steps import run_batch

    snap, targets = _order_case("10 % with hostname spread")
    ctx, root = _new_world(snap, targets, PlanOptions(verify_remedies=False))
    fresh = lambda w, t: [n for n in t if n not in w.done]  # noqa: E731
    assert root.todo_nodes(ctx.targets) == list(ctx.targets)
    left, right = root.copy(), root.copy()
    for i, world in enumerate((left, right, left, left, right)):
        remaining = world.todo_nodes(ctx.targets)
        run_batch(ctx, world, [remaining[-1] if i % 2 else remaining[0]])
        for w in (root, left, right):
            assert w.todo_nodes(ctx.targets) == fresh(w, ctx.targets)
            assert w.todo_nodes(ctx.targets) == fresh(w, ctx.targets)  # the kept answer
        copy = world.copy()
        assert copy.todo_nodes(ctx.targets) == fresh(copy, ctx.targets)
    others = list(reversed(ctx.targets))  # another list: walked again, in its own order
    assert left.todo_nodes(others) == fresh(left, others)
    assert left.todo_nodes(ctx.targets) == fresh(left, ctx.targets)
    assert len(left.done) == 3 and len(right.done) == 2 and not root.done


def test_under_a_proof_the_fallback_still_weighs_the_harm_it_does_not_name():
    """Zone b's web replacements strand whatever the order (forced.py proves it), so a level
    whose only harm is web's takes its first candidate; but api's pods, pinned to b1 and b2,
    strand for a reason the proof does not name (no other node matches their nodeSelector):
    levels that would evict them weigh their candidates and leave those nodes to the end,
    where nothing else is left."""
    snap, targets = _zone_trap(4)
    api = [make_pod(f"api-{n}", node=n, labels={"app": "api"}, owner="ReplicaSet/api-1",
                    node_selector={HOSTNAME_KEY: n}) for n in ("b1", "b2")]
    snap = make_snapshot(list(snap.nodes), list(snap.pods) + api, workloads=[RS, make_workload("ReplicaSet", "api-1")])
    plan = plan_drain(snap, targets, PlanOptions(verify_remedies=False))
    assert not plan.safe and plan.no_safe_order
    assert [s.nodes for s in plan.steps] == [("b3",), ("b4",), ("b1",), ("b2",)]
    assert {s.name for s in plan.stranded if s.workload == "ReplicaSet/api-1"} == {"api-b1", "api-b2"}
    # levels 1 and 2 played b1 and b2 (api's harm) before the candidate whose harm is all
    # proven, which ends the level; level 3 weighed b1 against b2; level 4 had one
    assert plan.explored == 3 + 3 + 2 + 1


def test_the_search_goes_back_no_further_than_the_marks_it_keeps(monkeypatch):
    """The depth-first search keeps the marks of the BACKTRACK_DEPTH levels above the current
    one (each holds its level's undo entries): a search that must go back further ends as if
    its budget ran out (searchExhausted), and never holds more marks than that. With one level
    kept, random clusters whose search went back two levels or more end exhausted, and their
    plans still replay from their fallback's start (no mark is left open)."""
    import random

    from test_drain_forced import _random_cluster
    from kubectl_tspread.views.drain.core.steps import World

    monkeypatch.setattr(search, "forced_harm", lambda ctx, world: [])
    most = []
    real_fork = World.fork

    def counted(self):
        real_fork(self)
        most.append(len(self.marks))

    monkeypatch.setattr(World, "fork", counted)
    cut = 0
    for seed in range(120):
        snap, targets = _random_cluster(random.Random(seed))
        options = PlanOptions(verify_remedies=False, search_budget=10_000)
        monkeypatch.setattr(search, "BACKTRACK_DEPTH", 64)
        deep = plan_drain(snap, targets, options)
        monkeypatch.setattr(search, "BACKTRACK_DEPTH", 1)
        most.clear()
        shallow = plan_drain(snap, targets, options)
        assert max(most, default=0) <= 2, seed  # the level's mark and the candidate's
        if shallow.explored < deep.explored:
            assert shallow.search_exhausted and not shallow.safe, seed
            cut += 1
        else:
            assert _plan_record(shallow) == _plan_record(deep), seed
    assert cut >= 5, cut
