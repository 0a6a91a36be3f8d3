"""Spread states moved with the drain simulation, not recomputed: a counted pod (bound, not terminating, matched by
the constraint's merged selector) that comes or goes shifts its node's count and its domain's by one.

A state depends on the pods only through those counts (the partition into domains changes only by node deletions and
cordons under nodeTaintsPolicy Honor: `without_node`), so `shifted` and `without_node` give exactly what
`spread.compute` would (tests/test_drain_sim_cache.py checks it). A shift copies only the changes (`_Overlay`) and
takes the new minimum, skew and number of domains from the count histogram (a few entries), not a walk over the domains.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubectl_tspread.engine import spread
from kubectl_tspread.model import Pod, positional_constructor
from kubectl_tspread.views.drain.core.vector import CountArrays


def shifted_state(st: spread.SpreadState, pod: Pod, delta: int, arrays: CountArrays) -> spread.SpreadState | None:
    """`st` with `pod` (counted) added (+1) or removed (-1), `arrays` moved along; None when no constraint counts it."""
    out, changed = [], False
    for cs in st.constraints:
        if counts_in(cs, pod):
            cs = shifted(cs, pod.node_name, delta, arrays)
            changed = True
        out.append(cs)
    return _with_constraints(st, tuple(out)) if changed else None


def counts_in(cs: spread.ConstraintState, pod: Pod) -> bool:
    """Whether `cs` counts `pod` (if counted at all), kept per selector and labels object (a workload's pods share)."""
    if cs.namespace != pod.namespace:
        return False
    selector, labels = cs.selector, pod.labels
    key = (id(selector), id(labels))
    hit = _MATCHES.get(key)
    if hit is not None and hit[0] is selector and hit[1] is labels:
        return hit[2]
    ok = spread._counts_pods(selector) and selector.matches(labels)
    if len(_MATCHES) >= 65536:
        _MATCHES.clear()
    _MATCHES[key] = (selector, labels, ok)  # holding both: their ids stay theirs while the entry lives
    return ok


_MATCHES: dict[tuple[int, int], tuple[object, object, bool]] = {}


# SpreadState with `hard` passed, not picked by __post_init__: every shift, node deletion and placement makes one
new_spread_state = positional_constructor(spread.SpreadState, derived_by_caller=True)


def _with_constraints(st: spread.SpreadState, constraints: tuple) -> spread.SpreadState:
    hard = st.hard
    if hard:
        hard = constraints if len(hard) == len(constraints) else tuple(cs for cs in constraints if cs.constraint.hard)
    return new_spread_state(st.pod, constraints, st.require_all_soft_keys, hard)


_new_state = positional_constructor(spread.ConstraintState)
_new_domain = positional_constructor(spread.Domain)  # a shift makes one per move


def _state(cs: spread.ConstraintState, node_counts, domains, global_min: int, skew: int, status: str,
           histogram, forced: bool) -> spread.ConstraintState:
    return _new_state(cs.constraint, cs.selector, cs.namespace, cs.self_match, domains, cs.node_domain,
                      cs.excluded_nodes, global_min, forced, skew, status, node_counts, cs.matched, histogram)


class _Overlay(Mapping):
    """A map after changes: a state's plain map, shared (never changed once made), plus the entries changed since,
    merged into a new plain map past MERGE_AFTER (`merged`)."""

    __slots__ = ("base", "changes")
    MERGE_AFTER = 64

    def __init__(self, base: dict, changes: dict):
        self.base, self.changes = base, changes

    @classmethod
    def with_change(cls, mapping: Mapping, key: str, value):
        if isinstance(mapping, cls):
            if len(mapping.changes) < cls.MERGE_AFTER:
                changes = dict(mapping.changes)
                changes[key] = value
                return cls(mapping.base, changes)
            return cls(mapping.merged(), {key: value})
        return cls(mapping if type(mapping) is dict else dict(mapping.items()), {key: value})


class Shifted(_Overlay):
    """A constraint's domains after shifts (never adding or removing one) and `without_node` (it may make one GONE)."""

    __slots__ = ("_gone_count",)

    def __getitem__(self, value: str) -> spread.Domain:
        d = self.changes.get(value)
        if d is None:
            return self.base[value]
        if d is GONE:
            raise KeyError(value)
        return d

    def get(self, value, default=None):
        d = self.changes.get(value)
        if d is None:
            return self.base.get(value, default)
        return default if d is GONE else d

    def __contains__(self, value) -> bool:
        return self.changes.get(value) is not GONE and value in self.base

    def _gone(self) -> int:
        """How many domains the changes took away, counted once: an overlay never changes, and rendering asks often."""
        try:
            return self._gone_count
        except AttributeError:  # not counted yet
            self._gone_count = n = sum(1 for d in self.changes.values() if d is GONE)
            return n

    def __iter__(self):
        if not self._gone():
            return iter(self.base)
        changes = self.changes
        return (v for v in self.base if changes.get(v) is not GONE)

    def __len__(self) -> int:
        return len(self.base) - self._gone()

    def values(self):
        changes = self.changes
        out = [changes.get(v, d) for v, d in self.base.items()]
        return [d for d in out if d is not GONE] if self._gone() else out

    def items(self):
        changes = self.changes
        out = [(v, changes.get(v, d)) for v, d in self.base.items()]
        return [(v, d) for v, d in out if d is not GONE] if self._gone() else out

    def merged(self) -> dict:
        out = self.base.copy()  # dict.copy: dict(base) re-inserts entry by entry once the base has deleted slots
        for value, d in self.changes.items():  # a change never adds a domain: keys keep their place
            if d is GONE:
                del out[value]
            else:
                out[value] = d
        return out


GONE = object()  # a domain whose last node left it (Shifted)


class NodeCounts(_Overlay):
    """A constraint's matching pods per node after shifts (a changed count of 0: none left); not in a dict's order."""

    __slots__ = ()

    def get(self, node, default=None):
        n = self.changes.get(node)
        if n is None:
            return self.base.get(node, default)
        return n if n else default

    def __getitem__(self, node: str) -> int:
        n = self.get(node)
        if n is None:
            raise KeyError(node)
        return n

    def __contains__(self, node) -> bool:
        return self.get(node) is not None

    def __iter__(self):
        changes = self.changes
        for node in self.base:
            if changes.get(node, 1):
                yield node
        for node, n in changes.items():
            if n and node not in self.base:
                yield node

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def items(self):
        return [(node, self[node]) for node in self]

    def merged(self) -> dict:
        out = self.base.copy()  # dict.copy (see Shifted.merged)
        for node, n in self.changes.items():  # the base's nodes in place, then the new ones, as __iter__
            if n:
                out[node] = n
            else:
                out.pop(node, None)
        return out


def shifted(cs: spread.ConstraintState, node: str, delta: int, arrays: CountArrays) -> spread.ConstraintState:
    """`cs` with one matching pod more (+1) or less (-1) on `node`."""
    counts = NodeCounts.with_change(cs.node_counts, node, cs.node_counts.get(node, 0) + delta)
    value = cs.node_domain.get(node)
    if value is None:  # an excluded node: only its own count moves
        out = _state(cs, counts, cs.domains, cs.global_min, cs.skew, cs.status, cs.count_histogram, cs.min_forced_zero)
    else:
        old = cs.domains[value]
        domains = Shifted.with_change(cs.domains, value, _new_domain(value, old.pods + delta, old.nodes))
        hist = _moved(cs, old.pods, old.pods + delta)
        low, forced = spread.minimum(hist, sum(hist.values()), cs.constraint.min_domains)
        skew = spread.skew_of(hist, low)
        out = _state(cs, counts, domains, low, skew, spread.status(cs.constraint, skew), hist, forced)
    arrays.shifted(cs, out, node, delta)
    return out


def leaving(cs: spread.ConstraintState, pods: Iterable[Pod]) -> tuple[dict[str, int], dict[str, int]]:
    """How many of `pods` (counted, matched by `cs`) leave each domain's count and each node's: `shifted`'s moves."""
    by_node = spread.pods_per_node(pods)
    return spread.pods_per_domain(by_node, cs.node_domain), by_node


def without_node(st: spread.SpreadState, name: str, moved: Mapping[int, spread.Partition],
                 arrays: CountArrays) -> spread.SpreadState | None:
    """`st` once Node `name` makes no domain: deleted (its pods dropped first), or cordoned under Honor (its pods then
    count on the node only). `moved`: id(node_domain) before -> partition after; None if a partition is not in it."""
    out, changed = [], False
    for cs in st.constraints:
        part = moved.get(id(cs.node_domain))
        if part is None:
            return None
        if part.node_domain is not cs.node_domain or part.excluded is not cs.excluded_nodes:
            cs = _without(cs, name, part, arrays)
            changed = True
        out.append(cs)
    return _with_constraints(st, tuple(out)) if changed else st


def _without(cs: spread.ConstraintState, name: str, part: spread.Partition,
             arrays: CountArrays) -> spread.ConstraintState:
    value = cs.node_domain.get(name)
    domains, hist = cs.domains, cs.count_histogram
    global_min, forced, skew, status = cs.global_min, cs.min_forced_zero, cs.skew, cs.status
    leaving = cs.node_counts.get(name, 0) if value is not None else 0
    if value is not None:
        old = domains[value]
        left = part.members.get(value)
        if left is not None and not leaving:
            domains = Shifted.with_change(domains, value, _new_domain(value, old.pods, left))
        else:  # the count moves, or the domain is gone: the minimum, minDomains and skew with it
            pods = old.pods - leaving if left is not None else None
            hist = _moved(cs, old.pods, pods)
            domains = Shifted.with_change(domains, value, GONE if pods is None else _new_domain(value, pods, left))
            global_min, forced = spread.minimum(hist, sum(hist.values()), cs.constraint.min_domains)
            skew = spread.skew_of(hist, global_min)
            status = spread.status(cs.constraint, skew)
    out = _new_state(cs.constraint, cs.selector, cs.namespace, cs.self_match, domains, part.node_domain,
                     part.excluded, global_min, forced, skew, status, cs.node_counts, cs.matched, hist)
    if leaving:
        arrays.moved_out(cs, out, value, leaving)  # type: ignore[arg-type]  # leaving: value is set
    else:
        arrays.handed_over(cs, out)
    return out


def _moved(cs: spread.ConstraintState, was: int, now: int | None) -> dict[int, int]:
    """A copy of `cs`'s count histogram with one domain moved from `was` pods to `now` (None: it is gone)."""
    hist = dict(cs.count_histogram)  # type: ignore[arg-type]  # spread.compute made it
    left = hist[was] - 1
    if left:
        hist[was] = left
    else:
        del hist[was]
    if now is not None:
        hist[now] = hist.get(now, 0) + 1
    return hist


def same_counts(old: spread.ConstraintState, new: spread.ConstraintState) -> bool:
    """Whether `new`, moved from `old`, has the same count on every node and domain left. Only `without_node` keeps
    the node-count map, taking the node's pods out of its domain: the same map and domain total mean none moved."""
    if new.node_counts is not old.node_counts:
        return False
    a, b = old.count_histogram, new.count_histogram
    return a is b or sum(k * v for k, v in a.items()) == sum(k * v for k, v in b.items())  # type: ignore[union-attr]

