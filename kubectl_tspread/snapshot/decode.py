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


# Speed and memory at 150k pods: the pods of one workload repeat the same labels, constraints,
# tolerations, affinity, requests and volumes, so each distinct sub-tree is decoded once and the
# (immutable, read-only) record is shared. The key is the sub-tree's canonical JSON bytes: equal
# bytes mean equal JSON, so the shared record is exactly what decoding it again would give.
try:
    from orjson import dumps as _json_key
except ImportError:  # pragma: no cover - orjson is optional; the stdlib key is only slower
    import json as _json

    def _json_key(obj: Any) -> Any:
        return _json.dumps(obj, separators=(",", ":"))

_MEMO: dict[Any, Any] = {}
_MEMO_LIMIT = 200_000  # distinct sub-trees kept; past it the memo starts over (bounded memory)
_UNITS: dict[tuple[str, Any], int] = {}


def _memo(tag: str, raw: Any, build: Callable[[Any], Any]) -> Any:
    """build(raw), shared between equal `raw` sub-trees; `raw` that cannot be keyed is decoded as is."""
    try:
        key = (tag, _json_key(raw))
    except (TypeError, ValueError):  # e.g. a YAML dump's datetime or non-string keys
        return build(raw)
    return _remember(key, build, raw)


def _remember(key: Any, build: Callable[[Any], Any], raw: Any) -> Any:
    hit = _MEMO.get(key)
    if hit is None:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        hit = _MEMO[key] = build(raw)
    return hit


def _units(k: str, v: Any) -> int:
    """to_scheduler_units, remembered: a cluster uses a few dozen distinct quantities."""
    try:
        return _UNITS[(k, v)]
    except KeyError:
        out = _UNITS[(k, v)] = to_scheduler_units(k, v)
        return out
    except TypeError:  # an unhashable value: let the parser reject it as before
        return to_scheduler_units(k, v)


def _resources(d: Mapping | None) -> dict[str, int]:
    if not d:
        return {}
    return {_intern(k): _units(k, v) for k, v in d.items()}


def _owner(meta: Mapping) -> OwnerRef | None:
    for o in meta.get("ownerReferences") or ():
        if o.get("controller"):
            key = ("owner", o.get("kind", ""), o.get("name", ""), o.get("uid", ""), o.get("apiVersion", ""))
            return _remember(key, lambda k: OwnerRef(_intern(k[1]), *k[2:]), key)
    return None


def _shared_labels(d: Mapping | None) -> dict[str, str]:
    """_labels for maps many pods repeat (a workload's labels, nodeSelector): one dict per distinct map."""
    if not d:
        return {}
    try:
        key = ("labels",) + tuple(d.items())
        hash(key)
    except TypeError:
        return _labels(d)
    return _remember(key, _labels, d)


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


def _pod_affinity(affinity: Mapping | None) -> tuple:
    """(node_affinity, pod_affinity, pod_anti_affinity) of a pod's spec.affinity."""
    affinity = affinity or {}
    node_aff = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    return (
        node_selector_terms(node_aff),
        _affinity_terms((affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")),
        _affinity_terms(
            (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")),
    )


def _container_parts(spec: Mapping) -> tuple:
    """What requests and host ports depend on, small enough to key the memo cheaply."""
    return (
        [(c.get("resources"), c.get("ports")) for c in spec.get("containers") or ()],
        [(c.get("resources"), c.get("ports"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()],
        spec.get("overhead"),
    )


def _requests_and_ports(parts: tuple) -> tuple[dict[str, int], tuple[HostPort, ...]]:
    containers, inits, overhead = parts
    spec = {
        "containers": [{"resources": r, "ports": p} for r, p in containers],
        "initContainers": [{"resources": r, "ports": p, "restartPolicy": rp} for r, p, rp in inits],
        "overhead": overhead,
    }
    return effective_requests(spec), _host_ports(spec)


def _spread(raw: Iterable[Mapping] | None) -> tuple[SpreadConstraint, ...]:
    return tuple(spread_constraint(c) for c in raw or ())


def _tolerations(raw: Iterable[Mapping] | None) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")
        for t in raw or ()
    )


def _condition(c: Mapping) -> PodCondition:
    # interned: 150k pods repeat a handful of types, statuses, reasons and (per workload) messages
    return PodCondition(_intern(c.get("type", "")), _intern(c.get("status", "")), _intern(c.get("reason") or ""),
                        _intern(c.get("message") or ""), _intern(c.get("lastTransitionTime") or ""))


def pod(obj: Mapping) -> Pod:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    node_affinity, pod_affinity, pod_anti_affinity = _memo("affinity", spec.get("affinity"), _pod_affinity)
    requests, host_ports = _memo("containers", _container_parts(spec), _requests_and_ports)
    conditions = tuple(_condition(c) for c in status.get("conditions") or ())
    return Pod(
        namespace=_intern(meta.get("namespace") or "default"),
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        labels=_shared_labels(meta.get("labels")),
        node_name=_intern(spec.get("nodeName") or ""),
        phase=_intern(status.get("phase") or "Pending"),
        terminating=bool(meta.get("deletionTimestamp")),
        created=meta.get("creationTimestamp") or "",
        owner=_owner(meta),
        spread=_memo("spread", spec.get("topologySpreadConstraints"), _spread),
        node_selector=_shared_labels(spec.get("nodeSelector")),
        node_affinity=node_affinity,
        pod_affinity=pod_affinity,
        pod_anti_affinity=pod_anti_affinity,
        tolerations=_memo("tolerations", spec.get("tolerations"), _tolerations),
        requests=requests,
        host_ports=host_ports,
        volumes=_memo("volumes", spec.get("volumes"), lambda v: _volumes({"volumes": v})),
        scheduler_name=_intern(spec.get("schedulerName") or "default-scheduler"),
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
