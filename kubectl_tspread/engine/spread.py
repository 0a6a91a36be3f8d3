"""Topology spread as kube-scheduler's PodTopologySpread plugin computes it.

`compute(index, pod)` evaluates every spread constraint of one incoming pod
against a snapshot: which nodes count, which domains exist, how many matching pods
each holds, the global minimum and the skew. `filter_node` is the plugin's Filter
verdict for one node; `score_nodes` its Score + NormalizeScore. The authority is
kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread
(common.go, filtering.go, scoring.go); ../../shared/SEMANTICS.md restates it.

Worked example: zones a=5 b=3 c=3, maxSkew 1, the pod matches its own selector →
globalMin 3; a is blocked (5+1-3 = 3 > 1), b and c accept one more each.

Which nodes make domains
------------------------
Hard (DoNotSchedule) constraints follow PreFilter exactly: a node must carry the
label of *every* hard constraint's topologyKey (the all-keys rule), then pass the
constraint's own nodeAffinityPolicy / nodeTaintsPolicy; each passing node makes its
domain exist even with zero matching pods.

Soft (ScheduleAnyway) constraints are only ever *scored* by the scheduler, which
has its own rule (scoring.go, PreScore): the all-keys rule over the *soft* keys,
and only when the pod's constraints are explicit. The system-default (implicit)
constraints skip it so that nodes without a zone label still get hostname
spreading. Domains of a soft constraint are reported with that rule plus the
inclusion policies, over all nodes (not just the nodes that pass Filter), because
`distribution` shows where the workload is; a node lacking the constraint's own key
is never a domain. `score_nodes` then applies the scheduler's restriction to the
candidate nodes it is given.

Counted pods: same namespace as the incoming pod, not terminating, bound to an
eligible node (spec.nodeName), matched by the merged selector; finished pods never
reach the index. An unbound incoming pod is on no node and so never counts itself;
a bound one (distribution's view of a running pod) counts like any other pod.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable, Collection, Iterable, Mapping, Sequence

from kubectl_tspread.engine.defaults import default_constraints
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.partition import (  # noqa: F401  (the records and memo stay importable from here)
    EXCLUDED_MISSING_KEY, EXCLUDED_NODE_AFFINITY, EXCLUDED_TAINT, DerivedPartitions, Domain, ExcludedNode,
    Partition, build as _partition, partition_key as _partition_key,
)
from kubectl_tspread.model.labels import IN, Requirement, Selector
from kubectl_tspread.model import HOSTNAME_KEY, Node, Pod, SpreadConstraint

PLUGIN = "PodTopologySpread"
UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
REASON_NODE_LABEL_NOT_MATCH = REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

STATUS_OK, STATUS_AT_LIMIT, STATUS_VIOLATED, STATUS_DRIFTED = "OK", "AT LIMIT", "VIOLATED", "DRIFTED"

UNCOUNTED_OTHER_REVISION = "OtherRevision"
UNCOUNTED_TERMINATING = "Terminating"
UNCOUNTED_UNSCHEDULED = "Unscheduled"
UNCOUNTED_EXCLUDED_NODE = "ExcludedNode"
UNCOUNTED_SELECTOR_MISMATCH = "SelectorMismatch"

MAX_NODE_SCORE = 100


@dataclass(frozen=True, slots=True)
class UncountedPod:
    namespace: str
    name: str
    reason: str  # UNCOUNTED_*


@dataclass(frozen=True, slots=True)
class FilterFailure:
    plugin: str
    status: str  # UNSCHEDULABLE | UNRESOLVABLE
    reason: str  # the scheduler's exact reason string


@lru_cache(maxsize=1024)
def shared_failure(plugin: str, status: str, reason: str) -> FilterFailure:
    """One shared record per distinct failure: they are immutable, and the filters report one
    for nearly every node of every evaluation."""
    return FilterFailure(plugin, status, reason)


@dataclass(frozen=True, slots=True)
class ConstraintState:
    """One constraint evaluated for one incoming pod.

    `domains` is ordered by value and holds every domain (zero-pod ones included);
    `node_counts` holds the matching pods of *every* node that has some, eligible or
    not (the scheduler scores hostname constraints on the node's own pods).
    """

    constraint: SpreadConstraint
    selector: Selector
    namespace: str
    self_match: int
    domains: Mapping[str, Domain]
    node_domain: Mapping[str, str]
    excluded_nodes: tuple[ExcludedNode, ...]
    global_min: int
    min_forced_zero: bool
    skew: int
    status: str
    node_counts: Mapping[str, int] = field(default_factory=dict)
    # the pods `selector` matched in `namespace` when the counts were made (kept alive here, so
    # their ids stay theirs): `uncounted_reasons` skips matching those again
    matched: Sequence[Pod] = field(default=(), compare=False, repr=False)
    # how many domains hold each count (`count_histogram`), as `compute` and `shifted` make it; views/drain/core/
    # counts.py keeps it as it shifts counts, so the new minimum never needs a walk over thousands of hostname domains
    count_histogram: Mapping[int, int] | None = field(default=None, compare=False, repr=False)

    def count(self, value: str) -> int:
        """Matching pods in a domain; an unknown value counts 0, as in Filter."""
        d = self.domains.get(value)
        return d.pods if d is not None else 0

    def skew_if_placed(self, value: str) -> int:
        """Filter's skew for a node of this domain (`skew_if_placed` of its count)."""
        return skew_if_placed(self.count(value), self.self_match, self.global_min)

    def allows(self, value: str) -> bool:
        """Filter's verdict for a node of this domain (`fits` of its count)."""
        return fits(self.count(value), self.self_match, self.global_min, self.constraint.max_skew)

    def headroom(self, value: str) -> int:
        """Matching pods the domain accepts before Filter refuses it, at today's globalMin
        (`headroom` of its count).

        zones a=5 b=3 c=3, maxSkew 1, selfMatch 1 → a: 0, b: 1, c: 1.
        """
        return headroom(self.count(value), self.self_match, self.global_min, self.constraint.max_skew)

    def uncounted(self, pods: Iterable[Pod]) -> list[UncountedPod]:
        """Why pods of a workload are missing from the counts, first reason wins:
        Terminating, Unscheduled, OtherRevision (only the matchLabelKeys merge rejects
        it), SelectorMismatch (other namespace, or the selector is `{}`/nil or does not
        match), ExcludedNode. Counted and finished pods are not listed."""
        pods = list(pods)
        return uncounted_pods(pods, self.uncounted_reasons(pods))

    def uncounted_reason(self, p: Pod) -> str | None:
        """None when `p` is in the counts (or finished), else the UNCOUNTED_* reason."""
        return self.uncounted_reasons((p,))[0]

    def uncounted_reasons(self, pods: Sequence[Pod]) -> list[str | None]:
        """`uncounted_reason` of each pod, in order (what holds for the whole constraint is
        looked up once: distribution asks it for every pod of every workload)."""
        namespace, selector, own = self.namespace, self.selector, self.constraint.selector
        counts = _counts_pods(selector)
        node_domain = self.node_domain
        known = {id(m) for m in self.matched}
        out: list[str | None] = []
        for p in pods:
            if p.finished:
                reason = None
            elif p.terminating:
                reason = UNCOUNTED_TERMINATING
            elif not p.node_name:
                reason = UNCOUNTED_UNSCHEDULED
            elif p.namespace != namespace or not counts:
                reason = UNCOUNTED_SELECTOR_MISMATCH
            elif id(p) not in known and not selector.matches(p.labels):
                reason = UNCOUNTED_OTHER_REVISION if own.matches(p.labels) else UNCOUNTED_SELECTOR_MISMATCH
            elif p.node_name not in node_domain:
                reason = UNCOUNTED_EXCLUDED_NODE
            else:
                reason = None
            out.append(reason)
        return out


def uncounted_pods(pods: Sequence[Pod], reasons: Sequence[str | None]) -> list[UncountedPod]:
    """The UncountedPod records of `pods` given their `uncounted_reasons`."""
    return [UncountedPod(p.namespace, p.name, r) for p, r in zip(pods, reasons) if r is not None]


def counted_pods(pods: Sequence[Pod], reasons: Sequence[str | None]) -> list[Pod]:
    """The pods of `pods` in the counts, given their `uncounted_reasons`."""
    return [p for p, r in zip(pods, reasons) if r is None and not p.finished]


@dataclass(frozen=True, slots=True)
class SpreadState:
    """All constraints of one incoming pod, in the order they were given.

    `require_all_soft_keys` records the scoring rule (explicit constraints only)."""

    pod: Pod
    constraints: tuple[ConstraintState, ...]
    require_all_soft_keys: bool = True
    # the hard constraints, picked once: the Filter reads them for every node
    hard: tuple[ConstraintState, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hard", tuple(cs for cs in self.constraints if cs.constraint.hard))

    @property
    def soft(self) -> tuple[ConstraintState, ...]:
        return tuple(cs for cs in self.constraints if not cs.constraint.hard)


def merged_selector(constraint: SpreadConstraint, pod: Pod) -> Selector:
    """labelSelector AND key=<pod's value> for each matchLabelKeys key the pod carries.

    A nil selector stays nil (upstream returns it unchanged); merging twice is a no-op.
    """
    extra = [Requirement(k, IN, (pod.labels[k],)) for k in constraint.match_label_keys if k in pod.labels]
    return constraint.selector.merged(extra) if extra else constraint.selector


def _counts_pods(selector: Selector) -> bool:
    # countPodsMatchSelector returns 0 for an Empty() selector; nil matches nothing
    return not selector.is_nothing and not selector.empty


def constraints_for(index: ClusterIndex, pod: Pod) -> tuple[SpreadConstraint, ...]:
    """The pod's own constraints if it has any, else the system defaults (maybe none)."""
    if pod.spread:
        return tuple(pod.spread)
    return default_constraints(index, pod)


def compute(index: ClusterIndex, pod: Pod,
            constraints: Sequence[SpreadConstraint] | None = None,
            partitions: dict[tuple, Partition] | None = None) -> SpreadState:
    """Evaluate `constraints` (default: `constraints_for(index, pod)`) for `pod`.

    `partitions`, when given, memoises which nodes make which domains (see `Partition`)
    across calls: the caller owns it and must clear it whenever `index.nodes` changes
    (the drain simulator does on cordon and node deletion)."""
    cons = tuple(constraints_for(index, pod) if constraints is None else constraints)
    hard_keys = tuple(dict.fromkeys(c.topology_key for c in cons if c.hard))
    soft = [c for c in cons if not c.hard]
    require_soft = any(not c.implicit for c in soft)
    soft_keys = tuple(dict.fromkeys(c.topology_key for c in soft)) if require_soft else ()
    affinity_ok: dict[str, bool] = {}
    matched: dict[Selector, list[Pod]] = {}  # a zone and a hostname constraint share their selector
    states = tuple(
        _evaluate(index, pod, c, hard_keys if c.hard else soft_keys, affinity_ok, partitions, matched)
        for c in cons
    )
    return SpreadState(pod, states, require_soft)


def counted(pod: Pod) -> bool:
    """Whether the plugin counts `pod` where its selector matches: terminating pods are bypassed (kubernetes#87621),
    and an unbound pod is on no node."""
    return bool(pod.node_name) and not pod.terminating


def pods_per_node(matched: Iterable[Pod]) -> dict[str, int]:
    """How many of `matched` each node holds, as the plugin counts them."""
    counts: dict[str, int] = defaultdict(int)
    for p in filter(counted, matched):
        counts[p.node_name] += 1
    return dict(counts)


def pods_per_domain(per_node: Mapping[str, int], node_domain: Mapping[str, str]) -> dict[str, int]:
    """The domains' share of `pods_per_node`: a node outside the domains (not in `node_domain`: excluded by a policy,
    or lacking the key) adds to none. Only domains holding pods are listed."""
    per_domain: dict[str, int] = defaultdict(int)
    for n, cnt in per_node.items():
        v = node_domain.get(n)
        if v is not None:
            per_domain[v] += cnt
    return per_domain


def _evaluate(index: ClusterIndex, pod: Pod, c: SpreadConstraint, all_keys: Sequence[str],
              affinity_ok: dict[str, bool], partitions: dict[tuple, Partition] | None = None,
              matched_by_selector: dict[Selector, list[Pod]] | None = None) -> ConstraintState:
    selector = merged_selector(c, pod)
    matched = None if matched_by_selector is None else matched_by_selector.get(selector)
    if matched is None:
        matched = index.matching_pods(pod.namespace, selector) if _counts_pods(selector) else []
        if matched_by_selector is not None:
            matched_by_selector[selector] = matched
    node_counts = pods_per_node(matched)
    if partitions is None:
        part = _partition(index, pod, c, all_keys, affinity_ok)
    else:
        key = _partition_key(pod, c, all_keys)
        part = partitions.get(key)
        if part is None:
            derive = partitions if isinstance(partitions, DerivedPartitions) else None
            part = partitions[key] = _partition(index, pod, c, all_keys, affinity_ok, derive)
    node_domain = part.node_domain
    # per domain, only the nodes holding matching pods add up (a workload's pods, not the cluster)
    per_domain = pods_per_domain(node_counts, node_domain)
    domains = part.zeros.copy()  # cloned in C, even once a node deletion left deleted slots
    members, shared = part.members, part.counted
    for v, cnt in per_domain.items():
        d = shared.get((v, cnt))
        if d is None:
            d = shared[(v, cnt)] = Domain(v, cnt, members[v])
        domains[v] = d
    # every count in per_domain is positive: a domain missing from it holds the minimum, 0
    global_min, forced = minimum(per_domain.values() if len(per_domain) == len(domains) else (0,),
                                 len(domains), c.min_domains)
    skew = skew_of(per_domain.values(), global_min)
    histogram = count_histogram(per_domain.values(), len(domains) - len(per_domain))
    return ConstraintState(
        constraint=c, selector=selector, namespace=pod.namespace,
        self_match=1 if selector.matches(pod.labels) else 0,
        domains=domains, node_domain=node_domain, excluded_nodes=part.excluded,
        global_min=global_min, min_forced_zero=forced, skew=skew,
        status=status(c, skew), node_counts=node_counts, matched=matched, count_histogram=histogram,
    )


def count_histogram(counts: Iterable[int], empty: int = 0) -> dict[int, int]:
    """{pods: how many domains hold that many} of domains holding `counts`, and `empty` more holding none.

    >>> count_histogram([3, 1, 3], empty=2)
    {3: 2, 1: 1, 0: 2}
    """
    out: dict[int, int] = {}
    for n in counts:
        out[n] = out.get(n, 0) + 1
    if empty:
        out[0] = out.get(0, 0) + empty
    return out


# The plugin's formulas, each written once here: everything else (this module's records,
# engine/traps.py, distribution, the drain planner and its arrays) calls these. An array
# form sits beside its scalar form where some caller holds counts in numpy arrays; it is
# written with the arrays' operators alone, so this module never imports numpy, and
# tests/test_spread.py holds each against its scalar form.

def minimum(counts: Iterable[int], domains: int, min_domains: int) -> tuple[int, bool]:
    """(globalMin, whether minDomains forced it): upstream's minMatchNum. The smallest count
    over the domains, or 0 when there are fewer domains than minDomains. `counts` may be
    the distinct counts only (a histogram's keys); `domains` is how many domains there are.

    zones a=2 b=3: minDomains 3 → 0, forced; minDomains 1 → 2.

    >>> minimum([2, 3], 2, 3), minimum([2, 3], 2, 1)
    ((0, True), (2, False))
    """
    if domains < min_domains:
        return 0, True
    # min() without default=: keyword arguments cost builtins their fast path, and the drain
    # asks this at every pod it moves; `counts` is empty only without domains
    return (min(counts) if domains else 0), False


def skew_of(counts: Collection[int], global_min: int) -> int:
    """A constraint's skew: the largest domain count less globalMin (0 without domains).

    zones a=5 b=3 c=3 → globalMin 3, skew 2; with minDomains 4 → globalMin 0, skew 5.

    >>> skew_of([5, 3, 3], 3), skew_of([5, 3, 3], 0)
    (2, 5)
    """
    return (max(counts) if counts else 0) - global_min  # max() without default=, as in minimum


def skew_if_placed(count: int, self_match: int, global_min: int) -> int:
    """Filter's skew for a node whose domain holds `count` matching pods: count + selfMatch −
    globalMin (selfMatch 1 when the pod matches its own constraint's selector, else 0).

    zones a=5 b=3 c=3, selfMatch 1 → a: 3, b: 1, c: 1.

    >>> [skew_if_placed(c, 1, 3) for c in (5, 3, 3)]
    [3, 1, 1]
    """
    return count + self_match - global_min


def fits(count: int, self_match: int, global_min: int, max_skew: int) -> bool:
    """The Filter inequality: a node whose domain holds `count` matching pods passes while
    count + selfMatch − globalMin ≤ maxSkew (filtering.go fails it when the left side is
    greater).

    zones a=5 b=3 c=3, maxSkew 1, selfMatch 1 → globalMin 3; a is blocked (5+1−3 = 3 > 1),
    b and c accept (3+1−3 = 1).

    >>> [fits(c, 1, 3, 1) for c in (5, 3, 3)]
    [False, True, True]
    """
    return skew_if_placed(count, self_match, global_min) <= max_skew


def fits_array(counts, self_match: int, global_min: int, max_skew: int):
    """`fits` for each count of an integer numpy array, as a boolean array: the inequality
    rearranged to one comparison of the counts with maxSkew + globalMin − selfMatch (the
    drain's placements judge every domain of a constraint at once).

    >>> import numpy as np
    >>> fits_array(np.array([5, 3, 3]), 1, 3, 1).tolist()
    [False, True, True]
    """
    return counts <= max_skew + global_min - self_match


def headroom(count: int, self_match: int, global_min: int, max_skew: int) -> int:
    """How many more matching pods a domain holding `count` takes before `fits` refuses it,
    at today's globalMin: the k ≥ 0 with fits(count + j) for every j < k and not fits(count + k)
    (a pod that does not select itself never moves the count: its headroom counts the pods
    of the workload that do).

    zones a=5 b=3 c=3, maxSkew 1, selfMatch 1 → a: 0, b: 1, c: 1.

    >>> [headroom(c, 1, 3, 1) for c in (5, 3, 3)]
    [0, 1, 1]
    """
    return max(0, max_skew + global_min - count - self_match + 1)


def topology_weight(key: str, nodes: int, values: Callable[[], int]) -> float:
    """A soft constraint's weight in PodTopologySpread's raw score (scoring.go's
    topologyNormalizingWeight): ln(size + 2), where size is the number of the key's domains
    among the scored nodes. For the hostname key upstream takes the scored nodes themselves
    (`nodes`); for any other key `values()`, the distinct values those nodes carry (called
    only then: a hostname key's values are never gathered).

    9 scored nodes in zones a, b, c: ln 5 for the zone key, ln 11 for the hostname key.

    >>> round(topology_weight("zone", 9, lambda: 3), 4), round(topology_weight(HOSTNAME_KEY, 9, lambda: 9), 4)
    (1.6094, 2.3979)
    """
    return math.log((nodes if key == HOSTNAME_KEY else values()) + 2)


def spread_term(count, weight: float, max_skew: int):
    """One soft constraint's part of a node's raw PodTopologySpread score: count × weight +
    (maxSkew − 1), `count` the node's domain count (hostname: the node's own matching pods),
    `weight` topology_weight's. The same expression serves a scalar count and a numpy array
    of counts, with the same float operations (tests/test_spread.py holds the two alike).

    zone b holds 3, weight ln 5, maxSkew 2 → 3 × 1.6094 + 1 = 5.83.

    >>> round(spread_term(3, math.log(5), 2), 2)
    5.83
    """
    return count * weight + (max_skew - 1)


def shifted(cs: ConstraintState, deltas: Mapping[str, int]) -> ConstraintState:
    """`cs` with per-domain count changes applied (a domain not in `cs.domains` is not one and
    is ignored), its globalMin, skew and status recomputed by the same rules.

    >>> # zones a=3 b=1, maxSkew 1: shifted by {"a": -1} -> a=2 b=1, skew 1
    """
    domains = dict(cs.domains)
    for value, delta in deltas.items():
        d = domains.get(value)
        if d is not None and delta:
            domains[value] = Domain(value, d.pods + delta, d.nodes)
    counts = [d.pods for d in domains.values()]
    global_min, forced = minimum(counts, len(domains), cs.constraint.min_domains)
    skew = skew_of(counts, global_min)
    return replace(cs, domains=domains, global_min=global_min, min_forced_zero=forced, skew=skew,
                   status=status(cs.constraint, skew), count_histogram=count_histogram(counts))


def status(c: SpreadConstraint, skew: int) -> str:
    """STATUS_* of constraint `c` at `skew` (the drain simulator shifts counts itself)."""
    if skew > c.max_skew:
        return STATUS_VIOLATED if c.hard else STATUS_DRIFTED
    return STATUS_AT_LIMIT if skew == c.max_skew else STATUS_OK


def filter_node(state: SpreadState, node: Node) -> FilterFailure | None:
    """The plugin's Filter verdict: hard constraints in order, the first failure wins.

    A node without a hard topologyKey is UnschedulableAndUnresolvable; otherwise a node
    fails as Unschedulable when count(its domain) + selfMatch - globalMin > maxSkew.
    Like upstream, the domain count is looked up by the node's label value, so a node
    excluded by an inclusion policy is judged by its domain's count (0 if none).
    """
    for cs in state.hard:
        value = node.labels.get(cs.constraint.topology_key)
        if value is None:
            return shared_failure(PLUGIN, UNRESOLVABLE, REASON_NODE_LABEL_NOT_MATCH)
        if not cs.allows(value):
            return shared_failure(PLUGIN, UNSCHEDULABLE, REASON_CONSTRAINTS_NOT_MATCH)
    return None


def score_nodes(state: SpreadState, nodes: Sequence[Node]) -> dict[str, int]:
    """PodTopologySpread Score + NormalizeScore (0..100, higher is better) for the soft
    constraints, over `nodes` = the nodes that passed Filter. Returns {} when the pod
    has no soft constraints (the plugin skips scoring).

    Raw score of a node: Σ over soft constraints whose key the node carries of
    `spread_term` (count × ln(size + 2) + (maxSkew − 1), the weight `topology_weight`'s),
    rounded half away from zero, where count is the domain's count (hostname: the node's
    own matching pods). Candidates missing a soft key (explicit constraints only) are
    ignored and score 0. Normalised by `_normalize`.
    """
    soft = state.soft
    if not soft:
        return {}
    ignored = {n.name for n in nodes if state.require_all_soft_keys
               and any(cs.constraint.topology_key not in n.labels for cs in soft)}
    considered = [n for n in nodes if n.name not in ignored]
    weights = [topology_weight(cs.constraint.topology_key, len(considered), _values_among(cs, considered))
               for cs in soft]
    raw: dict[str, int] = {}
    for n in considered:
        total = 0.0
        for cs, w in zip(soft, weights):
            key = cs.constraint.topology_key
            if key not in n.labels:
                continue
            cnt = cs.node_counts.get(n.name, 0) if key == HOSTNAME_KEY else cs.count(n.labels[key])
            total += spread_term(cnt, w, cs.constraint.max_skew)
        raw[n.name] = int(math.floor(total + 0.5))  # Go math.Round on a non-negative value
    return _normalize(raw, [n.name for n in nodes])


# the value a scored node lacking a soft constraint's key counts as, among the key's values
# (only without the all-keys rule: with it, such a node is not scored)
UNLABELLED_VALUE = ""


def _values_among(cs: ConstraintState, considered: Sequence[Node]) -> Callable[[], int]:
    key = cs.constraint.topology_key
    return lambda: len({n.labels.get(key, UNLABELLED_VALUE) for n in considered})


def _normalize(raw: Mapping[str, int], names: Sequence[str]) -> dict[str, int]:
    """NormalizeScore of the rounded raw scores `raw` of the scored nodes, for every node of
    `names`: 100 × (max + min − score) // max, or 100 for all when max is 0; a node not
    scored (IgnoredNodes) gets 0. The array form is engine/scorearrays.spread_normalize.

    raw a=10 b=4 c=7 (d ignored) → a: 100 × 4 // 10 = 40, b: 100, c: 70, d: 0.

    >>> _normalize({"a": 10, "b": 4, "c": 7}, ["a", "b", "c", "d"])
    {'a': 40, 'b': 100, 'c': 70, 'd': 0}
    """
    if not raw:
        return {name: 0 for name in names}
    hi, lo = max(raw.values()), min(raw.values())
    out = {}
    for name in names:
        if name not in raw:
            out[name] = 0
        elif hi == 0:
            out[name] = MAX_NODE_SCORE
        else:
            out[name] = MAX_NODE_SCORE * (hi + lo - raw[name]) // hi
    return out
