"""The cluster dumps behind the acceptance rehearsal (test_acceptance_pending.py,
test_acceptance_drain.py), as `kubectl get … -o json` prints them.

Layout under tests/data/acceptance/:

- `pending/upstream/<case>.json`: kube-scheduler's own Filter tables of
  pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go (TestSingleConstraint and
  TestMultipleConstraints), one `List` per case: the upstream nodes, the existing pods and the
  incoming Pending pod `p`. A case name that upstream uses twice in one table gets Go's
  subtest suffix `#01`. One extra case (`Filter order/…`) pins the order in which Filter
  checks the constraints of one node.
- `pending/message/<case>.json`: clusters of 12-18 nodes where several filters refuse
  different nodes (cordon, taints, node affinity, cpu and memory on one node, spread), for
  the rebuilt FailedScheduling message.
- `pending/fixes/<case>.json`: clusters where one kind of fix is the way out (uncordon, delete
  drained nodes, label nodes, lower minDomains, evict lower-priority pods, add a node).
- `drain/<case>.json`: clusters for drain-safe, one per finding code plus the safe cases.

Regenerate with `python tests/acceptance_dumps.py`; a test fails when the files on disk and
this module disagree. Expected answers are never computed here: they are written out by hand
in the test modules.
"""

from __future__ import annotations

import copy
import os
import sys
from typing import Any, Iterable, Mapping

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apiobjects import HOST, ZONE, as_dump, as_list, node_obj, pod_obj, spread_obj, workload_obj  # noqa: E402
from scenario_dumps import BAR, NIL, incoming, slug, to_json, tsc, unode, upod  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "acceptance")
CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
INFRA_TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


# ---- 1. kube-scheduler's Filter tables ------------------------------------------------------------

def four(**per_node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """node-a, node-b in zone1 and node-x, node-y in zone2, each with `node=<name>`."""
    zones = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    return [unode(n, z, **per_node.get(n, {})) for n, z in zones.items()]


def on(spec: str, **labels: str) -> list[dict[str, Any]]:
    """'a1 a2 y1' -> pods p-a1, p-a2 on node-a and p-y1 on node-y (labels default to foo="")."""
    return [upod(f"p-{p}", f"node-{p[0]}", **labels) for p in spec.split()]


def both(*labels: str) -> dict[str, str]:
    return {k: "" for k in labels}


SPREAD_2_1_0_3 = "a1 a2 b1 y1 y2 y3"
# nodes with only `node` and maybe `foo` labels, the inclusion-policy tables' cluster
POLICY_NODES = [unode("node-a", foo=""), unode("node-b", foo=""), unode("node-x", foo=""), unode("node-y")]
POLICY_NODES_TAINTED = [unode("node-a", foo=""), unode("node-b", foo=""), unode("node-x", foo=""),
                        unode("node-y", tainted=True)]
POLICY_PODS = [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")]
NODE_IN_A_Y = {"key": "node", "operator": "In", "values": ["node-a", "node-y"]}
NODE_NOT_IN_B = {"key": "node", "operator": "NotIn", "values": ["node-b"]}
FOO_IN = {"key": "foo", "operator": "In", "values": [""]}
THREE = [unode("node-a"), unode("node-b"), unode("node-c")]
MIXED_INCLUSION = [unode("node-a", "zone1", foo=""), unode("node-b", "zone1"), unode("node-x", "zone2", foo=""),
                   unode("node-y", "zone2", tainted=True, foo="")]


def _lbl(labels: Mapping[str, str]) -> dict[str, Any]:
    return {"labels": dict(labels)}


SINGLE: dict[str, tuple[list, list, dict]] = {
    "no existing pods": (four(), [], incoming([tsc("zone")])),
    "no existing pods, incoming pod doesn't match itself": (four(), [], incoming([tsc("zone", selector=BAR)])),
    "existing pods in a different namespace do not count": (
        four(), [upod("p-a1", "node-a", ns="ns1"), upod("p-b1", "node-a", ns="ns2"), *on("x1 y1")],
        incoming([tsc("zone")])),
    "existing pods do not match null selector": (four(), on("x1 y1"), incoming([tsc("zone", selector=NIL)])),
    "pods spread across zones as 3/3, all nodes fit": (four(), on(SPREAD_2_1_0_3), incoming([tsc("zone")])),
    "pods spread across zones as 1/2 due to absence of label 'zone' on node-b": (
        [unode("node-a", "zone1"), unode("node-b", zon="zone1"), unode("node-x", "zone2"), unode("node-y", "zone2")],
        on("a1 b1 x1 y1"), incoming([tsc("zone")])),
    "pod cannot be scheduled as all nodes don't have label 'rack'": (
        [unode("node-a", "zone1"), unode("node-x", "zone2")], [], incoming([tsc("rack")])),
    "pods spread across nodes as 2/1/0/3, only node-x fits": (four(), on(SPREAD_2_1_0_3), incoming([tsc("node")])),
    "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit": (
        four(), on(SPREAD_2_1_0_3), incoming([tsc("node", 2)])),
    "pods spread across nodes as 2/1/0/3, but pod doesn't match itself": (
        four(), on(SPREAD_2_1_0_3), incoming([tsc("node")], labels={"bar": ""})),
    "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits": (
        four(), on(SPREAD_2_1_0_3), incoming([tsc("node")], affinity=NODE_IN_A_Y)),
    "terminating Pods should be excluded": (
        [unode("node-a"), unode("node-b")], [upod("p-a", "node-a", terminating=True), upod("p-b", "node-b")],
        incoming([tsc("node")])),
    "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits": (
        four(), on("b1 b2 y1"), incoming([tsc("zone")], affinity=NODE_NOT_IN_B)),
    "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
    "then the third node fits": (THREE, on("a1 a2 b1 b2 c1"), incoming([tsc("node", 2, minDomains=4)])),
    "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
    "then the all nodes fit": (THREE, on("a1 a2 b1 b2 c1"), incoming([tsc("node", 2, minDomains=2)])),
    "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
    "then the third and fourth nodes fit": (
        four(), [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")],
        incoming([tsc("zone", 2, minDomains=3)])),
    "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
    "then the all nodes fit": (
        four(), [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")],
        incoming([tsc("zone", 2, minDomains=1)])),
    "NodeAffinityPolicy honored with labelSelectors": (
        POLICY_NODES, POLICY_PODS, incoming([tsc("node")], node_selector={"foo": ""})),
    "NodeAffinityPolicy ignored with labelSelectors": (
        POLICY_NODES, POLICY_PODS, incoming([tsc("node", nodeAffinityPolicy="Ignore")], node_selector={"foo": ""})),
    "NodeAffinityPolicy honored with nodeAffinity": (POLICY_NODES, POLICY_PODS, incoming([tsc("node")], affinity=FOO_IN)),
    # upstream reuses the previous name for the nodeAffinity variant; Go names the second run #01
    "NodeAffinityPolicy ignored with labelSelectors#01": (
        POLICY_NODES, POLICY_PODS, incoming([tsc("node", nodeAffinityPolicy="Ignore")], affinity=FOO_IN)),
    "NodeTaintsPolicy honored": (POLICY_NODES_TAINTED, POLICY_PODS, incoming([tsc("node", nodeTaintsPolicy="Honor")])),
    "NodeTaintsPolicy ignored": (POLICY_NODES_TAINTED, POLICY_PODS, incoming([tsc("node")])),
}

ZONE_NODE = [tsc("zone"), tsc("node")]
FOO_BAR = [tsc("zone"), tsc("node", selector=BAR)]
MULTIPLE: dict[str, tuple[list, list, dict]] = {
    "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]": (four(), on(SPREAD_2_1_0_3), incoming(ZONE_NODE)),
    "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]": (
        four(), on(SPREAD_2_1_0_3 + " y4"), incoming(ZONE_NODE)),
    "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]": (
        four(), [upod("p-a1", "node-a"), upod("p-y1", "node-y", bar="")], incoming(FOO_BAR, labels=both("foo", "bar"))),
    "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]": (
        four(), [upod("p-a1", "node-a"), upod("p-x1", "node-x", bar=""), upod("p-y1", "node-y", bar="")],
        incoming(FOO_BAR, labels=both("foo", "bar"))),
    "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]": (
        four(), [upod("p-a1", "node-a"), upod("p-a2", "node-a", **both("foo", "bar")), upod("p-y1", "node-y"),
                 upod("p-y2", "node-y", **both("foo", "bar")), upod("p-y3", "node-y")],
        incoming(FOO_BAR, labels=both("foo", "bar"))),
    "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint": (
        four(), [upod("p-a1", "node-a"), upod("p-x1", "node-x", bar=""), upod("p-y1", "node-y", bar="")],
        incoming(FOO_BAR, labels={"bar": ""})),
    "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]": (
        [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-x", "zone2", node_label=False),
         unode("node-y", "zone2")], [upod("p-a1", "node-a"), upod("p-y3", "node-y")], incoming(ZONE_NODE)),
    "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore": (
        [unode("node-a", "zone1", foo=""), unode("node-b", "zone1", foo=""), unode("node-x", "zone2", foo=""),
         unode("node-y", "zone2")], on("a1 b1 y1"),
        incoming([tsc("zone"), tsc("node", nodeAffinityPolicy="Ignore")], node_selector={"foo": ""})),
    "two node inclusion Constraints, zone: honor/honor, node: honor/ignore": (
        [unode("node-a", "zone1", foo=""), unode("node-b", "zone1", foo=""), unode("node-x", "zone2", foo=""),
         unode("node-y", "zone2", tainted=True)], on("a1 b1 y1"),
        incoming([tsc("zone", nodeTaintsPolicy="Honor"), tsc("node")])),
    "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore": (
        MIXED_INCLUSION, on("a1 b1 y1"), incoming(ZONE_NODE, node_selector={"foo": ""})),
    "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore": (
        MIXED_INCLUSION, on("a1 b1 y1"),
        incoming([tsc("zone", nodeTaintsPolicy="Honor"), tsc("node", nodeAffinityPolicy="Ignore")],
                 node_selector={"foo": ""})),
    "two Constraints on zone, spreads = [3/3, 2/1]": (
        four(), [upod("p-a1", "node-a", **both("foo", "bar")), upod("p-a2", "node-a"),
                 upod("p-b1", "node-b", **both("foo", "bar")), upod("p-y1", "node-y"),
                 upod("p-y2", "node-y", **both("foo", "bar")), upod("p-y3", "node-y")],
        incoming([tsc("zone", selector=BAR), tsc("zone")], labels=both("foo", "bar"))),
    "two Constraints on zone, spreads = [3/4, 2/1]": (
        four(), [upod("p-a1", "node-a", **both("foo", "bar")), upod("p-a2", "node-a"),
                 upod("p-b1", "node-b", **both("foo", "bar")), upod("p-y1", "node-y"),
                 upod("p-y2", "node-y", **both("foo", "bar")), upod("p-y3", "node-y"), upod("p-y4", "node-y")],
        incoming([tsc("zone", selector=BAR), tsc("zone")], labels=both("foo", "bar"))),
}

# Not an upstream row: filtering.go's Filter walks the constraints in order and returns at the
# first failure, so node-x (zone2 too full for the zone constraint) is Unschedulable before its
# missing `node` label (which alone would be UnschedulableAndUnresolvable) is looked at.
EXTRA: dict[str, tuple[list, list, dict]] = {
    "Filter order/a node failing the first constraint's skew is Unschedulable though it lacks the second key": (
        [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-x", "zone2", node_label=False),
         unode("node-y", "zone2")], on("a1 y1 y2 y3"), incoming(ZONE_NODE)),
}


def upstream_cases() -> dict[str, tuple[list, list, dict]]:
    """case id ('TestSingleConstraint/<upstream name>') -> (nodes, existing pods, incoming pod)."""
    out = {f"TestSingleConstraint/{k}": v for k, v in SINGLE.items()}
    out.update({f"TestMultipleConstraints/{k}": v for k, v in MULTIPLE.items()})
    out.update(EXTRA)
    return out


# ---- 2. the rebuilt message -----------------------------------------------------------------------

def with_requests(obj: dict[str, Any], **requests: str) -> dict[str, Any]:
    obj["spec"]["containers"][0]["resources"]["requests"].update(requests)
    return obj


def prioritized(obj: dict[str, Any], priority: int) -> dict[str, Any]:
    obj["spec"]["priority"] = priority
    return obj


WEB = {"app": "web"}
POOL = {"pool": "general"}
POOL_AFFINITY = {"key": "pool", "operator": "In", "values": ["general"]}


def pending_web(constraints: Iterable[Mapping], name: str = "web-new", cpu: str = "500m", memory: str = "1Gi",
                affinity: Mapping | None = None, live: str | None = None, **kw: Any) -> dict[str, Any]:
    """The Pending pod of the `web` app; `live` puts a PodScheduled=False message on it."""
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    if live is not None:
        cond["message"] = live
        cond["lastTransitionTime"] = "2026-01-01T00:20:00Z"
    obj = pod_obj(name, labels=WEB, spread=constraints, cpu=cpu, created="2026-01-01T00:10:00Z",
                  conditions=[cond], **kw)
    with_requests(obj, memory=memory)
    if affinity:
        obj["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [dict(affinity)]}]}}}
    return obj


def web_pods(node_counts: Mapping[str, int], prefix: str = "web") -> list[dict[str, Any]]:
    """Running matching pods: {'a-1': 2} -> web-a-1-0, web-a-1-1 on a-1 (100m, 128Mi each)."""
    return [with_requests(pod_obj(f"{prefix}-{n}-{i}", node=n, labels=WEB, cpu="100m"), memory="128Mi")
            for n, k in node_counts.items() for i in range(k)]


def filler(node: str, cpu: str, memory: str, priority: int = 0, name: str | None = None) -> dict[str, Any]:
    return prioritized(with_requests(pod_obj(name or f"filler-{node}", node=node, labels={"app": "batch"}, cpu=cpu),
                                     memory=memory), priority)


def many_filters(live: str | None = None) -> list[dict[str, Any]]:
    """18 nodes in zones a/b/c; zone spread maxSkew 1 with a=4 b=6 c=4, so only zone b is over.

    zone a: two cordoned nodes (holding a's 4 pods) and three tainted `dedicated=infra`;
    zone b: ten nodes that pass everything but spread; zone c: c-big short of cpu AND memory,
    and two nodes without `pool=general`, which the pod's required node affinity asks for.
    """
    nodes = [node_obj(f"a-cordon-{i}", zone="a", labels=POOL, unschedulable=True, taints=[CORDON_TAINT])
             for i in (1, 2)]
    nodes += [node_obj(f"a-infra-{i}", zone="a", labels=POOL, taints=[INFRA_TAINT]) for i in (1, 2, 3)]
    nodes += [node_obj(f"b-{i:02d}", zone="b", labels=POOL) for i in range(1, 11)]
    nodes += [node_obj("c-big", zone="c", labels=POOL, cpu="2", memory="4Gi"),
              node_obj("c-x1", zone="c"), node_obj("c-x2", zone="c")]
    pods = web_pods({"a-cordon-1": 2, "a-cordon-2": 2, "b-01": 2, "b-02": 2, "b-03": 2, "c-x1": 2, "c-x2": 2})
    # c-big: 2 cpu / 4Gi allocatable, 1.8 cpu and 3.5Gi taken: the 500m / 1Gi pod fits neither
    pods.append(filler("c-big", "1800m", "3584Mi"))
    constraint = spread_obj(ZONE, 1, match_labels=WEB)
    return [*nodes, *pods, pending_web([constraint], affinity=POOL_AFFINITY, live=live)]


def resource_histogram() -> list[dict[str, Any]]:
    """14 nodes: 11 short of cpu (3 of them of memory too), one at its pod limit, two refused by
    spread (zone d holds 3 matching pods, zones a-c one each, maxSkew 1)."""
    nodes = [node_obj(f"n{i:02d}", zone="abc"[(i - 1) // 4], cpu="2", memory="8Gi",
                      pods="2" if i == 12 else "110") for i in range(1, 13)]
    nodes += [node_obj("d1", zone="d", cpu="2", memory="8Gi"), node_obj("d2", zone="d", cpu="2", memory="8Gi")]
    pods = web_pods({"n01": 1, "n05": 1, "n09": 1, "d1": 2, "d2": 1})
    for i in range(1, 12):
        taken = "1700m" if i in (1, 5, 9) else "1800m"  # with web's 100m: 1.8 cpu used everywhere
        memory = "7680Mi" if i in (9, 10, 11) else "1Gi"
        pods.append(filler(f"n{i:02d}", taken, memory))
    pods += [filler("n12", "100m", "128Mi", name="filler-n12-a"), filler("n12", "100m", "128Mi", name="filler-n12-b")]
    return [*nodes, *pods, pending_web([spread_obj(ZONE, 1, match_labels=WEB)])]


def unresolvable_only(live: str | None = None) -> list[dict[str, Any]]:
    """12 nodes: ten without a zone label, two with one but only 1 cpu for a 2-cpu pod."""
    nodes = [node_obj(f"edge-{i:02d}") for i in range(1, 11)]
    nodes += [node_obj(f"small-{z}", zone=z, cpu="1") for z in "ab"]
    return [*nodes, pending_web([spread_obj(ZONE, 1, match_labels=WEB)], cpu="2", live=live)]


def preemption_helps() -> list[dict[str, Any]]:
    """12 nodes, all full of priority -10 batch pods: the priority-0 pod could preempt them."""
    nodes = [node_obj(f"n{i:02d}", zone="abc"[(i - 1) // 4], cpu="2") for i in range(1, 13)]
    pods = [filler(f"n{i:02d}", "1800m", "1Gi", priority=-10) for i in range(1, 13)]
    return [*nodes, *pods, pending_web([spread_obj(ZONE, 1, match_labels=WEB)])]


MESSAGE: dict[str, Any] = {
    "six reasons over 18 nodes": many_filters,
    "eleven short of cpu, three of memory, one at its pod limit, two refused by spread": resource_histogram,
    "only unresolvable reasons: missing zone label and a pod larger than the node": unresolvable_only,
    "lower-priority pods would make room: preemption succeeds": preemption_helps,
    # the condition as a 1.34 scheduler wrote it, typed out by hand
    "live message written by the scheduler agrees": lambda: unresolvable_only(live=(
        "0/12 nodes are available: 10 node(s) didn't match pod topology spread constraints (missing required "
        "label), 2 Insufficient cpu. no new claims to deallocate, preemption: 0/12 nodes are available: "
        "12 Preemption is not helpful for scheduling.")),
    # an older scheduler's spelling of the taint reason, and a node count that has changed since
    "live message from before a node joined": lambda: many_filters(live=(
        "0/17 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 10 node(s) didn't match pod "
        "topology spread constraints, 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) were "
        "unschedulable, 2 node(s) had untolerated taint {dedicated: infra}. preemption: 0/17 nodes are "
        "available: 11 No preemption victims found for incoming pod, 6 Preemption is not helpful for scheduling.")),
}


# ---- 3. fixes -------------------------------------------------------------------------------------

def drained_zone(policy: str = "Ignore") -> list[dict[str, Any]]:
    """Zone c cordoned for maintenance (both nodes), a=3 b=3 c=0, one replacement Pending."""
    nodes = [node_obj(n, zone=n[0]) for n in ("a1", "a2", "b1", "b2")]
    nodes += [node_obj(n, zone="c", unschedulable=True, taints=[CORDON_TAINT]) for n in ("c1", "c2")]
    c = spread_obj(ZONE, 1, match_labels=WEB, nodeTaintsPolicy=policy)
    return [*nodes, *web_pods({"a1": 2, "a2": 1, "b1": 1, "b2": 2}), pending_web([c])]


def min_domains_too_high() -> list[dict[str, Any]]:
    """Three zones exist, minDomains 4: globalMin is pinned to 0 and each zone holds maxSkew 1."""
    nodes = [node_obj(f"{z}1", zone=z) for z in "abc"]
    c = spread_obj(ZONE, 1, match_labels=WEB, minDomains=4)
    return [*nodes, *web_pods({"a1": 1, "b1": 1, "c1": 1}), pending_web([c])]


def unlabelled_new_nodes() -> list[dict[str, Any]]:
    """Zones a, b full of cpu; two fresh nodes joined without a zone label."""
    nodes = [node_obj(n, zone=n[0], cpu="2") for n in ("a1", "b1")] + [node_obj("fresh-1"), node_obj("fresh-2")]
    pods = web_pods({"a1": 1, "b1": 1}) + [filler("a1", "1800m", "1Gi"), filler("b1", "1800m", "1Gi")]
    return [*nodes, *pods, pending_web([spread_obj(ZONE, 1, match_labels=WEB)])]


def batch_in_the_way() -> list[dict[str, Any]]:
    """Allowed zone c's only node is full of priority -5 batch pods; the pod has priority 100."""
    nodes = [node_obj(f"{z}1", zone=z, cpu="2") for z in "abc"]
    pods = web_pods({"a1": 2, "b1": 2, "c1": 1})
    pods += [filler("c1", "900m", "1Gi", priority=-5, name=f"batch-{i}") for i in (1, 2)]
    pod = pending_web([spread_obj(ZONE, 1, match_labels=WEB)])
    return [*nodes, *pods, prioritized(pod, 100)]


def hostname_all_full() -> list[dict[str, Any]]:
    """Hostname spread maxSkew 1 over three nodes with 1/1/0 pods, node c1 full of cpu."""
    nodes = [node_obj(f"{z}1", zone=z, cpu="2") for z in "abc"]
    pods = web_pods({"a1": 1, "b1": 1}) + [filler("c1", "1900m", "1Gi")]
    return [*nodes, *pods, pending_web([spread_obj(HOST, 1, match_labels=WEB)])]


FIXES: dict[str, Any] = {
    "drained zone under Ignore": drained_zone,
    "minDomains above the number of zones": min_domains_too_high,
    "new nodes without a zone label": unlabelled_new_nodes,
    "lower-priority batch pods fill the allowed zone": batch_in_the_way,
    "hostname spread, the only allowed node is full": hostname_all_full,
}


# ---- 4. drain-safe --------------------------------------------------------------------------------

def rs_pods(app: str, placement: Mapping[str, int], constraints: Iterable[Mapping], cpu: str = "100m",
            rs_hash: str = "5d8f", **pod_kw: Any) -> list[dict[str, Any]]:
    """A Deployment's ReplicaSet and its pods: {'a1': 2} -> <app>-<hash>-a1-0, -a1-1 on a1."""
    rs = f"{app}-{rs_hash}"
    labels = {"app": app, "pod-template-hash": rs_hash}
    out: list[dict[str, Any]] = [
        workload_obj("Deployment", app, {"app": app}),
        workload_obj("ReplicaSet", rs, labels, owner=("Deployment", app), replicas=sum(placement.values())),
    ]
    for node, n in placement.items():
        out += [pod_obj(f"{rs}-{node}-{i}", node=node, labels=labels, spread=list(constraints),
                        owner=("ReplicaSet", rs), cpu=cpu, **pod_kw) for i in range(n)]
    return out


def zone_nodes(spec: Mapping[str, int], cpu: str = "4", pods: Mapping[str, str] | None = None) -> list[dict]:
    """{'a': 2} -> a1, a2 in zone a."""
    pods = pods or {}
    return [node_obj(f"{z}{i}", zone=z, cpu=cpu, pods=pods.get(f"{z}{i}", "110"))
            for z, n in spec.items() for i in range(1, n + 1)]


def pdb_obj(name: str, app: str, allowed: int, healthy: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": healthy - allowed,
                       "expectedPods": healthy}}


def drain_zone(policy: str) -> list[dict[str, Any]]:
    """Six nodes, two per zone, one web pod on each; zone spread maxSkew 1 with `policy`."""
    c = spread_obj(ZONE, 1, match_labels={"app": "web"}, nodeTaintsPolicy=policy)
    return zone_nodes({"a": 2, "b": 2, "c": 2}) + rs_pods("web", {n: 1 for n in ("a1", "a2", "b1", "b2", "c1", "c2")}, [c])


def drain_order() -> list[dict[str, Any]]:
    """zones a=1 b=3 c=1 (maxSkew 2, pods per node capped): draining c2 first takes zone c to 0
    and its replacement goes to a2, skew 3; draining b1 first and c2 (the minimum's zone) last
    is safe. (Every target is cordoned at step 1: an order whose harm came from a replacement
    put on a node drained later, as the case before cordon-first had, is no harm any more.)"""
    caps = {"a1": "1", "a2": "1", "b1": "3", "b2": "1", "b3": "2", "c1": "3", "c2": "1"}
    c = spread_obj(ZONE, 2, match_labels={"app": "web"})
    return zone_nodes({"a": 2, "b": 3, "c": 2}, pods=caps) + rs_pods(
        "web", {"a1": 1, "b1": 1, "b3": 2, "c2": 1}, [c])


def drain_pdb(*pdbs: dict[str, Any]) -> list[dict[str, Any]]:
    return zone_nodes({"a": 2}) + rs_pods("web", {"a1": 1, "a2": 1}, []) + list(pdbs)


def drain_hostname_full() -> list[dict[str, Any]]:
    c = spread_obj(HOST, 1, match_labels={"app": "web"})
    return zone_nodes({"a": 3}) + rs_pods("web", {"a1": 1, "a2": 1, "a3": 1}, [c])


def drain_unmanaged() -> list[dict[str, Any]]:
    return zone_nodes({"a": 2}) + [pod_obj("debug-shell", node="a1", labels={"run": "debug"})]


def drain_emptydir() -> list[dict[str, Any]]:
    objs = zone_nodes({"a": 2}) + rs_pods("cache", {"a1": 1}, [])
    objs[-1]["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return objs


def drain_daemonset() -> list[dict[str, Any]]:
    ds = workload_obj("DaemonSet", "node-agent", {"app": "node-agent"}, namespace="kube-system")
    agents = [pod_obj(f"node-agent-{n}", node=n, labels={"app": "node-agent"}, namespace="kube-system",
                      owner=("DaemonSet", "node-agent")) for n in ("a1", "a2")]
    return zone_nodes({"a": 2}) + [ds, *agents] + rs_pods("web", {"a1": 1}, [])


def drain_no_capacity() -> list[dict[str, Any]]:
    big = rs_pods("big", {"a1": 1}, [], cpu="3")
    other = rs_pods("other", {"a2": 1}, [], cpu="2")
    return zone_nodes({"a": 2}) + big + other


def drain_mixed() -> list[dict[str, Any]]:
    """Two workloads under zone and hostname spread over 3 zones x 2 nodes; drain a node per zone."""
    zc = spread_obj(ZONE, 1, match_labels={"app": "api"})
    hc = spread_obj(HOST, 1, match_labels={"app": "web"})
    return (zone_nodes({"a": 2, "b": 2, "c": 2}, cpu="2")
            + rs_pods("api", {"a1": 1, "a2": 1, "b1": 1, "b2": 1, "c1": 1, "c2": 1}, [zc], cpu="500m")
            + rs_pods("web", {"a1": 1, "b1": 1, "c2": 1}, [hc], cpu="300m", rs_hash="77c1"))


DRAIN: dict[str, Any] = {
    "zone-ignore": lambda: drain_zone("Ignore"),
    "zone-honor": lambda: drain_zone("Honor"),
    "order": drain_order,
    "pdb-max-unavailable-0": lambda: drain_pdb(pdb_obj("web", "web", 0, 2, maxUnavailable=0)),
    "two-pdbs": lambda: drain_pdb(pdb_obj("web", "web", 1, 2, maxUnavailable=1),
                                  pdb_obj("web-too", "web", 1, 2, minAvailable=1)),
    "hostname-full": drain_hostname_full,
    "unmanaged": drain_unmanaged,
    "emptydir": drain_emptydir,
    "daemonset": drain_daemonset,
    "no-capacity": drain_no_capacity,
    "mixed": drain_mixed,
}


# ---- writing --------------------------------------------------------------------------------------

def files() -> dict[str, str]:
    """Relative path under DATA_DIR -> file content."""
    out = {}
    for name, (nodes, pods, pod) in upstream_cases().items():
        out[f"pending/upstream/{slug(name)}.json"] = to_json(as_list(copy.deepcopy([*nodes, *pods, pod])))
    for name, build in MESSAGE.items():
        out[f"pending/message/{slug(name)}.json"] = to_json(as_list(build()))
    for name, build in FIXES.items():
        out[f"pending/fixes/{slug(name)}.json"] = to_json(as_list(build()))
    for name, build in DRAIN.items():
        out[f"drain/{name}.json"] = to_json(as_dump(build()))
    return out


def path(rel: str) -> str:
    return os.path.join(DATA_DIR, rel)


def write_all(root: str = DATA_DIR) -> list[str]:
    written = []
    for rel, text in files().items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(p)
    return written


if __name__ == "__main__":
    for p in write_all():
        print(p)
