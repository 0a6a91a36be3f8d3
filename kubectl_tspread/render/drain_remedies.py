"""How drain-safe words a remedy: its text, what its re-plan verified, its side effects, and
its JSON view (render/drain.py prints them under each finding)."""

from __future__ import annotations

from typing import Any

from kubectl_tspread.drain.findings import cause_of


def _short(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def remedy_text(r) -> str:
    p = r.params
    if r.action == "DeleteDrainedNodes":
        return "delete each drained Node object once it is empty (kubectl delete node …)"
    if r.action == "HonorTaints":
        return f"set nodeTaintsPolicy: Honor on {p.get('workload')}'s {_short(p.get('topologyKey', ''))} constraint"
    if r.action == "RaiseMaxSkew":
        return (f"raise maxSkew of {p.get('workload')}'s {_short(p.get('topologyKey', ''))} constraint to "
                f"{p.get('maxSkew')} for the drain")
    if r.action == "AddNode":
        text = f"add a node like {p.get('like')} in {_short(p.get('topologyKey', ''))} {p.get('domain')} first"
        if p.get("matchedBy"):
            nodes = p.get("rerunNodes", ())
            named = " ".join(nodes[:6]) + (f" … ({len(nodes)} nodes; -o json lists them)" if len(nodes) > 6 else "")
            text += (f"; {p['matchedBy']} would drain that node too, so rerun naming the drained nodes instead "
                     f"(with your other flags): kubectl tspread drain-safe {named}")
        return text
    if r.action == "Flag":
        return f"rerun with {p.get('flag')}"
    if r.action == "RaisePdbBudget":
        return f"let PodDisruptionBudget {p.get('pdb')} allow 1 disruption (e.g. maxUnavailable: 1) for the drain"
    if r.action == "RemovePdb":
        return f"remove PodDisruptionBudget {p.get('pdb')} so one budget covers the pods"
    if r.action == "StageCordons":
        return ("cordon each step's nodes just before its evictions instead of every node first "
                "(rerun with --stage-cordons)")
    if r.action == "Order":
        return f"drain in this order: {', '.join(p.get('order', ()))}"
    return r.action


_VERIFIES = {"PlanSafe": "makes the plan safe", "EvictionAllowed": "unblocks the eviction",
             "PodFits": "the replacements then get a node", "ConstraintHolds": "the constraint then stays within "
                                                                                "its limit"}


def names_text(objs, most: int = 5) -> str:
    objs = list(objs)
    return ", ".join(objs[:most]) + (f" and {len(objs) - most} more" if len(objs) > most else "")


def side_effect_message(e) -> str:
    o = names_text(e.objects)
    if e.code == "AddsNode":
        return f"adds node {o}; no running pod changes"
    if e.code == "ReducesAvailability":
        return f"PodDisruptionBudget {o} then lets more of its pods be down at once"
    if e.code == "RollsWorkload":
        return f"edits the pod template: a rolling update replaces all {e.params.get('pods', 0)} pod(s) of {o}"
    if e.code == "DeletesNodes":
        return f"deletes Node object(s) {o}"
    if e.code == "DeletesPods":
        return f"deletes {len(e.objects)} pod(s) that nothing recreates there: {o}"
    if e.code == "LosesData":
        return f"loses the emptyDir data of {o}"
    if e.code == "MovesPodsTwice":
        return (f"{e.params.get('pods', 0)} replacement(s) land on nodes drained later and are evicted "
                f"again (a pod moves twice)")
    if e.code == "StrandsVolumes":
        return f"leaves PersistentVolume(s) only those nodes can mount without a node: {o}"
    return f"{e.code} {o}"


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
    return {"text": remedy_text(r), "verified": r.verified, "makesPlanSafe": r.makes_safe,
            "action": r.action, "details": dict(r.params), "verifies": r.verifies or None,
            "outcome": remedy_tag(r) if r.verified else None,
            "sideEffects": [{"code": e.code, "message": side_effect_message(e), "objects": list(e.objects),
                             **({"count": e.params.get("pods", 0)} if e.code in ("RollsWorkload", "MovesPodsTwice")
                                else {})}
                            for e in r.side_effects],
            "then": None if then is None else {"code": then.code, "workload": then.workload,
                                                "message": then_text(then)}}
