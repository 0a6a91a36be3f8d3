"""Playing one batch of nodes on the simulated cluster: cordon, evict, replace, judge.

A batch takes several steps when a PDB's budget is below the batch's pods it covers: each evicts what the budgets allow,
the next the rest once the replacements are Ready. A step cordons (run_batch), evicts, places the replacements of
controller-managed pods one by one, and judges each tracked constraint (`Tracked`, hard or soft) against its limit:
maxSkew, or the skew before the drain if higher (a drain may not worsen a violation but is not blamed for it). It is
safe when nothing strands, no DoNotSchedule constraint ends above its limit and no pod is left for lack of budget."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping
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

# made by the hundred thousand per plan: built without the frozen dataclass's per-field setattr (positional_constructor)
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
    verdict_only: bool = False  # re-plans and order checks: steps keep only exceeded constraints' counts (_judged)
    origin: dict[str, str] = field(default_factory=dict)  # replacement key -> evicted pod key
    judged: dict[int, tuple[object, ConstraintAfter]] = field(default_factory=dict)  # _judged's memo, by state identity
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

    def decision(self, pod: Pod) -> PodDecision:
        """`pod`'s decision on its node; a replacement put on a target (a StatefulSet's keeps its name) has none."""
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
    stuck: dict[int, tuple[tuple, int, int]] = field(default_factory=dict)  # note_stuck's notes, per placement template
    todo: tuple | None = None  # todo_nodes' last answer: (the targets asked about, len(done) then, the answer)
    marks: list[tuple] = field(default_factory=list, repr=False)  # per open mark, innermost last: what revert restores

    def copy(self) -> "World":
        """An independent copy with no mark open; it shares the pending records, never changed while they wait."""
        return World(self.sim.copy(), self.budgets.copy(), dict(self.remaining),
                     self.placer, list(self.steps), list(self.stranded), list(self.pending), set(self.done),
                     dict(self.first_pending), dict(self.stuck), self.todo)

    def fork(self) -> None:
        """Open a mark (SimCluster.fork): steps, strandings and `pending` only grow (or `pending` is replaced), so their
        lengths and objects are kept; the budgets and template maps are copied; `remaining` and `done` are journaled."""
        self.sim.fork()
        self.marks.append((len(self.steps), len(self.stranded), self.pending, len(self.pending),
                           self.first_pending, self.stuck, self.todo, self.budgets))
        self.first_pending, self.stuck, self.budgets = dict(self.first_pending), dict(self.stuck), self.budgets.copy()

    def revert(self, redo: bool = False) -> tuple | None:
        """Undo what was played since the innermost mark and close it; with `redo`, return what redo() replays."""
        steps, stranded, pending, waiting, first_pending, stuck, todo, budgets = self.marks.pop()
        played = (self.steps[steps:], self.stranded[stranded:], list(self.pending), self.first_pending,
                  self.stuck, self.todo, self.budgets) if redo else None
        sim_redo = self.sim.revert(redo)
        del self.steps[steps:], self.stranded[stranded:], pending[waiting:]
        self.pending, self.first_pending, self.stuck = pending, first_pending, stuck
        self.todo, self.budgets = todo, budgets
        return (sim_redo, played) if redo else None

    def redo(self, redo: tuple) -> None:
        """Replay what revert(redo=True) undid, unsimulated, on the world it left (how the fallback keeps its pick)."""
        sim_redo, (steps, stranded, pending, self.first_pending, self.stuck, self.todo, self.budgets) = redo
        self.sim.redo(sim_redo)
        self.steps.extend(steps)
        self.stranded.extend(stranded)
        self.pending = pending

    def commit(self) -> None:
        self.marks.pop()
        self.sim.commit()

    def forget_marks(self, keep: int = 0) -> None:
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
        """`pod` found no node. Until room is made on a schedulable node or its hard constraints' counts move, nor does
        a pod like it: cordons and binds only take room away."""
        sim = self.sim
        if not sim.affinity_sensitive and not filters.tolerates_cordon(pod):  # evictions on cordoned nodes make it room
            key = spread_key_of(pod)  # the template's: the note keeps it for still_stuck
            self.stuck[template_of(pod)] = (sim.shared_spread_state(pod, key).hard, sim.freed, key)

    def still_stuck(self, pod: Pod) -> bool:
        """Whether note_stuck's note holds for a pod like `pod` (copies inherit notes)."""
        hit, sim = self.stuck.get(template_of(pod)), self.sim
        return hit is not None and hit[1] == sim.freed and _same(sim.shared_spread_state(pod, hit[2]).hard, hit)

    def todo_nodes(self, targets) -> list[str]:
        """Unplayed targets, in order (read-only): the last answer for these targets less what `done` gained since."""
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
    """Play `batch` to the end; True when every step is safe but for the batch's PDB-blocked pods: no order evicts
    those, so the search looks past them (their steps and the plan still say unsafe)."""
    world.take_lists(batch)
    _adopt_replacements(ctx, world, batch)
    todo = [p for n in batch for p in world.remaining.get(n, ())]
    # step 1 cordons every target (none is deleted yet), as kubectl drain cordons all before evicting (no replacement
    # lands on a node a later step drains), later steps none; with StageCordons, each step its batch
    wanted = batch if ctx.stage_cordons else () if world.steps else ctx.targets
    cordon = [n for n in wanted if not world.sim.nodes[n].unschedulable]
    world.sim.cordon(cordon)
    world.played(batch)
    first, ok = True, True
    while first or todo:  # the first step always runs: it cordons the batch even when nothing is evicted
        wave, deferred = [], []
        for p in todo:
            keys = ctx.pod_pdbs.get(p.key, ())
            if world.budgets.fits(keys):
                world.budgets.charge(keys)
                wave.append(p)
            else:
                deferred.append(p)
        if not wave and not first:
            ok = False  # budget lost to replacements that never became Ready: the rest can never go
            for p in deferred:
                world.stranded.append(Stranded(p.namespace, p.name, ctx.workload_of.get(p.key),
                                               len(world.steps), PDB_BLOCKS,
                                               {"node": p.node_name, "pdbs": list(ctx.pod_pdbs.get(p.key, ())),
                                                "budgetLost": True}))
                world.remaining[p.node_name].remove(p)
            break
        harmless = _play_step(ctx, world, batch, cordon if first else [], wave, first)
        ok = ok and harmless
        first = False
        todo = deferred
    return ok


def _adopt_replacements(ctx: Context, world: World, batch: list[str]) -> None:
    """Replacements that an earlier step put on a node of this batch move again."""
    for n in batch:
        queued = {p.key for p in world.remaining[n]}  # by key: Pod equality compares every field
        for p in world.sim.pods_on(n):
            if p.uid.startswith(REPLACEMENT_UID_PREFIX) and not p.terminating and p.key not in queued:
                world.remaining[n].append(p)
                src = ctx.origin.get(p.key)  # it takes over its evicted pod's workload and PDBs
                if src is not None and p.key not in ctx.pod_pdbs:
                    ctx.workload_of[p.key] = ctx.workload_of.get(src)
                    ctx.pod_pdbs[p.key] = ctx.pod_pdbs.get(src, ())


def _delete_emptied(ctx: Context, world: World, batch: list[str]) -> tuple[str, ...]:
    """The remedy "delete the drained Node objects once empty": delete each batch node left with only DaemonSet or
    mirror pods (never a pod a drain would have to delete outside the Eviction API)."""
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
    """The pods the batch's first step leaves: those kubectl skips or refuses, and the PDB-blocked ones."""
    return tuple(Skipped(d.pod.namespace, d.pod.name, n, ctx.blocked.get(d.pod.key) or d.code or d.action, d.message)
                 for n in batch if first for d in ctx.decisions.get(n, ())
                 if d.action != EVICT or d.pod.key in ctx.blocked)


def retry_pending(world: World) -> list[tuple[Pod, Pod, str]]:
    """The scheduler retries Pending pods when the cluster changes: stranded replacements get another try, in the order
    they stranded; returns the (evicted pod, replacement, node) placed. Until one binds, every try sees the same state,
    where a pod like a failed one fails too: only each template's first is tried; the pass starts at the first fit."""
    pending = world.pending
    for i in sorted(_maybe_unstuck(world)):
        repl, evicted = pending[i]
        node = _retry(world, repl, unstuck=True)
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


def _maybe_unstuck(world: World) -> list[int]:
    """first_pending's indexes less those still_stuck holds for, in one pass (a trap strands hundreds)."""
    stuck, freed, pending, firsts = world.stuck, world.sim.freed, world.pending, world.first_pending.items()
    noted = [(t, i, hit) for t, i in firsts if (hit := stuck.get(t)) is not None and hit[1] == freed]
    states = world.sim.shared_spread_states([(pending[i][0], hit[2]) for _, i, hit in noted])
    held = {t for (t, _, hit), st in zip(noted, states) if _same(st.hard, hit)}
    return [i for t, i in firsts if t not in held]


def _same(hard: tuple, note: tuple) -> bool:
    """Whether `hard` holds the very constraint states of a stuck note's."""
    return hard is note[0] or (len(hard) == len(note[0]) and all(map(operator.is_, hard, note[0])))


def _retry(world: World, repl: Pod, unstuck: bool = False) -> str | None:
    """The node `repl` is bound to, or None; no Placement for a template stuck (`unstuck`: known not) or failed now."""
    placer, sim = world.placer, world.sim
    if (not unstuck and world.still_stuck(repl)) or placer.failed_now(sim, repl):
        return None
    node = placer.place(sim, repl, diagnose=False).node  # a retry only asks whether it fits now
    if node is None:
        world.note_stuck(repl)
    else:
        sim.bind(repl, node)
    return node


def _play_step(ctx: Context, world: World, batch: list[str], cordon: list[str], wave: list[Pod], first: bool) -> bool:
    """Play one step; whether it is safe apart from the batch's PDB-blocked pods."""
    number, sim = len(world.steps) + 1, world.sim
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
        sim.add_pending(r)  # only now: a pending pod is in no count and holds no room, so a placed one never waits
        world.add_pending(r, evicted)
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
    """Take `pods` off their nodes' lists to evict by identity (each is there once), not by list.remove's equality."""
    gone: dict[str, set[int]] = {}
    for p in pods:
        gone.setdefault(p.node_name, set()).add(id(p))
    for node, ids in gone.items():
        left = world.remaining[node]
        left[:] = [p for p in left if id(p) not in ids]


def judge(ctx: Context, sim: SimCluster) -> tuple[ConstraintAfter, ...]:
    """Every tracked constraint, judged again only if its state object changed (a step moves a few workloads)."""
    states, last = tracked_states(ctx, sim), ctx.last_judged
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
    last = ctx.judged.get(i)
    if last is not None and last[0] is cs:
        return last[1]
    t, c = ctx.tracked[i], cs.constraint
    # why verdict_only: counts hold a step's domain maps alive; deleting nodes makes new ones per constraint per step
    head = (t.workload, t.pod.namespace, c.topology_key, c.max_skew, c.when_unsatisfiable)
    tail = (cs.global_min, cs.skew, t.limit, cs.status)
    after = _new_after(*head, UNRECORDED if ctx.verdict_only else DomainCounts(cs.domains, cs.count_histogram), *tail)
    if after.distribution is UNRECORDED and after.exceeded:  # the findings quote an exceeded constraint's counts
        after = _new_after(*head, DomainCounts(cs.domains, cs.count_histogram), *tail)
    ctx.judged[i] = (cs, after)
    return after


def excess(ctx: Context, after: tuple[ConstraintAfter, ...]) -> int:
    """Total excess of a judge's answer's DoNotSchedule constraints over their limits: > 0 exactly when one is."""
    got = ctx.excesses.get(after)
    return got if got is not None else sum(c.excess for c in after)


class DomainCounts(Mapping):
    """{domain: pods} read through, not copied: a hostname constraint has a domain per node, and few steps are shown."""

    __slots__ = ("_domains", "_histogram")

    def __init__(self, domains: Mapping[str, spread.Domain], histogram: Mapping[int, int]):
        self._domains = domains
        self._histogram = histogram  # {pods: domains holding that many} (ConstraintState.count_histogram)

    def extremes(self) -> tuple[int, int]:
        return min(self._histogram), max(self._histogram)

    def __getitem__(self, value: str) -> int:
        return self._domains[value].pods

    def __iter__(self) -> Iterator[str]:
        return iter(self._domains)

    def __len__(self) -> int:
        return len(self._domains)

    def __repr__(self) -> str:
        return repr(dict(self))


UNRECORDED = DomainCounts({}, {})


def tracked_states(ctx: Context, sim: SimCluster) -> list[spread.ConstraintState]:
    """Each tracked constraint's state, one spread state per probe pod. The same list (callers only read it) while no
    memoised state moved (sim.spread_epoch): the search reads it at each level, right after the step judged it."""
    last = ctx.tracked_memo
    if last is not None and last[0] == sim.spread_epoch:
        return last[1]
    if ctx.probes is None:
        ctx.probes = _probes(ctx.tracked)
    probes, slots = ctx.probes
    states = sim.shared_spread_states(probes)
    out = [states[at].constraints[position] for at, position in slots]
    ctx.tracked_memo = (sim.spread_epoch, out)  # after any state the calls made
    return out


def _probes(tracked: list[Tracked]) -> tuple[list[tuple[Pod, int]], list[tuple[int, int]]]:
    """Distinct probe pods with their spread keys; per tracked constraint, (its probe's index, its position there)."""
    pods = {id(t.pod): t.pod for t in tracked}  # in order of first use
    at = {key: i for i, key in enumerate(pods)}
    return [(p, spread_key_of(p)) for p in pods.values()], [(at[id(t.pod)], t.position) for t in tracked]
