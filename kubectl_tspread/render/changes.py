"""What-if changes in words and JSON, for why-pending's fixes and drain-safe's remedies alike:
one change (model.ProposedChange) is worded and shown the same way by both commands.

JSON keeps the names a change had before the two vocabularies were made one readable for one
minor version (README "What-if vocabulary"): the new name is written, and beside it
- a renamed action's old name in `deprecatedAction`;
- a renamed parameter's old key in `details`, with the same value as the new key.
Old names are written only by the command that used them.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable

from kubectl_tspread.model import (
    ADD_LARGER_NODE, ADD_NODE, ADD_NODE_WITH_LABELS, DELETE_NODES, LOWER_MIN_DOMAINS, RAISE_MAX_SKEW, ROLLS_WORKLOAD,
    SCHEDULE_ANYWAY_ACTION, SET_NODE_TAINTS_POLICY_HONOR, TIER_DESTRUCTIVE, TIER_NO_POD_CHANGE, TIER_TEMPLATE,
    ProposedChange, SideEffect,
)
from kubectl_tspread.render.structured import camel_keys
from kubectl_tspread.render.text import short_key, side_effect_text

WHY_PENDING, DRAIN_SAFE = "why-pending", "drain-safe"

# command -> action -> the name it had there before
OLD_ACTIONS: dict[str, dict[str, str]] = {
    DRAIN_SAFE: {SET_NODE_TAINTS_POLICY_HONOR: "HonorTaints"},
}
# command -> action -> {old parameter key: the key that replaced it}
OLD_PARAMS: dict[str, dict[str, dict[str, str]]] = {
    WHY_PENDING: {
        SET_NODE_TAINTS_POLICY_HONOR: {"key": "topologyKey"},
        LOWER_MIN_DOMAINS: {"key": "topologyKey", "new": "minDomains"},
        RAISE_MAX_SKEW: {"key": "topologyKey", "new": "maxSkew"},
        SCHEDULE_ANYWAY_ACTION: {"key": "topologyKey"},
        DELETE_NODES: {"key": "topologyKey"},
        ADD_NODE: {"key": "topologyKey", "template": "like"},
        ADD_NODE_WITH_LABELS: {"template": "like"},
        ADD_LARGER_NODE: {"key": "topologyKey", "template": "like"},
    },
}
# command -> side-effect code -> {old key of the side effect: the key of `details` that replaced it}
OLD_SIDE_EFFECT_KEYS: dict[str, dict[str, dict[str, str]]] = {
    DRAIN_SAFE: {ROLLS_WORKLOAD: {"count": "pods"}},
}

CATEGORY = {TIER_NO_POD_CHANGE: "NoChangeToRunningPods", TIER_TEMPLATE: "TemplateEdit",
            TIER_DESTRUCTIVE: "Destructive"}


def side_effects_view(effects: Iterable[SideEffect], command: str) -> list[dict[str, Any]]:
    """`sideEffects` of a fix or remedy: [{code, message, objects}] (+ its numbers as details)."""
    out = []
    for e in effects:
        doc: dict[str, Any] = {"code": e.code, "message": side_effect_text(e), "objects": list(e.objects)}
        if e.params:
            doc["details"] = camel_keys(dict(e.params))
            for old, new in OLD_SIDE_EFFECT_KEYS.get(command, {}).get(e.code, {}).items():
                doc[old] = copy.deepcopy(doc["details"].get(new))
        out.append(doc)
    return out


def change_view(c: ProposedChange, command: str, text: str) -> dict[str, Any]:
    """What both commands' JSON says of a change: action, text, details (its params), verified,
    verifies, category, sideEffects, with the names `command` used before beside the new ones."""
    doc: dict[str, Any] = {"action": c.action}
    old = OLD_ACTIONS.get(command, {}).get(c.action)
    if old is not None:
        doc["deprecatedAction"] = old
    details = camel_keys(c.params)
    for old_key, new_key in OLD_PARAMS.get(command, {}).get(c.action, {}).items():
        if new_key in details:
            details[old_key] = copy.deepcopy(details[new_key])
    doc.update({"text": text, "verified": c.verified, "details": details, "verifies": c.verifies or None,
                "category": CATEGORY[c.tier], "sideEffects": side_effects_view(c.side_effects, command)})
    return doc


def _constraint(p) -> str:
    """"Deployment/web's topology.kubernetes.io/zone constraint", or "the … constraint" when the
    change is about the Pending pod's own."""
    whose = f"{p['workload']}'s" if p.get("workload") else "the"
    return f"{whose} {p['topologyKey']} constraint"


def change_text(c: ProposedChange) -> str | None:
    """The words for a change both commands propose (None for the others, which each command
    words itself); the command adds why it proposes it."""
    p = c.params
    if c.action == SET_NODE_TAINTS_POLICY_HONOR:
        return (f"set nodeTaintsPolicy: Honor on {_constraint(p)}, so cordoned and tainted nodes stop "
                f"making domains")
    if c.action == RAISE_MAX_SKEW:
        return f"raise maxSkew on {_constraint(p)} from {p['old']} to {p['maxSkew']}"
    if c.action == ADD_NODE:
        where = f" in {short_key(p['topologyKey'])} {p['domain']}" if p.get("domain") else ""
        return f"add a node like {p['like']}{where}"
    return None
