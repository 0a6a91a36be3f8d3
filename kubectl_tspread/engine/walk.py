"""kube-scheduler's Filter walk (pkg/scheduler/schedule_one.go, findNodesThatPassFilters): the nodes are judged in
node-tree order from a rotating start index (nextStartNodeIndex), and the walk stops once it holds
`num_feasible_to_find(N)` feasible nodes; only those are scored, and the next walk starts past the last node examined.
The node tree (pkg/scheduler/backend/cache/node_tree.go) lists nodes round robin over zones (`zone_lists`,
`round_robin`).

The rule for how many to find is scalar; the walk itself is here in array form, over a boolean mask of the nodes in
node-tree order (True: passes every filter). The drain planner's node-by-node walk (views/drain/core/placement.py)
applies the same rule with the engine's filters, and tests/test_drain_vector.py holds the two against each other.
"""

from __future__ import annotations

import itertools
from typing import Iterable

import numpy as np

from kubectl_tspread.model import ZONE_KEY, Node

# with percentageOfNodesToScore unset: every node below MIN_FEASIBLE_NODES, else max(5, 50 − N/125) % of them, and
# never fewer than MIN_FEASIBLE_NODES
MIN_FEASIBLE_NODES = 100
MIN_FEASIBLE_PERCENT = 5
BASE_PERCENT = 50
NODES_PER_PERCENT = 125
REGION_KEY = "topology.kubernetes.io/region"
BETA_REGION_KEY = "failure-domain.beta.kubernetes.io/region"
BETA_ZONE_KEY = "failure-domain.beta.kubernetes.io/zone"


def num_feasible_to_find(total: int, percentage: int = 0) -> int:
    """How many feasible nodes the walk looks for among `total` (`percentage`: percentageOfNodesToScore, 0 for the
    adaptive default, 100 or more for every node).

    >>> num_feasible_to_find(99), num_feasible_to_find(500), num_feasible_to_find(5000)
    (99, 230, 500)
    """
    if total < MIN_FEASIBLE_NODES or percentage >= 100:
        return total
    if percentage <= 0:
        percentage = max(MIN_FEASIBLE_PERCENT, BASE_PERCENT - total // NODES_PER_PERCENT)
    return max(MIN_FEASIBLE_NODES, total * percentage // 100)


def walk(mask, start: int, want: int, total: int):
    """(the feasible positions found, in walk order; how many nodes were examined): the first `want` True positions of
    `mask` from `start`, wrapping around; every node is examined when fewer pass."""
    rotated = from_start(mask.nonzero()[0], start)
    if len(rotated) >= want:
        found = rotated[:want]
        return found, (int(found[-1]) - start) % total + 1
    return rotated, total


def from_start(idx, start: int):
    """Sorted positions `idx` in walk order from `start`: those at or past it, then the others."""
    k = int(idx.searchsorted(start))
    return np.concatenate((idx[k:], idx[:k])) if k else idx


def window(start: int, span: int, want: int, total: int):
    """The `span` positions from `start` within which a walk wanting `want` is expected to stop, to be judged before
    the others: a slice, or for a run wrapping past the last node its positions in walk order (an index array: one
    judgement of those, where two runs would cost more array operations than judging every node at once); None when
    that is every node or fewer than `want`."""
    if span >= total or span < want:
        return None
    if start + span <= total:
        return slice(start, start + span)
    return _positions(total)[start:start + span]


_CYCLES: dict[int, object] = {}  # total -> 0..total-1 twice: a wrapping run is a view of it


def _positions(total: int):
    got = _CYCLES.get(total)
    if got is None:
        if len(_CYCLES) >= 64:
            _CYCLES.clear()
        got = _CYCLES[total] = np.arange(2 * total, dtype=np.int64) % total
        got.flags.writeable = False
    return got


def walk_window(mask, rows, want: int):
    """`walk` over the nodes of a `window` (`mask` is theirs, in walk order): (found, examined), or None when fewer than
    `want` pass there (the walk goes on past the window)."""
    idx = mask.nonzero()[0]
    if len(idx) < want:
        return None
    found = idx[:want]
    return table_positions(rows, found), int(found[-1]) + 1


def table_positions(rows, idx):
    """Positions `idx` within a window's run (`window`'s slice or positions) as positions in the whole node order."""
    return idx + (rows.start or 0) if type(rows) is slice else rows.take(idx)


class InWalkOrder:
    """The True positions of a mask in walk order from `start`, ordered only when read: a pod no node accepts lists
    every node that fits it but for spread, and those are mostly counted, rarely named."""

    __slots__ = ("_idx", "_start")

    def __init__(self, mask, start: int):
        self._idx, self._start = mask.nonzero()[0], start

    def __len__(self) -> int:
        return len(self._idx)

    def tolist(self) -> list[int]:
        return from_start(self._idx, self._start).tolist()


def zone_lists(nodes: Iterable[Node]) -> dict[str, tuple[str, ...]]:
    """Node names per zone (in the order of its first node), keyed as the scheduler does: region and zone, GA first."""
    zones: dict[str, list[str]] = {}
    for n in nodes:
        labels = n.labels
        region = labels.get(REGION_KEY) or labels.get(BETA_REGION_KEY, "")
        zone = labels.get(ZONE_KEY) or labels.get(BETA_ZONE_KEY, "")
        zones.setdefault(f"{region}:\x00:{zone}" if region or zone else "", []).append(n.name)
    return {z: tuple(names) for z, names in zones.items()}


def round_robin(lists: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    """The first of every list, then the second of those long enough, and so on; zipped in runs (deletions redo it)."""
    rows = [names for names in lists if names]
    out: list[str] = []
    done = 0
    while rows:
        upto = min(map(len, rows))
        out.extend(itertools.chain.from_iterable(zip(*[names[done:upto] for names in rows])))
        done = upto
        rows = [names for names in rows if len(names) > upto]
    return tuple(out)
