"""Raw API objects (dicts as JSON-decoded) -> model records, once, with defaults applied.

Used by every snapshot source (live, file, demo). Keeps only what the engine needs, so
memory is bounded by the records and not by the JSON received. Label keys and values
are interned: 150k pods share a few hundred distinct strings.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Mapping

from kubectl_tspread.labels import Requirement, Selector
from kubectl_tspread.model import (
    HONOR, IGNORE, Event, HostPort, Node, NodeSelectorTerm, OwnerRef, PersistentVolume,
    PersistentVolumeClaim, Pdb, Pod, PodAffinityTerm, PodCondition, Service, SpreadConstraint,
    StorageClass, Taint, Toleration, Volume, Workload,
)
from kubectl_tspread.quantity import to_scheduler_units

_intern = sys.intern
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController", "Job")


def _labels(d: Mapping | None) -> dict[str, str]:
    if not d:
        return {}
    return {_intern(str(k)): _intern(str(v)) for k, v in d.items()}


def _resources(d: Mapping | None) -> dict[str, int]:
    if not d:
        return {}
    return {_intern(k): to_scheduler_units(k, v) for k, v in d.items()}


def _owner(meta: Mapping) -> OwnerRef | None:
    for o in meta.get("ownerReferences") or ():
        if o.get("controller"):
            return OwnerRef(_intern(o.get("kind", "")), o.get("name", ""), o.get("uid", ""),
                            o.get("apiVersion", ""))
    return None


def _node_requirements(exprs: Iterable[Mapping] | None) -> tuple[Requirement, ...]:
    return tuple(
        Requirement(e.get("key", ""), e.get("operator", ""), tuple(str(v) for v in e.get("values") or ()))
        for e in exprs or ()
    )


def node_selector_terms(d: Mapping | None) -> tuple[NodeSelectorTerm, ...] | None:
    """A v1.NodeSelector ({nodeSelectorTerms: [...]}) -> terms; None when unset."""
    if d is None:
        return None
    return tuple(
        NodeSelectorTerm(_node_requirements(t.get("matchExpressions")), _node_requirements(t.get("matchFields")))
        for t in d.get("nodeSelectorTerms") or ()
    )


def spread_constraint(c: Mapping, implicit: bool = False) -> SpreadConstraint:
    return SpreadConstraint(
        max_skew=int(c.get("maxSkew", 1)),
        topology_key=_intern(c.get("topologyKey", "")),
        when_unsatisfiable=c.get("whenUnsatisfiable", "DoNotSchedule"),
        selector=Selector.from_api(c.get("labelSelector")),
        min_domains=int(c["minDomains"]) if c.get("minDomains") is not None else 1,
        node_affinity_policy=c.get("nodeAffinityPolicy") or HONOR,
        node_taints_policy=c.get("nodeTaintsPolicy") or IGNORE,
        match_label_keys=tuple(c.get("matchLabelKeys") or ()),
        implicit=implicit,
    )


def _affinity_terms(terms: Iterable[Mapping] | None) -> tuple[PodAffinityTerm, ...]:
    out = []
    for t in terms or ():
        ns_sel = t.get("namespaceSelector")
        out.append(PodAffinityTerm(
            selector=Selector.from_api(t.get("labelSelector")),
            topology_key=t.get("topologyKey", ""),
            namespaces=tuple(t.get("namespaces") or ()),
            namespace_selector=None if ns_sel is None else Selector.from_api(ns_sel),
            match_label_keys=tuple(t.get("matchLabelKeys") or ()),
            mismatch_label_keys=tuple(t.get("mismatchLabelKeys") or ()),
        ))
    return tuple(out)


def effective_requests(spec: Mapping) -> dict[str, int]:
    """What NodeResourcesFit charges: max(each init container, sum of containers) + overhead.

    Restartable init containers (sidecars) run alongside the app containers and add to the sum.
    """
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        for k, v in _resources((c.get("resources") or {}).get("requests")).items():
            total[k] = total.get(k, 0) + v
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        req = _resources((c.get("resources") or {}).get("requests"))
        if c.get("restartPolicy") == "Always":
            for k, v in req.items():
                sidecars[k] = sidecars.get(k, 0) + v
            continue
        for k, v in req.items():
            # an init container runs beside the sidecars started before it
            init_max[k] = max(init_max.get(k, 0), v + sidecars.get(k, 0))
    for k, v in sidecars.items():
        total[k] = total.get(k, 0) + v
    for k, v in init_max.items():
        total[k] = max(total.get(k, 0), v)
    for k, v in _resources(spec.get("overhead")).items():
        total[k] = total.get(k, 0) + v
    return total


def _host_ports(spec: Mapping) -> tuple[HostPort, ...]:
    out = []
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        for p in c.get("ports") or ():
            if p.get("hostPort"):
                out.append(HostPort(int(p["hostPort"]), p.get("protocol") or "TCP", p.get("hostIP") or ""))
    return tuple(out)


def _volumes(spec: Mapping) -> tuple[Volume, ...]:
    out = []
    for v in spec.get("volumes") or ():
        pvc = (v.get("persistentVolumeClaim") or {}).get("claimName")
        out.append(Volume(v.get("name", ""), pvc, "emptyDir" in v))
    return tuple(out)


def _ready(conditions: Iterable[PodCondition]) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def pod(obj: Mapping) -> Pod:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    affinity = spec.get("affinity") or {}
    node_aff = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    conditions = tuple(
        PodCondition(c.get("type", ""), c.get("status", ""), c.get("reason") or "", c.get("message") or "",
                     c.get("lastTransitionTime") or "")
        for c in status.get("conditions") or ()
    )
    return Pod(
        namespace=_intern(meta.get("namespace") or "default"),
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        labels=_labels(meta.get("labels")),
        node_name=_intern(spec.get("nodeName") or ""),
        phase=_intern(status.get("phase") or "Pending"),
        terminating=bool(meta.get("deletionTimestamp")),
        created=meta.get("creationTimestamp") or "",
        owner=_owner(meta),
        spread=tuple(spread_constraint(c) for c in spec.get("topologySpreadConstraints") or ()),
        node_selector=_labels(spec.get("nodeSelector")),
        node_affinity=node_selector_terms(node_aff),
        pod_affinity=_affinity_terms(
            (affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")),
        pod_anti_affinity=_affinity_terms(
            (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")),
        tolerations=tuple(
            Toleration(t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")
            for t in spec.get("tolerations") or ()
        ),
        requests=effective_requests(spec),
        host_ports=_host_ports(spec),
        volumes=_volumes(spec),
        scheduler_name=spec.get("schedulerName") or "default-scheduler",
        nominated_node=status.get("nominatedNodeName") or "",
        priority=int(spec.get("priority") or 0),
        conditions=conditions,
        mirror="kubernetes.io/config.mirror" in (meta.get("annotations") or {}),
        ready=_ready(conditions),
    )


def node(obj: Mapping) -> Node:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    ready = True
    for c in status.get("conditions") or ():
        if c.get("type") == "Ready":
            ready = c.get("status") == "True"
    return Node(
        name=_intern(meta.get("name", "")),
        labels=_labels(meta.get("labels")),
        taints=tuple(Taint(t.get("key", ""), t.get("value") or "", t.get("effect", "")) for t in spec.get("taints") or ()),
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=_resources(status.get("allocatable")),
        ready=ready,
        created=meta.get("creationTimestamp") or "",
    )


def workload(obj: Mapping) -> Workload:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    kind = obj.get("kind", "")
    sel = spec.get("selector")
    if kind == "ReplicationController":
        selector = Selector.from_match_labels(sel)
    else:
        selector = Selector.from_api(sel)
    replicas = spec.get("replicas")
    if replicas is None and kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
        replicas = 1
    return Workload(
        kind=kind, namespace=meta.get("namespace") or "default", name=meta.get("name", ""),
        uid=meta.get("uid", ""), labels=_labels(meta.get("labels")), selector=selector,
        owner=_owner(meta), replicas=replicas, ready_replicas=int(status.get("readyReplicas") or 0),
        created=meta.get("creationTimestamp") or "",
    )


def service(obj: Mapping) -> Service:
    meta = obj.get("metadata") or {}
    return Service(meta.get("namespace") or "default", meta.get("name", ""),
                   _labels((obj.get("spec") or {}).get("selector")))


def _int_or_percent(v: Any) -> int | str | None:
    if v is None or isinstance(v, int):
        return v
    s = str(v)
    return s if s.endswith("%") else int(s)


def pdb(obj: Mapping) -> Pdb:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    return Pdb(
        namespace=meta.get("namespace") or "default", name=meta.get("name", ""),
        selector=Selector.from_api(spec.get("selector")),
        min_available=_int_or_percent(spec.get("minAvailable")),
        max_unavailable=_int_or_percent(spec.get("maxUnavailable")),
        disruptions_allowed=int(status.get("disruptionsAllowed") or 0),
        current_healthy=int(status.get("currentHealthy") or 0),
        desired_healthy=int(status.get("desiredHealthy") or 0),
        expected_pods=int(status.get("expectedPods") or 0),
    )


def persistent_volume(obj: Mapping) -> PersistentVolume:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    claim = spec.get("claimRef") or {}
    return PersistentVolume(
        name=meta.get("name", ""),
        node_affinity=node_selector_terms((spec.get("nodeAffinity") or {}).get("required")),
        storage_class=spec.get("storageClassName") or "",
        claim=f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else "",
        labels=_labels(meta.get("labels")),
    )


def persistent_volume_claim(obj: Mapping) -> PersistentVolumeClaim:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return PersistentVolumeClaim(
        namespace=meta.get("namespace") or "default", name=meta.get("name", ""),
        volume_name=spec.get("volumeName") or "", storage_class=spec.get("storageClassName") or "",
        phase=(obj.get("status") or {}).get("phase") or "Pending",
    )


def storage_class(obj: Mapping) -> StorageClass:
    meta = obj.get("metadata") or {}
    topo = tuple(
        NodeSelectorTerm(tuple(Requirement(e.get("key", ""), "In", tuple(e.get("values") or ()))
                               for e in t.get("matchLabelExpressions") or ()))
        for t in obj.get("allowedTopologies") or ()
    )
    return StorageClass(meta.get("name", ""), obj.get("volumeBindingMode") or "Immediate", topo,
                        obj.get("provisioner") or "")


def event(obj: Mapping) -> Event:
    meta = obj.get("metadata") or {}
    inv = obj.get("involvedObject") or obj.get("regarding") or {}
    return Event(
        namespace=meta.get("namespace") or inv.get("namespace") or "default",
        object_kind=inv.get("kind", ""), object_name=inv.get("name", ""),
        reason=obj.get("reason") or "", message=obj.get("message") or obj.get("note") or "",
        last_seen=obj.get("lastTimestamp") or obj.get("eventTime") or meta.get("creationTimestamp") or "",
        count=int(obj.get("count") or (obj.get("series") or {}).get("count") or 1),
        object_uid=inv.get("uid", ""),
    )


# kind -> (decoder, Snapshot field). Workload kinds all land in `workloads`.
DECODERS: dict[str, tuple[Callable[[Mapping], Any], str]] = {
    "Node": (node, "nodes"),
    "Pod": (pod, "pods"),
    "Service": (service, "services"),
    "PodDisruptionBudget": (pdb, "pdbs"),
    "PersistentVolume": (persistent_volume, "pvs"),
    "PersistentVolumeClaim": (persistent_volume_claim, "pvcs"),
    "StorageClass": (storage_class, "storage_classes"),
    "Event": (event, "events"),
    **{k: (workload, "workloads") for k in WORKLOAD_KINDS},
}
