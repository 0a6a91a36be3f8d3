"""DefaultPreemption's PostFilter: which node preemption would pick, and with how many victims.

Follows pkg/scheduler/framework/preemption and plugins/defaultpreemption:

1. Candidate nodes are those whose verdict is Unschedulable (an UnschedulableAndUnresolvable
   node "Preemption is not helpful for scheduling").
2. On each, every pod of lower priority than the incoming pod is a potential victim; with all
   of them gone the node must pass every filter, else it is no candidate (its reasons are the
   node's then). A node without potential victims is "No preemption victims found for
   incoming pod".
3. The victims are ordered most important first (higher priority, then earlier start) and
   split into PDB-violating ones (a PodDisruptionBudget of theirs would go below zero
   disruptions allowed) and the rest; each, violating ones first, is put back ("reprieved")
   when the pod still fits with it. The ones that cannot be put back are the victims.
4. Among the candidates the node is picked by, in turn: fewest PDB violations, lowest
   highest victim priority, lowest sum of victim priorities, fewest victims, latest start of
   the highest-priority victims. Nodes equal on all five are a tie the scheduler breaks by
   map order (at random): `Preemption.tied` lists them.

Start times: the scheduler reads status.startTime; the snapshot keeps creationTimestamp,
which orders pods the same way when they started in the order they were created.
Upstream's dry run moves PodTopologySpread's counts pod by pod (RemovePod/AddPod): a
terminating victim, never counted, is still subtracted (modelled: `_as_removed`), and
after a victim is put back the minimum it tracks (the two smallest domains, chosen in map
order) can overstate the true one (not modelled: the counts here are recomputed).
Not modelled either: PDBs' status.disruptedPods, preemptionPolicy Never, nominated pods of
other preemptors, and pod-group victims.

    >>> # node n1 holds a priority-0 pod using the cpu the incoming priority-100 pod needs:
    >>> # Preemption(node='n1', victims=1, tied=('n1',), reasons=())
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from kubectl_tspread.engine import spread
from kubectl_tspread.engine.filters import NodeVerdict, evaluate_node
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.spread import UNSCHEDULABLE
from kubectl_tspread.model import Pdb, Pod

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"

_MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Preemption:
    """The outcome: a chosen node and its victim count, or (node None) every node's reasons."""

    node: str | None
    victims: int = 0
    tied: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()  # one per node (several for multi-reason filters) when node is None


@dataclass(frozen=True, slots=True)
class _Candidate:
    node: str
    victims: tuple[Pod, ...]  # most important first
    pdb_violations: int


def _importance(p: Pod) -> tuple[int, str]:
    """Sort key, most important first: higher priority, then the earlier start."""
    return (-p.priority, p.created)


def _verdict_without(index: ClusterIndex, pod: Pod, node_name: str, gone: set[str]) -> NodeVerdict:
    snap = index.snapshot
    without = ClusterIndex(replace(snap, pods=tuple(p for p in snap.pods if p.key not in gone)))
    state = spread.compute(without, pod)
    terminating = [p for p in index.pods_by_node.get(node_name, ()) if p.key in gone and p.terminating]
    if terminating and state.hard:
        state = _as_removed(state, pod, terminating)
    return evaluate_node(without, pod, without.nodes[node_name], spread_state=state)


def _as_removed(state: spread.SpreadState, pod: Pod, terminating: list[Pod]) -> spread.SpreadState:
    """PodTopologySpread's RemovePod decrements its domain counts for every victim it is told
    of, a terminating one too, though counting skipped it: the preemption dry run judges the
    node with those counts (pods of the incoming pod's namespace its selector matches, on a
    node that makes a domain)."""
    hard = []
    for cs in state.constraints:
        if not cs.constraint.hard:
            hard.append(cs)
            continue
        deltas: dict[str, int] = {}
        for p in terminating:
            value = cs.node_domain.get(p.node_name)
            if value is not None and p.namespace == pod.namespace and cs.selector.matches(p.labels):
                deltas[value] = deltas.get(value, 0) - 1
        hard.append(spread.shifted(cs, deltas) if deltas else cs)
    return spread.SpreadState(pod, tuple(hard), state.require_all_soft_keys)


def _split_by_pdb(victims: Sequence[Pod], pdbs: Sequence[Pdb]) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating), each in the given order: a pod violates when a budget of its
    namespace selecting it has no disruption left once the pods before it are counted."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[Pod] = []
    fine: list[Pod] = []
    for p in victims:
        hit = False
        if p.labels:
            for i, b in enumerate(pdbs):
                if b.namespace != p.namespace or b.selector.is_nothing or b.selector.empty \
                        or not b.selector.matches(p.labels):
                    continue
                allowed[i] -= 1
                hit = hit or allowed[i] < 0
        (violating if hit else fine).append(p)
    return violating, fine


def _select_victims(index: ClusterIndex, pod: Pod, node_name: str,
                    potential: list[Pod]) -> tuple[_Candidate | None, NodeVerdict]:
    """The victims on one node after reprieves; None (with the node's verdict) when the pod
    does not fit even with every potential victim gone."""
    gone = {p.key for p in potential}
    verdict = _verdict_without(index, pod, node_name, gone)
    if not verdict.passes:
        return None, verdict
    ordered = sorted(potential, key=_importance)
    violating, fine = _split_by_pdb(ordered, index.snapshot.pdbs)
    victims: list[Pod] = []
    violations = 0
    for group, counts in ((violating, True), (fine, False)):
        for p in group:
            gone.discard(p.key)
            if _verdict_without(index, pod, node_name, gone).passes:
                continue  # reprieved
            gone.add(p.key)
            victims.append(p)
            violations += int(counts)
    return _Candidate(node_name, tuple(victims), violations), verdict


def _pick(candidates: list[_Candidate]) -> tuple[_Candidate, tuple[str, ...]]:
    """pickOneNodeForPreemption's criteria in order; the survivors of all five are a tie."""
    def highest(c: _Candidate) -> int:
        return c.victims[0].priority if c.victims else 0

    def priority_sum(c: _Candidate) -> int:
        return sum(v.priority + _MAX_INT32 + 1 for v in c.victims)

    def earliest_top_start(c: _Candidate) -> str:
        top = highest(c)
        return min((v.created for v in c.victims if v.priority == top), default="")

    criteria = (lambda c: -c.pdb_violations, lambda c: -highest(c), lambda c: -priority_sum(c),
                lambda c: -len(c.victims), earliest_top_start)
    left = list(candidates)
    for score in criteria:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            break
    left.sort(key=lambda c: c.node)
    return left[0], tuple(c.node for c in left)


def simulate(verdicts: Sequence[NodeVerdict], pod: Pod, index: ClusterIndex, *, pick: bool = True) -> Preemption:
    """The PostFilter's outcome for a pod no node accepts. With pick=False a successful
    preemption stops at the first candidate (before 1.37 the message does not name it)."""
    reasons: list[str] = []
    candidates: list[_Candidate] = []
    for v in verdicts:
        if v.status != UNSCHEDULABLE:
            reasons.append(PREEMPTION_NOT_HELPFUL)
            continue
        potential = [p for p in index.pods_by_node.get(v.node, ()) if p.priority < pod.priority and p.key != pod.key]
        if not potential:
            reasons.append(NO_VICTIMS)
            continue
        found, after = _select_victims(index, pod, v.node, potential) if pick else _fits_without(index, pod, v.node,
                                                                                                  potential)
        if found is not None:
            candidates.append(found)
            if not pick:
                break
        else:
            reasons.extend(f.reason for f in after.first_failures)
    if not candidates:
        return Preemption(None, reasons=tuple(reasons))
    chosen, tied = _pick(candidates)
    return Preemption(chosen.node, len(chosen.victims), tied)


def _fits_without(index: ClusterIndex, pod: Pod, node_name: str,
                  potential: list[Pod]) -> tuple[_Candidate | None, NodeVerdict]:
    verdict = _verdict_without(index, pod, node_name, {p.key for p in potential})
    return (_Candidate(node_name, tuple(potential), 0) if verdict.passes else None), verdict
