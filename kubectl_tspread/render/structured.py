"""Versioned view-models for -o json|yaml. Public API: change only additively.

Built from the domain reports, never from internal dataclasses directly, so internals can
move without breaking scripts that parse our output.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

API_VERSION = "tspread/v1alpha1"


def selector_view(selector) -> str | None:
    """kubectl syntax; null for a nil selector (which selects nothing)."""
    return None if selector.is_nothing else str(selector)


def camel_keys(params: Mapping[str, Any]) -> dict[str, Any]:
    """Details dicts use camelCase keys like the rest of the document (`max_skew` -> `maxSkew`)."""
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): v for k, v in params.items()}


def constraint_view(cs, uncounted: Sequence = (), traps: Sequence = (), trap_text=None) -> dict[str, Any]:
    """One constraint as DistributionReport (and PendingReport) print it."""
    c = cs.constraint
    return {
        "topologyKey": c.topology_key,
        "maxSkew": c.max_skew,
        "whenUnsatisfiable": c.when_unsatisfiable,
        "minDomains": c.min_domains,
        "nodeAffinityPolicy": c.node_affinity_policy,
        "nodeTaintsPolicy": c.node_taints_policy,
        "matchLabelKeys": list(c.match_label_keys),
        "selector": selector_view(cs.selector),
        "implicit": c.implicit,
        "domains": [
            {"value": d.value, "pods": d.pods, "nodes": len(d.nodes), "headroom": cs.headroom(d.value)}
            for d in cs.domains.values()
        ],
        "globalMin": cs.global_min,
        "globalMinForcedToZero": cs.min_forced_zero,
        "selfMatch": cs.self_match,
        "skew": cs.skew,
        "status": cs.status,
        "excludedNodes": [{"name": e.name, "reason": e.reason} for e in cs.excluded_nodes],
        "uncountedPods": [{"namespace": u.namespace, "name": u.name, "reason": u.reason} for u in uncounted],
        "traps": [{"code": t.code, "message": trap_text(t) if trap_text else t.code, "details": camel_keys(t.params)}
                  for t in traps],
    }


def distribution_view(report) -> dict[str, Any]:
    from kubectl_tspread.render.text import trap_message

    workloads = []
    for w in report.workloads:
        item: dict[str, Any] = {
            "kind": w.kind, "namespace": w.namespace, "name": w.name, "pods": w.pods,
            "incomingPod": w.incoming.name,
            "constraintSet": w.constraint_set, "constraintSets": w.constraint_sets,
            "constraints": [constraint_view(c.state, c.uncounted, c.traps, trap_message) for c in w.constraints],
        }
        if w.timeline is not None:
            item["timeline"] = [
                {"pod": r.pod, "created": r.created, "node": r.node or None, "domains": r.domains,
                 "counts": r.counts, "skew": r.skew, "overMaxSkew": r.over}
                for r in w.timeline
            ]
        workloads.append(item)
    return {"apiVersion": API_VERSION, "kind": "DistributionReport", "workloads": workloads}


def dump(doc: dict[str, Any], fmt: str) -> str:
    """JSON with a two-space indent (orjson when installed: the pure-Python indenting encoder
    took minutes on a why-pending -A report of 1,000 pods × 5,000 nodes); YAML from the same dict,
    keys in schema order."""
    if fmt == "json":
        try:
            import orjson
        except ImportError:
            return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
