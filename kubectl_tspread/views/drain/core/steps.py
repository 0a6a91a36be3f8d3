"""Playing one batch of nodes on the simulated cluster: cordon, evict, replace, check.

A batch (≤ --max-parallel nodes) is one step, or several when a PDB's budget is below the batch's pods it covers: each
step evicts what the budgets allow, the next (same nodes, already cordoned) the rest once the previous step's
replacements are Ready and the budget is back. Which nodes a step cordons: `cordons`.

Per step: cordon; evict the step's pods (terminating: uncounted, still holding resources); create every replacement
(controller-managed pods only) and place them one by one, highest priority first, each seeing the previous ones bound;
then judge every tracked constraint (the hard and soft ones of each affected workload) against its limit: maxSkew, or
the skew before the drain when that was already higher (a drain may not make a violation worse, but is not blamed for
it). A step is safe when no replacement strands, no DoNotSchedule constraint ends above its limit and no pod had to be
left for lack of budget.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kubectl_tspread.views.drain import pdb as pdbmod
from kubectl_tspread.views.drain.diagnose import strand_reason
from kubectl_tspread.views.drain.core.memo import ObjectMemo
from kubectl_tspread.model.plan import PDB_BLOCKS, ConstraintAfter, Eviction, PdbUse, Skipped, Step, Stranded
from kubectl_tspread.views.drain.core.placement import Placer, template_of
from kubectl_tspread.views.drain.pods import EVICT, SKIP, PodDecision
from kubectl_tspread.views.drain.core.simulate import REPLACEMENT_UID_PREFIX, SimCluster, spread_key_of
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.index import undo_entry, undo_member
from kubectl_tspread.model import Pdb, Pod, positional_constructor

# records a plan makes by the hundred thousand (a judgement per moved constraint, an eviction per pod, a stranding per
# replacement), built without the frozen dataclass's per-field setattr (model.positional_constructor)
_new_after = positional_constructor(ConstraintAfter)
_new_eviction = positional_constructor(Eviction)
_new_stranded = positional_constructor(Stranded)


@dataclass(frozen=True, slots=True)
class Tracked:
    """One constraint of one affected workload, judged after every step through an unbound pod of that workload."""

    workload: str
    pod: Pod
    position: int
    limit: int


@dataclass
class Context:
    """What stays fixed while the search tries orders."""

    targets: tuple[str, ...]
    decisions: dict[str, list[PodDecision]]  # node -> its pods' decisions
    workload_of: dict[str, str | None]  # pod key -> "Kind/name"
    pod_pdbs: dict[str, tuple[str, ...]]
    pdbs: dict[str, Pdb]
    tracked: list[Tracked]
    blocked: dict[str, str]  # pod key -> PdbBlocks | MultiplePdbs (never evictable)
    delete_drained_nodes: bool = False
    stage_cordons: bool = False  # each batch cordons itself (else step 1 cordons every target)
    # the plan is read for its verdict only (a remedy's re-plan, the given order's check): a step keeps the domain
    # counts of its exceeded constraints alone, which the findings quote (_judged)
    verdict_only: bool = False
    origin: dict[str, str] = field(default_factory=dict)  # replacement key -> evicted pod key
    # tracked position -> (constraint state, its judgement), reused while the state is the very same object
    judged: dict[int, tuple[object, ConstraintAfter]] = field(default_factory=dict)
    tracked_memo: tuple[int, list] | None = None  # (SimCluster.spread_epoch, tracked_states' answer then)
    probes: tuple[list, list] | None = field(default=None, repr=False)  # tracked_states' probes (_probes), made once
    last_judged: tuple[list, tuple, int] | None = None  # (tracked_states' list, judge's answer for it, its excess)
    excesses: ObjectMemo = field(default_factory=ObjectMemo)  # judge's answer -> its excess (the search's badness)
    decided: dict[tuple[str, str], PodDecision] = field(init=False, repr=False)  # (node, pod key) -> its decision

    def __post_init__(self) -> None:
        self.decided = {}
        for node, ds in self.decisions.items():
            for d in ds:
                self.decided.setdefault((node, d.pod.key), d)

    def adopt(self, pod: Pod) -> None:
        """Give a replacement its original's workload and PDBs."""
        src = self.origin.get(pod.key)
        if src is None or pod.key in self.pod_pdbs:
            return
        self.workload_of[pod.key] = self.workload_of.get(src)
        self.pod_pdbs[pod.key] = self.pod_pdbs.get(src, ())

    def decision(self, pod: Pod) -> PodDecision:
        """The decision made for `pod` on the node it is on now; a replacement that a step put on a target node (a
        StatefulSet's keeps its name) was never decided: evicted and replaced."""
        d = self.decided.get((pod.node_name, pod.key))
        return d if d is not None else PodDecision(pod, EVICT, replaced=True)


@dataclass
class World:
    """One branch of the search: the simulated cluster and what is left to do."""

    sim: SimCluster
    budgets: pdbmod.Budgets
    remaining: dict[str, list[Pod]]  # target node -> pods still to evict
    placer: Placer
    steps: list[Step] = field(default_factory=list)
    stranded: list[Stranded] = field(default_factory=list)
    pending: list[tuple[Pod, Pod]] = field(default_factory=list)  # (stranded replacement, evicted pod)
    done: set[str] = field(default_factory=set)  # targets already played
    first_pending: dict[int, int] = field(default_factory=dict)  # template -> index of its first pod in `pending`
    # placement template -> (its hard constraint states, sim.freed) when it last found no node
    stuck: dict[int, tuple[tuple, int]] = field(default_factory=dict)
    todo: tuple | None = None  # todo_nodes' last answer: (the targets asked about, len(done) then, the answer)
    marks: list[tuple] = field(default_factory=list, repr=False)  # per open mark, innermost last: what revert restores

    def copy(self) -> "World":
        """An independent copy to play on (SimCluster.copy), with no mark open."""
        # shared: the pending records (never changed while they wait) and the lists of pods to evict (run_batch copies
        # a batch node's list before it changes it, so a copy need not copy them all)
        return World(self.sim.copy(), self.budgets.copy(), dict(self.remaining),
                     self.placer, list(self.steps), list(self.stranded), list(self.pending), set(self.done),
                     dict(self.first_pending), dict(self.stuck), self.todo)

    def fork(self) -> None:
        """Open a mark on the world and its simulation (SimCluster.fork). The steps and strandings only grow and a
        pending list is only appended to or replaced: their lengths and objects are kept; the budgets and per-template
        notes are copied; the lists of pods to evict and the targets played leave undo entries in the journal."""
        self.sim.fork()
        self.marks.append((len(self.steps), len(self.stranded), self.pending, len(self.pending),
                           self.first_pending, self.stuck, self.todo, self.budgets))
        self.first_pending, self.stuck, self.budgets = dict(self.first_pending), dict(self.stuck), self.budgets.copy()

    def revert(self, redo: bool = False) -> tuple | None:
        """Undo everything played since the innermost mark, and close it; with `redo`, returns what `redo` takes to
        play it back without simulating it again."""
        steps, stranded, pending, waiting, first_pending, stuck, todo, budgets = self.marks.pop()
        played = (self.steps[steps:], self.stranded[stranded:], list(self.pending), self.first_pending,
                  self.stuck, self.todo, self.budgets) if redo else None
        # the lists of pods to evict and `done` come back with the simulation's journal
        sim_redo = self.sim.revert(redo)
        del self.steps[steps:], self.stranded[stranded:], pending[waiting:]
        self.pending, self.first_pending, self.stuck = pending, first_pending, stuck
        self.todo, self.budgets = todo, budgets
        return (sim_redo, played) if redo else None

    def redo(self, redo: tuple) -> None:
        """Play back what a `revert(redo=True)` undid, on the world as that revert left it (the fallback's way to keep
        the least bad of its candidates)."""
        sim_redo, (steps, stranded, pending, self.first_pending, self.stuck, self.todo, self.budgets) = redo
        self.sim.redo(sim_redo)
        self.steps.extend(steps)
        self.stranded.extend(stranded)
        self.pending = pending

    def commit(self) -> None:
        """Keep what was played since the innermost mark, and close it."""
        self.marks.pop()
        self.sim.commit()

    def forget_marks(self, keep: int = 0) -> None:
        """Close all marks but the `keep` innermost, keeping every change (SimCluster.forget_marks)."""
        if len(self.marks) > keep:
            del self.marks[:len(self.marks) - keep]
        self.sim.forget_marks(keep)

    def take_lists(self, nodes: Iterable[str]) -> None:
        """Give each of `nodes` its own list of pods to evict, for run_batch to change (copies and marks may share)."""
        remaining, sim = self.remaining, self.sim
        for n in nodes:
            old = remaining.get(n)
            sim.note(undo_entry, remaining, n, old)
            remaining[n] = list(old) if old is not None else []

    def played(self, nodes: Iterable[str]) -> None:
        """Add `nodes` to the targets played."""
        done, sim = self.done, self.sim
        for n in nodes:
            if n not in done:
                sim.note(undo_member, done, n, False)
                done.add(n)

    def add_pending(self, replacement: Pod, evicted: Pod) -> None:
        self.first_pending.setdefault(template_of(replacement), len(self.pending))
        self.pending.append((replacement, evicted))

    def set_pending(self, pending: list[tuple[Pod, Pod]]) -> None:
        self.pending, self.first_pending = pending, {}
        for i, (r, _) in enumerate(pending):
            self.first_pending.setdefault(template_of(r), i)

    def note_stuck(self, pod: Pod) -> None:
        """`pod` found no node on this state. Until room is made on a schedulable node or one of its hard constraints'
        counts moves, a pod like it finds none either: cordons and binds only take nodes and room away. (Not for pods
        tolerating the cordon, for which an eviction from a cordoned node makes room, nor with pod (anti-)affinity.)"""
        sim = self.sim
        if not sim.affinity_sensitive and not filters.tolerates_cordon(pod):
            self.stuck[template_of(pod)] = (sim.shared_spread_state(pod).hard, sim.freed)

    def still_stuck(self, pod: Pod) -> bool:
        """Whether note_stuck's reasoning says a pod like `pod` still finds no node (this world and its copies inherit
        what it noted: branches never share a note)."""
        hit = self.stuck.get(template_of(pod))
        if hit is None or hit[1] != self.sim.freed:
            return False
        hard = self.sim.shared_spread_state(pod).hard
        return len(hard) == len(hit[0]) and all(map(operator.is_, hard, hit[0]))

    def todo_nodes(self, targets) -> list[str]:
        """The nodes of `targets` not played yet, in their order (callers read the list only). `done` only grows: the
        last answer for the same targets, less what was played since, is the answer (no walk over all the targets)."""
        done, last = self.done, self.todo
        if last is not None and last[0] is targets:
            if last[1] == len(done):
                return last[2]
            todo = [n for n in last[2] if n not in done]
        else:
            todo = [n for n in targets if n not in done]
        self.todo = (targets, len(done), todo)
        return todo

    @property
    def safe(self) -> bool:
        return all(s.safe for s in self.steps) and not self.stranded


def run_batch(ctx: Context, world: World, batch: list[str]) -> bool:
    """Play `batch` to the end (one or more steps). True when every step was safe apart from the batch's PDB-blocked
    pods: no order evicts those, so the order search looks past them (their steps, and the plan, still say unsafe)."""
    world.take_lists(batch)  # shared with the world's copies and marks: this branch's own from here
    _adopt_replacements(ctx, world, batch)
    todo = [p for n in batch for p in world.remaining.get(n, ())]
    cordon = [n for n in cordons(ctx, world.steps, batch) if not world.sim.nodes[n].unschedulable]
    world.sim.cordon(cordon)
    world.played(batch)
    first, ok = True, True
    while first or todo:
        wave, deferred = [], []
        for p in todo:
            keys = ctx.pod_pdbs.get(p.key, ())
            if world.budgets.fits(keys):
                world.budgets.charge(keys)
                wave.append(p)
            else:
                deferred.append(p)
        if not wave and not first:
            # budget lost to replacements that never became Ready: the rest can never go
            ok = False
            for p in deferred:
                world.stranded.append(Stranded(p.namespace, p.name, ctx.workload_of.get(p.key),
                                               len(world.steps), PDB_BLOCKS,
                                               {"node": p.node_name, "pdbs": list(ctx.pod_pdbs.get(p.key, ())),
                                                "budgetLost": True}))
                world.remaining[p.node_name].remove(p)
            break
        # the first step always runs: it cordons the batch even when nothing is evicted
        harmless = _play_step(ctx, world, batch, cordon if first else [], wave, first)
        ok = ok and harmless
        first = False
        todo = deferred
    return ok


def cordons(ctx: Context, steps: Sequence, batch: Sequence[str]) -> Sequence[str]:
    """The nodes the step played after `steps` cordons (the caller leaves out those already cordoned): every target at
    the plan's first step, as `kubectl drain` cordons all its nodes before the first eviction (no replacement lands on a
    node a later step drains, no pod moves twice), and none later; with staged cordons (the StageCordons remedy), the
    batch. No node is deleted before the first step, so every target is there."""
    if ctx.stage_cordons:
        return batch
    return ctx.targets if not steps else ()


def _adopt_replacements(ctx: Context, world: World, batch: list[str]) -> None:
    """Replacements that an earlier step put on a node of this batch move again."""
    for n in batch:
        queued = {p.key for p in world.remaining[n]}  # by key: Pod equality compares every field
        for p in world.sim.pods_on(n):
            if p.uid.startswith(REPLACEMENT_UID_PREFIX) and not p.terminating and p.key not in queued:
                world.remaining[n].append(p)
                ctx.adopt(p)


def _delete_emptied(ctx: Context, world: World, batch: list[str]) -> tuple[str, ...]:
    """The remedy "delete the drained Node objects once empty": once the step's pods are gone, delete each batch node
    holding only DaemonSet or mirror pods (never a pod a drain would have to delete outside the Eviction API)."""
    world.sim.settle()
    deleted = []
    for n in batch:
        if world.remaining.get(n) or n not in world.sim.nodes:
            continue
        if all(ctx.decision(p).action == SKIP for p in world.sim.pods_on(n)):
            world.sim.delete_node(n)
            deleted.append(n)
    return tuple(deleted)


def _skipped(ctx: Context, batch: list[str], first: bool) -> tuple[Skipped, ...]:
    if not first:
        return ()
    out = []
    for n in batch:
        for d in ctx.decisions.get(n, ()):
            if d.action != EVICT or d.pod.key in ctx.blocked:
                reason = ctx.blocked.get(d.pod.key) or d.code or d.action
                out.append(Skipped(d.pod.namespace, d.pod.name, n, reason, d.message))
    return tuple(out)


def retry_pending(world: World) -> list[tuple[Pod, Pod, str]]:
    """The scheduler retries Pending pods when the cluster changes: replacements that stranded earlier get another
    try, in the order they stranded. Returns (evicted pod, replacement, node) placed.

    Until one binds every try is on the same state, where a pod like one that failed fails too: so only the first
    pending pod of each template is tried, in order, and the pass over them all starts at the first that fits."""
    pending = world.pending
    for i in sorted(world.first_pending.values()):
        repl, evicted = pending[i]
        node = _retry(world, repl)
        if node is None:
            continue
        placed, still = [(evicted, repl, node)], pending[:i]
        for repl, evicted in pending[i + 1:]:
            node = _retry(world, repl)
            if node is None:
                still.append((repl, evicted))
            else:
                placed.append((evicted, repl, node))
        world.set_pending(still)
        return placed
    return []


def _retry(world: World, repl: Pod) -> str | None:
    """One retry: the node `repl` is bound to, or None. A template that already failed on this same state (a failure
    binds nothing) or is still stuck is skipped without building a Placement."""
    placer, sim = world.placer, world.sim
    if world.still_stuck(repl) or placer.failed_now(sim, repl):
        return None
    node = placer.place(sim, repl, diagnose=False).node  # a retry only asks whether it fits now
    if node is None:
        world.note_stuck(repl)
    else:
        sim.bind(repl, node)
    return node


def _play_step(ctx: Context, world: World, batch: list[str], cordon: list[str], wave: list[Pod], first: bool) -> bool:
    """Play one step (appended to world.steps); whether it is safe apart from PDB-blocked pods of the batch."""
    number = len(world.steps) + 1
    sim = world.sim
    retry_pending(world)
    keys = [p.key for p in wave]  # once: Pod.key makes its string anew at each read
    decisions = dict(zip(keys, map(ctx.decision, wave)))
    for p in wave:
        sim.evict(p)
    _forget(world, wave)
    evictions: list[Eviction] = []
    replacements = [(p, key, sim.replacement_for(p)) for p, key in zip(wave, keys) if decisions[key].replaced]
    for _, key, r in replacements:
        ctx.origin[r.key] = ctx.origin.get(key, key)
        sim.add_pending(r)
    deleted = _delete_emptied(ctx, world, batch) if ctx.delete_drained_nodes else ()
    placed: dict[str, tuple[str | None, dict]] = {}
    safe = True
    # the scheduling queue pops higher priority first, then older pods; all are new here
    for evicted, key, r in sorted(replacements, key=lambda x: -x[2].priority):
        pl = world.placer.place(sim, r)
        placed[key] = (pl.node, pl.accepting, pl.tied)  # vector.Accepting: made when read
        if pl.node is not None:
            sim.bind(r, pl.node)
            continue
        safe = False
        reason, details = strand_reason(sim, pl)
        details["node"] = evicted.node_name
        world.stranded.append(_new_stranded(evicted.namespace, evicted.name, ctx.workload_of.get(key),
                                            number, reason, details))
        world.add_pending(sim.pods.get(r.key, r), evicted)
        world.note_stuck(r)
        world.budgets.strand(ctx.pod_pdbs.get(key, ()))
    for p, key in zip(wave, keys):
        d = decisions[key]
        node, accepting, tied = placed.get(key, (None, {}, ()))
        evictions.append(_new_eviction(p.namespace, p.name, p.node_name, ctx.workload_of.get(key), d.replaced,
                                       node, accepting, ctx.pod_pdbs.get(key, ()), d.message, tied))
    after = judge(ctx, sim)
    harmless = safe and excess(ctx, after) <= 0
    safe = harmless and not (first and any(d.pod.key in ctx.blocked for n in batch for d in ctx.decisions.get(n, ())))
    used = world.budgets.next_step()
    pdbs = tuple(PdbUse(ctx.pdbs[k].namespace, ctx.pdbs[k].name,
                        world.budgets.step_allowance(k), n) for k, n in sorted(used.items()))
    sim.settle()
    world.steps.append(Step(number, tuple(batch), tuple(cordon), tuple(evictions), _skipped(ctx, batch, first),
                            after, pdbs, safe, deleted))
    return harmless


def _forget(world: World, pods: list[Pod]) -> None:
    """Take `pods` off their nodes' lists of pods to evict (lists this branch owns: run_batch), by identity, not with
    list.remove's field-by-field equality: a list holds each pod once (_adopt_replacements goes by key)."""
    gone: dict[str, set[int]] = {}
    for p in pods:
        gone.setdefault(p.node_name, set()).add(id(p))
    for node, ids in gone.items():
        left = world.remaining[node]
        left[:] = [p for p in left if id(p) not in ids]


def judge(ctx: Context, sim: SimCluster) -> tuple[ConstraintAfter, ...]:
    """Every tracked constraint on the current simulated state. Made from the last answer: only the constraints whose
    state object changed since are judged again (a step moves a few workloads), and the total excess moves with them."""
    states = tracked_states(ctx, sim)
    last = ctx.last_judged
    if last is not None and last[0] is states:
        return last[1]
    if last is None:
        changed: Iterable[int] = range(len(states))
        after: list = [None] * len(states)
        total = 0
    else:
        changed = list(itertools.compress(itertools.count(), map(operator.is_not, last[0], states)))
        after, total = list(last[1]), last[2]
    for i in changed:
        old = after[i]
        if old is not None:
            total -= old.excess
        new = after[i] = _judged(ctx, i, states[i])
        total += new.excess
    out = tuple(after)
    ctx.last_judged = (states, out, total)
    ctx.excesses.put(out, total)
    return out


def _judged(ctx: Context, i: int, cs: spread.ConstraintState) -> ConstraintAfter:
    """The judgement of tracked constraint `i` in state `cs` (the same object while no pod of its workload moved)."""
    last = ctx.judged.get(i)
    if last is not None and last[0] is cs:
        return last[1]
    t, c = ctx.tracked[i], cs.constraint
    # a verdict reads the counts of exceeded constraints only (the findings quote them); a step's counts hold its
    # domain maps alive, and a plan that deletes its nodes makes new ones for every constraint at every step
    head = (t.workload, t.pod.namespace, c.topology_key, c.max_skew, c.when_unsatisfiable)
    tail = (cs.global_min, cs.skew, t.limit, cs.status)
    after = _new_after(*head, UNRECORDED if ctx.verdict_only else DomainCounts(cs.domains, cs.count_histogram), *tail)
    if after.distribution is UNRECORDED and after.exceeded:
        after = _new_after(*head, DomainCounts(cs.domains, cs.count_histogram), *tail)
    ctx.judged[i] = (cs, after)
    return after


def excess(ctx: Context, after: tuple[ConstraintAfter, ...]) -> int:
    """How far the DoNotSchedule constraints of `after` (a judge's answer) are above their limits, in total: > 0
    exactly when one is exceeded."""
    got = ctx.excesses.get(after)
    return got if got is not None else sum(c.excess for c in after)


class DomainCounts(Mapping):
    """{domain: pods} of a constraint state, read through from its domains: a step judges every tracked constraint, a
    hostname one has a domain per node, and only the steps a user looks at are ever rendered."""

    __slots__ = ("_domains", "_histogram")

    def __init__(self, domains: Mapping[str, spread.Domain], histogram: Mapping[int, int]):
        self._domains = domains
        self._histogram = histogram  # {pods: domains holding that many} (ConstraintState.count_histogram)

    def extremes(self) -> tuple[int, int]:
        """(fewest, most) pods of a domain (a table row's summary), from the count histogram."""
        return min(self._histogram), max(self._histogram)

    def __getitem__(self, value: str) -> int:
        return self._domains[value].pods

    def __iter__(self) -> Iterator[str]:
        return iter(self._domains)

    def __len__(self) -> int:
        return len(self._domains)

    def __repr__(self) -> str:
        return repr(dict(self))


# the counts of a constraint that a verdict-only plan does not keep (Context.verdict_only)
UNRECORDED = DomainCounts({}, {})


def tracked_states(ctx: Context, sim: SimCluster) -> list[spread.ConstraintState]:
    """The state of each tracked constraint (in `ctx.tracked` order) on the current simulated state: one spread state
    per probe pod, shared by its constraints. The same list again while no memoised state moved (sim.spread_epoch): the
    order search reads it at each level, right after the step before judged it. Callers read it only."""
    last = ctx.tracked_memo
    if last is not None and last[0] == sim.spread_epoch:
        return last[1]
    if ctx.probes is None:
        ctx.probes = _probes(ctx.tracked)
    probes, slots = ctx.probes
    shared = sim.shared_spread_state
    states = [shared(pod, key) for pod, key in probes]
    out = [states[at].constraints[position] for at, position in slots]
    ctx.tracked_memo = (sim.spread_epoch, out)  # after any state the calls made
    return out


def _probes(tracked: list[Tracked]) -> tuple[list[tuple[Pod, int]], list[tuple[int, int]]]:
    """tracked_states' probes: each distinct probe pod once with its spread key, and per tracked constraint (its
    probe's place in that list, its position among the probe's constraints)."""
    pods = {id(t.pod): t.pod for t in tracked}  # in order of first use
    at = {key: i for i, key in enumerate(pods)}
    return [(p, spread_key_of(p)) for p in pods.values()], [(at[id(t.pod)], t.position) for t in tracked]
