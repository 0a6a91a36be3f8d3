"""Sentences for the engine's reason codes (excluded nodes, uncounted pods) and constraint titles.

The engine returns codes and numbers; the words live here so tests can assert on data
and golden files on sentences.
"""

from __future__ import annotations

EXCLUDED_NODE = {
    "MissingTopologyKey": "lacks a label this pod's hard constraints need ({key} or another topologyKey)",
    "NodeAffinity": "does not match the pod's nodeSelector/required node affinity (nodeAffinityPolicy: Honor)",
    "UntoleratedTaint": "has a taint the pod does not tolerate (nodeTaintsPolicy: Honor)",
}

UNCOUNTED_POD = {
    "OtherRevision": "belongs to another revision (matchLabelKeys)",
    "Terminating": "is terminating (deletionTimestamp set)",
    "Unscheduled": "is not bound to a node yet",
    "ExcludedNode": "runs on a node this constraint does not count",
    "SelectorMismatch": "does not match the constraint's labelSelector",
}


def constraint_title(cs) -> str:
    """`topology.kubernetes.io/zone · maxSkew 1 · DoNotSchedule · selector app=web`."""
    k = cs.constraint
    parts = [k.topology_key, f"maxSkew {k.max_skew}",
             k.when_unsatisfiable + (" (implicit, scoring only)" if k.implicit else "")]
    if k.min_domains != 1:
        parts.append(f"minDomains {k.min_domains}")
    if k.node_affinity_policy != "Honor" or k.node_taints_policy != "Ignore":
        parts.append(f"nodeAffinityPolicy {k.node_affinity_policy}, nodeTaintsPolicy {k.node_taints_policy}")
    if k.match_label_keys:
        parts.append("matchLabelKeys " + ",".join(k.match_label_keys))
    sel = "<none: selects no pods>" if cs.selector.is_nothing else (str(cs.selector) or "{} (counts no pods)")
    parts.append(f"selector {sel}")
    return " · ".join(parts)


def excluded_node_text(e, constraint) -> str:
    template = EXCLUDED_NODE.get(e.reason, e.reason)
    return template.format(key=constraint.topology_key)


def uncounted_text(u) -> str:
    return UNCOUNTED_POD.get(u.reason, u.reason)
