"""Spread states kept up to date as the drain simulation moves pods, instead of
recomputed: a counted pod (bound, not terminating, matched by the constraint's merged
selector) that comes or goes shifts its node's count and its domain's by one.

A state depends on the pods only through those counts (which nodes make which
domains is the partition, changed only by cordons and node deletions, which the
simulator handles by dropping states), so `shifted` gives exactly what
`spread.compute` would on the new cluster (tests/test_drain_sim_cache.py checks it).

Cost per shift: one copy of the constraint's node-count and domain maps, plus a
walk over the domains only when the changed domain held the minimum (a pod added)
or the maximum (a pod removed).
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
    high = cs.skew + cs.global_min  # the largest domain count before the shift
    if cs.min_forced_zero:
        low = 0
    elif delta > 0:
        low = cs.global_min if old.pods > cs.global_min else min(d.pods for d in domains.values())
    else:
        low = min(cs.global_min, old.pods + delta)
    if delta > 0:
        high = max(high, old.pods + delta)
    elif old.pods >= high:
        high = max(d.pods for d in domains.values())
    skew = high - low
    return replace(cs, node_counts=counts, domains=domains, global_min=low, skew=skew,
                   status=spread.status(cs.constraint, skew))
