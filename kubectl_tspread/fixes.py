"""Fixes for a pending pod, each proven on a changed copy of the snapshot.

Pure: every candidate is a function Snapshot -> Snapshot built with
dataclasses.replace on records (a whatif.Change); the pod then goes through every
filter on the changed cluster (whatif.fit_nodes: a patched view of the index, with the
node-local filters re-run only where the change touched a node; `schedulable_nodes`
re-indexes the changed snapshot and is the reference it agrees with). Only candidates
after which some node passes every filter are returned, marked verified, cheapest first.

Cheapest means least disruptive to the cluster and to the guarantees the user asked
for: undoing a cordon or adding a missing label restores what was meant; editing the
constraint weakens it; evicting pods disturbs other workloads; a node costs money;
ScheduleAnyway gives the guarantee up altogether.

Suggestions are data (action, numbers, the nodes the pod would fit on); the words are
rendered by render/pending.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Sequence

from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import node_untolerated_taint
from kubectl_tspread.fixes_nodes import (
    ADD_NODE,
    DELETE_NODES,
    EVICT_LOWER_PRIORITY,
    LABEL_NODES,
    UNCORDON,
    Candidate,
    add_node_candidates,
    delete_nodes_candidates,
    evict_candidates,
    label_nodes_candidates,
    uncordon_candidates,
)
from kubectl_tspread.model import DO_NOT_SCHEDULE, HONOR, IGNORE, SCHEDULE_ANYWAY, Pod, Snapshot
from kubectl_tspread.whatif import Baseline, Change, fit_nodes

SET_NODE_TAINTS_POLICY_HONOR = "SetNodeTaintsPolicyHonor"
LOWER_MIN_DOMAINS = "LowerMinDomains"
RAISE_MAX_SKEW = "RaiseMaxSkew"
SCHEDULE_ANYWAY_ACTION = "ScheduleAnyway"

# cheapest first; see the module docstring for the reasoning
COST = {
    UNCORDON: 10, LABEL_NODES: 20, DELETE_NODES: 30, SET_NODE_TAINTS_POLICY_HONOR: 40,
    LOWER_MIN_DOMAINS: 50, RAISE_MAX_SKEW: 60, EVICT_LOWER_PRIORITY: 70, ADD_NODE: 80,
    SCHEDULE_ANYWAY_ACTION: 90,
}


@dataclass(frozen=True, slots=True)
class Suggestion:
    action: str
    params: dict[str, Any] = field(default_factory=dict)
    nodes: tuple[str, ...] = ()  # where the pod fits once the change is made
    verified: bool = True

    @property
    def cost(self) -> int:
        return COST[self.action]


def schedulable_nodes(snapshot: Snapshot, pod_key: str) -> tuple[str, ...]:
    """Nodes on which the pod keyed `pod_key` passes every filter in `snapshot`."""
    index = ClusterIndex(snapshot)
    pod = next(p for p in snapshot.pods if p.key == pod_key)
    return tuple(v.node for v in filters.evaluate(index, pod) if v.passes)


def verify(snapshot: Snapshot, pod: Pod, candidate: Candidate,
           base: Baseline | None = None) -> Suggestion | None:
    """Apply `candidate` to a copy of the snapshot; a Suggestion only if the pod then fits.

    With `base` (the pod's evaluation on `snapshot`'s index) the change is checked on a
    patched view of that index instead of a re-indexed copy."""
    fit = None if base is None else fit_nodes(base, candidate.apply)
    if fit is None:
        fit = schedulable_nodes(candidate.apply(snapshot), pod.key)
    if not fit:
        return None
    return Suggestion(candidate.action, dict(candidate.params), fit)


def propose_fixes(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                  state: spread.SpreadState,
                  partitions: dict[tuple, spread.Partition] | None = None) -> tuple[list[Suggestion], list[str]]:
    """(verified suggestions cheapest first, every action that was tried).

    `partitions` is spread.compute's memo for `index` when the caller keeps one.

    RaiseMaxSkew tries its values in increasing order and keeps only the smallest that
    works per constraint; EvictLowerPriority keeps the smallest working victim set; the
    other kinds keep each working variant (each cordoned node, each domain).
    """
    snap = index.snapshot
    found: list[Suggestion] = []
    tried: list[str] = []
    raised: set[int] = set()  # constraint positions whose smallest working maxSkew is known
    base = Baseline.of(index, pod, verdicts, partitions)
    for action, group in _candidate_groups(index, pod, verdicts, state):
        if group:
            tried.append(action)
        for cand in group:
            if action == RAISE_MAX_SKEW and cand.params["position"] in raised:
                continue
            s = verify(snap, pod, cand, base)
            if s is None:
                continue
            found.append(s)
            if action == RAISE_MAX_SKEW:
                raised.add(cand.params["position"])
            elif action == EVICT_LOWER_PRIORITY:
                break  # variants come fewest victims first: one working set is the answer
    found.sort(key=lambda s: s.cost)  # stable: variants keep their generation order
    return found, tried


def _candidate_groups(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                      state: spread.SpreadState) -> Iterator[tuple[str, list[Candidate]]]:
    yield UNCORDON, uncordon_candidates(index, pod, verdicts)
    yield LABEL_NODES, label_nodes_candidates(index, pod, state, verdicts)
    yield DELETE_NODES, delete_nodes_candidates(index, state)
    yield SET_NODE_TAINTS_POLICY_HONOR, taints_policy_candidates(index, pod, state)
    yield LOWER_MIN_DOMAINS, min_domains_candidates(pod, state)
    yield RAISE_MAX_SKEW, max_skew_candidates(index, pod, state)
    yield EVICT_LOWER_PRIORITY, evict_candidates(index, pod, verdicts)
    yield ADD_NODE, add_node_candidates(index, pod, verdicts, state)
    yield SCHEDULE_ANYWAY_ACTION, schedule_anyway_candidates(pod, state)


# -- constraint edits: only a pod's own constraints can be edited (system defaults never filter)

def _positions(pod: Pod, state: spread.SpreadState) -> list[tuple[int, spread.ConstraintState]]:
    """(position in pod.spread, state) of each hard constraint the pod carries itself."""
    if not pod.spread:
        return []
    return [(i, cs) for i, cs in enumerate(state.constraints) if cs.constraint.hard]


def with_constraint(pod: Pod, position: int, **changes: Any) -> Change:
    """A change that edits one constraint of the pod (what editing its workload's template does)."""
    cons = list(pod.spread)
    cons[position] = replace(cons[position], **changes)
    return Change(replaced_pods=((pod, replace(pod, spread=tuple(cons))),))


def _constraint_params(cs: spread.ConstraintState, position: int, **extra: Any) -> dict[str, Any]:
    c = cs.constraint
    return {"key": c.topology_key, "position": position, **extra}


def taints_policy_candidates(index: ClusterIndex, pod: Pod, state: spread.SpreadState) -> list[Candidate]:
    """nodeTaintsPolicy Ignore → Honor, when some node carries a taint (or cordon) the pod
    does not tolerate: with Honor such nodes stop making domains."""
    if not any(node_untolerated_taint(pod, n) is not None for n in index.nodes.values()):
        return []
    return [
        Candidate(SET_NODE_TAINTS_POLICY_HONOR, _constraint_params(cs, i),
                  with_constraint(pod, i, node_taints_policy=HONOR))
        for i, cs in _positions(pod, state) if cs.constraint.node_taints_policy == IGNORE
    ]


def min_domains_candidates(pod: Pod, state: spread.SpreadState) -> list[Candidate]:
    """minDomains above the number of domains pins globalMin to 0; lower it to that number."""
    out = []
    for i, cs in _positions(pod, state):
        have = len(cs.domains)
        if cs.constraint.min_domains > have >= 1:
            out.append(Candidate(LOWER_MIN_DOMAINS,
                                 _constraint_params(cs, i, old=cs.constraint.min_domains, new=have),
                                 with_constraint(pod, i, min_domains=have)))
    return out


def max_skew_candidates(index: ClusterIndex, pod: Pod, state: spread.SpreadState) -> list[Candidate]:
    """maxSkew raised to each skew the pod would create somewhere, smallest first.

    zones a=5 b=5 c=3 (c full), maxSkew 1 → skews if placed are 3, 3, 1: try 3.
    Every node with the key is judged by its label value, as in the Filter.
    """
    out = []
    for i, cs in _positions(pod, state):
        key, old = cs.constraint.topology_key, cs.constraint.max_skew
        values = {n.labels[key] for n in index.nodes.values() if key in n.labels}
        skews = sorted({cs.skew_if_placed(v) for v in values if cs.skew_if_placed(v) > old})
        out.extend(Candidate(RAISE_MAX_SKEW, _constraint_params(cs, i, old=old, new=s),
                             with_constraint(pod, i, max_skew=s)) for s in skews)
    return out


def schedule_anyway_candidates(pod: Pod, state: spread.SpreadState) -> list[Candidate]:
    return [
        Candidate(SCHEDULE_ANYWAY_ACTION, _constraint_params(cs, i, max_skew=cs.constraint.max_skew),
                  with_constraint(pod, i, when_unsatisfiable=SCHEDULE_ANYWAY))
        for i, cs in _positions(pod, state) if cs.constraint.when_unsatisfiable == DO_NOT_SCHEDULE
    ]
