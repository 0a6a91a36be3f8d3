"""Small clusters for drain-planner tests: zoned nodes and one ReplicaSet's pods."""

from __future__ import annotations

from conftest import GI, make_node, make_pod


def nodes_in(spec: dict[str, int], pods_cap: int = 110, cpu: int = 4000):
    """{'a': 2, 'b': 1} -> a1, a2, b1."""
    return [make_node(f"{z}{i}", zone=z, allocatable={"cpu": cpu, "memory": 16 * GI, "pods": pods_cap})
            for z, n in spec.items() for i in range(1, n + 1)]


def web(placement: dict[str, int], constraints, prefix: str = "web", **kw):
    """{'a1': 2} -> web-1, web-2 on a1, owned by ReplicaSet web-1."""
    out, k = [], 0
    for node, count in placement.items():
        for _ in range(count):
            k += 1
            out.append(make_pod(f"{prefix}-{k}", node=node, labels={"app": "web"}, spread=constraints,
                                owner="ReplicaSet/web-1", **kw))
    return out
