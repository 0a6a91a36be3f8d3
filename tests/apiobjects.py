"""Raw Kubernetes API objects (as `kubectl get -o json` prints them) for dump-based CLI tests."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node_obj(name: str, zone: str | None = None, labels: Mapping[str, str] | None = None,
             unschedulable: bool = False, taints: Iterable[Mapping] = (), cpu: str = "4",
             memory: str = "16Gi", pods: str = "110") -> dict[str, Any]:
    lab = {HOST: name, **({ZONE: zone} if zone else {}), **(labels or {})}
    spec: dict[str, Any] = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = list(taints)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab}, "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def spread_obj(key: str = ZONE, max_skew: int = 1, mode: str = "DoNotSchedule",
               match_labels: Mapping[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    c = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": mode,
         "labelSelector": {"matchLabels": dict(match_labels or {"app": "web"})}}
    c.update(extra)
    return c


def pod_obj(name: str, node: str | None = None, labels: Mapping[str, str] | None = None,
            namespace: str = "default", spread: Iterable[Mapping] = (), owner: tuple[str, str] | None = None,
            created: str = "2026-01-01T00:00:00Z", cpu: str = "100m", phase: str | None = None,
            conditions: Iterable[Mapping] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                            "labels": dict(labels or {}), "creationTimestamp": created}
    if owner:
        kind, oname = owner
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": oname,
                                    "uid": f"uid-{kind}-{oname}", "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx",
                                            "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = list(spread)
    status: dict[str, Any] = {"phase": phase or ("Running" if node else "Pending")}
    if conditions:
        status["conditions"] = list(conditions)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def workload_obj(kind: str, name: str, match_labels: Mapping[str, str], namespace: str = "default",
                 owner: tuple[str, str] | None = None, replicas: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{kind}-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "uid": f"uid-{owner[0]}-{owner[1]}", "controller": True}]
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(match_labels)}}}


def as_list(objs: Iterable[Mapping]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": list(objs)}


def as_dump(objs: Iterable[Mapping]) -> dict[str, Any]:
    """A List as `kubectl tspread dump` writes it: every kind the commands read was listed
    (a kind without objects held none), so no answer warns of a missing kind."""
    from kubectl_tspread.snapshot.kinds import DUMP_KINDS, KINDS_READ_ANNOTATION

    doc = as_list(objs)
    doc["metadata"]["annotations"] = {KINDS_READ_ANNOTATION: ",".join(DUMP_KINDS)}
    return doc
