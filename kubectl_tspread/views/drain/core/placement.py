"""Where the scheduler would put a replacement pod: filter nodes, then score.

Filtering is the engine's (engine.filters, spread included), run on the simulated cluster. Like kube-scheduler, the walk
does not filter every node of a large cluster: with percentageOfNodesToScore unset it wants `num_feasible_to_find(N)`
feasible nodes, walks the nodes in node-tree order (zones round robin, `SimCluster.scan_order`) from the rotating start
index (`SimCluster.next_start`), stops at the last one it needs and advances the index by the nodes it examined: a
placement is bounded by the sample, not the cluster. The real scheduler filters in parallel and may examine a few more
nodes before it stops; the simulation examines them one by one. When no node is feasible every node has been examined,
so a stranded replacement's diagnosis (fit nodes, spread refusals, first-failure histogram) is complete; a placed one's
covers the sample.

The predicted node has the highest total of the default profile's Score plugins, each with its weight and normalisation
(engine/scores.py; the array paths engine/scorearrays.py). Ties go to the node whose name sorts first, and the Placement
names the tied nodes (`tied`): the scheduler picks at random among them. The accepting domains are those of the feasible
nodes found: all of them below 100 nodes, and at scale those in the sample (every zone, as the walk goes round robin
over zones, but only the sampled nodes of a hostname constraint: listing every feasible node costs the full walk).

Speed: replacements that the filters other than spread cannot tell apart (`filter_key`) share one PreFilter cycle and
one cache of those filters' verdicts per node version, so a bind re-filters only its node; spread, which depends on the
whole cluster, comes from `SimCluster.spread_state`'s memo. Templates differing only in requests share the other
filters' verdicts (`shape_key`). The caches are off when any pod has required pod (anti-)affinity, because
InterPodAffinity reads pods on other nodes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Mapping

from kubectl_tspread.views.drain.core import vector
from kubectl_tspread.engine import filters, interpod, resources, scorearrays, scores, spread, walk
from kubectl_tspread.engine.walk import num_feasible_to_find
from kubectl_tspread.views.drain.core.simulate import (SPREAD_KEY_READS, SimCluster, interned, numbering, parts_memo,
                                                       spread_key_of)
from kubectl_tspread.model import Node, Pod, positional_constructor

SPREAD_PLUGIN = spread.PLUGIN
# the filters that run before NodeResourcesFit (scheduler order)
_BEFORE_FIT = frozenset(filters.FILTER_ORDER[:filters.FILTER_ORDER.index(resources.NODE_RESOURCES_FIT)])
_NOWHERE = object()  # the array path's (vector.py) "no node is feasible", distinct from None, "not applicable"
# InterPodAffinity's PreFilter result when no pod, the incoming one included, has pod (anti-)affinity
_NO_AFFINITY = interpod.AffinityState((), (), {}, {}, {}, True)
# how much further than a template's last walk its next placement's window reaches: too small a margin sends more
# placements on to the walk over every node, too large a one judges nodes the walk would not have reached
WINDOW_MARGIN = 1.5


@dataclass(frozen=True, slots=True)
class Placement:
    """The scheduler's predicted verdict for one replacement. `node` is None when no node passes. `fit_nodes` pass
    every filter but PodTopologySpread; `spread_refusals` counts per topologyKey how many of those spread refuses (to
    blame a stranding correctly); `reasons` is the first-failure histogram of the scheduler's message (read only when
    no node fits: the array path leaves it empty when spread is what refuses the fit nodes)."""

    pod: Pod
    node: str | None
    feasible: tuple[str, ...]
    accepting: Mapping[str, tuple[str, ...]]
    fit_nodes: tuple[str, ...] = ()
    spread_refusals: Mapping[str, int] = field(default_factory=dict)
    reasons: Mapping[str, int] = field(default_factory=dict)
    # the nodes that share the highest score with `node` (node among them); () when it is alone
    tied: tuple[str, ...] = ()


# one per replacement placed: without the frozen dataclass's per-field setattr
_new_placement = positional_constructor(Placement)


def shape_key(pod: Pod) -> tuple:
    """What every filter but spread, InterPodAffinity and NodeResourcesFit reads of an unbound pod: NodeUnschedulable
    and TaintToleration the tolerations, NodeName the requested node, NodeAffinity the nodeSelector and required terms,
    NodePorts the host ports, NodeDeclaredFeatures the features its spec uses, the volume filters the claims (looked up
    in the namespace; they read no other volume)."""
    claims = tuple(v.pvc for v in pod.volumes if v.pvc)  # last in the key: `_vector` reads them there
    return (pod.namespace if claims else "", pod.tolerations, pod.node_name,
            tuple(sorted(pod.node_selector.items())), pod.node_affinity, pod.host_ports, pod.features_used, claims)


def filter_key(pod: Pod, shape: tuple | None = None) -> tuple:
    """What the filters other than spread and InterPodAffinity read of an unbound pod: its `shape_key` (pass it when
    already made) and the requests NodeResourcesFit reads."""
    return (shape_key(pod) if shape is None else shape, tuple(sorted(pod.requests.items())))


def template_key(pod: Pod) -> tuple:
    """Everything the filters and scores read of an unbound pod: pods with the same key get the same verdict."""
    return (pod.namespace, spread_key_of(pod), filter_key(pod), pod.pod_affinity, pod.pod_anti_affinity)


# what filter_key reads (and shape_key, all but the requests)
FILTER_KEY_READS = ("tolerations", "node_selector", "node_affinity", "host_ports", "volumes", "requests",
                    "features_used")
FILTER_KEY_STRINGS = ("namespace", "node_name")
TEMPLATE_KEY_READS = FILTER_KEY_READS + ("pod_affinity", "pod_anti_affinity") + SPREAD_KEY_READS  # template_key's
# a number per distinct key: a stranded replacement is retried at every step, and building its key costs more than the
# failed-verdict lookup it feeds
template_of = parts_memo(interned(template_key), TEMPLATE_KEY_READS, FILTER_KEY_STRINGS)
_shape_number, _filter_number = numbering(), numbering()


def _keys(pod: Pod) -> tuple[tuple, int, int]:
    """(shape_key, a number per distinct shape key, a number per distinct filter_key)."""
    shape = shape_key(pod)
    return shape, _shape_number(shape), _filter_number(filter_key(pod, shape))


# every placement keys the filter caches by these: made once per template, not per pod record
keys_of = parts_memo(_keys, FILTER_KEY_READS, FILTER_KEY_STRINGS)


class Placer:
    """Places replacements on a SimCluster; keeps the per-template filter cache."""

    def __init__(self) -> None:
        # filter key (keys_of's number) -> node -> (node version, non-spread failures, first failure)
        self._cache: dict[int, dict[str, tuple[int, tuple[spread.FilterFailure, ...], object]]] = {}
        self._cycles: dict[int, filters.Cycle] = {}
        # shape key (keys_of's number) -> node -> (node version, failures before NodeResourcesFit, after it)
        self._shapes: dict[int, dict[str, tuple[int, tuple, tuple]]] = {}
        self._failed: dict[int, tuple[int, Placement]] = {}  # template_of -> (sim stamp, no-node verdict)
        self._bare: dict[int, tuple[int, Placement]] = {}  # the same, without the diagnosis
        self._tables: dict[int, vector.NodeTable] = {}  # vector.py's arrays, per node set
        # template_of -> nodes its last walk examined per node wanted, with a margin: its next window (walk.window)
        self._reach: dict[int, float] = {}

    def failed_now(self, sim: SimCluster, pod: Pod) -> bool:
        """Whether a pod like `pod` already found no node on this very state."""
        return self._failed_on(sim, pod, diagnose=False) is not None

    def _failed_on(self, sim: SimCluster, pod: Pod, diagnose: bool = True) -> Placement | None:
        """The no-node verdict a pod like `pod` got on this very state, if any (with diagnose=False, one may lack the
        diagnosis)."""
        template = template_of(pod)
        for memo in (self._failed,) if diagnose else (self._failed, self._bare):
            failed = memo.get(template)
            if failed is not None and failed[0] == sim.stamp:
                return failed[1]
        return None

    def _cycle(self, sim: SimCluster, key: object, pod: Pod, state: spread.SpreadState) -> filters.Cycle:
        """The PreFilter cycle, built once per filter key: without pod (anti-)affinity in the cluster its parts
        (volumes, node-name affinity) depend on the key alone."""
        if sim.affinity_sensitive:
            return filters.Cycle(sim.index, pod, state)
        cycle = self._cycles.get(key)
        if cycle is None:
            cycle = self._cycles[key] = filters.Cycle(sim.index, pod, state, known_affinity=_NO_AFFINITY)
        cycle.index, cycle.pod, cycle.spread_state = sim.index, pod, state
        return cycle

    def place(self, sim: SimCluster, pod: Pod, diagnose: bool = True) -> Placement:
        """Where the scheduler puts `pod`. With diagnose=False a pod that fits nowhere gets a Placement without the
        diagnosis (fit nodes, refusals, reasons), which walks every node: a retry only asks whether it fits now."""
        # a pod like one that found no node on this very state finds none either (retries come by the template)
        failed = self._failed_on(sim, pod, diagnose)
        if failed is not None:
            return replace(failed, pod=pod)
        placement = self._place(sim, pod, diagnose)
        if placement.node is None:
            (self._failed if diagnose else self._bare)[template_of(pod)] = (sim.stamp, placement)
        return placement

    def _place(self, sim: SimCluster, pod: Pod, diagnose: bool = True) -> Placement:
        """The arrays' placement (vector.py) where they cover the pod; else, and to diagnose a pod that fits no node at
        all, the walk over the nodes with the engine's filters."""
        state, shape, shape_id, cycle, cache = self._prepared(sim, pod)
        fast = self._vector(sim, pod, state, shape, shape_id, cycle, diagnose)
        if fast is _NOWHERE:
            if not diagnose:
                return Placement(pod, None, (), {})
        elif fast is not None:
            return fast
        return self._walk(sim, pod, state, cycle, cache)

    def walk(self, sim: SimCluster, pod: Pod) -> Placement:
        """The placement of `pod` by the walk alone, even where the arrays cover it: the scheduler's node-by-node
        filtering with the engine's filters, which the arrays' answers are tested against."""
        state, _, _, cycle, cache = self._prepared(sim, pod)
        return self._walk(sim, pod, state, cycle, cache)

    def _prepared(self, sim: SimCluster, pod: Pod) -> tuple[spread.SpreadState, tuple, int, "_LazyCycle", dict]:
        """(spread state, shape key, shape id, the lazy filter cycle, the template's verdict cache) of a placement."""
        state = sim.spread_state(pod)
        shape, shape_id, key = keys_of(pod)
        cycle = _LazyCycle(self, sim, key, pod, state)
        # the template's verdicts by node: hashing the key once, not once per node
        cache = self._cache.setdefault(key, {}) if not sim.affinity_sensitive else {}
        # a pod that needs node features has a failure after spread's (NodeDeclaredFeatures):
        # the shape verdicts, which put every non-spread failure first, would misorder it
        shaped = not sim.affinity_sensitive and not pod.features_used
        cycle.shapes = self._shapes.setdefault(shape_id, {}) if shaped else None
        return state, shape, shape_id, cycle, cache

    def _walk(self, sim: SimCluster, pod: Pod, state: spread.SpreadState, cycle: "_LazyCycle",
              cache: dict) -> Placement:
        """The scheduler's walk in node-tree order from its rotating start, each node judged by the engine's filters
        (cached per node version), until it has the feasible nodes it wants; then the scores pick among them."""
        versions, nodes = sim.version, sim.nodes
        order = sim.scan_order()
        total = len(order)
        want = num_feasible_to_find(total)
        start = sim.next_start % total if total else 0
        feasible: list[Node] = []
        fit: list[str] = []
        refusals: dict[str, int] = {}
        reasons: dict[str, int] = {}
        processed = 0
        verdict = _SpreadVerdicts(state, state.hard) if state.hard else (lambda node: None)
        for name in itertools.chain(order[start:], order[:start]):
            processed += 1
            hit = cache.get(name)
            if hit is not None and hit[0] == versions.get(name, 0):
                others, first = hit[1], hit[2]
            else:
                others, first = self._non_spread(sim, cache, cycle, nodes[name])
            if not others:
                node = nodes[name]
                fit.append(name)
                refused = verdict(node)
                if refused is None:
                    feasible.append(node)
                    if len(feasible) >= want:
                        break  # the scheduler stops filtering here
                    continue
                for k in refused[1]:
                    refusals[k] = refusals.get(k, 0) + 1
                first = first or refused[0]
            elif first is None:
                # spread refused it before the other filters did (scheduler order)
                refused = verdict(nodes[name])
                first = refused[0] if refused is not None else None
            if first is not None:
                reasons[first.reason] = reasons.get(first.reason, 0) + 1
        if total:
            sim.next_start = (start + processed) % total
        best = pick(sim, state, pod, feasible)
        return Placement(pod, best[0] if best else None, tuple(n.name for n in feasible),
                         accepting_domains(pod, feasible), tuple(fit), refusals, reasons,
                         best if len(best) > 1 else ())

    def _non_spread(self, sim: SimCluster, cache: dict, cycle: "_LazyCycle", node: Node):
        """(every non-spread failure, the first failure in scheduler order unless spread's) for one node, remembered in
        `cache` with the node's version."""
        shapes = cycle.shapes
        cycle = cycle.get()
        if shapes is not None and cycle.prefilter is None and cycle.node_names is None:
            return self._by_shape(sim, cache, shapes, cycle, node)
        verdict = filters.evaluate_node(sim.index, cycle.pod, node, cycle=cycle)
        others = tuple(f for f in verdict.failures if f.plugin != SPREAD_PLUGIN)
        if verdict.prefilter is not None:
            others = (verdict.prefilter,) + others
        first = verdict.first
        if first is not None and first.plugin == SPREAD_PLUGIN and verdict.prefilter is None:
            first = None  # spread is re-judged per pod, not cached
        cache[node.name] = (sim.version.get(node.name, 0), others, first)
        return others, first

    @staticmethod
    def _shape_hit(sim: SimCluster, shapes: dict, cycle: filters.Cycle, node: Node) -> tuple[int, tuple, tuple]:
        """(node version, the failures of the filters before NodeResourcesFit, those after it but spread's) for the
        pod's shape on `node`, remembered in `shapes` per node version."""
        name = node.name
        version = sim.version.get(name, 0)
        hit = shapes.get(name)
        if hit is None or hit[0] != version:
            # the fit is this pod's, judged apart (_by_shape, resources.fits_array): not summed here
            failures = filters.evaluate_node(sim.index, cycle.pod, node, cycle=cycle, fit=False).failures
            hit = shapes[name] = (version, tuple(f for f in failures if f.plugin in _BEFORE_FIT),
                                  tuple(f for f in failures if f.plugin not in _BEFORE_FIT
                                        and f.plugin != SPREAD_PLUGIN))
        return hit

    @staticmethod
    def _by_shape(sim: SimCluster, cache: dict, shapes: dict, cycle: filters.Cycle, node: Node):
        """`_non_spread` from the pod's shape verdict (every filter but the resource fit, shared by the templates that
        differ only in requests) plus NodeResourcesFit for this pod: templates meet most nodes for the first time on
        their walks, and a full evaluation costs several times this. Only without pod (anti-)affinity (no
        InterPodAffinity failure, which would follow spread) and without PreFilter outcomes (they lead the verdict)."""
        pod, name = cycle.pod, node.name
        hit = Placer._shape_hit(sim, shapes, cycle, node)
        usage = resources.node_usage(sim.index, name, exclude=pod.key)
        others = hit[1] + resources.fit_failures(pod, node, usage) + hit[2]
        first = others[0] if others else None
        cache[name] = (hit[0], others, first)
        return others, first

    def _vector(self, sim: SimCluster, pod: Pod, state: spread.SpreadState, shape: tuple, shape_id: int,
                cycle: "_LazyCycle", diagnose: bool = True) -> Placement | None:
        """The placement from vector.py's arrays; None when that path does not apply, _NOWHERE when no node is
        feasible and the walk is to diagnose it (or no diagnosis is wanted). A pod that some node fits but spread
        refuses everywhere is diagnosed here (fit nodes, refusals): a trap strands many, each a walk over every node."""
        if sim.affinity_sensitive or pod.features_used or not vector.fits_fast_path(pod):
            return None
        # without pod (anti-)affinity a filter key's cycle is made once (_cycle), its PreFilter outcome and node-name
        # set fixed: read them there without readying it for this pod
        c = self._cycles.get(cycle.key)
        if c is None:
            c = cycle.get()
        if c.prefilter is not None or c.node_names is not None:
            return None
        total = len(sim.scan_order())
        if not total:
            return None
        table = vector.tables_for(sim, self._tables)
        version = sim.version_array()
        shapes, nodes = cycle.shapes, sim.nodes

        def row(name: str) -> bool:
            hit = Placer._shape_hit(sim, shapes, cycle.get(), nodes[name])
            return not hit[1] and not hit[2]

        # a shape without host ports or claims is judged on the Node object alone (taints, cordon, labels): its
        # verdicts change with a cordon, not with every pod bound
        node_only = not pod.host_ports and not shape[-1]
        shape_version = sim.node_object_array() if node_only else version
        values = vector.spread_values(table, sim, state)
        start, want = sim.next_start % total, num_feasible_to_find(total)
        walked, template = None, template_of(pod)
        # first the nodes the walk most likely stops within (as far as the template's last walk went, and half as far
        # again); all of them when that was not enough, when a hard constraint refuses every domain (no node is
        # feasible), or when the template's last placement found no node (a window only delays the walk that says so)
        reach = self._reach.get(template, 2.0)
        rows = walk.window(start, int(want * reach), want, total) if all(ok.any() for _, ok in values) else None

        def judged(run: slice = slice(None)):
            """(fit per node of `run`: every filter but spread; spread's verdict per hard constraint; both)."""
            table.refresh_usage(sim, version, _nonzero, run)
            room = resources.fits_array(table.free, pod.requests, run)
            fit = table.shape_ok(shape_id, shape_version, row, run) & room
            allowed = vector.spread_allowed(values, run)
            return fit, allowed, fit & vector.spread_ok(allowed) if allowed else fit

        if rows is not None:
            walked = walk.walk_window(judged(rows)[2], rows, want)
        if walked is None:
            fit, allowed, mask = judged()
            walked = walk.walk(mask, start, want, total)
            if not len(walked[0]):
                self._reach[template] = 0.0
                if not diagnose or not state.hard or not fit.any():
                    return _NOWHERE  # NoCapacity: the walk gives the first-failure histogram
                fits = walk.InWalkOrder(fit, start)  # every fit node, in walk order
                return _new_placement(pod, None, (), accepting_domains(pod, []), vector.Names(table.order, fits),
                                      vector.refusals(state, allowed, fit), {}, ())
        found, examined = walked
        self._reach[template] = max(WINDOW_MARGIN, WINDOW_MARGIN * examined / want)
        sim.next_start = (start + examined) % total
        order = table.order
        tied: tuple[str, ...] = ()
        if len(found) == 1:
            best = int(found[0])
        else:
            totals = vector.score_totals(table, sim, state, pod, found, interpod_topology(sim, pod))
            at, tie = scorearrays.best(totals, table.rank.take(found))
            best = int(found[at])
            if tie:
                tied = tuple(sorted(order[int(i)] for i in found[totals == totals.max()]))
        return _new_placement(pod, order[best], vector.Names(order, found),
                              vector.accepting(table, sim, pod, found), (), {}, {}, tied)


class _LazyCycle:
    """Builds the cycle only when some node misses the verdict cache."""

    __slots__ = ("placer", "sim", "key", "pod", "state", "cycle", "shapes")

    def __init__(self, placer: Placer, sim: SimCluster, key: object, pod: Pod, state: spread.SpreadState):
        self.placer, self.sim, self.key, self.pod, self.state = placer, sim, key, pod, state
        self.cycle: filters.Cycle | None = None
        self.shapes: dict | None = None

    def get(self) -> filters.Cycle:
        if self.cycle is None:
            self.cycle = self.placer._cycle(self.sim, self.key, self.pod, self.state)
        return self.cycle


class _SpreadVerdicts:
    """Spread's Filter verdict for a node (None, or the plugin's failure and the topologyKeys refusing it), remembered
    per domain for one placement: it depends only on the node's values of the hard constraints' keys, and a stranded
    replacement's walk meets every node of each zone."""

    __slots__ = ("state", "hard", "keys", "memo")

    def __init__(self, state: spread.SpreadState, hard: tuple[spread.ConstraintState, ...]):
        self.state, self.hard = state, hard
        self.keys = tuple(cs.constraint.topology_key for cs in hard)
        self.memo: dict[object, tuple | None] = {}

    def __call__(self, node: Node) -> tuple | None:
        labels, keys = node.labels, self.keys
        sig = labels.get(keys[0]) if len(keys) == 1 else tuple(labels.get(k) for k in keys)
        try:
            return self.memo[sig]
        except KeyError:
            fail = spread.filter_node(self.state, node)
            verdict = self.memo[sig] = None if fail is None else (fail, tuple(_refusing_keys(self.hard, node)))
            return verdict


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


# what LeastAllocated charges a pod, as the usage rows of the simulation and the tables read it
_nonzero = scores.score_requests


def interpod_topology(sim: SimCluster, pod: Pod) -> dict | None:
    """InterPodAffinity's PreScore on the simulation; None without a pod whose terms score."""
    return scores.interpod_topology(sim.index, pod) if sim.affinity_scored or scores.interpod_has_terms(pod) else None


def _usage(sim: SimCluster):
    row_of = vector.usage_rows(_nonzero)

    def usage(name: str) -> scores.Usage:
        row = sim.usage_of(name, row_of)
        return scores.Usage((row[0], row[1]), tuple(row[vector.NONZERO_COLUMNS]))
    return usage


def pick(sim: SimCluster, state: spread.SpreadState, pod: Pod, feasible: list[Node]) -> tuple[str, ...]:
    """The best-scoring feasible nodes, by name (more than one: a tie)."""
    if len(feasible) <= 1:
        return tuple(n.name for n in feasible)
    scored = scores.score_nodes(pod, feasible, _usage(sim), spread.score_nodes(state, feasible),
                                interpod_topology(sim, pod), sim.balanced_improvement, sim.images_for(pod))
    return scored.best()
