"""The API resources the snapshot reads, and RBAC-style names for any API request path.

Pure data and string handling: no I/O, no `kubernetes` import.
"""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE_ALL = ""  # as in client-go: list a namespaced kind across every namespace
RBAC_HINT = "the read-only ClusterRole in deploy/rbac/tspread-readonly.yaml grants it"
WRITE_RBAC_HINT = "the drain ClusterRole in deploy/rbac/tspread-drain.yaml grants it"
_NOT_FINISHED = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True)
class Resource:
    kind: str
    prefix: str  # "/api/v1" or "/apis/GROUP/VERSION"
    plural: str
    namespaced: bool
    field_selector: str = ""  # always sent (ANDed with the caller's)
    optional: bool = False  # a 403/404 skips the kind with a warning instead of failing

    @property
    def group_resource(self) -> str:
        group = self.prefix.split("/")[2] if self.prefix.startswith("/apis/") else ""
        return f"{self.plural}.{group}" if group else self.plural


RESOURCES: dict[str, Resource] = {r.kind: r for r in (
    Resource("Node", "/api/v1", "nodes", False),
    # finished pods hold no resources and never count for spreading: filter them server-side
    Resource("Pod", "/api/v1", "pods", True, _NOT_FINISHED),
    Resource("Deployment", "/apis/apps/v1", "deployments", True),
    Resource("ReplicaSet", "/apis/apps/v1", "replicasets", True),
    Resource("StatefulSet", "/apis/apps/v1", "statefulsets", True),
    Resource("DaemonSet", "/apis/apps/v1", "daemonsets", True),
    Resource("ReplicationController", "/api/v1", "replicationcontrollers", True),
    Resource("Job", "/apis/batch/v1", "jobs", True),
    Resource("Service", "/api/v1", "services", True),
    Resource("PodDisruptionBudget", "/apis/policy/v1", "poddisruptionbudgets", True),
    Resource("PersistentVolume", "/api/v1", "persistentvolumes", False, optional=True),
    Resource("PersistentVolumeClaim", "/api/v1", "persistentvolumeclaims", True),
    Resource("StorageClass", "/apis/storage.k8s.io/v1", "storageclasses", False, optional=True),
    Resource("Event", "/api/v1", "events", True, "involvedObject.kind=Pod", optional=True),
)}


# what `kubectl tspread dump` writes: every kind distribution, why-pending or drain-safe reads
DUMP_KINDS = tuple(RESOURCES)
# set by `kubectl tspread dump` on the List it writes, read back by --from-file: which kinds the
# dump listed (a kind listed empty is not missing) and the cluster's version (whose scheduler
# rules apply)
KINDS_READ_ANNOTATION = "tspread.dev/kinds-read"
VERSION_ANNOTATION = "tspread.dev/kube-version"


def api_version(kind: str) -> str:
    """`v1`, `apps/v1`, …: the apiVersion of the kind's objects."""
    prefix = RESOURCES[kind].prefix
    return prefix[len("/api/"):] if prefix.startswith("/api/") else prefix[len("/apis/"):]


def describe_request(method: str, path: str) -> tuple[str, str, str | None]:
    """(verb, resource, namespace) of an API path, RBAC-style.

    `GET /apis/apps/v1/namespaces/prod/deployments` -> ("list", "deployments.apps", "prod");
    `POST /api/v1/namespaces/a/pods/p/eviction` -> ("create", "pods/eviction", "a").
    """
    segs = [s for s in path.split("?")[0].split("/") if s]
    group = ""
    if segs[:1] == ["apis"] and len(segs) >= 3:
        group, segs = segs[1], segs[3:]
    else:
        segs = segs[2:]
    namespace = None
    if len(segs) >= 3 and segs[0] == "namespaces":
        namespace, segs = segs[1], segs[2:]
    resource = (segs[0] if segs else "") + (f".{group}" if group else "")
    if len(segs) >= 3:
        resource += "/" + segs[2]
    named = len(segs) >= 2
    verb = {"GET": "get" if named else "list", "POST": "create", "PATCH": "patch", "PUT": "update",
            "DELETE": "delete"}.get(method, method.lower())
    return verb, resource, namespace


def is_namespaced(group_resource: str) -> bool:
    base = group_resource.split("/")[0]
    return any(r.group_resource == base and r.namespaced for r in RESOURCES.values())
