"""Findings: what makes a drain unsafe, per workload, as data (render/drain.py words them).

One finding per (code, workload) for stranded pods — the pods, the first step at
which one strands and the numbers of the first (the distribution, the cordoned
domains, the scheduler's reasons) — and one per refusal code for the pods kubectl
drain itself would refuse (DaemonSetPod, LocalStorage, UnmanagedPod).
"""

from __future__ import annotations

from typing import Callable, Sequence

from kubectl_tspread.drain.model import INFO, ORDER_MATTERS, SKEW_EXCEEDED, DrainPlan, Finding, Remedy, Stranded
from kubectl_tspread.drain.pods import FLAG_FOR, PodDecision


def build_findings(plan: DrainPlan, refused: Sequence[PodDecision]) -> list[Finding]:
    groups: dict[tuple[str, str | None], list] = {}
    for s in plan.stranded:
        groups.setdefault((s.reason, s.workload), []).append(s)
    out = [stranded_finding(items) for items in groups.values()]
    out += _skew_findings(plan, {w for _, w in groups})
    by_code: dict[str, list[PodDecision]] = {}
    for d in refused:
        by_code.setdefault(d.code or "", []).append(d)
    for code, ds in sorted(by_code.items()):
        out.append(Finding(code, None, tuple(d.pod.key for d in ds), None,
                           {"message": ds[0].message, "flag": FLAG_FOR.get(code, "")}))
    return out


def stranded_finding(items: Sequence[Stranded]) -> Finding:
    """The finding of stranded pods of one (code, workload): its pods, and the step and
    numbers of the first to strand."""
    first = min(items, key=lambda s: s.step)
    return Finding(first.reason, first.workload, tuple(f"{s.namespace}/{s.name}" for s in items), first.step,
                   dict(first.details))


def _skew_findings(plan: DrainPlan, explained: set) -> list[Finding]:
    """A hard constraint above its limit after a step, for workloads no stranded pod explains."""
    out, seen = [], set()
    for step in plan.steps:
        for c in step.constraints_after:
            k = (c.workload, c.namespace, c.topology_key)
            if not c.exceeded or c.workload in explained or k in seen:
                continue
            seen.add(k)
            out.append(Finding(SKEW_EXCEEDED, c.workload, (), step.number, {
                "namespace": c.namespace, "topologyKey": c.topology_key, "maxSkew": c.max_skew,
                "limit": c.limit, "skew": c.skew, "distribution": dict(c.distribution)}))
    return out


def plan_order(plan: DrainPlan) -> list[str]:
    return list(dict.fromkeys(n for s in plan.steps for n in s.nodes))


def order_finding(plan: DrainPlan, given_safe: Callable[[], bool]) -> list[Finding]:
    """Info for a safe plan whose order differs from the order the nodes were given in,
    when that given order would not be safe (checked by simulation)."""
    order = plan_order(plan)
    if order == list(plan.nodes) or given_safe():
        return []
    remedy = Remedy("Order", {"order": order}, True, True)
    return [Finding(ORDER_MATTERS, None, (), None, {"givenOrder": list(plan.nodes), "order": order},
                    (remedy,), INFO)]


def already_violated(plan: DrainPlan) -> list[dict]:
    """The DoNotSchedule constraints that were already above maxSkew before the drain and that
    the plan leaves above it (never worse: their limit is the skew they had), with their skew
    before and after: a SAFE verdict names them, so it never reads as "all within maxSkew"
    next to a VIOLATED row. Every step judges every tracked constraint, so the last step's
    judgements are the state the drain leaves."""
    if not plan.steps:
        return []
    out = []
    for c in plan.steps[-1].constraints_after:
        if c.when_unsatisfiable == "DoNotSchedule" and c.limit > c.max_skew and c.skew > c.max_skew:
            out.append({"workload": c.workload, "namespace": c.namespace, "topologyKey": c.topology_key,
                        "maxSkew": c.max_skew, "skewBefore": c.limit, "skewAfter": c.skew})
    return out
