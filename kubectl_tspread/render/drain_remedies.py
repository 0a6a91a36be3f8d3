"""How drain-safe words a remedy: its text, what its re-plan verified, and its JSON view
(render/drain.py prints them under each finding). A change why-pending proposes too is worded
by render/changes.py, and its side effects by render/text.py, for both commands."""

from __future__ import annotations

from typing import Any

from kubectl_tspread.views.drain.findings import cause_of
from kubectl_tspread.model import (
    ADD_NODE, DELETE_DRAINED_NODES, FLAG, ORDER, RAISE_MAX_SKEW, RAISE_PDB_BUDGET, REMOVE_PDB, STAGE_CORDONS,
)
from kubectl_tspread.render.changes import DRAIN_SAFE, change_text, change_view


def remedy_text(r) -> str:
    p = r.params
    shared = change_text(r)
    if r.action == RAISE_MAX_SKEW:
        return f"{shared} for the drain"
    if r.action == ADD_NODE:
        text = f"{shared} first"
        if p.get("matchedBy"):
            nodes = p.get("rerunNodes", ())
            named = " ".join(nodes[:6]) + (f" … ({len(nodes)} nodes; -o json lists them)" if len(nodes) > 6 else "")
            text += (f"; {p['matchedBy']} would drain that node too, so rerun naming the drained nodes instead "
                     f"(with your other flags): kubectl tspread drain-safe {named}")
        return text
    if r.action == FLAG:
        return f"rerun with {p.get('flag')}"
    if r.action == RAISE_PDB_BUDGET:
        return f"let PodDisruptionBudget {p.get('pdb')} allow 1 disruption (e.g. maxUnavailable: 1) for the drain"
    if r.action == REMOVE_PDB:
        return f"remove PodDisruptionBudget {p.get('pdb')} so one budget covers the pods"
    if r.action == STAGE_CORDONS:
        return ("cordon each step's nodes just before its evictions instead of every node first "
                "(rerun with --stage-cordons)")
    if r.action == ORDER:
        return f"drain in this order: {', '.join(p.get('order', ()))}"
    if shared is not None:
        return shared
    if r.action == DELETE_DRAINED_NODES:
        return "delete each drained Node object once it is empty (kubectl delete node …)"
    return r.action


_VERIFIES = {"PlanSafe": "makes the plan safe", "EvictionAllowed": "unblocks the eviction",
             "PodFits": "the replacements then get a node", "ConstraintHolds": "the constraint then stays within "
                                                                                "its limit"}


def names_text(objs, most: int = 5) -> str:
    objs = list(objs)
    return ", ".join(objs[:most]) + (f" and {len(objs) - most} more" if len(objs) > most else "")


def then_text(g) -> str:
    """The re-plan's first remaining finding, in a few words."""
    who = f" of {g.workload}" if g.workload else ""
    if g.code in ("CordonedDomainTrap", "SpreadBlocked", "HostnameSpreadFull", "SkewExceeded"):
        return f"replacements{who} are then refused by spread ({cause_of(g.code, g.params)})"
    if g.code in ("PdbBlocks", "MultiplePdbs"):
        return f"a PodDisruptionBudget then blocks evictions{who} ({g.code})"
    return f"next {cause_of(g.code, g.params)}{' for ' + g.workload if g.workload else ''}"


def remedy_tag(r) -> str:
    """What the fix's verification showed: "verified, makes the plan safe", or the outcome
    and what the plan then still meets."""
    if r.makes_safe:
        return "verified, makes the plan safe"
    tag = f"verified: {_VERIFIES.get(r.verifies, 'clears this finding')}"
    return tag + (f"; the plan stays unsafe: {then_text(r.then)}" if r.then is not None else "")


def remedy_view(r) -> dict[str, Any]:
    then = r.then
    return {**change_view(r, DRAIN_SAFE, remedy_text(r)), "makesPlanSafe": r.makes_safe,
            "outcome": remedy_tag(r) if r.verified else None,
            "then": None if then is None else {"code": then.code, "workload": then.workload,
                                                "message": then_text(then)}}
