"""Raw API objects (dicts as JSON-decoded) -> model records, once, with defaults applied.

Used by every snapshot source (live, file, demo). Keeps only what the engine needs, so
memory is bounded by the records and not by the JSON received. Label keys and values
are interned: 150k pods share a few hundred distinct strings. Records of sub-trees many
objects repeat are shared (sharing.py); pods, the bulk of a cluster, have a hot path of
their own (`pod`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping  # not typing.Mapping: its isinstance goes through Python, per field
from typing import Any, Callable, Iterable

from kubectl_tspread.engine import podrequests, versions
from kubectl_tspread.model.labels import (
    DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN, Requirement, Selector, label_text,
)
from kubectl_tspread.model import (
    HONOR, IGNORE, NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, ContainerResize, Event, HostPort, Node,
    NodeSelectorTerm, PersistentVolume, PersistentVolumeClaim, Pdb, Pod, PodAffinityTerm, PodCondition, PodResize,
    Service, SpreadConstraint, StorageClass, Taint, Toleration, Volume, Workload, new_pod, new_pod_condition,
)
from kubectl_tspread.snapshot.fields import (
    INT32_MAX, TIMES as _TIMES, FieldError, MalformedObject, flag, integer, label_map, mapping, maps, name as _name,
    one_of, operands, printable, sequence, selector as _selector, strings, text, timestamp,
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
                    "nodeSelector", "resources")
_NO_AFFINITY = (None, (), (), (), (), ())  # what _pod_affinity gives for a pod without spec.affinity
# the pod conditions a record keeps: PodScheduled (the scheduler's message for a pending pod:
# why-pending, drain-safe's wait) and DisruptionTarget (a victim of preemption: the message's
# preemption part); Ready is kept as Pod.ready
READ_CONDITIONS = frozenset(("PodScheduled", "DisruptionTarget"))


_NODE_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)


def _node_requirements(exprs: Iterable[Mapping] | None, path: str, fields: bool = False) -> tuple[Requirement, ...]:
    """A term's matchExpressions, or with `fields` its matchFields (metadata.name In or NotIn
    one name: the only field selector the API allows there)."""
    out = []
    for i, e in enumerate(maps(exprs, path)):
        where = f"{path}[{i}]"
        key = _name(e.get("key"), f"{where}.key")
        if fields:
            if key != "metadata.name":
                raise FieldError(f"{where}.key", "metadata.name", key)
            op = one_of(e.get("operator"), f"{where}.operator", ("In", "NotIn"), "")
            if op and len(sequence(e.get("values"), f"{where}.values")) != 1:
                raise FieldError(f"{where}.values", f"one node name for {op}", e.get("values"))
        else:
            # required: a misspelt operator would match no node at all
            op = one_of(e.get("operator"), f"{where}.operator", _NODE_OPERATORS, "")
        if not op:
            raise FieldError(f"{where}.operator", " or ".join(_NODE_OPERATORS), e.get("operator"))
        operands(e, where)
        out.append(Requirement(key, op, tuple(label_text(v) for v in e.get("values") or ())))
    return tuple(out)


def node_selector_terms(d: Mapping | None, path: str = "nodeSelector") -> tuple[NodeSelectorTerm, ...] | None:
    """A v1.NodeSelector ({nodeSelectorTerms: [...]}) -> terms; None when unset."""
    if d is None:
        return None
    terms = mapping(d, path).get("nodeSelectorTerms")
    path += ".nodeSelectorTerms"
    return tuple(
        NodeSelectorTerm(_node_requirements(t.get("matchExpressions"), f"{path}[{i}].matchExpressions"),
                         _node_requirements(t.get("matchFields"), f"{path}[{i}].matchFields", fields=True))
        for i, t in enumerate(maps(terms, path))
    )


def spread_constraint(c: Mapping, implicit: bool = False,
                      path: str = "spec.topologySpreadConstraints[0]") -> SpreadConstraint:
    """One raw constraint, every field checked as the API server validates it: maxSkew and
    minDomains positive int32, the enums one of their values (traps and the drain's arrays
    index by them; a maxSkew past 64 bits cannot even be written as JSON)."""
    min_domains = c.get("minDomains")
    return SpreadConstraint(
        max_skew=integer(c.get("maxSkew", 1), f"{path}.maxSkew", 1, INT32_MAX, "a positive integer"),
        # required: a constraint over the label "" has no domains, and would hide a broken dump
        topology_key=_intern(_name(c.get("topologyKey"), f"{path}.topologyKey")),
        when_unsatisfiable=one_of(c.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable",
                                  ("DoNotSchedule", "ScheduleAnyway"), "DoNotSchedule"),
        selector=Selector.from_api(_selector(c.get("labelSelector"), f"{path}.labelSelector")),
        min_domains=1 if min_domains is None else integer(min_domains, f"{path}.minDomains", 1, INT32_MAX,
                                                          "a positive integer"),
        node_affinity_policy=one_of(c.get("nodeAffinityPolicy"), f"{path}.nodeAffinityPolicy", (HONOR, IGNORE), HONOR),
        node_taints_policy=one_of(c.get("nodeTaintsPolicy"), f"{path}.nodeTaintsPolicy", (HONOR, IGNORE), IGNORE),
        match_label_keys=strings(c.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
        implicit=implicit,
    )


def _affinity_terms(terms: Iterable[Mapping] | None, path: str) -> tuple[PodAffinityTerm, ...]:
    out = []
    for i, t in enumerate(maps(terms, path)):
        where = f"{path}[{i}]"
        ns_sel = _selector(t.get("namespaceSelector"), f"{where}.namespaceSelector")
        out.append(PodAffinityTerm(
            selector=Selector.from_api(_selector(t.get("labelSelector"), f"{where}.labelSelector")),
            topology_key=text(t.get("topologyKey"), f"{where}.topologyKey"),
            namespaces=strings(t.get("namespaces"), f"{where}.namespaces"),
            namespace_selector=None if ns_sel is None else Selector.from_api(ns_sel),
            match_label_keys=strings(t.get("matchLabelKeys"), f"{where}.matchLabelKeys"),
            mismatch_label_keys=strings(t.get("mismatchLabelKeys"), f"{where}.mismatchLabelKeys"),
        ))
    return tuple(out)


def effective_requests(spec: Mapping) -> dict[str, int]:
    """What NodeResourcesFit charges: max(each init container, sum of containers) + overhead
    (engine/podrequests.py `pod_requests`, from the spec's parsed requests).

    Restartable init containers (sidecars) run alongside the app containers and add to the sum.
    Pod-level requests (spec.resources, PodLevelResources: on from 1.34) replace the containers'
    cpu, memory and hugepages before the overhead is added; an API server without the feature
    drops the field, so a pod that carries it is read as 1.34+ schedules it.
    """
    return podrequests.pod_requests(_spec_parts(spec), _pod_level(spec), _resources(spec.get("overhead"),
                                                                                    "spec.overhead"))


def _spec_parts(spec: Mapping) -> list[tuple[dict[str, int], str]]:
    """(requests, kind) of every container in spec order, containers first (podrequests.aggregate)."""
    parts = []
    for field, path in (("containers", "spec.containers"), ("initContainers", "spec.initContainers")):
        for i, c in enumerate(maps(spec.get(field), path)):
            where = f"{path}[{i}].resources"
            if field == "containers":
                kind = podrequests.CONTAINER
            else:  # `always` would make a sidecar a plain init container (its requests not summed)
                policy = one_of(c.get("restartPolicy"), f"{path}[{i}].restartPolicy", _RESTART_POLICIES, "")
                kind = podrequests.SIDECAR if policy == "Always" else podrequests.INIT
            res = mapping(_defaulted(c.get("resources"), where), where)
            parts.append((_resources(res.get("requests"), f"{where}.requests"), kind))
    return parts


_RESTART_POLICIES = ("Always", "OnFailure", "Never")  # a container's (ContainerRestartPolicy)


def _pod_level(spec: Mapping) -> dict[str, int]:
    return _resources(mapping(spec.get("resources"), "spec.resources").get("requests"), "spec.resources.requests")


DEFAULT_MILLI_CPU, DEFAULT_MEMORY = podrequests.DEFAULT_MILLI_CPU, podrequests.DEFAULT_MEMORY


def nonzero_requests(spec: Mapping, pod_level: bool = True) -> tuple[int, int]:
    """The (cpu, memory) the scoring plugins charge: `effective_requests` with each container
    that has no cpu (memory) request counted at 100m (200Mi); an explicit "0" stays 0.
    `pod_level=False` leaves spec.resources out: NodeResourcesFit's score of the pod being
    placed reads its requests so (its scorer never turns PodLevelResources on, while the
    requests of the pods already on a node keep them).

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

    # pod-level requests replace the containers' for scoring too (PodRequests reads them)
    total = effective_requests({"containers": defaulted(spec.get("containers")),
                                "initContainers": defaulted(spec.get("initContainers")),
                                "overhead": spec.get("overhead"),
                                "resources": spec.get("resources") if pod_level else None})
    return total.get("cpu", 0), total.get("memory", 0)


_PROTOCOLS = ("TCP", "UDP", "SCTP")  # a port's protocol: `tcp` would never conflict with a TCP port


def _host_ports(spec: Mapping) -> tuple[HostPort, ...]:
    out = []
    for field in ("containers", "initContainers"):
        for i, c in enumerate(maps(spec.get(field), f"spec.{field}")):
            for j, p in enumerate(maps(c.get("ports"), f"spec.{field}[{i}].ports")):
                if p.get("hostPort") is None:
                    continue
                where = f"spec.{field}[{i}].ports[{j}]"
                # 0 is no host port; false or "" is no port number (read as none before)
                port = integer(p["hostPort"], f"{where}.hostPort", 0, 65535, "a port number")
                if port:
                    out.append(HostPort(port, one_of(p.get("protocol"), f"{where}.protocol", _PROTOCOLS, "TCP"),
                                        text(p.get("hostIP"), f"{where}.hostIP")))
    return tuple(out)


def _volumes(raw: Iterable[Mapping] | None) -> tuple[Volume, ...]:
    """A pod's volumes, one tuple per distinct list of (name, claim, emptyDir): the key holds only
    what the records hold, since volume names are often unique per pod (kube-api-access-xxxxx)."""
    if not raw:
        sequence(raw, "spec.volumes")  # 0, "" or false where a list belongs is no empty list
        return ()
    try:
        # not `or _NONE`: 0, "" or false as the claim is named (AttributeError below), not read as none
        key = tuple([(v.get("name", ""),
                      (_NONE if (c := v.get("persistentVolumeClaim")) is None else c).get("claimName"),
                      "emptyDir" in v,
                      None if (im := v.get("image")) is None else "" if (r := im.get("reference")) is None else r)
                     for v in raw])
        if not all(type(name) is str and (claim is None or type(claim) is str) and (ref is None or type(ref) is str)
                   for name, claim, _, ref in key):
            raise TypeError
    except (TypeError, AttributeError):
        _check_volumes(raw)
        raise
    try:
        hit = _VOLUMES.get(key)
    except TypeError:  # an unhashable name or claim: decoded as is
        return tuple(_volume(*k) for k in key)
    if hit is None:
        hit = _keep(_VOLUMES, key, tuple(_volume(*k) for k in key), _SHAPES_LIMIT)
    return hit


def _volume(name: str, claim: str | None, empty_dir: bool, image: str | None) -> Volume:
    return Volume(name, claim, empty_dir, None if image is None else _intern(image))


def _check_volumes(raw: Any) -> None:
    """Names the malformed field of spec.volumes (the fast path above only notices one)."""
    for i, v in enumerate(maps(raw, "spec.volumes")):
        text(v.get("name"), f"spec.volumes[{i}].name")
        claim = mapping(v.get("persistentVolumeClaim"), f"spec.volumes[{i}].persistentVolumeClaim")
        text(claim.get("claimName"), f"spec.volumes[{i}].persistentVolumeClaim.claimName")
        image = mapping(v.get("image"), f"spec.volumes[{i}].image")
        text(image.get("reference"), f"spec.volumes[{i}].image.reference")


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _pod_affinity(affinity: Mapping | None) -> tuple:
    """(node_affinity, pod_affinity, pod_anti_affinity, and the preferred terms of each) of a
    pod's spec.affinity."""
    affinity = mapping(affinity, "spec.affinity")
    raw = [mapping(affinity.get(f), f"spec.affinity.{f}") for f in ("nodeAffinity", "podAffinity", "podAntiAffinity")]
    return (
        node_selector_terms(raw[0].get(_REQUIRED), f"spec.affinity.nodeAffinity.{_REQUIRED}"),
        _affinity_terms(raw[1].get(_REQUIRED), f"spec.affinity.podAffinity.{_REQUIRED}"),
        _affinity_terms(raw[2].get(_REQUIRED), f"spec.affinity.podAntiAffinity.{_REQUIRED}"),
        *_preferred_terms(*raw),
    )


def _preferred_terms(node: Mapping, pod_aff: Mapping, anti: Mapping) -> tuple:
    """The preferred terms of node affinity, pod affinity and anti-affinity as (weight, term)."""
    preferred = "preferredDuringSchedulingIgnoredDuringExecution"
    path = f"spec.affinity.nodeAffinity.{preferred}"
    # weights are required, 1 to 100 (as the API validates them): false or 0 read as none before
    nodes = tuple(
        (integer(t.get("weight"), f"{path}[{i}].weight", 1, 100, "a weight"),
         node_selector_terms({"nodeSelectorTerms": [mapping(t.get("preference"), f"{path}[{i}].preference")]},
                             f"{path}[{i}].preference")[0])
        for i, t in enumerate(maps(node.get(preferred), path)))
    pods = []
    for name, raw in (("podAffinity", pod_aff), ("podAntiAffinity", anti)):
        path = f"spec.affinity.{name}.{preferred}"
        pods.append(tuple(
            (integer(t.get("weight"), f"{path}[{i}].weight", 1, 100, "a weight"),
             _affinity_terms([mapping(t.get("podAffinityTerm"), f"{path}[{i}].podAffinityTerm")],
                             f"{path}[{i}].podAffinityTerm")[0])
            for i, t in enumerate(maps(raw.get(preferred), path))))
    return (nodes, *pods)


def _container_parts(spec: Mapping) -> tuple:
    """What requests and host ports depend on, small enough to key the memo cheaply."""
    return (
        [(_defaulted(c.get("resources"), f"spec.containers[{i}].resources"), c.get("ports"))
         for i, c in enumerate(maps(spec.get("containers"), "spec.containers"))],
        [(_defaulted(c.get("resources"), f"spec.initContainers[{i}].resources"), c.get("ports"),
          c.get("restartPolicy"))
         for i, c in enumerate(maps(spec.get("initContainers"), "spec.initContainers"))],
        spec.get("overhead"),
        spec.get("resources"),
    )


def _defaulted(res: Any, where: str) -> Any:
    """A container's `resources` as the API server stores a Pod's (SetDefaults_Pod): a resource
    it limits but does not request is requested at its limit. A pod read from a cluster has
    that already; a hand-written manifest in a dump may not, and `kubectl apply` would give it.
    Anything malformed is left as it is, for the reader of that field to name."""
    if type(res) is not dict:
        return res
    limits, requests = res.get("limits"), res.get("requests")
    if not limits or type(limits) is not dict or (requests is not None and type(requests) is not dict):
        return res
    if requests and all(k in requests for k in limits):
        return res
    _resources(limits, f"{where}.limits")  # a bad limit is named as the limit, not as a request
    return {**res, "requests": {**limits, **(requests or {})}}


def _requests_and_ports(parts: tuple) -> tuple[dict[str, int], tuple[HostPort, ...]]:
    containers, inits, overhead, pod_level = parts
    spec = {
        "containers": [{"resources": r, "ports": p} for r, p in containers],
        "initContainers": [{"resources": r, "ports": p, "restartPolicy": rp} for r, p, rp in inits],
        "overhead": overhead,
        "resources": pod_level,
    }
    nonzero = nonzero_requests(spec)
    placed = nonzero_requests(spec, pod_level=False) if pod_level else None
    return effective_requests(spec), _host_ports(spec), (nonzero, placed if placed != nonzero else None)


def _spread(raw: Iterable[Mapping] | None) -> tuple[SpreadConstraint, ...]:
    path = "spec.topologySpreadConstraints"
    return tuple(spread_constraint(c, path=f"{path}[{i}]") for i, c in enumerate(maps(raw, path)))


TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


def _tolerations(raw: Iterable[Mapping] | None) -> tuple[Toleration, ...]:
    out = []
    for i, t in enumerate(maps(raw, "spec.tolerations")):
        where = f"spec.tolerations[{i}]"
        out.append(Toleration(text(t.get("key"), f"{where}.key"),
                              one_of(t.get("operator"), f"{where}.operator", ("Equal", "Exists"), "Equal"),
                              text(t.get("value"), f"{where}.value"),
                              # "" tolerates every effect; a misspelt one would tolerate none
                              one_of(t.get("effect"), f"{where}.effect", TAINT_EFFECTS, "")))
    return tuple(out)


def _conditions(raw: Iterable[Mapping] | None) -> tuple[tuple[PodCondition, ...], bool, bool]:
    """(the conditions of the types in READ_CONDITIONS as records, whether Ready is True, whether
    PodResizePending says Infeasible). The
    others (Initialized, ContainersReady, Ready itself, …) are read by nothing past `ready`: a
    running pod's four conditions would be 600,000 records in a cluster of 150k pods; and a
    PodScheduled that is True (every bound pod's) is read by nothing either. Strings
    are interned: the types, statuses, reasons and (per workload) messages repeat. Not memoised:
    transition times make most pods' conditions distinct."""
    if not raw:
        sequence(raw, "status.conditions")  # 0, "" or false where a list belongs is no empty list
        return (), False, False
    out = []
    ready = False
    resize_pending = None  # the first PodResizePending condition's reason decides (IsPodResizeInfeasible)
    for i, c in enumerate(maps(raw, "status.conditions")):
        get = c.get
        type_ = get("type", "")
        if type(type_) is not str:
            raise FieldError(f"status.conditions[{i}].type", "a string", type_)
        if type_ == "Ready":
            if get("status", "") == "True":
                ready = True
            else:  # a status of true (no string) would read as not ready
                text(get("status"), f"status.conditions[{i}].status")
        elif type_ == "PodResizePending":
            if resize_pending is None:
                resize_pending = text(get("reason"), f"status.conditions[{i}].reason")
        elif type_ in READ_CONDITIONS:
            if type_ == "PodScheduled" and get("status") == "True":
                continue  # a bound pod's: only a False one is read (why the pod waits)
            where = f"status.conditions[{i}]"
            text(get("status"), f"{where}.status")
            reason = text(get("reason"), f"{where}.reason")
            message = text(get("message"), f"{where}.message")
            when = text(get("lastTransitionTime"), f"{where}.lastTransitionTime")
            out.append(new_pod_condition(_intern(type_), _intern(get("status", "")), _intern(reason) if reason else "",
                                      _intern(message) if message else "", _intern(when) if when else ""))
    return tuple(out), ready, resize_pending == "Infeasible"


def _scheduling(spec: Mapping) -> tuple:
    """(node_affinity, pod_affinity, pod_anti_affinity, requests, host_ports, spread, tolerations,
    node_selector, the features the containers use, the memo key: the JSON text of the template
    sub-trees or their JSON key, None when unkeyable) of a pod spec, shared by every pod whose
    spec has the same such sub-trees.

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
        hit, texts = _template_of_text(get)
        return aff + hit + (texts,)
    try:
        key = json_key((
            [(c.get("resources"), c.get("ports"), c.get("restartPolicyRules"), _binds(c), c.get("image"))
             for c in containers] if containers else None,
            [(c.get("resources"), c.get("ports"), c.get("restartPolicy"), c.get("restartPolicyRules"), _binds(c),
              c.get("image")) for c in inits] if inits else None,
            get("overhead"), get("topologySpreadConstraints"), get("tolerations"), get("nodeSelector"),
            get("resources")))
    except (TypeError, ValueError, AttributeError):  # unkeyable (see _memo) or malformed: decoded as is
        return aff + _template_parts(spec) + (None,)
    hit = _SHAPES.get(key)
    if hit is None:
        hit = _keep(_SHAPES, key, _template_parts(spec), _SHAPES_LIMIT)
    return aff + hit + (key,)


def _binds(c: Mapping) -> list:
    """What _container_features reads of a container's volume mounts (their names are often
    unique per pod: a template's memo key leaves them out)."""
    return [m.get("bindMountOptions") for m in c.get("volumeMounts") or ()]


def _template_of_text(get: Callable[[str], Any]) -> tuple[tuple, tuple]:
    """_template_parts of a spec from wire.py's typed parse, whose template-like sub-trees are
    left as their JSON text (msgspec.Raw): the pods of one template repeat it byte for byte, so
    the memo is keyed on the text and it is parsed only on a miss. Equal text is equal JSON, and
    one value has one record, so a record keyed either way is the one decoding it gives. The
    texts are returned too (`_resize` keys on them: their hashes are already made)."""
    texts = tuple([None if (t := get(name)) is None else bytes(t) for name in _TEMPLATE_FIELDS])
    hit = _SHAPES.get(texts)
    if hit is None:
        spec = {name: _parse_text(t) for name, t in zip(_TEMPLATE_FIELDS, texts) if t is not None}
        hit = _keep(_SHAPES, texts, _template_parts(spec), _SHAPES_LIMIT)
    return hit, texts


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
            _memo("tolerations", spec.get("tolerations"), _tolerations),
            _shared_labels(label_map(spec.get("nodeSelector"), "spec.nodeSelector")), _container_features(spec),
            _requests_by_name(spec), _images(spec))


def _images(spec: Mapping) -> tuple[str, ...]:
    """Pod.images: the init containers' images, then the containers', as written ("" for none)."""
    return tuple([_intern(text(c.get("image"), f"spec.{field}[{i}].image"))
                  for field in ("initContainers", "containers")
                  for i, c in enumerate(maps(spec.get(field), f"spec.{field}"))])


def _requests_by_name(spec: Mapping) -> dict[str, Any]:
    """By container name: (its requests as written, their JSON text, its resources' JSON
    text), what `_resize` compares a status with before it keys anything (a running pod's
    status usually repeats its spec; the API server writes both the same, compact)."""
    out: dict[str, Any] = {}
    for field in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(field) or ()):
            if isinstance(c, Mapping):
                res = _defaulted(c.get("resources"), f"spec.{field}[{i}].resources")
                requests = res.get("requests") if isinstance(res, Mapping) else None
                try:
                    texts = (json_key(requests or {}), json_key(res or {}))
                except (TypeError, ValueError):  # unkeyable: compared as parsed only
                    texts = (None, None)
                out.setdefault(c.get("name"), (requests or _NONE, *texts))
    return out


_NO_FEATURES: frozenset[str] = frozenset()


def _container_features(spec: Mapping) -> frozenset[str]:
    """The node-declared features the containers use (component-helpers nodedeclaredfeatures
    InferForScheduling): a restartPolicyRules action RestartAllContainers, a volume mount with
    bindMountOptions."""
    found = []
    for field in ("containers", "initContainers"):
        for i, c in enumerate(maps(spec.get(field), f"spec.{field}")):
            where = f"spec.{field}[{i}]"
            for j, rule in enumerate(maps(c.get("restartPolicyRules"), f"{where}.restartPolicyRules")):
                if rule.get("action") == "RestartAllContainers":
                    found.append(versions.RESTART_ALL_CONTAINERS)
            for j, m in enumerate(maps(c.get("volumeMounts"), f"{where}.volumeMounts")):
                if sequence(m.get("bindMountOptions"), f"{where}.volumeMounts[{j}].bindMountOptions"):
                    found.append(versions.VOLUME_BIND_MOUNT_OPTIONS)
    return frozenset(found) if found else _NO_FEATURES


def _spec_features(spec: Mapping, from_containers: frozenset[str]) -> frozenset[str]:
    """`from_containers` and UserNamespacesHostNetworkSupport for a pod on the host network in
    its own user namespace (hostNetwork true, hostUsers false)."""
    network, users = spec.get("hostNetwork"), spec.get("hostUsers")
    if network is True and users is False:
        return from_containers | {versions.USER_NAMESPACES_HOST_NETWORK}
    # the text "true" is no boolean: read as absent, the pod's feature would go unseen
    if network is not None and type(network) is not bool:
        raise FieldError("spec.hostNetwork", "true or false", network)
    if users is not None and type(users) is not bool:
        raise FieldError("spec.hostUsers", "true or false", users)
    return from_containers


_STR_OR_NONE = frozenset((str, type(None)))
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
_INT32_MIN = -INT32_MAX - 1


def _parts(obj: Mapping) -> tuple[Mapping, Mapping, Mapping]:
    """metadata, spec and status of an object, each a map (empty when missing)."""
    meta, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status")
    # missing or null is empty; 0, "" or false where a map belongs is named by mapping()
    if type(meta) is not dict or type(spec) is not dict or type(status) is not dict:
        return (mapping(meta, "metadata") or _NONE, mapping(spec, "spec") or _NONE,
                mapping(status, "status") or _NONE)
    return meta, spec, status


def pod(obj: Mapping) -> Pod:
    meta, spec, status = _parts(obj)
    namespace, name, uid, created, deleted = (meta.get("namespace"), meta.get("name", ""), meta.get("uid", ""),
                                              meta.get("creationTimestamp"), meta.get("deletionTimestamp"))
    node_name, scheduler, phase, nominated = (spec.get("nodeName"), spec.get("schedulerName"), status.get("phase"),
                                              status.get("nominatedNodeName"))
    if not {type(namespace), type(name), type(uid), type(created), type(deleted), type(node_name), type(scheduler),
            type(phase), type(nominated)} <= _STR_OR_NONE:
        # a deletionTimestamp of another type (a number, a map) would read as terminating
        _check_texts(((meta, "metadata", ("namespace", "name", "uid", "creationTimestamp", "deletionTimestamp")),
                      (spec, "spec", ("nodeName", "schedulerName")), (status, "status", ("phase", "nominatedNodeName"))))
    if not name:
        _name(meta.get("name"), "metadata.name")
    # the API reads these as times (metav1.Time): other text, "" included, is no time; a
    # deletionTimestamp of "yesterday" would read as terminating
    if created is not None and created not in _TIMES:
        timestamp(created, "metadata.creationTimestamp")
    if deleted is not None:
        timestamp(deleted, "metadata.deletionTimestamp")
    if phase and phase not in POD_PHASES:  # `running` would count as a pod neither running nor done
        one_of(phase, "status.phase", POD_PHASES, "Pending")
    priority = spec.get("priority")
    if type(priority) is not int or not _INT32_MIN <= priority <= INT32_MAX:
        priority = 0 if priority is None else integer(priority, "spec.priority")
    (node_affinity, pod_affinity, pod_anti_affinity, preferred_node, preferred_pod, preferred_anti, requests,
     host_ports, (score_requests, placed_score_requests), spread, tolerations, node_selector,
     features, spec_requests, images, spec_key) = _scheduling(spec)
    conditions, ready, infeasible = _conditions(status.get("conditions"))
    resize = _resize(spec, status, infeasible, spec_requests, spec_key)
    annotations = meta.get("annotations")
    if annotations is not None and type(annotations) is not dict:
        mapping(annotations, "metadata.annotations")
    # positional, in Pod's field order (a missing or extra argument is a TypeError)
    return new_pod(
        _intern(namespace or "default"),  # namespace
        name,  # name
        uid or "",  # uid
        _labels_of(meta.get("labels")),  # labels
        _intern(node_name or ""),  # node_name
        _intern(phase or "Pending"),  # phase
        deleted is not None,  # terminating
        created or "",  # created
        _owner_of(meta),  # owner
        spread, node_selector, node_affinity, pod_affinity, pod_anti_affinity, tolerations, requests, host_ports,
        _volumes(spec.get("volumes")),  # volumes
        _intern(scheduler or "default-scheduler"),  # scheduler_name
        nominated or "",  # nominated_node
        priority,  # priority
        conditions,  # conditions
        bool(annotations) and "kubernetes.io/config.mirror" in annotations,  # mirror
        ready,  # ready
        score_requests, preferred_node, preferred_pod, preferred_anti, placed_score_requests,
        resize,  # resize
        _spec_features(spec, features),  # features_used
        images,  # images
    )


_RESIZE: dict[Any, Any] = {}  # (spec containers, statuses, infeasible) -> PodResize or None


def _resize(spec: Mapping, status: Mapping, infeasible: bool, spec_requests: Mapping[str, Any],
            spec_key: Any) -> PodResize | None:
    """What in-place resize needs of the pod (model.PodResize), or None when its status reports
    nothing that could make any minor size it other than by its spec: no status resources, or
    status resources written as the spec's requests (`spec_requests`, by container name: a
    running pod's usual state). Shared per distinct (spec, statuses' resources): a template's
    pods report the same. `spec_key` is _scheduling's memo key of the spec's template sub-trees
    (None: unkeyable, decoded as is)."""
    get = status.get
    statuses, inits = get("containerStatuses"), get("initContainerStatuses")
    allocated, resources = get("allocatedResources"), get("resources")
    if allocated is None and resources is None and not infeasible and _as_spec(statuses, spec_requests) \
            and _as_spec(inits, spec_requests):
        return None
    if spec_key is None:
        return _build_resize(spec, status, infeasible)
    try:
        if type(spec_key) is not tuple:  # a JSON key of the sub-trees, which leaves out container names
            spec_key = (spec_key, tuple([c.get("name") for c in spec.get("containers") or ()]),
                        tuple([c.get("name") for c in spec.get("initContainers") or ()]))
        key = (spec_key,
               tuple([(s.get("name"), _key(s.get("allocatedResources")), _key(s.get("resources")))
                      for s in statuses or ()]),
               tuple([(s.get("name"), _key(s.get("allocatedResources")), _key(s.get("resources")))
                      for s in inits or ()]),
               _key(allocated), _key(resources), infeasible)
        hit = _RESIZE.get(key, _MISSING)
    except (TypeError, ValueError, AttributeError):  # malformed or unkeyable: decoded as is (and checked)
        return _build_resize(spec, status, infeasible)
    if hit is _MISSING:
        hit = _keep(_RESIZE, key, _build_resize(spec, status, infeasible), _SHAPES_LIMIT)
    return hit


_MISSING = object()


def _as_spec(statuses: Any, spec_requests: Mapping[str, Any]) -> bool:
    """Every container status reports no resources, or requests written as its container's
    spec has them (a status of no container is never read). False for anything else, a
    malformed list included: the full decode then sizes the pod, or names the field."""
    if not statuses:
        return True
    try:
        for st in statuses:
            allocated, res = st.get("allocatedResources"), st.get("resources")
            if allocated is None and res is None:
                continue
            spec = spec_requests.get(st.get("name"))
            if spec is None:
                continue
            want, want_text, resources_text = spec
            # from wire.py the two are JSON text: equal to the spec's text, or else parsed
            if allocated is not None and not (type(allocated) is _Text and bytes(allocated) == want_text):
                if _parsed(allocated) != want:
                    return False
            if res is not None and not (type(res) is _Text and bytes(res) == resources_text):
                actual = _parsed(res).get("requests")
                if actual is not None and actual != want:
                    return False
    except (TypeError, AttributeError, ValueError):
        return False
    return True


def _key(raw: Any) -> Any:
    return bytes(raw) if type(raw) is _Text else json_key(raw)


def _parsed(raw: Any) -> Any:
    return _parse_text(raw) if type(raw) is _Text else raw


def _status_requests(raw: Any, path: str) -> dict[str, int] | None:
    """A resource list of the status; None when it is missing or null (Go's nil)."""
    raw = _parsed(raw)
    return None if raw is None else _resources(mapping(raw, path), path)


def _build_resize(spec: Mapping, status: Mapping, infeasible: bool) -> PodResize | None:
    spec = {name: _parsed(spec.get(name)) for name in ("containers", "initContainers", "overhead", "resources")}
    by_name: dict[str, tuple[Mapping, str]] = {}
    # a container status is looked up by name, containerStatuses first (findContainerStatus)
    for field in ("initContainerStatuses", "containerStatuses"):
        for i, st in reversed(list(enumerate(maps(status.get(field), f"status.{field}")))):
            by_name[text(st.get("name"), f"status.{field}[{i}].name")] = (st, f"status.{field}[{i}]")
    names = [text(c.get("name"), f"spec.{field}[{i}].name")
             for field in ("containers", "initContainers")
             for i, c in enumerate(maps(spec.get(field), f"spec.{field}"))]
    containers = []
    plain = not infeasible
    for name, (req, kind) in zip(names, _spec_parts(spec)):
        st, where = by_name.get(name, (_NONE, ""))
        allocated = _status_requests(st.get("allocatedResources"), f"{where}.allocatedResources")
        res = _parsed(st.get("resources"))
        actual = None if res is None else _status_requests(mapping(res, f"{where}.resources").get("requests"),
                                                             f"{where}.resources.requests")
        plain = plain and allocated in (None, req) and actual in (None, req)
        containers.append(ContainerResize(req, allocated, actual, res is not None, kind))
    pod_level = {k: v for k, v in _pod_level(spec).items() if podrequests.pod_level_supported(k)}
    overhead = _resources(spec.get("overhead"), "spec.overhead")
    allocated = _status_requests(status.get("allocatedResources"), "status.allocatedResources")
    res = _parsed(status.get("resources"))
    actual = None if res is None else _status_requests(mapping(res, "status.resources").get("requests"),
                                                         "status.resources.requests")
    if plain and (allocated is not None or actual is not None):
        # the pod's own status stands for its containers' sum (1.37) and its pod-level requests
        # (1.36+): equal to the spec's, it changes nothing
        base = podrequests.pod_requests([(c.spec, c.kind) for c in containers], pod_level, None)
        plain = allocated in (None, base) and actual in (None, base)
    if plain:
        return None
    return PodResize(tuple(containers), pod_level, overhead, allocated, actual, res is not None, infeasible)


def _check_texts(groups: Iterable[tuple[Mapping, str, tuple[str, ...]]]) -> None:
    """Raises FieldError for the first of these fields that is neither a string nor missing."""
    for d, prefix, names in groups:
        for name in names:
            text(d.get(name), f"{prefix}.{name}")


def _meta_texts(meta: Mapping) -> tuple[str, str, str, str]:
    """namespace, name, uid and creationTimestamp of any object, each a string ("" when missing
    but for the name, which every object has; the time an RFC 3339 one)."""
    return (text(meta.get("namespace"), "metadata.namespace"), _name(meta.get("name"), "metadata.name"),
            text(meta.get("uid"), "metadata.uid"),
            timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp"))


def node(obj: Mapping) -> Node:
    meta, spec, status = _parts(obj)
    _, name, _, created = _meta_texts(meta)
    ready = True
    for i, c in enumerate(maps(status.get("conditions"), "status.conditions")):
        # named when not text: a status of true (no string) would read as not ready
        if text(c.get("type"), f"status.conditions[{i}].type") == "Ready":
            ready = text(c.get("status"), f"status.conditions[{i}].status") == "True"
    taints = []
    for i, t in enumerate(maps(spec.get("taints"), "spec.taints")):
        where = f"spec.taints[{i}]"
        effect = t.get("effect")
        if type(effect) is not str or effect not in TAINT_EFFECTS:  # required; the scheduler ignores any other
            raise FieldError(f"{where}.effect", " or ".join(TAINT_EFFECTS), effect)
        taints.append(Taint(text(t.get("key"), f"{where}.key"), text(t.get("value"), f"{where}.value"), effect))
    return Node(
        name=_intern(name),
        labels=_labels(label_map(meta.get("labels"), "metadata.labels")),
        taints=tuple(taints),
        unschedulable=flag(spec.get("unschedulable"), "spec.unschedulable"),
        allocatable=_resources(status.get("allocatable"), "status.allocatable"),
        ready=ready,
        created=created,
        declared_features=_declared(status.get("declaredFeatures")),
        images=_node_images(status.get("images")),
    )


def _node_images(raw: Any) -> dict[str, int]:
    """status.images as Node.images: each name of each image -> its sizeBytes (a name listed
    twice keeps its first size, as the scheduler's per-node map does)."""
    if not raw:
        sequence(raw, "status.images")  # 0, "" or false where a list belongs is no empty list
        return {}
    out: dict[str, int] = {}
    try:  # the usual shape, checked as it is read (a node lists dozens of images)
        for image in raw:
            size = image["sizeBytes"]
            names = image["names"]
            if type(size) is not int or not 0 <= size < 2**63 or type(names) is not list:
                raise TypeError
            for name in names:
                if type(name) is not str:
                    raise TypeError
                if name not in out:
                    out[_intern(name)] = size
        return out
    except (TypeError, KeyError):  # something else: read with every field's check and default
        out.clear()
    for i, image in enumerate(maps(raw, "status.images")):
        where = f"status.images[{i}]"
        size = image.get("sizeBytes")
        size = 0 if size is None else integer(size, f"{where}.sizeBytes", 0, 2**63 - 1, "a size in bytes")
        for name in strings(image.get("names"), f"{where}.names"):
            out.setdefault(_intern(name), size)
    return out


_DECLARED: dict[tuple[str, ...], frozenset[str]] = {}


def _declared(raw: Any) -> frozenset[str]:
    """status.declaredFeatures, one set per distinct list (nodes of a pool declare the same)."""
    if not raw:
        sequence(raw, "status.declaredFeatures")  # 0, "" or false where a list belongs is no empty list
        return _NO_FEATURES
    names = strings(raw, "status.declaredFeatures")
    hit = _DECLARED.get(names)
    if hit is None:
        hit = _keep(_DECLARED, names, frozenset(_intern(n) for n in names), _SHAPES_LIMIT)
    return hit


def _count(d: Mapping, field: str, path: str) -> int:
    """An int32 status count (readyReplicas, disruptionsAllowed, …); 0 when missing. Any sign:
    the status is the controllers' report, read as they wrote it."""
    value = d.get(field)
    return 0 if value is None else integer(value, f"{path}.{field}")


def workload(obj: Mapping) -> Workload:
    meta, spec, status = _parts(obj)
    namespace, name, uid, created = _meta_texts(meta)
    kind = text(obj.get("kind"), "kind")
    sel = spec.get("selector")
    if kind == "ReplicationController":
        selector = Selector.from_match_labels(label_map(sel, "spec.selector"))
    else:
        selector = Selector.from_api(_selector(sel, "spec.selector"))
    replicas = spec.get("replicas")
    if replicas is None and kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
        replicas = 1
    elif replicas is not None:
        replicas = integer(replicas, "spec.replicas", 0, INT32_MAX, "a count")
    return Workload(
        kind=kind, namespace=namespace or "default", name=name,
        uid=uid, labels=_labels(label_map(meta.get("labels"), "metadata.labels")), selector=selector,
        owner=_owner(meta), replicas=replicas, ready_replicas=_count(status, "readyReplicas", "status"),
        created=created,
    )


def service(obj: Mapping) -> Service:
    meta, spec, _ = _parts(obj)
    namespace, name, _, _ = _meta_texts(meta)
    return Service(namespace or "default", name, _labels(label_map(spec.get("selector"), "spec.selector")))


def _int_or_percent(v: Any, path: str) -> int | str | None:
    if v is None or (type(v) is int and 0 <= v <= INT32_MAX):
        return v
    if type(v) is str and v.endswith("%"):
        try:
            integer(v[:-1], path, 0, INT32_MAX, "a count or a percentage")
        except FieldError:
            raise FieldError(path, "a count or a percentage", v) from None
        return v
    return integer(v, path, 0, INT32_MAX, "a count or a percentage")


def pdb(obj: Mapping) -> Pdb:
    meta, spec, status = _parts(obj)
    namespace, name, _, _ = _meta_texts(meta)
    return Pdb(
        namespace=namespace or "default", name=name,
        selector=Selector.from_api(_selector(spec.get("selector"), "spec.selector")),
        min_available=_int_or_percent(spec.get("minAvailable"), "spec.minAvailable"),
        max_unavailable=_int_or_percent(spec.get("maxUnavailable"), "spec.maxUnavailable"),
        disruptions_allowed=_count(status, "disruptionsAllowed", "status"),
        current_healthy=_count(status, "currentHealthy", "status"),
        desired_healthy=_count(status, "desiredHealthy", "status"),
        expected_pods=_count(status, "expectedPods", "status"),
    )


def persistent_volume(obj: Mapping) -> PersistentVolume:
    meta, spec, _ = _parts(obj)
    _, name, _, _ = _meta_texts(meta)
    claim = mapping(spec.get("claimRef"), "spec.claimRef")
    return PersistentVolume(
        name=name,
        node_affinity=node_selector_terms(mapping(spec.get("nodeAffinity"), "spec.nodeAffinity").get("required"),
                                          "spec.nodeAffinity.required"),
        storage_class=text(spec.get("storageClassName"), "spec.storageClassName"),
        claim=(f"{text(claim.get('namespace'), 'spec.claimRef.namespace')}/"
               f"{text(claim.get('name'), 'spec.claimRef.name')}") if claim else "",
        labels=_labels(label_map(meta.get("labels"), "metadata.labels")),
    )


def persistent_volume_claim(obj: Mapping) -> PersistentVolumeClaim:
    meta, spec, status = _parts(obj)
    namespace, name, _, _ = _meta_texts(meta)
    return PersistentVolumeClaim(
        namespace=namespace or "default", name=name,
        volume_name=text(spec.get("volumeName"), "spec.volumeName"),
        storage_class=text(spec.get("storageClassName"), "spec.storageClassName"),
        phase=one_of(status.get("phase"), "status.phase", ("Pending", "Bound", "Lost"), "Pending"),
        bind_completed="pv.kubernetes.io/bind-completed" in mapping(meta.get("annotations"), "metadata.annotations"),
    )


def storage_class(obj: Mapping) -> StorageClass:
    meta = mapping(obj.get("metadata"), "metadata")
    _, name, _, _ = _meta_texts(meta)
    topo = []
    for i, t in enumerate(maps(obj.get("allowedTopologies"), "allowedTopologies")):
        reqs = []
        path = f"allowedTopologies[{i}].matchLabelExpressions"
        for j, e in enumerate(maps(t.get("matchLabelExpressions"), path)):
            reqs.append(Requirement(text(e.get("key"), f"{path}[{j}].key"), "In",
                                    strings(e.get("values"), f"{path}[{j}].values")))
        topo.append(NodeSelectorTerm(tuple(reqs)))
    # a misspelt mode would read as Immediate: the claim bound before the pod is placed
    mode = one_of(obj.get("volumeBindingMode"), "volumeBindingMode", ("Immediate", "WaitForFirstConsumer"), "Immediate")
    return StorageClass(name, mode, tuple(topo),
                        text(obj.get("provisioner"), "provisioner"))


def event(obj: Mapping) -> Event:
    # no name required: the record keeps none, events never replace one another, and one that
    # names no pod only goes unread (why-pending reads events by the pod they involve)
    meta = mapping(obj.get("metadata"), "metadata")
    # events.k8s.io/v1 names it `regarding`; 0, "" or false as involvedObject is named, not skipped
    involved = "involvedObject" if obj.get("involvedObject") is not None else "regarding"
    inv = mapping(obj.get(involved), involved)
    series = mapping(obj.get("series"), "series")
    # 0 is unset (the API omits it); false is no count, not one
    count = next((c for c in (obj.get("count"), series.get("count"))
                  if c is not None and not (type(c) is int and c == 0)), 1)
    return Event(
        namespace=text(meta.get("namespace"), "metadata.namespace") or text(inv.get("namespace"),
                                                                           f"{involved}.namespace") or "default",
        object_kind=text(inv.get("kind"), f"{involved}.kind"), object_name=text(inv.get("name"), f"{involved}.name"),
        reason=text(obj.get("reason"), "reason"),
        message=text(obj.get("message"), "message") or text(obj.get("note"), "note"),
        last_seen=(timestamp(obj.get("lastTimestamp"), "lastTimestamp") or timestamp(obj.get("eventTime"), "eventTime")
                   or timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp")),
        count=integer(count, "count", 0, INT32_MAX, "a count"),
        object_uid=text(inv.get("uid"), f"{involved}.uid"),
    )


def describe(obj: Any, kind: str) -> str:
    """`Pod prod/web-1` for an object, as far as its metadata allows naming it."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(meta, Mapping):
        return f"a {kind} without usable metadata"
    name, ns = meta.get("name"), meta.get("namespace")
    if type(name) is not str or not name:
        return f"a {kind} without a usable name"
    name = printable(name)
    return f"{kind} {printable(ns)}/{name}" if type(ns) is str and ns else f"{kind} {name}"


def _has_name(obj: Any) -> bool:
    """Whether `describe` names the object by its name."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return isinstance(meta, Mapping) and type(meta.get("name")) is str and bool(meta.get("name"))


_DECODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, ArithmeticError, RecursionError)


def _named(kind: str, decode: Callable[[Mapping], Any]) -> Callable[[Mapping], Any]:
    """`decode`, its errors turned into one MalformedObject naming the object and the field:
    the same words whether the object came from a dump or from the API server."""
    def decode_named(obj: Mapping) -> Any:
        try:
            return decode(obj)
        except FieldError as e:
            raise MalformedObject(describe(obj, kind), str(e), _has_name(obj)) from None
        except _DECODE_ERRORS as e:  # a malformed field no check above names
            raise MalformedObject(describe(obj, kind), _reason(e), _has_name(obj)) from e

    decode_named.__wrapped__ = decode  # type: ignore[attr-defined]
    return decode_named


def _reason(e: Exception) -> str:
    text_ = str(e)
    if isinstance(e, KeyError):
        return f"missing field {e.args[0]!r}" if e.args else "missing field"
    if isinstance(e, RecursionError):
        return "a field is nested too deeply"
    if isinstance(e, (AttributeError, TypeError)):
        # e.g. 'str' object has no attribute 'get': a scalar where the API puts a map or list
        return f"a field has the wrong type ({text_})"
    return text_ or type(e).__name__


# kind -> (decoder, Snapshot field). Workload kinds all land in `workloads`.
# Each decoder raises MalformedObject (an InputError) naming the object and the field.
DECODERS: dict[str, tuple[Callable[[Mapping], Any], str]] = {
    kind: (_named(kind, decode), field) for kind, (decode, field) in {
        "Node": (node, "nodes"),
        "Pod": (pod, "pods"),
        "Service": (service, "services"),
        "PodDisruptionBudget": (pdb, "pdbs"),
        "PersistentVolume": (persistent_volume, "pvs"),
        "PersistentVolumeClaim": (persistent_volume_claim, "pvcs"),
        "StorageClass": (storage_class, "storage_classes"),
        "Event": (event, "events"),
        **{k: (workload, "workloads") for k in WORKLOAD_KINDS},
    }.items()
}


def from_server(kind: str, namespaced: bool, listed: str | None = None) -> Callable[[Mapping], Any]:
    """The decoder of `kind` for the objects of a list the API server sent: as DECODERS', and an
    item that names its kind names this one, and a namespaced object names its namespace — the
    one `listed`, when the list was of one. The server always does; a dump may leave the
    namespace out (a hand-written manifest means the default namespace), a server's answer that
    does is no list of such objects, and would put each in "default"."""
    decode = DECODERS[kind][0]

    def decode_listed(obj: Mapping) -> Any:
        got = obj.get("kind")
        if got is not None and got != kind:
            raise MalformedObject(describe(obj, kind), str(FieldError("kind", f"{kind} (what was listed)", got)),
                                  _has_name(obj))
        record = decode(obj)  # before the namespace: it names what is malformed, metadata included
        if namespaced:
            got = (obj.get("metadata") or _NONE).get("namespace")
            if not got or (listed is not None and got != listed):
                expected = f"{listed!r} (the namespace listed)" if listed is not None else "a non-empty string"
                raise MalformedObject(describe(obj, kind), str(FieldError("metadata.namespace", expected, got)),
                                      _has_name(obj))
        return record

    return decode_listed
