"""The drain search decided on flat arrays: the zone plan (or its re-plan that deletes the
drained nodes) made by bench/lean_probe.py's FlatCluster alone, without the planner's batches,
and compared step by step with the planner's.

bench/lean_probe.py replays the planner's own batches on flat arrays. Here the arrays decide:
at each level the targets are ordered on the arrays (lean_probe.Heuristic), the candidate
batches are made from that order as search.Search.batches makes them, each candidate is played
with the planner's rules (steps.run_batch: PDB budgets in waves, cordons, evictions, the
drained nodes deleted, replacements placed, stranded ones retried at later steps) and judged
on the arrays (strandings, and the tracked DoNotSchedule constraints' skew against their
limits), and a candidate not kept is rolled back through FlatCluster's undo log. The search is
search.Search's for what a zone meets: the depth-first search without backtracking (a
remedy's re-plan, search_budget 0: the first safe candidate of each level, and the fallback
once a level has none or the steps allowed are spent) and the greedy fallback (the least bad
of the first three candidates, the first that does no new harm at full size at once), from the
start when forced.py proves that no order is safe. The proof itself is the planner's, made
before the timing on a cluster of its own.

What the comparison covers: every step's nodes, cordons, evicted pods, the node each
replacement is placed on (or none), the nodes deleted, and whether the step is safe; the
candidates simulated in all (the plan's `explored`) and whether a safe order was found. Not
made here: the report objects (a step's constraints after it, the evictions' accepting nodes,
the PDB uses) and the stranded pods' reasons, which the verdict of a re-plan reads as finding
codes.

    .venv/bin/python -m bench.lean_search [--size tiny|small|large] [--cache-dir bench-out]
                                          [--delete-drained-nodes]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time
from dataclasses import dataclass

import numpy as np

from bench.lean_probe import ZONE, FlatCluster, Heuristic, load, plan_options
from kubectl_tspread.drain import pdb as pdbmod
from kubectl_tspread.drain.forced import forced_harm
from kubectl_tspread.drain.plan import _new_world, _settle, build_context, plan_drain, resolve_targets, workload_ref
from kubectl_tspread.drain.model import (
    CORDONED_DOMAIN_TRAP, HOSTNAME_SPREAD_FULL, INFO, NO_CAPACITY, PDB_BLOCKS, SKEW_EXCEEDED, SPREAD_BLOCKED,
)
from kubectl_tspread.drain.placement import keys_of, template_of
from kubectl_tspread.drain.pods import EVICT, REFUSE, SKIP
from kubectl_tspread.drain.search import BACKTRACK_FLOOR, DFS_CANDIDATES, GREEDY_CANDIDATES, zone_key
from kubectl_tspread.drain.simulate import spread_key_of
from kubectl_tspread.engine import resources
from kubectl_tspread.model import ZONE_KEY


@dataclass
class LeanStep:
    """What the comparison reads of a step: the planner's Step has the same fields and more."""

    number: int
    nodes: tuple[str, ...]
    cordon: tuple[str, ...]
    evicted: tuple[tuple[str, str | None], ...]  # (evicted pod's key, its replacement's node), in order
    deleted_nodes: tuple[str, ...]
    safe: bool
    excess: int
    exceeded: frozenset[str]  # the workloads of the tracked DoNotSchedule constraints above their limits


class LeanCluster(FlatCluster):
    """FlatCluster with the replacements it bound kept per node (a later batch evicts them
    again: steps._adopt_replacements), every change logged while a candidate is played."""

    def __init__(self, snapshot):
        super().__init__(snapshot)
        self.replacements_on: dict[int, list] = {}  # node position -> replacements bound there, in order
        self.at: dict[str, int] = {}  # a bound replacement's key -> its node position

    def bind(self, pod, i: int) -> None:
        self.move(pod, i, +1)
        self.replacements_on.setdefault(i, []).append(pod)
        self.at[pod.key] = i
        self.log_on(self._unbind_last, pod, i)

    def _unbind_last(self, pod, i: int) -> None:
        self.replacements_on[i].pop()
        del self.at[pod.key]

    def unbind_replacement(self, pod) -> int:
        i = self.at.pop(pod.key)
        on = self.replacements_on[i]
        k = next(k for k, p in enumerate(on) if p is pod)
        del on[k]
        self.log_on(self._rebind, pod, i, k)
        return i

    def _rebind(self, pod, i: int, k: int) -> None:
        self.replacements_on[i].insert(k, pod)
        self.at[pod.key] = i


class LeanSearch:
    """The plan of `targets` decided on a LeanCluster (see the module's docstring)."""

    def __init__(self, snapshot, targets, options):
        began = time.perf_counter()
        proof = forced_proof(snapshot, targets, options)
        self.proof_seconds = time.perf_counter() - began  # the planner's work, not the lean search's
        if options.search_budget and not proof:
            # a search with a backtracking allowance keeps the worlds of several levels at once
            raise SystemExit("error: the lean search covers a proven trap or search_budget 0 only")
        self.forced = bool(proof)  # no order is safe: the fallback from the start (Search.run)
        flat = self.flat = LeanCluster(snapshot)
        ctx = self.ctx = build_context(flat.sim, targets, options)
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
        self.total_excess = 0
        self.steps: list[LeanStep] = []
        # (the evicted pod's key, step number, why: steps' Stranded.reason, diagnose.py's codes)
        self.stranded: list[tuple[str, int, str]] = []
        self.exceeded: dict[int, str] = {}  # tracked position -> its workload, while above its limit
        self._diagnosed: tuple = (None, "")  # ((template, FlatCluster.stamp), the last stranding's reason)
        self.done: set[str] = set()
        self.explored = 0
        self.exhausted = False
        self.origin: dict[str, str] = {}  # replacement key -> the key of the pod it first replaced
        self.blocked_nodes = {n for n in targets if any(d.pod.key in ctx.blocked for d in ctx.decisions.get(n, ()))}
        # every template's arrays read before anything moves: FlatCluster.prepare reads the counts
        # of the cluster before the drain (a replacement's template is its pod's)
        seq = flat.sim.seq
        for n in targets:
            for d in ctx.decisions[n]:
                if d.action == EVICT:
                    flat.prepare(flat.sim.replacement_for(d.pod))
        flat.sim.seq = seq
        self.settled: list[tuple[str, str | None]] = []
        self._settle(snapshot)

    def _settle(self, snapshot) -> None:
        """plan._settle: the Pending pods of the affected workloads placed first."""
        flat, ctx = self.flat, self.ctx
        affected = {w for w in ctx.workload_of.values() if w}
        index = flat.sim.index
        for p in sorted(flat.sim.pending(), key=lambda p: (-p.priority, p.key)):
            if workload_ref(index, p) not in affected:
                continue
            flat.prepare(p)
            i = flat.place(p)
            if i is not None:
                flat.move(p, i, +1)
                flat.node_of[p.key] = i
            self.settled.append((p.key, flat.order[i] if i is not None else None))

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
                    break
                self.rollback(saved)
            else:
                return False  # no allowance to go back up: the fallback goes on from this level

    def _greedy(self) -> None:
        while True:
            remaining = self._todo()
            if not remaining:
                return
            candidates = list(itertools.islice(self.batches(remaining), GREEDY_CANDIDATES))
            before = (len(self.stranded), self.steps[-1].excess if self.steps else 0, len(self.steps))
            floor = (0, 0, -min(self.max_parallel, len(remaining)))
            best, best_cost, kept = None, None, False
            for i, batch in enumerate(candidates):
                self.explored += 1
                saved = self.mark()
                self.run_batch(batch)
                cost = self._badness(before, len(batch))
                better = best_cost is None or cost < best_cost
                if better:
                    best, best_cost = batch, cost
                if cost <= floor or (better and i == len(candidates) - 1):
                    self.commit()
                    kept = True
                    break
                self.rollback(saved)
            if not kept:  # the least bad was rolled back: played again, as it was
                self.run_batch(best)

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
        del self.steps[steps:], self.stranded[stranded:]

    # -- one batch (steps.run_batch) --------------------------------------------------------------

    def run_batch(self, batch: list[str]) -> bool:
        flat, ctx = self.flat, self.ctx
        for n in batch:  # a new list: the one before is the rollback's (mark copies the dict only)
            left = self.remaining[n] = list(self.remaining.get(n, ()))
            queued = {p.key for p in left}
            i = flat.position[n]
            for p in flat.replacements_on.get(i, ()):  # steps._adopt_replacements
                if p.key not in queued:
                    left.append(p)
        todo = [(p, n) for n in batch for p in self.remaining[n]]
        cordon = [n for n in batch if not flat.cordoned[self._slot(n)]]
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
        flat.retry_pending(lambda pod, e, i: i)
        evicted = []
        gone: dict[str, set[int]] = {}
        for p, n in wave:
            if p.key in flat.node_of:
                i = flat.unbind(p)
                d = ctx.decided.get((n, p.key))
                replaced = d is None or d.replaced
            else:  # a replacement a step put on a target node: never decided, evicted and replaced
                i = flat.unbind_replacement(p)
                replaced = True
            flat.move(p, i, -1)
            evicted.append((p, replaced))
            gone.setdefault(n, set()).add(id(p))
        for node, ids in gone.items():  # steps._forget, on this candidate's own lists (run_batch)
            left = self.remaining[node]
            left[:] = [p for p in left if id(p) not in ids]
        new = []
        for p, replaced in evicted:
            if replaced:
                r = sim.replacement_for(p)
                self.origin[r.key] = self._origin(p.key)
                new.append((p, r))
        deleted = self._delete_emptied(batch) if self.delete else ()
        placed: dict[str, str | None] = {}
        safe = True
        for p, r in sorted(new, key=lambda x: -x[1].priority):
            i = flat.place(r)
            if i is not None:
                flat.bind(r, i)
                placed[p.key] = flat.order[i]
                continue
            safe = False
            placed[p.key] = None
            self.stranded.append((p.key, number, self._diagnose(r)))
            flat.strand(r, p)
            self.budgets.strand(self._pdbs(p))
        excess = self._judge()
        if excess > 0:
            safe = False
        harmless = safe
        if first and any(n in self.blocked_nodes for n in batch):
            safe = False
        self.budgets.next_step()
        flat.end_step()
        self.steps.append(LeanStep(number, tuple(batch), tuple(cordon),
                                   tuple((p.key, placed.get(p.key)) for p, _ in evicted), tuple(deleted), safe,
                                   excess, frozenset(self.exceeded.values()) if excess else frozenset()))
        return harmless

    def _diagnose(self, pod) -> str:
        """diagnose.strand_reason's code for a replacement no node took (the whole table walked):
        NoCapacity when no node passes the filters but spread; else, over the hard constraints in
        order whose topology key refuses some of those nodes, HostnameSpreadFull for a hostname
        one, CordonedDomainTrap for one with a domain at the global minimum whose nodes left are
        all cordoned; SpreadBlocked otherwise."""
        flat = self.flat
        _, shape_id, _ = keys_of(pod)
        memo = (template_of(pod), flat.stamp)  # a stranding changes nothing: the next like it fails alike
        if self._diagnosed[0] == memo:
            return self._diagnosed[1]
        why = self._diagnosed_now(pod, shape_id)
        self._diagnosed = (memo, why)
        return why

    def _diagnosed_now(self, pod, shape_id: int) -> str:
        flat = self.flat
        fit = flat.walked(flat._shapes[shape_id]) & ~flat.cordoned & (flat.free["pods"] >= 1)
        for r, want in resources._checked(pod.requests):
            fit &= flat.free[r] >= want
        if not fit.any():
            return NO_CAPACITY
        hard = flat._templates[(pod.namespace, spread_key_of(pod))][0]
        refused: dict[str, int] = {}
        for c in hard:
            allowed = c.per_domain <= c.max_skew + c.minimum() - c.self_match
            allowed[-1] = False
            n = int(np.count_nonzero(fit & ~allowed[flat.walked(c.domain_of)]))
            if n:
                key = c.state.constraint.topology_key
                refused[key] = refused.get(key, 0) + n
        for c in hard:
            if not refused.get(c.state.constraint.topology_key):
                continue
            if c.hostname:
                return HOSTNAME_SPREAD_FULL
            opened = np.bincount(c.domain_of[flat.open], minlength=c.domains + 1)
            low = c.minimum()
            members = np.array(c.members)
            if np.any((members[:-1] > 0) & (opened[:-1] == 0) & (c.per_domain[:-1] == low)):
                return CORDONED_DOMAIN_TRAP
        return SPREAD_BLOCKED

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


def forced_proof(snapshot, targets, options) -> list:
    """forced.py's proof on the planner's own root world (its cluster, not the lean one)."""
    ctx, world = _new_world(snapshot, targets, options)
    _settle(ctx, world)
    return forced_harm(ctx, world)


def compare(lean: LeanSearch, plan) -> list[str]:
    """The differences between the lean search's plan and the planner's (the first few)."""
    out: list[str] = []
    if len(lean.steps) != len(plan.steps):
        out.append(f"{len(lean.steps)} steps here, the planner's {len(plan.steps)}")
    for mine, theirs in zip(lean.steps, plan.steps):
        want = tuple((f"{e.namespace}/{e.name}", e.predicted_node if e.replaced else None) for e in theirs.evictions)
        got = tuple((key, node) for key, node in mine.evicted)
        for what, a, b in (("nodes", mine.nodes, theirs.nodes), ("cordons", mine.cordon, theirs.cordon),
                           ("deleted nodes", mine.deleted_nodes, tuple(theirs.deleted_nodes)),
                           ("evictions", got, want), ("safe", mine.safe, theirs.safe)):
            if a != b:
                out.append(f"step {mine.number}: {what} {_first_difference(a, b)}")
        if len(out) >= 5:
            return out
    blocked = sum(1 for n in lean.targets for d in lean.ctx.decisions[n] if d.pod.key in lean.ctx.blocked)
    theirs = [(f"{s.namespace}/{s.name}", s.step, s.reason) for s in plan.stranded[:len(plan.stranded) - blocked]]
    if lean.stranded != theirs:
        out.append(f"stranded pods {_first_difference(tuple(lean.stranded), tuple(theirs))}")
    if lean.explored != plan.explored:
        out.append(f"{lean.explored} candidates simulated here, the planner's {plan.explored}")
    return out


def planner_verdict(plan) -> tuple[bool, set[tuple[str, str | None]]]:
    """The planner's answer to what LeanSearch.verdict answers."""
    return plan.safe, {(f.code, f.workload) for f in plan.findings if f.severity != INFO}


def _first_difference(here, planner) -> str:
    """Where two values first differ, said briefly."""
    if isinstance(here, tuple) and isinstance(planner, tuple):
        for k, (a, b) in enumerate(zip(here, planner)):
            if a != b:
                return f"#{k + 1} of {len(here)}: {a!r} here, the planner's {b!r}"
        if len(here) != len(planner):
            return f"{len(here)} here, the planner's {len(planner)}"
    return f"{here!r} here, the planner's {planner!r}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="small", choices=("tiny", "small", "large"))
    ap.add_argument("--cache-dir", default="bench-out")
    ap.add_argument("--delete-drained-nodes", action="store_true",
                    help="plan the remedy re-plan that deletes each drained node once it is empty")
    args = ap.parse_args(argv)
    snapshot = load(args.size, args.cache_dir)
    targets = resolve_targets(snapshot, (), None, (ZONE_KEY, ZONE))
    options = plan_options(snapshot, targets, args.delete_drained_nodes)
    gc.collect()
    gc.disable()  # as the tool plans (gcpause)
    try:
        began = time.perf_counter()
        plan = plan_drain(snapshot, targets, options)
        planner = time.perf_counter() - began
        began = time.perf_counter()
        lean = LeanSearch(snapshot, targets, options)
        built = time.perf_counter() - began - lean.proof_seconds
        began = time.perf_counter()
        found = lean.run()
        took = time.perf_counter() - began
    finally:
        gc.enable()
    what = "the re-plan that deletes the drained nodes" if args.delete_drained_nodes else "the plan"
    print(f"{args.size} cluster, {ZONE} of {len(targets)} nodes, {what}: {len(plan.steps)} steps, "
          f"{plan.explored} candidates simulated, {len(plan.stranded)} stranded")
    print(f"planner: {planner:.2f} s (its context and report objects included); lean search: {built + took:.2f} s, "
          f"{built:.2f} s building its arrays and context and {took:.2f} s searching (safe order found: {found}; "
          f"{len(lean.stranded)} stranded, besides the pods a PDB blocks from the start)")
    differences = compare(lean, plan)
    mine, theirs = lean.verdict(found), planner_verdict(plan)
    print(f"verdict: safe {mine[0]}, {len(mine[1])} findings (code and workload) here; safe {theirs[0]}, "
          f"{len(theirs[1])} the planner's" + ("" if mine == theirs else ": they differ"))
    if mine != theirs:
        differences.append(f"findings only here: {sorted(mine[1] - theirs[1], key=str)[:3]}, only the planner's: "
                           f"{sorted(theirs[1] - mine[1], key=str)[:3]}")
    for line in differences:
        print(line)
    print(f"steps that differ: {'none' if not differences else 'see above'}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
