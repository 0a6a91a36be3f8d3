"""The cluster dumps behind tests/test_scenarios.py, as `kubectl get … -o json|yaml` prints them.

Two families live under tests/data/scenarios/:

- `upstream/<case>.json`: one `List` per kube-scheduler test case of
  pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestPreFilterState,
  TestSingleConstraint, TestMultipleConstraints), named after the upstream case. Nodes,
  existing pods and the incoming pod `p` (Pending, unbound) carry the upstream labels,
  including the bare `zone` / `node` topology keys, so a case can be read next to its Go
  original. Every node also has `kubernetes.io/hostname`, as every real node does; no case
  uses that key, so it changes nothing.
- `ops/…`: a zone drained for maintenance, under nodeTaintsPolicy Ignore and Honor
  (SEMANTICS.md §7, cordoned-domain trap).
- `article/…`: the two stories of the seed article as SEMANTICS.md retells them: a
  ScheduleAnyway zone spread that drifted to skew 6 on large nodes, and a DoNotSchedule zone
  spread observed at skew 2 while a fast scale-up raced a new zone's first node.

Regenerate with `python tests/scenario_dumps.py`; a test fails when the files on disk and
this module disagree. Expected numbers are never computed here: they are written out in
test_scenarios.py.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Iterable, Mapping

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apiobjects import as_list, node_obj, pod_obj, workload_obj  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "scenarios")
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NIL = None  # constraint without labelSelector: selects nothing


def slug(name: str) -> str:
    """An upstream case name as a file name: 'a/b, c < d' -> 'a-b-c-lt-d'."""
    words = name.lower().replace("<", " lt ").replace(">", " gt ")
    return re.sub(r"[^a-z0-9]+", "-", words).strip("-")[:100]


# ---- upstream-style objects ------------------------------------------------------------------

def unode(name: str, zone: str | None = None, node_label: bool = True, tainted: bool = False,
          **labels: str) -> dict[str, Any]:
    """A node with upstream's labels: `node=<name>` (unless node_label=False) and `zone=<zone>`."""
    lab = {**({"node": name} if node_label else {}), **({"zone": zone} if zone else {}), **labels}
    return node_obj(name, labels=lab, taints=[UNSCHEDULABLE_TAINT] if tainted else ())


def upod(name: str, node: str, ns: str = "default", terminating: bool = False, bare: bool = False,
         **labels: str) -> dict[str, Any]:
    """An existing (bound, Running) pod; labels default to upstream's `foo: ""` (`bare`: none)."""
    obj = pod_obj(name, node=node, labels={} if bare else (labels or {"foo": ""}), namespace=ns)
    if terminating:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:05:00Z"
        obj["metadata"]["deletionGracePeriodSeconds"] = 30
    return obj


def tsc(key: str, max_skew: int = 1, selector: Mapping | None = FOO, mode: str = "DoNotSchedule",
        **extra: Any) -> dict[str, Any]:
    """A topologySpreadConstraint as the API returns it; `selector=None` leaves labelSelector out."""
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": mode}
    if selector is not None:
        c["labelSelector"] = dict(selector)
    c.update(extra)
    return c


def incoming(constraints: Iterable[Mapping], labels: Mapping[str, str] | None = None,
             node_selector: Mapping[str, str] | None = None, affinity: Mapping | None = None,
             tolerations: Iterable[Mapping] = ()) -> dict[str, Any]:
    """The Pending pod `p` the scheduler is about to place."""
    obj = pod_obj("p", labels=labels if labels is not None else {"foo": ""}, spread=constraints,
                  created="2026-01-01T00:10:00Z",
                  conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}])
    spec = obj["spec"]
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [dict(affinity)]}]}}}
    if tolerations:
        spec["tolerations"] = list(tolerations)
    return obj


def four_nodes(**per_node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """node-a, node-b in zone1 and node-x, node-y in zone2 (upstream's usual cluster)."""
    zones = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    return [unode(n, z, **per_node.get(n.replace("-", "_"), {})) for n, z in zones.items()]


def pods_on(spec: str, **labels: str) -> list[dict[str, Any]]:
    """'a1 a2 b1 y1' -> pods p-a1 on node-a, … (the letter names the node)."""
    return [upod(f"p-{p}", f"node-{p[0]}", **labels) for p in spec.split()]


SPREAD_2_1_0_3 = "a1 a2 b1 y1 y2 y3"
SPREAD_2_1_0_4 = "a1 a2 b1 y1 y2 y3 y4"
POLICY_NODES = [unode("node-a", foo=""), unode("node-b", foo=""), unode("node-c", bar="")]
POLICY_NODES_TAINTED = [unode("node-a"), unode("node-b"), unode("node-c", tainted=True, bar="")]
POLICY_PODS = [upod("p-a", "node-a", bar=""), upod("p-b", "node-b", bar=""), upod("p-c", "node-b", bar=""),
               upod("p-d", "node-c", bare=True)]
FOO_IN = {"key": "foo", "operator": "In", "values": [""]}
THREE_NODES = [unode("node-a"), unode("node-b"), unode("node-c")]
SPREAD_2_2_1 = pods_on("a1 a2 b1 b2 c1")
INCLUSION_NODES = [unode("node-a", "zone1"), unode("node-b", "zone1", tainted=True, foo=""),
                   unode("node-x", "zone2", foo=""), unode("node-y", "zone2", foo="")]

# upstream case name -> (nodes, existing pods, incoming pod)
UPSTREAM: dict[str, tuple[list, list, dict]] = {
    "clean cluster with one spreadConstraint": (
        four_nodes(), [], incoming([tsc("zone", 5, {"matchLabels": {"foo": "bar"}})])),
    "normal case with one spreadConstraint": (
        four_nodes(), pods_on("a1 a2 b1 y1 y2"), incoming([tsc("zone")])),
    "normal case with null label selector": (
        four_nodes(), pods_on("a1 a2 b1 y1 y2"), incoming([tsc("zone", selector=NIL)])),
    "normal case with one spreadConstraint, on a 3-zone cluster": (
        four_nodes() + [unode("node-o", "zone3"), unode("node-p", "zone3")],
        pods_on("a1 a2 b1 y1 y2"), incoming([tsc("zone")])),
    "namespace mismatch doesn't count": (
        four_nodes(),
        [upod("p-a1", "node-a"), upod("p-a2", "node-a", ns="ns1"), upod("p-b1", "node-b"),
         upod("p-y1", "node-y", ns="ns2"), upod("p-y2", "node-y")],
        incoming([tsc("zone")])),
    "normal case with two spreadConstraints": (
        four_nodes(), pods_on(SPREAD_2_1_0_4), incoming([tsc("zone"), tsc("node")])),
    "soft spreadConstraints should be bypassed": (
        [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-y", "zone2")],
        pods_on(SPREAD_2_1_0_4),
        incoming([tsc("zone", mode="ScheduleAnyway"), tsc("zone"), tsc("node", mode="ScheduleAnyway"),
                  tsc("node")])),
    "different labelSelectors - complex pods": (
        [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-y", "zone2")],
        [upod("p-a1", "node-a"), upod("p-a2", "node-a", foo="", bar=""), upod("p-b1", "node-b"),
         upod("p-y1", "node-y"), upod("p-y2", "node-y", foo="", bar=""), upod("p-y3", "node-y"),
         upod("p-y4", "node-y", foo="", bar="")],
        incoming([tsc("zone"), tsc("node", selector=BAR)], labels={"foo": "", "bar": ""})),
    "two spreadConstraints, and with podAffinity": (
        four_nodes(), pods_on(SPREAD_2_1_0_4),
        incoming([tsc("zone"), tsc("node")],
                 affinity={"key": "node", "operator": "NotIn", "values": ["node-x"]})),
    "NodeAffinityPolicy honored with labelSelectors": (
        POLICY_NODES, POLICY_PODS, incoming([tsc("node", selector=BAR)], node_selector={"foo": ""})),
    "NodeAffinityPolicy ignored with labelSelectors": (
        POLICY_NODES, POLICY_PODS,
        incoming([tsc("node", selector=BAR, nodeAffinityPolicy="Ignore")], node_selector={"foo": ""})),
    "NodeAffinityPolicy honored with nodeAffinity": (
        POLICY_NODES,
        [upod("p-a", "node-a", bar=""), upod("p-c", "node-b", bar=""), upod("p-d", "node-b", bar=""),
         upod("p-e", "node-c", bare=True)],
        incoming([tsc("node", selector=BAR)], affinity=FOO_IN)),
    "NodeTaintsPolicy ignored": (
        POLICY_NODES_TAINTED, POLICY_PODS, incoming([tsc("node", selector=BAR)])),
    "NodeTaintsPolicy honored": (
        POLICY_NODES_TAINTED, POLICY_PODS, incoming([tsc("node", selector=BAR, nodeTaintsPolicy="Honor")])),
    "NodeTaintsPolicy honored with tolerated taints": (
        POLICY_NODES_TAINTED, POLICY_PODS,
        incoming([tsc("node", selector=BAR, nodeTaintsPolicy="Honor")],
                 tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                               "effect": "NoSchedule"}])),
    "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore": (
        [unode("node-a", "zone1"), unode("node-b", "zone1", tainted=True, foo=""),
         unode("node-x", "zone2", foo=""), unode("node-y", "zone2")],
        pods_on("a1 a2 x1 y1"), incoming([tsc("zone"), tsc("node")], node_selector={"foo": ""})),
    "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor": (
        INCLUSION_NODES, pods_on("a1 a2 x1 x2 y1"),
        incoming([tsc("zone", nodeAffinityPolicy="Ignore"), tsc("node", nodeTaintsPolicy="Honor")],
                 node_selector={"foo": ""})),
    "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty": (
        four_nodes(),
        [upod("p-a1", "node-a"), upod("p-a2", "node-a", foo="", bar="a"), upod("p-b1", "node-b"),
         upod("p-y1", "node-y", foo="", bar="a"), upod("p-y2", "node-y", bar="")],
        incoming([tsc("zone", matchLabelKeys=["bar"])], labels={"foo": "", "bar": "a"})),
    "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty": (
        four_nodes(), pods_on("a1 a2 b1 y1 y2", foo="a"),
        incoming([tsc("zone", selector={}, matchLabelKeys=["foo"])], labels={"foo": "a"})),
    "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled": (
        four_nodes(), pods_on("a1 a2 b1 y1 y2", foo="a"),
        incoming([tsc("zone", selector=NIL, matchLabelKeys=["bar"])])),
    "two spreadConstraints with the same topologyKey": (
        four_nodes(),
        [upod("p-a1", "node-a", foo="", bar=""), upod("p-b1", "node-b"), upod("p-x1", "node-x", bar=""),
         upod("p-y1", "node-y", foo="", bar=""), upod("p-y2", "node-y", bar="")],
        incoming([tsc("zone"), tsc("zone", selector=BAR)], labels={"foo": "", "bar": ""})),
    "pods spread across zones as 1/2 due to absence of label 'zone' on node-b": (
        [unode("node-a", "zone1"), unode("node-b", zon="zone1"), unode("node-x", "zone2"),
         unode("node-y", "zone2")],
        pods_on("a1 b1 x1 y1"), incoming([tsc("zone")])),
    "terminating Pods should be excluded": (
        [unode("node-a"), unode("node-b")],
        [upod("p-a", "node-a", terminating=True), upod("p-b", "node-b")], incoming([tsc("node")])),
    "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
    "then the third node fits": (
        THREE_NODES, SPREAD_2_2_1, incoming([tsc("node", 2, minDomains=4)])),
    "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
    "then the all nodes fit": (
        THREE_NODES, SPREAD_2_2_1, incoming([tsc("node", 2, minDomains=2)])),
    "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
    "then the third and fourth nodes fit": (
        four_nodes(), [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")],
        incoming([tsc("zone", 2, minDomains=3)])),
    "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]": (
        [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-x", "zone2", node_label=False),
         unode("node-y", "zone2")],
        [upod("p-a1", "node-a"), upod("p-y3", "node-y")], incoming([tsc("zone"), tsc("node")])),
    "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint": (
        four_nodes(), [upod("p-a1", "node-a"), upod("p-x1", "node-x", bar=""), upod("p-y1", "node-y", bar="")],
        incoming([tsc("zone"), tsc("node", selector=BAR)], labels={"bar": ""})),
}


def upstream_objects(name: str) -> list[dict[str, Any]]:
    nodes, pods, pod = UPSTREAM[name]
    return [*nodes, *pods, pod]


# ---- the seed article's two stories -----------------------------------------------------------

def _app_pods(app: str, ns: str, rs_hash: str, placements: list[tuple[str, str]],
              constraint: Mapping, first_minute: int = 0) -> list[dict[str, Any]]:
    """Pods of one Deployment, created a few seconds apart in the order given; node '' = Pending."""
    out = []
    for i, (suffix, node) in enumerate(placements):
        minute, second = divmod(first_minute * 60 + 3 * i, 60)
        out.append(pod_obj(f"{app}-{rs_hash}-{suffix}", node=node or None, namespace=ns,
                           labels={"app": app, "pod-template-hash": rs_hash}, spread=[constraint],
                           owner=("ReplicaSet", f"{app}-{rs_hash}"), cpu="500m",
                           created=f"2026-03-02T09:{minute:02d}:{second:02d}Z"))
    return out


def _staging_pods(nodes: list[str]) -> list[dict[str, Any]]:
    """The same app in another namespace (same `app=web` label): must never be counted for `shop`."""
    constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}
    return _app_pods("web", "shop-staging", "55d4b8", [(f"s{i}", n) for i, n in enumerate(nodes, 1)],
                     constraint, first_minute=30)


def drift_objects() -> list[dict[str, Any]]:
    """ScheduleAnyway, maxSkew 1 on zone; three large nodes per zone left 8/5/2 (skew 6).

    Resource scoring (NodeResourcesFit / BalancedAllocation) outweighed the spread score on the
    64-CPU nodes, so most replicas landed in us-east-1a. A staging copy of the app in another
    namespace sits in us-east-1c and must not be counted.
    """
    zones = {"us-east-1a": "0a1b", "us-east-1b": "5c7d", "us-east-1c": "9e2f"}
    nodes = [node_obj(f"ip-10-0-{i}-{k}.ec2.internal", zone=z, cpu="64", memory="256Gi")
             for i, z in enumerate(zones) for k in (11, 12, 13)]
    n = {z: [x["metadata"]["name"] for x in nodes if x["metadata"]["labels"]["topology.kubernetes.io/zone"] == z]
         for z in zones}
    a, b, c = n["us-east-1a"], n["us-east-1b"], n["us-east-1c"]
    order = [a[0], b[0], c[0], a[0], a[1], b[1], a[0], a[1], b[0], a[2], c[1], a[0], b[2], a[1], b[1]]
    constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}
    pods = _app_pods("web", "shop", "7f9c6d", [(f"p{i:02d}", node) for i, node in enumerate(order, 1)],
                     constraint)
    return [*nodes, workload_obj("Deployment", "web", {"app": "web"}, namespace="shop", replicas=15),
            workload_obj("ReplicaSet", "web-7f9c6d", {"app": "web", "pod-template-hash": "7f9c6d"},
                         namespace="shop", owner=("Deployment", "web"), replicas=15),
            *pods, *_staging_pods([c[2], c[2], c[1]])]


def scaleup_objects(after: bool) -> list[dict[str, Any]]:
    """DoNotSchedule, maxSkew 1 on zone; `api` scaled from 0 to 6 while zone c had no node yet.

    Pods 1-4 were placed on zones a and b (the only domains then: 2/2 is skew 0). The cluster
    autoscaler's node in us-east-1c then registered: c became a domain with 0 pods and the same
    2/2/0 now reads skew 2 above maxSkew 1. The last two replicas (Pending in the `before` dump)
    can only go to c; in the `after` dump they are there, 2/2/2.
    """
    nodes = [node_obj("ip-10-1-0-21.ec2.internal", zone="us-east-1a", cpu="8", memory="32Gi"),
             node_obj("ip-10-1-1-22.ec2.internal", zone="us-east-1b", cpu="8", memory="32Gi"),
             node_obj("ip-10-1-2-23.ec2.internal", zone="us-east-1c", cpu="8", memory="32Gi")]
    a, b, c = (x["metadata"]["name"] for x in nodes)
    tail = [("q6k8m", c), ("z4n7r", c)] if after else [("q6k8m", ""), ("z4n7r", "")]
    constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "api"}}}
    pods = _app_pods("api", "payments", "6b8d5f",
                     [("h2x9p", a), ("m3v8t", b), ("r5w2k", a), ("t8c4j", b), *tail], constraint)
    return [*nodes, workload_obj("Deployment", "api", {"app": "api"}, namespace="payments", replicas=6),
            workload_obj("ReplicaSet", "api-6b8d5f", {"app": "api", "pod-template-hash": "6b8d5f"},
                         namespace="payments", owner=("Deployment", "api"), replicas=6), *pods]


def drained_zone_objects(taints_policy: str) -> list[dict[str, Any]]:
    """Zone c drained for maintenance: both nodes cordoned, its pods evicted, 2 replacements Pending.

    The second cordoned node lacks the `node.kubernetes.io/unschedulable` taint (dumped
    before the node lifecycle controller added it): the scheduler reads spec.taints only, so
    under nodeTaintsPolicy Honor that node still makes zone c a domain.
    """
    nodes = [node_obj("worker-a1", zone="zone-a"), node_obj("worker-a2", zone="zone-a"),
             node_obj("worker-b1", zone="zone-b"), node_obj("worker-b2", zone="zone-b"),
             node_obj("worker-c1", zone="zone-c", unschedulable=True, taints=[UNSCHEDULABLE_TAINT]),
             node_obj("worker-c2", zone="zone-c", unschedulable=True)]
    constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": taints_policy,
                  "labelSelector": {"matchLabels": {"app": "cart"}}}
    placements = [("a1x", "worker-a1"), ("b1x", "worker-b1"), ("a2x", "worker-a2"), ("b2x", "worker-b2"),
                  ("a3x", "worker-a1"), ("b3x", "worker-b2"), ("n1x", ""), ("n2x", "")]
    return [*nodes, workload_obj("Deployment", "cart", {"app": "cart"}, namespace="shop", replicas=8),
            workload_obj("ReplicaSet", "cart-84c7d9", {"app": "cart", "pod-template-hash": "84c7d9"},
                         namespace="shop", owner=("Deployment", "cart"), replicas=8),
            *_app_pods("cart", "shop", "84c7d9", placements, constraint, first_minute=20)]


# ---- writing ---------------------------------------------------------------------------------

def to_json(doc: Any) -> str:
    return json.dumps(doc, indent=4) + "\n"


def to_yaml(doc: Any) -> str:
    # kubectl -o yaml sorts keys
    return yaml.safe_dump(doc, sort_keys=True, default_flow_style=False)


def files() -> dict[str, str]:
    """Relative path under DATA_DIR -> file content."""
    out = {f"upstream/{slug(name)}.json": to_json(as_list(upstream_objects(name))) for name in UPSTREAM}
    out["article/schedule-anyway-drift.yaml"] = to_yaml(as_list(drift_objects()))
    out["article/do-not-schedule-scaleup-before.json"] = to_json(as_list(scaleup_objects(after=False)))
    out["article/do-not-schedule-scaleup-after.yaml"] = to_yaml(as_list(scaleup_objects(after=True)))
    out["ops/drained-zone-taints-ignore.json"] = to_json(as_list(drained_zone_objects("Ignore")))
    out["ops/drained-zone-taints-honor.yaml"] = to_yaml(as_list(drained_zone_objects("Honor")))
    return out


def write_all(root: str = DATA_DIR) -> list[str]:
    written = []
    for rel, text in files().items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_all():
        print(p)
