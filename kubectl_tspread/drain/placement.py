"""Where the scheduler would put a replacement pod: filter every node, then score.

Filtering is the engine's (engine.filters: every filter, spread included), run on
the simulated cluster. Among the nodes that pass, the planner predicts the node
with the highest weighted score, using the two default-profile Score plugins that
decide placements during a drain:

- PodTopologySpread (weight 2): `spread.score_nodes` over the feasible nodes; only
  pods with ScheduleAnyway constraints (their own or the implicit defaults) get one.
- NodeResourcesFit LeastAllocated (weight 1): for cpu and memory, weight 1 each,
  `(allocatable − requested) × 100 / allocatable` after adding the pod, averaged;
  requests are the scheduler's non-zero ones (a container without requests counts
  100m cpu and 200Mi memory when scoring).

Ties go to the node whose name sorts first (the scheduler picks at random among
ties and, on large clusters, scores only a sample of the feasible nodes), so the
predicted node is a prediction; the set of accepting domains is exact.

Speed: replacements that the filters other than spread cannot tell apart (same
requests, ports, tolerations, node selection, volumes; see `filter_key`) share one
cache of those filters' verdicts and one PreFilter cycle, keyed by node and the node's
version in the simulation: after a replacement is bound only that node is
re-filtered, while spread (which depends on the whole cluster) comes from the
simulation's memo (`SimCluster.spread_state`). The cache is off when any pod has
required pod (anti-)affinity, because InterPodAffinity reads pods on other nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

from kubectl_tspread.engine import filters, interpod, spread
from kubectl_tspread.drain.simulate import SimCluster, spread_key
from kubectl_tspread.model import Node, Pod

SPREAD_WEIGHT = 2
LEAST_ALLOCATED_WEIGHT = 1
# kube-scheduler's defaults for pods that request nothing (pkg/scheduler/util/pod_resources.go)
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024
SPREAD_PLUGIN = spread.PLUGIN
# InterPodAffinity's PreFilter result when no pod, the incoming one included, has pod (anti-)affinity
_NO_AFFINITY = interpod.AffinityState((), (), {}, {}, {}, True)


@dataclass(frozen=True, slots=True)
class Placement:
    """The scheduler's predicted verdict for one replacement.

    `node` is None when no node passes. `fit_nodes` are the nodes that pass every
    filter except PodTopologySpread; `spread_refusals` counts, per topologyKey, how
    many of those spread refuses (so a stranded pod can be blamed correctly);
    `reasons` is the first-failure histogram of the scheduler's message."""

    pod: Pod
    node: str | None
    feasible: tuple[str, ...]
    accepting: Mapping[str, tuple[str, ...]]
    fit_nodes: tuple[str, ...] = ()
    spread_refusals: Mapping[str, int] = field(default_factory=dict)
    reasons: Mapping[str, int] = field(default_factory=dict)


def filter_key(pod: Pod) -> tuple:
    """What the filters other than spread and InterPodAffinity read of an unbound pod:
    NodeUnschedulable and TaintToleration the tolerations, NodeName the requested node,
    NodeAffinity the nodeSelector and required terms, NodePorts and NodeResourcesFit the
    host ports and requests, the volume filters the claims (looked up in the namespace)."""
    return (pod.namespace if pod.volumes else "", pod.tolerations, pod.node_name,
            tuple(sorted(pod.node_selector.items())), pod.node_affinity, pod.host_ports,
            tuple(sorted(pod.requests.items())), pod.volumes)


def template_key(pod: Pod) -> tuple:
    """Everything the filters and scores read of an unbound pod: two pods with the same
    key get the same verdict on the same cluster."""
    return (pod.namespace, spread_key(pod), filter_key(pod), pod.pod_affinity, pod.pod_anti_affinity)


class Placer:
    """Places replacements on a SimCluster; keeps the per-template filter cache."""

    def __init__(self) -> None:
        # filter key -> node -> (node version, non-spread failures, first failure)
        self._cache: dict[object, dict[str, tuple[int, tuple[spread.FilterFailure, ...], object]]] = {}
        self._cycles: dict[object, filters.Cycle] = {}
        self._failed: dict[tuple, tuple[int, Placement]] = {}  # template -> (sim stamp, no-node verdict)

    def _cycle(self, sim: SimCluster, key: object, pod: Pod, state: spread.SpreadState) -> filters.Cycle:
        """The PreFilter cycle, built once per filter key: without pod (anti-)affinity in the
        cluster its parts (volumes, node-name affinity) depend on the key alone."""
        if sim.affinity_sensitive:
            return filters.Cycle(sim.index, pod, state)
        cycle = self._cycles.get(key)
        if cycle is None:
            cycle = self._cycles[key] = filters.Cycle(sim.index, pod, state, known_affinity=_NO_AFFINITY)
        cycle.index, cycle.pod, cycle.spread_state = sim.index, pod, state
        return cycle

    def place(self, sim: SimCluster, pod: Pod) -> Placement:
        # a pod like one that found no node on this very state finds none either: stranded
        # replacements are retried at every step, often dozens of one template
        template = template_key(pod)
        failed = self._failed.get(template)
        if failed is not None and failed[0] == sim.stamp:
            return replace(failed[1], pod=pod)
        placement = self._place(sim, pod)
        if placement.node is None:
            self._failed[template] = (sim.stamp, placement)
        return placement

    def _place(self, sim: SimCluster, pod: Pod) -> Placement:
        state = sim.spread_state(pod)
        key = filter_key(pod)
        cycle = _LazyCycle(self, sim, key, pod, state)
        # the template's verdicts by node: hashing the key once, not once per node
        cache = self._cache.setdefault(key, {}) if not sim.affinity_sensitive else {}
        versions = sim.version
        hard = state.hard
        feasible: list[Node] = []
        fit: list[str] = []
        refusals: dict[str, int] = {}
        reasons: dict[str, int] = {}
        for name, node in sim.nodes.items():
            hit = cache.get(name)
            if hit is not None and hit[0] == versions.get(name, 0):
                others, first = hit[1], hit[2]
            else:
                others, first = self._non_spread(sim, cache, cycle, node)
            spread_fail = spread.filter_node(state, node) if hard else None
            if not others:
                fit.append(name)
                if spread_fail is None:
                    feasible.append(node)
                else:
                    for k in _refusing_keys(hard, node):
                        refusals[k] = refusals.get(k, 0) + 1
            if first is None and spread_fail is not None:
                first = spread_fail
            if first is not None:
                reasons[first.reason] = reasons.get(first.reason, 0) + 1
        chosen = pick(sim, state, pod, feasible)
        return Placement(pod, chosen, tuple(n.name for n in feasible), accepting_domains(pod, feasible),
                         tuple(fit), refusals, reasons)

    def _non_spread(self, sim: SimCluster, cache: dict, cycle: "_LazyCycle", node: Node):
        """(every non-spread failure, the first failure in scheduler order when it is not
        spread's) for one node, remembered in `cache` with the node's version."""
        cycle = cycle.get()
        verdict = filters.evaluate_node(sim.index, cycle.pod, node, cycle=cycle)
        others = tuple(f for f in verdict.failures if f.plugin != SPREAD_PLUGIN)
        if verdict.prefilter is not None:
            others = (verdict.prefilter,) + others
        first = verdict.first
        if first is not None and first.plugin == SPREAD_PLUGIN and verdict.prefilter is None:
            first = None  # spread is re-judged per pod, not cached
        cache[node.name] = (sim.version.get(node.name, 0), others, first)
        return others, first


class _LazyCycle:
    """Builds the cycle only when some node misses the verdict cache."""

    __slots__ = ("placer", "sim", "key", "pod", "state", "cycle")

    def __init__(self, placer: Placer, sim: SimCluster, key: object, pod: Pod, state: spread.SpreadState):
        self.placer, self.sim, self.key, self.pod, self.state = placer, sim, key, pod, state
        self.cycle: filters.Cycle | None = None

    def get(self) -> filters.Cycle:
        if self.cycle is None:
            self.cycle = self.placer._cycle(self.sim, self.key, self.pod, self.state)
        return self.cycle


def _refusing_keys(hard: tuple[spread.ConstraintState, ...], node: Node) -> list[str]:
    out = []
    for cs in hard:
        value = node.labels.get(cs.constraint.topology_key)
        if value is None or not cs.allows(value):
            out.append(cs.constraint.topology_key)
    return out


def accepting_domains(pod: Pod, feasible: list[Node]) -> dict[str, tuple[str, ...]]:
    """Per topologyKey of the pod's own constraints, the domains with a feasible node."""
    keys = dict.fromkeys(c.topology_key for c in pod.spread)
    return {k: tuple(sorted({n.labels[k] for n in feasible if k in n.labels})) for k in keys}


def _nonzero(pod: Pod) -> tuple[int, int]:
    cpu = pod.requests.get("cpu", 0) or DEFAULT_MILLI_CPU
    mem = pod.requests.get("memory", 0) or DEFAULT_MEMORY
    return cpu, mem


def least_allocated(sim: SimCluster, pod: Pod, node: Node) -> int:
    """LeastAllocated score 0..100 of `node` with `pod` added (cpu and memory, weight 1 each).

    >>> # 4000m node with 1000m requested, pod asks 1000m -> cpu part (4000-2000)*100/4000 = 50
    """
    cpu, mem = _nonzero(pod)
    used_cpu, used_mem = sim.nonzero_usage(node.name, _nonzero)
    cpu += used_cpu
    mem += used_mem
    total = 0
    for want, res in ((cpu, "cpu"), (mem, "memory")):
        alloc = node.allocatable.get(res, 0)
        total += 0 if alloc <= 0 or want > alloc else (alloc - want) * 100 // alloc
    return total // 2


def pick(sim: SimCluster, state: spread.SpreadState, pod: Pod, feasible: list[Node]) -> str | None:
    """The best-scoring feasible node; ties to the first name."""
    if not feasible:
        return None
    if len(feasible) == 1:
        return feasible[0].name
    spread_scores = spread.score_nodes(state, feasible)
    best, best_score = None, None
    for n in sorted(feasible, key=lambda n: n.name):
        s = SPREAD_WEIGHT * spread_scores.get(n.name, 0) + LEAST_ALLOCATED_WEIGHT * least_allocated(sim, pod, n)
        if best_score is None or s > best_score:
            best, best_score = n.name, s
    return best
