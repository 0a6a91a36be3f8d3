"""kube-scheduler's Filter plugins, in the order the default profile runs them.

`evaluate(index, pod)` returns one NodeVerdict per node. Unlike the scheduler, which
stops at a node's first failing filter, every filter is evaluated on its own, so a
node refused for cpu still says whether spread would refuse it too; `first` is what
the scheduler reports.

Two PreFilter outcomes decide a node before any Filter runs, and then they are its
first failure whatever the order:
- a PreFilter rejection (a missing PVC, conflicting node-name affinity) rejects the
  pod on every node (`stage == PREFILTER`);
- NodeAffinity's PreFilterResult (required affinity on `metadata.name`, as DaemonSet
  pods carry) leaves every other node out (`stage == PREFILTER_RESULT`) with
  "node(s) didn't satisfy plugin(s) [NodeAffinity]".

NodeDeclaredFeatures (1.36+) is node-local but runs after the cluster-wide filters
(`late_failures`).

Not modelled (the snapshot lacks the data): VolumeRestrictions (disk conflicts,
ReadWriteOncePod), NodeVolumeLimits (CSI attach limits), DynamicResources claims,
scheduler profiles with other plugins or NodeAffinity addedAffinity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from kubectl_tspread.engine import interpod, resources, spread, versions, volumes
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import matches_required_affinity, untolerated_taint
from kubectl_tspread.engine.spread import UNRESOLVABLE, FilterFailure, shared_failure
from kubectl_tspread.model import NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Node, Pod, Taint

SUCCESS = "Success"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"
# NodeDeclaredFeatures is appended to the default profile's plugins (applyFeatureGates), after
# DynamicResources and the rest: its Filter runs last
FILTER_ORDER = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                "VolumeZone", "PodTopologySpread", "InterPodAffinity", NODE_DECLARED_FEATURES)

FILTER, PREFILTER, PREFILTER_RESULT = "Filter", "PreFilter", "PreFilterResult"

REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_TAINT = "node(s) had untolerated taint(s)"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"
REASON_NOT_IN_PREFILTER_RESULT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
REASON_FEATURES = "node(s) didn't match Pod's required features"

_CORDON_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """Every failing filter of one node, each evaluated on its own, in scheduler order.

    `stage` says where the first failure came from (FILTER, or a PreFilter outcome that
    kept the scheduler from running any filter on the node)."""

    node: str
    failures: tuple[FilterFailure, ...] = ()
    stage: str = FILTER
    prefilter: FilterFailure | None = None

    @property
    def first(self) -> FilterFailure | None:
        if self.prefilter is not None:
            return self.prefilter
        return self.failures[0] if self.failures else None

    @property
    def first_failures(self) -> tuple[FilterFailure, ...]:
        """All reasons of the first failing plugin (NodeResourcesFit and VolumeBinding give several)."""
        first = self.first
        if first is None:
            return ()
        if self.prefilter is not None:
            return (first,)
        return tuple(f for f in self.failures if f.plugin == first.plugin)

    @property
    def status(self) -> str:
        first = self.first
        return SUCCESS if first is None else first.status

    @property
    def passes(self) -> bool:
        return self.first is None


@dataclass(slots=True)
class Cycle:
    """The per-pod state the scheduler builds in PreFilter, computed once for all nodes."""

    index: ClusterIndex
    pod: Pod
    spread_state: spread.SpreadState | None = None
    affinity: interpod.AffinityState = field(init=False)
    volume: volumes.VolumeState = field(init=False)
    prefilter: FilterFailure | None = field(init=False)
    node_names: frozenset[str] | None = field(init=False)
    rules: versions.Rules = field(init=False)
    # InterPodAffinity's PreFilter walks every bound pod: a caller that knows its result
    # (no pod in the cluster has pod (anti-)affinity, as the drain planner checks) passes it
    known_affinity: interpod.AffinityState | None = None

    def __post_init__(self) -> None:
        if self.spread_state is None:
            self.spread_state = spread.compute(self.index, self.pod)
        self.affinity = (self.known_affinity if self.known_affinity is not None
                         else interpod.prepare(self.index, self.pod))
        self.volume = volumes.prepare(self.index, self.pod)
        self.rules = versions.rules_for(self.index.snapshot.kube_version)
        self.node_names = _affinity_node_names(self.pod)
        conflict = None
        if self.node_names is not None and not self.node_names:
            conflict = FilterFailure("NodeAffinity", UNRESOLVABLE, REASON_AFFINITY_CONFLICT)
        # PreFilter runs in plugin order: NodeAffinity before VolumeBinding
        self.prefilter = conflict or self.volume.prefilter


def _affinity_node_names(pod: Pod) -> frozenset[str] | None:
    """NodeAffinity PreFilterResult: the node names that `metadata.name In` requirements
    allow, or None when some term does not name nodes (every node stays a candidate)."""
    if not pod.node_affinity:
        return None
    names: set[str] = set()
    for term in pod.node_affinity:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == "metadata.name" and r.op == "In":
                term_names = set(r.values) if term_names is None else term_names & set(r.values)
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


def tolerates_cordon(pod: Pod) -> bool:
    """Whether the pod tolerates a cordoned node's taint (NodeUnschedulable lets it on)."""
    return any(t.tolerates(_CORDON_TAINT) for t in pod.tolerations)


def unschedulable_failure(pod: Pod, node: Node) -> FilterFailure | None:
    """NodeUnschedulable: a cordoned node refuses pods that do not tolerate its cordon taint."""
    if node.unschedulable and not tolerates_cordon(pod):
        return shared_failure("NodeUnschedulable", UNRESOLVABLE, REASON_UNSCHEDULABLE)
    return None


def node_name_failure(pod: Pod, node: Node) -> FilterFailure | None:
    if pod.node_name and pod.node_name != node.name:
        return shared_failure("NodeName", UNRESOLVABLE, REASON_NODE_NAME)
    return None


def taint_failure(pod: Pod, node: Node, rules: versions.Rules = versions.NEWEST_RULES) -> FilterFailure | None:
    """TaintToleration: an untolerated NoSchedule/NoExecute taint of spec.taints (as the
    scheduler reads them: a cordon without the node controller's taint is not a taint)."""
    taint = untolerated_taint(node.taints, pod.tolerations)
    if taint is None:
        return None
    if rules.taint_reason_names_taint:
        return shared_failure("TaintToleration", UNRESOLVABLE, f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")
    return shared_failure("TaintToleration", UNRESOLVABLE, REASON_TAINT)


def node_affinity_failure(pod: Pod, node: Node) -> FilterFailure | None:
    if not matches_required_affinity(pod, node):
        return shared_failure("NodeAffinity", UNRESOLVABLE, REASON_NODE_AFFINITY)
    return None


def required_features(pod: Pod, rules: versions.Rules) -> frozenset[str]:
    """NodeDeclaredFeatures' PreFilter: the features of its minor's registry the pod's spec
    uses (empty: the plugin Skips, as it does while off in 1.35)."""
    used = pod.features_used
    return used & rules.node_features if used else used


def missing_features(pod: Pod, node: Node, rules: versions.Rules) -> tuple[str, ...]:
    """The required features `node` does not declare (status.declaredFeatures), by name."""
    return tuple(sorted(required_features(pod, rules) - node.declared_features))


def features_failure(pod: Pod, node: Node, rules: versions.Rules) -> FilterFailure | None:
    """NodeDeclaredFeatures: UnschedulableAndUnresolvable on a node that does not declare every
    feature the pod requires (a kubelet's declaration is not something preemption changes).
    Node-local, but after PodTopologySpread and InterPodAffinity in scheduler order."""
    if pod.features_used and missing_features(pod, node, rules):
        return shared_failure(NODE_DECLARED_FEATURES, UNRESOLVABLE, REASON_FEATURES)
    return None


# the filters whose verdict on a node depends on pods elsewhere; every other one reads only
# the node, the pods bound to it and the incoming pod (`local_failures`)
CLUSTER_PLUGINS = (spread.PLUGIN, interpod.INTER_POD_AFFINITY)


def local_failures(cycle: Cycle, node: Node, fit: bool = True) -> list[FilterFailure | None]:
    """Each node-local filter's verdict for `node`, in FILTER_ORDER (NodeName before
    NodeUnschedulable from 1.37: `Rules.node_name_first`; several for the
    multi-reason plugins): every filter before PodTopologySpread; NodeResourcesFit's only
    with `fit` (a caller that judges the fit on its own skips summing the node's pods, which
    only that filter and NodePorts read). (A list, not a generator: this runs for every node
    of every evaluation.)"""
    pod = cycle.pod
    usage = resources.node_usage(cycle.index, node.name, exclude=pod.key) if fit or pod.host_ports else None
    rules = cycle.rules
    out = [unschedulable_failure(pod, node), node_name_failure(pod, node)]
    if rules.node_name_first:
        out.reverse()
    out += [taint_failure(pod, node, rules), node_affinity_failure(pod, node),
            resources.ports_failure(pod, usage) if usage is not None else None]
    if fit:
        out.extend(resources.fit_failures(pod, node, usage, rules.fit_unresolvable))
    if cycle.prefilter is None:  # a rejected PreFilter leaves the volume state unresolved
        out.extend(volumes.binding_failures(cycle.volume, node))
        out.append(volumes.zone_failure(cycle.volume, node))
    return out


def cluster_failures(cycle: Cycle, node: Node) -> list[FilterFailure | None]:
    """PodTopologySpread then InterPodAffinity for `node`, from the cycle's PreFilter state."""
    out = [] if cycle.spread_state is None else [spread.filter_node(cycle.spread_state, node)]
    out.append(interpod.failure(cycle.affinity, node))
    return out


def late_failures(cycle: Cycle, node: Node) -> list[FilterFailure | None]:
    """The node-local filters that run after the cluster-wide ones: NodeDeclaredFeatures."""
    return [features_failure(cycle.pod, node, cycle.rules)]


def _failures(cycle: Cycle, node: Node, fit: bool = True) -> list[FilterFailure | None]:
    return local_failures(cycle, node, fit) + cluster_failures(cycle, node) + late_failures(cycle, node)


def passes_beyond_local(cycle: Cycle, node: Node) -> bool:
    """The node passes everything but `local_failures`: no PreFilter outcome keeps it out,
    the cluster-wide filters accept it, and so do the filters after them."""
    if cycle.prefilter is not None or (cycle.node_names is not None and node.name not in cycle.node_names):
        return False
    return all(f is None for f in cluster_failures(cycle, node)) and all(f is None for f in late_failures(cycle, node))


def local_pass(verdict: NodeVerdict) -> bool:
    """Every node-local filter accepted the node (a PreFilter rejection aside)."""
    return all(f.plugin in CLUSTER_PLUGINS for f in verdict.failures)


def evaluate_node(index: ClusterIndex, pod: Pod, node: Node, spread_state: spread.SpreadState | None = None,
                  *, cycle: Cycle | None = None, fit: bool = True) -> NodeVerdict:
    """Every filter for one node (NodeResourcesFit only with `fit`: local_failures). Pass
    `cycle` (or at least `spread_state`) when judging many nodes: the PreFilter work is per
    pod, not per node."""
    if cycle is None:
        cycle = Cycle(index, pod, spread_state)
    failures = tuple(f for f in _failures(cycle, node, fit) if f is not None)
    if cycle.prefilter is not None:
        return NodeVerdict(node.name, (cycle.prefilter,) + failures, PREFILTER, cycle.prefilter)
    if cycle.node_names is not None and node.name not in cycle.node_names:
        absent = shared_failure("NodeAffinity", UNRESOLVABLE, REASON_NOT_IN_PREFILTER_RESULT)
        return NodeVerdict(node.name, failures, PREFILTER_RESULT, absent)
    return NodeVerdict(node.name, failures)


def evaluate(index: ClusterIndex, pod: Pod, nodes: Sequence[Node] | None = None,
             spread_state: spread.SpreadState | None = None) -> list[NodeVerdict]:
    """A verdict for every node (default: all nodes of the snapshot, by name); pass
    `spread_state` when the caller has computed it already."""
    cycle = Cycle(index, pod, spread_state)
    chosen = [index.nodes[n] for n in sorted(index.nodes)] if nodes is None else list(nodes)
    return [evaluate_node(index, pod, n, cycle=cycle) for n in chosen]


def schedulable(verdicts: Sequence[NodeVerdict]) -> bool:
    return any(v.passes for v in verdicts)
