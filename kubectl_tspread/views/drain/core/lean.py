"""Drain plans on flat arrays: the lean search.

The planner (steps.py, search.py, simulate.py) keeps immutable states, count overlays and
copy-on-write lists so that its search can copy a world cheaply and build the report of every
step. Here the same search runs on arrays changed in place: per node, the room left and the
cordons; per spread constraint of each pod template, the domain of each node, the matching pods
per domain and per node, and how many domains hold each count (the global minimum). A candidate
batch the search does not keep is rolled back through an undo log of its changes.

What it decides is the planner's, step for step: the order heuristic (Search.order), the
candidate batches, PDB budgets in waves, cordons (every target at the first step, unless
staged: steps.cordons), evictions, the drained nodes deleted,
placements (the scheduler's walk from its rotating start, judged over a window first, Filter
and Score as views/drain/core/vector.py has them; evicted pods hold their room until the step ends, and
pods that tolerate the cordon may go to cordoned nodes), stranded replacements retried at later
steps, nodeTaintsPolicy Honor (a cordoned node leaves the domains of the templates that do not
tolerate it, its pods with it), the judge of the tracked DoNotSchedule constraints, the
depth-first search without backtracking and the greedy fallback. The package asks it for two
things. A remedy re-plan's verdict (parallel.Verdict: whether the plan is safe, and each
finding's code and workload, which is all remedies._clears reads). And the plan of a drain
that forced.py proves unsafe (a zone drained under nodeTaintsPolicy Ignore): with `report`
each step keeps the planner's Step (eviction records with their accepting domains, every
tracked constraint's judgement with its distribution, the PDB uses, the skipped pods), each
stranded pod the planner's Stranded (diagnose.py's details: for NoCapacity the first failure
of every node, FlatCluster.first_failures; for spread the fit nodes, key, maxSkew, minimum,
distribution and cordoned domains), and the settled pods their records, and drain_plan puts
the DrainPlan together as plan._finish does. Its SetNodeTaintsPolicyHonor re-plan is carried along
(views/drain/core/lean_carry.py). bench/lean_search.py and tests/test_lean_search.py compare it with the
planner, step by step, stranding by stranding, verdict by verdict, and document by document.

It covers what a big drain meets, and raises Unsupported for the rest (the planner plans it):
pods with pod (anti-)affinity, PreFilter outcomes, host ports, volume claims or requests of
other resources than cpu, memory, ephemeral-storage and pods; a search with a backtracking
allowance (search_budget above 0) unless forced.py proved that no order is safe; a report of a
plan that deletes the drained nodes.
"""

from __future__ import annotations

import collections
import itertools
import math
import operator
from dataclasses import dataclass
from collections.abc import Iterator, Mapping
from typing import Callable, Sequence

import numpy as np

from kubectl_tspread.views.drain.core import counts, vector
from kubectl_tspread.views.drain import parallel
from kubectl_tspread.views.drain import pdb as pdbmod
from kubectl_tspread.model.plan import (
    CORDONED_DOMAIN_TRAP, HOSTNAME_SPREAD_FULL, NO_CAPACITY, PDB_BLOCKS, SKEW_EXCEEDED, SPREAD_BLOCKED,
    ConstraintAfter, DrainPlan, Eviction, Finding, PdbUse, PlanOptions, Skipped, Step, Stranded,
)
from kubectl_tspread.views.drain.core.placement import (
    FILTER_KEY_STRINGS, TEMPLATE_KEY_READS, WINDOW_MARGIN, Placer, _nonzero,
    accepting_domains, keys_of, num_feasible_to_find, template_of,
)
from kubectl_tspread.views.drain.forced import forced_harm
from kubectl_tspread.views.drain.plan import _new_world, _settle, build_context, finished, workload_ref
from kubectl_tspread.views.drain.pods import EVICT, REFUSE, SKIP
from kubectl_tspread.views.drain.core.search import BACKTRACK_FLOOR, DFS_CANDIDATES, GREEDY_CANDIDATES, zone_key
from kubectl_tspread.views.drain.core.steps import Context, _new_after, _new_eviction, _new_stranded, cordons
from kubectl_tspread.views.drain.core.steps import _skipped as steps_skipped
from kubectl_tspread.views.drain.core.simulate import (
    SimCluster, _without_zone_member, parts_memo, round_robin, spread_key_of, zone_lists,
)
from kubectl_tspread.views.drain.core.vector import FIT_RESOURCES as FIT, UNSCORED
from kubectl_tspread.engine import filters, resources, scorearrays, scores, spread
from kubectl_tspread.engine.nodematch import node_untolerated_taint, untolerated_taint
from kubectl_tspread.model import HONOR, HOSTNAME_KEY, Snapshot


# Constraint.version: drawn from one sequence, so that no two states ever share a number (a
# rollback puts back the numbers of the state it returns to; what a candidate then moves gets
# new ones, never those of a state that was rolled back)
_VERSIONS = itertools.count(1)
# FlatCluster.walked's copies kept at most: a cordon under nodeTaintsPolicy Honor makes new
# domain arrays, each walked again once nodes are deleted
WALKED_KEPT = 256
# a step's judgement of a constraint keeps its counts as changes to an earlier copy while they
# are at most 1/REBASE of its domains (LeanCounts)
REBASE = 32
_NONE = np.zeros(0, dtype=np.int64)


def _three_keys(pod) -> tuple:
    return spread_key_of(pod), keys_of(pod), template_of(pod)


# (spread_key_of, keys_of, template_of) of a pod, found by its parts once (their reads are a
# subset of template_of's): every replacement is a new record, looked up by each of the three
lean_keys = parts_memo(_three_keys, TEMPLATE_KEY_READS, FILTER_KEY_STRINGS)
_template_parts = operator.attrgetter(*TEMPLATE_KEY_READS)
_version = operator.attrgetter("version")


class Unsupported(Exception):
    """A cluster or plan the lean search does not cover: the planner's to plan."""


class Constraint:
    """One spread constraint of one template, as arrays: the domain id of each node (the last
    id: no domain), matching pods per domain and per node, and the count histogram."""

    __slots__ = ("state", "hard", "max_skew", "self_match", "forced", "min_domains", "hostname", "domains",
                 "domain_of", "per_domain", "per_node", "histogram", "members", "version", "honor", "tolerations",
                 "values", "ids", "layout", "touched")

    def __init__(self, cs: spread.ConstraintState, position: dict[str, int], tolerations: tuple = (),
                 layouts: dict | None = None):
        """`layouts` keeps the domain ids made for a node-to-domain mapping, which the spread
        states of one topology key and node set share (FlatCluster.prepare's)."""
        values = list(cs.domains.keys())  # by domain id
        got = None if layouts is None else layouts.get(id(cs.node_domain))
        if got is None or got[0] is not cs.node_domain or got[1] != values:
            ids = {v: j for j, v in enumerate(values)}  # domain value -> id
            domain_of = np.full(len(position), len(values), dtype=np.int64)
            for node, value in cs.node_domain.items():
                if node in position:
                    domain_of[position[node]] = ids[value]
            got = (cs.node_domain, values, ids, domain_of, np.bincount(domain_of, minlength=len(values) + 1).tolist())
            if layouts is not None:
                layouts[id(cs.node_domain)] = got
        _, self.values, self.ids, self.domain_of, members = got
        # nodeTaintsPolicy Honor: a node whose taints the template does not tolerate makes no
        # domain (the cluster's before the drain are in `cs`; a cordon's: leave)
        self.honor, self.tolerations = cs.constraint.node_taints_policy == HONOR, tolerations
        self.state, self.hard = cs, cs.constraint.hard
        self.max_skew, self.self_match, self.forced = cs.constraint.max_skew, cs.self_match, cs.min_forced_zero
        self.min_domains = cs.constraint.min_domains
        self.hostname, self.domains = cs.constraint.topology_key == HOSTNAME_KEY, len(values)
        self.per_domain = np.zeros(len(values) + 1, dtype=np.int64)
        pods = [d.pods for d in cs.domains.values()]
        self.per_domain[:-1] = pods
        self.histogram: dict[int, int] = dict(collections.Counter(pods))
        self.per_node = np.zeros(len(position), dtype=np.int64)
        for node, n in cs.node_counts.items():
            if node in position:
                self.per_node[position[node]] = n
        # the nodes left in each domain: a domain whose last node is deleted leaves the counts
        self.members = list(members)
        # the domains whose count a move or a cordon changed since LeanSearch last judged it
        # (when it keeps that; a rollback makes it start again)
        self.touched: list[int] | None = None
        # moved at every change of a count or of the minimum (what FlatCluster._still_stuck and
        # Heuristic read: a node deleted without pods changes neither, unless the minimum)
        self.version = next(_VERSIONS)
        # moved whenever a domain goes (rollback puts the number back): which domains are left
        self.layout = self.version

    def minimum(self) -> int:
        return 0 if self.forced or not self.histogram else min(self.histogram)

    def move(self, i: int, delta: int) -> None:
        self.version = next(_VERSIONS)
        self.per_node[i] += delta
        j = self.domain_of[i]
        if j < self.domains:
            was = int(self.per_domain[j])
            self.per_domain[j] = was + delta
            if self.touched is not None:
                self.touched.append(j)
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
            log.append((self._undelete, j, int(self.per_domain[j]), self.forced, self.layout))
        self.layout = next(_VERSIONS)
        low = self.minimum()
        self._uncount(int(self.per_domain[j]))
        self.forced = sum(self.histogram.values()) < self.min_domains
        if self.minimum() != low:  # else no count any reader takes moved (the node held none)
            self.version = next(_VERSIONS)

    def leave(self, i: int, domain_of, log: list | None = None) -> None:
        """The node at `i` leaves the domains with its pods on it (cordoned under
        nodeTaintsPolicy Honor, by a template that does not tolerate the cordon): they no
        longer count in its domain, only on the node (counts.without_node), and the last node
        of a domain takes the domain out of the histogram. `domain_of` is the domain array
        to read from now (the caller's copy without the node). `log` is told how to undo it."""
        j = int(self.domain_of[i])
        if log is not None:
            log.append((self._rejoin, self.domain_of, j, int(self.per_domain[j]), dict(self.histogram), self.forced,
                        self.layout))
        self.domain_of = domain_of
        leaving, was = int(self.per_node[i]), int(self.per_domain[j])
        members = self.members
        members[j] -= 1
        self.per_domain[j] = was - leaving
        if self.touched is not None:
            self.touched.append(j)
        self._uncount(was)
        if members[j]:
            self.histogram[was - leaving] = self.histogram.get(was - leaving, 0) + 1
        else:  # the domain is gone: minDomains may force the minimum to 0 again
            self.forced = sum(self.histogram.values()) < self.min_domains
            self.layout = next(_VERSIONS)
        self.version = next(_VERSIONS)

    def _rejoin(self, domain_of, j: int, was: int, histogram: dict[int, int], forced: bool, layout: int) -> None:
        self.domain_of = domain_of
        self.members[j] += 1
        self.per_domain[j] = was
        self.histogram, self.forced, self.layout = histogram, forced, layout

    def _undelete(self, j: int, was: int | None, forced: bool, layout: int | None = None) -> None:
        self.members[j] += 1
        if was is not None:
            self.histogram[was] = self.histogram.get(was, 0) + 1
            self.layout = layout
        self.forced = forced


class FlatCluster:
    """The cluster before the drain, as arrays in the scheduler's node order then. A node
    keeps its position there (`position`, `order`) when nodes are deleted: `walk` holds the
    positions of the nodes left, in the scheduler's order now, and `slot` each position's
    place in it. The arrays that binds and cordons change (free room, the cordons) and the
    names' ranks are kept in walk order, moved at each deletion; those that only deletions
    change (the filter verdicts per pod shape, the constraints' domain per node) stay by
    position, and are read in walk order through a copy made once per deletion (`walked`)."""

    def __init__(self, snapshot: Snapshot, sim: SimCluster | None = None):
        # the planner's filters and spread states, read once per template: `sim` is a simulation
        # of `snapshot` nothing was played on (plan.py's pristine fork), else one is made
        self.sim = SimCluster(snapshot) if sim is None else sim
        if self.sim.affinity_sensitive:
            raise Unsupported("pod (anti-)affinity")
        if self.sim.affinity_scored:  # InterPodAffinity's score reads pods across the cluster
            raise Unsupported("preferred pod (anti-)affinity")
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
        # while a candidate that may not be kept is played (mark): how to undo each change,
        # in order (rollback); None otherwise
        self._log: list | None = None
        self.replacements_on: dict[int, list] = {}  # node position -> replacements bound there, in order
        self.at: dict[str, int] = {}  # a bound replacement's key -> its node position
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
        self.score_alloc = allocatable  # less score_free: the non-zero requests LeastAllocated charges
        # the positions of the nodes with a PreferNoSchedule taint (TaintToleration's score)
        self.prefer_tainted = np.array([i for i, name in enumerate(order) if any(
            t.effect == scores.PREFER_NO_SCHEDULE for t in nodes[name].taints)], dtype=np.int64)
        self.cordoned = np.array([nodes[name].unschedulable for name in order], dtype=bool)
        self.open = ~self.cordoned  # by position: neither cordoned nor deleted
        self.name_rank = self.rank.copy()  # by position
        self.next_start = 0
        self.node_of: dict[str, int] = {}  # a counted pod -> its node's position
        self.terminating: list = []  # pods holding room until the first step ends (SimCluster.settle)
        self.pods = {p.key: p for p in snapshot.pods if not p.finished}  # one per key, as SimCluster keeps them
        self._first_pods: dict[int, list] = {}  # per node, the pods on it before the drain
        on = []  # the room the pods take (_use on every one, in one go)
        for p in self.pods.values():
            if p.node_name in self.position:
                i = self.position[p.node_name]
                self._first_pods.setdefault(i, []).append(p)
                on.append((i, p.requests, _nonzero(p)))
                if p.terminating:
                    self.terminating.append((p, i))
                else:
                    self.node_of[p.key] = i
        self.stamp += len(on)
        def column(values) -> np.ndarray:
            return np.fromiter(values, dtype=np.int64, count=len(on))

        at = column(i for i, _, _ in on)
        np.subtract.at(self.free["pods"], at, 1)
        for r in FIT:
            np.subtract.at(self.free[r], at, column(q.get(r) or 0 for _, q, _ in on))
        for k in (0, 1):
            np.subtract.at(self.score_free[k], at, column(z[k] for _, _, z in on))
        self._shapes: dict[int, np.ndarray] = {}
        # per pod shape, by position: (the first failure before NodeResourcesFit, the first after
        # it) of the nodes the shape's filters refuse before the drain (a NoCapacity diagnosis)
        self._first_failures: dict[int, dict[int, tuple[str | None, str | None]]] = {}
        self._templates: dict[tuple, tuple[list, list]] = {}
        self.of_template: dict[tuple, list] = {}  # (namespace, spread key) -> its constraints, in order
        self._partitions: dict[bytes, np.ndarray] = {}
        self._layouts: dict[int, tuple] = {}  # Constraint's, per node-to-domain mapping
        self._counting: dict[tuple[str, int], tuple] = {}  # labels held: their id stays theirs
        self.constraints: list[Constraint] = []
        self.honor: list[Constraint] = []  # those with nodeTaintsPolicy Honor (cordon)
        self._reach: dict[tuple, float] = {}  # per template: how far its last walk went, per node wanted
        self.found = None  # the last placement's feasible nodes found (walk positions)
        self.tied: tuple[str, ...] = ()  # the nodes tied with the last placement's (names)
        # the last placement that found no node: (the pod, the stamp then, _feasible's parts)
        self.unfit: tuple | None = None
        # moved whenever a node is cordoned or deleted, or a candidate rolled back: what the
        # closed domains of a diagnosis are kept by (never the number of an earlier state)
        self.shut = next(_VERSIONS)
        self._label_values: dict[str, tuple] = {}  # topology key -> by_name's arrays, by position
        self._domains_by_value: dict[int, tuple] = {}  # id(constraint) -> (it, _domain_ids')
        self._require_all: dict[tuple, bool] = {}  # template -> its spread state's IgnoredNodes rule
        # stranded replacements, retried at each step as the planner does (steps.retry_pending)
        self.pending: list[tuple] = []  # (replacement, what it replaces: the caller's), in stranding order
        self.first_pending: dict = {}  # template -> the index of its first replacement in `pending`
        self.failed: dict = {}  # template -> the stamp it found no node at
        self.stuck: dict = {}  # template -> (freed, its hard constraints' versions) when it found no node

    def prepare(self, pod) -> None:
        """Read the planner's filter verdicts and spread state for a pod like `pod`, once. The
        verdicts are those of the cluster before the drain, the cordons applied as a mask: the
        filters that read the pods on a node besides their requests (NodePorts, the volume
        filters) are outside the lean search, and so are requests of resources the planner's
        arrays do not track (vector.fits_fast_path)."""
        if pod.host_ports or any(v.pvc for v in pod.volumes):
            raise Unsupported("a pod with host ports or volume claims")
        if not vector.fits_fast_path(pod):
            raise Unsupported("a pod requesting a resource besides cpu, memory, ephemeral-storage and pods")
        if pod.features_used:  # NodeDeclaredFeatures refuses after spread: the shapes put it before
            raise Unsupported("a pod that needs node-declared features")
        shape, shape_id, key = keys_of(pod)
        if shape_id not in self._shapes:
            cycle = self.placer._cycle(self.sim, key, pod, self.sim.spread_state(pod))
            if cycle.prefilter is not None or cycle.node_names is not None:
                raise Unsupported("a pod with PreFilter outcomes")
            seen: dict = {}
            ok, first = [], {}
            for i, name in enumerate(self.order):
                _, before, after = Placer._shape_hit(self.sim, seen, cycle, self.sim.nodes[name])
                ok.append(not before and not after)
                if before or after:
                    first[i] = (before[0].reason if before else None, after[0].reason if after else None)
            self._shapes[shape_id] = np.array(ok, dtype=bool)
            self._first_failures[shape_id] = first
        template = (pod.namespace, spread_key_of(pod))
        if template not in self._templates:
            state = self.sim.spread_state(pod)
            made = []
            for cs in state.constraints:
                c = Constraint(cs, self.position, tuple(pod.tolerations), self._layouts)
                key = c.domain_of.tobytes()  # one array per partition: read in walk order once
                c.domain_of = self._partitions.setdefault(key, c.domain_of)
                made.append(c)
            self.constraints += made
            self.honor += [c for c in made if c.honor]
            self.of_template[template] = made
            self._templates[template] = ([c for c in made if c.hard], [c for c in made if not c.hard])
            self._require_all[template] = state.require_all_soft_keys
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
            c.move(i, delta)

    def evict(self, pod, i: int) -> None:
        """A counted pod evicted from node position `i`: it no longer counts, and holds its
        room until the step ends (settle), as SimCluster.evict's terminating pods do (a pod that
        tolerates the cordon may be placed on the node meanwhile)."""
        self.stamp += 1
        if self._log is not None:
            self._log.append((self._unevict, pod, i))
        for c in self._counting_constraints(pod):
            c.move(i, -1)
        self.terminating.append((pod, i))

    def _unevict(self, pod, i: int) -> None:
        self.terminating.pop()
        for c in self._counting_constraints(pod):
            c.move(i, +1)

    def cordon(self, name: str) -> None:
        self.stamp += 1
        self.shut = next(_VERSIONS)
        i = self.position[name]
        k = i if self.slot is None else self.slot[i]
        self.log_on(self._uncordon, i, k, self.open[i], self.cordoned[k])
        self.open[i] = False
        self.cordoned[k] = True
        if self.honor:
            self._cordoned_under_honor(name, i)

    def _cordoned_under_honor(self, name: str, i: int) -> None:
        """SimCluster._cordoned_under_honor: each Honor constraint whose template does not
        tolerate the cordoned node's taints drops the node from its domains. A domain array
        is shared by the constraints of a partition: those that drop the node move together to
        a copy without it (the array itself is never changed: FlatCluster.walked keeps copies
        by array)."""
        taints = self.sim.nodes[name].cordoned().taints
        moved: dict[tuple[int, int], list[Constraint]] = {}
        for c in self.honor:
            if c.domain_of[i] < c.domains and untolerated_taint(taints, c.tolerations) is not None:
                moved.setdefault((id(c.domain_of), c.domains), []).append(c)
        for (_, none), group in moved.items():
            domain_of = group[0].domain_of.copy()
            domain_of[i] = none
            for c in group:
                c.leave(i, domain_of, self._log)
        if len(self._walked) > WALKED_KEPT:
            self._walked = {}

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
        self.shut = next(_VERSIONS)
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
        self.shut = next(_VERSIONS)
        self.log_on(self.open.__setitem__, i, self.open[i])
        self.open[i] = False
        for p in self._first_pods.get(i, ()):
            if self.node_of.get(p.key) == i:
                self.unbind(p)
                self.move(p, i, -1)
        for c in self.constraints:
            c.without_node(i, self._log)
        self.log_on(self._restore_walk, self._zones, self.walk, self.slot, dict(self.free), self.score_free,
                    self.score_alloc, self.cordoned, self.rank, self._walked, self._size)
        self._zones = _without_zone_member(self._zones, name)
        walk = np.fromiter(map(self.position.__getitem__, round_robin(self._zones.values())), dtype=np.int64)
        moved = walk if self.slot is None else self.slot.take(walk)  # new walk order -> old
        for r in self.free:
            self.free[r] = self.free[r].take(moved)
        self.score_free, self.score_alloc = self.score_free.take(moved, axis=1), self.score_alloc.take(moved, axis=1)
        self.cordoned, self.rank = self.cordoned.take(moved), self.rank.take(moved)
        self.walk, self.slot = walk, np.full(len(self.order), -1, dtype=np.int64)
        self.slot[walk] = np.arange(len(walk))
        self._walked = {}

    def _restore_walk(self, zones, walk, slot, free, score_free, score_alloc, cordoned, rank, walked, size) -> None:
        self._zones, self.walk, self.slot, self.free = zones, walk, slot, free
        self.score_free, self.score_alloc, self.cordoned, self.rank = score_free, score_alloc, cordoned, rank
        self._walked, self._size = walked, size

    def strand(self, pod, replaced) -> None:
        """`pod` found no node: it waits among the pending ones (World.add_pending)."""
        self.first_pending.setdefault(lean_keys(pod)[2], len(self.pending))
        self.pending.append((pod, replaced))
        self._note_stuck(pod)

    def _note_stuck(self, pod) -> None:
        if not filters.tolerates_cordon(pod):
            spread_key, _, template = lean_keys(pod)
            hard = self._templates[(pod.namespace, spread_key)][0]
            self.stuck[template] = (self.freed, [c.version for c in hard])

    def _still_stuck(self, pod, template) -> bool:
        hit = self.stuck.get(template)
        if hit is None or hit[0] != self.freed:
            return False
        hard = self._templates[(pod.namespace, lean_keys(pod)[0])][0]
        return hit[1] == [c.version for c in hard]

    def _retry(self, pod) -> int | None:
        template = lean_keys(pod)[2]
        if self._still_stuck(pod, template) or self.failed.get(template) == self.stamp:
            return None
        i = self.place(pod)
        if i is None:
            self._note_stuck(pod)
        return i

    def retry_pending(self, decide: Callable, watch: Callable[[], None] | None = None) -> list[tuple]:
        """The planner's retry of the pending replacements as a step starts (steps.retry_pending):
        the first of each template in pending order until one binds, then every one after it.
        `decide(pod, replaced, position or None)` gives the position to bind it to (or None);
        returns (pod, replaced, position) of those bound. `watch` is told before the retries
        read the cluster, and after each bind (Context.watch)."""
        pending = self.pending
        if watch is not None and pending:
            watch()
        for k in sorted(self.first_pending.values()):
            pod, e = pending[k]
            i = decide(pod, e, self._retry(pod))
            if i is None:
                continue
            self.bind(pod, i)
            if watch is not None:
                watch()
            placed, still = [(pod, e, i)], pending[:k]
            for pod, e in pending[k + 1:]:
                i = decide(pod, e, self._retry(pod))
                if i is None:
                    still.append((pod, e))
                else:
                    self.bind(pod, i)
                    placed.append((pod, e, i))
                    if watch is not None:
                        watch()
            self.pending, self.first_pending = still, {}
            for k, (pod, _) in enumerate(still):
                self.first_pending.setdefault(lean_keys(pod)[2], k)
            return placed
        return []

    def bind(self, pod, i: int) -> None:
        """A replacement bound on node position `i` (a later batch may evict it again:
        steps._adopt_replacements)."""
        self.move(pod, i, +1)
        self.replacements_on.setdefault(i, []).append(pod)
        self.at[pod.key] = i
        self.log_on(self._unbind_last, pod, i)

    def _unbind_last(self, pod, i: int) -> None:
        self.replacements_on[i].pop()
        del self.at[pod.key]

    def unbind_replacement(self, pod) -> int:
        """The node position of a bound replacement, forgotten."""
        i = self.at.pop(pod.key)
        on = self.replacements_on[i]
        k = next(k for k, p in enumerate(on) if p is pod)
        del on[k]
        self.log_on(self._rebind, pod, i, k)
        return i

    def _rebind(self, pod, i: int, k: int) -> None:
        self.replacements_on[i].insert(k, pod)
        self.at[pod.key] = i

    def place(self, pod) -> int | None:
        """The position of the node the scheduler binds `pod` to, or None. As the planner does
        (views/drain/core/vector.py), the nodes the walk most likely stops within are judged first: as far
        as the template's last walk went, and half as far again (one run of positions, not
        wrapping), then every node when they held too few feasible ones."""
        spread_key, (_, shape_id, filter_key), failing = lean_keys(pod)
        hard, soft = self._templates[(pod.namespace, spread_key)]
        shape = self._shapes[shape_id]
        n = self.size
        start, want = self.next_start % n, num_feasible_to_find(n)
        template = (pod.namespace, spread_key, filter_key)
        rows = vector.window(start, int(want * self._reach.get(template, 2.0)), want, n)
        walked = vector.walk_window(self._feasible(pod, shape, hard, rows), rows, want) if rows is not None else None
        if walked is None:
            parts: list = []
            walked = vector.walk(self._feasible(pod, shape, hard, slice(None), parts), start, want, n)
            if not len(walked[0]):
                self._reach[template] = 0.0
                self.failed[failing] = self.stamp
                self.unfit = (pod, self.stamp, parts)
                return None  # the whole table examined: the start does not move
        found, examined = walked
        self.found = found
        self._reach[template] = max(WINDOW_MARGIN, WINDOW_MARGIN * examined / want)
        self.next_start = (start + examined) % n
        walk = self.walk
        self.tied = ()
        if len(found) == 1:
            return int(found[0] if walk is None else walk[found[0]])
        at = found if walk is None else walk.take(found)  # positions
        soft_scores = self._spread_score(soft, at, self._require_all[(pod.namespace, spread_key)]) if soft else None
        alloc = self.score_alloc.take(found, axis=1)
        nonzero = alloc - self.score_free.take(found, axis=1)
        used = alloc - np.stack([self.free["cpu"].take(found), self.free["memory"].take(found)])
        tainted = np.flatnonzero(np.isin(at, self.prefer_tainted)).tolist() if len(self.prefer_tainted) else []
        nodes, order = self.sim.nodes, self.order
        totals = scorearrays.total(pod, len(found), lambda i: nodes[order[int(at[i])]], alloc, nonzero, used,
                                   soft_scores, tainted, improvement=self.sim.balanced_improvement)
        at_best, tie = scorearrays.best(totals, self.rank.take(found))
        if tie:
            self.tied = tuple(sorted(order[int(j)] for j in at[totals == totals.max()]))
        best = int(found[at_best])
        return int(best if walk is None else walk[best])

    def by_name(self, sim: SimCluster, key: str) -> tuple:
        """vector.NodeTable.by_name on the arrays, for vector.accepting of the last placement's
        feasible nodes (`found`): (the value id of each node in walk order, the number of
        values, each value id's rank by name, the values by name). `sim` is this one's."""
        got = self._label_values.get(key)
        if got is None:
            labels = [sim.nodes[name].labels.get(key) for name in self.order]
            ordered = sorted({v for v in labels if v is not None})
            rank = {v: r for r, v in enumerate(ordered)}
            # value ids are the ranks; the last id, no value
            vid = np.array([rank.get(v, len(ordered)) for v in labels], dtype=np.int64)
            got = self._label_values[key] = (vid, len(ordered), np.arange(len(ordered)), ordered)
        vid, count, rank, ordered = got
        return self.walked(vid), count, rank, ordered

    def _feasible(self, pod, shape, hard: list[Constraint], rows: slice, parts: list | None = None):
        """Every filter's verdict for the nodes of `rows` (in walk order). `parts` is given the
        verdicts of the filters but spread, then those of each hard constraint."""
        mask = self.walked(shape)[rows] & (self.free["pods"][rows] >= 1)  # a new array: changed below
        if not filters.tolerates_cordon(pod):  # else NodeUnschedulable lets it on a cordoned node
            mask &= ~self.cordoned[rows]
        for r, want in resources._checked(pod.requests):
            mask &= self.free[r][rows] >= want
        if parts is not None:
            parts.append(mask)
            mask = mask.copy()
        for c in hard:
            allowed = c.per_domain <= c.max_skew + c.minimum() - c.self_match
            allowed[-1] = False
            ok = allowed[self.walked(c.domain_of)[rows]]
            mask &= ok
            if parts is not None:
                parts.append(ok)
        return mask

    def first_failures(self, pod, shape_id: int) -> dict[str, int]:
        """The scheduler's first-failure histogram over the nodes left, by reason (Placer._place's
        `reasons`, sorted as diagnose.py gives them), for a pod that no node fits before spread:
        each node's first failure in filter order is the cordon's, then the shape's before
        NodeResourcesFit, then the pods and the resources short, then the shape's after it."""
        tolerant = filters.tolerates_cordon(pod)
        first = self._first_failures[shape_id]
        checked = [(f"Insufficient {r}", self.free[r].tolist(), want) for r, want in resources._checked(pod.requests)]
        cordoned, pods = self.cordoned.tolist(), self.free["pods"].tolist()
        out: dict[str, int] = {}
        for k, i in enumerate(range(self._size) if self.walk is None else self.walk.tolist()):
            if cordoned[k] and not tolerant:
                why = filters.REASON_UNSCHEDULABLE
            else:
                before, after = first.get(i, (None, None))
                why = before or (resources.REASON_TOO_MANY_PODS if pods[k] < 1 else
                                 next((short for short, free, want in checked if want > free[k]), after))
            if why is not None:
                out[why] = out.get(why, 0) + 1
        return dict(sorted(out.items()))

    def _value_ids(self, key: str) -> tuple:
        """(the label value id of each node by position, the number of values: the missing
        value's id), as by_name makes them."""
        got = self._label_values.get(key)
        if got is None:
            self.by_name(self.sim, key)
            got = self._label_values[key]
        return got[0], got[1]

    def _domain_ids(self, c: Constraint, key: str):
        """Label value id -> c's domain id (its missing slot for a value that is no domain)."""
        got = self._domains_by_value.get(id(c))
        if got is None or got[0] is not c:
            ordered = self._label_values[key][3]
            ids = np.array([c.ids.get(v, c.domains) for v in ordered] + [c.domains], dtype=np.int64)
            got = self._domains_by_value[id(c)] = (c, ids)
        return got[1]

    def _spread_score(self, soft: list[Constraint], at, require_all: bool):
        """spread.score_nodes for the nodes at positions `at`, through the scorer's view: a
        domain is a label value, and with the pod's own constraints a node lacking a soft key
        is left out (IgnoredNodes)."""
        keyed = []
        for c in soft:
            key = c.state.constraint.topology_key
            vid, missing = self._value_ids(key)
            keyed.append((c, key, vid.take(at), missing))
        considered = None
        if require_all:
            lacking = np.logical_or.reduce([v == missing for _, _, v, missing in keyed])
            if lacking.any():
                considered = ~lacking
        size_all = len(at) if considered is None else int(np.count_nonzero(considered))
        total = np.zeros(len(at))
        for c, key, v, missing in keyed:
            kept = v if considered is None else v[considered]
            if c.hostname:
                size, cnt = size_all, c.per_node.take(at)
            else:
                size = int(np.count_nonzero(np.bincount(kept, minlength=missing + 1)))
                cnt = c.per_domain.take(self._domain_ids(c, key).take(v))
            total = total + np.where(v == missing, 0.0, scorearrays.spread_term(cnt, size, c.max_skew))
        return scorearrays.spread_normalize(total, considered)


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
        self.partitions: dict[int, tuple[Constraint, int]] = {}
        self.regroup()
        self.holds = np.zeros(len(targets), dtype=np.int64)
        self.surplus = np.zeros(len(targets), dtype=np.int64)
        # each constraint's share of those two (a row per constraint in `hard`), at its version in _versions
        self._holds = np.zeros((len(self.hard), len(targets)), dtype=np.int64)
        self._surplus = np.zeros((len(self.hard), len(targets)), dtype=np.int64)
        self._versions = np.full(len(self.hard), -1, dtype=np.int64)
        # id(domain array) -> (it, each target's domain id, which targets have a domain)
        self._doms: dict[int, tuple] = {}

    def regroup(self) -> None:
        """The non-hostname constraints by partition: how many tracked constraints each domain
        array serves (made again when constraints take other arrays: LeanSearch.honor_from_here)."""
        self.partitions = {}
        for c in self.hard:
            if not c.hostname:
                first, n = self.partitions.get(id(c.domain_of), (c, 0))
                self.partitions[id(c.domain_of)] = (first, n + 1)

    def order(self, remaining: list[str]) -> list[str]:
        targets, doms, hard = self.targets, self._doms, self.hard
        versions = np.fromiter(map(_version, hard), dtype=np.int64, count=len(hard))
        changed = np.flatnonzero(versions != self._versions).tolist()
        self._versions = versions
        groups: dict[tuple[int, int], list[int]] = {}  # the constraints that moved, by domain array
        for k in changed:
            c = hard[k]
            groups.setdefault((id(c.domain_of), c.domains), []).append(k)
        for ks in groups.values():  # each group's shares in one go, a row per constraint
            group = [hard[k] for k in ks]
            first = group[0]
            hit = doms.get(id(first.domain_of))
            if hit is None or hit[0] is not first.domain_of:
                if len(doms) > WALKED_KEPT:  # under Honor each cordon makes new domain arrays
                    doms.clear()
                dom = first.domain_of.take(targets)
                hit = doms[id(first.domain_of)] = (first.domain_of, dom, dom < first.domains)
            _, dom, within = hit
            holding = np.array([c.per_node.take(targets) for c in group]) > 0
            holding &= within
            low = np.fromiter(map(Constraint.minimum, group), dtype=np.int64, count=len(group))[:, None]
            pods = np.array([c.per_domain.take(dom) for c in group])
            pods -= low
            holds = (holding & (pods <= 0)).astype(np.int64)
            surplus = np.where(holding, pods, 0)
            rows = np.array(ks)
            self.holds += holds.sum(axis=0) - self._holds[rows].sum(axis=0)
            self.surplus += surplus.sum(axis=0) - self._surplus[rows].sum(axis=0)
            self._holds[rows], self._surplus[rows] = holds, surplus
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


@dataclass
class LeanStep:
    """A step as the lean search keeps it: what its verdict and bench/lean_search.py's comparison
    with the planner's Step read."""

    number: int
    nodes: tuple[str, ...]
    cordon: tuple[str, ...]
    evicted: tuple[tuple[str, str | None], ...]  # (evicted pod's key, its replacement's node), in order
    deleted_nodes: tuple[str, ...]
    safe: bool
    excess: int
    exceeded: frozenset[str]  # the workloads of the tracked DoNotSchedule constraints above their limits
    again: int = 0  # evicted pods an earlier step placed on this step's nodes
    # with LeanSearch's `report`, the planner's Step fields of the same names (else empty)
    evictions: tuple[Eviction, ...] = ()
    constraints_after: tuple[ConstraintAfter, ...] = ()
    pdbs: tuple[PdbUse, ...] = ()
    skipped: tuple[Skipped, ...] = ()


class LeanCounts(Mapping):
    """{domain: pods} of a constraint at the end of a step (steps.DomainCounts on arrays): its
    domain values and their ids, its counts, which domains are left, and its count histogram.
    The counts are a copy of the constraint's taken at some earlier step (`base`, shared by
    the steps since, never changed) and the domains whose counts differ from it now (`at`,
    ascending, with their counts): a step moves a few of a hostname constraint's thousands."""

    __slots__ = ("_values", "_ids", "_base", "_at", "_changed", "_left", "_histogram", "_patch")

    def __init__(self, values: list[str], ids: dict[str, int], base, at, changed, left, histogram: dict[int, int]):
        self._values, self._ids, self._base, self._left, self._histogram = values, ids, base, left, histogram
        self._at, self._changed, self._patch = at, changed, None

    def extremes(self) -> tuple[int, int]:
        """(fewest, most) pods of a domain (what a table row shows of a hostname spread)."""
        return min(self._histogram), max(self._histogram)

    def __getitem__(self, value: str) -> int:
        j = self._ids[value]
        if not self._left[j]:
            raise KeyError(value)
        patch = self._patch
        if patch is None:
            patch = self._patch = dict(zip(self._at.tolist(), self._changed.tolist()))
        got = patch.get(j)
        return int(self._base[j]) if got is None else got

    def __iter__(self) -> Iterator[str]:
        values = self._values
        return (values[j] for j in np.flatnonzero(self._left).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._left))

    def __repr__(self) -> str:
        return repr(dict(self))


class LeanSearch:
    """The plan of `targets` decided on flat arrays (see the module's docstring). `forced`:
    forced.py proved that no order is safe (the greedy fallback from the start, as Search.run);
    `sim`: a simulation of `snapshot` nothing was played on, to read (else one is made)."""

    def __init__(self, snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, forced: bool = False,
                 sim: SimCluster | None = None, report: bool = False, ctx: Context | None = None):
        if options.search_budget and not forced:
            # a search with a backtracking allowance keeps the worlds of several levels at once
            raise Unsupported("a search with a backtracking allowance")
        if report and options.delete_drained_nodes:
            # each deletion takes a domain from every hostname constraint, and a step's report
            # copies the counts of each constraint it changed (the planner's overlays share
            # them): tens of GB for a zone. Only remedy re-plans delete, and they want a verdict
            raise Unsupported("a report of a plan that deletes the drained nodes")
        self.forced = forced
        self.snapshot, self.options = snapshot, options
        flat = self.flat = FlatCluster(snapshot, sim)
        # plan.build_context's, on the cluster before the drain (`ctx`: the planner's, only read here)
        ctx = self.ctx = build_context(flat.sim, targets, options) if ctx is None else ctx
        self.targets = list(targets)
        self.max_parallel = max(1, options.max_parallel)
        self.budget = len(targets) + min(options.search_budget, max(BACKTRACK_FLOOR, len(targets)))
        self.delete = options.delete_drained_nodes
        self.heuristic = Heuristic(flat, ctx.tracked, self.targets)
        self.zones = {}
        key = zone_key(ctx)
        for name in self.targets:
            node = flat.sim.nodes.get(name)
            self.zones[name] = node.labels.get(key, name) if node is not None and key is not None else name
        self.remaining = {n: [d.pod for d in ctx.decisions[n] if d.action == EVICT and d.pod.key not in ctx.blocked]
                          for n in targets}
        self.budgets = pdbmod.Budgets.from_pdbs(snapshot.pdbs)
        # the tracked constraints as arrays, with their limits; each one's excess as of its version
        self.tracked = []
        self.tracked_workloads: list[str] = []
        for t in ctx.tracked:
            flat.prepare(t.pod)
            c = flat.of_template[(t.pod.namespace, spread_key_of(t.pod))][t.position]
            if c.hard:  # only DoNotSchedule constraints can be exceeded (ConstraintAfter.exceeded)
                self.tracked.append((c, t.limit))
                self.tracked_workloads.append(t.workload)
        self.judged = [(-1, 0)] * len(self.tracked)
        # `report`: each step keeps what the planner's Step reports of its evictions, the
        # constraints (every tracked one: soft ones too), the PDBs and the pods skipped; a
        # verdict reads none of it
        self.report = report
        self.reported = [(flat.of_template[(t.pod.namespace, spread_key_of(t.pod))][t.position], t)
                         for t in ctx.tracked] if report else []
        # per reported constraint: (its layout then, its judgement, the domains left then)
        self.afters: list = [None] * len(self.reported)
        self.outs: list = [None] * len(self.reported)  # their judgements at the last step's end
        self.reported_constraints = [c for c, _ in self.reported]
        # a reported constraint of many domains: its counts kept as changes to a copy (LeanCounts),
        # the domains that moved told by Constraint.touched; id -> (it, the copy, the changes' domains)
        self._patches: dict[int, tuple] = {}
        for c in self.reported_constraints:
            if c.domains > 2 * REBASE:
                c.touched = []
        # their versions then (none yet: every one is judged at the first step)
        self.after_versions = np.full(len(self.reported), -1, dtype=np.int64)
        self.total_excess = 0
        self.steps: list[LeanStep] = []
        # (the evicted pod's key, step number, why: steps' Stranded.reason, diagnose.py's codes)
        self.stranded: list[tuple[str, int, str]] = []
        self.strandings: list[Stranded] = []  # with `report`: each of those as the planner's Stranded
        self.settled: list[Eviction] = []  # with `report`: plan._settle's records
        self.exceeded: dict[int, str] = {}  # tracked position -> its workload, while above its limit
        # ((template, FlatCluster.stamp), the last stranding's reason, its details with `report`)
        self._diagnosed: tuple = (None, "", None)
        self._closed: dict[int, tuple] = {}  # id(domain array) -> (it, FlatCluster.shut then, the closed domains)
        self._open: tuple | None = None  # (FlatCluster.shut then, the positions of the open nodes)
        self.done: set[str] = set()
        # Search's callbacks: told the targets played at each level entered, and (with `report`,
        # when forced.py proved that no order is safe) the first stranded pod, to which it may
        # answer a re-plan to carry along (lean_carry.LeanSharer)
        self.on_level: Callable[[int], None] | None = None
        self.on_strand: Callable | None = None
        self.sharer = None
        self.explored = 0
        self.exhausted = False
        self.origin: dict[str, str] = {}  # replacement key -> the key of the pod it first replaced
        self.blocked_nodes = {n for n in targets if any(d.pod.key in ctx.blocked for d in ctx.decisions.get(n, ()))}
        # every template's arrays read before anything moves: FlatCluster.prepare reads the counts
        # of the cluster before the drain (a replacement's template is its pod's: once per
        # distinct set of the fields the template keys read, which a workload's pods share)
        seq = flat.sim.seq
        seen = set()
        for n in targets:
            for d in ctx.decisions[n]:
                if d.action == EVICT:
                    parts = (d.pod.namespace, *map(id, _template_parts(d.pod)))
                    if parts not in seen:
                        seen.add(parts)
                        flat.prepare(flat.sim.replacement_for(d.pod))
        flat.sim.seq = seq
        self._settle()

    def _settle(self) -> None:
        """plan._settle: the Pending pods of the affected workloads placed first."""
        flat, ctx = self.flat, self.ctx
        affected = {w for w in ctx.workload_of.values() if w}
        index = flat.sim.index
        for p in sorted(flat.sim.pending(), key=lambda p: (-p.priority, p.key)):
            if workload_ref(index, p) not in affected:
                continue
            flat.prepare(p)
            i = flat.place(p)
            if self.report:
                accepting = accepting_domains(p, []) if i is None else vector.accepting(flat, flat.sim, p, flat.found)
                self.settled.append(Eviction(p.namespace, p.name, "", workload_ref(index, p), True,
                                             None if i is None else flat.order[i], dict(accepting),
                                             tied_nodes=flat.tied if i is not None else ()))
            if i is not None:
                flat.move(p, i, +1)
                flat.node_of[p.key] = i

    # -- the search (search.Search.run, _dfs without backtracking, _greedy) --------------------

    def run(self) -> bool:
        """Plan every target; whether a safe order was found."""
        if not self.forced:
            if self._dfs():
                return True
        self._greedy()
        return False

    def _todo(self) -> list[str]:
        return [n for n in self.targets if n not in self.done]

    def _dfs(self) -> bool:
        while True:
            remaining = self._todo()
            if not remaining:
                return True
            for batch in list(itertools.islice(self.batches(remaining), DFS_CANDIDATES)):
                if self.explored >= self.budget:
                    self.exhausted = True
                    return False
                self.explored += 1
                saved = self.mark()
                if self.run_batch(batch):
                    self.commit()
                    if self.on_level is not None:
                        self.on_level(len(self.done))
                    break
                self.rollback(saved)
            else:
                return False  # no allowance to go back up: the fallback goes on from this level

    def _greedy(self) -> None:
        """Search._greedy: at each level the least bad of the first GREEDY_CANDIDATES, the first
        that does no new harm at full size taken at once. With a carried re-plan (`sharer`,
        lean_carry.py) the level's cluster is handed over, before any candidate is played on it,
        where the re-plan could read it otherwise."""
        while True:
            remaining = self._todo()
            if self.sharer is not None and (not remaining or self.sharer.due(remaining)):
                self._hand_over()
            if not remaining:
                return
            candidates = list(itertools.islice(self.batches(remaining), GREEDY_CANDIDATES))
            before = (len(self.stranded), self.steps[-1].excess if self.steps else 0, len(self.steps))
            floor = (0, 0, -min(self.max_parallel, len(remaining)))
            best, best_cost, saved, single = None, None, None, True
            for i, batch in enumerate(candidates):
                self.explored += 1
                saved = self._played(batch)
                single = single and len(self.steps) - before[2] <= 1
                cost = self._badness(before, len(batch))
                better = best_cost is None or cost < best_cost
                if better:
                    best, best_cost = batch, cost
                if cost <= floor or (better and i == len(candidates) - 1):
                    break  # kept
                self.rollback(saved)
                saved = None
            if saved is None:  # the least bad was rolled back: played again, as it was
                saved = self._played(best)
            if self.on_strand is not None and self.forced and self.strandings:
                self._first_strand(saved, candidates[:i + 1], best, single)
            self.commit()
            if self.on_level is not None:
                self.on_level(len(self.done))

    def _played(self, batch: list[str]) -> tuple:
        """Play `batch` from a mark (returned); a carried re-plan that the batch's retries would
        read otherwise takes the level's cluster as it was first, and the batch is played again."""
        saved = self.mark()
        self.run_batch(batch)
        if self.sharer is not None and self.sharer.diverged:
            self.rollback(saved)
            self._hand_over()
            saved = self.mark()
            self.run_batch(batch)
        return saved

    def _first_strand(self, saved: tuple, played: list[list[str]], best: list[str], single: bool) -> None:
        """Told the plan's first stranded pod once a kept level strands it (forced.py proved that
        no order is safe), `on_strand` may answer a re-plan to carry along (lean_carry.arm). A
        level of more than one step retried the replacements it stranded unwatched: its
        candidates are played again, watched, from the level's cluster (the same outcomes), and
        the kept one last."""
        self.sharer = self.on_strand(self.strandings[0], self)
        self.on_strand = None
        if self.sharer is None or single:
            return
        self.rollback(saved)
        for batch in played:
            again = self.mark()
            self.run_batch(batch)
            self.rollback(again)
            if self.sharer.diverged:
                self._hand_over()
                break
        self.mark()
        self.run_batch(best)

    def _hand_over(self) -> None:
        """The carried re-plan goes on from this cluster in a process of its own (nothing is
        played on it now: no candidate is under way); nothing more is watched."""
        sharer, self.sharer = self.sharer, None
        sharer.fork(self)

    def _badness(self, before: tuple[int, int, int], size: int) -> tuple[int, int, int]:
        stranded_before, was, steps_before = before
        over = max([0] + [s.excess - was for s in self.steps[steps_before:]])
        return (len(self.stranded) - stranded_before, over, -size)

    def batches(self, remaining: list[str]):
        order = self.heuristic.order(remaining)
        seen: set[tuple[str, ...]] = set()
        for seed in order:
            full = self._batch_from(seed, order)
            for size in range(len(full), 0, -1):
                b = tuple(full[:size])
                if b not in seen:
                    seen.add(b)
                    yield list(b)

    def _batch_from(self, seed: str, order: list[str]) -> list[str]:
        batch = [seed]
        used = {self.zones[seed]}
        for other_domains_only in (True, False):
            for n in order:
                if len(batch) >= self.max_parallel:
                    return batch
                if n in batch or (other_domains_only and self.zones[n] in used):
                    continue
                batch.append(n)
                used.add(self.zones[n])
        return batch

    # -- candidates played and rolled back ------------------------------------------------------

    def mark(self) -> tuple:
        """Start a candidate: what rollback restores besides the cluster's log."""
        return (self.flat.mark(), self.flat.sim.seq, len(self.steps), len(self.stranded), set(self.done),
                self.budgets.copy(), dict(self.remaining), self.total_excess, list(self.judged), dict(self.exceeded))

    def commit(self) -> None:
        """Keep the candidate played since mark."""
        self.flat._log = None

    def rollback(self, saved: tuple) -> None:
        (flat_saved, seq, steps, stranded, self.done, self.budgets, self.remaining, self.total_excess, self.judged,
         self.exceeded) = saved
        self.flat.rollback(flat_saved)
        self.flat.sim.seq = seq
        self._diagnosed = (None, "", None)  # the stamps the candidate reached will be reached again
        self._patches.clear()  # the counts' copies start again: what a rollback undoes touches nothing
        del self.steps[steps:], self.stranded[stranded:], self.strandings[stranded:]

    # -- one batch (steps.run_batch) --------------------------------------------------------------

    def run_batch(self, batch: list[str]) -> bool:
        flat = self.flat
        for n in batch:  # a new list: the one before is the rollback's (mark copies the dict only)
            left = self.remaining[n] = list(self.remaining.get(n, ()))
            queued = {p.key for p in left}
            i = flat.position[n]
            for p in flat.replacements_on.get(i, ()):  # steps._adopt_replacements
                if p.key not in queued:
                    left.append(p)
        todo = [(p, n) for n in batch for p in self.remaining[n]]
        cordon = [n for n in cordons(self.ctx, self.steps, batch) if not flat.cordoned[self._slot(n)]]
        for n in cordon:
            flat.cordon(n)
        self.done.update(batch)
        first, ok = True, True
        while first or todo:
            wave, deferred = [], []
            for p, n in todo:
                keys = self._pdbs(p)
                if self.budgets.fits(keys):
                    self.budgets.charge(keys)
                    wave.append((p, n))
                else:
                    deferred.append((p, n))
            if not wave and not first:
                ok = False
                for p, n in deferred:  # budget lost to replacements that never became Ready
                    self.stranded.append((p.key, len(self.steps), PDB_BLOCKS))
                    if self.report:
                        self.strandings.append(_new_stranded(
                            p.namespace, p.name, self.ctx.workload_of.get(self._origin(p.key)), len(self.steps),
                            PDB_BLOCKS, {"node": n, "pdbs": list(self._pdbs(p)), "budgetLost": True}))
                    self.remaining[n] = [q for q in self.remaining[n] if q is not p]
                break
            harmless = self._play_step(batch, cordon if first else [], wave, first)
            ok = ok and harmless
            first = False
            todo = deferred
        return ok

    def _slot(self, name: str) -> int:
        i = self.flat.position[name]
        return i if self.flat.slot is None else int(self.flat.slot[i])

    def _origin(self, key: str) -> str:
        return self.origin.get(key, key)

    def _pdbs(self, pod) -> tuple[str, ...]:
        return self.ctx.pod_pdbs.get(self._origin(pod.key), ())

    def _play_step(self, batch: list[str], cordon: list[str], wave: list, first: bool) -> bool:
        flat, ctx, sim = self.flat, self.ctx, self.flat.sim
        number = len(self.steps) + 1
        flat.retry_pending(lambda pod, e, i: i, None if self.sharer is None else lambda: self.sharer.window(batch))
        evicted = []
        again = 0  # evicted pods an earlier step placed (DrainPlan.evicted_again)
        gone: dict[str, set[int]] = {}
        warnings = []  # kubectl's warning for each evicted pod (the report's)
        for p, n in wave:
            if p.key in flat.node_of:
                i = flat.unbind(p)
                d = ctx.decided.get((n, p.key))
                replaced = d is None or d.replaced
            else:  # a replacement a step put on a target node: never decided, evicted and replaced
                i = flat.unbind_replacement(p)
                d, replaced = None, True
                again += 1
            flat.evict(p, i)
            evicted.append((p, replaced))
            warnings.append(d.message if d is not None else "")
            gone.setdefault(n, set()).add(id(p))
        for node, ids in gone.items():  # steps._forget, on this candidate's own lists (run_batch)
            left = self.remaining[node]
            left[:] = [p for p in left if id(p) not in ids]
        new = []
        for (p, replaced), (_, n) in zip(evicted, wave):
            if replaced:
                r = sim.replacement_for(p)
                self.origin[r.key] = self._origin(p.key)
                new.append((p, r, n))
        deleted = self._delete_emptied(batch) if self.delete else ()
        placed: dict[str, str | None] = {}
        tied: dict[str, tuple[str, ...]] = {}  # the nodes tied with the one placed on
        accepting: dict[str, Mapping] = {}  # with `report`: each replacement's accepting domains
        safe = True
        for p, r, n in sorted(new, key=lambda x: -x[1].priority):
            i = flat.place(r)
            if i is not None:
                flat.bind(r, i)
                placed[p.key] = flat.order[i]
                tied[p.key] = flat.tied
                if self.report:
                    accepting[p.key] = vector.accepting(flat, sim, r, flat.found)
                continue
            safe = False
            placed[p.key] = None
            if self.report:
                accepting[p.key] = accepting_domains(r, [])
            why = self._diagnose(r)
            self.stranded.append((p.key, number, why))
            if self.report:
                self.strandings.append(_new_stranded(p.namespace, p.name, ctx.workload_of.get(self._origin(p.key)),
                                                     number, why, dict(self._diagnosed[2], node=n)))
            flat.strand(r, p)
            self.budgets.strand(self._pdbs(p))
        excess = self._judge()
        if excess > 0:
            safe = False
        harmless = safe
        if first and any(n in self.blocked_nodes for n in batch):
            safe = False
        used = self.budgets.next_step()
        flat.settle()  # the step's evicted pods are gone
        step = LeanStep(number, tuple(batch), tuple(cordon), tuple((p.key, placed.get(p.key)) for p, _ in evicted),
                        tuple(deleted), safe, excess, frozenset(self.exceeded.values()) if excess else frozenset(),
                        again=again)
        if self.report:
            workload = ctx.workload_of.get
            step.evictions = tuple(
                _new_eviction(p.namespace, p.name, n, workload(self._origin(p.key)), replaced, placed.get(p.key),
                              accepting.get(p.key, {}), self._pdbs(p), warning, tied.get(p.key, ()))
                for ((p, replaced), (_, n), warning) in zip(evicted, wave, warnings))
            step.constraints_after = self._constraints_after()
            step.pdbs = tuple(PdbUse(ctx.pdbs[k].namespace, ctx.pdbs[k].name, self.budgets.step_allowance(k), n)
                              for k, n in sorted(used.items()))
            step.skipped = steps_skipped(ctx, batch, first)
        self.steps.append(step)
        return harmless

    def _constraints_after(self) -> tuple[ConstraintAfter, ...]:
        """steps.judge's answer: every tracked constraint (soft ones too) judged again only when
        its counts, minimum or domains moved since the last step's end: its version, read for
        all of them in one go (a domain goes with a version of its own in the plans that keep a
        report: a cordon under Honor; the deletions that take a domain and no count are refused)."""
        afters, out, reported = self.afters, self.outs, self.reported
        n = len(reported)
        versions = np.fromiter(map(_version, self.reported_constraints), dtype=np.int64, count=n)
        changed = np.flatnonzero(versions != self.after_versions).tolist()
        self.after_versions = versions
        for k in changed:
            c, t = reported[k]
            hit = afters[k]
            low = c.minimum()
            skew = max(c.histogram, default=0) - low
            con = c.state.constraint
            # the domains left, made again when one went (never changed: shared till then)
            left = np.array(c.members[:-1]) > 0 if hit is None or hit[0] != c.layout else hit[2]
            now = c.per_domain[:-1]
            base, at = self._counts_copy(c, now)
            counts = LeanCounts(c.values, c.ids, base, at, now[at], left, dict(c.histogram))
            hit = afters[k] = (c.layout, _new_after(t.workload, t.pod.namespace, con.topology_key, con.max_skew,
                                               con.when_unsatisfiable, counts, low, skew, t.limit,
                                               spread.status(con, skew)), left)
            out[k] = hit[1]
        return tuple(out)

    def _counts_copy(self, c: Constraint, now) -> tuple:
        """(a copy of `c`'s counts, the domains whose counts `now` differ from it, ascending):
        for a constraint of many domains, the last copy taken and the domains that differed
        then or were touched since, while they are few; else a new copy."""
        if c.touched is None:
            return now.copy(), _NONE
        got, at = self._patches.get(id(c)), None
        if got is not None and got[0] is c:
            _, base, at = got
            if c.touched:
                maybe = np.union1d(at, c.touched)
                at = maybe[now.take(maybe) != base.take(maybe)]
        c.touched.clear()
        if at is None or len(at) > c.domains // REBASE:
            base, at = now.copy(), _NONE
        self._patches[id(c)] = (c, base, at)
        return base, at

    def _diagnose(self, pod) -> str:
        """diagnose.strand_reason's code for a replacement no node took (the whole table walked):
        NoCapacity when no node passes the filters but spread; else, over the hard constraints in
        order whose topology key refuses some of those nodes, HostnameSpreadFull for a hostname
        one, CordonedDomainTrap for one with a domain at the global minimum whose nodes left are
        all cordoned; SpreadBlocked otherwise."""
        flat = self.flat
        _, (_, shape_id, _), template = lean_keys(pod)
        memo = (template, flat.stamp)  # a stranding changes nothing: the next like it fails alike
        if self._diagnosed[0] == memo:
            return self._diagnosed[1]
        why, details = self._diagnosed_now(pod, shape_id)
        self._diagnosed = (memo, why, details)
        return why

    def _diagnosed_now(self, pod, shape_id: int) -> tuple[str, dict | None]:
        """(the code, with `report` diagnose.strand_reason's details but the evicted pod's node)."""
        flat = self.flat
        hard = flat._templates[(pod.namespace, lean_keys(pod)[0])][0]
        unfit = flat.unfit
        if unfit is not None and unfit[0] is pod and unfit[1] == flat.stamp:
            fit, allowed = unfit[2][0], unfit[2][1:]  # the verdicts its placement just read
        else:
            parts: list = []
            flat._feasible(pod, flat._shapes[shape_id], hard, slice(None), parts)
            fit, allowed = parts[0], parts[1:]
        if not fit.any():
            return NO_CAPACITY, {"reasons": flat.first_failures(pod, shape_id)} if self.report else None
        details = {"fitNodes": int(np.count_nonzero(fit))} if self.report else None
        refused: dict[str, int] = {}
        for c, ok in zip(hard, allowed):
            n = int(np.count_nonzero(fit & ~ok))
            if n:
                key = c.state.constraint.topology_key
                refused[key] = refused.get(key, 0) + n
        for c in hard:
            key = c.state.constraint.topology_key
            if not refused.get(key):
                continue
            if c.hostname and details is None:
                return HOSTNAME_SPREAD_FULL, None
            low = c.minimum()
            if c.honor:  # cordoned nodes make no domain: none is closed (diagnose.closed_domains)
                trapped = []
            else:
                closed = self._closed_domains(c)
                trapped = [] if closed is None else np.flatnonzero(closed & (c.per_domain[:-1] == low)).tolist()
            if details is not None:
                left = np.array(c.members[:-1]) > 0
                details.update({"topologyKey": key, "maxSkew": c.max_skew, "globalMin": low,
                                "distribution": dict(zip(itertools.compress(c.values, left.tolist()),
                                                         c.per_domain[:-1][left].tolist()))})
                if c.hostname or trapped:
                    details["cordonedDomains"] = [c.values[j] for j in trapped]
            if c.hostname:
                return HOSTNAME_SPREAD_FULL, details
            if trapped:
                return CORDONED_DOMAIN_TRAP, details
        return SPREAD_BLOCKED, details

    def _closed_domains(self, c: Constraint):
        """Which of `c`'s domains are closed (nodes left in them, none of them open), or None
        when none is; kept per domain array (a partition's constraints share theirs) until a
        node is cordoned or deleted or a candidate rolled back."""
        flat, domain_of = self.flat, c.domain_of
        hit = self._closed.get(id(domain_of))
        if hit is None or hit[0] is not domain_of or hit[1] != flat.shut:
            left = np.zeros(c.domains + 1, dtype=bool)
            left[flat.walked(domain_of)] = True
            if self._open is None or self._open[0] != flat.shut:
                self._open = (flat.shut, np.flatnonzero(flat.open))
            left[domain_of[self._open[1]]] = False
            closed = left[:-1]
            hit = self._closed[id(domain_of)] = (domain_of, flat.shut, closed if closed.any() else None)
        return hit[2]

    def stop_reporting(self) -> None:
        """Keep nothing more of the report from here (a carried verdict reads none of it)."""
        self.report = False
        for c in self.reported_constraints:
            c.touched = None

    def honor_from_here(self, templates: set[tuple], key: str, probe) -> bool:
        """Set nodeTaintsPolicy Honor on the `key` constraints of `templates` (a workload's, whose
        pods tolerate what `probe` tolerates and not the cordon) from this point of the plan:
        each node whose taints they do not tolerate, cordoned ones included, leaves their
        domains, as if they had been Honor's from the start. False, with nothing changed, when
        that would move a count or take a domain away (lean_carry's checks make sure it does not:
        no counted pod is left on such a node, and every domain keeps a node)."""
        flat = self.flat
        chosen = [c for t in templates for c in flat.of_template.get(t, ())
                  if c.state.constraint.topology_key == key and not c.honor]
        nodes = flat.sim.nodes
        away = np.array([node_untolerated_taint(probe, nodes[name]) is not None for name in flat.order], dtype=bool)
        away |= ~flat.open  # the cordoned nodes, by position (a plan that carries deletes none)
        made: dict[int, tuple] = {}  # id of a domain array -> (it without the nodes away, its members)
        for c in chosen:
            got = made.get(id(c.domain_of))
            if got is None:
                domain_of = c.domain_of.copy()
                domain_of[away] = c.domains
                members = np.bincount(domain_of, minlength=c.domains + 1).tolist()
                got = made[id(c.domain_of)] = (domain_of, members)
            if c.per_node[away].any() or any(m == 0 for m, was in zip(got[1][:-1], c.members[:-1]) if was):
                return False
        for c in chosen:
            c.domain_of, members = made[id(c.domain_of)]
            c.members = list(members)
            c.honor, c.tolerations = True, tuple(probe.tolerations)
            c.version = c.layout = next(_VERSIONS)
            flat.honor.append(c)
        flat.stamp += 1  # the memos of failed placements and the last diagnosis
        self.heuristic.regroup()
        return True

    def drain_plan(self, found: bool) -> tuple[DrainPlan, list]:
        """What plan._plan answers (the plan without its findings, and the pods kubectl refuses),
        made from the report: `found` is what run answered. Needs `report`."""
        if not self.report:
            raise ValueError("a lean search without its report has no plan to give")
        steps = [Step(s.number, s.nodes, s.cordon, s.evictions, s.skipped, s.constraints_after, s.pdbs, s.safe,
                      s.deleted_nodes) for s in self.steps]
        return finished(self.snapshot, self.targets, self.options, self.ctx, steps, self.strandings, found,
                        self.settled, self.explored, self.exhausted, self.forced)

    def verdict(self, found: bool) -> tuple[bool, set[tuple[str, str | None]]]:
        """What a remedy's re-plan answers (plan._verdict, as remedies._clears reads it): whether
        the plan is safe, and the (code, workload) of each finding but the info-only ones."""
        ctx = self.ctx
        workload = ctx.workload_of.get
        stranded = {(why, workload(self._origin(key))) for key, _, why in self.stranded}
        blocked = {(ctx.blocked[d.pod.key], workload(d.pod.key)) for n in self.targets for d in ctx.decisions[n]
                   if d.pod.key in ctx.blocked}
        explained = {w for _, w in stranded | blocked}
        skew = {(SKEW_EXCEEDED, w) for s in self.steps for w in s.exceeded if w not in explained}
        refused = {(d.code or "", None) for n in self.targets for d in ctx.decisions[n] if d.action == REFUSE}
        safe = found and not stranded and not blocked and not refused and all(s.safe for s in self.steps)
        return safe, stranded | blocked | skew | refused

    def answer(self, found: bool, carried: int | None = None) -> parallel.Verdict:
        """`verdict` as a remedy's re-plan sends it back: its findings carry their code and
        workload only, which is what remedies._clears compares."""
        safe, findings = self.verdict(found)
        return parallel.Verdict(safe, tuple(Finding(code, workload, (), None)
                                            for code, workload in sorted(findings, key=str)), carried,
                                sum(s.again for s in self.steps))

    def _delete_emptied(self, batch: list[str]) -> list[str]:
        """steps._delete_emptied: each batch node left with only pods no drain evicts is deleted."""
        flat, ctx = self.flat, self.ctx
        flat.settle()
        deleted = []
        for n in batch:
            i = flat.position[n]
            if self.remaining.get(n) or (flat.slot is not None and flat.slot[i] < 0) or flat.replacements_on.get(i):
                continue  # pods left to evict, deleted already, or a replacement bound there
            if all(_action(ctx.decided.get((n, p.key))) == SKIP for p in flat._first_pods.get(i, ())
                   if flat.node_of.get(p.key) == i):
                flat.delete_node(n)
                deleted.append(n)
        return deleted

    def _judge(self) -> int:
        """The tracked DoNotSchedule constraints' excess over their limits, in total: each one
        judged again only when its counts or minimum moved (Constraint.version)."""
        judged = self.judged
        total = self.total_excess
        for k, (c, limit) in enumerate(self.tracked):
            version, was = judged[k]
            if version == c.version:
                continue
            low = c.minimum()
            skew = max(c.histogram, default=0) - low
            now = skew - limit if skew > limit else 0
            total += now - was
            if now and not was:
                self.exceeded[k] = self.tracked_workloads[k]
            elif was and not now:
                del self.exceeded[k]
            judged[k] = (c.version, now)
        self.total_excess = total
        return total


def _action(decision) -> str:
    return EVICT if decision is None else decision.action


def replan_verdict(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions,
                  sim: SimCluster | None = None) -> parallel.Verdict:
    """The verdict of a remedy's re-plan (plan._verdict of plan_drain with `options`: no
    backtracking allowance) from the lean search; its findings carry their code and workload
    only, which is what remedies._clears compares. `sim`: a simulation of `snapshot` nothing
    was played on (else one is made). forced.py's proof is the planner's, made on a copy of
    it (it proves nothing when the drained nodes are deleted: a deleted node takes its domain
    with it). Raises Unsupported for what the lean search does not cover."""
    lean = LeanSearch(snapshot, targets, options, sim=sim)  # first: it may raise Unsupported
    if not options.delete_drained_nodes:  # the proof reads the simulation, which the lean search only read
        lean.forced = bool(forced_proof(snapshot, targets, options, lean.flat.sim.copy()))
    return lean.answer(lean.run())


def forced_proof(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions,
                 sim: SimCluster | None = None) -> list:
    """forced.py's proof on the planner's own root world (on `sim`, which it plays on)."""
    ctx, world = _new_world(snapshot, targets, options, sim)
    _settle(ctx, world)
    return forced_harm(ctx, world)
