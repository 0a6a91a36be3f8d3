"""A proof, before any order is searched, that no order drains the targets safely.

Once every target is drained, the target nodes are cordoned and their evicted pods'
replacements run on the other nodes. Take a tracked DoNotSchedule constraint whose
domains include some that are *closed* at that point: every node of the domain is
cordoned, yet the domain still counts (nodeTaintsPolicy Ignore, the default). A closed
domain keeps only the matching pods nobody evicts, so after the last step the global
minimum is at most the smallest closed count `m`, and a safe plan leaves every open
domain at most `m + limit` (limit: maxSkew, or the skew before the drain when that was
higher). The open domains must hold their remaining pods plus every replacement, so
when

    open pods after the evictions + replacements  >  open domains × (m + limit)

the last step strands a replacement or ends above the limit, whatever the order and
batch sizes — the search would only spend its whole backtracking allowance proving it
(a zone drained under nodeTaintsPolicy Ignore is the usual case). The counts come
from the simulation (every rule of spread's counting applies): the targets cordoned,
then the planned evictions of replaced pods (the drop is the replacements to place),
then the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_tspread.drain.steps import Context, World, tracked_states


@dataclass(frozen=True, slots=True)
class ForcedHarm:
    """One tracked constraint no order can keep within its limit."""

    workload: str
    topology_key: str
    replacements: int  # matching replacements the open domains must take
    room: int  # what they can take within the limit


def forced_harm(ctx: Context, world: World) -> list[ForcedHarm]:
    """The tracked hard constraints that every complete drain of ctx.targets breaks."""
    if ctx.delete_drained_nodes:
        return []  # a drained node that is deleted takes its domain with it
    sim = world.sim.copy()
    sim.cordon(ctx.targets)
    before = _totals(ctx, sim)
    planned = [p for n in ctx.targets for p in world.remaining.get(n, ())]
    for p in planned:
        if ctx.decision(p).replaced:
            sim.evict(p)
    replaced = _totals(ctx, sim)
    for p in planned:
        if not ctx.decision(p).replaced:
            sim.evict(p)
    out = []
    for t, cs, b, r in zip(ctx.tracked, tracked_states(ctx, sim), before, replaced):
        if not cs.constraint.hard:
            continue
        closed = [d.pods for d in cs.domains.values()
                  if d.nodes and all(sim.nodes[n].unschedulable for n in d.nodes if n in sim.nodes)]
        if not closed:
            continue
        open_pods = sum(d.pods for d in cs.domains.values()) - sum(closed)
        room = (len(cs.domains) - len(closed)) * (min(closed) + t.limit) - open_pods
        if b - r > room:
            out.append(ForcedHarm(t.workload, cs.constraint.topology_key, b - r, max(room, 0)))
    return out


def _totals(ctx: Context, sim) -> list[int]:
    return [sum(d.pods for d in cs.domains.values()) for cs in tracked_states(ctx, sim)]
