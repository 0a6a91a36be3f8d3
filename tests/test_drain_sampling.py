"""The placer walks nodes like kube-scheduler with percentageOfNodesToScore unset: on 100
nodes or more it stops filtering once num_feasible_to_find(N) nodes are feasible, scores
only those, starts where the previous placement stopped (nextStartNodeIndex), and walks
the node tree's order (zones round robin); below 100 nodes every node is scored."""

from __future__ import annotations

import pytest

from conftest import GI, make_node, make_pod, make_snapshot
from kubectl_tspread.views.drain.core.placement import Placer
from kubectl_tspread.engine.walk import round_robin, zone_lists
from kubectl_tspread.views.drain.core.simulate import SimCluster

SMALL = {"cpu": 4000, "memory": 16 * GI, "pods": 110}
BIG = {"cpu": 64000, "memory": 256 * GI, "pods": 110}


def node_tree_order(nodes) -> tuple[str, ...]:
    """The scheduler's node tree order: names round robin over zones, the first node of every
    zone, then the second..."""
    return round_robin(zone_lists(nodes).values())


def _cluster(count: int, big: str) -> SimCluster:
    """`count` empty nodes of one zone, all alike except `big` (16x the room: the best
    LeastAllocated score)."""
    nodes = [make_node(f"n{i:03d}", zone="a", allocatable=BIG if f"n{i:03d}" == big else SMALL)
             for i in range(count)]
    return SimCluster(make_snapshot(nodes, []))


def _pending():
    return make_pod("web-x", labels={"app": "web"}, requests={"cpu": 500, "memory": GI})


def test_at_120_nodes_the_best_node_outside_the_sample_is_not_chosen_until_the_walk_reaches_it():
    sim, placer = _cluster(120, big="n110"), Placer()
    first = placer.place(sim, _pending())
    # 100 feasible nodes wanted: the walk stops at n099 and never scores n110
    assert len(first.feasible) == 100 and "n110" not in first.feasible
    assert first.node == "n000"  # all sampled nodes tie: the first name
    assert sim.next_start == 100
    # the next placement starts at n100, wraps round, and now sees n110
    second = placer.place(sim, _pending())
    assert second.node == "n110" and second.feasible[0] == "n100"
    assert sim.next_start == 80


def test_below_100_nodes_every_node_is_scored():
    sim, placer = _cluster(99, big="n098"), Placer()
    pl = placer.place(sim, _pending())
    assert pl.node == "n098" and len(pl.feasible) == 99
    assert sim.next_start == 0  # 99 examined of 99: back where it started


def test_a_placement_that_fails_examines_every_node():
    nodes = [make_node(f"n{i:03d}", zone="a", allocatable=SMALL) for i in range(150)]
    sim, placer = SimCluster(make_snapshot(nodes, [])), Placer()
    huge = make_pod("web-x", labels={"app": "web"}, requests={"cpu": 8000, "memory": GI})
    pl = placer.place(sim, huge)
    assert pl.node is None and sum(pl.reasons.values()) == 150


def test_forks_carry_the_start_index():
    sim, placer = _cluster(120, big="n110"), Placer()
    placer.place(sim, _pending())
    fork = sim.copy()
    assert fork.next_start == 100
    placer.place(fork, _pending())
    assert fork.next_start == 80 and sim.next_start == 100


@pytest.mark.parametrize("layout,expected", [
    pytest.param({"a1": "a", "a2": "a", "b1": "b", "c1": "c", "c2": "c", "c3": "c"},
                 ["a1", "b1", "c1", "a2", "c2", "c3"], id="3 zones [2,1,3]: round robin, exhausted zones skipped"),
    pytest.param({"x1": None, "x2": None}, ["x1", "x2"], id="no zone labels: one group, name order"),
])
def test_node_tree_order(layout, expected):
    nodes = [make_node(name, zone=zone) for name, zone in layout.items()]
    assert list(node_tree_order(nodes)) == expected


@pytest.mark.parametrize("seed", range(40))
def test_round_robin_takes_the_kth_name_of_every_list_long_enough_in_turn(seed):
    """round_robin against its definition: lists of any lengths, empty ones included."""
    import random

    rng = random.Random(seed)
    lists = [tuple(f"z{z}-{i}" for i in range(rng.choice((0, 1, 2, 5, rng.randrange(12)))))
             for z in range(rng.randrange(6))]
    longest = max(map(len, lists), default=0)
    expected = tuple(names[k] for k in range(longest) for names in lists if k < len(names))
    assert round_robin(lists) == expected
    assert round_robin(iter(lists)) == expected  # any iterable of lists, read once


def test_the_scan_order_after_node_deletions_is_the_node_tree_order_of_the_nodes_left():
    """A node-deleting drain keeps the zone lists across deletions instead of making them
    anew: deleting a zone's first node must move that zone behind a zone whose first node
    now comes earlier (the nodes are walked in name order), in every fork too."""
    import random

    layout = {"a1": "a", "b1": "b", "c1": "c", "a2": "a", "c2": "c", "b3": "b", "a3": "a", "c4": "c", "b5": "b"}
    nodes = sorted((make_node(name, zone=zone) for name, zone in layout.items()), key=lambda n: n.name)
    for seed in range(30):
        sim = SimCluster(make_snapshot(nodes, []))
        sim.scan_order()
        left = sorted(layout)
        rng = random.Random(seed)
        forks = []
        while left:
            name = rng.choice(left)
            left.remove(name)
            if rng.random() < 0.3:
                forks.append((sim.copy(), list(left) + [name]))
            sim.delete_node(name)
            expected = node_tree_order([n for n in nodes if n.name in left])
            assert sim.scan_order() == expected, (seed, name)
        for fork, names in forks:  # a copy made before a deletion is not moved by it
            assert fork.scan_order() == node_tree_order([n for n in nodes if n.name in names])
    # n1 and n9 in zone a, n5 in zone b: a leads until n1 goes, then b does
    sim = SimCluster(make_snapshot([make_node(n, zone=z) for n, z in (("n9", "a"), ("n5", "b"), ("n1", "a"))], []))
    assert sim.scan_order() == ("n1", "n5", "n9")
    sim.delete_node("n1")
    assert sim.scan_order() == ("n5", "n9")


def test_templates_differing_only_in_requests_share_all_but_the_resource_fit():
    """n1 has an untolerated taint, n2 1 cpu: a 100m pod fills the shared verdicts, and a
    2-cpu pod of the same shape still finds n2 short of cpu (as a placer of its own says)."""
    nodes = [make_node("n1", zone="a", allocatable=SMALL, taints=["dedicated=gpu:NoSchedule"]),
             make_node("n2", zone="a", allocatable={"cpu": 1000, "memory": 16 * GI, "pods": 110})]
    snap = make_snapshot(nodes, [])
    small = make_pod("small-x", labels={"app": "small"}, requests={"cpu": 100, "memory": GI})
    big = make_pod("big-x", labels={"app": "big"}, requests={"cpu": 2000, "memory": GI})
    shared, sim = Placer(), SimCluster(snap)
    assert shared.place(sim, small).node == "n2"
    after_small = shared.place(sim, big)
    alone = Placer().place(SimCluster(snap), big)
    assert after_small.node is None and alone.node is None
    assert dict(after_small.reasons) == dict(alone.reasons) == {
        "node(s) had untolerated taint(s)": 1, "Insufficient cpu": 1}


def test_version_and_node_arrays_carried_over_node_deletions_are_the_maps_in_scan_order():
    """After node deletions the version and Node arrays of the old scan order are kept (and
    moved by binds, evictions and cordons in between) and carried over to the new order when
    asked. In every copy and after any mix of changes they equal the versions and Node stamps
    read in scan order, and the positions are the scan order's; rows_from answers the
    permutation from any earlier positions, carried over or not."""
    import random

    import numpy as np

    nodes = [make_node(f"{z}{i:02d}", zone=z, allocatable=BIG) for z in "abc" for i in range(15)]
    for seed in range(12):
        rng = random.Random(seed)
        sims = [SimCluster(make_snapshot(nodes, []))]
        carried = 0
        for k in range(40):
            sim = rng.choice(sims)
            names = sorted(sim.nodes)
            before = sim.version_positions() if rng.random() < 0.7 else None
            if rng.random() < 0.6:
                sim.version_array()
                sim.node_object_array()
            for _ in range(rng.choice((1, 1, 2))):  # a step of one or two nodes
                op, name = rng.random(), rng.choice(names)
                if op < 0.35 and len(names) > 5:
                    sim.delete_node(name)
                    names.remove(name)
                elif op < 0.6:
                    sim.cordon([name])
                elif op < 0.85:
                    pod = make_pod(f"p{k}", labels={"app": "web"})
                    sim.bind(pod, name)
                else:
                    sims.append(sim.copy())
            was = sim._versions
            pick = rng.random()  # read in any order: each must carry both arrays
            got_versions = sim.version_array() if pick < 0.5 else None
            got_nodes = sim.node_object_array()
            if got_versions is None:
                got_versions = sim.version_array()
            order = sim.scan_order()
            carried += was is not None and was is not sim._versions and sim._carried is not None
            assert sim.version_positions() == {n: i for i, n in enumerate(order)}, (seed, k)
            assert got_versions.tolist() == [sim.version.get(n, 0) for n in order], (seed, k)
            assert got_nodes.tolist() == [sim._node_stamps.get(n, 0) for n in order], (seed, k)
            if before is not None and set(order) <= before.keys():
                assert np.array_equal(sim.rows_from(before), [before[n] for n in order]), (seed, k)
        assert carried, seed
