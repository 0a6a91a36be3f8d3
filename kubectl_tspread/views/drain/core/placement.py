"""Where the scheduler would put a replacement pod: the engine's filters (spread included), then the default Scores.

As kube-scheduler with percentageOfNodesToScore unset, the walk goes in node-tree order (zones round robin,
`SimCluster.scan_order`) from the rotating `SimCluster.next_start` until it has `num_feasible_to_find(N)` feasible
nodes, then advances the start by the nodes it examined (the parallel scheduler may examine a few more). So a stranded
pod's diagnosis (fit nodes, spread refusals, first-failure histogram) covers every node, and a placed pod's accepting
domains the sample. Ties go to the first name; `tied` lists them: the scheduler picks one at random.

Pods the filters but spread cannot tell apart (`filter_key`) share a PreFilter cycle and a verdict cache per node
version, so a bind re-filters only its node; templates differing only in requests share the rest (`shape_key`). The
caches are off when any pod has required pod (anti-)affinity: InterPodAffinity reads pods on other nodes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from kubectl_tspread.views.drain.core import vector
from kubectl_tspread.engine import filters, interpod, resources, scorearrays, scores, spread, walk
from kubectl_tspread.engine.walk import num_feasible_to_find
from kubectl_tspread.views.drain.core.simulate import (SPREAD_KEY_READS, SimCluster, interned, numbering, parts_memo,
                                                       spread_key_of)
from kubectl_tspread.model import Node, Pod, positional_constructor

SPREAD_PLUGIN = spread.PLUGIN
_BEFORE_FIT = frozenset(filters.FILTER_ORDER[:filters.FILTER_ORDER.index(resources.NODE_RESOURCES_FIT)])
_NOWHERE = object()  # _vector's "no node is feasible", unlike None: "does not apply"
_NO_AFFINITY = interpod.AffinityState((), (), {}, {}, {}, True)  # PreFilter's state when no pod has pod (anti-)affinity
WINDOW_MARGIN = 1.5  # next window = last walk × this: too small falls back to the full walk, too large judges more


@dataclass(frozen=True, slots=True)
class Placement:
    """The scheduler's verdict for one replacement (`node` None: none passes). `fit_nodes` pass every filter but spread;
    `spread_refusals` counts per topologyKey the nodes spread refuses; `reasons` is read only if none fits."""

    pod: Pod
    node: str | None
    feasible: tuple[str, ...]
    accepting: Mapping[str, tuple[str, ...]]
    fit_nodes: tuple[str, ...] = ()
    spread_refusals: Mapping[str, int] = field(default_factory=dict)
    reasons: Mapping[str, int] = field(default_factory=dict)
    tied: Sequence[str] = ()  # the nodes sharing the highest score, `node` among them; () when it is alone


_new_placement = positional_constructor(Placement)  # one per placement: skips the frozen dataclass's per-field setattr


def shape_key(pod: Pod) -> tuple:
    """What the filters but spread, InterPodAffinity and NodeResourcesFit read of an unbound pod."""
    claims = tuple(v.pvc for v in pod.volumes if v.pvc)  # last in the key: `_vector` reads them there
    return (pod.namespace if claims else "", pod.tolerations, pod.node_name,
            tuple(sorted(pod.node_selector.items())), pod.node_affinity, pod.host_ports, pod.features_used, claims)


def filter_key(pod: Pod, shape: tuple | None = None) -> tuple:
    """`shape_key` (pass it if made) plus the requests: what the filters but spread and InterPodAffinity read."""
    return (shape_key(pod) if shape is None else shape, tuple(sorted(pod.requests.items())))


def template_key(pod: Pod) -> tuple:
    """Everything the filters and scores read of an unbound pod: pods with the same key get the same verdict."""
    return (pod.namespace, spread_key_of(pod), filter_key(pod), pod.pod_affinity, pod.pod_anti_affinity)


FILTER_KEY_READS = ("tolerations", "node_selector", "node_affinity", "host_ports", "volumes", "requests",
                    "features_used")  # what filter_key reads (and shape_key, all but the requests)
FILTER_KEY_STRINGS = ("namespace", "node_name")
TEMPLATE_KEY_READS = FILTER_KEY_READS + ("pod_affinity", "pod_anti_affinity") + SPREAD_KEY_READS  # template_key's
# numbered per distinct key: stranded replacements retry at every step, and a key costs more than the lookup it feeds
template_of = parts_memo(interned(template_key), TEMPLATE_KEY_READS, FILTER_KEY_STRINGS)
_shape_number, _filter_number = numbering(), numbering()


def _keys(pod: Pod) -> tuple[tuple, int, int]:
    shape = shape_key(pod)
    return shape, _shape_number(shape), _filter_number(filter_key(pod, shape))


keys_of = parts_memo(_keys, FILTER_KEY_READS, FILTER_KEY_STRINGS)  # cache keys, made once per template, not per pod


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
        self._reach: dict[int, float] = {}  # template_of -> next window (walk.window): nodes examined per node wanted

    def failed_now(self, sim: SimCluster, pod: Pod) -> bool:
        """Whether a pod like `pod` already found no node on this very state."""
        return self._failed_on(sim, pod, diagnose=False) is not None

    def _failed_on(self, sim: SimCluster, pod: Pod, diagnose: bool = True) -> Placement | None:
        """The no-node verdict a pod of this template got on this state; without `diagnose`, perhaps undiagnosed."""
        template = template_of(pod)
        for memo in (self._failed,) if diagnose else (self._failed, self._bare):
            failed = memo.get(template)
            if failed is not None and failed[0] == sim.stamp:
                return failed[1]
        return None

    def _cycle(self, sim: SimCluster, key: object, pod: Pod, state: spread.SpreadState) -> filters.Cycle:
        """The PreFilter cycle, once per filter key: without pod (anti-)affinity its parts depend on the key alone."""
        if sim.affinity_sensitive:
            return filters.Cycle(sim.index, pod, state)
        cycle = self._cycles.get(key)
        if cycle is None:
            cycle = self._cycles[key] = filters.Cycle(sim.index, pod, state, known_affinity=_NO_AFFINITY)
        cycle.index, cycle.pod, cycle.spread_state = sim.index, pod, state
        return cycle

    def place(self, sim: SimCluster, pod: Pod, diagnose: bool = True) -> Placement:
        """Where the scheduler puts `pod`; without `diagnose` a stranded pod skips the diagnosis (a full walk)."""
        failed = self._failed_on(sim, pod, diagnose)
        if failed is not None:
            return replace(failed, pod=pod)
        placement = self._place(sim, pod, diagnose)
        if placement.node is None:
            (self._failed if diagnose else self._bare)[template_of(pod)] = (sim.stamp, placement)
        return placement

    def _place(self, sim: SimCluster, pod: Pod, diagnose: bool = True) -> Placement:
        """vector.py's placement where it covers the pod; else, and to diagnose a pod no node fits, the walk."""
        state, shape, shape_id, cycle, cache = self._prepared(sim, pod)
        fast = self._vector(sim, pod, state, shape, shape_id, cycle, diagnose)
        if fast is _NOWHERE:
            if not diagnose:
                return Placement(pod, None, (), {})
        elif fast is not None:
            return fast
        return self._walk(sim, pod, state, cycle, cache)

    def walk(self, sim: SimCluster, pod: Pod) -> Placement:
        """The walk's placement even where the arrays cover the pod: the reference they are tested against."""
        state, _, _, cycle, cache = self._prepared(sim, pod)
        return self._walk(sim, pod, state, cycle, cache)

    def _prepared(self, sim: SimCluster, pod: Pod) -> tuple[spread.SpreadState, tuple, int, "_LazyCycle", dict]:
        state = sim.spread_state(pod)
        shape, shape_id, key = keys_of(pod)
        cycle = _LazyCycle(self, sim, key, pod, state)
        cache = self._cache.setdefault(key, {}) if not sim.affinity_sensitive else {}
        # a pod needing node features fails NodeDeclaredFeatures after spread: the shape verdicts put it first
        shaped = not sim.affinity_sensitive and not pod.features_used
        cycle.shapes = self._shapes.setdefault(shape_id, {}) if shaped else None
        return state, shape, shape_id, cycle, cache

    def _walk(self, sim: SimCluster, pod: Pod, state: spread.SpreadState, cycle: "_LazyCycle",
              cache: dict) -> Placement:
        """The scheduler's walk (module docstring), each node judged by the engine's filters cached per node version."""
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
                        break
                    continue
                for k in refused[1]:
                    refusals[k] = refusals.get(k, 0) + 1
                first = first or refused[0]
            elif first is None:
                refused = verdict(nodes[name])  # spread refused it before the other filters did (scheduler order)
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
        """(non-spread failures, first failure unless spread's) of `node`, cached per node version."""
        shapes, cycle = cycle.shapes, cycle.get()
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
        """`shapes`' entry for `node` (Placer._shapes), made again when the node's version changed."""
        name = node.name
        version, hit = sim.version.get(name, 0), shapes.get(name)
        if hit is None or hit[0] != version:
            # the fit is this pod's, judged apart (_by_shape, resources.fits_array): not summed here
            failures = filters.evaluate_node(sim.index, cycle.pod, node, cycle=cycle, fit=False).failures
            hit = shapes[name] = (version, tuple(f for f in failures if f.plugin in _BEFORE_FIT),
                                  tuple(f for f in failures if f.plugin not in _BEFORE_FIT
                                        and f.plugin != SPREAD_PLUGIN))
        return hit

    @staticmethod
    def _by_shape(sim: SimCluster, cache: dict, shapes: dict, cycle: filters.Cycle, node: Node):
        """`_non_spread` from the shape's verdict (templates share it: each meets most nodes first on its walk) plus
        this pod's NodeResourcesFit. Not with pod (anti-)affinity or PreFilter outcomes: it would misorder them."""
        pod, name = cycle.pod, node.name
        hit = Placer._shape_hit(sim, shapes, cycle, node)
        usage = resources.node_usage(sim.index, name, exclude=pod.key)
        others = hit[1] + resources.fit_failures(pod, node, usage) + hit[2]
        first = others[0] if others else None
        cache[name] = (hit[0], others, first)
        return others, first

    def _vector(self, sim: SimCluster, pod: Pod, state: spread.SpreadState, shape: tuple, shape_id: int,
                cycle: "_LazyCycle", diagnose: bool = True) -> Placement | None:
        """vector.py's verdict, None or _NOWHERE; diagnoses pods spread refuses on all fit nodes: traps strand many."""
        if sim.affinity_sensitive or pod.features_used or not vector.fits_fast_path(pod):
            return None
        c = self._cycles.get(cycle.key) or cycle.get()  # made once (_cycle), it fixes PreFilter and node names
        if c.prefilter is not None or c.node_names is not None:
            return None
        total = len(sim.scan_order())
        if not total:
            return None
        table, version = vector.tables_for(sim, self._tables), sim.version_array()
        shapes, nodes = cycle.shapes, sim.nodes

        def row(name: str) -> bool:
            hit = Placer._shape_hit(sim, shapes, cycle.get(), nodes[name])
            return not hit[1] and not hit[2]

        node_only = not pod.host_ports and not shape[-1]  # verdicts read only the Node: cordons change it, binds do not
        shape_version = sim.node_object_array() if node_only else version
        epoch = sim.node_epoch if node_only else None
        values = vector.spread_values(table, sim, state)
        start, want = sim.next_start % total, num_feasible_to_find(total)
        walked, template = None, template_of(pod)
        # the window the walk likely stops in; none if the template last found no node: it would only delay the walk
        reach = self._reach.get(template, 2.0)
        rows = walk.window(start, int(want * reach), want, total) if all(ok.any() for _, ok in values) else None

        def judged(run=slice(None)):
            """(fit per node of `run`: every filter but spread; spread's verdict per hard constraint; both)."""
            table.refresh_usage(sim, version, _nonzero, run)
            room = resources.fits_array(table.free, pod.requests, run)
            fit = table.shape_ok(shape_id, shape_version, row, run, epoch) & room
            allowed, ok = vector.spread_verdicts(values, run)
            return fit, allowed, fit & ok if allowed else fit

        if rows is not None:
            walked = walk.walk_window(judged(rows)[2], rows, want)
        if walked is None:
            fit, allowed, mask = judged()
            walked = walk.walk(mask, start, want, total)
            if not len(walked[0]):
                self._reach[template] = 0.0
                if not diagnose or not state.hard or not fit.any():
                    return _NOWHERE  # NoCapacity: the walk gives the first-failure histogram
                fits = walk.InWalkOrder(fit, start)
                return _new_placement(pod, None, (), accepting_domains(pod, []), vector.Names(table.order, fits),
                                      vector.refusals(state, allowed, fit), {}, ())
        found, examined = walked
        self._reach[template] = max(WINDOW_MARGIN, WINDOW_MARGIN * examined / want)
        sim.next_start = (start + examined) % total
        order = table.order
        top = scorearrays.best(vector.score_totals(table, sim, state, pod, found, interpod_topology(sim, pod)),
                               table.rank.take(found)) if len(found) > 1 else (0,)
        # a tie's nodes are named only when read: JSON shows them, the table does not
        tied: Sequence[str] = vector.Names(order, found.take(top)) if len(top) > 1 else ()
        return _new_placement(pod, order[int(found[top[0]])], vector.Names(order, found),
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
    """Spread's Filter verdict for a node (None, or the failure and refusing keys), memoised per domain per placement:
    it reads only the node's values of the hard keys, and a stranded pod's walk meets every node."""

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
            verdict = self.memo[sig] = None if fail is None else (fail, tuple(  # the keys refusing it
                cs.constraint.topology_key for cs in self.hard
                if (value := labels.get(cs.constraint.topology_key)) is None or not cs.allows(value)))
            return verdict


def accepting_domains(pod: Pod, feasible: list[Node]) -> dict[str, tuple[str, ...]]:
    """Per topologyKey of the pod's own constraints, the domains with a feasible node."""
    keys = dict.fromkeys(c.topology_key for c in pod.spread)
    return {k: tuple(sorted({n.labels[k] for n in feasible if k in n.labels})) for k in keys}


_nonzero = scores.score_requests  # what LeastAllocated charges, as the simulation's and tables' usage rows read it


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
