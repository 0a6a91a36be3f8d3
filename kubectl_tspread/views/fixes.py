"""Fixes for a pending pod, each proven on a changed copy of the snapshot.

Pure: every candidate is a function Snapshot -> Snapshot built with
dataclasses.replace on records (a whatif.Change); the pod then goes through every
filter on the changed cluster (whatif.fit_nodes: a patched view of the index, with the
node-local filters re-run only where the change touched a node; `schedulable_nodes`
re-indexes the changed snapshot and is the reference it agrees with). Only candidates
after which some node passes every filter are returned, marked verified, cheapest first.

Fixes come in three tiers (fixes_effects.py): no change to running pods first, then
template edits (each rolls every pod of the workload), then destructive changes (deleting
Node objects that still hold pods or volumes, evicting pods). Within a tier, cheapest means
least disruptive to the cluster and to the guarantees the user asked for: undoing a cordon
or adding a missing label restores what was meant; editing the constraint weakens it; a
node costs money; ScheduleAnyway gives the guarantee up altogether. Each suggestion carries
its side effects (model.SideEffect) and what its verification showed (`verifies`: PodFits).

Suggestions are data (action, numbers, the nodes the pod would fit on); the words are
rendered by render/pending.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator, Sequence

from kubectl_tspread.views import fixes_effects as effects
from kubectl_tspread.views.blockers import Blocker
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import node_untolerated_taint
from kubectl_tspread.views.fixes_nodes import (
    Candidate,
    add_node_candidates,
    delete_nodes_candidates,
    evict_candidates,
    label_nodes_candidates,
    uncordon_candidates,
)
from kubectl_tspread.views.fixes_blockers import (
    labelled_node_candidates,
    larger_node_candidates,
    lower_request_candidates,
)
from kubectl_tspread.model import (
    ADD_LARGER_NODE, ADD_NODE, ADD_NODE_WITH_LABELS, DELETE_NODES, DO_NOT_SCHEDULE, EVICT_LOWER_PRIORITY, HONOR,
    IGNORE, LABEL_NODES, LOWER_MIN_DOMAINS, LOWER_REQUEST, RAISE_MAX_SKEW, SCHEDULE_ANYWAY,
    SCHEDULE_ANYWAY_ACTION, SET_NODE_TAINTS_POLICY_HONOR, UNCORDON, VERIFIES_POD_FITS, Pod,
    ProposedChange, SideEffect, Snapshot,
)
from kubectl_tspread.views.whatif import Baseline, Change, fit_nodes

# cheapest first within a tier; see the module docstring for the reasoning
COST = {
    UNCORDON: 10, LABEL_NODES: 20, DELETE_NODES: 30, SET_NODE_TAINTS_POLICY_HONOR: 40,
    LOWER_MIN_DOMAINS: 50, RAISE_MAX_SKEW: 60, EVICT_LOWER_PRIORITY: 70, ADD_NODE: 80,
    ADD_NODE_WITH_LABELS: 82, ADD_LARGER_NODE: 84, LOWER_REQUEST: 86, SCHEDULE_ANYWAY_ACTION: 90,
}
# edits of the pod's template: its workload rolls every pod to apply them
TEMPLATE_EDITS = frozenset({SET_NODE_TAINTS_POLICY_HONOR, LOWER_MIN_DOMAINS, RAISE_MAX_SKEW,
                            SCHEDULE_ANYWAY_ACTION, LOWER_REQUEST})


# a fix is the change record drain-safe's remedies use too; `nodes`: where the pod then fits
Suggestion = ProposedChange


def cost(s: Suggestion) -> tuple[int, int]:
    """(tier, cost within it): the order fixes are offered in."""
    return s.tier, COST[s.action]


def side_effects(index: ClusterIndex, pod: Pod, candidate: Candidate) -> tuple[SideEffect, ...]:
    """What applying `candidate` does besides letting the pod in (fixes_effects.py)."""
    a, p = candidate.action, candidate.params
    if a == DELETE_NODES:
        return effects.deleting_nodes(index, p["nodes"])
    if a == EVICT_LOWER_PRIORITY:
        keys = set(p["podKeys"])
        return effects.evicting(index, [q for q in index.pods_by_node.get(p["node"], ()) if q.key in keys])
    if a in TEMPLATE_EDITS:
        return effects.template_edit(index, pod, weakens=a in (RAISE_MAX_SKEW, SCHEDULE_ANYWAY_ACTION))
    if a in (ADD_NODE, ADD_NODE_WITH_LABELS, ADD_LARGER_NODE):
        return effects.adding_node(p["name"])
    return ()


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
    return Suggestion(candidate.action, dict(candidate.params), verifies=VERIFIES_POD_FITS, nodes=fit)


def _with_effects(index: ClusterIndex, pod: Pod, candidate: Candidate, s: Suggestion) -> Suggestion:
    return replace(s, side_effects=side_effects(index, pod, candidate))


def propose_fixes(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                  state: spread.SpreadState,
                  partitions: dict[tuple, spread.Partition] | None = None,
                  blockers: Sequence[Blocker] = ()) -> tuple[list[Suggestion], list[str]]:
    """(verified suggestions in tier order, cheapest first within a tier; every action tried).

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
    for action, group in _candidate_groups(index, pod, verdicts, state, blockers):
        if group:
            tried.append(action)
        for cand in group:
            if action == RAISE_MAX_SKEW and cand.params["position"] in raised:
                continue
            s = verify(snap, pod, cand, base)
            if s is None:
                continue
            found.append(_with_effects(index, pod, cand, s))
            if action == RAISE_MAX_SKEW:
                raised.add(cand.params["position"])
            elif action == EVICT_LOWER_PRIORITY:
                break  # variants come fewest victims first: one working set is the answer
    found.sort(key=cost)  # stable: variants keep their generation order
    return found, tried


def _candidate_groups(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                      state: spread.SpreadState,
                      blockers: Sequence[Blocker] = ()) -> Iterator[tuple[str, list[Candidate]]]:
    yield UNCORDON, uncordon_candidates(index, pod, verdicts)
    yield LABEL_NODES, label_nodes_candidates(index, pod, state, verdicts)
    yield DELETE_NODES, delete_nodes_candidates(index, state)
    yield SET_NODE_TAINTS_POLICY_HONOR, taints_policy_candidates(index, pod, state)
    yield LOWER_MIN_DOMAINS, min_domains_candidates(pod, state)
    yield RAISE_MAX_SKEW, max_skew_candidates(index, pod, state)
    yield EVICT_LOWER_PRIORITY, evict_candidates(index, pod, verdicts)
    yield ADD_NODE, add_node_candidates(index, pod, verdicts, state)
    yield ADD_NODE_WITH_LABELS, labelled_node_candidates(index, pod, verdicts, blockers)
    yield ADD_LARGER_NODE, larger_node_candidates(index, pod, verdicts, blockers, state)
    yield LOWER_REQUEST, lower_request_candidates(index, pod, verdicts, blockers)
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
    return {"topologyKey": c.topology_key, "position": position, **extra}


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
        if cs.min_forced_zero and have >= 1:
            out.append(Candidate(LOWER_MIN_DOMAINS,
                                 _constraint_params(cs, i, old=cs.constraint.min_domains, minDomains=have),
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
        out.extend(Candidate(RAISE_MAX_SKEW, _constraint_params(cs, i, old=old, maxSkew=s),
                             with_constraint(pod, i, max_skew=s)) for s in skews)
    return out


def schedule_anyway_candidates(pod: Pod, state: spread.SpreadState) -> list[Candidate]:
    return [
        Candidate(SCHEDULE_ANYWAY_ACTION, _constraint_params(cs, i, maxSkew=cs.constraint.max_skew),
                  with_constraint(pod, i, when_unsatisfiable=SCHEDULE_ANYWAY))
        for i, cs in _positions(pod, state) if cs.constraint.when_unsatisfiable == DO_NOT_SCHEDULE
    ]
