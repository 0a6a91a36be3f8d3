"""What-if changes for fixes: one record that edits a Snapshot and patches a ClusterIndex alike,
and where the pending pod fits once the change is made.

Verifying a fix on a cluster of 150k pods by re-indexing the changed snapshot and
re-running every filter on every node costs seconds per candidate. Instead:

- `Change.patch` makes a view of the index that copies only the pod lists the change
  touches (`ClusterIndex.patched`), keeping the node usage already summed;
- `fit_nodes` re-runs the node-local filters (everything before PodTopologySpread:
  they read only the node, its pods and the pod) only on the nodes the change touched,
  reads the others' verdicts from the evaluation on the unchanged cluster, and runs
  PreFilter plus the cluster-wide filters (spread, InterPodAffinity) anew everywhere.

The reuse holds only when the pod is the same as far as the node-local filters can
tell (a fix may edit its spread constraints, nothing else) and no PreFilter rejects it;
otherwise every filter runs on every node of the view. A Change edits nodes and pods
only, never claims or volumes, so the volume filters' state cannot change under it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import Node, Pod, Snapshot


@dataclass(frozen=True)
class Change:
    """Nodes added or replaced (by name), Node objects deleted (the pod garbage collector then
    removes their pods), pods removed and pods replaced (by key). Calling it on a Snapshot
    returns the changed copy."""

    nodes: tuple[Node, ...] = ()
    removed_nodes: frozenset[str] = frozenset()
    removed_pods: tuple[Pod, ...] = ()
    replaced_pods: tuple[tuple[Pod, Pod], ...] = ()  # (record as indexed, its replacement)

    def __call__(self, snap: Snapshot) -> Snapshot:
        pods, nodes = snap.pods, snap.nodes
        if self.removed_nodes:
            gone = self.removed_nodes
            nodes = tuple(n for n in nodes if n.name not in gone)
            pods = tuple(p for p in pods if p.node_name not in gone)
        if self.removed_pods:
            keys = {p.key for p in self.removed_pods}
            names = {p.name for p in self.removed_pods}
            pods = tuple(p for p in pods if p.name not in names or p.key not in keys)
        if self.replaced_pods:
            new = {old.key: edited for old, edited in self.replaced_pods}
            names = {old.name for old, _ in self.replaced_pods}
            pods = tuple(new.get(p.key, p) if p.name in names else p for p in pods)
        if self.nodes:
            upsert = {n.name: n for n in self.nodes}
            nodes = tuple(upsert.pop(n.name, n) for n in nodes) + tuple(upsert.values())
        return replace(snap, nodes=nodes, pods=pods)

    def patch(self, index: ClusterIndex, snap: Snapshot | None = None) -> tuple[ClusterIndex, set[str]]:
        """(a view of `index` with the change made, for the changed `snap` (default: made from
        `index.snapshot` when the view's snapshot is first read); the nodes whose object or
        pods it changed)."""
        removed = [p for name in sorted(self.removed_nodes) for p in index.pods_by_node.get(name, ())]
        removed += self.removed_pods
        removed += [old for old, _ in self.replaced_pods]
        added = [edited for _, edited in self.replaced_pods]
        touched = {n.name for n in self.nodes} | {p.node_name for p in removed + added if p.node_name}
        made = snap if snap is not None else (lambda: self(index.snapshot))
        view = index.patched(made, nodes=self.nodes, removed_nodes=self.removed_nodes,
                             removed_pods=removed, added_pods=added)
        return view, touched

    def pod_after(self, pod: Pod) -> Pod:
        """The pod's record once the change is made (its replacement, if any)."""
        for old, edited in self.replaced_pods:
            if old.key == pod.key:
                return edited
        return pod

    def removes(self, pod: Pod) -> bool:
        return pod.node_name in self.removed_nodes or any(p.key == pod.key for p in self.removed_pods)


@dataclass(frozen=True)
class Baseline:
    """The pod's evaluation on the unchanged cluster, as far as a what-if can reuse it:
    per node, whether every node-local filter passed (None when a PreFilter rejected the
    pod, or the pod is not a record of the index, so nothing carries over), and the spread
    partitions of the index's nodes (spread.compute's memo: views whose nodes are the
    same share it, the others derive theirs from it)."""

    index: ClusterIndex
    pod: Pod
    local_ok: dict[str, bool] | None
    partitions: dict[tuple, spread.Partition]
    local_pass: frozenset[str] = frozenset()  # the nodes of `local_ok` that passed

    @staticmethod
    def of(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict],
           partitions: dict[tuple, spread.Partition] | None = None) -> "Baseline":
        memo = {} if partitions is None else partitions
        indexed = any(p is pod for p in index.pods_by_namespace.get(pod.namespace, ()))
        if not indexed or any(v.stage == filters.PREFILTER for v in verdicts):
            return Baseline(index, pod, None, memo)
        ok = {v.node: filters.local_pass(v) for v in verdicts}
        return Baseline(index, pod, ok, memo, frozenset(n for n, passed in ok.items() if passed))


def fit_nodes(base: Baseline, change: Change) -> tuple[str, ...] | None:
    """The nodes on which the pod passes every filter once `change` is made, by name;
    None when the pod's record cannot be followed into the changed cluster (the caller
    then verifies on a re-indexed copy)."""
    if base.local_ok is None or change.removes(base.pod):
        return None
    view, touched = change.patch(base.index)
    pod = change.pod_after(base.pod)
    edited = {n.name for n in change.nodes} | change.removed_nodes
    memo = spread.DerivedPartitions(base.partitions, edited) if edited else base.partitions
    cycle = filters.Cycle(view, pod, spread.compute(view, pod, partitions=memo))
    same_pod = pod is base.pod or replace(pod, spread=base.pod.spread) == base.pod
    if not same_pod or cycle.prefilter is not None:
        return tuple(n for n in sorted(view.nodes)
                     if filters.evaluate_node(view, pod, view.nodes[n], cycle=cycle).passes)
    fit = []
    # an untouched node that failed a node-local filter before fails it again: skip it
    for name in sorted((base.local_pass | touched) & view.nodes.keys()):
        node = view.nodes[name]
        ok = None if name in touched else base.local_ok.get(name)
        if ok is None:
            ok = all(f is None for f in filters.local_failures(cycle, node))
        if ok and filters.passes_beyond_local(cycle, node):
            fit.append(name)
    return tuple(fit)
