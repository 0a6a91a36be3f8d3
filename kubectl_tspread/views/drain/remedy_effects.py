"""A drain remedy's costs and what its re-plan showed, as data (render/drain_remedies.py words them): side effects
(remedies rank by them), what it verifies, what blocks the plan next, and the rerun selection that would not undo it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kubectl_tspread.model.plan import (
    ADDS_NODE, CONSTRAINT_HOLDS, DAEMONSET_POD, DELETES_NODES, DELETES_PODS, EVICTION_ALLOWED, INFO, LOCAL_STORAGE,
    LOSES_DATA, MOVES_PODS_TWICE, MULTIPLE_PDBS, PDB_BLOCKS, PLAN_SAFE, POD_FITS, REDUCES_AVAILABILITY,
    ROLLS_WORKLOAD, SKEW_EXCEEDED, STRANDS_VOLUMES, UNMANAGED_POD, DrainPlan, Finding, Remedy, SideEffect,
)
from kubectl_tspread.model import (
    ADD_NODE, DELETE_DRAINED_NODES, FLAG, RAISE_MAX_SKEW, RAISE_PDB_BUDGET, REMOVE_PDB, SET_NODE_TAINTS_POLICY_HONOR,
    STAGE_CORDONS, WEAKENS_SPREAD, Snapshot, new_node_like,
)

_EVICTION_CODES = (PDB_BLOCKS, MULTIPLE_PDBS, UNMANAGED_POD, LOCAL_STORAGE, DAEMONSET_POD)


def verifies(f: Finding, replanned: Any) -> str:
    """What the re-plan showed: the whole plan safe, else what clearing this finding means."""
    if replanned.safe:
        return PLAN_SAFE
    if f.code in _EVICTION_CODES:
        return EVICTION_ALLOWED
    return CONSTRAINT_HOLDS if f.code == SKEW_EXCEEDED else POD_FITS


def then_finding(replanned: Any) -> Finding | None:
    """What stands in the way next when the re-planned drain is still unsafe."""
    if replanned.safe:
        return None
    # the least (code, workload) only: a re-plan made along the plan orders them differently; remedies must not vary
    left = sorted((g.code, g.workload or "") for g in replanned.findings if g.severity != INFO)
    return Finding(left[0][0], left[0][1] or None, (), None) if left else None


def finding_namespace(f: Finding) -> str:
    """The namespace of a finding's workload: its parameter, else its first pod's."""
    return f.params.get("namespace") or (f.pods[0].split("/", 1)[0] if f.pods else "default")


def side_effects(action: str, params: dict, f: Finding, plan: DrainPlan | None,
                 lookups, replanned: Any = None) -> tuple[SideEffect, ...]:
    """What a candidate does besides clearing `f`; `replanned`: its re-plan (DrainPlan or Verdict), None if not made."""
    if action == STAGE_CORDONS:
        again = getattr(replanned, "evicted_again", 0)  # replacements put on nodes drained later move again
        return (SideEffect(MOVES_PODS_TWICE, (), {"pods": again}),) if again else ()
    if action in (SET_NODE_TAINTS_POLICY_HONOR, RAISE_MAX_SKEW):  # a pod template edit: the controller rolls every pod
        pods = len(lookups.keys(finding_namespace(f), f.workload))
        rolls = SideEffect(ROLLS_WORKLOAD, (f.workload or "",), {"pods": pods})
        # a larger maxSkew loosens the guarantee, as why-pending's RaiseMaxSkew says too
        return (rolls, SideEffect(WEAKENS_SPREAD, (f.workload or "",))) if action == RAISE_MAX_SKEW else (rolls,)
    if action == ADD_NODE:
        return (SideEffect(ADDS_NODE, (params["name"],)),)
    if action in (RAISE_PDB_BUDGET, REMOVE_PDB):
        details: dict = {"kind": "PodDisruptionBudget"}  # a budget, not workloads (render/text.side_effect_text)
        state = next((b for b in f.params.get("budgets", ()) if b.get("pdb") == params["pdb"]), None)
        if state is not None and state["expectedPods"] > state["currentHealthy"]:
            details["unhealthy"] = state["expectedPods"] - state["currentHealthy"]  # they add to the eviction it allows
        return (SideEffect(REDUCES_AVAILABILITY, (params["pdb"],), details),)
    if action == FLAG:
        if params.get("flag") == "--force":
            return (SideEffect(DELETES_PODS, f.pods, {"pods": len(f.pods)}),)
        return (SideEffect(LOSES_DATA, f.pods),) if params.get("flag") == "--delete-emptydir-data" else ()
    if action == DELETE_DRAINED_NODES:
        nodes = tuple(params.get("nodes", ()))
        out = [SideEffect(DELETES_NODES, nodes)]
        left = lookups.left_on(plan, nodes)
        if left:  # the pod garbage collector deletes the pods of a deleted Node object
            out.append(SideEffect(DELETES_PODS, left, {"pods": len(left)}))
        volumes = lookups.pinned_volumes(nodes)
        if volumes:
            out.append(SideEffect(STRANDS_VOLUMES, volumes))
        return tuple(out)
    return ()


def with_rerun_hints(plan: DrainPlan, snapshot: Snapshot, selector=None,
                     domain: tuple[str, str] | None = None) -> DrainPlan:
    """A remedy adding a node is undone by the command line that produced it when its selection (-l, --domain) would
    drain the new node too: it gets `rerunNodes` (the nodes to name instead) and `matchedBy` (the selection)."""
    if selector is None and domain is None:
        return plan
    taken = {n.name for n in snapshot.nodes}

    def caught(labels) -> str:
        if domain is not None and labels.get(domain[0]) == domain[1]:
            return f"--domain {domain[0]}={domain[1]}"
        if selector is not None and selector.matches(labels):
            return f"-l {selector}"
        return ""

    def hinted(r: Remedy) -> Remedy:
        like = snapshot.node(r.params.get("like", "")) if r.action == ADD_NODE else None
        # the node the remedy adds, as remedies.py made it (the same name: params["name"])
        by = caught(new_node_like(like, taken).labels) if like is not None else ""
        return replace(r, params={**r.params, "matchedBy": by, "rerunNodes": list(plan.nodes)}) if by else r

    findings = tuple(replace(f, remedies=tuple(map(hinted, f.remedies)), unchecked=tuple(map(hinted, f.unchecked)))
                     for f in plan.findings)
    return replace(plan, findings=findings)
