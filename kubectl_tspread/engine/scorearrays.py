"""engine/scores.py's formulas, and PodTopologySpread's NormalizeScore (spread.py's), over
numpy arrays, one element per candidate node: the same integer and float operations in the
same order, so the same rounding (tests/test_scores.py holds each against its scalar form).
The drain planner's array paths score ~500 nodes per placement with these and with the
formulas of spread.py that serve arrays as they are (spread_term, fits_array).

Shapes: `alloc`, `used` and friends are (2, n) int64 arrays, row 0 cpu (millicores), row 1
memory (bytes); a node's allocatable that is not positive leaves that resource out.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from kubectl_tspread.engine import scores, spread
from kubectl_tspread.engine.scores import MAX_NODE_SCORE, WEIGHTS
from kubectl_tspread.model import Node, Pod


_COLUMNS: dict[tuple[int, int], np.ndarray] = {}  # a few request pairs recur over thousands of placements


def _column(pair: tuple[int, int]):
    got = _COLUMNS.get(pair)
    if got is None:
        if len(_COLUMNS) >= 4096:
            _COLUMNS.clear()
        got = _COLUMNS[pair] = np.array(pair, dtype=np.int64)[:, None]
        got.flags.writeable = False
    return got


def all_positive(alloc) -> bool:
    """Whether every node has both resources (the common case): one reduction, empty arrays included."""
    return bool(np.minimum.reduce(alloc, axis=None, initial=1) > 0)


def least_allocated(alloc, used, want: tuple[int, int], positive: bool | None = None):
    """scores.least_allocated per node: `used` the nodes' non-zero requests, `want` the pod's;
    `positive`, all_positive(alloc) when the caller knows it. When every node has both resources
    what is left after the requests, floored at 0, is the numerator: four array operations."""
    if all_positive(alloc) if positive is None else positive:
        left = alloc - used
        left -= _column(want)
        np.maximum(left, 0, out=left)
        left *= MAX_NODE_SCORE
        left //= alloc
        out = left[0]  # a row of this fresh array: summed in place
        out += left[1]
        out //= 2
        return out
    usable = alloc > 0
    requested = used + _column(want)
    safe = np.where(usable, alloc, 1)
    per = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe)
    per = np.where(usable, per, 0)
    count = usable.sum(axis=0)
    return np.where(count > 0, per.sum(axis=0) // np.maximum(count, 1), 0)


def _balance(requested, alloc, positive: bool | None = None):
    """scores._balance per node (cpu and memory; a resource without allocatable is left out,
    and one resource alone is balanced); `positive` as least_allocated's."""
    if all_positive(alloc) if positive is None else positive:
        frac = requested / alloc  # int64 / int64 is float64(r) / float64(a), as in the scalar form
        np.minimum(frac, 1.0, out=frac)
        std = frac[0] - frac[1]
        std /= 2
        np.abs(std, out=std)
    else:
        usable = alloc > 0
        frac = np.minimum(requested.astype(np.float64) / np.where(usable, alloc, 1).astype(np.float64), 1.0)
        std = np.where(usable[0] & usable[1], np.abs((frac[0] - frac[1]) / 2), 0.0)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def balanced_allocation(alloc, used, want: tuple[int, int], improvement: bool = True, before=None,
                        positive: bool | None = None):
    """scores.balanced_allocation per node: `used` the nodes' requests as they are; `before`, if given, each
    node's scores.balance(used, alloc), which does not depend on the pod (a caller may keep it per node);
    `positive` as least_allocated's."""
    if not any(want):
        return np.zeros(alloc.shape[1], dtype=np.int64)
    after = _balance(used + _column(want), alloc, positive)
    if not improvement:
        return after
    if before is None:
        before = _balance(used, alloc, positive)
    after += MAX_NODE_SCORE // 2  # fresh: x = 50 + after - before, exact in integers
    after -= before
    out = (after / 2).astype(np.int64)  # Go's x / 2 truncates toward zero, as astype does
    out += MAX_NODE_SCORE // 2
    return out


def image_priority(total, count: int):
    """scores.image_priority over an int64 array of raw sums (one pod: one count).

    >>> image_priority(np.array([0, 250 * 2**20, 5000 * 2**20]), 1).tolist()
    [0, 23, 100]
    """
    ceiling = scores.IMAGE_CEILING_EACH * count
    clamped = np.where(total < scores.IMAGE_FLOOR, scores.IMAGE_FLOOR, np.minimum(total, ceiling))
    return MAX_NODE_SCORE * (clamped - scores.IMAGE_FLOOR) // (ceiling - scores.IMAGE_FLOOR)


def normalize_default(raw, reverse: bool = False):
    """scores.normalize_default over an int64 array."""
    hi = int(raw.max()) if len(raw) else 0
    if hi <= 0:
        return np.full(len(raw), MAX_NODE_SCORE, dtype=np.int64) if reverse else raw.astype(np.int64)
    out = MAX_NODE_SCORE * raw // hi
    return MAX_NODE_SCORE - out if reverse else out


def normalize_min_max(raw):
    """scores.normalize_min_max over an int64 array."""
    if not len(raw):
        return raw.astype(np.int64)
    lo, hi = int(raw.min()), int(raw.max())
    if hi == lo:
        return np.zeros(len(raw), dtype=np.int64)
    return (float(MAX_NODE_SCORE) * ((raw - lo).astype(np.float64) / float(hi - lo))).astype(np.int64)


def spread_normalize(total, considered=None):
    """PodTopologySpread's NormalizeScore of the summed terms (float, one per node; the terms
    are spread.spread_term, which serves arrays as they are): rounded (Go math.Round of a
    non-negative value), 100 × (max + min − s) // max over the considered nodes (100 for all
    when max is 0); a node left out (IgnoredNodes: it lacks a soft key) scores 0. The
    scalar form is spread.score_nodes' rounding and spread._normalize.

    totals 9.6 3.7 6.5 7.1 (the last left out) → rounded 10 4 7 → 40 100 70, and 0.

    >>> spread_normalize(np.array([9.6, 3.7, 6.5, 7.1]), np.array([True, True, True, False])).tolist()
    [40, 100, 70, 0]
    """
    raw = (total + 0.5).astype(np.int64)  # truncation is the floor: the terms are never negative
    kept = raw if considered is None else raw[considered]
    if not len(kept):
        return np.zeros(len(raw), dtype=np.int64)
    hi, lo = int(kept.max()), int(kept.min())
    if hi == 0:
        out = np.full(len(raw), MAX_NODE_SCORE, dtype=np.int64)
    else:
        out = (hi + lo) - raw
        out *= MAX_NODE_SCORE
        out //= hi
    return out if considered is None else np.where(considered, out, 0)


def spread_scores(soft: Sequence, require_all_keys: bool, n: int, lacking: Callable, counts: Callable,
                  distinct: Callable):
    """spread.score_nodes over `n` candidate nodes: `soft`, the pod's soft ConstraintStates; `lacking(cs)`, which
    nodes lack cs's key (a bool array, None when none can); `counts(cs, kept)`, each kept node's domain count
    (hostname: its own matching pods), `kept` the considered nodes' indices or None for all; `distinct(cs, kept)`,
    how many of cs's key's values the kept nodes carry (asked only for a key other than hostname). With
    `require_all_keys` (explicit constraints) a node lacking any soft key is one of IgnoredNodes and scores 0;
    otherwise only the constraint it lacks leaves its sum. The float sum runs in the scalar form's order."""
    masks = [lacking(cs) for cs in soft]
    kept = None
    if require_all_keys and any(m is not None for m in masks):
        lack = np.logical_or.reduce([m for m in masks if m is not None])
        if lack.any():
            kept = np.flatnonzero(~lack)
    size = n if kept is None else len(kept)
    if not size:
        return np.zeros(n, dtype=np.int64)
    total = None
    for cs, mask in zip(soft, masks):
        key = cs.constraint.topology_key
        weight = spread.topology_weight(key, size, lambda: distinct(cs, kept))
        added = spread.spread_term(counts(cs, kept), weight, cs.constraint.max_skew)
        if total is not None:
            added = total + added
        if kept is None and mask is not None and mask.any():  # kept nodes carry every key
            added = np.where(mask, 0.0 if total is None else total, added)
        total = added
    if kept is None:
        return spread_normalize(total)
    out = np.zeros(n, dtype=np.int64)
    out[kept] = spread_normalize(total)
    return out


def per_node(raw: Callable[[Pod, Node], int], pod: Pod, n: int, node_at: Callable[[int], Node], rows=None):
    """A scalar raw score for each of `n` nodes (`node_at(i)` the i-th; of `rows` only, where
    given: 0 elsewhere)."""
    out = np.zeros(n, dtype=np.int64)
    for i in (range(n) if rows is None else rows):
        out[i] = raw(pod, node_at(i))
    return out


def total(pod: Pod, n: int, node_at: Callable[[int], Node], alloc, used_nonzero, used_requested, spread,
          tainted=None, topology=None, improvement: bool = True, images=None, before=None,
          positive: bool | None = None):
    """scores.score_nodes' totals for `n` nodes (`node_at(i)` the i-th): `alloc` and the
    usages as above, `spread` the normalised PodTopologySpread scores (None: the pod has no
    soft constraint), `tainted` the positions of the nodes with a PreferNoSchedule taint
    (None: look at every node), `topology` scores.interpod_topology (None: not scored),
    `images` ImageLocality's scores per node (image_priority of scores.image_sum's), None when no
    node holds one of the pod's images; `before` as balanced_allocation's, `positive` as
    least_allocated's. The weighted scores are summed into one fresh array (integers: the order
    of the sum does not matter)."""
    if not n:
        return np.zeros(0, dtype=np.int64)
    if positive is None:
        positive = all_positive(alloc)
    out = _weighted(scores.LEAST_ALLOCATED,
                    least_allocated(alloc, used_nonzero, scores.placed_requests(pod), positive))
    if tainted is not None and not len(tainted):
        out += WEIGHTS[scores.TAINT_TOLERATION] * MAX_NODE_SCORE  # no PreferNoSchedule taint: 100 for all
    else:
        taints = per_node(scores.untolerated_prefer_no_schedule, pod, n, node_at, tainted)
        out += _weighted(scores.TAINT_TOLERATION, normalize_default(taints, reverse=True))
    if pod.preferred_node_affinity:
        raw = per_node(scores.preferred_node_affinity, pod, n, node_at)
        out += _weighted(scores.NODE_AFFINITY, normalize_default(raw))
    if spread is not None:
        out += _weighted(scores.SPREAD, spread)
    if topology:
        raw = per_node(lambda p, node: scores.interpod_raw(topology, node), pod, n, node_at)
        out += _weighted(scores.INTER_POD_AFFINITY, normalize_min_max(raw))
    out += _weighted(scores.BALANCED_ALLOCATION, balanced_allocation(alloc, used_requested, scores.fit_requests(pod),
                                                                      improvement, before, positive))
    if images is not None:
        out += _weighted(scores.IMAGE_LOCALITY, images)
    return out


def _weighted(plugin: str, score):
    weight = WEIGHTS[plugin]
    return score if weight == 1 else weight * score


def best(totals, rank):
    """The positions with the highest total in `rank`'s order (the node names'): the first is
    the pick, and more than one is a tie."""
    top = (totals == totals.max()).nonzero()[0]
    return top if len(top) == 1 else top.take(rank.take(top).argsort())
