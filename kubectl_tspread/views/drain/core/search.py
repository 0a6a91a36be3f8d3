"""Drain step order and size: a depth-first search in a heuristic order, bounded backtracking and a greedy fallback.

Candidates come from the remaining targets sorted by: how many tracked hard constraints' domains the node's cordon would
leave with no schedulable node, fewest first; in how many it holds pods of a domain at the global minimum, fewest first
(draining that domain lowers the minimum and blocks the others); its domains' surplus over the minimum, largest first;
its name. A batch is a seed plus up to --max-parallel − 1 more, other domains first, tried at full size, then smaller.

Each candidate is simulated (steps.run_batch) on the search's one world after a mark (World.fork) and reverted if it
fails; the first safe one is descended into. A remaining set whose candidates all failed within the budget is not
explored again (an approximation: the memo ignores the order). When forced.py proves no order safe, the fallback
starts from the undrained cluster.

Bounds (a step costs O(R × S), see placement.py; a zone has thousands of targets T: nothing may be quadratic in T):
- at most T + min(search_budget, max(BACKTRACK_FLOOR, T)) simulated steps, DFS_CANDIDATES per level: fewer than T would
  make a safe plan of T steps unreachable, and backtracking dearer than the forward pass, or past the heuristic's first
  few candidates, rarely pays. Backing up past the BACKTRACK_DEPTH marks kept ends the search;
- the fallback goes on from the longest safe prefix found, plays at most GREEDY_CANDIDATES batches per level and keeps
  the least bad (fewest new stranded pods, least new skew excess, biggest batch); one with no new harm at full size ends
  the level. It only has to show where and why the drain breaks: any harmful candidate does, not just the best."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Callable, Collection, Iterator

from kubectl_tspread.views.drain.core import counts, vector
from kubectl_tspread.views.drain.forced import ForcedHarm, forced_harm
from kubectl_tspread.views.drain.core.memo import ObjectMemo
from kubectl_tspread.model.plan import Step, Stranded
from kubectl_tspread.views.drain.core.steps import Context, World, excess, run_batch, tracked_states
from kubectl_tspread.model import HOSTNAME_KEY


DFS_CANDIDATES = 8
BACKTRACK_FLOOR = 64
GREEDY_CANDIDATES = 3
BACKTRACK_DEPTH = 64  # each open mark holds its level's undo entries, and a zone's plan is thousands of levels deep


class Search:
    def __init__(self, ctx: Context, max_parallel: int, budget: int,
                 on_proof: Callable[[list[ForcedHarm], frozenset], None] | None = None,
                 on_strand: Callable[[Stranded], None] | None = None,
                 on_level: Callable[[int], None] | None = None):
        self.ctx = ctx
        self.on_proof = on_proof  # told forced.py's answers (forced, deletion_fails) before any step is simulated
        self.on_strand = on_strand  # no safe order: told the first stranding the fallback keeps (it never goes back)
        self.on_level = on_level  # told how many targets each level entered has played (a progress display)
        self.max_parallel = max(1, max_parallel)
        targets = len(ctx.targets)
        self.budget = targets + min(budget, max(BACKTRACK_FLOOR, targets))
        self.backtracks = budget > 0  # no allowance (a remedy's re-plan): a failed level ends the search
        self.explored = 0
        self.failed: set[frozenset[str]] = set()
        self.exhausted, self.zone_key = False, zone_key(ctx)
        self.deepest: World | None = None  # the world after the longest safe prefix, copied once the search left it
        self._deepest_done = 0  # how many targets that prefix played
        self.forced: list[ForcedHarm] = []  # constraints that no order keeps (forced.py)
        self.deletion_fails: frozenset = frozenset()  # (namespace, workload, key) of those kept so with nodes deleted
        self._targets = frozenset(ctx.targets)
        self._shares = ObjectMemo()  # _target_shares, per state object
        self._totals = _Totals(ctx.targets)  # _share_totals, as of the list of states in _totaled
        self._totaled: tuple[list | None, set] = (None, set())  # and the unplayed targets then
        self._hard: tuple[list, list] | None = None  # (tracked_states' list, its hard constraints)
        self._hard_places: list[bool] | None = None  # per tracked place, whether hard (a place keeps its constraint)
        self._nodes_of = ObjectMemo()  # _domain_nodes, per state object

    def run(self, world: World) -> tuple[World, bool]:
        """(final world, found a safe order); the final world is `world` played on, or a copy of the deepest one."""
        ctx = self.ctx
        self.forced = forced_harm(ctx, world)
        if self.forced and not (ctx.verdict_only or ctx.delete_drained_nodes):  # remedies.judged_by_proof reads it
            self.deletion_fails = frozenset((f.namespace, f.workload, f.topology_key)
                                            for f in forced_harm(ctx, world, deleting=True))
        if self.on_proof is not None:
            self.on_proof(self.forced, self.deletion_fails)
        if not self.forced:
            if self._dfs(world):
                return world, True
            if self.deepest is not None:
                world = self.deepest
        return self._greedy(world), False

    def _dfs(self, world: World) -> bool:
        """An explicit stack (a zone's plan is deeper than the recursion limit). Leaves `world` at the last level
        entered, and `deepest` a copy of the deepest level once the search backed up from it."""
        levels: list[tuple[frozenset[str], Iterator[list[str]]]] = []
        self._deepest_done, self.deepest, entering = len(world.done), None, True
        try:
            while True:
                if entering:
                    entering = False
                    remaining = world.todo_nodes(self.ctx.targets)
                    if not remaining:
                        return True
                    key = frozenset(remaining)
                    if key in self.failed:
                        if not self._back_up(world):
                            return False
                    else:
                        levels.append((key, iter(list(itertools.islice(self.batches(world, remaining),
                                                                       DFS_CANDIDATES)))))  # before any plays
                if not levels:
                    return False
                key, batches = levels[-1]
                batch = next(batches, None)
                if batch is None:  # every candidate of this level failed
                    if not self.backtracks:
                        return False  # the fallback goes on from this level
                    if self.explored < self.budget:
                        self.failed.add(key)
                    levels.pop()
                    if not levels or not self._back_up(world):
                        return False
                    continue
                if self.explored >= self.budget:
                    self.exhausted = True
                    return False
                self.explored += 1
                world.fork()
                if not run_batch(self.ctx, world, batch):
                    world.revert()
                    continue
                if not self.backtracks:
                    world.commit()  # never gone back to
                elif world.sim.marks > BACKTRACK_DEPTH:
                    world.forget_marks(BACKTRACK_DEPTH)
                if len(world.done) > self._deepest_done:
                    self.deepest, self._deepest_done = None, len(world.done)
                entering = True
                if self.on_level is not None:
                    self.on_level(len(world.done))
        finally:
            world.forget_marks()

    def _back_up(self, world: World) -> bool:
        """Revert the batch that led here, copying the world first if deepest; False past the marks kept."""
        if world.sim.marks == 0:
            self.exhausted = True
            return False
        if self.deepest is None and len(world.done) == self._deepest_done:
            self.deepest = world.copy()
        world.revert()
        return True

    def _greedy(self, world: World) -> World:
        """The least bad candidate so far is reverted with its redo (World.revert), played back at the level's end."""
        proven = _Proven(self.forced)
        while True:
            remaining = world.todo_nodes(self.ctx.targets)
            if not remaining:
                return world
            floor = (0, 0, -min(self.max_parallel, len(remaining)))
            candidates = list(itertools.islice(self.batches(world, remaining), GREEDY_CANDIDATES))  # before any plays
            before = _before(self.ctx, world, proven)
            best_cost, best = None, None
            for i, batch in enumerate(candidates):
                world.fork()
                self.explored += 1
                run_batch(self.ctx, world, batch)
                cost = _badness(self.ctx, before, world, len(batch), proven)
                better = best_cost is None or cost < best_cost
                if better:
                    best_cost = cost
                if cost <= floor or (better and i == len(candidates) - 1):
                    world.commit()
                    break
                undone = world.revert(redo=better)
                if better:
                    best = undone
            else:
                world.redo(best)
            if self.on_strand is not None and self.forced and world.stranded:
                self.on_strand(world.stranded[0])
                self.on_strand = None
            if self.on_level is not None:
                self.on_level(len(world.done))

    def batches(self, world: World, remaining: list[str]) -> Iterator[list[str]]:
        order = self.order(world, remaining)
        seen: set[tuple[str, ...]] = set()
        for seed in order:
            full = self._batch_from(world, seed, order)
            for size in range(len(full), 0, -1):
                b = tuple(full[:size])
                if b not in seen:
                    seen.add(b)
                    yield list(b)

    def _batch_from(self, world: World, seed: str, order: list[str]) -> list[str]:
        batch = [seed]
        used = {self._zone_of(world, seed)}
        for pass_other_domains in (True, False):
            for n in order:
                if len(batch) >= self.max_parallel:
                    return batch
                if n in batch:
                    continue
                z = self._zone_of(world, n)
                if pass_other_domains and z in used:
                    continue
                batch.append(n)
                used.add(z)
        return batch

    def _zone_of(self, world: World, node: str) -> str:
        n = world.sim.nodes.get(node)
        return node if n is None or self.zone_key is None else n.labels.get(self.zone_key, node)

    def order(self, world: World, remaining: list[str]) -> list[str]:
        tracked = tracked_states(self.ctx, world.sim)
        if self._hard is None or self._hard[0] is not tracked:  # the same list while no state moved
            if self._hard_places is None or len(self._hard_places) != len(tracked):
                self._hard_places = [cs.constraint.hard for cs in tracked]
            self._hard = (tracked, list(itertools.compress(tracked, self._hard_places)))
        hard, todo = self._hard[1], set(remaining)
        totals, nodes = self._share_totals(hard, todo), world.sim.nodes
        empties: dict[str, int] = defaultdict(int)
        last_open: dict[int, str | None] = {}  # per domain node list (constraints share them)
        everyone_cordoned = bool(world.steps) and not self.ctx.stage_cordons  # then no target is a last open node
        for cs in () if everyone_cordoned else hard:
            if cs.constraint.topology_key == HOSTNAME_KEY:
                continue
            for members in self._domain_nodes(cs):
                k = id(members)
                if k not in last_open:
                    last_open[k] = _only_open(members, nodes)
                name = last_open[k]
                if name is not None and name in todo:
                    empties[name] += 1
        return totals.ordered(remaining, empties)

    def _domain_nodes(self, cs) -> tuple[tuple[str, ...], ...]:
        """Each domain's node list, per state object: most outlive a level, and walking the overlay costs more."""
        got = self._nodes_of.get(cs)
        return got if got is not None else self._nodes_of.put(cs, tuple(dom.nodes for dom in cs.domains.values()))

    def _share_totals(self, hard: list, todo: set[str]) -> "_Totals":
        """Per unplayed target, in how many hard constraints its domain holds the global minimum and its summed surplus:
        the last call's, moved by the changed states. Played targets stay in the target sets (read again: afresh)."""
        totals, (before, todo_before) = self._totals, self._totaled
        if before is None or len(before) != len(hard) or not todo <= todo_before:
            totals.clear()
            changed = [(None, cs) for cs in hard]
        else:
            changed = [(old, cs) for old, cs in zip(before, hard) if old is not cs]
        for old, cs in changed:
            if old is not None and cs.global_min == old.global_min and counts.same_counts(old, cs):
                self._shares.put(cs, self._target_shares(old))  # a pod-less node left (deleted or cordoned under Honor)
                continue
            was = self._target_shares(old) if old is not None else {}
            after = self._shares_after(cs, old, was, todo) if old is not None else None
            now = self._target_shares(cs) if after is None else self._shares.put(cs, after[0])
            for value in now.keys() | was.keys() if after is None else after[1]:
                before, entry = was.get(value), now.get(value)
                if entry is None:  # the domain holds no share now: take back the one it held
                    if before is not None:
                        totals.add(before[2], -before[0], -before[1])
                    continue
                at_min, extra, names = entry
                if before is not None and (before[2] is names or before[2] == names):
                    # same target nodes: only the count's move; the old set object keeps its positions (_Totals.add)
                    now[value] = (at_min, extra, before[2])
                    at_min, extra, names = at_min - before[0], extra - before[1], before[2]
                elif before is not None:
                    totals.add(before[2], -before[0], -before[1])
                if at_min or extra:
                    totals.add(names, at_min, extra)
        self._totaled = hard, todo
        return totals

    def _shares_after(self, cs, old, was: dict, todo: set[str]) -> tuple[dict, Collection[str]] | None:
        """(_target_shares(cs), the domains whose share differs) from `was`, `old`'s, when `cs` moved from `old` by pods
        alone, as their overlays tell (else None): a count that moves makes its domain a new record, so only those
        domains' pods differ, their targets only by the nodes whose count did, the others' only with the minimum."""
        moved, nodes = _differ(old.domains, cs.domains), _differ(old.node_counts, cs.node_counts)
        if moved is None or nodes is None or cs.node_domain is not old.node_domain:
            return None
        domains, low, counted, node_domain = cs.domains, cs.global_min, cs.node_counts, cs.node_domain
        out = dict(was) if low == old.global_min else {  # a domain goes only with a node, which changes the partition
            value: _share(domains[value].pods, low, names) for value, (_, _, names) in was.items()}
        for value in moved:
            d, entry = domains.get(value), was.get(value)
            names: Collection[str] = entry[2] if entry is not None else ()
            flips = [n for n in nodes if n in todo and node_domain.get(n) == value
                     and (n in names) != bool(counted.get(n))]
            names = frozenset(names).symmetric_difference(flips) if flips else names
            if d is not None and names:
                out[value] = _share(d.pods, low, names)
            else:
                out.pop(value, None)
        return out, moved if low == old.global_min else out.keys() | was.keys()

    def _target_shares(self, cs) -> dict[str, tuple[int, int, Collection[str]]]:
        """Per domain with pods on targets, its share; per state object, as a level re-reads many unmoved states."""
        got = self._shares.get(cs)
        if got is not None:
            return got
        domains, low, node_domain, groups = cs.domains, cs.global_min, cs.node_domain, defaultdict(list)
        for name in cs.node_counts:  # the nodes with a count
            if name in self._targets and (value := node_domain.get(name)) is not None:
                groups[value].append(name)
        return self._shares.put(cs, {v: _share(domains[v].pods, low, tuple(names)) for v, names in groups.items()})


def _share(pods: int, low: int, names: Collection[str]) -> tuple[int, int, Collection[str]]:
    return 1 if pods <= low else 0, pods - low, names  # (holds the minimum, surplus, the target nodes): _share_totals


def _differ(a, b) -> list | None:
    """The keys whose value is not the same object in `a` and `b`, an overlay (counts.py) on `a` or on `a`'s base."""
    base = getattr(b, "base", None)
    if a is b or base is None or not (base is a or getattr(a, "base", None) is base):
        return [] if a is b else None
    ours, theirs = getattr(a, "changes", {}), b.changes  # a key changed to the same object in both: the same value
    return [k for k in theirs.keys() | ours.keys()
            if ours.get(k, a) is not theirs.get(k, b) and a.get(k) is not b.get(k)]


class _Totals:
    """_share_totals' totals in numpy arrays by target position: a zone domain's many nodes move by one indexed add."""

    def __init__(self, names: tuple[str, ...]):
        self.names, self.pos = names, {name: i for i, name in enumerate(names)}
        self._at = ObjectMemo()  # node set -> its positions
        np = vector.np
        by_name = sorted(range(len(names)), key=names.__getitem__)
        self.rank = np.empty(len(names), dtype=np.int64)
        self.rank[by_name] = np.arange(len(names))
        self.clear()

    def clear(self) -> None:
        n, np = len(self.names), vector.np
        self.holds, self.surplus = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)

    def add(self, names: Collection[str], holds: int, surplus: int) -> None:
        at = self._at.get(names)
        if at is None:
            np = vector.np
            at = self._at.put(names, np.fromiter(map(self.pos.__getitem__, names), dtype=np.int64, count=len(names)))
        self.holds[at] += holds  # distinct positions: no update is lost
        self.surplus[at] += surplus

    def ordered(self, remaining: list[str], empties: dict[str, int]) -> list[str]:
        pos, holds, surplus = self.pos, self.holds, self.surplus
        np, n = vector.np, len(remaining)
        at = np.fromiter(map(pos.__getitem__, remaining), dtype=np.int64, count=n)
        emptied = np.fromiter(map(empties.get, remaining, itertools.repeat(0, n)), dtype=np.int64, count=n) \
            if empties else np.zeros(n, dtype=np.int64)
        # lexsort's last key is the first compared; names are distinct, so no tie is left
        order = np.lexsort((self.rank[at], -surplus[at], holds[at], emptied))
        return [remaining[i] for i in order.tolist()]


def _only_open(names: tuple[str, ...], nodes: dict) -> str | None:
    """The domain's sole schedulable node, if any; deleted nodes it still lists (partition.without_node) are not."""
    found = list(itertools.islice((n for n in names if (node := nodes.get(n)) is not None and not node.unschedulable),
                                  2))
    return found[0] if len(found) == 1 else None


def zone_key(ctx: Context) -> str | None:
    """The first non-hostname topologyKey of a tracked hard constraint: what a batch spreads over."""
    for t in ctx.tracked:
        c = t.pod.spread[t.position] if t.position < len(t.pod.spread) else None
        if c is not None and c.hard and c.topology_key != HOSTNAME_KEY:
            return c.topology_key
    return None


class _Proven:
    """Harm forced.py proved unavoidable, which the fallback ignores: else every trapped level plays all candidates."""

    def __init__(self, forced: list[ForcedHarm]):
        self.constraints = {(f.namespace, f.workload, f.topology_key) for f in forced}
        self.workloads = {(f.namespace, f.workload) for f in forced}
        self._others: list[int] | None = None  # places of unproven constraints in a judge's answer (a fixed order)

    def stranded(self, stranded: list[Stranded]) -> int:
        proven = self.workloads
        return sum((s.namespace, s.workload) not in proven for s in stranded) if proven else len(stranded)

    def excess(self, ctx: Context, step: Step) -> int:
        """How far the hard constraints not proven broken are above their limits after `step`."""
        after = step.constraints_after
        total = excess(ctx, after)
        if not self.constraints or not total:
            return total
        if self._others is None:
            self._others = [i for i, c in enumerate(after)
                            if (c.namespace, c.workload, c.topology_key) not in self.constraints]
        return sum(after[i].excess for i in self._others)


def _before(ctx: Context, world: World, proven: _Proven) -> tuple[int, int, int]:
    return len(world.stranded), proven.excess(ctx, world.steps[-1]) if world.steps else 0, len(world.steps)


def _badness(ctx: Context, before: tuple[int, int, int], after: World, size: int,
             proven: _Proven) -> tuple[int, int, int]:
    stranded_before, was, steps_before = before
    stranded = proven.stranded(after.stranded[stranded_before:])  # strandings only grow: new ones are last
    # new harm only: a constraint a strand left above its limit stays there, whatever comes next
    over = max([0] + [proven.excess(ctx, s) - was for s in after.steps[steps_before:]])
    return (stranded, over, -size)
