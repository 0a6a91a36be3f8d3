"""bench/lean_probe.py at the tiny size: its flat-array replay of the zone plan's harmless
prefix (and of the re-plan's that deletes the drained nodes) puts every replacement where the
planner does, and a wrong placement is counted."""

import pytest

from bench import lean_probe  # noqa: E402
from kubectl_tspread.views.drain.core import lean  # noqa: E402
from kubectl_tspread.views.drain.core.simulate import spread_key_of  # noqa: E402
from kubectl_tspread.model.plan import Eviction  # noqa: E402
from kubectl_tspread.model import ZONE_KEY  # noqa: E402


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    snapshot = lean_probe.load("tiny", str(tmp_path_factory.mktemp("bench")))
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, stamps, _, _ = lean_probe.plan_timed(snapshot, targets)
    return snapshot, plan, stamps


def test_the_replay_places_every_replacement_where_the_planner_does(planned):
    snapshot, plan, stamps = planned
    prefix = lean_probe.harmless_prefix(plan)
    assert prefix and len(prefix) < len(plan.steps)  # the tiny zone strands replacements later on
    assert len(stamps) >= len({s.nodes for s in prefix})  # one timestamp per simulated batch
    assert all(began <= end and before <= after for began, end, _, before, after in stamps)
    assert stamps[-1][4] > 0  # the planner's placements were timed
    differ, placed, took, placing = lean_probe.replay(lean_probe.FlatCluster(snapshot), plan, prefix)
    assert placed == sum(e.replaced for s in prefix for e in s.evictions) > 20
    assert differ == 0
    assert 0 <= placing <= took


def test_a_placement_the_planner_did_not_make_is_counted(planned):
    snapshot, plan, _ = planned

    class OneOver(lean_probe.FlatCluster):
        def place(self, pod):
            i = super().place(pod)
            return None if i is None else (i + 1) % self.size

    prefix = lean_probe.harmless_prefix(plan)
    differ, placed, _, _ = lean_probe.replay(OneOver(snapshot), plan, prefix)
    assert differ > 0


def test_the_stranding_step_ends_the_prefix(planned):
    _, plan, _ = planned
    prefix = lean_probe.harmless_prefix(plan)
    after = plan.steps[len(prefix)]
    assert any(e.replaced and e.predicted_node is None for e in after.evictions)
    assert all(e.predicted_node is not None for s in prefix for e in s.evictions if e.replaced)


def test_main_reports_the_two_costs(tmp_path, capsys):
    assert lean_probe.main(["--size", "tiny", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "harmless prefix" in out and "placements that differ: 0" in out


@pytest.mark.parametrize("deleting", [False, True])
def test_the_window_judged_first_gives_the_same_placements(tmp_path_factory, monkeypatch, deleting):
    """With the scheduler looking for 5 of the tiny cluster's 20 nodes, both the planner and
    the probe judge a window of nodes first; every placement still agrees, also as nodes are
    deleted."""
    from kubectl_tspread.views.drain.core import placement

    monkeypatch.setattr(placement, "num_feasible_to_find", lambda total, percentage=0: min(total, 5))
    monkeypatch.setattr(lean, "num_feasible_to_find", lambda total, percentage=0: min(total, 5))
    windows = []
    feasible = lean_probe.FlatCluster._feasible

    def counted(self, pod, shape, hard, rows, parts=None):
        windows.append(rows != slice(None))
        return feasible(self, pod, shape, hard, rows, parts)

    monkeypatch.setattr(lean_probe.FlatCluster, "_feasible", counted)
    snapshot = lean_probe.load("tiny", str(tmp_path_factory.mktemp("bench")))
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, _, _, _ = lean_probe.plan_timed(snapshot, targets, deleting)
    prefix = lean_probe.harmless_prefix(plan)
    assert any(s.deleted_nodes for s in prefix) == deleting
    differ, placed, _, _ = lean_probe.replay(lean_probe.FlatCluster(snapshot), plan, prefix, deleting)
    assert placed > 20 and differ == 0
    assert any(windows) and not all(windows)


def test_the_replan_that_deletes_nodes_places_every_replacement_where_the_planner_does(planned):
    snapshot, _, _ = planned
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, _, _, _ = lean_probe.plan_timed(snapshot, targets, delete_drained_nodes=True)
    prefix = lean_probe.harmless_prefix(plan)
    deleted = [n for s in prefix for n in s.deleted_nodes]
    assert len(deleted) >= 3
    flat = lean_probe.FlatCluster(snapshot)
    differ, placed, _, _ = lean_probe.replay(flat, plan, prefix, delete_drained_nodes=True)
    assert placed == sum(e.replaced for s in prefix for e in s.evictions) > 20
    assert differ == 0
    assert flat.size == len(snapshot.nodes) - len(deleted)
    assert not {flat.order[i] for i in flat.walk} & set(deleted)


def test_a_deleted_node_leaves_the_walk_and_the_counts_as_in_the_planner(planned):
    """After the same deletions, the walk is the planner's scan order and every constraint's
    global minimum and skew are the planner's. The whole zone goes (the tiny cluster's
    constraints are all zone ones): its domain leaves the counts with its last node."""
    from kubectl_tspread.views.drain.core.simulate import SimCluster

    snapshot, _, _ = planned
    flat, sim = lean_probe.FlatCluster(snapshot), SimCluster(snapshot)
    pods = [p for p in flat.pods.values() if p.spread and p.node_name]
    for p in pods:
        flat.prepare(p)
    zone = sorted(n.name for n in snapshot.nodes if n.labels.get(ZONE_KEY) == lean_probe.ZONE)
    gone = zone[1:] + zone[:1]  # the zone's first node late: the zones' order moves with it
    assert len(gone) >= 3
    for name in gone:
        flat.delete_node(name)
        sim.delete_node(name)
        assert [flat.order[i] for i in flat.walk] == list(sim.scan_order())
    checked = 0
    for p in pods:
        if p.node_name in gone:
            continue
        hard, soft = flat._templates[(p.namespace, spread_key_of(p))]
        for c, cs in zip(hard + soft, [cs for cs in sim.spread_state(p).constraints if cs.constraint.hard]
                         + [cs for cs in sim.spread_state(p).constraints if not cs.constraint.hard]):
            assert (c.minimum(), max(c.histogram, default=0) - c.minimum()) == (cs.global_min, cs.skew)
            assert sum(c.histogram.values()) == len(cs.domains)
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("deleting", [False, True])
def test_the_whole_plan_replays_with_its_stranded_replacements(planned, deleting):
    """Past the prefix the tiny zone strands replacements: the replay strands the same ones
    (they wait, retried at each later step) and places the rest where the planner does."""
    snapshot, _, _ = planned
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, _, _, _ = lean_probe.plan_timed(snapshot, targets, deleting)
    stranded = sum(e.replaced and e.predicted_node is None for s in plan.steps for e in s.evictions)
    assert stranded > 5
    flat, marks = lean_probe.FlatCluster(snapshot), []
    differ, placed, took, _ = lean_probe.replay(flat, plan, list(plan.steps), deleting, marks)
    assert differ == 0
    assert placed == sum(e.replaced for s in plan.steps for e in s.evictions)
    assert len(flat.pending) == stranded  # no retry bound one: the planner's did not either
    assert [m[0] for m in marks] == [s.number for s in plan.steps] and marks[-1][1] <= took


def test_a_stranding_the_planner_did_not_make_is_counted(planned):
    snapshot, plan, _ = planned

    class Nowhere(lean_probe.FlatCluster):
        def place(self, pod):
            return None

    differ, placed, _, _ = lean_probe.replay(Nowhere(snapshot), plan, lean_probe.harmless_prefix(plan))
    assert differ == placed > 20


def test_a_stuck_replacement_is_retried_once_its_counts_move(planned):
    """A replacement that found no node is not tried again while nothing could make room or
    move its hard constraints' counts (World.note_stuck); once a pod it counts leaves, the
    retry finds it a node and binds it there."""
    snapshot, _, _ = planned
    flat = lean_probe.FlatCluster(snapshot)
    pod = next(p for p in flat.pods.values() if p.spread and p.key in flat.node_of
               and any(c.hard for c in p.spread) and p.owner is not None and p.owner.kind == "ReplicaSet")
    r = flat.sim.replacement_for(pod)
    flat.prepare(r)
    flat.strand(r, Eviction(r.namespace, r.name, "", None, True))
    tried = []

    def decide(p, e, i):
        tried.append(i)
        return i

    assert flat.retry_pending(decide) == [] and tried == [None]  # stuck: not even placed
    other = next(p for p in flat.pods.values() if p.key in flat.node_of and p is not pod
                 and p.namespace == pod.namespace and p.labels == pod.labels)
    flat.move(other, flat.node_of.pop(other.key), -1)
    bound = flat.retry_pending(decide)
    assert len(bound) == 1 and bound[0][0] is r and tried[-1] is not None
    assert flat.pending == [] and flat.first_pending == {}
    assert flat.free["pods"].sum() == lean_probe.FlatCluster(snapshot).free["pods"].sum()  # one out, one in


@pytest.mark.parametrize("deleting", [False, True])
def test_the_order_heuristic_on_flat_arrays_is_the_planners_at_every_level(planned, deleting):
    from kubectl_tspread.views.drain.plan import build_context

    snapshot, _, _ = planned
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, _, _, _ = lean_probe.plan_timed(snapshot, targets, deleting)
    assert len(lean_probe.ORDERS) == len(targets) and lean_probe.ORDER_SECONDS[0] > 0
    flat = lean_probe.FlatCluster(snapshot)
    tracked = build_context(flat.sim, targets, lean_probe.plan_options(snapshot, targets, deleting)).tracked
    heuristic = lean_probe.Heuristic(flat, tracked, list(targets))
    assert heuristic.hard
    differ, _, _, _ = lean_probe.replay(flat, plan, list(plan.steps), deleting, None, heuristic)
    assert differ == 0
    assert heuristic.levels == len(targets) and heuristic.differ == 0 and heuristic.first_difference is None


def test_an_order_the_planner_did_not_make_is_counted(planned):
    from kubectl_tspread.views.drain.plan import build_context

    snapshot, plan, _ = planned
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    lean_probe.plan_timed(snapshot, targets)  # ORDERS: this plan's

    class ByName(lean_probe.Heuristic):
        def order(self, remaining):
            return sorted(remaining)

    flat = lean_probe.FlatCluster(snapshot)
    tracked = build_context(flat.sim, targets, lean_probe.plan_options(snapshot, targets)).tracked
    heuristic = ByName(flat, tracked, list(targets))
    lean_probe.replay(flat, plan, list(plan.steps), False, None, heuristic)
    assert heuristic.differ > 0 and heuristic.first_difference[0] == 0


def test_a_target_that_is_its_domains_last_open_node_goes_last_as_in_the_planner(planned):
    """Rule 1 of the order heuristic (search.py), which a zone's own drain never meets: a
    target whose cordon would leave a tracked constraint's domain without a schedulable node
    goes after the others. Two targets in two zones, the one the planner orders first on the
    cluster as it is, then every other node of its zone cordoned: the flat order is the
    planner's, and that target now goes last."""
    from kubectl_tspread.views.drain.plan import _new_world
    from kubectl_tspread.views.drain.core.search import Search

    snapshot, _, _ = planned
    zones: dict[str, list[str]] = {}
    for n in sorted(snapshot.nodes, key=lambda n: n.name):
        zones.setdefault(n.labels[ZONE_KEY], []).append(n.name)
    options = lean_probe.plan_options(snapshot, ())  # the plan's: no target read
    (_, a), (_, b) = sorted(zones.items())[:2]
    pairs = [(x, y) for x in a for y in b] + [(y, x) for x in a for y in b]
    for targets in pairs:
        ctx, world = _new_world(snapshot, targets, options)
        if Search(ctx, 1, options.search_budget).order(world, list(targets))[0] == targets[0]:
            break
    else:
        pytest.fail("no pair of targets in two zones where the planner orders the first one first")
    first, second = targets
    others = [n for n in (a if first in a else b) if n != first]
    ctx, world = _new_world(snapshot, targets, options)
    world.sim.cordon(others)
    planner = Search(ctx, 1, options.search_budget).order(world, list(targets))
    flat = lean_probe.FlatCluster(snapshot)
    heuristic = lean_probe.Heuristic(flat, ctx.tracked, list(targets))
    assert heuristic.partitions
    for name in others:
        flat.cordon(name)
    assert heuristic.order(list(targets)) == planner == [second, first]


def _state(flat):
    """What the replay leaves of a cluster: room per node, counts per constraint, the pending."""
    free = {r: a.copy() for r, a in flat.free.items()}
    counts = [(c.per_node.copy(), c.per_domain.copy(), dict(c.histogram), list(c.members), c.forced)
              for c in flat.constraints]
    # a pending replacement by the eviction it replaces (the replay names its own replacements
    # in the order it makes them, candidates that were rolled back included)
    return free, counts, [(e.namespace, e.name) for _, e in flat.pending], flat.next_start, flat.walk


@pytest.mark.parametrize("deleting", [False, True])
def test_the_candidates_the_planner_did_not_keep_are_played_and_rolled_back(planned, deleting):
    """Each batch the planner simulated and did not keep is played from its level's state
    (every placement checked against the planner's) and undone: the replay then ends where
    the replay of the kept batches alone does."""
    import numpy as np

    snapshot, _, _ = planned
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, _, _, _ = lean_probe.plan_timed(snapshot, targets, deleting)
    kept = lean_probe.FlatCluster(snapshot)
    _, placed, _, _ = lean_probe.replay(kept, plan, list(plan.steps), deleting)
    both = lean_probe.FlatCluster(snapshot)
    differ, placed_both, _, _ = lean_probe.replay(both, plan, list(plan.steps), deleting, rejected=True)
    assert differ == 0
    played, undone = lean_probe.REJECTED
    assert played >= 1 and undone > 0 and placed_both > placed
    a, b = _state(kept), _state(both)
    assert all(np.array_equal(a[0][r], b[0][r]) for r in a[0])
    assert len(a[1]) == len(b[1]) and all(
        np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) and x[2:] == y[2:] for x, y in zip(a[1], b[1]))
    assert a[2] == b[2] and a[3] == b[3]
    assert (a[4] is None) == (b[4] is None) and (a[4] is None or np.array_equal(a[4], b[4]))


def test_a_rollback_undoes_deletions_and_a_stranding(planned):
    """mark, then the whole zone cordoned, its pods evicted and its nodes deleted (its domain
    leaves the counts with the last one), and a replacement stranded; rollback puts every
    array, count and list back as it was."""
    snapshot, _, _ = planned
    flat = lean_probe.FlatCluster(snapshot)
    zone = sorted(n.name for n in snapshot.nodes if n.labels.get(ZONE_KEY) == lean_probe.ZONE)
    pod = next(p for p in flat.pods.values() if p.spread and flat.node_of.get(p.key) == flat.position[zone[0]]
               and p.owner is not None and p.owner.kind == "ReplicaSet")
    for p in flat.pods.values():
        if p.spread:
            flat.prepare(p)
    before = _state(flat)
    cordoned, open_ = flat.cordoned.copy(), flat.open.copy()
    saved = flat.mark()
    at = {flat.position[name] for name in zone}
    for name in zone:
        flat.cordon(name)
    for p in [p for p in flat.pods.values() if flat.node_of.get(p.key) in at]:
        flat.move(p, flat.unbind(p), -1)
    for name in zone:
        flat.delete_node(name)
    r = flat.sim.replacement_for(pod)
    flat.strand(r, Eviction(pod.namespace, pod.name, zone[0], None, True))
    assert flat.size == len(snapshot.nodes) - len(zone) and flat.pending
    assert any(c.histogram != x[2] for c, x in zip(flat.constraints, before[1]))  # a domain left the counts
    assert flat.rollback(saved) > len(zone)
    after = _state(flat)
    assert flat.size == len(snapshot.nodes) and flat.walk is None and flat.pending == []
    assert flat.node_of[pod.key] == flat.position[zone[0]]
    assert (flat.cordoned == cordoned).all() and (flat.open == open_).all()
    assert all((before[0][r] == after[0][r]).all() for r in before[0])
    assert all((x[0] == y[0]).all() and (x[1] == y[1]).all() and x[2:] == y[2:] for x, y in zip(before[1], after[1]))
