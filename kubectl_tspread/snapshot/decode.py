"""Raw API objects (dicts as JSON-decoded) -> model records, once, with defaults applied.

Used by every snapshot source (live, file, demo). Keeps only what the engine needs, so
memory is bounded by the records and not by the JSON received. Label keys and values
are interned: 150k pods share a few hundred distinct strings. Records of sub-trees many
objects repeat are shared (sharing.py); pods, the bulk of a cluster, have a hot path of
their own (`pod`).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Mapping

from kubectl_tspread.labels import Requirement, Selector
from kubectl_tspread.model import (
    HONOR, IGNORE, Event, HostPort, Node, NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim, Pdb, Pod,
    PodAffinityTerm, PodCondition, Service, SpreadConstraint, StorageClass, Taint, Toleration, Volume, Workload,
    positional_constructor,
)
from kubectl_tspread.snapshot.sharing import (
    TEXT as _Text, json_key, keep as _keep, labels as _labels, memo as _memo, owner as _owner,
    parse_text as _parse_text, resources as _resources, shared_labels as _shared_labels,
)

_intern = sys.intern
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController", "Job")
# Pod-only memos (see sharing.py for why records are shared), each bounded like sharing.MEMO.
_SHAPES: dict[Any, tuple] = {}  # a spec's requests, ports, spread, tolerations and node selector
# a shape key is ~0.3-2 KB of JSON, or, from wire.py, the template sub-trees' text as sent (containers
# with their images, env and probes: a few KB): at most some tens of MB, ~100 MB with 20,000 templates
_SHAPES_LIMIT = 20_000
# volume names are mostly unique per pod (kube-api-access-xxxxx): kept for as many lists only
_VOLUMES: dict[tuple, tuple[Volume, ...]] = {}
_NONE: Mapping = {}  # stands for a missing map; never written to
# label maps and ownerReferences of pods from wire.py, by their JSON text: as bounded as
# sharing's label memo (a StatefulSet's pods each carry a label of their own name)
_LABEL_TEXTS: dict[tuple, dict[str, str]] = {}
_OWNER_TEXTS: dict[tuple, Any] = {}
_TEXTS_LIMIT = 50_000
# the spec's sub-trees _template_parts reads, in _template_of_text's key order
_TEMPLATE_FIELDS = ("containers", "initContainers", "overhead", "topologySpreadConstraints", "tolerations",
                    "nodeSelector")
_NO_AFFINITY = (None, (), (), (), (), ())  # what _pod_affinity gives for a pod without spec.affinity
_new_pod = positional_constructor(Pod)
_new_condition = positional_constructor(PodCondition)
# the pod conditions a record keeps: PodScheduled (the scheduler's message for a pending pod:
# why-pending, drain-safe's wait) and DisruptionTarget (a victim of preemption: the message's
# preemption part); Ready is kept as Pod.ready
READ_CONDITIONS = frozenset(("PodScheduled", "DisruptionTarget"))


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


# kube-scheduler's request for a container that states none (pkg/scheduler/util/pod_resources.go)
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


def nonzero_requests(spec: Mapping) -> tuple[int, int]:
    """The (cpu, memory) the scoring plugins charge: `effective_requests` with each container
    that has no cpu (memory) request counted at 100m (200Mi); an explicit "0" stays 0.

    >>> nonzero_requests({"containers": [{}, {"resources": {"requests": {"cpu": "0"}}}]})
    (100, 419430400)
    """
    def defaulted(containers):
        out = []
        for c in containers or ():
            req = dict((c.get("resources") or {}).get("requests") or {})
            req.setdefault("cpu", f"{DEFAULT_MILLI_CPU}m")
            req.setdefault("memory", str(DEFAULT_MEMORY))
            out.append({**c, "resources": {"requests": req}})
        return out

    total = effective_requests({"containers": defaulted(spec.get("containers")),
                                "initContainers": defaulted(spec.get("initContainers")),
                                "overhead": spec.get("overhead")})
    return total.get("cpu", 0), total.get("memory", 0)


def _host_ports(spec: Mapping) -> tuple[HostPort, ...]:
    out = []
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        for p in c.get("ports") or ():
            if p.get("hostPort"):
                out.append(HostPort(int(p["hostPort"]), p.get("protocol") or "TCP", p.get("hostIP") or ""))
    return tuple(out)


def _volumes(raw: Iterable[Mapping] | None) -> tuple[Volume, ...]:
    """A pod's volumes, one tuple per distinct list of (name, claim, emptyDir): the key holds only
    what the records hold, since volume names are often unique per pod (kube-api-access-xxxxx)."""
    if not raw:
        return ()
    key = tuple([(v.get("name", ""), (v.get("persistentVolumeClaim") or _NONE).get("claimName"), "emptyDir" in v)
                 for v in raw])
    try:
        hit = _VOLUMES.get(key)
    except TypeError:  # an unhashable name or claim: decoded as is
        return tuple(Volume(*k) for k in key)
    if hit is None:
        hit = _keep(_VOLUMES, key, tuple(Volume(*k) for k in key), _SHAPES_LIMIT)
    return hit


def _pod_affinity(affinity: Mapping | None) -> tuple:
    """(node_affinity, pod_affinity, pod_anti_affinity, and the preferred terms of each) of a
    pod's spec.affinity."""
    affinity = affinity or {}
    node = affinity.get("nodeAffinity") or {}
    pod_aff = affinity.get("podAffinity") or {}
    anti = affinity.get("podAntiAffinity") or {}
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    return (
        node_selector_terms(node.get(required)),
        _affinity_terms(pod_aff.get(required)),
        _affinity_terms(anti.get(required)),
        *_preferred_terms(node, pod_aff, anti),
    )


def _preference(term: Mapping) -> NodeSelectorTerm:
    return node_selector_terms({"nodeSelectorTerms": [term.get("preference") or {}]})[0]


def _preferred_terms(node: Mapping, pod_aff: Mapping, anti: Mapping) -> tuple:
    """The preferred terms of node affinity, pod affinity and anti-affinity as (weight, term)."""
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"
    nodes = tuple((int(t.get("weight") or 0), _preference(t))
                  for t in node.get(preferred) or ())
    pods = [tuple((int(t.get("weight") or 0), _affinity_terms([t.get("podAffinityTerm") or {}])[0])
                  for t in raw.get(preferred) or ()) for raw in (pod_aff, anti)]
    return (nodes, *pods)


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
    return effective_requests(spec), _host_ports(spec), nonzero_requests(spec)


def _spread(raw: Iterable[Mapping] | None) -> tuple[SpreadConstraint, ...]:
    return tuple(spread_constraint(c) for c in raw or ())


def _tolerations(raw: Iterable[Mapping] | None) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(t.get("key") or "", t.get("operator") or "Equal", t.get("value") or "", t.get("effect") or "")
        for t in raw or ()
    )


def _conditions(raw: Iterable[Mapping] | None) -> tuple[tuple[PodCondition, ...], bool]:
    """(the conditions of the types in READ_CONDITIONS as records, whether Ready is True). The
    others (Initialized, ContainersReady, Ready itself, …) are read by nothing past `ready`: a
    running pod's four conditions would be 600,000 records in a cluster of 150k pods. Strings
    are interned: the types, statuses, reasons and (per workload) messages repeat. Not memoised:
    transition times make most pods' conditions distinct."""
    if not raw:
        return (), False
    out = []
    ready = False
    for c in raw:
        get = c.get
        type_ = get("type", "")
        if type_ == "Ready":
            if get("status", "") == "True":
                ready = True
        elif type_ in READ_CONDITIONS:
            reason = get("reason")
            message = get("message")
            when = get("lastTransitionTime")
            out.append(_new_condition(_intern(type_), _intern(get("status", "")), _intern(reason) if reason else "",
                                      _intern(message) if message else "", _intern(when) if when else ""))
    return tuple(out), ready


def _scheduling(spec: Mapping) -> tuple:
    """(node_affinity, pod_affinity, pod_anti_affinity, requests, host_ports, spread, tolerations,
    node_selector) of a pod spec, shared by every pod whose spec has the same such sub-trees.

    One JSON key for the whole template-like part of the spec (requests, ports, spread,
    tolerations, node selector) instead of one per sub-tree. Affinity is keyed on its own: a
    DaemonSet's pods each pin one node through it, and folding it in would make one big key per
    DaemonSet and node. A miss decodes through the per-sub-tree memos, so records stay shared
    exactly as before."""
    get = spec.get
    containers = get("containers")
    inits = get("initContainers")
    affinity = get("affinity")
    aff = _NO_AFFINITY if affinity is None else _memo("affinity", affinity, _pod_affinity)
    # from wire.py (containers first: every pod it parsed has them), the sub-trees are JSON text
    if type(containers) is _Text or any(type(get(name)) is _Text for name in _TEMPLATE_FIELDS):
        return aff + _template_of_text(get)
    try:
        key = json_key((
            [(c.get("resources"), c.get("ports")) for c in containers] if containers else None,
            [(c.get("resources"), c.get("ports"), c.get("restartPolicy")) for c in inits] if inits else None,
            get("overhead"), get("topologySpreadConstraints"), get("tolerations"), get("nodeSelector")))
    except (TypeError, ValueError, AttributeError):  # unkeyable (see _memo) or malformed: decoded as is
        return aff + _template_parts(spec)
    hit = _SHAPES.get(key)
    if hit is None:
        hit = _keep(_SHAPES, key, _template_parts(spec), _SHAPES_LIMIT)
    return aff + hit


def _template_of_text(get: Callable[[str], Any]) -> tuple:
    """_template_parts of a spec from wire.py's typed parse, whose template-like sub-trees are
    left as their JSON text (msgspec.Raw): the pods of one template repeat it byte for byte, so
    the memo is keyed on the text and it is parsed only on a miss. Equal text is equal JSON, and
    one value has one record, so a record keyed either way is the one decoding it gives."""
    texts = tuple([None if (t := get(name)) is None else bytes(t) for name in _TEMPLATE_FIELDS])
    hit = _SHAPES.get(texts)
    if hit is None:
        spec = {name: _parse_text(t) for name, t in zip(_TEMPLATE_FIELDS, texts) if t is not None}
        hit = _keep(_SHAPES, texts, _template_parts(spec), _SHAPES_LIMIT)
    return hit


def _labels_of(raw: Any) -> dict[str, str]:
    """A pod's labels, shared as sharing.shared_labels shares them; from wire.py, JSON text
    looked up as it came (a workload's pods repeat it)."""
    if type(raw) is not _Text:
        return _shared_labels(raw)
    return _memo("labels", raw, _shared_labels, _LABEL_TEXTS, _TEXTS_LIMIT)


def _owner_of(meta: Mapping) -> Any:
    """sharing.owner of a pod's metadata; from wire.py, its ownerReferences are JSON text,
    looked up as it came (the pods of one controller repeat it)."""
    refs = meta.get("ownerReferences")
    if type(refs) is not _Text:
        return _owner(meta)
    return _memo("owner", refs, _owner_of_references, _OWNER_TEXTS, _TEXTS_LIMIT)


def _owner_of_references(refs: Any) -> Any:
    return _owner({"ownerReferences": refs})


def _template_parts(spec: Mapping) -> tuple:
    requests, host_ports, nonzero = _memo("containers", _container_parts(spec), _requests_and_ports)
    return (requests, host_ports, nonzero, _memo("spread", spec.get("topologySpreadConstraints"), _spread),
            _memo("tolerations", spec.get("tolerations"), _tolerations), _shared_labels(spec.get("nodeSelector")))


def pod(obj: Mapping) -> Pod:
    meta = obj.get("metadata") or _NONE
    spec = obj.get("spec") or _NONE
    status = obj.get("status") or _NONE
    (node_affinity, pod_affinity, pod_anti_affinity, preferred_node, preferred_pod, preferred_anti, requests,
     host_ports, score_requests, spread, tolerations, node_selector) = _scheduling(spec)
    conditions, ready = _conditions(status.get("conditions"))
    annotations = meta.get("annotations")
    # positional, in Pod's field order (a missing or extra argument is a TypeError)
    return _new_pod(
        _intern(meta.get("namespace") or "default"),  # namespace
        meta.get("name", ""),  # name
        meta.get("uid", ""),  # uid
        _labels_of(meta.get("labels")),  # labels
        _intern(spec.get("nodeName") or ""),  # node_name
        _intern(status.get("phase") or "Pending"),  # phase
        bool(meta.get("deletionTimestamp")),  # terminating
        meta.get("creationTimestamp") or "",  # created
        _owner_of(meta),  # owner
        spread, node_selector, node_affinity, pod_affinity, pod_anti_affinity, tolerations, requests, host_ports,
        _volumes(spec.get("volumes")),  # volumes
        _intern(spec.get("schedulerName") or "default-scheduler"),  # scheduler_name
        status.get("nominatedNodeName") or "",  # nominated_node
        int(spec.get("priority") or 0),  # priority
        conditions,  # conditions
        bool(annotations) and "kubernetes.io/config.mirror" in annotations,  # mirror
        ready,  # ready
        score_requests, preferred_node, preferred_pod, preferred_anti,
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
        bind_completed="pv.kubernetes.io/bind-completed" in (meta.get("annotations") or {}),
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
