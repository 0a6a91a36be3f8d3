"""Candidate fixes for blockers that are not spread (fixes.py verifies them like the others).

- AddNodeWithLabels: no node matches the pod's nodeSelector / required node affinity →
  a node like the most suitable one, carrying labels that satisfy the first term;
- AddLargerNode: the pod requests more of a resource than any node's whole allocatable →
  a node like the largest one, with that much allocatable;
- LowerRequest: the same pod asking for no more than the roomiest node has free (a template
  edit of its workload).

    pod requests 64Gi memory, largest node 16Gi (12Gi free) →
    AddLargerNode(template n1, memory 64Gi), LowerRequest(memory 64Gi → 12Gi)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from kubectl_tspread.views.blockers import NODE_AFFINITY_UNMATCHED, REQUEST_ABOVE_ALLOCATABLE, Blocker, only_cordon_taint
from kubectl_tspread.engine import filters, resources, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.views.fixes_nodes import FRESH_NODE_CLEARS, MAX_VARIANTS, Candidate, _domain_key
from kubectl_tspread.model.labels import DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN, int64
from kubectl_tspread.model import (
    ADD_LARGER_NODE, ADD_NODE_WITH_LABELS, LOWER_REQUEST, Node, NodeSelectorTerm, Pod, new_node_like,
)
from kubectl_tspread.views.whatif import Change


def _term_labels(term: NodeSelectorTerm) -> tuple[dict[str, str], list[str]] | None:
    """(labels to set, label keys to drop) that make a node match `term`; None when the term
    names nodes by field (metadata.name) or cannot be met by labels alone."""
    if term.match_fields:
        return None
    put: dict[str, str] = {}
    drop: list[str] = []
    for r in term.match_expressions:
        if r.op == IN and r.values:
            put[r.key] = r.values[0]
        elif r.op == EXISTS:
            put.setdefault(r.key, "true")
        elif r.op in (NOT_IN, DOES_NOT_EXIST):
            drop.append(r.key)
        elif r.op in (GT, LT) and len(r.values) == 1 and (bound := int64(r.values[0])) is not None:
            label = str(bound + (1 if r.op == GT else -1))
            if int64(label) is None:
                return None  # past int64: no label value satisfies it
            put[r.key] = label
        else:
            return None
    return put, drop


def _best_template(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                   ignore: frozenset[str]) -> Node | None:
    """The node failing the fewest filters besides `ignore` (plugins a fresh copy clears), the
    largest first."""
    if not verdicts:
        return None

    def rank(v: filters.NodeVerdict) -> tuple:
        node = index.nodes[v.node]
        # a copy is never cordoned: the cordon's own taint does not last either
        cordon_only = only_cordon_taint(pod, node)
        lasting = {f.plugin for f in v.failures
                   if f.plugin not in ignore and not (f.plugin == "TaintToleration" and cordon_only)}
        return (len(lasting), -node.allocatable.get("cpu", 0), -node.allocatable.get("memory", 0), node.name)

    return index.nodes[min(verdicts, key=rank).node]


def labelled_node_candidates(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                             blockers: Sequence[Blocker]) -> list[Candidate]:
    """A new node matching the pod's nodeSelector and one required affinity term at a time."""
    if not any(b.code == NODE_AFFINITY_UNMATCHED for b in blockers):
        return []
    template = _best_template(index, pod, verdicts, FRESH_NODE_CLEARS | {"NodeAffinity"})
    if template is None:
        return []
    options: list[tuple[dict[str, str], list[str]]] = []
    for term in (pod.node_affinity or (None,)):
        made = ({}, []) if term is None else _term_labels(term)
        if made is not None:
            options.append(made)
    out = []
    for put, drop in options[:4]:
        labels = {k: v for k, v in template.labels.items() if k not in drop}
        labels.update(pod.node_selector)
        labels.update(put)
        node = new_node_like(replace(template, labels=labels), set(index.nodes))
        wanted = {k: node.labels[k] for k in sorted({*pod.node_selector, *put})}
        params = {"like": template.name, "name": node.name, "labels": wanted, "dropped": sorted(drop)}
        out.append(Candidate(ADD_NODE_WITH_LABELS, params, Change(nodes=(node,))))
    return out


def _oversized(blockers: Sequence[Blocker]) -> dict[str, int]:
    return {b.params["resource"]: b.params["request"] for b in blockers if b.code == REQUEST_ABOVE_ALLOCATABLE}


def larger_node_candidates(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                           blockers: Sequence[Blocker], state: spread.SpreadState | None = None) -> list[Candidate]:
    """A node like the best one of each domain of the first hard non-hostname key (the domains
    with the fewest matching pods first), with allocatable raised to the pod's requests."""
    need = _oversized(blockers)
    if not need:
        return []
    key = None if state is None else _domain_key(state)
    cs = None if state is None else next((c for c in state.hard if c.constraint.topology_key == key), None)
    groups: dict[str, list[filters.NodeVerdict]] = {}
    for v in verdicts:
        labels = index.nodes[v.node].labels
        if key is None:
            groups.setdefault("", []).append(v)
        elif key in labels:
            groups.setdefault(labels[key], []).append(v)
    order = sorted(groups, key=lambda val: (cs.count(val) if cs is not None else 0, val))
    largest = {r: max(n.allocatable.get(r, 0) for n in index.nodes.values()) for r in sorted(need)}
    taken = set(index.nodes)
    out = []
    for value in order[:MAX_VARIANTS]:
        template = _best_template(index, pod, groups[value], FRESH_NODE_CLEARS)
        if template is None:
            continue
        alloc = dict(template.allocatable)
        for r, want in pod.requests.items():
            if want > 0 and alloc.get(r, 0) < want:
                alloc[r] = want
        node = new_node_like(replace(template, allocatable=alloc), taken)
        taken.add(node.name)
        params: dict[str, Any] = {"like": template.name, "name": node.name, "topologyKey": key,
                                  "domain": value or None, "allocatable": {r: alloc[r] for r in sorted(need)},
                                  "largest": largest}
        out.append(Candidate(ADD_LARGER_NODE, params, Change(nodes=(node,))))
    return out


def lower_request_candidates(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
                             blockers: Sequence[Blocker]) -> list[Candidate]:
    """The pod's oversized requests lowered to what the roomiest node has free."""
    need = _oversized(blockers)
    if not need:
        return []
    new = dict(pod.requests)
    for r in need:
        free = max((n.allocatable.get(r, 0) - resources.node_usage(index, n.name, exclude=pod.key).requested.get(r, 0)
                    for n in index.nodes.values()), default=0)
        if free <= 0:
            return []
        new[r] = free
    edited = replace(pod, requests=new)
    params = {"old": {r: pod.requests[r] for r in sorted(need)}, "new": {r: new[r] for r in sorted(need)}}
    return [Candidate(LOWER_REQUEST, params, Change(replaced_pods=((pod, edited),)))]
