"""What a fix does besides letting the pod in: its side effects (which set the tier it ranks in,
model.ProposedChange.tier).

Pure. A fix that deletes Node objects deletes every pod bound there (the pod garbage
collector) and strands the volumes only those nodes can mount; a fix that edits the pod's
constraints or requests is a template edit that rolls every pod of the workload; evicting
pods takes replicas away. The order fixes are offered in follows from that:

    tier 0  no change to running pods (uncordon, label, delete empty nodes, add a node)
    tier 1  template edits (a rolling update of the whole workload)
    tier 2  destructive: deletes or evicts running pods, or strands volumes

    delete nodes c1..c3 holding shop/orders-db-2 → (DeletesPods [shop/orders-db-2],
    ReducesAvailability [StatefulSet/orders-db]) → tier 2
"""

from __future__ import annotations

from typing import Iterable, Sequence

from kubectl_tspread.views.blockers import volumes_pinned_to
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import (
    ADDS_NODE,
    DELETES_PODS,
    EVICTS_PODS,
    RECREATES_POD,
    REDUCES_AVAILABILITY,
    ROLLS_WORKLOAD,
    STRANDS_VOLUMES,
    WEAKENS_SPREAD,
    Pod,
    SideEffect,
)

def lost_pods(index: ClusterIndex, node_names: Iterable[str]) -> list[Pod]:
    """The pods deleting these Node objects takes away for good: bound, not finished, not
    DaemonSet or mirror pods (those belong to the node and go with it)."""
    out = []
    for name in sorted(node_names):
        for p in index.pods_by_node.get(name, ()):
            if p.finished or p.goes_with_node:
                continue
            out.append(p)
    return sorted(out, key=lambda p: p.key)


def workload_ref(index: ClusterIndex, pod: Pod) -> str | None:
    """Kind/name of the controller a user thinks in (Deployment over ReplicaSet), else None."""
    top = index.top_controller(pod)
    if top is not None:
        return top.ref
    if pod.owner is not None:
        return f"{pod.owner.kind}/{pod.owner.name}"
    return None


def _workloads(index: ClusterIndex, pods: Sequence[Pod]) -> tuple[str, ...]:
    refs = {f"{p.namespace}/{ref}" if (ref := workload_ref(index, p)) else p.key for p in pods}
    return tuple(sorted(refs))


def deleting_nodes(index: ClusterIndex, names: Sequence[str]) -> tuple[SideEffect, ...]:
    """DeletesPods + ReducesAvailability for the pods bound there, StrandsVolumes for the PVs
    only these nodes can mount; nothing for empty nodes."""
    pods = lost_pods(index, names)
    out = []
    if pods:
        out.append(SideEffect(DELETES_PODS, tuple(p.key for p in pods), {"pods": len(pods)}))
        out.append(SideEffect(REDUCES_AVAILABILITY, _workloads(index, pods)))
    pvs = volumes_pinned_to(index, names)
    if pvs:
        out.append(SideEffect(STRANDS_VOLUMES, tuple(pvs)))
    return tuple(out)


def evicting(index: ClusterIndex, pods: Sequence[Pod]) -> tuple[SideEffect, ...]:
    return (SideEffect(EVICTS_PODS, tuple(p.key for p in pods), {"pods": len(pods)}),
            SideEffect(REDUCES_AVAILABILITY, _workloads(index, pods)))


def template_edit(index: ClusterIndex, pod: Pod, weakens: bool = False) -> tuple[SideEffect, ...]:
    """RollsWorkload with the number of pods the rolling update replaces (the Pending ones
    included), or RecreatesPod for a pod without a controller; WeakensSpread when the edit
    loosens the constraint."""
    ref = workload_ref(index, pod)
    if pod.owner is None or ref is None:
        out = [SideEffect(RECREATES_POD, (pod.key,))]
        target = (pod.key,)
    else:
        top = index.top_controller(pod)
        # the controllers whose pods the rollout replaces: the top one and those it owns (a
        # Deployment's ReplicaSets); one pass over the namespace's pods, by owner uid
        uids = {pod.owner.uid}
        if top is not None:
            uids.add(top.uid)
            uids.update(w.uid for w in index.snapshot.workloads
                        if w.namespace == pod.namespace and w.owner is not None and w.owner.uid == top.uid)
        mates = sum(1 for p in index.pods_by_namespace.get(pod.namespace, ())
                    if p.owner is not None and p.owner.uid in uids and not p.finished)
        target = (f"{pod.namespace}/{ref}",)
        out = [SideEffect(ROLLS_WORKLOAD, target, {"pods": max(mates, 1)})]
    if weakens:
        out.append(SideEffect(WEAKENS_SPREAD, target))
    return tuple(out)


def adding_node(name: str) -> tuple[SideEffect, ...]:
    return (SideEffect(ADDS_NODE, (name,)),)
