"""Sentences for explanations that the engine returns as data. Pure: no rich, no I/O."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from kubectl_tspread.engine.traps import (
    AUTOSCALER_DOMAIN,
    CORDONED_DOMAIN,
    ENFORCED_ONLY_AT_PLACEMENT,
    INVISIBLE_EMPTY_DOMAIN,
    MIN_DOMAINS_UNREACHABLE,
    MISSING_LABELS,
    ROLLING_UPDATE_SKEW,
    Trap,
)
from kubectl_tspread.model import (
    ADDS_NODE,
    DELETES_NODES,
    DELETES_PODS,
    EVICTS_PODS,
    LOSES_DATA,
    MOVES_PODS_TWICE,
    RECREATES_POD,
    REDUCES_AVAILABILITY,
    ROLLS_WORKLOAD,
    STRANDS_VOLUMES,
    WEAKENS_SPREAD,
    SideEffect,
)


def short_key(key: str) -> str:
    """topology.kubernetes.io/zone -> zone: how people name a domain in a sentence."""
    return key.rsplit("/", 1)[-1]


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _names(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


def _cordoned_domain(p: dict[str, Any]) -> str:
    doms = p["domains"]
    return (
        f"{p['key']} {_names(doms)} {'exists' if len(doms) == 1 else 'exist'} only through cordoned "
        f"nodes and still {'counts' if len(doms) == 1 else 'count'} as "
        f"{'a domain' if len(doms) == 1 else 'domains'} (nodeTaintsPolicy {p['node_taints_policy']}), "
        f"holding the global minimum at {p['global_min']} instead of {p['global_min_without']}: "
        f"other domains accept at most {p['max_skew']} matching pods above it until those Node "
        f"objects are deleted or the constraint uses nodeTaintsPolicy: Honor."
    )


def _autoscaler_domain(p: dict[str, Any]) -> str:
    doms = p["domains"]
    one = len(doms) == 1
    who = " and ".join(p["autoscalers"])
    return (
        f"{p['key']} {_names(doms)} {'exists' if one else 'exist'} only through node"
        f"{'' if len(p['nodes']) == 1 else 's'} {_names(p['nodes'])} that {who} is removing "
        f"(taint {', '.join(p['taints'])}); {'it still counts' if one else 'they still count'} as "
        f"{'a domain' if one else 'domains'} (nodeTaintsPolicy {p['node_taints_policy']}), holding the "
        f"global minimum at {p['global_min']} instead of {p['global_min_without']} until the autoscaler "
        f"deletes the Node object{'' if len(p['nodes']) == 1 else 's'}. Do not remove the taint: the "
        f"autoscaler would take the node back; wait for the deletion or use nodeTaintsPolicy: Honor."
    )


def _invisible_empty_domain(p: dict[str, Any]) -> str:
    vals = p["values"]
    return (
        f"{p['key']} {_names(vals)} has {_plural(len(p['nodes']), 'node')} but none the pod "
        f"tolerates (nodeTaintsPolicy Honor), so it is not a domain and spreading over the other "
        f"{_plural(p['domains'], 'domain')} looks balanced while it holds no pods; set minDomains "
        f"to the number of {p['key']} values you expect to make missing domains count."
    )


def _min_domains_unreachable(p: dict[str, Any]) -> str:
    cap = ""
    if p["per_domain"] is not None:
        cap = (f"; each domain takes at most {p['per_domain']} matching pods, "
               f"{p['capacity']} in all")
    return (
        f"minDomains is {p['min_domains']} but only {_plural(p['domains'], 'domain')} of "
        f"{p['key']} exist, so the global minimum is pinned to 0{cap}."
    )


def _rolling_update_skew(p: dict[str, Any]) -> str:
    revs = ", ".join(f"{h}={n}" for h, n in p["revisions"].items())
    return (
        f"{p['counted']} counted pods span {_plural(len(p['revisions']), 'pod-template-hash value')} "
        f"({revs}): old and new revisions are spread together; add matchLabelKeys: "
        f"[pod-template-hash] to spread each revision on its own."
    )


def _missing_labels(p: dict[str, Any]) -> str:
    nodes = p["nodes"]
    effect = ("the pod cannot be placed there" if p["hard"]
              else "they are left out of spread scoring")
    other = ""
    if p["missing_other_key"]:
        other = (f" ({p['missing_other_key']} of them lack another hard constraint's key, "
                 f"which excludes them from every hard constraint)")
    return (
        f"{_plural(len(nodes), 'node')} ({_names(nodes)}) lack a required topology label "
        f"for {p['key']}{other}, so {effect}."
    )


def _enforced_only_at_placement(p: dict[str, Any]) -> str:
    return (
        f"skew on {p['key']} is {p['skew']}, above maxSkew {p['max_skew']} ({p['max_domain']} has "
        f"{p['max_pods']} matching pods, the minimum is {p['global_min']}): DoNotSchedule only "
        f"gates new placements, and nothing moves existing pods back into balance."
    )


_MESSAGES: dict[str, Callable[[dict[str, Any]], str]] = {
    CORDONED_DOMAIN: _cordoned_domain,
    AUTOSCALER_DOMAIN: _autoscaler_domain,
    INVISIBLE_EMPTY_DOMAIN: _invisible_empty_domain,
    MIN_DOMAINS_UNREACHABLE: _min_domains_unreachable,
    ROLLING_UPDATE_SKEW: _rolling_update_skew,
    MISSING_LABELS: _missing_labels,
    ENFORCED_ONLY_AT_PLACEMENT: _enforced_only_at_placement,
}


def trap_message(trap: Trap) -> str:
    """One sentence naming the trap's numbers; unknown codes fall back to code and params."""
    fn = _MESSAGES.get(trap.code)
    if fn is None:
        return f"{trap.code}: {trap.params}"
    return fn(trap.params)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def side_effect_text(effect: SideEffect) -> str:
    """One clause per side effect of a fix or remedy, naming what it touches, the same words in
    why-pending and drain-safe:
    DeletesPods(3 pods) → "deletes 3 running pods: shop/a, shop/b, shop/c"."""
    objs, p, code = list(effect.objects), effect.params, effect.code
    if code == DELETES_PODS:
        # every one named: no advice destroys what it does not name
        return f"deletes {_count(len(objs), 'running pod')}: {', '.join(objs)}"
    if code == EVICTS_PODS:
        return f"evicts {_count(len(objs), 'pod')}: {_names(objs, 5)}"
    if code == STRANDS_VOLUMES:
        return (f"strands {_count(len(objs), 'persistent volume')} that only these nodes can mount: "
                f"{', '.join(objs)} (their pods cannot run anywhere else)")
    if code == REDUCES_AVAILABILITY and p.get("kind") == "PodDisruptionBudget":
        down = int(p.get("unhealthy", 0))
        now = f", on top of the {_count(down, 'pod')} of it not healthy now" if down else ""
        return f"PodDisruptionBudget {_names(objs, 5)} then lets more of its pods be down at once{now}"
    if code == REDUCES_AVAILABILITY:
        return f"reduces the running replicas of {_names(objs, 5)} until replacements start"
    if code == ROLLS_WORKLOAD:
        return (f"a template edit: rolls every pod of {_names(objs)} "
                f"({_count(int(p.get('pods', 0)), 'pod')} replaced by a rolling update)")
    if code == RECREATES_POD:
        return f"the pod has no controller: it must be deleted and created again ({_names(objs)})"
    if code == WEAKENS_SPREAD:
        return f"loosens the spread guarantee of {_names(objs)}"
    if code == ADDS_NODE:
        return f"adds node {_names(objs)} (capacity you pay for until it is removed)"
    if code == DELETES_NODES:
        return f"deletes Node object(s) {_names(objs, 5)}"
    if code == LOSES_DATA:
        return f"loses the emptyDir data of {_names(objs, 5)}"
    if code == MOVES_PODS_TWICE:
        # counted, not named (params pods): the re-plan's replacements, not the pods drained
        return (f"{p.get('pods', 0)} replacement(s) land on nodes drained later and are evicted "
                f"again (a pod moves twice)")
    return f"{code}: {', '.join(objs)}"


# what the answer assumes when a kind it depends on is missing from the input
_MISSING_CONSEQUENCE = {
    "PodDisruptionBudget": "PodDisruptionBudgets not checked (evictions are assumed allowed)",
    "StatefulSet": "StatefulSet selectors unknown (their pods' default constraints are left out)",
    "ReplicaSet": "ReplicaSet selectors unknown (their pods' default constraints are left out)",
    "ReplicationController": "ReplicationController selectors unknown (default constraints left out)",
    "Service": "Service selectors unknown (default constraints use the controller's selector alone)",
    "PersistentVolumeClaim": "volume claims not checked (the volume filters pass every node)",
    "PersistentVolume": "volumes not checked (no zone or node pinning from PVs)",
    "StorageClass": "storage classes not checked (unbound claims bind anywhere)",
    "Namespace": "namespace selectors of pod (anti-)affinity judged by the namespace name label alone",
}


def missing_kinds_message(kinds: Sequence[str]) -> str:
    """The warning for kinds the answer depends on and the input lacked, saying what was not
    checked and how to get a complete input."""
    what = "; ".join(_MISSING_CONSEQUENCE.get(k, f"{k} not checked") for k in kinds)
    listed = ", ".join(kinds)
    if list(kinds) == ["Namespace"]:
        return f"the answer rests on objects tspread does not read ({listed}): {what}"
    return (f"the input holds no {listed} (not in the dump, or not readable): {what}; "
            f"`kubectl tspread dump -A > cluster.json` writes every kind the commands read")


TIMELINE_NOTE = ("Timeline: a replay of the {n} pods that exist now, in creation order, against today's "
                 "nodes and labels (pods deleted since are not in it); counts and skew after each pod:")


def replay_gap_text(gap) -> str:
    """Why a replayed row over maxSkew under DoNotSchedule is not a placement the scheduler made."""
    keys = ", ".join(k.rsplit('/', 1)[-1] for k in gap.keys)
    head = f"not a placement the scheduler made against these pods (DoNotSchedule on {keys} refuses it)"
    if gap.code == "DomainsJoinedLater":
        return f"{head}: {', '.join(gap.domains)} had no node yet when it was placed"
    return f"{head}: likely pods deleted since (scale-down, rollout, eviction) or pod or node labels changed"
