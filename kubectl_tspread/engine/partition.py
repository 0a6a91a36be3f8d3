"""Which nodes make which domains for one spread constraint (kube-scheduler's PreFilter).

A node makes its domain exist when it carries the constraint's topologyKey and every key
of the all-keys rule (`all_keys`: the hard keys for a hard constraint, the explicit soft
keys for a soft one) and passes the constraint's nodeAffinityPolicy / nodeTaintsPolicy;
engine/spread.py documents the rules and counts the pods. A `Partition` depends only on
the nodes and those rules, never on a pod count, so callers memoise it across workloads
(distribution), fixes (why-pending) and simulated steps (drain).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import matches_required_affinity, node_untolerated_taint
from kubectl_tspread.model import HONOR, Node, Pod, SpreadConstraint


EXCLUDED_MISSING_KEY = "MissingTopologyKey"
EXCLUDED_NODE_AFFINITY = "NodeAffinity"
EXCLUDED_TAINT = "UntoleratedTaint"


@dataclass(frozen=True, slots=True)
class Domain:
    value: str
    pods: int
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExcludedNode:
    name: str
    reason: str  # EXCLUDED_*


@dataclass(frozen=True, slots=True)
class Partition:
    """Which nodes make which domains for one constraint: it depends on the nodes, the
    topologyKey, the all-keys rule's keys, the two inclusion policies and, when they
    are Honor, the pod's node selection and tolerations — not on any pod count."""

    node_domain: dict[str, str]
    excluded: tuple[ExcludedNode, ...]
    members: dict[str, tuple[str, ...]]  # domain value (sorted) -> its node names
    # every domain at count 0, in value order: an evaluation copies it and replaces only the
    # domains that hold matching pods (a hostname constraint has thousands, its workload few)
    zeros: dict[str, Domain] = field(default_factory=dict)
    # (value, count) -> its Domain, shared by the evaluations that find that count there
    # (Domains are immutable; a hostname domain mostly holds 1 or 2 pods of any workload)
    counted: dict[tuple[str, int], Domain] = field(default_factory=dict, compare=False, repr=False)


def without_node(part: Partition, name: str, excluded: str | None = None,
                 dead: Callable[[tuple[str, ...]], frozenset[str]] | None = None) -> Partition:
    """`part` once the Node `name` is deleted, or, with an `excluded` reason, no longer makes
    a domain (a cordon under nodeTaintsPolicy Honor): its domain loses it, and is gone with
    its last node. A drain deletes or cordons a node per step; judging every node again for
    each would cost the whole cluster per step.

    With `dead` (a domain's node list -> the deleted nodes still listed in it, `name` among
    them when it is the node deleted), a deleted node stays listed while its domain keeps a
    node that exists: `part` itself is returned, so every state made from it stays the same
    object (a deleted node holds no pod, and the domain's count and number are the same).
    The deleted nodes listed go with the domain when its last existing node leaves it."""
    value = part.node_domain.get(name)
    if value is None:
        if excluded is not None or not any(e.name == name for e in part.excluded):
            return part
        return Partition(part.node_domain, tuple(e for e in part.excluded if e.name != name), part.members,
                         part.zeros)
    listed = part.members[value]
    gone = dead(listed) if dead is not None else frozenset()
    if excluded is None and dead is not None and len(listed) > len(gone):
        return part
    at = listed.index(name) if name in listed else len(listed)  # listed once, if at all (slices: a zone lists thousands)
    left = listed[:at] + listed[at + 1:]
    if len(left) == len(gone - {name}):  # no node that exists is left: the domain goes
        left, leaving = (), listed
    else:
        leaving = (name,)
    # copied in C (dict.copy clones the table even with deleted slots, where dict() re-inserts
    # entry by entry); deleting keeps the name order
    node_domain = part.node_domain.copy()
    for n in leaving:
        del node_domain[n]
    members, zeros = part.members.copy(), part.zeros.copy()
    if left:
        members[value], zeros[value] = left, Domain(value, 0, left)
    else:
        del members[value], zeros[value]
    out = part.excluded
    if excluded is not None:  # the excluded nodes are in name order
        at = bisect_left(out, name, key=lambda e: e.name)
        out = out[:at] + (ExcludedNode(name, excluded),) + out[at:]
    return Partition(node_domain, out, members, zeros)


def partition_key(pod: Pod, c: SpreadConstraint, all_keys: Sequence[str]) -> tuple:
    affinity = (tuple(sorted(pod.node_selector.items())), pod.node_affinity) \
        if c.node_affinity_policy == HONOR else None
    taints = pod.tolerations if c.node_taints_policy == HONOR else None
    return (c.topology_key, tuple(all_keys), c.node_affinity_policy, c.node_taints_policy, affinity, taints)


class DerivedPartitions(dict):
    """A partition memo for nodes that differ from those `parent` was filled on only in
    `changed` (names of nodes replaced, added or deleted): a partition the parent knows is
    derived by judging just those nodes again (why-pending's fixes change one node of 5,000)."""

    def __init__(self, parent: Mapping[tuple, Partition], changed: Iterable[str]):
        super().__init__()
        self.parent, self.changed = parent, frozenset(changed)


def _judge(index: ClusterIndex, pod: Pod, c: SpreadConstraint, all_keys: Sequence[str],
           affinity_ok: dict[str, bool], names: Iterable[str]) -> tuple[dict[str, str], list[ExcludedNode]]:
    node_domain: dict[str, str] = {}
    excluded: list[ExcludedNode] = []
    for name in names:
        node = index.nodes[name]
        why = _exclusion(pod, c, node, all_keys, affinity_ok)
        if why is None:
            node_domain[name] = node.labels[c.topology_key]
        else:
            excluded.append(ExcludedNode(name, why))
    return node_domain, excluded


def build(index: ClusterIndex, pod: Pod, c: SpreadConstraint, all_keys: Sequence[str],
          affinity_ok: dict[str, bool], derive_from: DerivedPartitions | None = None) -> Partition:
    """Judge every node; with `derive_from` holding this partition for the parent's nodes,
    only the changed ones (every other node is the very record the parent judged)."""
    old = None if derive_from is None else derive_from.parent.get(partition_key(pod, c, all_keys))
    if old is None:
        return _assemble(*_judge(index, pod, c, all_keys, affinity_ok, sorted(index.nodes)))
    changed = derive_from.changed
    node_domain, excluded = _judge(index, pod, c, all_keys, affinity_ok, sorted(changed & index.nodes.keys()))
    # every changed node still there and judged as before (an uncordon under Ignore): the same
    unchanged = len(node_domain) + len(excluded) == len(changed) \
        and all(old.node_domain.get(n) == v for n, v in node_domain.items()) \
        and all(_excluded_before(old, e) for e in excluded)
    if unchanged:
        return old
    node_domain.update((n, v) for n, v in old.node_domain.items() if n not in changed)
    excluded += [e for e in old.excluded if e.name not in changed]
    return _assemble(dict(sorted(node_domain.items())), sorted(excluded, key=lambda e: e.name))


def _excluded_before(old: Partition, e: ExcludedNode) -> bool:
    i = bisect_left(old.excluded, e.name, key=lambda x: x.name)  # excluded nodes are in name order
    return i < len(old.excluded) and old.excluded[i] == e


def _assemble(node_domain: dict[str, str], excluded: list[ExcludedNode]) -> Partition:
    """The Partition of these eligible and excluded nodes, each in name order."""
    members: dict[str, list[str]] = defaultdict(list)
    for name, value in node_domain.items():
        members[value].append(name)
    ordered = {v: tuple(members[v]) for v in sorted(members)}
    zeros = {v: Domain(v, 0, names) for v, names in ordered.items()}
    return Partition(node_domain, tuple(excluded), ordered, zeros)


def _exclusion(pod: Pod, c: SpreadConstraint, node: Node, all_keys: Sequence[str],
               affinity_ok: dict[str, bool]) -> str | None:
    if c.topology_key not in node.labels or any(k not in node.labels for k in all_keys):
        return EXCLUDED_MISSING_KEY
    if c.node_affinity_policy == HONOR:
        ok = affinity_ok.get(node.name)
        if ok is None:
            ok = affinity_ok[node.name] = matches_required_affinity(pod, node)
        if not ok:
            return EXCLUDED_NODE_AFFINITY
    # spec.taints only: a cordon counts once the node controller has added its taint
    if c.node_taints_policy == HONOR and node_untolerated_taint(pod, node) is not None:
        return EXCLUDED_TAINT
    return None
