"""kube-scheduler's Filter walk (engine/walk.py): how many feasible nodes it wants, and the
walk over a mask of the nodes in node-tree order; NodeResourcesFit in array form against its
scalar form (engine/resources.py). The drain planner's node-by-node walk is held against the
array walk in tests/test_drain_vector.py."""

from __future__ import annotations

import random

import numpy as np
import pytest

from conftest import GI, make_node, make_pod
from kubectl_tspread.engine import resources, walk
from kubectl_tspread.engine.walk import num_feasible_to_find


@pytest.mark.parametrize("nodes,percentage,expected", [
    pytest.param(0, 0, 0, id="no nodes: nothing to find"),
    pytest.param(99, 0, 99, id="99 nodes: below the minimum, all of them"),
    pytest.param(100, 0, 100, id="100 nodes: 50% would be 50, the minimum 100 wins"),
    pytest.param(500, 0, 230, id="500 nodes: 50 - 500/125 = 46%"),
    pytest.param(1000, 0, 420, id="1000 nodes: 42%"),
    pytest.param(5000, 0, 500, id="5000 nodes: 10%"),
    pytest.param(20000, 0, 1000, id="20000 nodes: the 5% floor"),
    pytest.param(5000, 30, 1500, id="5000 nodes, percentageOfNodesToScore 30"),
    pytest.param(5000, 100, 5000, id="percentageOfNodesToScore 100: every node"),
])
def test_num_feasible_to_find(nodes, percentage, expected):
    assert num_feasible_to_find(nodes, percentage) == expected


def test_a_window_is_the_run_of_positions_from_the_start_or_every_node():
    """walk.window: the `span` positions from the start, a slice, or their positions in walk order
    when the run wraps past the last node; None (every node is judged) when the run would cover
    every node or hold fewer than wanted."""
    assert walk.window(10, 50, 20, 100) == slice(10, 60)
    assert walk.window(50, 50, 20, 100) == slice(50, 100)  # ends at the last node
    wrapped = walk.window(80, 30, 20, 100)
    assert wrapped.tolist() == list(range(80, 100)) + list(range(10))
    assert walk.window(0, 100, 20, 100) is None  # every node
    assert walk.window(0, 10, 20, 100) is None  # fewer than wanted
    mask = np.zeros(50, dtype=bool)
    mask[[3, 9, 20, 41]] = True
    found, examined = walk.walk_window(mask, slice(10, 60), 3)
    assert found.tolist() == [13, 19, 30] and examined == 21
    assert walk.walk_window(mask, slice(10, 60), 5) is None  # the walk goes on past the window
    mask = np.zeros(30, dtype=bool)
    mask[[2, 19, 25]] = True  # positions 82, 99 and 5 of the wrapped run
    found, examined = walk.walk_window(mask, wrapped, 3)
    assert found.tolist() == [82, 99, 5] and examined == 26


@pytest.mark.parametrize("seed", range(8))
def test_a_walk_begun_in_a_window_is_the_walk(seed):
    """walk_window over window()'s positions (wrapping or not) finds what walk finds over
    every node, whenever the window holds the wanted nodes."""
    rng = random.Random(seed)
    total = rng.randint(20, 80)
    mask = np.array([rng.random() < 0.5 for _ in range(total)])
    checked = 0
    for start in range(total):
        want = rng.randint(1, 8)
        rows = walk.window(start, rng.randint(want, total - 1), want, total)
        got = walk.walk_window(mask[rows], rows, want) if rows is not None else None
        if got is None:
            continue
        checked += 1
        found, examined = walk.walk(mask, start, want, total)
        assert (got[0].tolist(), got[1]) == (found.tolist(), examined), (start, want)
    assert checked



@pytest.mark.parametrize("seed", range(6))
def test_a_walk_takes_the_first_wanted_nodes_from_the_start(seed):
    """walk.walk against the walk spelled out node by node: from the start, wrapping, until
    `want` nodes pass; every node examined when fewer pass."""
    rng = random.Random(seed)
    total = rng.randint(1, 60)
    mask = np.array([rng.random() < 0.4 for _ in range(total)])
    start, want = rng.randrange(total), rng.randint(1, total)
    found, examined = [], 0
    for k in range(total):
        examined += 1
        i = (start + k) % total
        if mask[i]:
            found.append(i)
            if len(found) == want:
                break
    got, got_examined = walk.walk(mask, start, want, total)
    assert (got.tolist(), got_examined) == (found, examined)


@pytest.mark.parametrize("seed", range(10))
def test_resource_fit_in_arrays_is_the_scalar_fit(seed):
    """resources.fits_array over random nodes, usages and requests (zero requests, unrequested
    resources, a full pod count) says a node fits exactly when _shortages finds nothing."""
    rng = random.Random(seed)
    names = ("cpu", "memory", "ephemeral-storage")
    nodes, usages = [], []
    for i in range(40):
        alloc = {"cpu": rng.choice([0, 2000, 4000]), "memory": rng.choice([4, 16]) * GI,
                 "ephemeral-storage": rng.choice([0, 20 * GI]), "pods": rng.choice([3, 110])}
        used = {k: rng.randint(0, max(1, alloc[k])) for k in names}
        nodes.append(make_node(f"n{i}", allocatable=alloc))
        usages.append(resources.NodeUsage(rng.randint(0, alloc["pods"]), used, ()))
    free = {k: np.array([n.allocatable.get(k, 0) - u.requested.get(k, 0) for n, u in zip(nodes, usages)])
            for k in names}
    free["pods"] = np.array([n.allocatable["pods"] - u.pods for n, u in zip(nodes, usages)])
    for _ in range(20):
        requests = {k: rng.choice([0, 0, 100, 1500, 3 * GI]) for k in rng.sample(names, rng.randint(0, 3))}
        exact = rng.choice(names)  # what some node has left, to the unit: fits there, and no more
        requests[exact] = max(1, int(free[exact][rng.randrange(len(nodes))]))
        pod = make_pod("p", requests=requests)
        want = [not resources._shortages(pod, n, u) for n, u in zip(nodes, usages)]
        assert resources.fits_array(free, pod.requests).tolist() == want
        rows = slice(5, 25)
        assert resources.fits_array(free, pod.requests, rows).tolist() == want[rows]
