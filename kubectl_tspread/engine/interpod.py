"""InterPodAffinity filter: required pod affinity / anti-affinity, both directions.

Follows kube-scheduler's plugins/interpodaffinity/filtering.go. PreFilter counts, per
topology pair (key, value), the existing pods that
- match ALL the incoming pod's affinity terms (affinity counts),
- match each of its anti-affinity terms (anti-affinity counts),
- carry a required anti-affinity term that matches the incoming pod (existing counts);
Filter then reads those counts with the node's labels.

Namespaces: a term applies to `namespaces`, plus the namespaces its namespaceSelector
selects; with neither, to the owning pod's namespace. The snapshot has no Namespace
objects, so a namespaceSelector is evaluated against the one label every namespace
carries, `kubernetes.io/metadata.name`: `{}` selects every namespace, a selector on
that label is exact, and any other selector selects no namespace (may under-count).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.spread import UNRESOLVABLE, UNSCHEDULABLE, FilterFailure, shared_failure
from kubectl_tspread.model.labels import IN, NOT_IN, Requirement, Selector
from kubectl_tspread.model import Node, Pod, PodAffinityTerm

INTER_POD_AFFINITY = "InterPodAffinity"
REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Term:
    """A required PodAffinityTerm resolved for its owning pod (selector with the
    matchLabelKeys / mismatchLabelKeys of the owner merged, namespaces defaulted)."""

    selector: Selector
    topology_key: str
    namespaces: frozenset[str]
    namespace_selector: Selector | None

    def matches(self, pod: Pod) -> bool:
        ns_ok = pod.namespace in self.namespaces or (
            self.namespace_selector is not None
            and self.namespace_selector.matches({NAMESPACE_NAME_LABEL: pod.namespace}))
        return ns_ok and self.selector.matches(pod.labels)


def resolve(term: PodAffinityTerm, owner: Pod) -> Term:
    extra = [Requirement(k, IN, (owner.labels[k],)) for k in term.match_label_keys if k in owner.labels]
    extra += [Requirement(k, NOT_IN, (owner.labels[k],)) for k in term.mismatch_label_keys if k in owner.labels]
    selector = term.selector.merged(extra) if extra else term.selector
    namespaces = set(term.namespaces)
    if not namespaces and term.namespace_selector is None:
        namespaces.add(owner.namespace)
    return Term(selector, term.topology_key, frozenset(namespaces), term.namespace_selector)


@dataclass(frozen=True, slots=True)
class AffinityState:
    affinity: tuple[Term, ...]
    anti_affinity: tuple[Term, ...]
    affinity_counts: Mapping[Pair, int]
    anti_counts: Mapping[Pair, int]
    existing_anti_counts: Mapping[Pair, int]
    matches_own_terms: bool  # the incoming pod matches all its own affinity terms

    @property
    def empty(self) -> bool:
        return not (self.affinity or self.anti_affinity or self.existing_anti_counts)


def _bound_pods(index: ClusterIndex, exclude: str, by_node: Mapping[str, list[Pod]]) -> Iterable[tuple[Pod, Node]]:
    # only pods on nodes the scheduler knows; the incoming pod is not placed yet
    for name, pods in by_node.items():
        node = index.nodes.get(name)
        if node is None:
            continue
        for p in pods:
            if p.key != exclude:
                yield p, node


def _bump(counts: dict[Pair, int], terms: Iterable[Term], node: Node) -> None:
    for t in terms:
        if t.topology_key in node.labels:
            counts[(t.topology_key, node.labels[t.topology_key])] += 1


def prepare(index: ClusterIndex, pod: Pod) -> AffinityState:
    """InterPodAffinity PreFilter over every pod bound to a known node."""
    aff = tuple(resolve(t, pod) for t in pod.pod_affinity)
    anti = tuple(resolve(t, pod) for t in pod.pod_anti_affinity)
    aff_counts: dict[Pair, int] = defaultdict(int)
    anti_counts: dict[Pair, int] = defaultdict(int)
    existing: dict[Pair, int] = defaultdict(int)
    # without terms of its own only the existing pods' anti-affinity can refuse the pod
    by_node = index.pods_by_node if aff or anti else index.anti_affinity_by_node
    for p, node in _bound_pods(index, pod.key, by_node):
        if aff and all(t.matches(p) for t in aff):
            _bump(aff_counts, aff, node)
        _bump(anti_counts, (t for t in anti if t.matches(p)), node)
        if p.pod_anti_affinity:
            theirs = (resolve(t, p) for t in p.pod_anti_affinity)
            _bump(existing, (t for t in theirs if t.matches(pod)), node)
    own = all(t.matches(pod) for t in aff)
    return AffinityState(aff, anti, dict(aff_counts), dict(anti_counts), dict(existing), own)


def _satisfies_affinity(state: AffinityState, node: Node) -> bool:
    """Every affinity term needs a matching pod in the node's domain, except for the
    first pod of a self-affine group: no pod anywhere matches, the pod matches its own
    terms, and the node carries every topology key."""
    pods_exist = True
    for t in state.affinity:
        value = node.labels.get(t.topology_key)
        if value is None:
            return False
        if state.affinity_counts.get((t.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not state.affinity_counts and state.matches_own_terms


def failure(state: AffinityState, node: Node) -> FilterFailure | None:
    """InterPodAffinity Filter.

    >>> # anti-affinity app=web per zone, a web pod runs in zone a -> zone a nodes refuse
    """
    if state.empty:  # no terms either way: nothing below can refuse the node
        return None
    if not _satisfies_affinity(state, node):
        return shared_failure(INTER_POD_AFFINITY, UNRESOLVABLE, REASON_AFFINITY)
    for t in state.anti_affinity:
        value = node.labels.get(t.topology_key)
        if value is not None and state.anti_counts.get((t.topology_key, value), 0) > 0:
            return shared_failure(INTER_POD_AFFINITY, UNSCHEDULABLE, REASON_ANTI_AFFINITY)
    for pair in node.labels.items():
        if state.existing_anti_counts.get(pair, 0) > 0:
            return shared_failure(INTER_POD_AFFINITY, UNSCHEDULABLE, REASON_EXISTING_ANTI_AFFINITY)
    return None
