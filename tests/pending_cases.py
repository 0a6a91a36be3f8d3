"""Small clusters for why-pending tests: zones of nodes, matching pods, fillers that use up cpu.

    snap, pod = zoned({"a": 5, "b": 5, "c": 3}, full="c")
    # nodes a0 b0 c0 (2 cpu each), 5/5/3 pods app=web (100m each), c0 filled to the brim,
    # pending pod web-new (500m, app=web, zone maxSkew 1 DoNotSchedule)
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import Pod, Snapshot, ZONE_KEY

CPU = 2000  # allocatable millicores per node
WEB = {"app": "web"}


def zoned(counts: Mapping[str, int], full: Iterable[str] = (), cordoned: Iterable[str] = (),
          nodes_per_zone: int = 1, constraint: Any = None, pod_kw: Mapping[str, Any] | None = None,
          filler_priority: int = 0, extra_nodes: Iterable = (), extra_pods: Iterable = (),
          **snap_kw: Any) -> tuple[Snapshot, Pod]:
    full, cordoned = set(full), set(cordoned)
    nodes, pods = [], []
    for z, n in counts.items():
        names = [f"{z}{i}" for i in range(nodes_per_zone)]
        nodes += [make_node(name, zone=z, unschedulable=z in cordoned,
                            allocatable={"cpu": CPU, "memory": 8 * GI, "pods": 110}) for name in names]
        pods += [make_pod(f"web-{z}{k}", node=names[k % len(names)], labels=WEB, requests={"cpu": 100})
                 for k in range(n)]
        if z in full:
            pods += [make_pod(f"filler-{name}", node=name, labels={"app": "filler"},
                              requests={"cpu": CPU - 100 * n // len(names)}, priority=filler_priority)
                     for name in names]
    kw = {"requests": {"cpu": 500}, **(pod_kw or {})}
    incoming = make_pod("web-new", labels=WEB, spread=[constraint or make_constraint()], **kw)
    snap = make_snapshot(nodes + list(extra_nodes), pods + list(extra_pods) + [incoming], **snap_kw)
    return snap, incoming


def index_of(snap: Snapshot) -> ClusterIndex:
    return ClusterIndex(snap)


def zone_node(name: str, zone: str | None, **kw: Any):
    return make_node(name, zone=zone, allocatable={"cpu": CPU, "memory": 8 * GI, "pods": 110}, **kw)


__all__ = ["zoned", "index_of", "zone_node", "WEB", "CPU", "ZONE_KEY"]
