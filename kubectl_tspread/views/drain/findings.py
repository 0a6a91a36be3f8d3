"""What makes a drain unsafe, as data that render/drain.py words: a finding per (code, workload) of stranded pods, and
one per code kubectl drain itself refuses pods for (DaemonSetPod, LocalStorage, UnmanagedPod)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from kubectl_tspread.model.plan import (INFO, NO_CAPACITY, ORDER_MATTERS, SKEW_EXCEEDED, DrainPlan, Finding, Remedy,
                                        Stranded)
from kubectl_tspread.views.drain.pods import FLAG_FOR, PodDecision
from kubectl_tspread.engine import interpod, resources, volumes
from kubectl_tspread.engine.spread import STATUS_VIOLATED


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


def plan_findings(plan: DrainPlan, refused: Sequence[PodDecision], snapshot) -> list[Finding]:
    """The findings of a shown plan (build_findings, hostname traps explained): what any way of making it must give."""
    return explain_hostname_minimum(build_findings(plan, refused), snapshot, plan)


def stranded_finding(items: Sequence[Stranded]) -> Finding:
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


def order_finding(plan: DrainPlan, given_safe: Callable[[], bool]) -> list[Finding]:
    """Info for a safe plan whose order differs from the given one, when the given order would not be safe."""
    order = list(dict.fromkeys(n for s in plan.steps for n in s.nodes))
    if order == list(plan.nodes) or given_safe():
        return []
    return [Finding(ORDER_MATTERS, None, (), None, {"givenOrder": list(plan.nodes), "order": order},
                    (Remedy("Order", {"order": order}, True, True),), INFO)]


def already_violated(plan: DrainPlan) -> list[dict]:
    """DoNotSchedule constraints above maxSkew before the drain (their limit is that skew) and at its end (the last step
    judges all): a SAFE verdict names them, so it never reads "all within maxSkew" beside a VIOLATED row."""
    if not plan.steps:
        return []
    return [{"workload": c.workload, "namespace": c.namespace, "topologyKey": c.topology_key, "maxSkew": c.max_skew,
             "skewBefore": c.limit, "skewAfter": c.skew}
            for c in plan.steps[-1].constraints_after if c.status == STATUS_VIOLATED and c.limit > c.max_skew]


# a NoCapacity stranding's cause: first-failure reasons (diagnose.strand_reason) -> cause, in the scheduler's filter
# order (ties go to the earlier). `code` stays NoCapacity (JSON consumers read it); text shows the cause, JSON adds it.
NODES_CORDONED = "NodesCordoned"
_CAUSES = (
    ("node(s) were unschedulable", NODES_CORDONED),
    ("node(s) didn't match the requested node name", "NodeName"),
    ("node(s) had untolerated taint", "UntoleratedTaint"), ("node(s) had taint", "UntoleratedTaint"),
    ("node(s) didn't match Pod's node affinity/selector", "NodeAffinity"),
    ("node(s) didn't satisfy plugin(s) [NodeAffinity]", "NodeAffinity"),
    (resources.REASON_PORTS, "HostPortConflict"),
    ("Insufficient ", "NoCapacity"), (resources.REASON_TOO_MANY_PODS, "NoCapacity"),
    (volumes.REASON_NODE_CONFLICT, "VolumeZoneConflict"),
    (volumes.REASON_BIND_CONFLICT, "VolumeBinding"), (volumes.REASON_PV_NOT_EXIST, "VolumeBinding"),
    (volumes.REASON_ZONE_CONFLICT, "VolumeZoneConflict"),
    (interpod.REASON_AFFINITY, "PodAffinity"),
    (interpod.REASON_ANTI_AFFINITY, "PodAntiAffinity"), (interpod.REASON_EXISTING_ANTI_AFFINITY, "PodAntiAffinity"),
)


def cause_of(code: str, params) -> str:
    """The name a finding or stranding is shown under: its code, but NoCapacity names the filter that refused the most
    nodes (NoCapacity for cpu, memory, pod count); the drain's own cordons count only when nothing else does.

    >>> cause_of("NoCapacity", {"reasons": {"node(s) were unschedulable": 3,
    ...                                     "node(s) didn't match PersistentVolume's node affinity": 6}})
    'VolumeZoneConflict'
    >>> cause_of("NoCapacity", {"reasons": {"Insufficient cpu": 4, "node(s) didn't match pod anti-affinity rules": 4}})
    'NoCapacity'
    """
    reasons = params.get("reasons") if code == NO_CAPACITY else None
    if not reasons:
        return code
    ranked = []
    for reason, count in reasons.items():
        order, name = next(((i, c) for i, (prefix, c) in enumerate(_CAUSES) if reason.startswith(prefix)),
                           (len(_CAUSES), NO_CAPACITY))
        ranked.append((0 if name == NODES_CORDONED else -count, order, name))
    return min(ranked)[2]


# taints of a node an autoscaler is removing: a hostname domain with 0 pods (nodeTaintsPolicy Ignore) that takes none
AUTOSCALER_TAINTS = {"ToBeDeletedByClusterAutoscaler": "tainted ToBeDeletedByClusterAutoscaler (being scaled down)",
                     "karpenter.sh/disruption": "tainted karpenter.sh/disruption (being disrupted by Karpenter)"}
MINIMUM_NODES_LISTED = 10


def explain_hostname_minimum(findings: Sequence[Finding], snapshot, plan: DrainPlan) -> list[Finding]:
    """HostnameSpreadFull findings given the nodes that hold the global minimum and why each takes no pod."""
    out, targets = [], set(plan.nodes)
    for f in findings:
        dist, low = f.params.get("distribution"), f.params.get("globalMin")
        if f.code == "HostnameSpreadFull" and dist and low is not None:
            held = [n for n, count in dist.items() if count == low]
            listed = [{"node": n, "why": _why_no_pod(snapshot.node(n), n in targets)}
                      for n in held[:MINIMUM_NODES_LISTED]]
            f = replace(f, params={**f.params, "minimumHeldBy": listed, "minimumHeldByCount": len(held)})
        out.append(f)
    return out


def _why_no_pod(node, drained: bool) -> str:
    if drained:
        return "drained by this plan (cordoned, it stays a domain under nodeTaintsPolicy Ignore)"
    if node is None:
        return "not in the input"
    for t in node.taints:
        if t.key in AUTOSCALER_TAINTS:
            return AUTOSCALER_TAINTS[t.key]
    if node.unschedulable:
        return "cordoned before the drain"
    if tainted := [t.key for t in node.taints if t.effect in ("NoSchedule", "NoExecute")]:
        return f"tainted {', '.join(tainted)}"
    return "refused by another filter (resources, affinity, ports or volumes)"
