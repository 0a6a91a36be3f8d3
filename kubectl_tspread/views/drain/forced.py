"""A proof, before any order is searched, that no order drains the targets safely, which the search would spend its
whole backtracking allowance finding out (typically for a zone drained under nodeTaintsPolicy Ignore).

After the last step every target is cordoned. A tracked DoNotSchedule constraint's *closed* domains (every node
cordoned, yet still counted: nodeTaintsPolicy defaults to Ignore) keep only the matching pods nobody evicts, so the
global minimum ends at most the smallest closed count `m`, and a safe plan leaves each open domain at most `m + limit`
(limit: maxSkew, or the skew before the drain when higher). Whatever the order and batch sizes, the last step strands a
replacement or ends above the limit when `open pods after the evictions + replacements > open domains × (m + limit)`.
A workload whose pods tolerate the cordon taint is left out: no domain is closed to its replacements.

Under DeleteDrainedNodes every target counts as deleted but those holding a pod a PDB blocks from the start. Taking
as deleted a node that stays (a PDB's budget used up mid-drain, a cordon-tolerating replacement on it) only takes closed
domains out of the proof, so it holds for the plan as played. Deletions are not simulated (each would move every
memoised spread state): a closed domain whose nodes are all deleted is left out, and an open domain loses the matching
pods left on its deleted nodes (pods no step evicts, such as DaemonSet pods). A closed domain that stays keeps them in
its count, which only raises the minimum the proof assumes: the room it finds is never too small.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kubectl_tspread.views.drain.core import counts
from kubectl_tspread.views.drain.diagnose import closed_domains
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.views.drain.core.steps import Context, World, tracked_states
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.model import Pod


@dataclass(frozen=True, slots=True)
class ForcedHarm:
    """One tracked constraint no order can keep within its limit."""

    namespace: str
    workload: str
    topology_key: str
    replacements: int  # matching replacements the open domains must take
    room: int  # what they can take within the limit


def forced_harm(ctx: Context, world: World, deleting: bool | None = None) -> list[ForcedHarm]:
    """The tracked hard constraints that every complete drain of ctx.targets breaks (under DeleteDrainedNodes if
    `deleting`; None: as ctx says)."""
    deleted = frozenset(n for n in ctx.targets if not any(p.key in ctx.blocked for p in world.sim.pods_on(n))) \
        if (ctx.delete_drained_nodes if deleting is None else deleting) else frozenset()
    maybe = _candidates(ctx, world, deleted)
    if not maybe:
        return []
    sim = world.sim
    sim.fork()  # undone below: the search starts from the world as it was
    try:
        return _proven(ctx, world, sim, maybe, deleted)
    finally:
        sim.revert()


def _proven(ctx: Context, world: World, sim: SimCluster, maybe: list[int], deleted: frozenset[str]
            ) -> list[ForcedHarm]:
    """The counts are the simulation's with every target cordoned, less the planned evictions (counts.leaving); the
    replaced pods among those are the replacements to place."""
    sim.cordon(ctx.targets)
    states = tracked_states(ctx, sim)
    by_namespace: dict[str, list[int]] = defaultdict(list)
    for i in maybe:
        by_namespace[states[i].namespace].append(i)
    alike: dict[tuple[str, int], tuple[list[Pod], list[Pod]]] = {}  # (namespace, id(labels)): (replaced, not)
    for n in ctx.targets:
        for p in world.remaining.get(n, ()):
            p = sim.pods.get(p.key, p)
            if spread.counted(p):  # unbound or terminating: in no count
                alike.setdefault((p.namespace, id(p.labels)), ([], []))[not ctx.decision(p).replaced].append(p)
    replaced, others = defaultdict(list), defaultdict(list)  # per constraint, the planned evictions it counts
    for (namespace, _), (renewed, gone) in alike.items():  # a workload's pods share their labels: judged once
        for i in by_namespace.get(namespace, ()):
            if counts.counts_in(states[i], (renewed or gone)[0]):
                replaced[i] += renewed
                others[i] += gone
    out = []
    for i in maybe:
        t, cs = ctx.tracked[i], states[i]
        closing = closed_domains(sim, cs)
        staying = [d for d in closing if not deleted.issuperset(d.nodes)]
        if not staying:
            continue
        must = sum(counts.leaving(cs, replaced[i])[0].values())
        by_domain, by_node = counts.leaving(cs, replaced[i] + others[i])
        closed, shut = [d.pods - by_domain.get(d.value, 0) for d in staying], {d.value for d in closing}
        open_pods = sum(d.pods - by_domain.get(d.value, 0) for d in cs.domains.values() if d.value not in shut)
        if deleted:  # node_domain: as counts.shifted reads it
            open_pods -= sum(cs.node_counts.get(n, 0) - by_node.get(n, 0) for n in deleted
                             if (value := cs.node_domain.get(n)) is not None and value not in shut)
        room = (len(cs.domains) - len(closing)) * (min(closed) + t.limit) - open_pods
        if must > room:
            out.append(ForcedHarm(t.pod.namespace, t.workload, cs.constraint.topology_key, must, max(room, 0)))
    return out


def _candidates(ctx: Context, world: World, deleted: frozenset[str]) -> list[int]:
    """Positions in ctx.tracked of the hard constraints that may meet the proof's condition on today's counts."""
    sim = world.sim
    closing = set(ctx.targets) | {n for n, node in sim.nodes.items() if node.unschedulable}
    out = []
    for i, (t, cs) in enumerate(zip(ctx.tracked, tracked_states(ctx, sim))):
        if not cs.constraint.hard or filters.tolerates_cordon(t.pod):
            continue
        pods = sum(cs.node_counts.values())  # pods on excluded nodes too: an upper bound
        if (len(cs.domains) - len(closing)) * t.limit >= 2 * pods:  # replacements and open pods: each at most `pods`
            continue
        if any(d.nodes and closing.issuperset(d.nodes) and not deleted.issuperset(d.nodes)
               for d in cs.domains.values()):
            out.append(i)
    return out
