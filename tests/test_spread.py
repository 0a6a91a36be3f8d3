"""Spread engine: kube-scheduler's filtering_test.go scenarios plus tspread's own.

Upstream scenarios keep their names, node names (node-a/b/x/y) and their bare `zone`
and `node` label keys so they can be compared with filtering_test.go side by side.
"""

from __future__ import annotations

import ast
import doctest
import itertools
import math
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import make_constraint, make_node, make_pod, make_snapshot

from kubectl_tspread.engine import spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import EXISTS, NOT_IN, Requirement, Selector
from kubectl_tspread.model import HONOR, IGNORE, SCHEDULE_ANYWAY, NodeSelectorTerm, Taint

FOO = Selector((Requirement("foo", EXISTS),))
BAR = Selector((Requirement("bar", EXISTS),))
OK, U, UU = "Success", spread.UNSCHEDULABLE, spread.UNRESOLVABLE
CORDON_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def unode(name, zone=None, taints=(), **labels):
    """An upstream-style node: labels `zone` and `node` instead of the well-known keys."""
    lab = {"node": name} if labels.pop("has_node_label", True) else {}
    if zone:
        lab["zone"] = zone
    lab.update(labels)
    return make_node(name, hostname="", labels=lab, taints=taints)


def upod(name, node, ns="default", terminating=False, **labels):
    return make_pod(name, node=node, labels=labels or {"foo": ""}, namespace=ns, terminating=terminating)


def zone_c(max_skew=1, selector=FOO, **kw):
    return make_constraint(key="zone", max_skew=max_skew, selector=selector, **kw)


def node_c(max_skew=1, selector=FOO, **kw):
    return make_constraint(key="node", max_skew=max_skew, selector=selector, **kw)


FOUR = [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-x", "zone2"), unode("node-y", "zone2")]
SPREAD_2_1_0_3 = [upod("p-a1", "node-a"), upod("p-a2", "node-a"), upod("p-b1", "node-b"),
                  upod("p-y1", "node-y"), upod("p-y2", "node-y"), upod("p-y3", "node-y")]
POLICY_NODES = [unode("node-a", foo=""), unode("node-b", foo=""), unode("node-x", foo=""), unode("node-y")]
POLICY_PODS = [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")]
FOO_NODE_SELECTOR = {"node_selector": {"foo": ""}}
FOO_AFFINITY = {"node_affinity": (NodeSelectorTerm((Requirement("foo", "In", ("",)),)),)}

# (id, incoming pod labels, constraints, extra pod fields, nodes, existing pods, verdicts)
FILTER_CASES = [
    ("no existing pods", {"foo": ""}, [zone_c()], {}, FOUR, [],
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("no existing pods, incoming pod doesn't match itself", {"foo": ""}, [zone_c(selector=BAR)], {},
     FOUR, [], dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("existing pods in a different namespace do not count", {"foo": ""}, [zone_c()], {}, FOUR,
     [upod("p-a1", "node-a", ns="ns1"), upod("p-b1", "node-a", ns="ns2"),
      upod("p-x1", "node-x"), upod("p-y1", "node-y")],
     {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U}),
    ("existing pods do not match null selector", {"foo": ""}, [zone_c(selector=None)], {}, FOUR,
     [upod("p-x1", "node-x"), upod("p-y1", "node-y")],
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("pods spread across zones as 3/3, all nodes fit", {"foo": ""}, [zone_c()], {}, FOUR,
     SPREAD_2_1_0_3, dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b", {"foo": ""},
     [zone_c()], {},
     [unode("node-a", "zone1"), unode("node-b", zon="zone1"), unode("node-x", "zone2"), unode("node-y", "zone2")],
     [upod("p-a1", "node-a"), upod("p-b1", "node-b"), upod("p-x1", "node-x"), upod("p-y1", "node-y")],
     {"node-a": OK, "node-b": UU, "node-x": U, "node-y": U}),
    ("pod cannot be scheduled as all nodes don't have label 'rack'", {"foo": ""},
     [make_constraint(key="rack", selector=FOO)], {}, [unode("node-a", "zone1"), unode("node-x", "zone2")],
     [], {"node-a": UU, "node-x": UU}),
    ("pods spread across nodes as 2/1/0/3, only node-x fits", {"foo": ""}, [node_c()], {}, FOUR,
     SPREAD_2_1_0_3, {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit", {"foo": ""},
     [node_c(2)], {}, FOUR, SPREAD_2_1_0_3, {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U}),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself", {"bar": ""}, [node_c()], {},
     FOUR, SPREAD_2_1_0_3, {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U}),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits", {"foo": ""},
     [node_c()], {"node_affinity": (NodeSelectorTerm((Requirement("node", "In", ("node-a", "node-y")),)),)},
     FOUR, SPREAD_2_1_0_3, {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": U}),
    ("terminating Pods should be excluded", {"foo": ""}, [node_c()], {},
     [unode("node-a"), unode("node-b")],
     [upod("p-a", "node-a", terminating=True), upod("p-b", "node-b")], {"node-a": OK, "node-b": U}),
    ("incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits", {"foo": ""},
     [zone_c()], {"node_affinity": (NodeSelectorTerm((Requirement("node", NOT_IN, ("node-b",)),)),)},
     FOUR, [upod("p-b1", "node-b"), upod("p-b2", "node-b"), upod("p-y1", "node-y")],
     {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U}),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
     "then the third node fits", {"foo": ""}, [node_c(2, min_domains=4)], {},
     [unode("node-a"), unode("node-b"), unode("node-c")],
     [upod("p-a1", "node-a"), upod("p-a2", "node-a"), upod("p-b1", "node-b"), upod("p-b2", "node-b"),
      upod("p-c1", "node-c")], {"node-a": U, "node-b": U, "node-c": OK}),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
     "then the all nodes fit", {"foo": ""}, [node_c(2, min_domains=2)], {},
     [unode("node-a"), unode("node-b"), unode("node-c")],
     [upod("p-a1", "node-a"), upod("p-a2", "node-a"), upod("p-b1", "node-b"), upod("p-b2", "node-b"),
      upod("p-c1", "node-c")], {"node-a": OK, "node-b": OK, "node-c": OK}),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
     "then the third and fourth nodes fit", {"foo": ""}, [zone_c(2, min_domains=3)], {}, FOUR,
     [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")],
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK}),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
     "then the all nodes fit", {"foo": ""}, [zone_c(2, min_domains=1)], {}, FOUR,
     [upod("p-b1", "node-a"), upod("p-b2", "node-b"), upod("p-y1", "node-y")],
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("NodeAffinityPolicy honored with labelSelectors", {"foo": ""}, [node_c()], FOO_NODE_SELECTOR,
     POLICY_NODES, POLICY_PODS, {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK}),
    ("NodeAffinityPolicy ignored with labelSelectors", {"foo": ""},
     [node_c(node_affinity_policy=IGNORE)], FOO_NODE_SELECTOR, POLICY_NODES, POLICY_PODS,
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("NodeAffinityPolicy honored with nodeAffinity", {"foo": ""}, [node_c()], FOO_AFFINITY,
     POLICY_NODES, POLICY_PODS, {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK}),
    ("NodeAffinityPolicy ignored with nodeAffinity", {"foo": ""},
     [node_c(node_affinity_policy=IGNORE)], FOO_AFFINITY, POLICY_NODES, POLICY_PODS,
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("NodeTaintsPolicy honored", {"foo": ""}, [node_c(node_taints_policy=HONOR)], {},
     POLICY_NODES[:3] + [unode("node-y", taints=[CORDON_TAINT])], POLICY_PODS,
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": OK}),
    ("NodeTaintsPolicy ignored", {"foo": ""}, [node_c()], {},
     POLICY_NODES[:3] + [unode("node-y", taints=[CORDON_TAINT])], POLICY_PODS,
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    # TestMultipleConstraints
    ("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", {"foo": ""}, [zone_c(), node_c()], {},
     FOUR, SPREAD_2_1_0_3, {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", {"foo": ""}, [zone_c(), node_c()], {},
     FOUR, SPREAD_2_1_0_3 + [upod("p-y4", "node-y")], dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], U)),
    ("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]", {"foo": "", "bar": ""},
     [zone_c(), node_c(selector=BAR)], {}, FOUR, [upod("p-a1", "node-a"), upod("p-y1", "node-y", bar="")],
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]", {"foo": "", "bar": ""},
     [zone_c(), node_c(selector=BAR)], {}, FOUR,
     [upod("p-a1", "node-a"), upod("p-x1", "node-x", bar=""), upod("p-y1", "node-y", bar="")],
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], U)),
    ("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]", {"foo": "", "bar": ""},
     [zone_c(), node_c(selector=BAR)], {}, FOUR,
     [upod("p-a1", "node-a"), upod("p-a2", "node-a", foo="", bar=""), upod("p-y1", "node-y"),
      upod("p-y2", "node-y", foo="", bar=""), upod("p-y3", "node-y")],
     {"node-a": U, "node-b": OK, "node-x": U, "node-y": U}),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     {"bar": ""}, [zone_c(), node_c(selector=BAR)], {}, FOUR,
     [upod("p-a1", "node-a"), upod("p-x1", "node-x", bar=""), upod("p-y1", "node-y", bar="")],
     {"node-a": OK, "node-b": OK, "node-x": U, "node-y": U}),
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     {"foo": ""}, [zone_c(), node_c()], {},
     [unode("node-a", "zone1"), unode("node-b", "zone1"), unode("node-x", "zone2", has_node_label=False),
      unode("node-y", "zone2")], [upod("p-a1", "node-a"), upod("p-y3", "node-y")],
     {"node-a": U, "node-b": OK, "node-x": UU, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore", {"foo": ""},
     [zone_c(), node_c(node_affinity_policy=IGNORE)], FOO_NODE_SELECTOR,
     [unode("node-a", "zone1", foo=""), unode("node-b", "zone1", foo=""), unode("node-x", "zone2", foo=""),
      unode("node-y", "zone2")],
     [upod("p-a1", "node-a"), upod("p-b1", "node-b"), upod("p-y1", "node-y")],
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/honor, node: honor/ignore", {"foo": ""},
     [zone_c(node_taints_policy=HONOR), node_c()], {},
     [unode("node-a", "zone1", foo=""), unode("node-b", "zone1", foo=""), unode("node-x", "zone2", foo=""),
      unode("node-y", "zone2", taints=[CORDON_TAINT])],
     [upod("p-a1", "node-a"), upod("p-b1", "node-b"), upod("p-y1", "node-y")],
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore", {"foo": ""},
     [zone_c(), node_c()], FOO_NODE_SELECTOR,
     [unode("node-a", "zone1", foo=""), unode("node-b", "zone1"), unode("node-x", "zone2", foo=""),
      unode("node-y", "zone2", foo="", taints=[CORDON_TAINT])],
     [upod("p-a1", "node-a"), upod("p-b1", "node-b"), upod("p-y1", "node-y")],
     {"node-a": U, "node-b": OK, "node-x": OK, "node-y": U}),
    ("two node inclusion Constraints, zone: honor/honor, node: ignore/ignore", {"foo": ""},
     [zone_c(node_taints_policy=HONOR), node_c(node_affinity_policy=IGNORE)], FOO_NODE_SELECTOR,
     [unode("node-a", "zone1", foo=""), unode("node-b", "zone1"), unode("node-x", "zone2", foo=""),
      unode("node-y", "zone2", foo="", taints=[CORDON_TAINT])],
     [upod("p-a1", "node-a"), upod("p-b1", "node-b"), upod("p-y1", "node-y")],
     {"node-a": U, "node-b": U, "node-x": OK, "node-y": U}),
]


def verdicts(nodes, pods, incoming):
    state = spread.compute(ClusterIndex(make_snapshot(nodes, pods)), incoming)
    out = {}
    for n in nodes:
        failure = spread.filter_node(state, n)
        out[n.name] = OK if failure is None else failure.status
    return out


@pytest.mark.parametrize("labels,constraints,extra,nodes,pods,want",
                         [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter_matches_upstream(labels, constraints, extra, nodes, pods, want):
    incoming = make_pod("p", labels=labels, spread=constraints, **extra)
    assert verdicts(nodes, pods, incoming) == want


def test_filter_reason_strings_are_the_schedulers():
    nodes = [unode("node-a", "zone1"), unode("node-b", zon="zone1"), unode("node-x", "zone2")]
    pods = [upod("p-x1", "node-x")]
    state = spread.compute(ClusterIndex(make_snapshot(nodes, pods)),
                           make_pod("p", labels={"foo": ""}, spread=[zone_c()]))
    assert spread.filter_node(state, nodes[1]) == spread.FilterFailure(
        "PodTopologySpread", "UnschedulableAndUnresolvable",
        "node(s) didn't match pod topology spread constraints (missing required label)")
    assert spread.filter_node(state, nodes[2]) == spread.FilterFailure(
        "PodTopologySpread", "Unschedulable", "node(s) didn't match pod topology spread constraints")
    assert spread.filter_node(state, nodes[0]) is None


def test_soft_constraints_never_filter():
    nodes = [make_node("a1", zone="a"), make_node("b1", zone="b")]
    pods = [make_pod(f"w{i}", node="a1", labels={"app": "web"}) for i in range(5)]
    state = spread.compute(ClusterIndex(make_snapshot(nodes, pods)),
                           make_pod("new", labels={"app": "web"}, spread=[make_constraint(mode=SCHEDULE_ANYWAY)]))
    assert [spread.filter_node(state, n) for n in nodes] == [None, None]
    assert state.constraints[0].status == "DRIFTED"


# ---- Score + NormalizeScore: scoring_test.go scenarios (hostname key, `zone` label) ----

def snode(name, zone=None, hostname=None):
    return make_node(name, hostname=hostname, labels={"zone": zone} if zone else None)


def spods(spec, **labels):
    """'a2 b1' -> two foo pods on node-a, one on node-b."""
    out = []
    for item in spec.split():
        for i in range(int(item[1:])):
            out.append(make_pod(f"p-{item[0]}{i}", node=f"node-{item[0]}", labels=labels or {"foo": ""}))
    return out


HOST = "kubernetes.io/hostname"


def host_c(max_skew=1, selector=FOO):
    return make_constraint(key=HOST, max_skew=max_skew, mode=SCHEDULE_ANYWAY, selector=selector)


def szone_c(selector=FOO):
    return make_constraint(key="zone", mode=SCHEDULE_ANYWAY, selector=selector)


ABCD = [snode("node-a"), snode("node-b"), snode("node-c"), snode("node-d")]
ZONED = [snode("node-a", "zone1"), snode("node-b", "zone1"), snode("node-x", "zone2"), snode("node-y", "zone2")]
MIXED_PODS = [make_pod("p-a1", node="node-a", labels={"foo": ""}),
              make_pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
              make_pod("p-y1", node="node-y", labels={"foo": ""}),
              make_pod("p-y2", node="node-y", labels={"bar": ""})]

# (id, constraints, all nodes, candidate names, pods, services, want)
SCORE_CASES = [
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2", [host_c(2)], ABCD,
     ["node-a", "node-b", "node-c", "node-d"], spods("a2 b1 d3"), [],
     {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3", [host_c(3)], ABCD,
     ["node-a", "node-b", "node-c", "node-d"], spods("a4 b3 c2 d1"), [],
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("system defaulting, nodes don't have zone, pods match service", None, ABCD,
     ["node-a", "node-b", "node-c", "node-d"], spods("a4 b3 c2 d1"), [("svc", {"foo": ""})],
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates", [host_c()],
     [snode("node-a"), snode("node-b"), snode("node-x"), snode("node-y")], ["node-a", "node-b", "node-x"],
     spods("a4 b2 x1 y3"), [], {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     [host_c()], [snode("node-a"), make_node("node-b", hostname="", labels={"n": "node-b"}), snode("node-x"),
                  snode("node-y")],
     ["node-a", "node-b", "node-x"], spods("a4 b2 x1 y3"), [], {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("one constraint on zone, 3 out of 4 nodes are candidates", [szone_c()], ZONED,
     ["node-a", "node-b", "node-x"], spods("a4 b2 x1 y3"), [], {"node-a": 75, "node-b": 75, "node-x": 100}),
    ("two Constraints on zone and node, 2 out of 4 nodes are candidates", [szone_c(), host_c()], ZONED,
     ["node-a", "node-x"], spods("a2 b1 x2 y4"), [], {"node-a": 100, "node-x": 63}),
    ("two Constraints on zone and node, with different labelSelectors", [szone_c(), host_c(selector=BAR)],
     ZONED, ["node-a", "node-b", "node-x", "node-y"], MIXED_PODS, [],
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    ("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     [szone_c(), host_c(selector=BAR)], ZONED, ["node-a", "node-b", "node-x", "node-y"],
     [make_pod("p-b1", node="node-b", labels={"bar": ""}), make_pod("p-x1", node="node-x", labels={"foo": ""}),
      make_pod("p-y1", node="node-y", labels={"foo": "", "bar": ""})], [],
     {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    ("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     [szone_c(), host_c(selector=BAR)], ZONED, ["node-a", "node-b", "node-x"], MIXED_PODS, [],
     {"node-a": 50, "node-b": 25, "node-x": 100}),
    ("existing pods in a different namespace do not count", [host_c()], [snode("node-a"), snode("node-b")],
     ["node-a", "node-b"], spods("a2 b2")[1:] + [make_pod("p-a9", node="node-a", labels={"foo": ""}, namespace="ns1")],
     [], {"node-a": 100, "node-b": 33}),
]


@pytest.mark.parametrize("constraints,nodes,candidates,pods,services,want",
                         [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_score_matches_upstream(constraints, nodes, candidates, pods, services, want):
    from conftest import make_service
    snap = make_snapshot(nodes, pods, services=[make_service(n, s) for n, s in services])
    # Score ignores selfMatch, so one label set serves every case
    state = spread.compute(ClusterIndex(snap), make_pod("p", labels={"foo": "", "bar": ""}, spread=constraints or ()))
    by_name = {n.name: n for n in nodes}
    assert spread.score_nodes(state, [by_name[n] for n in candidates]) == want


def test_score_is_empty_without_soft_constraints():
    nodes = [make_node("a1", zone="a")]
    state = spread.compute(ClusterIndex(make_snapshot(nodes, [])),
                           make_pod("p", labels={"app": "web"}, spread=[make_constraint()]))
    assert spread.score_nodes(state, nodes) == {}


# ---- domains, counts, policies, selectors: tspread's own scenarios ----

WEB = {"app": "web"}


def state_of(nodes, pods, constraint, incoming_labels=WEB, **pod_kw):
    incoming = make_pod("incoming", labels=incoming_labels, spread=[constraint], **pod_kw)
    return spread.compute(ClusterIndex(make_snapshot(nodes, pods)), incoming).constraints[0]


def web_pods(spec, **kw):
    """'a1=2 b1=1' -> web pods on nodes a1 (2) and b1 (1)."""
    out = []
    for item in spec.split():
        node, n = item.split("=")
        out += [make_pod(f"{node}-{i}", node=node, labels=kw.pop("labels", WEB), **kw) for i in range(int(n))]
    return out


THREE_ZONES = [make_node("a1", zone="a"), make_node("b1", zone="b"), make_node("c1", zone="c")]

# (id, nodes, pods, constraint, counts by domain, globalMin, skew, status, headroom by domain)
STATE_CASES = [
    ("3 zones [2,2,1], maxSkew 1, zone c accepts, a and b refuse", THREE_ZONES, web_pods("a1=2 b1=2 c1=1"),
     make_constraint(), {"a": 2, "b": 2, "c": 1}, 1, 1, "AT LIMIT", {"a": 0, "b": 0, "c": 1}),
    ("zones a=5 b=3 c=3, maxSkew 1: a blocked, b and c accept one", THREE_ZONES, web_pods("a1=5 b1=3 c1=3"),
     make_constraint(), {"a": 5, "b": 3, "c": 3}, 3, 2, "VIOLATED", {"a": 0, "b": 1, "c": 1}),
    ("soft constraint over maxSkew drifts", THREE_ZONES, web_pods("a1=5 b1=3 c1=3"),
     make_constraint(mode=SCHEDULE_ANYWAY), {"a": 5, "b": 3, "c": 3}, 3, 2, "DRIFTED", {"a": 0, "b": 1, "c": 1}),
    ("empty zone c is a domain with 0 pods", THREE_ZONES, web_pods("a1=1 b1=1"), make_constraint(max_skew=2),
     {"a": 1, "b": 1, "c": 0}, 0, 1, "OK", {"a": 1, "b": 1, "c": 2}),
    ("minDomains 4 with 3 zones forces globalMin 0", THREE_ZONES, web_pods("a1=2 b1=2 c1=2"),
     make_constraint(max_skew=2, min_domains=4), {"a": 2, "b": 2, "c": 2}, 0, 2, "AT LIMIT",
     {"a": 0, "b": 0, "c": 0}),
    ("cordoned zone c under Ignore still a domain, pins globalMin 0",
     THREE_ZONES[:2] + [make_node("c1", zone="c", unschedulable=True)], web_pods("a1=3 b1=3"),
     make_constraint(), {"a": 3, "b": 3, "c": 0}, 0, 3, "VIOLATED", {"a": 0, "b": 0, "c": 1}),
    ("cordoned zone c under Honor disappears",
     THREE_ZONES[:2] + [make_node("c1", zone="c", unschedulable=True)],
     web_pods("a1=3 b1=3"), make_constraint(node_taints_policy=HONOR), {"a": 3, "b": 3}, 3, 0, "OK",
     {"a": 1, "b": 1}),
    # the scheduler reads spec.taints only: before the node controller adds its taint a cordoned
    # node passes Honor and keeps its zone a domain
    ("cordoned zone c without the taint stays a domain under Honor",
     THREE_ZONES[:2] + [make_node("c1", zone="c", unschedulable=True, cordon_taint=False)],
     web_pods("a1=3 b1=3"), make_constraint(node_taints_policy=HONOR), {"a": 3, "b": 3, "c": 0}, 0, 3, "VIOLATED",
     {"a": 0, "b": 0, "c": 1}),
    ("empty selector {} counts no pods", THREE_ZONES, web_pods("a1=3"), make_constraint(selector={}),
     {"a": 0, "b": 0, "c": 0}, 0, 0, "OK", {"a": 1, "b": 1, "c": 1}),
    ("nil selector counts no pods", THREE_ZONES, web_pods("a1=3"), make_constraint(selector=None),
     {"a": 0, "b": 0, "c": 0}, 0, 0, "OK", {"a": 2, "b": 2, "c": 2}),
    ("no nodes: no domains, skew 0", [], [], make_constraint(), {}, 0, 0, "OK", {}),
]


@pytest.mark.parametrize("nodes,pods,constraint,counts,gmin,skew,status,headroom",
                         [c[1:] for c in STATE_CASES], ids=[c[0] for c in STATE_CASES])
def test_constraint_state(nodes, pods, constraint, counts, gmin, skew, status, headroom):
    cs = state_of(nodes, pods, constraint)
    assert {v: d.pods for v, d in cs.domains.items()} == counts
    assert list(cs.domains) == sorted(counts)
    assert (cs.global_min, cs.skew, cs.status) == (gmin, skew, status)
    assert {v: cs.headroom(v) for v in cs.domains} == headroom
    histogram = {}
    for n in counts.values():
        histogram[n] = histogram.get(n, 0) + 1
    assert cs.count_histogram == histogram  # how many domains hold each count, empty ones included
    moved = spread.shifted(cs, {v: 1 for v in list(counts)[:1]})
    assert moved.count_histogram == spread.count_histogram(d.pods for d in moved.domains.values())


def test_empty_selector_still_self_matches_nil_does_not():
    assert state_of(THREE_ZONES, [], make_constraint(selector={})).self_match == 1
    assert state_of(THREE_ZONES, [], make_constraint(selector=None)).self_match == 0


def test_terminating_cross_namespace_and_unbound_pods_are_not_counted():
    pods = web_pods("a1=1") + [
        make_pod("old", node="a1", labels=WEB, terminating=True),
        make_pod("other-ns", node="b1", labels=WEB, namespace="other"),
        make_pod("pending", labels=WEB),
        make_pod("done", node="b1", labels=WEB, phase="Succeeded"),
    ]
    cs = state_of(THREE_ZONES, pods, make_constraint())
    assert {v: d.pods for v, d in cs.domains.items()} == {"a": 1, "b": 0, "c": 0}
    reasons = {u.name: u.reason for u in cs.uncounted(pods)}
    assert reasons == {"old": "Terminating", "other-ns": "SelectorMismatch", "pending": "Unscheduled"}


def test_match_label_keys_merge_and_other_revision():
    new = [make_pod(f"new-{i}", node="a1", labels={**WEB, "pod-template-hash": "new"}) for i in range(2)]
    old = [make_pod(f"old-{i}", node="b1", labels={**WEB, "pod-template-hash": "old"}) for i in range(3)]
    c = make_constraint(match_label_keys=["pod-template-hash", "absent"])
    cs = state_of(THREE_ZONES, new + old, c, incoming_labels={**WEB, "pod-template-hash": "new"})
    assert str(cs.selector) == "app=web,pod-template-hash=new"
    assert {v: d.pods for v, d in cs.domains.items()} == {"a": 2, "b": 0, "c": 0}
    assert {u.reason for u in cs.uncounted(old)} == {"OtherRevision"}
    # merging again (the API server already merged since 1.34) changes nothing
    again = replace(c, selector=cs.selector)
    assert spread.merged_selector(again, make_pod("x", labels={**WEB, "pod-template-hash": "new"})) == cs.selector


def test_all_keys_rule_excludes_node_missing_another_hard_key():
    nodes = [make_node("a1", zone="a"), make_node("a2", zone="a", hostname=""), make_node("b1", zone="b")]
    pods = web_pods("a2=4")
    incoming = make_pod("incoming", labels=WEB,
                        spread=[make_constraint(), make_constraint(key="kubernetes.io/hostname", max_skew=5)])
    state = spread.compute(ClusterIndex(make_snapshot(nodes, pods)), incoming)
    zone = state.constraints[0]
    assert zone.excluded_nodes == (spread.ExcludedNode("a2", "MissingTopologyKey"),)
    assert {v: d.pods for v, d in zone.domains.items()} == {"a": 0, "b": 0}
    assert zone.uncounted(pods)[0].reason == "ExcludedNode"


def test_soft_only_set_applies_all_keys_over_soft_keys_only_when_explicit():
    nodes = [make_node("a1", zone="a"), make_node("n1")]  # n1 has no zone
    soft = [make_constraint(mode=SCHEDULE_ANYWAY),
            make_constraint(key="kubernetes.io/hostname", mode=SCHEDULE_ANYWAY)]
    explicit = spread.compute(ClusterIndex(make_snapshot(nodes, [])), make_pod("p", labels=WEB, spread=soft))
    assert list(explicit.constraints[1].domains) == ["a1"]
    implicit = [replace(c, implicit=True) for c in soft]
    st = spread.compute(ClusterIndex(make_snapshot(nodes, [])), make_pod("p", labels=WEB), implicit)
    assert list(st.constraints[1].domains) == ["a1", "n1"]
    assert list(st.constraints[0].domains) == ["a"]


def test_node_affinity_policy_excludes_and_filter_uses_domain_count():
    nodes = [make_node("a1", zone="a", labels={"disk": "ssd"}), make_node("b1", zone="b")]
    cs_state = spread.compute(ClusterIndex(make_snapshot(nodes, web_pods("b1=3"))),
                              make_pod("p", labels=WEB, spread=[make_constraint()], node_selector={"disk": "ssd"}))
    cs = cs_state.constraints[0]
    assert cs.excluded_nodes == (spread.ExcludedNode("b1", "NodeAffinity"),)
    assert list(cs.domains) == ["a"]
    # b1's zone is no domain: Filter reads count 0 for it, like upstream's map lookup
    assert spread.filter_node(cs_state, nodes[1]) is None


def test_bound_incoming_pod_counts_itself():
    pods = web_pods("a1=1")
    state = spread.compute(ClusterIndex(make_snapshot(THREE_ZONES, pods)),
                           replace(pods[0], spread=(make_constraint(),)))
    assert state.constraints[0].domains["a"].pods == 1


def test_explicit_constraints_beat_defaults_and_empty_list_means_none():
    pod = make_pod("p", labels=WEB)
    index = ClusterIndex(make_snapshot(THREE_ZONES, []))
    assert spread.constraints_for(index, pod) == ()
    assert spread.compute(index, pod).constraints == ()
    assert spread.filter_node(spread.compute(index, pod), THREE_ZONES[0]) is None


# ---- properties ----
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ZONES = ["a", "b", "c", "d"]
cluster = st.tuples(
    st.lists(st.sampled_from(ZONES + [None]), min_size=1, max_size=6),  # zone of node i (None: unlabelled)
    st.lists(st.tuples(st.integers(0, 5), st.booleans(), st.booleans()), max_size=20),  # (node, web?, terminating?)
    st.integers(1, 3),  # maxSkew
)


def build(zones, pod_specs):
    nodes = [make_node(f"n{i}", zone=z) for i, z in enumerate(zones)]
    pods = [make_pod(f"p{j}", node=f"n{i % len(zones)}", labels=WEB if web else {"app": "db"}, terminating=term)
            for j, (i, web, term) in enumerate(pod_specs)]
    return nodes, pods


@settings(max_examples=60, deadline=None)
@given(cluster, st.randoms())
def test_counts_invariant_under_pod_and_node_order(data, rnd):
    zones, pod_specs, max_skew = data
    nodes, pods = build(zones, pod_specs)
    c = make_constraint(max_skew=max_skew)
    base = state_of(nodes, pods, c)
    rnd.shuffle(nodes)
    rnd.shuffle(pods)
    shuffled = state_of(nodes, pods, c)
    assert shuffled.domains == base.domains
    assert (shuffled.global_min, shuffled.skew, shuffled.excluded_nodes) == (
        base.global_min, base.skew, base.excluded_nodes)


@settings(max_examples=60, deadline=None)
@given(cluster, st.integers(1, 3))
def test_headroom_is_pods_addable_before_filter_refuses(data, min_domains):
    zones, pod_specs, max_skew = data
    nodes, pods = build(zones, pod_specs)
    c = make_constraint(max_skew=max_skew, min_domains=min_domains)
    cs = state_of(nodes, pods, c)
    for value, dom in cs.domains.items():
        unique_min = dom.pods == cs.global_min and sum(d.pods == cs.global_min for d in cs.domains.values()) == 1
        if unique_min and not cs.min_forced_zero:
            continue  # adding there raises globalMin: headroom is only a lower bound
        node = next(n for n in nodes if n.name == dom.nodes[0])
        added = []
        while True:
            state = spread.compute(ClusterIndex(make_snapshot(nodes, pods + added)),
                                   make_pod("incoming", labels=WEB, spread=[c]))
            if spread.filter_node(state, node) is not None:
                break
            added.append(make_pod(f"extra-{len(added)}", node=node.name, labels=WEB))
            assert len(added) <= 20
        assert cs.headroom(value) == len(added), value


from kubectl_tspread.engine import scorearrays, scores  # noqa: E402
from kubectl_tspread.model import HOSTNAME_KEY  # noqa: E402

# The plugin's formulas (spread.py's formula section), each array form held against its scalar
# form over random inputs: the one place the two forms are compared (tests/test_scores.py does
# the same for the scores' normalisations).

def test_the_formulas_worked_examples_hold():
    """The docstrings' examples are the formulas' worked examples: they must stay true."""
    failed, attempted = doctest.testmod(spread)
    assert failed == 0 and attempted >= 8


@pytest.mark.parametrize("max_skew", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("self_match", [0, 1])
def test_fits_array_is_fits_count_by_count(max_skew, self_match):
    """Counts 0..30 (a domain far above the others, empty ones, none at all) against
    globalMin 0 (minDomains forced it) up to above every count."""
    rng = np.random.default_rng(max_skew * 2 + self_match)
    for size in (0, 1, 2, 7, 40):
        counts = rng.integers(0, 31, size, dtype=np.int64)
        for global_min in sorted({0, 1, 5, int(counts.min()) if size else 0, 40}):
            got = spread.fits_array(counts, self_match, global_min, max_skew)
            assert got.dtype == bool
            assert got.tolist() == [spread.fits(c, self_match, global_min, max_skew) for c in counts.tolist()]


@pytest.mark.parametrize("counts,domains,min_domains,want", [
    pytest.param([], 0, 1, (0, True), id="no domains, minDomains 1: 0, forced"),
    pytest.param([], 0, 3, (0, True), id="no domains, minDomains 3: 0, forced"),
    pytest.param([2, 3], 2, 3, (0, True), id="zones [2,3], minDomains 3 above the 2 domains: 0, forced"),
    pytest.param([2, 3], 2, 2, (2, False), id="zones [2,3], minDomains 2 met: 2"),
    pytest.param([4, 4, 1], 3, 1, (1, False), id="zones [4,4,1]: 1"),
    pytest.param([0, 5], 2, 1, (0, False), id="an empty domain holds the minimum, not forced"),
    pytest.param([1, 6], 40, 41, (0, True), id="histogram keys of 40 domains, minDomains 41: forced"),
    pytest.param([1, 6], 40, 40, (1, False), id="histogram keys of 40 domains, minDomains 40: 1"),
])
def test_global_minimum(counts, domains, min_domains, want):
    assert spread.minimum(counts, domains, min_domains) == want


@pytest.mark.parametrize("seed", range(6))
def test_minimum_and_skew_read_alike_from_every_count_or_the_distinct_ones(seed):
    """The drain keeps a histogram {count: domains holding it} and asks with its keys and its
    total: the same globalMin, forced flag and skew as from every domain's count."""
    rng = random.Random(seed)
    for _ in range(50):
        counts = [rng.choice([0, 0, 1, 2, 3, 9]) for _ in range(rng.randrange(0, 8))]
        hist: dict[int, int] = {}
        for c in counts:
            hist[c] = hist.get(c, 0) + 1
        for min_domains in range(1, 10):
            every = spread.minimum(counts, len(counts), min_domains)
            assert spread.minimum(hist, sum(hist.values()), min_domains) == every
            assert spread.skew_of(hist, every[0]) == spread.skew_of(counts, every[0]) == \
                (max(counts) - every[0] if counts else 0)


@pytest.mark.parametrize("seed", range(4))
def test_headroom_is_the_pods_fits_lets_in(seed):
    """headroom counts the pods a domain takes one by one before `fits` refuses the next, at
    the same globalMin; skew_if_placed is the left side `fits` compares."""
    rng = random.Random(seed)
    for _ in range(300):
        count, global_min = rng.randrange(0, 12), rng.randrange(0, 12)
        self_match, max_skew = rng.choice([0, 1]), rng.randrange(1, 6)
        taken = next(k for k in itertools.count() if not spread.fits(count + k, self_match, global_min, max_skew))
        assert spread.headroom(count, self_match, global_min, max_skew) == taken
        assert spread.fits(count, self_match, global_min, max_skew) == \
            (spread.skew_if_placed(count, self_match, global_min) <= max_skew)


@pytest.mark.parametrize("max_skew", [1, 2, 3, 4, 5])
def test_spread_term_over_an_array_is_the_scalar_terms_bit_for_bit(max_skew):
    """The same float operations on an int64 array and on Python ints: equal to the last bit,
    for weights of every size from 0 domains to 5,000 (a big cluster's hostname key)."""
    rng = np.random.default_rng(max_skew)
    for size in (0, 1, 2, 3, 17, 499, 5000):
        weight = spread.topology_weight("zone", size, lambda: size)
        counts = rng.integers(0, 2000, 64, dtype=np.int64)
        got = spread.spread_term(counts, weight, max_skew)
        assert got.dtype == np.float64
        assert got.tolist() == [spread.spread_term(c, weight, max_skew) for c in counts.tolist()]


def test_topology_weight_counts_hostname_nodes_and_other_keys_values():
    def never() -> int:
        raise AssertionError("a hostname key's values are never gathered")

    assert spread.topology_weight(HOSTNAME_KEY, 9, never) == math.log(11)
    assert spread.topology_weight("zone", 9, lambda: 3) == math.log(5)
    assert spread.topology_weight("zone", 0, lambda: 0) == math.log(2)


# A guard against a new restatement of these formulas outside the modules that hold them
# (spread.py, scorearrays.py, scores.py), read wherever the package's files sit. It flags an
# expression (a comparison or arithmetic, read without the arguments of any call in it: a
# call into engine passes the numbers, it does not combine them) that
# - names `max_skew` with `global_min` or `self_match`: the Filter inequality or a
#   rearrangement of it (the headroom, a bound on the counts);
# - compares `min_domains` with anything but a constant, or chooses a value on
#   `min_forced_zero`: the global minimum's minDomains rule;
# and any call of a `log` function: the spread score's weight. Names are what it goes by: a
# restatement under other names escapes it, and the records' field names are the ones a
# restatement reaches for.
FORMULA_MODULES = {Path(m.__file__).resolve() for m in (spread, scorearrays, scores)}


def _names(node: ast.AST) -> set[str]:
    """The names and attribute names of an expression, not looking into calls' arguments."""
    out: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call):
            continue
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _against_constants(node: ast.Compare) -> bool:
    """Whether every operand of the comparison but the ones naming min_domains is a constant."""
    return all(isinstance(x, ast.Constant) for x in [node.left, *node.comparators] if "min_domains" not in _names(x))


def restatements(source: str) -> list[tuple[int, str]]:
    """(line, what) of each expression of `source` that restates a formula of spread.py."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) == "log":
                out.append((node.lineno, "the spread score's weight (spread.topology_weight)"))
        elif isinstance(node, (ast.Compare, ast.BinOp)):
            names = _names(node)
            if "max_skew" in names and names & {"global_min", "self_match"}:
                out.append((node.lineno, "the Filter inequality (spread.fits, fits_array, headroom)"))
            elif isinstance(node, ast.Compare) and "min_domains" in names and not _against_constants(node):
                out.append((node.lineno, "the global minimum's minDomains rule (spread.minimum)"))
        elif isinstance(node, ast.IfExp) and "min_forced_zero" in _names(node.test):
            out.append((node.lineno, "the global minimum's minDomains rule (spread.minimum)"))
    return sorted(set(out))


@pytest.mark.parametrize("code,flagged", [
    pytest.param("ok = counts <= cs.constraint.max_skew + cs.global_min - cs.self_match", True,
                 id="the Filter bound over arrays"),
    pytest.param("ok = [v for v, c in d.items() if c + cs.self_match - low <= cs.constraint.max_skew]", True,
                 id="the Filter inequality with a local minimum"),
    pytest.param("room = max(0, c.max_skew + gmin - n - cs.self_match + 1)", True, id="a headroom"),
    pytest.param("forced = sum(hist.values()) < cs.constraint.min_domains", True, id="minDomains compared"),
    pytest.param("gmin = 0 if len(counts) < min_domains else min(counts.values())", True,
                 id="the minimum with minDomains"),
    pytest.param("low = 0 if cs.min_forced_zero else min(hist)", True, id="the forced minimum chosen"),
    pytest.param("w = math.log(size + 2)", True, id="the spread weight"),
    pytest.param("ok = spread.fits_array(counts, cs.self_match, cs.global_min, cs.constraint.max_skew)", False,
                 id="a call into engine"),
    pytest.param("low, forced = spread.minimum(hist, sum(hist.values()), cs.constraint.min_domains)", False,
                 id="the minimum asked of engine"),
    pytest.param("limit = max(cs.constraint.max_skew, cs.skew)", False, id="the drain's own limit"),
    pytest.param("over = c.skew > c.limit and c.limit > c.max_skew", False, id="a skew against a limit"),
    pytest.param("set_by_user = c.min_domains > 1", False, id="minDomains against a constant"),
    pytest.param("md = 1 if min_domains is None else min_domains", False, id="minDomains defaulted"),
])
def test_the_restatement_guard_flags_the_formulas_and_not_calls(code, flagged):
    assert bool(restatements(code)) == flagged


def test_no_module_restates_a_formula_of_spread():
    root = Path(spread.__file__).resolve().parent.parent
    files = [p for p in sorted(root.rglob("*.py")) if p.resolve() not in FORMULA_MODULES]
    assert len(files) > 50  # the package itself, wherever its modules sit
    found = [f"{path.relative_to(root)}:{line}: {what}" for path in files
             for line, what in restatements(path.read_text())]
    assert found == []
