"""The SetNodeTaintsPolicyHonor remedy's re-plan, carried along by the plan until the two can differ.

When no order is safe, the plan's first stranded pod names a workload W and the
topologyKey K of the constraint that refused it, and its first remedies are re-plans: one
deletes the drained nodes, one sets `nodeTaintsPolicy: Honor` on W's K constraints. The
second is the plan itself for most of its length. Under Honor a node whose taints W does
not tolerate (a cordoned one) leaves W's domains and its pods leave W's counts; under
Ignore it stays a domain and its pods count until evicted. So the two read the same
domains and counts wherever W's constraint is read, as long as
1. every domain keeps a node that W tolerates and that is not cordoned (a zone being
   drained keeps one until its last node's step): then the domains are the same, and so
   are the order heuristic's "last open node" of each and its target shares;
2. no pod the constraint counts stays on a cordoned node: every such pod on a target is
   evicted in its node's step, and none tolerates the cordon (its replacement could land
   there);
3. they were the same before the drain (a node with another taint W does not tolerate
   holds none of its pods and is no domain's only node);
and, within a step, where the scheduler retries W's Pending replacements between the
cordon and the evictions (the step's pods still count under Ignore, no longer under
Honor), each domain accepts W under both policies or under neither. Everything else the
plan reads of W's constraint then reads alike: its judgement after each step, the order
heuristic, the placements of new replacements (made after the evictions), and the reason a
stranded W pod is given (no domain of K is closed: one would be gone under Honor).

So instead of simulating the whole drain again from the start, the plan carries the
re-plan: `arm` checks 1 and 2 at the first stranding (and that no earlier level can have
read a domain differently), the search asks `due` at each level whether one of its
candidates could, and `window` checks the retries between a cordon and its evictions.
At the first level where they could differ (or at the end), `fork` hands the level's world
to a child process, which checks 3, edits W's pods in that world and plays the rest of
the drain as the re-plan's search would (`carry_on`); if a check fails, the child re-plans
from the start instead. On a big drain the re-plan is the plan for nearly all of its steps,
so carrying it costs a small part of re-planning, with the same findings, stranded pods and
steps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from kubectl_tspread.views.drain.core import counts
from kubectl_tspread.model.plan import CORDONED_DOMAIN_TRAP, PlanOptions, Stranded
from kubectl_tspread.views.drain.pods import EVICT
from kubectl_tspread.views.drain.core.simulate import SimCluster, edited_constraints, pod_with
from kubectl_tspread.views.drain.core.steps import Context, World, tracked_states
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.nodematch import node_untolerated_taint
from kubectl_tspread.model import HONOR, HOSTNAME_KEY, IGNORE, Node, Pod, Snapshot

if TYPE_CHECKING:
    from kubectl_tspread.views.drain.core.search import Search


class Sharer:
    """The checks of the module docstring while the plan carries the SetNodeTaintsPolicyHonor re-plan of
    `workload`'s `topology_key` constraints."""

    def __init__(self, ctx: Context, workload: str, namespace: str, topology_key: str, positions: list[int],
                 open_nodes: dict[str, set[str]], seen: int, max_parallel: int,
                 fork: Callable[["Sharer", World | None], None]):
        self.ctx = ctx
        self.workload, self.namespace, self.topology_key = workload, namespace, topology_key
        self.positions = positions  # W's K constraints among ctx.tracked
        # domain -> its nodes that W tolerates (the cordoned ones not): its nodes under Honor
        self.open = open_nodes
        self.domain_of = {n: v for v, nodes in open_nodes.items() for n in nodes}
        self.seen = seen  # steps of the path whose cordons `open` has taken
        self.max_parallel = max_parallel
        self.diverged = False  # a retry between a cordon and its evictions may differ
        self._fork = fork
        self._templates: dict[int, bool] = {}  # pending template -> whether it is W's
        ctx.watch = self.window

    def due(self, world: World, remaining: list[str]) -> bool:
        """Whether this level of `world` could read W's domains differently under Honor
        (`_kept` fails for one of them)."""
        steps = world.steps
        for step in steps[self.seen:]:
            for n in step.cordon:
                value = self.domain_of.get(n)
                if value is not None:
                    self.open[value].discard(n)
        self.seen = len(steps)
        return not _kept(self.open, set(remaining), self.max_parallel)

    def _waiting(self, first_pending: dict, pending: Sequence[tuple], workload_of: Callable[[Pod], str | None]
                 ) -> bool:
        """Whether a replacement of W is among the `pending` ones ((replacement, evicted pod) in
        order; `first_pending`: each template's first there), `workload_of` an evicted pod's."""
        for template, i in first_pending.items():
            mine = self._templates.get(template)
            if mine is None:
                repl, evicted = pending[i]
                mine = self._templates[template] = (
                    repl.namespace == self.namespace and workload_of(evicted) == self.workload)
            if mine:
                return True
        return False

    def window(self, world: World, batch: Sequence[str]) -> None:
        """Retries are about to read the counts after `batch` was cordoned and before its
        pods are evicted: W's domains must accept W's replacements alike under both policies."""
        if self.diverged:
            return
        sim = world.sim
        cordoned = [n for n in batch if n in sim.nodes and sim.nodes[n].unschedulable]
        if not cordoned or not self._waiting(world.first_pending, world.pending,
                                             lambda evicted: self.ctx.workload_of.get(evicted.key)):
            return
        for i in self.positions:
            cs = sim.shared_spread_state(self.ctx.tracked[i].pod).constraints[self.ctx.tracked[i].position]
            held: dict[str, int] = {}
            for n in cordoned:
                k = cs.node_counts.get(n, 0)
                value = cs.node_domain.get(n)
                if k and value is not None:
                    held[value] = held.get(value, 0) + k
            if held and _accepting(cs, {}) != _accepting(cs, held):
                self.diverged = True
                return

    def fork(self, world: World | None) -> None:
        """Hand `world` (None: nothing of the plan can be used) to the re-plan's process."""
        self.ctx.watch = None
        self._fork(self, world)


def _kept(open_nodes: dict[str, set[str]], todo: set[str], max_parallel: int) -> bool:
    """Whether no candidate batch (at most `max_parallel` of the `todo` targets) can make W's
    domains read differently under Honor: every domain keeps a node W tolerates that is not
    a target to do (so it never goes, and the order heuristic's "last open node" is no target
    under both policies), or more than one and more than a batch. Then, under Ignore, the
    domain's one open node, if any, is one of those too."""
    return all(not nodes <= todo or len(nodes) > max(1, max_parallel) for nodes in open_nodes.values())


def _accepting(cs: spread.ConstraintState, held: dict[str, int]) -> list[str]:
    """The domains whose nodes Filter lets a pod of `cs` onto, with `held` pods per domain
    taken out of the counts (the ones Honor does not count)."""
    counts_now = {v: d.pods - held.get(v, 0) for v, d in cs.domains.items()}
    low, _ = spread.minimum(counts_now.values(), len(counts_now), cs.constraint.min_domains)
    return [v for v, c in counts_now.items() if spread.fits(c, cs.self_match, low, cs.constraint.max_skew)]


def edited_constraints_of(ctx: Context, first: Stranded, options: PlanOptions) -> tuple[str, list[int]] | None:
    """(the topology key K, W's K constraints among ctx.tracked) of the SetNodeTaintsPolicyHonor re-plan the
    finding `first` makes, when it is one a plan can carry: K not a hostname key, the drained
    nodes kept, and W's K constraints hard, under Ignore, of pods that tolerate one set of
    taints and not the cordon's."""
    key = first.details.get("topologyKey")
    if key is None or key == HOSTNAME_KEY or options.delete_drained_nodes or first.workload is None:
        return None
    if not options.stage_cordons:
        # every target is cordoned at step 1 while most of their pods are evicted later: from
        # step 1 on, Honor leaves those pods out of W's counts and Ignore counts them, so the
        # two plans read W's constraint alike at no level after the first
        return None
    positions = [i for i, t in enumerate(ctx.tracked)
                 if t.workload == first.workload and t.pod.namespace == first.namespace
                 and t.pod.spread[t.position].topology_key == key]
    if not positions:
        return None
    probes = list({id(ctx.tracked[i].pod): ctx.tracked[i].pod for i in positions}.values())
    if len({p.tolerations for p in probes}) > 1:
        return None  # revisions that tolerate different nodes: not one set of nodes under Honor
    for pod in probes:
        for c in pod.spread:
            if c.topology_key == key and (not c.hard or c.node_taints_policy != IGNORE):
                return None  # a score, or nothing to edit
        if filters.tolerates_cordon(pod):
            return None
    return key, positions


def arm(ctx: Context, world: World, first: Stranded, options: PlanOptions,
        fork: Callable[[Sharer, World | None], None]) -> Sharer | None:
    """A Sharer for the SetNodeTaintsPolicyHonor re-plan of the finding `first` makes, from the world the
    plan kept at its level, or None when the checks fail there (then the re-plan starts
    from scratch as before)."""
    edits = edited_constraints_of(ctx, first, options)
    if edits is None:
        return None
    key, positions = edits
    sim = world.sim
    states = tracked_states(ctx, sim)
    probe = ctx.tracked[positions[0]].pod
    open_nodes: dict[str, set[str]] = {}
    for i in positions:
        for d in states[i].domains.values():
            open_nodes.setdefault(d.value, set()).update(
                n for n in d.nodes if n in sim.nodes and node_untolerated_taint(probe, sim.nodes[n]) is None)
    if not _kept(open_nodes, set(world.todo_nodes(ctx.targets)), options.max_parallel):
        return None  # an earlier level may already have read them differently
    if not evicted_alike(ctx, [states[i] for i in positions], probe, sim.nodes.values(), sim.pending()):
        return None
    return Sharer(ctx, first.workload, first.namespace, key, positions, open_nodes, len(world.steps),
                  options.max_parallel, fork)


def evicted_alike(ctx: Context, states: list[spread.ConstraintState], probe: Pod, nodes: Iterable[Node],
                  pending: Iterable[Pod]) -> bool:
    """Check 2: every pod the constraints count on a target is evicted in its node's step,
    and no pod they count that a drain replaces or places (`pending`: those waiting) tolerates
    the cordon, or a taint W does not tolerate on one of `nodes` not cordoned (it could land
    where Honor does not count it)."""
    closed = [n for n in nodes if not n.unschedulable and node_untolerated_taint(probe, n) is not None]
    judged: dict[tuple, bool] = {}

    def lands_apart(pod: Pod) -> bool:
        got = judged.get(pod.tolerations)
        if got is None:
            got = judged[pod.tolerations] = filters.tolerates_cordon(pod) or any(
                node_untolerated_taint(pod, n) is None for n in closed)
        return got

    def counted_by(pod: Pod) -> bool:
        return any(counts.counts_in(cs, pod) for cs in states)

    for n in ctx.targets:
        for d in ctx.decisions[n]:
            if not counted_by(d.pod):
                continue
            if counts.counted(d.pod) and (d.action != EVICT or d.pod.key in ctx.blocked):
                return False
            if lands_apart(d.pod):
                return False
    return not any(counted_by(p) and lands_apart(p) for p in pending)


def carry_on(world: World, plan_ctx: Context, pristine: SimCluster, snapshot: Snapshot, options: PlanOptions,
             sharer: Sharer, edited_snapshot: Snapshot, forced: list) -> tuple[Context, Search, World] | None:
    """In the re-plan's process: (its context, its search, the final world) of the re-plan on
    `edited_snapshot`, played on from the plan's `world`; None when the two did not start
    alike (then the caller re-plans from scratch). `forced`: forced.py's proof for the plan's
    other workloads, which the edit leaves as they are (so the re-plan too follows the
    fallback from the start, as the plan did)."""
    from kubectl_tspread.views.drain.core.search import Search

    if not forced:
        return None
    base = {p.key: p for p in snapshot.pods}
    edited = {p.key: p for p in edited_snapshot.pods if base.get(p.key) is not p}
    ctx = _context(plan_ctx, edited, sharer)
    if not _same_start(plan_ctx, pristine, ctx, sharer.positions) or _trapped(world.stranded, sharer):
        return None
    _move_over(world, plan_ctx, base, edited)
    search = Search(ctx, options.max_parallel, options.search_budget)
    search.forced = forced
    return ctx, search, search._greedy(world)


def _context(plan_ctx: Context, edited: dict[str, Pod], sharer: Sharer) -> Context:
    """The re-plan's context, as build_context makes it on the edited snapshot: the plan's,
    with W's pods' records edited (its decisions, and its representative pods, whose limits
    _same_start checks), and what the plan learnt of its replacements."""
    probes: dict[int, Pod] = {}
    tracked = []
    for t in plan_ctx.tracked:
        if t.workload == sharer.workload and t.pod.namespace == sharer.namespace:
            probe = probes.get(id(t.pod))
            if probe is None:
                probe = probes[id(t.pod)] = pod_with(
                    t.pod, spread=edited_constraints(t.pod.spread, sharer.topology_key, node_taints_policy=HONOR))
            t = replace(t, pod=probe)
        tracked.append(t)
    decisions = {n: [replace(d, pod=edited[d.pod.key]) if d.pod.key in edited else d for d in ds]
                 for n, ds in plan_ctx.decisions.items()}
    ctx = Context(plan_ctx.targets, decisions, dict(plan_ctx.workload_of), dict(plan_ctx.pod_pdbs), plan_ctx.pdbs,
                  tracked, plan_ctx.blocked, plan_ctx.delete_drained_nodes, plan_ctx.stage_cordons)
    ctx.origin.update(plan_ctx.origin)
    return ctx


def _same_start(plan_ctx: Context, pristine: SimCluster, ctx: Context, positions: list[int]) -> bool:
    """Check 3: W's constraints count the same before the drain under both policies, in the
    same domains, Honor's nodes being the others less those whose taints W does not
    tolerate (as Sharer.open has them); so their limits are the same too."""
    for i in positions:
        probe = ctx.tracked[i].pod
        a = pristine.shared_spread_state(plan_ctx.tracked[i].pod).constraints[plan_ctx.tracked[i].position]
        b = pristine.shared_spread_state(probe).constraints[ctx.tracked[i].position]
        if b.constraint.node_taints_policy != HONOR or b.skew != a.skew:
            return False
        if (a.global_min, a.min_forced_zero, a.self_match, dict(a.node_counts)) != \
                (b.global_min, b.min_forced_zero, b.self_match, dict(b.node_counts)):
            return False
        tolerated = {v: (d.pods, frozenset(n for n in d.nodes if node_untolerated_taint(probe, pristine.nodes[n]) is None))
                     for v, d in a.domains.items()}
        if tolerated != {v: (d.pods, frozenset(d.nodes)) for v, d in b.domains.items()}:
            return False
    return True


def _move_over(world: World, plan_ctx: Context, base: dict[str, Pod], edited: dict[str, Pod]) -> None:
    """`world` (the plan's) made the re-plan's: W's pods and replacements take the edited
    constraints (a record that is still the snapshot's becomes the edited snapshot's)."""
    origin = plan_ctx.origin

    def moved(p: Pod) -> Pod:
        src = p.key if p.key in edited else origin.get(p.key)
        if src not in edited:
            return p
        return edited[p.key] if p is base.get(p.key) else pod_with(p, spread=edited[src].spread)

    world.sim.swap_pods({p.key: q for p in world.sim.pods.values() if (q := moved(p)) is not p})
    world.remaining = {n: [moved(p) for p in pods] for n, pods in world.remaining.items()}
    world.set_pending([(world.sim.pods.get(r.key, moved(r)), moved(e)) for r, e in world.pending])


def _trapped(stranded: Iterable[Stranded], sharer: Sharer) -> bool:
    """Whether a pod of W stranded in a domain of K that only cordoned nodes make: the one
    reason Honor would give otherwise. It cannot happen before the hand-over (such a domain
    is gone under Honor: `due` hands over before a candidate can close it), so this is a guard."""
    return any(s.reason == CORDONED_DOMAIN_TRAP and s.workload == sharer.workload and s.namespace == sharer.namespace
               and s.details.get("topologyKey") == sharer.topology_key for s in stranded)
