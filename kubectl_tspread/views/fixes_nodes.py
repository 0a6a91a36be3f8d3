"""Candidate fixes that change nodes or the pods on them (fixes.py verifies them).

Each builder returns Candidates: an action, its numbers, and a pure function that
turns a Snapshot into the changed copy. Builders only pick plausible variants so the
number of filter re-runs stays small; whether a variant works is decided by
verification, never here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from kubectl_tspread.engine import filters, resources, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import AUTOSCALER_TAINTS, autoscaler_taint
from kubectl_tspread.model import (
    ADD_NODE, DELETE_NODES, EVICT_LOWER_PRIORITY, HOSTNAME_KEY, LABEL_NODES, UNCORDON, UNSCHEDULABLE_TAINT_KEY, Node,
    Pod, new_node_like,
)
from kubectl_tspread.views.whatif import Change

NODE_UNSCHEDULABLE = "NodeUnschedulable"
TAINT_TOLERATION = "TaintToleration"
# a brand-new node (model.new_node_like) holds no pods and no cordon: failures of these plugins do
# not carry over to it; its taints it keeps
FRESH_NODE_CLEARS = frozenset({NODE_UNSCHEDULABLE, resources.NODE_RESOURCES_FIT, resources.NODE_PORTS,
                               "InterPodAffinity", spread.PLUGIN})

MAX_VARIANTS = 8  # per action: every variant costs one full filter run over the cluster


@dataclass(frozen=True)
class Candidate:
    """`apply` turns a Snapshot into the changed copy; being a whatif.Change it also lets
    fixes.py verify the candidate without re-indexing the cluster."""

    action: str
    params: dict[str, Any] = field(default_factory=dict)
    apply: Change = Change()


def _cordoned(node: Node) -> bool:
    return node.unschedulable or any(t.key == UNSCHEDULABLE_TAINT_KEY for t in node.taints)


def uncordon_candidates(index: ClusterIndex, pod: Pod,
                        verdicts: Sequence[filters.NodeVerdict]) -> list[Candidate]:
    """One candidate per cordoned node, those failing nothing but the cordon first."""
    def others(v: filters.NodeVerdict) -> int:
        return sum(1 for f in v.failures if f.plugin not in (NODE_UNSCHEDULABLE, TAINT_TOLERATION))

    cordoned = [v for v in verdicts if _cordoned(index.nodes[v.node])]
    cordoned.sort(key=lambda v: (others(v), v.node))
    out = []
    for v in cordoned[:MAX_VARIANTS]:
        node = index.nodes[v.node].uncordoned()
        out.append(Candidate(UNCORDON, {"node": v.node}, Change(nodes=(node,))))
    return out


def without_nodes(names: Sequence[str]) -> Change:
    """Delete Node objects; the pod garbage collector then removes the pods bound to them."""
    return Change(removed_nodes=frozenset(names))


def _leaving(node: Node) -> bool:
    """Cordoned, or tainted by an autoscaler that is removing it."""
    return _cordoned(node) or autoscaler_taint(node) is not None


def delete_nodes_candidates(index: ClusterIndex, state: spread.SpreadState) -> list[Candidate]:
    """Per hard constraint, each domain whose nodes are all cordoned (drained) or being removed
    by an autoscaler, then all of them. `autoscalers` names who removes the nodes that are not
    cordoned: for those the fix is to let that autoscaler finish, never to remove its taint."""
    out: list[Candidate] = []
    seen: set[tuple[str, ...]] = set()
    for cs in state.hard:
        drained = [d for d in cs.domains.values() if all(_leaving(index.nodes[n]) for n in d.nodes)]
        groups = [[d] for d in drained] + ([drained] if len(drained) > 1 else [])
        for group in groups:
            names = tuple(sorted(n for d in group for n in d.nodes))
            if names in seen:
                continue
            seen.add(names)
            marked = [t for n in names if not _cordoned(index.nodes[n])
                      and (t := autoscaler_taint(index.nodes[n])) is not None]
            params = {"topologyKey": cs.constraint.topology_key, "domains": [d.value for d in group],
                      "nodes": list(names), "autoscalers": sorted({AUTOSCALER_TAINTS[t.key] for t in marked})}
            out.append(Candidate(DELETE_NODES, params, without_nodes(names)))
    return out[:MAX_VARIANTS]


def _label_value(cs: spread.ConstraintState, node: Node) -> tuple[str, bool] | None:
    """(value, guessed): hostname labels are the node's name; elsewhere the allowed domain with
    the most headroom stands in for the node's real value, which only its owner knows."""
    if cs.constraint.topology_key == HOSTNAME_KEY:
        return node.name, False
    allowed = [v for v in cs.domains if cs.allows(v)]
    if not allowed:
        return None
    return max(allowed, key=lambda v: (cs.headroom(v), [-ord(ch) for ch in v])), True


def label_nodes_candidates(index: ClusterIndex, pod: Pod, state: spread.SpreadState,
                           verdicts: Sequence[filters.NodeVerdict]) -> list[Candidate]:
    """Label the nodes that lack a hard topologyKey but pass every other filter."""
    hard = {}
    for cs in state.hard:
        hard.setdefault(cs.constraint.topology_key, cs)
    usable = {v.node for v in verdicts
              if v.prefilter is None and all(f.plugin == spread.PLUGIN for f in v.failures)}
    changes: dict[str, dict[str, str]] = {}
    guessed = False
    for name in sorted(usable):
        node = index.nodes[name]
        for key, cs in hard.items():
            if key in node.labels:
                continue
            found = _label_value(cs, node)
            if found is None:
                return []
            changes.setdefault(name, {})[key] = found[0]
            guessed = guessed or found[1]
    if not changes:
        return []
    labelled = tuple(replace(index.nodes[name], labels={**index.nodes[name].labels, **extra})
                     for name, extra in changes.items())
    params = {"nodes": sorted(changes), "labels": changes, "guessed": guessed}
    return [Candidate(LABEL_NODES, params, Change(nodes=labelled))]


def _deficits(pod: Pod, node: Node, usage: resources.NodeUsage) -> dict[str, int]:
    """How much of each resource the node lacks for the pod (pods: a count); empty = it fits."""
    out = {}
    for r, want in pod.requests.items():
        if want <= 0:
            continue
        short = want - (node.allocatable.get(r, 0) - usage.requested.get(r, 0))
        if short > 0:
            out[r] = short
    if "pods" in node.allocatable and usage.pods + 1 > node.allocatable["pods"]:
        out["pods"] = usage.pods + 1 - node.allocatable["pods"]
    return out


def _evictable(p: Pod, pending: Pod) -> bool:
    # DaemonSet pods come straight back and mirror pods cannot be evicted; terminating ones are
    # going anyway; pods the pending pod spreads against would only carry the skew elsewhere
    if p.priority >= pending.priority or p.mirror or p.terminating or p.namespace == pending.namespace \
            and any(spread.merged_selector(c, pending).matches(p.labels) for c in pending.spread):
        return False
    return p.owner is None or p.owner.kind != "DaemonSet"


def _victims(index: ClusterIndex, pod: Pod, node: Node) -> list[Pod] | None:
    """The fewest lower-priority pods (lowest priority, then largest first) whose requests cover
    the node's shortfall; None when even all of them would not."""
    lowest = resources.lowest_priority(index, node.name)
    if lowest is None or lowest >= pod.priority:
        return None  # only lower-priority pods are evictable
    usage = resources.node_usage(index, node.name, exclude=pod.key)
    need = _deficits(pod, node, usage)
    if not need:
        return None
    pool = [p for p in index.pods_by_node.get(node.name, ()) if _evictable(p, pod)]
    pool.sort(key=lambda p: (p.priority, -sum(p.requests.get(r, 0) for r in need if r != "pods"), p.name))
    chosen: list[Pod] = []
    for p in pool:
        if all(v <= 0 for v in need.values()):
            break
        chosen.append(p)
        for r in need:
            need[r] -= 1 if r == "pods" else p.requests.get(r, 0)
    return chosen if all(v <= 0 for v in need.values()) else None


def without_pods(pods: Sequence[Pod]) -> Change:
    """Evict `pods` (records of the index): gone from the snapshot by key."""
    return Change(removed_pods=tuple(pods))


def evict_candidates(index: ClusterIndex, pod: Pod,
                     verdicts: Sequence[filters.NodeVerdict]) -> list[Candidate]:
    """Nodes rejected only for resources: evict the fewest lower-priority pods that make room."""
    options = []
    for v in verdicts:
        if v.passes or v.prefilter is not None \
                or any(f.plugin != resources.NODE_RESOURCES_FIT for f in v.failures):
            continue
        victims = _victims(index, pod, index.nodes[v.node])
        if victims:
            options.append((len(victims), max(p.priority for p in victims), v.node, victims))
    options.sort(key=lambda o: o[:3])
    out = []
    for _n, _prio, node, victims in options[:MAX_VARIANTS]:
        params = {"node": node, "pods": [p.name for p in victims], "podKeys": [p.key for p in victims],
                  "priorities": [p.priority for p in victims], "priority": pod.priority}
        out.append(Candidate(EVICT_LOWER_PRIORITY, params, without_pods(victims)))
    return out


def _domain_key(state: spread.SpreadState) -> str | None:
    """The key that names where a new node goes: the first hard non-hostname key, if any."""
    for cs in state.hard:
        if cs.constraint.topology_key != HOSTNAME_KEY:
            return cs.constraint.topology_key
    return None


def _template_rank(pod: Pod, node: Node, v: filters.NodeVerdict) -> tuple:
    """Templates that fail only what a fresh node clears, and that hold the pod when empty, first."""
    lasting = sum(1 for f in v.failures if f.plugin not in FRESH_NODE_CLEARS)
    too_small = any(node.allocatable.get(r, 0) < q for r, q in pod.requests.items() if q > 0)
    return (lasting, too_small, -node.allocatable.get("cpu", 0), -node.allocatable.get("memory", 0),
            node.name)


def add_node_candidates(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                        state: spread.SpreadState) -> list[Candidate]:
    """One new node per domain of the first hard non-hostname key (or one overall), copied from
    the domain's most suitable node; domains with the fewest matching pods first."""
    key = _domain_key(state)
    groups: dict[str, list[filters.NodeVerdict]] = {}
    for v in verdicts:
        node = index.nodes[v.node]
        if key is None:
            groups.setdefault("", []).append(v)
        elif key in node.labels:
            groups.setdefault(node.labels[key], []).append(v)
    cs = next((c for c in state.hard if c.constraint.topology_key == key), None)
    order = sorted(groups, key=lambda val: (cs.count(val) if cs is not None else 0, val))
    out = []
    for value in order[:MAX_VARIANTS]:
        best = min(groups[value], key=lambda v: _template_rank(pod, index.nodes[v.node], v))
        template = index.nodes[best.node]
        node = new_node_like(template, set(index.nodes))
        params = {"topologyKey": key, "domain": value or None, "like": template.name, "name": node.name,
                  "requests": dict(pod.requests)}
        out.append(Candidate(ADD_NODE, params, Change(nodes=(node,))))
    return out
