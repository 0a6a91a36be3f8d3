"""The SetNodeTaintsPolicyHonor re-plan carried along by the lean plan (views/drain/core/lean.py), as views/drain/core/shared.py
carries it along the planner's.

shared.py's module docstring says why the re-plan that sets `nodeTaintsPolicy: Honor` on the
first stranded workload W's constraints of key K is the plan itself until a level where the
two could read W's domains otherwise, and which checks make sure of it. The same checks run
here on the lean search's arrays: `arm` at the plan's first stranding (W's K constraints
carriable, every domain keeping a node W tolerates that no candidate can take, W's counted
pods all evicted in their steps and none landing where Honor would not count it), `due` at each
level, and `window` on the retries between a batch's cordon and its evictions. At the first
level where they could differ (or at the end) the lean search forks: the child makes the
same check of the cluster before the drain as shared.py's (check 3), turns W's K constraints
to Honor where the plan stands (LeanSearch.honor_from_here: the nodes W does not tolerate,
the cordoned ones included, leave their domains, no count moving), plays the rest of the
drain as the re-plan's search would, and answers the re-plan's verdict. Where a check fails
the child re-plans from the start instead (plan.py's re-plan, on arrays where it can).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from kubectl_tspread.views.drain import parallel
from kubectl_tspread.views.drain.core import shared
from kubectl_tspread.model.plan import PlanOptions, Stranded
from kubectl_tspread.views.drain.pods import EVICT
from kubectl_tspread.views.drain.core.simulate import SimCluster, spread_key_of
from kubectl_tspread.views.drain.core.steps import tracked_states
from kubectl_tspread.engine.nodematch import node_untolerated_taint
from kubectl_tspread.model import Snapshot

if TYPE_CHECKING:
    from kubectl_tspread.views.drain.core.lean import Constraint, LeanSearch


class LeanSharer(shared.Carry):
    """shared.Sharer's checks on the lean search's arrays, while the lean plan carries the
    SetNodeTaintsPolicyHonor re-plan of `workload`'s `topology_key` constraints (`positions` in ctx.tracked,
    `constraints` their arrays)."""

    def __init__(self, search: "LeanSearch", workload: str, namespace: str, topology_key: str,
                 positions: list[int], constraints: list["Constraint"], open_nodes: dict[str, set[str]],
                 fork: Callable[["LeanSharer", "LeanSearch"], None]):
        super().__init__(workload, namespace, topology_key, positions, open_nodes, len(search.steps),
                         search.max_parallel, fork)
        self.search, self.constraints = search, constraints

    def due(self, remaining: Sequence[str]) -> bool:
        """Whether this level could read W's domains otherwise under Honor (Sharer.due)."""
        return self._due(self.search.steps, remaining)

    def window(self, batch: Sequence[str]) -> None:
        """Sharer.window: the retries are about to read the counts with `batch` cordoned and its
        pods not yet evicted; W's domains must accept W alike whether those pods count or not."""
        if self.diverged:
            return
        search = self.search
        flat = search.flat
        at = [i for i in map(flat.position.__getitem__, batch) if not flat.open[i]]  # no node is deleted here
        if not at or not self._waiting(flat.first_pending, flat.pending,
                                       lambda evicted: search.ctx.workload_of.get(search._origin(evicted.key))):
            return
        for c in self.constraints:
            held = np.zeros(c.domains + 1, dtype=np.int64)
            np.add.at(held, c.domain_of[at], c.per_node[at])
            held[-1] = 0
            if held.any() and not np.array_equal(_accepting(c, 0), _accepting(c, held)):
                self.diverged = True
                return

    def fork(self, search: "LeanSearch") -> None:
        self._fork(self, search)


def _accepting(c: "Constraint", held) -> np.ndarray:
    """shared._accepting on the arrays: which domains let a pod of `c` on, with `held` pods per
    domain taken out of the counts (the minimum forced to 0 by minDomains as the state has it)."""
    left = np.array(c.members[:-1]) > 0
    now = (c.per_domain - held)[:-1]
    low = 0 if c.forced or not left.any() else int(now[left].min())
    return left & (now + c.self_match - low <= c.max_skew)


def arm(search: "LeanSearch", first: Stranded, options: PlanOptions,
        fork: Callable[[LeanSharer, "LeanSearch"], None]) -> LeanSharer | None:
    """shared.arm on the lean search where the plan keeps the level that strands `first`: a
    LeanSharer, or None when the checks fail (the re-plan then starts from scratch)."""
    ctx, flat = search.ctx, search.flat
    edits = shared.edited_constraints_of(ctx, first, options)
    if edits is None:
        return None
    key, positions = edits
    probe = ctx.tracked[positions[0]].pod
    constraints = [flat.of_template[(ctx.tracked[i].pod.namespace, spread_key_of(ctx.tracked[i].pod))]
                   [ctx.tracked[i].position] for i in positions]
    nodes = flat.sim.nodes
    cordoned = ~flat.open  # by position; no node is deleted in a plan that carries (edited_constraints_of)
    tolerated = [not cordoned[i] and node_untolerated_taint(probe, nodes[name]) is None
                 for i, name in enumerate(flat.order)]
    open_nodes: dict[str, set[str]] = {}
    for c in constraints:
        left = c.members
        for j, value in enumerate(c.values):
            if left[j]:
                open_nodes.setdefault(value, set())
        for i in np.flatnonzero(c.domain_of < c.domains).tolist():
            if tolerated[i]:
                open_nodes[c.values[c.domain_of[i]]].add(flat.order[i])
    if not shared._kept(open_nodes, set(search._todo()), options.max_parallel):
        return None  # an earlier level may already have read them differently
    # the nodes as they are now (the cordoned ones cannot take a pod that does not tolerate it)
    now = [nodes[name] for i, name in enumerate(flat.order) if not cordoned[i]]
    states = tracked_states(ctx, flat.sim)  # before the drain: what check 2 reads is who they count
    if not shared.evicted_alike(ctx, [states[i] for i in positions], probe, now, flat.sim.pending()):
        return None
    return LeanSharer(search, first.workload, first.namespace, key, positions, constraints, open_nodes, fork)


def carry_on(search: "LeanSearch", pristine: SimCluster, snapshot: Snapshot, sharer: LeanSharer,
             edited_snapshot: Snapshot, forced: list) -> parallel.Verdict | None:
    """In the re-plan's process: the verdict of the re-plan on `edited_snapshot`, played on from
    where the lean plan `search` stands (the level it handed over); None when the two did not
    start alike, or the cluster cannot be turned (the caller re-plans from scratch). `forced`:
    forced.py's proof for the plan's other workloads (shared.carry_on's)."""
    if not forced or shared._trapped(search.strandings, sharer):
        return None
    ctx = search.ctx
    base = {p.key: p for p in snapshot.pods}
    edited = {p.key: p for p in edited_snapshot.pods if base.get(p.key) is not p}
    if not shared._same_start(ctx, pristine, shared._context(ctx, edited, sharer), sharer.positions):
        return None
    # W's templates: a replacement's is its pod's, and a template's owner is one workload's
    templates = {(d.pod.namespace, spread_key_of(d.pod)) for n in ctx.targets for d in ctx.decisions[n]
                 if d.action == EVICT and d.pod.namespace == sharer.namespace
                 and ctx.workload_of.get(d.pod.key) == sharer.workload}
    if not search.honor_from_here(templates, sharer.topology_key, ctx.tracked[sharer.positions[0]].pod):
        return None
    at = len(search.steps)
    search.stop_reporting()  # a verdict reads none of it
    search.on_level = None  # the plan's progress is the parent's to show
    search._greedy()
    return search.answer(False, at)


