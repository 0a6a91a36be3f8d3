"""What really keeps a Pending pod off every node: the blockers behind the scheduler's message.

Pure domain code: the per-node verdicts (every filter evaluated on its own) in, a list of
Blocker records out, most decisive first. A blocker is one (plugin, reason) and the nodes it
refuses. Decisive means: a blocker that refuses every node on its own comes first (fixing
anything else cannot help: a request above every node's allocatable, a node affinity no
node matches), then the blocker that refuses the most nodes, ties in scheduler order.

Each blocker carries a code and the numbers its sentence needs (render/pending.py words it):
the node affinity term no node matches, the largest allocatable beside the request, the PV
and zone a volume pins the pod to, the autoscaler taints on nodes being removed, the node
features the pod requires that nodes do not declare.

    pod requests 64Gi memory, nodes of 16Gi →
    Blocker(NodeResourcesFit, "Insufficient memory", all nodes, RequestAboveAllocatable,
            {resource: memory, request: 64Gi, largest: 16Gi, node: n1})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from kubectl_tspread.engine import filters, resources, spread, versions, volumes
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import AUTOSCALER_TAINTS, term_matches, untolerated_taint
from kubectl_tspread.model import UNSCHEDULABLE_TAINT_KEY, Node, PersistentVolume, Pod

# blocker codes (render/pending.py words each)
SPREAD = "TopologySpread"
CORDONED = "Cordoned"
TAINTED = "UntoleratedTaint"
AUTOSCALER_REMOVING = "AutoscalerRemovingNodes"
NODE_AFFINITY_UNMATCHED = "NodeAffinityUnmatched"
REQUEST_ABOVE_ALLOCATABLE = "RequestAboveAllocatable"
NO_CAPACITY = "NoCapacity"
VOLUME_CONFLICT = "VolumeConflict"
POD_AFFINITY = "PodAffinity"
PREFILTER_REJECTED = "PreFilterRejected"
MISSING_NODE_FEATURES = "MissingNodeFeatures"
OTHER = "Other"

_ZONE_KEYS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


@dataclass(frozen=True, slots=True)
class Blocker:
    plugin: str
    reason: str
    nodes: tuple[str, ...]  # every node this reason refuses (each filter evaluated on its own)
    code: str = OTHER
    params: dict[str, Any] = field(default_factory=dict)
    alone: bool = False  # refuses every node by itself


def _failures(v: filters.NodeVerdict) -> list[spread.FilterFailure]:
    out = list(v.failures)
    if v.prefilter is not None and v.prefilter not in out:
        out.insert(0, v.prefilter)
    return out


def blocked_by(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict]) -> list[Blocker]:
    """Every (plugin, reason) that refuses some node, most decisive first; empty when the pod fits."""
    if not verdicts or any(v.passes for v in verdicts):
        return []
    refused: dict[tuple[str, str], list[str]] = {}
    for v in verdicts:
        cordon = any(f.plugin == "NodeUnschedulable" for f in v.failures)
        for f in _failures(v):
            if f.plugin == "TaintToleration" and cordon and only_cordon_taint(pod, index.nodes[v.node]):
                continue  # the cordon's own taint: one cause, told once as the cordon
            nodes = refused.setdefault((f.plugin, f.reason), [])
            if not nodes or nodes[-1] != v.node:
                nodes.append(v.node)
    total = len(verdicts)
    order = {p: i for i, p in enumerate(filters.FILTER_ORDER)}
    out = [_classify(index, pod, plugin, reason, tuple(nodes), len(nodes) == total)
           for (plugin, reason), nodes in refused.items()]
    out.sort(key=lambda b: (not b.alone, -len(b.nodes), order.get(b.plugin, -1), b.reason))
    return out


def only_cordon_taint(pod: Pod, node: Node) -> bool:
    """Every taint of the node the pod does not tolerate is the cordon's own."""
    rest = tuple(t for t in node.taints if t.key != UNSCHEDULABLE_TAINT_KEY)
    return untolerated_taint(rest, pod.tolerations) is None


def _classify(index: ClusterIndex, pod: Pod, plugin: str, reason: str, nodes: tuple[str, ...],
              alone: bool) -> Blocker:
    params: dict[str, Any] = {}
    code = OTHER
    if plugin == spread.PLUGIN:
        code = SPREAD
    elif plugin == "NodeUnschedulable":
        code = CORDONED
    elif plugin == "TaintToleration":
        code, params = _taints(index, pod, nodes)
    elif plugin == "NodeAffinity" and reason == filters.REASON_NODE_AFFINITY:
        code, params = NODE_AFFINITY_UNMATCHED, unmatched_affinity(index, pod)
    elif plugin == resources.NODE_RESOURCES_FIT:
        code, params = _resources(index, pod, reason)
    elif plugin in (volumes.VOLUME_BINDING, volumes.VOLUME_ZONE) and reason in (
            volumes.REASON_NODE_CONFLICT, volumes.REASON_ZONE_CONFLICT):
        code, params = VOLUME_CONFLICT, pinned_volumes(index, pod)
    elif plugin == "InterPodAffinity":
        code = POD_AFFINITY
    elif plugin == filters.NODE_DECLARED_FEATURES:
        code, params = MISSING_NODE_FEATURES, missing_features(index, pod, nodes)
    if code == OTHER and _is_prefilter(reason):
        code = PREFILTER_REJECTED
    return Blocker(plugin, reason, nodes, code, params, alone)


def _is_prefilter(reason: str) -> bool:
    return reason in (volumes.REASON_UNBOUND_IMMEDIATE, filters.REASON_AFFINITY_CONFLICT) \
        or reason.startswith('persistentvolumeclaim "')


def _taints(index: ClusterIndex, pod: Pod, nodes: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The untolerated taints by node; AutoscalerRemovingNodes when every one is an autoscaler's."""
    found: dict[str, list[str]] = {}
    autoscaler: dict[str, str] = {}
    for name in nodes:
        node = index.nodes[name]
        t = untolerated_taint(node.taints, pod.tolerations)
        if t is None:
            continue
        text = f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
        found.setdefault(text, []).append(name)
        if t.key in AUTOSCALER_TAINTS:
            autoscaler[name] = AUTOSCALER_TAINTS[t.key]
    params = {"taints": [{"taint": k, "nodes": v} for k, v in sorted(found.items())]}
    if autoscaler and len(autoscaler) == len(nodes):
        params["autoscalers"] = sorted(set(autoscaler.values()))
        return AUTOSCALER_REMOVING, params
    return TAINTED, params


def unmatched_affinity(index: ClusterIndex, pod: Pod) -> dict[str, Any]:
    """What of the pod's nodeSelector and required node affinity no node matches.

    nodeSelector {disk: ssd} on nodes without it → selector ["disk=ssd"]; a term whose
    requirement `zone in (d)` matches no node → that requirement named for the term; a term
    whose requirements each match some node but never together → the whole term.
    """
    nodes = list(index.nodes.values())
    selector = [f"{k}={v}" for k, v in sorted(pod.node_selector.items())
                if not any(n.labels.get(k) == v for n in nodes)]
    terms = []
    for i, term in enumerate(pod.node_affinity or ()):
        if any(term_matches(term, n) for n in nodes):
            continue
        reqs = [str(r) for r in term.match_expressions if not any(r.matches(n.labels) for n in nodes)]
        if not reqs:
            reqs = [str(r) for r in term.match_expressions] + \
                   [f"{r.key} {r.op} {','.join(r.values)}" for r in term.match_fields]
        terms.append({"term": i + 1, "requirements": reqs})
    matching = sum(1 for n in nodes if filters.node_affinity_failure(pod, n) is None)
    return {"selector": selector, "terms": terms, "matching": matching,
            "affinity": pod.node_affinity is not None}


def _resources(index: ClusterIndex, pod: Pod, reason: str) -> tuple[str, dict[str, Any]]:
    """RequestAboveAllocatable when the request exceeds every node's whole allocatable."""
    name = reason.removeprefix("Insufficient ")
    if reason == resources.REASON_TOO_MANY_PODS or name == reason:
        return NO_CAPACITY, {"resource": "pods"}
    want = pod.requests.get(name, 0)
    largest_node = max(index.nodes.values(), key=lambda n: (n.allocatable.get(name, 0), n.name), default=None)
    largest = 0 if largest_node is None else largest_node.allocatable.get(name, 0)
    params = {"resource": name, "request": want, "largest": largest,
              "node": None if largest_node is None else largest_node.name}
    return (REQUEST_ABOVE_ALLOCATABLE if want > largest else NO_CAPACITY), params


def missing_features(index: ClusterIndex, pod: Pod, nodes: Sequence[str]) -> dict[str, Any]:
    """The features the pod requires (NodeDeclaredFeatures) and, per feature, the refused nodes
    that do not declare it; `declaring`: the nodes that declare every one.

    a pod on the host network with hostUsers false, nodes n1 n2 declaring nothing →
    {features: [UserNamespacesHostNetworkSupport], missing: [{feature: …, nodes: [n1, n2]}]}
    """
    rules = versions.rules_for(index.snapshot.kube_version)
    required = sorted(filters.required_features(pod, rules))
    missing = []
    for feature in required:
        lacking = [n for n in nodes if feature not in index.nodes[n].declared_features]
        if lacking:
            missing.append({"feature": feature, "nodes": lacking})
    declaring = sorted(n.name for n in index.nodes.values() if not filters.missing_features(pod, n, rules))
    return {"features": required, "missing": missing, "declaring": declaring}


def pv_zones(pv: PersistentVolume) -> list[str]:
    """The zones a PV can be used in: its node affinity's zone `In` values, else its zone labels."""
    zones: set[str] = set()
    for term in pv.node_affinity or ():
        for r in term.match_expressions:
            if r.key in _ZONE_KEYS and r.op == "In":
                zones.update(r.values)
    if not zones:
        for key in _ZONE_KEYS:
            if key in pv.labels:
                zones.update(pv.labels[key].split("__"))
    return sorted(zones)


def pinned_volumes(index: ClusterIndex, pod: Pod) -> dict[str, Any]:
    """The pod's bound PVs that limit where it can run, each with its zones and nodes it allows."""
    out = []
    for claim, pv in volumes.prepare(index, pod).bound:
        if pv is None:
            continue
        zones = pv_zones(pv)
        if not zones and pv.node_affinity is None:
            continue
        allowed = sorted(n.name for n in index.nodes.values()
                         if (pv.node_affinity is None or any(term_matches(t, n) for t in pv.node_affinity)))
        out.append({"pv": pv.name, "claim": claim.name, "zones": zones, "nodes": allowed})
    return {"volumes": out}


def volumes_pinned_to(index: ClusterIndex, names: Sequence[str]) -> list[str]:
    """PVs that only the nodes `names` can use (their node affinity matches no other node):
    deleting those nodes leaves the volumes' pods nowhere to run."""
    gone = set(names)
    out = []
    for pv in index.snapshot.pvs:
        if not pv.node_affinity:
            continue
        usable = [n.name for n in index.nodes.values() if any(term_matches(t, n) for t in pv.node_affinity)]
        if usable and all(n in gone for n in usable):
            out.append(pv.name)
    return sorted(out)
