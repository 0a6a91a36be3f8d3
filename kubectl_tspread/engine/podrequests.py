"""A pod's requests as kube-scheduler counts them: k8s.io/component-helpers resource.PodRequests.

Spec side, every minor: the containers' requests summed, each init container beside the
sidecars (restartable init containers) started before it, the larger of the two per resource,
then pod-level requests (PodLevelResources) replace cpu, memory and hugepages, and the overhead
is added. `pod_requests` is that rule; the decoder sizes every pod with it.

Status side: with InPlacePodVerticalScaling (on by default in every supported minor) the
scheduler sizes a pod from its status too (`UseStatusResources`), in NodeInfo (what a node's
pods hold: NodeResourcesFit's filter and score, BalancedAllocation) as for the pod it places.
A pending pod has no status resources, so this changes only pods the kubelet runs, mid-resize
or reporting resources other than its spec. The rule moved between minors:

- 1.33 to 1.36, per container (`determineContainerReqs` / `determineEffectiveRequests`): a
  container (or sidecar; never a plain init container) whose status has `resources` counts
  max(spec, actual, allocated) per resource; when the PodResizePending condition says
  Infeasible the spec is left out: max(actual, allocated). Then the spec-side aggregation.
- 1.36 (InPlacePodLevelResourcesVerticalScaling beta, on): pod-level requests read the pod's
  status too: max(spec, status.resources.requests, status.allocatedResources), each name of
  the spec's pod-level requests set from it.
- 1.37 (`AggregateContainerRequests`): max of the aggregated sums, not the sum of per-container
  maxima: max(spec sum, actuated sum, allocated sum), where a container's allocated is its
  allocatedResources (else its spec), its actuated its resources.requests (else allocated,
  else spec), plain init containers included; when Infeasible, the spec is left out
  (max(actuated, allocated)) and a container reporting nothing adds nothing. The pod-level
  status maps, when the status has both, stand for the actuated and allocated sums; pod-level
  requests take max(spec, actual, allocated) (without the spec when Infeasible) and set the
  names that has.

    >>> from kubectl_tspread.model import ContainerResize, PodResize
    >>> from kubectl_tspread.engine import versions
    >>> r = PodResize((ContainerResize({"cpu": 500}, {"cpu": 300}, {"cpu": 300}, True),
    ...                ContainerResize({"cpu": 100}, {"cpu": 400}, {"cpu": 400}, True)))
    >>> held_requests(r, versions.rules_for("1.36"))["cpu"], held_requests(r, versions.rules_for("1.37"))["cpu"]
    (900, 700)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping

from kubectl_tspread.engine import versions
from kubectl_tspread.model import ContainerResize, Pod, PodResize, Snapshot

CONTAINER, INIT, SIDECAR = "container", "init", "sidecar"

# kube-scheduler's request for a container that states none (pkg/scheduler/util/pod_resources.go)
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


def pod_level_supported(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-<size>."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _max(*lists: Mapping[str, int] | None) -> dict[str, int]:
    """resource.max: per resource, the largest of the lists that name it (None: no list)."""
    out: dict[str, int] = {}
    for m in lists:
        if m:
            for k, v in m.items():
                if k not in out or v > out[k]:
                    out[k] = v
    return out


def aggregate(parts: Iterable[tuple[Mapping[str, int] | None, str]]) -> dict[str, int]:
    """AggregateContainerRequests of (requests, kind) in spec order (containers first, then
    init containers): containers and sidecars summed, each plain init container counted
    beside the sidecars before it, the larger per resource.

    >>> aggregate([({"cpu": 200}, CONTAINER), ({"cpu": 50}, SIDECAR), ({"cpu": 400}, INIT)])
    {'cpu': 450}
    """
    total: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for req, kind in parts:
        if kind == INIT:
            for k, v in (req or {}).items():
                # an init container runs beside the sidecars started before it
                init_max[k] = max(init_max.get(k, 0), v + sidecars.get(k, 0))
            # a resource only the sidecars before it request still counts them (init_max of
            # the combined list)
            for k, v in sidecars.items():
                if k not in (req or {}):
                    init_max[k] = max(init_max.get(k, 0), v)
            continue
        for k, v in (req or {}).items():
            total[k] = total.get(k, 0) + v
            if kind == SIDECAR:
                sidecars[k] = sidecars.get(k, 0) + v
                init_max[k] = max(init_max.get(k, 0), sidecars[k])
    for k, v in init_max.items():
        total[k] = max(total.get(k, 0), v)
    return total


def pod_requests(parts: Iterable[tuple[Mapping[str, int] | None, str]], pod_level: Mapping[str, int] | None,
                 overhead: Mapping[str, int] | None) -> dict[str, int]:
    """PodRequests from the spec: `aggregate`, the supported pod-level requests in place of
    the containers', plus the overhead."""
    total = aggregate(parts)
    for k, v in (pod_level or {}).items():
        if pod_level_supported(k):
            total[k] = v
    for k, v in (overhead or {}).items():
        total[k] = total.get(k, 0) + v
    return total


def _non_missing(req: Mapping[str, int] | None, defaults: Mapping[str, int] | None) -> Mapping[str, int] | None:
    """applyNonMissing: the defaults for the resources a container's list does not name."""
    if not defaults:
        return req
    out = dict(req or {})
    for k, v in defaults.items():
        if k not in out:
            out[k] = v
    return out


def _per_container(r: PodResize, infeasible: bool, defaults: Mapping[str, int] | None) -> dict[str, int]:
    """1.33 to 1.36: each container's own max of spec and status, then the aggregation."""
    parts = []
    for c in r.containers:
        req = c.spec
        if c.status_resources and c.kind != INIT:
            req = _max(c.actual, c.allocated) if infeasible else _max(c.spec, c.actual, c.allocated)
        parts.append((_non_missing(req, defaults), c.kind))
    return aggregate(parts)


def _allocated(c: ContainerResize, infeasible: bool) -> Mapping[str, int] | None:
    if c.allocated is not None:
        return c.allocated
    return None if infeasible else c.spec


def _actuated(c: ContainerResize, infeasible: bool) -> Mapping[str, int] | None:
    if c.actual is not None:
        return c.actual
    return _allocated(c, infeasible)


def _max_of_sums(r: PodResize, infeasible: bool, rules: versions.Rules,
                 defaults: Mapping[str, int] | None) -> dict[str, int]:
    """1.37: the largest of the spec, actuated and allocated sums."""
    kinds = [c.kind for c in r.containers]
    spec = aggregate((_non_missing(c.spec, defaults), c.kind) for c in r.containers)
    if rules.pod_level_resize and r.allocated is not None and r.actual is not None:
        allocated, actuated = r.allocated, r.actual
    else:
        allocated = aggregate(zip((_non_missing(_allocated(c, infeasible), defaults) for c in r.containers), kinds))
        actuated = aggregate(zip((_non_missing(_actuated(c, infeasible), defaults) for c in r.containers), kinds))
    return _max(actuated, allocated) if infeasible else _max(spec, actuated, allocated)


def held_requests(r: PodResize, rules: versions.Rules, defaults: Mapping[str, int] | None = None) -> dict[str, int]:
    """PodRequests with UseStatusResources in the minor of `rules` (see the module's words);
    `defaults` are NonMissingContainerRequests (the scoring plugins' 100m / 200Mi)."""
    infeasible = r.infeasible
    if rules.resize_max_of_sums:
        total = _max_of_sums(r, infeasible, rules, defaults)
    else:
        total = _per_container(r, infeasible, defaults)
    if any(pod_level_supported(k) for k in r.pod_level):
        if rules.pod_level_resize and r.status_resources:
            if rules.resize_max_of_sums:
                effective = _max(None if infeasible else r.pod_level, r.actual, r.allocated)
                for k, v in effective.items():
                    if pod_level_supported(k):
                        total[k] = v
            else:
                effective = _max(r.actual, r.allocated) if infeasible else _max(r.pod_level, r.actual, r.allocated)
                for k in r.pod_level:
                    if pod_level_supported(k):
                        total[k] = effective.get(k, 0)  # a name the status lacks reads as zero
        else:
            for k, v in r.pod_level.items():
                if pod_level_supported(k):
                    total[k] = v
    for k, v in r.overhead.items():
        total[k] = total.get(k, 0) + v
    return total


def held_score_requests(r: PodResize, rules: versions.Rules, requests: Mapping[str, int]) -> tuple[int, int]:
    """The (cpu, memory) the scoring plugins charge for a pod on a node (NodeInfo's Non0CPU /
    Non0Mem): `held_requests` again with 100m / 200Mi for each container naming no cpu
    (memory); with pod-level requests, only for a resource `requests` does not name at all
    (getNonMissingContainerRequests)."""
    if any(pod_level_supported(k) for k in r.pod_level):
        defaults = {k: v for k, v in (("cpu", DEFAULT_MILLI_CPU), ("memory", DEFAULT_MEMORY)) if k not in requests}
    else:
        defaults = {"cpu": DEFAULT_MILLI_CPU, "memory": DEFAULT_MEMORY}
    non0 = held_requests(r, rules, defaults) if defaults else requests
    return non0.get("cpu", 0), non0.get("memory", 0)


def resized(pod: Pod, rules: versions.Rules) -> Pod:
    """The pod with `requests` and `score_requests` as the minor of `rules` counts them
    (the pod itself when its status reports no resources)."""
    r = pod.resize
    if r is None:
        return pod
    requests = held_requests(r, rules)
    return replace(pod, requests=requests, score_requests=held_score_requests(r, rules, requests))


# id(resize record) -> (the record, a new pod's requests and score requests): the replacements
# of one workload's resized pods share their record
_FRESH: dict[int, tuple[PodResize, dict[str, int], tuple[int, int]]] = {}


def fresh(pod: Pod) -> Pod:
    """The pod as its controller would create it again: sized by its spec alone (a new pod's
    status reports no resources), with no resize record. The drain planner's replacements."""
    r = pod.resize
    if r is None:
        return pod
    hit = _FRESH.get(id(r))
    if hit is None or hit[0] is not r:
        bare = PodResize(tuple(replace(c, allocated=None, actual=None, status_resources=False) for c in r.containers),
                         r.pod_level, r.overhead)
        # without status resources every minor sizes a pod alike
        requests = held_requests(bare, versions.NEWEST_RULES)
        if len(_FRESH) >= 4096:
            _FRESH.clear()
        hit = _FRESH[id(r)] = (r, requests, held_score_requests(bare, versions.NEWEST_RULES, requests))
    return replace(pod, requests=hit[1], score_requests=hit[2], resize=None)


def for_version(snapshot: Snapshot) -> Snapshot:
    """The snapshot with every resized pod sized by its minor's rule (Snapshot.kube_version):
    applied once the minor is known, after loading. Sizes come from each pod's `resize`
    record, never from its current `requests`, so applying it again, or for another minor,
    gives that minor's sizes."""
    if not any(p.resize is not None for p in snapshot.pods):
        return snapshot
    rules = versions.rules_for(snapshot.kube_version)
    # the pods of one template mid-resize share their resize record: sized once
    sized: dict[int, tuple[PodResize, dict[str, int], tuple[int, int]]] = {}
    pods = []
    for p in snapshot.pods:
        r = p.resize
        if r is None:
            pods.append(p)
            continue
        hit = sized.get(id(r))
        if hit is None or hit[0] is not r:
            requests = held_requests(r, rules)
            hit = sized[id(r)] = (r, requests, held_score_requests(r, rules, requests))
        pods.append(replace(p, requests=hit[1], score_requests=hit[2]))
    return replace(snapshot, pods=tuple(pods))
