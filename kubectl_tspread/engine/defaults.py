"""The system default spread constraints a pod without its own gets (scoring only).

With the stock scheduler configuration (`defaultingType: System`) PodTopologySpread
applies `kubernetes.io/hostname maxSkew 3` and `topology.kubernetes.io/zone maxSkew 5`,
both ScheduleAnyway, to every pod whose `spec.topologySpreadConstraints` is empty.
Their selector is built like upstream helper.DefaultSelector:

1. the selectors of the Services in the pod's namespace that select the pod, merged
   as label maps (a Service with no selector selects nothing and adds nothing);
2. if the pod's controller is a ReplicationController, its selector map is merged in;
   if it is a ReplicaSet or StatefulSet, its selector's requirements are ANDed in.
   The controller is looked up by kind and name in the pod's namespace, as the
   scheduler's listers do; a controller missing from the snapshot adds nothing.

When that selector ends up with no requirements the pod gets no default constraint
at all: a bare pod, a DaemonSet or Job pod that no Service selects.
Example: pod app=web owned by ReplicaSet web-7d9 (selector app=web,
pod-template-hash=7d9) → both defaults with selector app=web,pod-template-hash=7d9.
"""

from __future__ import annotations

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import IN, Requirement, Selector
from kubectl_tspread.model import HOSTNAME_KEY, SCHEDULE_ANYWAY, ZONE_KEY, Pod, SpreadConstraint, Workload

# (topologyKey, maxSkew) of the system defaults, in upstream order
SYSTEM_DEFAULTS: tuple[tuple[str, int], ...] = ((HOSTNAME_KEY, 3), (ZONE_KEY, 5))

# controller kinds DefaultSelector understands, with the apiVersion it requires
_RC, _RS, _SS = "ReplicationController", "ReplicaSet", "StatefulSet"
_API_VERSION = {_RC: "v1", _RS: "apps/v1", _SS: "apps/v1"}


def default_selector(index: ClusterIndex, pod: Pod) -> Selector:
    """The selector helper.DefaultSelector derives for `pod` (possibly with no requirements)."""
    label_set: dict[str, str] = {}
    for svc in index.snapshot.services:
        if svc.namespace != pod.namespace or not svc.selector:
            continue
        if all(pod.labels.get(k) == v for k, v in svc.selector.items()):
            label_set.update(svc.selector)
    extra: tuple[Requirement, ...] = ()
    owner = _controller(index, pod)
    if owner is not None and owner.kind == _RC:
        label_set.update(_as_label_map(owner.selector))
    elif owner is not None:
        extra = owner.selector.requirements  # a nil selector has none: adds nothing
    base = tuple(Requirement(k, IN, (v,)) for k, v in sorted(label_set.items()))
    return Selector(base).merged(extra)


def _controller(index: ClusterIndex, pod: Pod) -> Workload | None:
    ref = pod.owner
    if ref is None or ref.kind not in _API_VERSION:
        return None
    # real objects always carry apiVersion; records built without one are taken at their kind
    if ref.api_version and ref.api_version != _API_VERSION[ref.kind]:
        return None
    for w in index.snapshot.workloads:
        if w.kind == ref.kind and w.name == ref.name and w.namespace == pod.namespace:
            return w
    return None


def _as_label_map(selector: Selector) -> dict[str, str]:
    """A ReplicationController selector is a plain map; its records hold `key In (value)`."""
    return {r.key: r.values[0] for r in selector.requirements if r.op == IN and len(r.values) == 1}


def default_constraints(index: ClusterIndex, pod: Pod) -> tuple[SpreadConstraint, ...]:
    """The implicit constraints for a pod without its own; () when the selector is empty."""
    if pod.spread:
        return ()
    selector = default_selector(index, pod)
    if not selector.requirements:
        return ()
    return tuple(
        SpreadConstraint(max_skew=skew, topology_key=key, when_unsatisfiable=SCHEDULE_ANYWAY,
                         selector=selector, implicit=True)
        for key, skew in SYSTEM_DEFAULTS
    )
