"""What a simulation on flat arrays would cost: the whole-zone drain plan's steps replayed on
per-node and per-domain arrays changed in place, every placement checked against the
planner's, timed in two parts: the harmless prefix (the steps before the first stranded
replacement) and the rest.

The planner keeps immutable spread states (count overlays, histograms, records rebuilt at
each move) so that the search can copy a world cheaply; that is what bench/ANALYSIS.md
calls the route of "a leaner simulation core". This probe measures that route's premise on
the same placements: the planner plans the zone (timed per batch), then its steps are played
again here, in the planner's order, with

- resources free per node (fit) and nonzero requests (LeastAllocated) as int64 arrays;
- per spread constraint of each template: a domain id per node, the matching pods per
  domain and per node, and how many domains hold each count (the global minimum);
- PodTopologySpread's Filter, NodeResourcesFit and the other filters (one boolean per node
  per pod shape, from the planner's own filter code on the cluster before the drain, the
  cordons applied as a mask), judged over a window of nodes first as the planner does, the
  scheduler's walk from the rotating start, and Score (spread and LeastAllocated, ties to
  the smallest name);
- a replacement that finds no node waits, and is retried as each later step begins, by the
  planner's rules (steps.retry_pending: the first of each template until one binds; one
  that found no node is not tried again while no room was made and its hard constraints'
  counts did not move); the planner's retries are recorded, and compared.

With --delete-drained-nodes the plan is the remedy re-plan that deletes each drained Node
object once it is empty (remedies.py: the re-plan that sets a zone's time through the CLI),
and the replay deletes them where that plan did: the node leaves the scheduler's walk (whose
order, round robin over the zones, is made again), the number of nodes it looks for shrinks
with the cluster, and its hostname domain leaves every constraint's counts.

It covers what a zone's plan meets: no pod (anti-)affinity, nodeTaintsPolicy Ignore
(checked, and the probe refuses otherwise). The batches played are the planner's; its order
heuristic (search.Search.order: which targets to drain first) is made again on the arrays as
each batch begins (`Heuristic`), checked against the planner's order at every level and
timed on its own. The judge is a minimum and skew per constraint a step moved, not the
planner's report objects. Past the prefix, the planner simulates candidate batches it does
not keep (the greedy fallback tries three a level, on copies of the level's world): the probe
plays each of them too, from the level's state, checks it against the planner's, and rolls it
back through an undo log of its changes (FlatCluster.mark and rollback) before the kept one.
The planner's times include its world copies and the worlds it rebuilds by playing batches
again; the probe needs neither. Exit 1 when a placement or an order differs.

    .venv/bin/python -m bench.lean_probe [--size tiny|small|large] [--cache-dir bench-out]
                                         [--delete-drained-nodes]

(from the repository, in the venv scripts/bench and scripts/test set up; the clusters are
generated into the cache directory as scripts/bench does, once).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable

import numpy as np

from bench import generate
from bench.server import make_server, write_kubeconfig
from kubectl_tspread.drain import counts, search, steps, vector
from kubectl_tspread.drain.model import DRAIN_KINDS, PlanOptions
from kubectl_tspread.drain.placement import (
    LEAST_ALLOCATED_WEIGHT, SPREAD_WEIGHT, WINDOW_MARGIN, Placer, _nonzero, keys_of, num_feasible_to_find, template_of,
)
from kubectl_tspread.drain.plan import build_context, plan_drain, resolve_targets
from kubectl_tspread.drain.pods import DrainFlags
from kubectl_tspread.drain.remedies import deleting_replans
from kubectl_tspread.drain.simulate import SimCluster, _without_zone_member, round_robin, spread_key_of, zone_lists
from kubectl_tspread.drain.vector import FIT_RESOURCES as FIT, UNSCORED
from kubectl_tspread.engine import filters, resources, spread
from kubectl_tspread.model import HONOR, HOSTNAME_KEY, ZONE_KEY

ZONE = "zone-b"
DIFFERENCES: list[tuple] = []  # the first placements replay() found to differ: (step, pod, here, planner's)
# id(Step) -> (that Step, {(namespace, name) of an evicted pod: the node its stranded replacement
# was bound to by the retry as the step began}): what plan_timed saw the planner's retries do
RETRIED: dict[int, tuple] = {}
# the number of targets drained -> the planner's order of the rest at that level (Search.order)
ORDERS: dict[int, list[str]] = {}
ORDER_SECONDS = [0.0]  # the planner's, in Search.order
# every batch the planner simulated: (targets drained before it, its nodes, the steps it played)
CALLS: list[tuple[int, tuple, tuple]] = []
REJECTED = [0, 0]  # replay(rejected=True): candidates played and rolled back, changes undone


def load(size: str, cache_dir: str):
    """The generated cluster of `size`, read through the tool's live path from bench/server.py."""
    from kubectl_tspread.options import SourceOptions
    from kubectl_tspread.snapshot import load_snapshot

    directory = generate.ensure(generate.SIZES[size], cache_dir)
    server = make_server(directory)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = write_kubeconfig(os.path.join(tmp, "kubeconfig"), f"http://127.0.0.1:{server.server_address[1]}")
            return load_snapshot(SourceOptions(kubeconfig=kubeconfig, all_namespaces=True), DRAIN_KINDS)
    finally:
        server.shutdown()
        server.server_close()


def plan_options(snapshot, targets, delete_drained_nodes: bool = False) -> PlanOptions:
    """The options of the plan (the CLI's defaults, remedies not verified) or those remedies.py
    gives its re-plan that deletes the drained nodes."""
    options = PlanOptions(DrainFlags(True, False, True), verify_remedies=False)
    if delete_drained_nodes:
        ((_, _, options),) = deleting_replans(snapshot, targets, options)
    return options


def plan_timed(snapshot, targets, delete_drained_nodes: bool = False):
    """(the plan, [(start, end, steps of the world played after it, seconds in Placer.place
    before it, and after it) of each simulated batch], the plan's start and end times). With
    `delete_drained_nodes`, the plan is the remedy re-plan that deletes the drained nodes,
    with the options remedies.py gives it."""
    stamps: list[tuple[float, float, int, float, float]] = []
    placing = [0.0]
    run_batch, place, retry_pending = search.run_batch, Placer.place, steps.retry_pending
    retries: dict[int, dict] = {}  # step number -> what its retry bound, in the batch played now
    RETRIED.clear()
    CALLS.clear()

    def timed(ctx, world, batch):
        began, before, level, played = time.perf_counter(), placing[0], len(world.done), len(world.steps)
        retries.clear()
        ok = run_batch(ctx, world, batch)
        CALLS.append((level, tuple(batch), tuple(world.steps[played:])))
        stamps.append((began, time.perf_counter(), len(world.steps), before, placing[0]))
        for number, bound in retries.items():
            step = world.steps[number - 1]
            RETRIED[id(step)] = (step, bound)
        return ok

    def recorded(ctx, world, batch=()):
        placed = retry_pending(ctx, world, batch)
        if placed:
            retries[len(world.steps) + 1] = {(e.namespace, e.name): node for e, _, node in placed}
        return placed

    def timed_place(self, sim, pod, diagnose=True):
        began = time.perf_counter()
        try:
            return place(self, sim, pod, diagnose)
        finally:
            placing[0] += time.perf_counter() - began

    order = search.Search.order
    ORDERS.clear()
    ORDER_SECONDS[0] = 0.0

    def recorded_order(self, world, remaining):
        began = time.perf_counter()
        out = order(self, world, remaining)
        ORDER_SECONDS[0] += time.perf_counter() - began
        ORDERS[len(world.done)] = out
        return out

    search.run_batch, Placer.place, steps.retry_pending = timed, timed_place, recorded
    search.Search.order = recorded_order
    try:
        start = time.perf_counter()
        plan = plan_drain(snapshot, targets, plan_options(snapshot, targets, delete_drained_nodes))
        end = time.perf_counter()
    finally:
        search.run_batch, Placer.place, steps.retry_pending = run_batch, place, retry_pending
        search.Search.order = order
    return plan, stamps, start, end


def harmless_prefix(plan) -> list:
    """The plan's steps before the first one that strands a replacement."""
    out = []
    for step in plan.steps:
        if any(e.replaced and e.predicted_node is None for e in step.evictions):
            break
        out.append(step)
    return out


class Constraint:
    """One spread constraint of one template, as arrays: the domain id of each node (the last
    id: no domain), matching pods per domain and per node, and the count histogram."""

    __slots__ = ("state", "hard", "max_skew", "self_match", "forced", "min_domains", "hostname", "domains",
                 "domain_of", "per_domain", "per_node", "histogram", "members", "version")

    def __init__(self, cs: spread.ConstraintState, position: dict[str, int]):
        values = list(cs.domains.keys())
        ids = {v: j for j, v in enumerate(values)}
        self.state, self.hard = cs, cs.constraint.hard
        self.max_skew, self.self_match, self.forced = cs.constraint.max_skew, cs.self_match, cs.min_forced_zero
        self.min_domains = cs.constraint.min_domains
        self.hostname, self.domains = cs.constraint.topology_key == HOSTNAME_KEY, len(values)
        self.domain_of = np.full(len(position), len(values), dtype=np.int64)
        for node, value in cs.node_domain.items():
            if node in position:
                self.domain_of[position[node]] = ids[value]
        self.per_domain = np.zeros(len(values) + 1, dtype=np.int64)
        self.histogram: dict[int, int] = {}
        for value, d in cs.domains.items():
            self.per_domain[ids[value]] = d.pods
            self.histogram[d.pods] = self.histogram.get(d.pods, 0) + 1
        self.per_node = np.zeros(len(position), dtype=np.int64)
        for node, n in cs.node_counts.items():
            if node in position:
                self.per_node[position[node]] = n
        # the nodes left in each domain: a domain whose last node is deleted leaves the counts
        self.members = np.bincount(self.domain_of, minlength=len(values) + 1).tolist()
        # moved at every change of a count or of the minimum (what FlatCluster._still_stuck and
        # Heuristic read: a node deleted without pods changes neither, unless the minimum)
        self.version = 0

    def minimum(self) -> int:
        return 0 if self.forced or not self.histogram else min(self.histogram)

    def move(self, i: int, delta: int) -> None:
        self.version += 1
        self.per_node[i] += delta
        j = self.domain_of[i]
        if j < self.domains:
            was = int(self.per_domain[j])
            self.per_domain[j] = was + delta
            self._uncount(was)
            self.histogram[was + delta] = self.histogram.get(was + delta, 0) + 1

    def _uncount(self, pods: int) -> None:
        """One domain fewer holds `pods` matching pods."""
        h = self.histogram
        if h[pods] == 1:
            del h[pods]
        else:
            h[pods] -= 1

    def without_node(self, i: int, log: list | None = None) -> None:
        """The node at `i` (its pods already moved out) is deleted: the last node of a domain
        takes the domain out of the histogram, and the minimum may then be forced to 0 again
        by minDomains (drain/counts.without_node). `log` is told how to undo it."""
        j = int(self.domain_of[i])  # the node leaves the walk: its entry is never read again
        if j >= self.domains:
            return
        members = self.members
        members[j] -= 1
        if members[j]:
            if log is not None:
                log.append((self._undelete, j, None, self.forced))
            return
        if log is not None:
            log.append((self._undelete, j, int(self.per_domain[j]), self.forced))
        low = self.minimum()
        self._uncount(int(self.per_domain[j]))
        self.forced = sum(self.histogram.values()) < self.min_domains
        if self.minimum() != low:  # else no count any reader takes moved (the node held none)
            self.version += 1

    def _undelete(self, j: int, was: int | None, forced: bool) -> None:
        self.members[j] += 1
        if was is not None:
            self.histogram[was] = self.histogram.get(was, 0) + 1
        self.forced = forced


class FlatCluster:
    """The cluster before the drain, as arrays in the scheduler's node order then. A node
    keeps its position there (`position`, `order`) when nodes are deleted: `walk` holds the
    positions of the nodes left, in the scheduler's order now, and `slot` each position's
    place in it. The arrays that binds and cordons change (free room, the cordons) and the
    names' ranks are kept in walk order, moved at each deletion; those that only deletions
    change (the filter verdicts per pod shape, the constraints' domain per node) stay by
    position, and are read in walk order through a copy made once per deletion (`walked`)."""

    def __init__(self, snapshot):
        self.sim = SimCluster(snapshot)  # the planner's filters and spread states, read once per template
        self.placer = Placer()
        self.order = order = list(self.sim.scan_order())
        n = len(order)
        self.position = {name: i for i, name in enumerate(order)}
        self.walk = self.slot = None  # made at the first deletion (before: 0, 1, 2, ... both)
        self._size = n
        # `stamp` moves with every change; `freed` with every change that can make room on a
        # schedulable node (a pod gone from one, a node deleted): cordons and binds only take
        # room away (World.note_stuck's reasoning)
        self.stamp = self.freed = 0
        self._walked: dict[int, tuple] = {}  # id(array by position) -> (it, in walk order)
        # while a candidate the planner did not keep is played (mark): how to undo each change,
        # in order (rollback); None otherwise
        self._log: list | None = None
        # replacements bound by the replay, by (namespace, name stem, node): a later step may
        # evict one again (the plan names the planner's record, whose name is its own)
        self.on_node: dict[tuple[str, str, str], list] = {}
        self._zones = zone_lists(self.sim.nodes.values())
        self.rank = np.empty(n, dtype=np.int64)
        for r, name in enumerate(sorted(order)):
            self.rank[self.position[name]] = r
        nodes = self.sim.nodes
        self.free = {r: np.array([nodes[name].allocatable.get(r, 0) for name in order], dtype=np.int64)
                     for r in FIT + ("pods",)}
        allocatable = np.stack([self.free["cpu"], self.free["memory"]])
        usable = allocatable > 0
        self.score_free = np.where(usable, allocatable, UNSCORED)
        self.score_divisor = np.where(usable, allocatable, 1)  # vector.least_allocated reads these two
        self.cordoned = np.array([nodes[name].unschedulable for name in order], dtype=bool)
        self.open = ~self.cordoned  # by position: neither cordoned nor deleted
        self.name_rank = self.rank.copy()  # by position
        self.next_start = 0
        self.node_of: dict[str, int] = {}  # a counted pod -> its node's position
        self.terminating: list = []  # pods holding room until the first step ends (SimCluster.settle)
        self.pods = {p.key: p for p in snapshot.pods if not p.finished}  # one per key, as SimCluster keeps them
        self._first_pods: dict[int, list] = {}  # per node, the pods on it before the drain
        for p in self.pods.values():
            if p.node_name in self.position:
                i = self.position[p.node_name]
                self._first_pods.setdefault(i, []).append(p)
                self._use(p, i, -1)
                if p.terminating:
                    self.terminating.append((p, i))
                else:
                    self.node_of[p.key] = i
        self._shapes: dict[int, np.ndarray] = {}
        self._templates: dict[tuple, tuple[list, list]] = {}
        self.of_template: dict[tuple, list] = {}  # (namespace, spread key) -> its constraints, in order
        self._partitions: dict[bytes, np.ndarray] = {}
        self._counting: dict[tuple[str, int], tuple] = {}  # labels held: their id stays theirs
        self.constraints: list[Constraint] = []
        self.moved: dict[int, Constraint] = {}
        self._reach: dict[tuple, float] = {}  # per template: how far its last walk went, per node wanted
        # stranded replacements, retried at each step as the planner does (steps.retry_pending)
        self.pending: list[tuple] = []  # (replacement, the plan's Eviction it replaces), in stranding order
        self.first_pending: dict = {}  # template -> the index of its first replacement in `pending`
        self.failed: dict = {}  # template -> the stamp it found no node at
        self.stuck: dict = {}  # template -> (freed, its hard constraints' versions) when it found no node

    def prepare(self, pod) -> None:
        """Read the planner's filter verdicts and spread state for a pod like `pod`, once."""
        shape, shape_id, key = keys_of(pod)
        if shape_id not in self._shapes:
            cycle = self.placer._cycle(self.sim, key, pod, self.sim.spread_state(pod))
            if cycle.prefilter is not None or cycle.node_names is not None or self.sim.affinity_sensitive:
                raise SystemExit("error: the probe covers pods without PreFilter outcomes or pod affinity")
            seen: dict = {}
            self._shapes[shape_id] = np.array(
                [not any(Placer._shape_hit(self.sim, seen, cycle, self.sim.nodes[name])[1:]) for name in self.order],
                dtype=bool)
        template = (pod.namespace, spread_key_of(pod))
        if template not in self._templates:
            state = self.sim.spread_state(pod)
            made = []
            for cs in state.constraints:
                if cs.constraint.node_taints_policy == HONOR:
                    raise SystemExit("error: the probe covers nodeTaintsPolicy Ignore only")
                c = Constraint(cs, self.position)
                key = c.domain_of.tobytes()  # one array per partition: read in walk order once
                c.domain_of = self._partitions.setdefault(key, c.domain_of)
                made.append(c)
            self.constraints += made
            self.of_template[template] = made
            self._templates[template] = ([c for c in made if c.hard], [c for c in made if not c.hard])
            self._counting.clear()

    def _use(self, pod, i: int, sign: int) -> None:
        """Take (`sign` -1) or give back (+1) the pod's room on node position `i`."""
        self.stamp += 1
        if self.slot is not None:
            i = int(self.slot[i])
            if i < 0:
                return  # a deleted node's
        if sign > 0 and not self.cordoned[i]:
            self.freed += 1
        self.free["pods"][i] += sign
        for r in FIT:
            v = pod.requests.get(r)
            if v:
                self.free[r][i] += sign * v
        cpu, memory = _nonzero(pod)
        self.score_free[0, i] += sign * cpu
        self.score_free[1, i] += sign * memory

    def _counting_constraints(self, pod) -> list[Constraint]:
        key = (pod.namespace, id(pod.labels))
        got = self._counting.get(key)
        if got is None or got[0] is not pod.labels:
            got = self._counting[key] = (pod.labels, [c for c in self.constraints if c.state.namespace == pod.namespace
                                                      and counts.counts_in(c.state, pod)])
        return got[1]

    def move(self, pod, i: int, delta: int) -> None:
        """A counted pod bound (+1) on node position `i`, or evicted (-1) from it."""
        if self._log is not None:
            self._log.append((self.move, pod, i, -delta))
        self._use(pod, i, -delta)
        for c in self._counting_constraints(pod):
            self.moved[id(c)] = c
            c.move(i, delta)

    def cordon(self, name: str) -> None:
        self.stamp += 1
        i = self.position[name]
        k = i if self.slot is None else self.slot[i]
        self.log_on(self._uncordon, i, k, self.open[i], self.cordoned[k])
        self.open[i] = False
        self.cordoned[k] = True

    def _uncordon(self, i: int, k: int, was_open: bool, was_cordoned: bool) -> None:
        self.open[i], self.cordoned[k] = was_open, was_cordoned

    def log_on(self, *undo) -> None:
        """Log `undo` (a function and its arguments) while a candidate is played."""
        if self._log is not None:
            self._log.append(undo)

    def unbind(self, pod) -> int:
        """The node position of a counted pod from the cluster before the drain, forgotten."""
        i = self.node_of.pop(pod.key)
        self.log_on(self.node_of.__setitem__, pod.key, i)
        return i

    def put_on(self, pod, node: str) -> None:
        """A replacement bound on `node` by the replay."""
        key = (pod.namespace, pod.name.rsplit("-", 1)[0], node)
        self.on_node.setdefault(key, []).append(pod)
        self.log_on(self._take_last, key)

    def take_on(self, namespace: str, name: str, node: str):
        """A replacement of the replay's on `node` like the planner's `name`, to evict."""
        key = (namespace, name.rsplit("-", 1)[0], node)
        pod = self.on_node[key].pop()
        self.log_on(self._put_back, key, pod)
        return pod

    def _take_last(self, key) -> None:
        self.on_node[key].pop()

    def _put_back(self, key, pod) -> None:
        self.on_node[key].append(pod)

    def mark(self) -> tuple:
        """Start playing a candidate to be rolled back: what rollback restores besides the log
        (the pending replacements and the memos of failed and stuck templates, which may hold
        entries of the candidate's states; the walk's start; the counters the memos key on)."""
        self._log = []
        return (list(self.pending), dict(self.first_pending), dict(self.stuck), dict(self.failed), self.next_start,
                self.stamp, self.freed, [c.version for c in self.constraints])

    def rollback(self, saved: tuple) -> int:
        """Undo every change since `mark`; how many there were."""
        log, self._log = self._log, None
        for undo in reversed(log):
            undo[0](*undo[1:])
        (self.pending, self.first_pending, self.stuck, self.failed, self.next_start, self.stamp, self.freed,
         versions) = saved
        for c, v in zip(self.constraints, versions):
            c.version = v
        return len(log)

    def walked(self, array):
        """`array` (one entry per node position) in walk order."""
        if self.walk is None:
            return array
        hit = self._walked.get(id(array))
        if hit is None or hit[0] is not array:
            hit = self._walked[id(array)] = (array, array.take(self.walk))
        return hit[1]

    @property
    def size(self) -> int:
        """How many nodes the scheduler walks over now."""
        return self._size if self.walk is None else len(self.walk)

    def settle(self) -> None:
        """Terminating pods are gone: their room is free again."""
        if not self.terminating:
            return
        self.log_on(self._unsettle, self.terminating)
        for p, i in self.terminating:
            self._use(p, i, +1)
        self.terminating = []

    def _unsettle(self, terminating: list) -> None:
        for p, i in terminating:
            self._use(p, i, -1)
        self.terminating = terminating

    def delete_node(self, name: str) -> None:
        """The Node object `name` is deleted (drained: only pods that no drain evicts are left
        on it, and they go with it): it leaves the walk, whose order is made again as the
        planner makes it (round robin over the zones left), and every constraint's domains."""
        i = self.position[name]
        self.stamp += 1
        self.freed += 1
        self.log_on(self.open.__setitem__, i, self.open[i])
        self.open[i] = False
        for p in self._first_pods.get(i, ()):
            if self.node_of.get(p.key) == i:
                self.unbind(p)
                self.move(p, i, -1)
        for c in self.constraints:
            c.without_node(i, self._log)
        self.log_on(self._restore_walk, self._zones, self.walk, self.slot, dict(self.free), self.score_free,
                    self.score_divisor, self.cordoned, self.rank, self._walked, self._size)
        self._zones = _without_zone_member(self._zones, name)
        walk = np.fromiter(map(self.position.__getitem__, round_robin(self._zones.values())), dtype=np.int64)
        moved = walk if self.slot is None else self.slot.take(walk)  # new walk order -> old
        for r in self.free:
            self.free[r] = self.free[r].take(moved)
        self.score_free, self.score_divisor = self.score_free.take(moved, axis=1), self.score_divisor.take(moved, axis=1)
        self.cordoned, self.rank = self.cordoned.take(moved), self.rank.take(moved)
        self.walk, self.slot = walk, np.full(len(self.order), -1, dtype=np.int64)
        self.slot[walk] = np.arange(len(walk))
        self._walked = {}

    def _restore_walk(self, zones, walk, slot, free, score_free, score_divisor, cordoned, rank, walked, size) -> None:
        self._zones, self.walk, self.slot, self.free = zones, walk, slot, free
        self.score_free, self.score_divisor, self.cordoned, self.rank = score_free, score_divisor, cordoned, rank
        self._walked, self._size = walked, size

    def end_step(self) -> list[tuple[int, int]]:
        """Terminating pods are gone; (minimum, skew) of each constraint the step moved."""
        self.settle()
        out = []
        for c in self.moved.values():
            low = c.minimum()
            out.append((low, max(c.histogram, default=0) - low))
        self.moved.clear()
        return out

    def strand(self, pod, eviction) -> None:
        """`pod` found no node: it waits among the pending ones (World.add_pending)."""
        self.first_pending.setdefault(template_of(pod), len(self.pending))
        self.pending.append((pod, eviction))
        self._note_stuck(pod)

    def _note_stuck(self, pod) -> None:
        if not filters.tolerates_cordon(pod):
            hard = self._templates[(pod.namespace, spread_key_of(pod))][0]
            self.stuck[template_of(pod)] = (self.freed, [c.version for c in hard])

    def _still_stuck(self, pod, template) -> bool:
        hit = self.stuck.get(template)
        if hit is None or hit[0] != self.freed:
            return False
        hard = self._templates[(pod.namespace, spread_key_of(pod))][0]
        return hit[1] == [c.version for c in hard]

    def _retry(self, pod) -> int | None:
        template = template_of(pod)
        if self._still_stuck(pod, template) or self.failed.get(template) == self.stamp:
            return None
        i = self.place(pod)
        if i is None:
            self._note_stuck(pod)
        return i

    def retry_pending(self, decide: Callable) -> list[tuple]:
        """The planner's retry of the pending replacements as a step starts (steps.retry_pending):
        the first of each template in pending order until one binds, then every one after it.
        `decide(pod, eviction, position or None)` gives the position to bind it to (or None);
        returns (pod, eviction, position) of those bound."""
        pending = self.pending
        for k in sorted(self.first_pending.values()):
            pod, e = pending[k]
            i = decide(pod, e, self._retry(pod))
            if i is None:
                continue
            self.bind(pod, i)
            placed, still = [(pod, e, i)], pending[:k]
            for pod, e in pending[k + 1:]:
                i = decide(pod, e, self._retry(pod))
                if i is None:
                    still.append((pod, e))
                else:
                    self.bind(pod, i)
                    placed.append((pod, e, i))
            self.pending, self.first_pending = still, {}
            for k, (pod, _) in enumerate(still):
                self.first_pending.setdefault(template_of(pod), k)
            return placed
        return []

    def bind(self, pod, i: int) -> None:
        self.move(pod, i, +1)
        self.put_on(pod, self.order[i])

    def place(self, pod) -> int | None:
        """The position of the node the scheduler binds `pod` to, or None. As the planner does
        (drain/vector.py), the nodes the walk most likely stops within are judged first: as far
        as the template's last walk went, and half as far again (one run of positions, not
        wrapping), then every node when they held too few feasible ones."""
        spread_key, (_, shape_id, filter_key) = spread_key_of(pod), keys_of(pod)
        hard, soft = self._templates[(pod.namespace, spread_key)]
        shape = self._shapes[shape_id]
        n = self.size
        start, want = self.next_start % n, num_feasible_to_find(n)
        template = (pod.namespace, spread_key, filter_key)
        rows = vector.window(start, int(want * self._reach.get(template, 2.0)), want, n)
        walked = vector.walk_window(self._feasible(pod, shape, hard, rows), rows, want) if rows is not None else None
        if walked is None:
            walked = vector.walk(self._feasible(pod, shape, hard, slice(None)), start, want, n)
            if not len(walked[0]):
                self._reach[template] = 0.0
                self.failed[template_of(pod)] = self.stamp
                return None  # the whole table examined: the start does not move
        found, examined = walked
        self._reach[template] = max(WINDOW_MARGIN, WINDOW_MARGIN * examined / want)
        self.next_start = (start + examined) % n
        walk = self.walk
        if len(found) == 1:
            return int(found[0] if walk is None else walk[found[0]])
        score = LEAST_ALLOCATED_WEIGHT * vector.least_allocated(self, _nonzero(pod), found)
        if soft:
            score = score + SPREAD_WEIGHT * self._spread_score(soft, found if walk is None else walk.take(found))
        top = found[score == score.max()]
        best = top[self.rank[top].argmin()]
        return int(best if walk is None else walk[best])

    def _feasible(self, pod, shape, hard: list[Constraint], rows: slice):
        """Every filter's verdict for the nodes of `rows` (in walk order)."""
        mask = self.walked(shape)[rows] & ~self.cordoned[rows]
        mask &= self.free["pods"][rows] >= 1
        for r, want in resources._checked(pod.requests):
            mask &= self.free[r][rows] >= want
        for c in hard:
            allowed = c.per_domain <= c.max_skew + c.minimum() - c.self_match
            allowed[-1] = False
            mask &= allowed[self.walked(c.domain_of)[rows]]
        return mask

    def _spread_score(self, soft: list[Constraint], found):
        total = None
        for c in soft:
            if c.hostname:
                size, cnt = len(found), c.per_node.take(found)
            else:
                at = c.domain_of.take(found)
                size = int(np.count_nonzero(np.bincount(at, minlength=c.domains + 1)))
                cnt = c.per_domain.take(at)
            added = cnt * math.log(size + 2) + (c.max_skew - 1)
            total = added if total is None else total + added
        raw = np.floor(total + 0.5).astype(np.int64)
        hi, lo = int(raw.max()), int(raw.min())
        return np.full(len(raw), spread.MAX_NODE_SCORE, dtype=np.int64) if hi == 0 \
            else spread.MAX_NODE_SCORE * (hi + lo - raw) // hi


class Heuristic:
    """search.Search.order on the flat arrays: the remaining target nodes sorted by (how many
    tracked hard constraints would lose their domain's last open node with it, in how many its
    domain holds the global minimum, minus its domains' surplus over it, its name), counting
    a constraint on a node only where the node holds pods it counts. Each constraint's share
    per target is kept, and made again only for the constraints whose counts or minimum moved
    since (Constraint.version); the last open node of each domain is found once per
    partition (the constraints of one topology key and node set share their domain ids)."""

    def __init__(self, flat: FlatCluster, tracked: list, targets: list[str]):
        self.flat, self.names = flat, list(targets)
        self.index = {name: k for k, name in enumerate(targets)}
        self.targets = np.array([flat.position[name] for name in targets], dtype=np.int64)
        self.rank = flat.name_rank.take(self.targets)
        self.hard: list[Constraint] = []
        for t in tracked:
            flat.prepare(t.pod)
            c = flat.of_template[(t.pod.namespace, spread_key_of(t.pod))][t.position]
            if c.hard:
                self.hard.append(c)
        # the non-hostname ones, by partition: how many tracked constraints each domain array serves
        self.partitions: dict[int, tuple[Constraint, int]] = {}
        for c in self.hard:
            if not c.hostname:
                first, n = self.partitions.get(id(c.domain_of), (c, 0))
                self.partitions[id(c.domain_of)] = (first, n + 1)
        self.holds = np.zeros(len(targets), dtype=np.int64)
        self.surplus = np.zeros(len(targets), dtype=np.int64)
        self._shares: dict[int, tuple] = {}  # position in hard -> (version, holds, surplus)
        self.levels = self.differ = 0  # orders made, and those not the planner's
        self.seconds = 0.0
        self.first_difference: tuple | None = None  # (targets drained, here, the planner's)

    def check(self, done: set[str]) -> None:
        """Order the targets not in `done` and compare with the planner's order at that level."""
        remaining = [name for name in self.names if name not in done]
        began = time.perf_counter()
        mine = self.order(remaining)
        self.seconds += time.perf_counter() - began
        self.levels += 1
        planner = ORDERS.get(len(done))
        if mine != planner:
            self.differ += 1
            if self.first_difference is None:
                self.first_difference = (len(done), mine[:5], (planner or [])[:5])

    def order(self, remaining: list[str]) -> list[str]:
        targets = self.targets
        for k, c in enumerate(self.hard):
            got = self._shares.get(k)
            if got is not None and got[0] == c.version:
                continue
            dom = c.domain_of.take(targets)
            holding = (c.per_node.take(targets) > 0) & (dom < c.domains)
            low, pods = c.minimum(), c.per_domain.take(dom)
            holds = (holding & (pods <= low)).astype(np.int64)
            surplus = np.where(holding, pods - low, 0)
            if got is not None:
                self.holds -= got[1]
                self.surplus -= got[2]
            self.holds += holds
            self.surplus += surplus
            self._shares[k] = (c.version, holds, surplus)
        at = np.fromiter(map(self.index.__getitem__, remaining), dtype=np.int64, count=len(remaining))
        last = np.zeros(len(self.names), dtype=np.int64)
        where = np.flatnonzero(self.flat.open)  # the nodes neither cordoned nor deleted
        for c, n in self.partitions.values():
            dom = c.domain_of.take(where)
            opened = np.bincount(dom, minlength=c.domains + 1)
            only = where[(opened.take(dom) == 1) & (dom < c.domains)]  # a domain's one open node
            if len(only):
                last += n * np.isin(targets, only)
        keys = (self.rank.take(at), -self.surplus.take(at), self.holds.take(at), last.take(at))
        return [remaining[i] for i in np.lexsort(keys).tolist()]


def replay(flat: FlatCluster, plan, prefix: list, delete_drained_nodes: bool = False,
           marks: list | None = None, heuristic: Heuristic | None = None,
           rejected: bool = False) -> tuple[int, int, float, float]:
    """Play `prefix` (the plan's first steps) on `flat`: (placements that differ from the
    planner's, replacements placed, seconds in all, seconds placing). A replacement placed
    elsewhere is counted and bound where the planner bound it, so that the rest is still
    played on the planner's states. A replacement that finds no node waits, and is retried
    as each later step begins, as the planner does; a retry that binds where the planner's
    did not (RETRIED, from plan_timed), or fails where it bound, is counted likewise.
    With `delete_drained_nodes` (the plan deleted them), each step's evicted pods are gone
    and its emptied nodes deleted before its replacements are placed, as in that plan.
    `marks` is given (step number, seconds so far, seconds placing so far) after each step.
    With a `heuristic`, its order of the targets left is made and checked as each batch
    begins (outside the seconds returned: Heuristic.seconds). With `rejected`, the batches
    the planner simulated at each level and did not keep (CALLS, from plan_timed) are played
    there too, each checked against the planner's and then rolled back (FlatCluster.mark);
    REJECTED counts them and the changes undone."""
    pods = flat.pods
    for step in prefix:  # the per-template reads, outside the timing (the planner's memos)
        for e in step.evictions:
            p = pods.get(f"{e.namespace}/{e.name}")
            if p is not None and e.replaced:
                flat.prepare(flat.sim.replacement_for(p))
    for e in plan.settled:
        flat.prepare(pods[f"{e.namespace}/{e.name}"])
    counted = [0, 0, 0.0]  # placements and retries that differ, replacements placed, seconds placing
    DIFFERENCES.clear()
    REJECTED[:] = [0, 0]
    for e in plan.settled:  # before the first step (plan._settle): outside the timing, as the planner's
        p = pods[f"{e.namespace}/{e.name}"]
        i = flat.place(p)
        counted[0] += (flat.order[i] if i is not None else None) != e.predicted_node
        if e.predicted_node is not None:
            i = flat.position[e.predicted_node]
            flat.move(p, i, +1)
            flat.node_of[p.key] = i

    def differs(step, what: str, here, planner) -> None:
        counted[0] += 1
        if len(DIFFERENCES) < 5:
            DIFFERENCES.append((step.number, what, here, planner))

    def play(step) -> None:
        """One step of the planner's (its evictions, deletions and placements) on `flat`."""
        for name in step.cordon:
            flat.cordon(name)
        if flat.pending:
            bound = RETRIED.get(id(step), (None, {}))[1]

            def decide(pod, e, i):
                """The planner's outcome of a retry (checked against this one's)."""
                got = flat.order[i] if i is not None else None
                want = bound.get((e.namespace, e.name))
                if got != want:
                    differs(step, f"{pod.key} (retried)", got, want)
                return flat.position[want] if want is not None else None

            t = time.perf_counter()
            flat.retry_pending(decide)
            counted[2] += time.perf_counter() - t
        evicted = []
        for e in step.evictions:
            p = pods.get(f"{e.namespace}/{e.name}")
            if p is None or p.key not in flat.node_of:
                # a replacement placed earlier (a StatefulSet's keeps its pod's name): any of its
                # template on that node
                p, i = flat.take_on(e.namespace, e.name, e.node), flat.position[e.node]
            else:
                i = flat.unbind(p)
            flat.move(p, i, -1)
            evicted.append((p, e))
        if delete_drained_nodes:
            flat.settle()
            for name in step.deleted_nodes:
                flat.delete_node(name)
        # the scheduling queue: higher priority first, then the order they were evicted in
        new = sorted(((flat.sim.replacement_for(p), e) for p, e in evicted if e.replaced), key=lambda x: -x[0].priority)
        for r, e in new:
            t = time.perf_counter()
            i = flat.place(r)
            counted[2] += time.perf_counter() - t
            node = flat.order[i] if i is not None else None
            counted[1] += 1
            if node != e.predicted_node:  # counted, and bound where the planner did, to go on in step
                differs(step, r.key, node, e.predicted_node)
                node = e.predicted_node
            if node is None:
                flat.strand(r, e)
            else:
                flat.bind(r, flat.position[node])
        flat.end_step()

    at_level: dict[int, list] = {}
    if rejected:
        for level, batch, played in CALLS:
            at_level.setdefault(level, []).append((batch, played))
    done: set[str] = set()
    batch: tuple = ()
    ordering = 0.0
    start = time.perf_counter()
    for step in prefix:
        if step.nodes != batch:
            for other, played in at_level.get(len(done), ()):
                if other != step.nodes:  # a candidate the planner did not keep (or a rebuild)
                    saved = flat.mark()
                    for s in played:
                        play(s)
                    REJECTED[0] += 1
                    REJECTED[1] += flat.rollback(saved)
            if heuristic is not None:
                was = heuristic.seconds
                heuristic.check(done)
                ordering += heuristic.seconds - was
            batch = step.nodes
            done.update(batch)
        play(step)
        if marks is not None:
            marks.append((step.number, time.perf_counter() - start - ordering, counted[2]))
    return counted[0], counted[1], time.perf_counter() - start - ordering, counted[2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="small", choices=sorted(generate.SIZES))
    ap.add_argument("--cache-dir", default="bench-out")
    ap.add_argument("--delete-drained-nodes", action="store_true",
                    help="probe the remedy re-plan that deletes each drained node once it is empty")
    args = ap.parse_args(argv)
    snapshot = load(args.size, args.cache_dir)
    gc.collect()
    gc.disable()  # as the tool plans (gcpause)
    try:
        return _probe(args.size, snapshot, args.delete_drained_nodes)
    finally:
        gc.enable()


def _probe(size: str, snapshot, delete_drained_nodes: bool = False) -> int:
    targets = resolve_targets(snapshot, (), None, (ZONE_KEY, ZONE))
    plan, stamps, started, ended = plan_timed(snapshot, targets, delete_drained_nodes)
    prefix = harmless_prefix(plan)
    if not prefix:
        print("error: the plan has no step before its first stranded replacement", file=sys.stderr)
        return 1
    first, placing_before = stamps[0][0], stamps[0][3]  # as the first batch starts
    last, placing_after = next((end, after) for _, end, steps, _, after in stamps if steps >= len(prefix))
    batches = sum(1 for stamp in stamps if stamp[1] <= last)
    planner_placing = placing_after - placing_before
    flat = FlatCluster(snapshot)
    heuristic = Heuristic(flat, build_context(flat.sim, targets, plan_options(snapshot, targets, delete_drained_nodes)).tracked,
                          list(targets))
    marks: list[tuple[int, float, float]] = []
    differ, placed, took, placing = replay(flat, plan, list(plan.steps), delete_drained_nodes, marks, heuristic,
                                           rejected=True)
    _, prefix_took, prefix_placing = marks[len(prefix) - 1]
    prefix_placed = sum(e.replaced for s in prefix for e in s.evictions)
    us = 1e6 / max(prefix_placed, 1)
    deleted = sum(len(s.deleted_nodes) for s in prefix)
    what = "the re-plan that deletes the drained nodes" if delete_drained_nodes else "the plan"
    print(f"{size} cluster, {ZONE} of {len(targets)} nodes: {what} took {ended - started:.2f} s; "
          f"its harmless prefix is {len(prefix)} steps ({batches} simulated batches), {prefix_placed} replacements"
          + (f", {deleted} nodes deleted" if delete_drained_nodes else ""))
    print(f"planner, from its first step to the prefix's end: {last - first:.2f} s, {(last - first) * us:.0f} us "
          f"a replacement ({planner_placing:.2f} s placing, {planner_placing * us:.0f} us each; order heuristic, "
          f"judge and report objects included)")
    print(f"flat arrays: {prefix_took:.2f} s, {prefix_took * us:.0f} us a replacement ({prefix_placing:.2f} s placing, "
          f"{prefix_placing * us:.0f} us each)")
    tail = plan.steps[len(prefix):]
    if tail:
        simulated = sum(1 for stamp in stamps if stamp[0] >= last)
        kept = len({s.nodes for s in tail})
        planner_tail, flat_tail = ended - last, took - prefix_took
        print(f"from there to the end: {len(tail)} steps in {kept} batches; the planner simulated {simulated} batches "
              f"(with the candidates it did not keep, and the worlds it rebuilt)")
        print(f"planner: {planner_tail:.2f} s, {planner_tail / max(simulated, 1) * 1e3:.1f} ms a simulated batch")
        print(f"flat arrays: {flat_tail:.2f} s, {flat_tail / (kept + REJECTED[0]) * 1e3:.1f} ms a batch, for the kept "
              f"batches and {REJECTED[0]} that the planner did not keep, played and rolled back ({REJECTED[1]} changes "
              f"undone; {took - prefix_took - (placing - prefix_placing):.2f} s besides placing)")
    print(f"order heuristic: the planner's {ORDER_SECONDS[0]:.2f} s over {len(ORDERS)} levels (in its figures above), "
          f"flat arrays {heuristic.seconds:.2f} s over {heuristic.levels} (not in theirs); orders that differ: "
          f"{heuristic.differ}")
    print(f"from the first step to the end: flat arrays {took + heuristic.seconds:.1f} s with the order heuristic, "
          f"the planner {ended - first:.1f} s")
    if heuristic.first_difference is not None:
        level, mine, planner = heuristic.first_difference
        print(f"after {level} targets: {mine} here, the planner's {planner}")
    print(f"placements that differ: {differ} of {placed} (retries included)")
    for step, pod, here, planned in DIFFERENCES:
        print(f"step {step}: {pod} placed on {here}, the planner's {planned}")
    return 1 if differ or heuristic.differ else 0


if __name__ == "__main__":
    sys.exit(main())
