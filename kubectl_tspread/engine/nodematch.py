"""Node-side predicates shared by the spread engine (inclusion policies) and the filters.

Pure functions over model records; they follow component-helpers' nodeaffinity and
v1/helper taint matching that kube-scheduler uses.
"""

from __future__ import annotations

from typing import Iterable

from kubectl_tspread.model import NO_EXECUTE, NO_SCHEDULE, Node, NodeSelectorTerm, Pod, Taint, Toleration

# the taints TaintToleration and nodeTaintsPolicy: Honor care about
FILTER_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)

# taints an autoscaler puts on a node it is about to remove, by the autoscaler that sets them:
# the node still makes its domain (nodeTaintsPolicy Ignore) until its object is deleted
AUTOSCALER_TAINTS = {
    "ToBeDeletedByClusterAutoscaler": "cluster-autoscaler",
    "karpenter.sh/disrupted": "Karpenter",
    "karpenter.sh/disruption": "Karpenter",
}


def autoscaler_taint(node: Node) -> Taint | None:
    """The NoSchedule/NoExecute taint by which an autoscaler marks the node for removal, if any."""
    for t in node.taints:
        if t.key in AUTOSCALER_TAINTS and t.effect in FILTER_EFFECTS:
            return t
    return None


def term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """A term with neither expressions nor fields matches nothing (upstream: empty term = no match)."""
    if not term.match_expressions and not term.match_fields:
        return False
    for r in term.match_expressions:
        if not r.matches(node.labels):
            return False
    for r in term.match_fields:
        # the only supported field is metadata.name
        if r.key != "metadata.name" or not r.matches({"metadata.name": node.name}):
            return False
    return True


def terms_match(terms: Iterable[NodeSelectorTerm] | None, node: Node) -> bool:
    """Required node affinity: terms are ORed; None (unset) matches every node, an empty list none."""
    if terms is None:
        return True
    return any(term_matches(t, node) for t in terms)


def matches_node_selector(pod: Pod, node: Node) -> bool:
    for k, v in pod.node_selector.items():
        if node.labels.get(k) != v:
            return False
    return True


def matches_required_affinity(pod: Pod, node: Node) -> bool:
    """What NodeAffinity filters and nodeAffinityPolicy: Honor checks: nodeSelector AND required affinity.

    >>> # pod nodeSelector {disk: ssd}, node labelled disk=hdd -> False
    """
    return matches_node_selector(pod, node) and terms_match(pod.node_affinity, node)


def untolerated_taint(taints: Iterable[Taint], tolerations: Iterable[Toleration],
                      effects: Iterable[str] = FILTER_EFFECTS) -> Taint | None:
    """The first taint with one of `effects` that no toleration tolerates, else None."""
    tols = tuple(tolerations)
    for t in taints:
        if t.effect not in effects:
            continue
        if not any(tol.tolerates(t) for tol in tols):
            return t
    return None


def node_untolerated_taint(pod: Pod, node: Node) -> Taint | None:
    """Against spec.taints, the only taints the scheduler reads."""
    return untolerated_taint(node.taints, pod.tolerations)
