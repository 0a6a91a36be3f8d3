"""NodePorts and NodeResourcesFit: what the pods already bound to a node take away.

Follows kube-scheduler's plugins/nodeports and plugins/noderesources/fit.go. A node's
usage is the sum over every pod bound to it that the scheduler still sees: finished
pods (Succeeded/Failed) are gone, terminating pods still hold their requests and ports
until their object is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.spread import UNRESOLVABLE, UNSCHEDULABLE, FilterFailure, shared_failure
from kubectl_tspread.model import HostPort, Node, Pod

NODE_PORTS = "NodePorts"
NODE_RESOURCES_FIT = "NodeResourcesFit"

REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"

_ANY_IP = "0.0.0.0"
# checked in this order before the scalar (extended, hugepages) resources
_NATIVE = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """What the pods bound to one node hold: their count, summed requests, host ports."""

    pods: int
    requested: Mapping[str, int]
    ports: tuple[HostPort, ...]


def node_usage(index: ClusterIndex, node_name: str, exclude: str = "") -> NodeUsage:
    """Usage of `node_name` by its bound pods, leaving out the pod keyed `exclude`
    (the incoming pod, which the scheduler has not placed yet).

    The totals are summed once per node and index (kept in `index.node_cache`, which
    add_pod / remove_pod invalidate per node): the filters ask for every (pod, node)
    pair, and a node's pods rarely include the pod asked about.
    """
    usage, keys, _lowest = _totals(index, node_name)
    if exclude and exclude in keys:
        return _usage([p for p in index.pods_by_node.get(node_name, ()) if p.key != exclude])
    return usage


def lowest_priority(index: ClusterIndex, node_name: str) -> int | None:
    """The lowest priority among the pods bound to the node (None when it has none): a pod
    of that priority or lower has nothing to preempt there."""
    return _totals(index, node_name)[2]


def _totals(index: ClusterIndex, node_name: str) -> tuple[NodeUsage, frozenset[str], int | None]:
    entry = index.node_cache.get(node_name)
    if entry is None:
        pods = index.pods_by_node.get(node_name, ())
        entry = (_usage(pods), frozenset(p.key for p in pods), min((p.priority for p in pods), default=None))
        index.put_cache(node_name, entry)
    return entry


def _usage(pods: Iterable[Pod]) -> NodeUsage:
    requested: dict[str, int] = {}
    ports: list[HostPort] = []
    count = 0
    for p in pods:
        count += 1
        for k, v in p.requests.items():
            requested[k] = requested.get(k, 0) + v
        ports.extend(p.host_ports)
    # shared by every caller until the node's pods change: read-only
    return NodeUsage(count, MappingProxyType(requested), tuple(ports))


def _ip(p: HostPort) -> str:
    return p.host_ip or _ANY_IP


def port_conflicts(want: HostPort, used: Iterable[HostPort]) -> bool:
    """HostPortInfo.CheckConflict: same port and protocol, and either side binds 0.0.0.0
    or both bind the same address.

    >>> port_conflicts(HostPort(80, "TCP", "10.0.0.1"), [HostPort(80, "TCP", "")])
    True
    >>> port_conflicts(HostPort(80, "UDP"), [HostPort(80, "TCP")])
    False
    """
    proto = want.protocol or "TCP"
    ip = _ip(want)
    for u in used:
        if u.port != want.port or (u.protocol or "TCP") != proto:
            continue
        if ip == _ANY_IP or _ip(u) == _ANY_IP or _ip(u) == ip:
            return True
    return False


def ports_failure(pod: Pod, usage: NodeUsage) -> FilterFailure | None:
    """NodePorts: Unschedulable (evicting the port holder would help) on any conflict."""
    for want in pod.host_ports:
        if want.port > 0 and port_conflicts(want, usage.ports):
            return shared_failure(NODE_PORTS, UNSCHEDULABLE, REASON_PORTS)
    return None


def _is_scalar(name: str) -> bool:
    # extended (domain/name), hugepages-<size>, attachable-volumes-*: the scheduler's scalar resources
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


def _shortages(pod: Pod, node: Node, usage: NodeUsage) -> list[tuple[str, bool]]:
    """(reason, unresolvable) for each resource the node lacks, in the plugin's order.

    Unresolvable means the request exceeds the node's whole allocatable: removing
    every other pod would not help, so preemption skips the node.
    """
    out: list[tuple[str, bool]] = []
    if usage.pods + 1 > node.allocatable.get("pods", 0):
        out.append((REASON_TOO_MANY_PODS, False))
    for name, want in _checked(pod.requests):
        alloc = node.allocatable.get(name, 0)
        if want > alloc - usage.requested.get(name, 0):
            out.append((f"Insufficient {name}", want > alloc))
    return out


def fits_array(free: Mapping[str, Any], requests: Mapping[str, int], rows=slice(None)):
    """`_shortages` is empty, per node of `rows` (a slice or an index array): `free` maps "pods" and each requested
    resource to what every node has left (numpy arrays, allocatable less the requests of its pods)."""
    ok = free["pods"][rows] >= 1
    for name, want in _checked(requests):
        ok &= free[name][rows] >= want
    return ok


# requests mapping id -> (the mapping, what _checked makes of it); the mapping is kept so
# that its id cannot be reused while the entry lives. Pods of one template share one mapping.
_CHECKED: dict[int, tuple[Mapping[str, int], tuple[tuple[str, int], ...]]] = {}


def _checked(req: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """(resource, request) pairs the plugin checks, in its order: cpu, memory, ephemeral
    storage, then the scalar resources (Go iterates a map; the order there is arbitrary);
    a resource the pod does not request (or requests 0 of) is never checked. Asked for
    every (pod, node) pair, so remembered per requests mapping."""
    hit = _CHECKED.get(id(req))
    if hit is not None and hit[0] is req:
        return hit[1]
    names = _NATIVE + tuple(sorted(k for k in req if _is_scalar(k)))
    plan = tuple((name, req[name]) for name in names if req.get(name, 0) > 0)
    if len(_CHECKED) >= 4096:
        _CHECKED.clear()
    _CHECKED[id(req)] = (req, plan)
    return plan


def fit_failures(pod: Pod, node: Node, usage: NodeUsage, unresolvable: bool = True) -> tuple[FilterFailure, ...]:
    """NodeResourcesFit: one failure per short resource, all sharing the status of the
    plugin's single verdict (UnschedulableAndUnresolvable when any one is unresolvable,
    from 1.34: `unresolvable`; before, always Unschedulable).

    >>> # node 4 cpu with 3.5 requested, pod asks 1 cpu -> (Insufficient cpu, Unschedulable)
    """
    short = _shortages(pod, node, usage)
    if not short:
        return ()
    status = UNRESOLVABLE if unresolvable and any(u for _, u in short) else UNSCHEDULABLE
    return tuple(shared_failure(NODE_RESOURCES_FIT, status, reason) for reason, _ in short)
