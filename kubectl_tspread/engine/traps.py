"""The spread traps of SEMANTICS §7, detected as data.

`detect_traps(index, state, workload_pods)` returns `{position in state.constraints:
[Trap, ...]}` (positions without traps are left out). A Trap is a code plus the
numbers that explain it; render/text.py turns it into a sentence. Volume pinning
needs PersistentVolumes and is why-pending's business, not this module's.

Codes and when they fire (hard = DoNotSchedule):
- CordonedDomain (hard): some domains exist only through cordoned nodes
  (nodeTaintsPolicy Ignore keeps them), and they hold the global minimum below
  what the schedulable domains would give.
- AutoscalerDomain (hard): the same, for domains that exist only through nodes an
  autoscaler has tainted for removal (ToBeDeletedByClusterAutoscaler, Karpenter's
  karpenter.sh/disrupted or karpenter.sh/disruption): they hold the minimum until the
  autoscaler deletes their Node objects.
- InvisibleEmptyDomain: a topology value exists on nodes but none of them is
  eligible because of an untolerated taint or a cordon under nodeTaintsPolicy
  Honor, so that domain does not count and pods pile into the others; minDomains
  above the number of domains has not made it count.
- MinDomainsUnreachable (hard): fewer domains than minDomains (> 1), so globalMin
  is pinned to 0 and each domain takes at most maxSkew matching pods.
- RollingUpdateSkew: the counted pods span several pod-template-hash values and
  the constraint does not list pod-template-hash in matchLabelKeys.
- MissingLabels: nodes excluded because they lack a topologyKey (explicit
  constraints only: the implicit defaults skip zone-less nodes on purpose).
- EnforcedOnlyAtPlacement (hard): the current skew is already above maxSkew;
  DoNotSchedule only gates new placements and nothing rebalances.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import AUTOSCALER_TAINTS, autoscaler_taint
from kubectl_tspread.engine.spread import (
    EXCLUDED_MISSING_KEY,
    EXCLUDED_TAINT,
    ConstraintState,
    SpreadState,
    counted_pods,
    minimum,
)
from kubectl_tspread.model import HONOR, NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Node, Pod, Taint

CORDONED_DOMAIN = "CordonedDomain"
AUTOSCALER_DOMAIN = "AutoscalerDomain"
INVISIBLE_EMPTY_DOMAIN = "InvisibleEmptyDomain"
MIN_DOMAINS_UNREACHABLE = "MinDomainsUnreachable"
ROLLING_UPDATE_SKEW = "RollingUpdateSkew"
MISSING_LABELS = "MissingLabels"
ENFORCED_ONLY_AT_PLACEMENT = "EnforcedOnlyAtPlacement"

TEMPLATE_HASH = "pod-template-hash"


@dataclass(frozen=True)
class Trap:
    code: str
    params: dict[str, Any] = field(default_factory=dict)


def detect_traps(index: ClusterIndex, state: SpreadState, workload_pods: Sequence[Pod],
                 counted: Sequence[Sequence[Pod]] | None = None,
                 cordoned: Collection[str] | None = None,
                 marked: Mapping[str, Taint] | None = None) -> dict[int, list[Trap]]:
    """Traps per constraint position; `workload_pods` are the pods of the workload shown.

    `counted` (per position: the workload pods in the counts), `cordoned` (names of the
    cordoned nodes, see `cordoned_nodes`) and `marked` (the autoscaler's taints by node, see
    `autoscaler_marked`) spare the work when the caller has them already."""
    out: dict[int, list[Trap]] = {}
    for i, cs in enumerate(state.constraints):
        traps = constraint_traps(index, cs, workload_pods, None if counted is None else counted[i], cordoned, marked)
        if traps:
            out[i] = traps
    return out


def constraint_traps(index: ClusterIndex, cs: ConstraintState, workload_pods: Sequence[Pod],
                     counted: Sequence[Pod] | None = None, cordoned: Collection[str] | None = None,
                     marked: Mapping[str, Taint] | None = None) -> list[Trap]:
    """The traps of one evaluated constraint, in a fixed order."""
    found = [
        cordoned_domain(index, cs, cordoned),
        autoscaler_domain(index, cs, marked),
        invisible_empty_domain(index, cs),
        min_domains_unreachable(cs),
        rolling_update_skew(cs, workload_pods, counted),
        missing_labels(index, cs),
        enforced_only_at_placement(cs),
    ]
    return [t for t in found if t is not None]


def _cordoned(node: Node) -> bool:
    return node.unschedulable or any(
        t.key == UNSCHEDULABLE_TAINT_KEY and t.effect == NO_SCHEDULE for t in node.taints)


def cordoned_nodes(index: ClusterIndex) -> frozenset[str]:
    """Names of the cordoned nodes (unschedulable, or carrying the cordon taint)."""
    return frozenset(name for name, node in index.nodes.items() if _cordoned(node))


def cordoned_domain(index: ClusterIndex, cs: ConstraintState,
                    cordoned_names: Collection[str] | None = None) -> Trap | None:
    """zones a=3 b=3 c=0 (c cordoned), maxSkew 1 → globalMin 0 instead of 3:
    a and b accept nothing more until zone c's nodes are deleted or the policy is Honor.

    `cordoned_names` (`cordoned_nodes(index)`) lets a caller judge each node once per report."""
    if not cs.constraint.hard or not cs.domains:
        return None
    if cordoned_names is None:
        cordoned_names = cordoned_nodes(index)
    found = _held_domains(cs, cordoned_names)
    return None if found is None else Trap(CORDONED_DOMAIN, found)


def autoscaler_marked(index: ClusterIndex) -> dict[str, Taint]:
    """The nodes a cluster autoscaler has tainted for deletion: name -> that taint."""
    return {name: t for name, node in index.nodes.items() if (t := autoscaler_taint(node)) is not None}


def autoscaler_domain(index: ClusterIndex, cs: ConstraintState, marked: Mapping[str, Taint] | None = None
                      ) -> Trap | None:
    """zones a=3 b=3 c=0, c's only node tainted ToBeDeletedByClusterAutoscaler, maxSkew 1 →
    globalMin 0 instead of 3 until the autoscaler deletes that node (or the policy is Honor).
    A domain that is also all cordoned is the CordonedDomain trap's. `marked`:
    autoscaler_marked(index), when the caller has it."""
    if not cs.constraint.hard or not cs.domains:
        return None
    if marked is None:
        marked = autoscaler_marked(index)
    if not marked:
        return None
    found = _held_domains(cs, marked, exclude=cordoned_nodes(index))
    if found is None:
        return None
    nodes = sorted(n for v in found["domains"] for n in cs.domains[v].nodes)
    found["nodes"] = nodes
    found["taints"] = sorted({marked[n].key for n in nodes})
    found["autoscalers"] = sorted({AUTOSCALER_TAINTS[k] for k in found["taints"]})
    return Trap(AUTOSCALER_DOMAIN, found)


def _held_domains(cs: ConstraintState, names: Collection[str],
                  exclude: Collection[str] = ()) -> dict[str, Any] | None:
    """The domains made only by the nodes `names` (and not all by `exclude`), when they hold the
    global minimum below what the other domains would give; their numbers, else None."""
    c = cs.constraint
    # only a domain holding some named node can be all named; domains are in value order
    suspects = sorted({v for n in names if (v := cs.node_domain.get(n)) is not None})
    held = [d for d in (cs.domains[v] for v in suspects if v in cs.domains)
            if d.nodes and all(n in names for n in d.nodes) and not all(n in exclude for n in d.nodes)]
    if not held:
        return None
    gone = {d.value for d in held}  # a set: hostname constraints have thousands of domains
    live = [d.pods for d in cs.domains.values() if d.value not in gone]
    if not live:
        return None
    min_without, _ = minimum(live, len(live), c.min_domains)
    if min_without <= cs.global_min:
        return None
    return {
        "key": c.topology_key,
        "domains": [d.value for d in held],
        "pods": sum(d.pods for d in held),
        "global_min": cs.global_min,
        "global_min_without": min_without,
        "max_skew": c.max_skew,
        "node_taints_policy": c.node_taints_policy,
    }


def invisible_empty_domain(index: ClusterIndex, cs: ConstraintState) -> Trap | None:
    """zones a, b, c where every node of c is tainted and nodeTaintsPolicy is Honor →
    only a and b are domains, so 2/1 counts as balanced while c holds none."""
    c = cs.constraint
    # with minDomains above the domain count the missing domains already pin globalMin to 0
    if c.node_taints_policy != HONOR or cs.min_forced_zero:
        return None
    tainted = {e.name for e in cs.excluded_nodes if e.reason == EXCLUDED_TAINT}
    values: dict[str, list[str]] = {}
    for name in sorted(tainted):
        value = index.nodes[name].labels.get(c.topology_key)
        if value is not None and value not in cs.domains:
            values.setdefault(value, []).append(name)
    if not values:
        return None
    return Trap(INVISIBLE_EMPTY_DOMAIN, {
        "key": c.topology_key,
        "values": sorted(values),
        "nodes": [n for v in sorted(values) for n in values[v]],
        "domains": len(cs.domains),
        "min_domains": c.min_domains,
    })


def min_domains_unreachable(cs: ConstraintState) -> Trap | None:
    """minDomains 3 with only zones a and b → globalMin 0, each zone holds at most maxSkew."""
    c = cs.constraint
    if not c.hard or c.min_domains <= 1 or not cs.min_forced_zero:
        return None
    # with globalMin 0 a domain accepts while count + 1 <= maxSkew; a pod that does not
    # match its own selector never adds to the counts, so there is no per-domain cap
    per_domain = c.max_skew if cs.self_match else None
    return Trap(MIN_DOMAINS_UNREACHABLE, {
        "key": c.topology_key,
        "min_domains": c.min_domains,
        "domains": len(cs.domains),
        "max_skew": c.max_skew,
        "per_domain": per_domain,
        "capacity": None if per_domain is None else per_domain * len(cs.domains),
    })


def rolling_update_skew(cs: ConstraintState, workload_pods: Sequence[Pod],
                        counted: Sequence[Pod] | None = None) -> Trap | None:
    """Old and new ReplicaSet pods both counted: without matchLabelKeys
    [pod-template-hash] the new revision is spread against the old one's placement.
    `counted`: the workload pods in the counts, when the caller has them."""
    c = cs.constraint
    if TEMPLATE_HASH in c.match_label_keys:
        return None
    if counted is None:
        counted = counted_pods(workload_pods, cs.uncounted_reasons(workload_pods))
    revisions = Counter(p.labels[TEMPLATE_HASH] for p in counted if TEMPLATE_HASH in p.labels)
    if len(revisions) < 2:
        return None
    return Trap(ROLLING_UPDATE_SKEW, {
        "key": c.topology_key,
        "revisions": dict(sorted(revisions.items())),
        "counted": len(counted),
    })


def missing_labels(index: ClusterIndex, cs: ConstraintState) -> Trap | None:
    """Nodes lacking a topologyKey: unusable for a hard constraint, unscored for a soft one."""
    c = cs.constraint
    if c.implicit:
        return None
    names = [e.name for e in cs.excluded_nodes if e.reason == EXCLUDED_MISSING_KEY]
    if not names:
        return None
    own = [n for n in names if c.topology_key not in index.nodes[n].labels]
    return Trap(MISSING_LABELS, {
        "key": c.topology_key,
        "nodes": names,
        "missing_own_key": len(own),
        "missing_other_key": len(names) - len(own),
        "hard": c.hard,
    })


def enforced_only_at_placement(cs: ConstraintState) -> Trap | None:
    """zones a=4 b=1, maxSkew 1 with DoNotSchedule: skew 3 stays until pods are moved."""
    c = cs.constraint
    if not c.hard or cs.skew <= c.max_skew:
        return None
    ordered = sorted(cs.domains.values(), key=lambda d: (-d.pods, d.value))
    return Trap(ENFORCED_ONLY_AT_PLACEMENT, {
        "key": c.topology_key,
        "skew": cs.skew,
        "max_skew": c.max_skew,
        "max_domain": ordered[0].value,
        "max_pods": ordered[0].pods,
        "global_min": cs.global_min,
    })

