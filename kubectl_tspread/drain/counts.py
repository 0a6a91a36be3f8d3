"""Spread states kept up to date as the drain simulation moves pods, instead of
recomputed: a counted pod (bound, not terminating, matched by the constraint's merged
selector) that comes or goes shifts its node's count and its domain's by one.

A state depends on the pods only through those counts (which nodes make which
domains is the partition, changed only by cordons and node deletions, which the
simulator handles by dropping states), so `shifted` gives exactly what
`spread.compute` would on the new cluster (tests/test_drain_sim_cache.py checks it).

Cost per shift: one copy of the constraint's node-count and domain maps; the new
minimum and maximum come from how many domains hold each count (`count_histogram`,
a few entries), not from a walk over the domains (5,000 of them for a hostname
constraint in a big cluster).
"""

from __future__ import annotations

from dataclasses import replace

from kubectl_tspread.engine import spread
from kubectl_tspread.model import Pod


def counted(pod: Pod) -> bool:
    """Whether `pod` is in the counts of the constraints whose selectors match it."""
    return bool(pod.node_name) and not pod.terminating and not pod.finished


def shifted_state(st: spread.SpreadState, pod: Pod, delta: int) -> spread.SpreadState | None:
    """`st` with `pod` (counted) added (+1) or removed (-1); None when no constraint counts it."""
    out, changed = [], False
    for cs in st.constraints:
        if cs.namespace == pod.namespace and spread._counts_pods(cs.selector) and cs.selector.matches(pod.labels):
            cs = shifted(cs, pod.node_name, delta)
            changed = True
        out.append(cs)
    return replace(st, constraints=tuple(out)) if changed else None


def shifted(cs: spread.ConstraintState, node: str, delta: int) -> spread.ConstraintState:
    """`cs` with one matching pod more (+1) or less (-1) on `node`."""
    counts = dict(cs.node_counts)
    n = counts.get(node, 0) + delta
    if n:
        counts[node] = n
    else:
        counts.pop(node, None)
    value = cs.node_domain.get(node)
    if value is None:  # an excluded node: only its own count moves
        return replace(cs, node_counts=counts)
    old = cs.domains[value]
    domains = dict(cs.domains)
    domains[value] = spread.Domain(value, old.pods + delta, old.nodes)
    hist = dict(cs.count_histogram if cs.count_histogram is not None else histogram(cs.domains))
    left = hist[old.pods] - 1
    if left:
        hist[old.pods] = left
    else:
        del hist[old.pods]
    hist[old.pods + delta] = hist.get(old.pods + delta, 0) + 1
    high = max(hist)  # the largest domain count: a handful of distinct counts, not the domains
    low = 0 if cs.min_forced_zero else min(hist)
    skew = high - low
    return replace(cs, node_counts=counts, domains=domains, global_min=low, skew=skew,
                   status=spread.status(cs.constraint, skew), count_histogram=hist)


def histogram(domains) -> dict[int, int]:
    """{pods: number of domains holding that many}."""
    out: dict[int, int] = {}
    for d in domains.values():
        out[d.pods] = out.get(d.pods, 0) + 1
    return out
