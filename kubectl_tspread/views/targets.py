"""Resolving what the user named (`deploy/web`, `pod/x`, `-l app=web`, nothing) to groups of pods.

Pure: works on a ClusterIndex. A group is what a user thinks of as one workload: pods are
grouped by their top controller (ReplicaSet -> Deployment), bare pods stand alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.errors import NotFoundError, UsageError
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import Pod, Workload

KIND_ALIASES = {
    "deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
    "statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
    "replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
    "daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
    "pod": "Pod", "pods": "Pod", "po": "Pod",
}


@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # Deployment | StatefulSet | ReplicaSet | DaemonSet | Pod
    name: str


@dataclass(slots=True)
class PodGroup:
    kind: str
    namespace: str
    name: str
    pods: list[Pod]


def parse_target(text: str, allowed: tuple[str, ...] = ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Pod"),
                 bare_kind: str | None = None) -> Target:
    """'deploy/web' -> Target('Deployment', 'web'); a bare name needs `bare_kind`."""
    if "/" not in text:
        if bare_kind is None:
            raise UsageError(f"target {text!r} needs a kind: use TYPE/NAME, e.g. deployment/{text} or pod/{text}")
        return Target(bare_kind, text)
    kind_s, _, name = text.partition("/")
    kind = KIND_ALIASES.get(kind_s.lower())
    if kind is None or kind not in allowed or not name:
        names = ", ".join(sorted({k.lower() for k in allowed}))
        raise UsageError(f"cannot use {text!r} as a target: expected TYPE/NAME with TYPE one of {names}")
    return Target(kind, name)


def _scope(index: ClusterIndex, namespace: str | None) -> list[Pod]:
    if namespace is None:
        return [p for pods in index.pods_by_namespace.values() for p in pods]
    return list(index.pods_by_namespace.get(namespace, ()))


def group_pods(index: ClusterIndex, pods: list[Pod]) -> list[PodGroup]:
    """Group pods by top controller, in namespace/kind/name order."""
    groups: dict[tuple[str, str, str], PodGroup] = {}
    # the top controller depends only on the namespace and the owner reference: look it up
    # once per ReplicaSet, not once per pod
    by_owner: dict[tuple[str, str, str, str], tuple[str, str, str]] = {}
    for p in pods:
        owner = p.owner
        if owner is None:
            key = (p.namespace, "Pod", p.name)
        else:
            okey = (p.namespace, owner.kind, owner.name, owner.uid)
            key = by_owner.get(okey)  # type: ignore[assignment]
            if key is None:
                w = index.top_controller(p)
                # without the controller object (a dump without ReplicaSets): the owner itself
                key = by_owner[okey] = (p.namespace, w.kind, w.name) if w is not None \
                    else (p.namespace, owner.kind, owner.name)
        g = groups.get(key)
        if g is None:
            g = groups[key] = PodGroup(key[1], key[0], key[2], [])
        g.pods.append(p)
    return [groups[k] for k in sorted(groups)]


def _find_workload(index: ClusterIndex, namespace: str, target: Target) -> Workload | None:
    for w in index.snapshot.workloads:
        if w.kind == target.kind and w.name == target.name and w.namespace == namespace:
            return w
    return None


def resolve(index: ClusterIndex, namespace: str | None, target: Target | None = None,
            selector: Selector | None = None) -> list[PodGroup]:
    """The pod groups a command should look at; NotFoundError when a named target is absent."""
    if target is None:
        pods = _scope(index, namespace)
        if selector is not None:
            pods = [p for p in pods if selector.matches(p.labels)]
        return group_pods(index, pods)
    ns = namespace or index.snapshot.namespace or "default"
    if target.kind == "Pod":
        for p in index.snapshot.pods:
            if p.namespace == ns and p.name == target.name:
                return [PodGroup("Pod", ns, p.name, [p])]
        raise NotFoundError(f'pod "{target.name}" not found in namespace "{ns}" ({index.snapshot.source}); '
                            f"check the name with: kubectl get pods -n {ns}")
    pods = [p for p in _scope(index, ns) if _belongs(index, p, target)]
    w = _find_workload(index, ns, target)
    if w is not None and not pods:
        # the controller exists in the dump but its pods could not be linked by owner: use its selector
        pods = [p for p in index.matching_pods(ns, w.selector)]
    if w is None and not pods:
        raise NotFoundError(f'{target.kind.lower()} "{target.name}" not found in namespace "{ns}" '
                            f"({index.snapshot.source}): searched {target.kind}s and the owners of its pods; "
                            f"list them with: kubectl get {target.kind.lower()}s -n {ns}")
    return [PodGroup(target.kind, ns, target.name, pods)]


def _belongs(index: ClusterIndex, pod: Pod, target: Target) -> bool:
    if pod.owner is None:
        return False
    if pod.owner.kind == target.kind and pod.owner.name == target.name:
        return True
    top = index.top_controller(pod)
    return top is not None and top.kind == target.kind and top.name == target.name
