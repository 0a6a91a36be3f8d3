"""A proof, before any order is searched, that no order drains the targets safely.

Once every target is drained, the target nodes are cordoned and their evicted pods' replacements run on the other
nodes. Take a tracked DoNotSchedule constraint whose domains include some that are *closed* at that point: every node
of the domain is cordoned, yet the domain still counts (nodeTaintsPolicy Ignore, the default). A closed domain keeps
only the matching pods nobody evicts, so after the last step the global minimum is at most the smallest closed count
`m`, and a safe plan leaves every open domain at most `m + limit` (limit: maxSkew, or the skew before the drain when
that was higher). The open domains must hold their remaining pods plus every replacement, so when

    open pods after the evictions + replacements  >  open domains × (m + limit)

the last step strands a replacement or ends above the limit, whatever the order and batch sizes — the search would
only spend its whole backtracking allowance proving it (a zone drained under nodeTaintsPolicy Ignore is the usual case).

The counts come from the simulation with every target cordoned (every rule of spread's counting applies), less the
planned evictions, taken out as the simulation's shifts would take them (counts.leaving): those of replaced pods are the
replacements to place. A workload whose pods tolerate the cordon taint is left out: its replacements may go to cordoned
nodes, so no domain is closed to them.

When the plan deletes each drained Node once it is empty (the DeleteDrainedNodes remedy), a target that holds a pod a
PDB blocks from the start is never emptied, so never deleted, and its domain stays; the proof takes every other target
as deleted after the evictions. Taking as deleted a node that in fact stays (one whose pods a PDB's budget blocks once
the drain has used it, or one a cordon-tolerating replacement lands on) only takes a closed domain out of the proof,
never puts one in: what it proves holds for the plan as played. The deletions are not simulated (each would move every
memoised spread state): a closed domain whose every node is deleted is left out, and an open domain loses the matching
pods left on its deleted nodes (pods no step evicts, such as DaemonSet pods a selector matches). A closed domain that
stays keeps such pods in its count: that can only raise the minimum the proof assumes, so the room it finds is never too
small.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kubectl_tspread.views.drain.core import counts
from kubectl_tspread.views.drain.diagnose import closed_domains
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.views.drain.core.steps import Context, World, tracked_states
from kubectl_tspread.engine import filters
from kubectl_tspread.model import Pod


@dataclass(frozen=True, slots=True)
class ForcedHarm:
    """One tracked constraint no order can keep within its limit."""

    namespace: str
    workload: str
    topology_key: str
    replacements: int  # matching replacements the open domains must take
    room: int  # what they can take within the limit


def forced_harm(ctx: Context, world: World) -> list[ForcedHarm]:
    """The tracked hard constraints that every complete drain of ctx.targets breaks."""
    deleted = _deleted(ctx, world.sim)
    maybe = _candidates(ctx, world, deleted)
    if not maybe:
        return []
    sim = world.sim
    sim.fork()  # undone below: the search starts from the world as it was
    try:
        return _proven(ctx, world, sim, maybe, deleted)
    finally:
        sim.revert()


def _deleted(ctx: Context, sim: SimCluster) -> frozenset[str]:
    """The targets every complete plan deletes (none unless it deletes drained nodes): all but those that hold a
    PDB-blocked pod, which no step evicts."""
    if not ctx.delete_drained_nodes:
        return frozenset()
    return frozenset(n for n in ctx.targets if not any(p.key in ctx.blocked for p in sim.pods_on(n)))


def _proven(ctx: Context, world: World, sim: SimCluster, maybe: list[int], deleted: frozenset[str]
            ) -> list[ForcedHarm]:
    """forced_harm's proof, played on `sim`: every target cordoned; the pods the constraints count then taken out of
    their counts as their evictions would take them (counts.leaving); the `deleted` targets counted as gone (module
    docstring)."""
    sim.cordon(ctx.targets)
    states = tracked_states(ctx, sim)
    by_namespace: dict[str, list[int]] = defaultdict(list)
    for i in maybe:
        by_namespace[states[i].namespace].append(i)
    replaced: dict[int, list[Pod]] = defaultdict(list)  # per constraint, the planned evictions it counts
    others: dict[int, list[Pod]] = defaultdict(list)
    for n in ctx.targets:
        for p in world.remaining.get(n, ()):
            p = sim.pods.get(p.key, p)
            if not counts.counted(p):
                continue  # unbound or terminating: in no count
            into = replaced if ctx.decision(p).replaced else others
            for i in by_namespace.get(p.namespace, ()):
                if counts.counts_in(states[i], p):
                    into[i].append(p)
    out = []
    for i in maybe:
        t, cs = ctx.tracked[i], states[i]
        closing = closed_domains(sim, cs)
        # closed domains that stay: the minimum after the drain is at most their smallest count
        staying = [d for d in closing if not deleted.issuperset(d.nodes)]
        if not staying:
            continue
        must = sum(counts.leaving(cs, replaced[i])[0].values())  # the replaced pods leaving the domains' counts
        by_domain, by_node = counts.leaving(cs, replaced[i] + others[i])
        closed = [d.pods - by_domain.get(d.value, 0) for d in staying]
        shut = {d.value for d in closing}
        open_pods = sum(d.pods - by_domain.get(d.value, 0) for d in cs.domains.values() if d.value not in shut)
        if deleted:  # the matching pods left on deleted nodes of open domains (node_domain: as counts.shifted reads it)
            open_pods -= sum(cs.node_counts.get(n, 0) - by_node.get(n, 0) for n in deleted
                             if (value := cs.node_domain.get(n)) is not None and value not in shut)
        room = (len(cs.domains) - len(closing)) * (min(closed) + t.limit) - open_pods
        if must > room:
            out.append(ForcedHarm(t.pod.namespace, t.workload, cs.constraint.topology_key, must, max(room, 0)))
    return out


def _candidates(ctx: Context, world: World, deleted: frozenset[str]) -> list[int]:
    """The tracked hard constraints (positions in ctx.tracked) that can meet the proof's condition on today's counts: a
    domain whose every node will be cordoned, and one of them not `deleted`, and, as the replacements and the open pods
    are each at most the matching pods P, 2 × P > open domains × limit (never so for a hostname constraint over many
    nodes)."""
    sim = world.sim
    closing = set(ctx.targets) | {n for n, node in sim.nodes.items() if node.unschedulable}
    out = []
    for i, (t, cs) in enumerate(zip(ctx.tracked, tracked_states(ctx, sim))):
        if not cs.constraint.hard or filters.tolerates_cordon(t.pod):
            continue  # a pod that tolerates the cordon can still go to a cordoned domain
        pods = sum(cs.node_counts.values())  # pods on excluded nodes too: an upper bound
        if (len(cs.domains) - len(closing)) * t.limit >= 2 * pods:
            continue
        if any(d.nodes and closing.issuperset(d.nodes) and not deleted.issuperset(d.nodes)
               for d in cs.domains.values()):
            out.append(i)
    return out
