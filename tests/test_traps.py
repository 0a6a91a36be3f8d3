"""Trap detection (data) and trap_message (one sentence with the numbers)."""

from __future__ import annotations

import pytest
from conftest import make_constraint, make_node, make_pod, make_snapshot

from kubectl_tspread.engine import spread, traps
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import HONOR, SCHEDULE_ANYWAY
from kubectl_tspread.render.text import trap_message

WEB = {"app": "web"}


def pods_on(spec, labels=WEB):
    out = []
    for item in spec.split():
        node, n = item.split("=")
        out += [make_pod(f"{node}-{i}", node=node, labels=labels) for i in range(int(n))]
    return out


def zones(*specs):
    """'a' -> node a1 in zone a; 'c!' -> cordoned (with its taint); 'c~' -> tainted NoSchedule; 'x-' -> no zone label."""
    out = []
    for s in specs:
        name = s[0] + "1"
        zone = None if s.endswith("-") else s[0]
        out.append(make_node(name, zone=zone, unschedulable=s.endswith("!"),
                             taints=["dedicated=gpu:NoSchedule"] if s.endswith("~") else ()))
    return out


def detect(nodes, pods, constraint, incoming_labels=WEB, workload=None):
    index = ClusterIndex(make_snapshot(nodes, pods))
    state = spread.compute(index, make_pod("incoming", labels=incoming_labels), [constraint])
    return traps.detect_traps(index, state, pods if workload is None else workload).get(0, [])


# (id, nodes, pods, constraint, expected {code: params subset})
CASES = [
    ("cordoned zone c pins globalMin 0 under Ignore", zones("a", "b", "c!"), pods_on("a1=3 b1=3"),
     make_constraint(), {"CordonedDomain": {"domains": ["c"], "global_min": 0, "global_min_without": 3},
                         "EnforcedOnlyAtPlacement": {"skew": 3, "max_skew": 1}}),
    ("cordoned zone under Honor is invisible instead", zones("a", "b", "c!"), pods_on("a1=2 b1=1"),
     make_constraint(node_taints_policy=HONOR), {"InvisibleEmptyDomain": {"values": ["c"], "domains": 2}}),
    ("tainted zone under Honor with minDomains 3 already counts: no invisible trap, minDomains trap",
     zones("a", "b", "c~"), pods_on("a1=1 b1=1"), make_constraint(node_taints_policy=HONOR, min_domains=3),
     {"MinDomainsUnreachable": {"min_domains": 3, "domains": 2, "per_domain": 1, "capacity": 2}}),
    ("minDomains 1 never fires MinDomainsUnreachable", zones("a"), pods_on("a1=1"), make_constraint(), {}),
    ("node without zone label is reported", zones("a", "b", "x-"), pods_on("a1=1 b1=1"), make_constraint(),
     {"MissingLabels": {"nodes": ["x1"], "missing_own_key": 1, "hard": True}}),
    ("balanced 3 zones: no traps", zones("a", "b", "c"), pods_on("a1=1 b1=1 c1=1"), make_constraint(), {}),
    ("soft constraint above maxSkew is not EnforcedOnlyAtPlacement", zones("a", "b"), pods_on("a1=4"),
     make_constraint(mode=SCHEDULE_ANYWAY), {}),
]


@pytest.mark.parametrize("nodes,pods,constraint,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_detect_traps(nodes, pods, constraint, want):
    got = {t.code: t.params for t in detect(nodes, pods, constraint)}
    assert set(got) == set(want)
    for code, params in want.items():
        for k, v in params.items():
            assert got[code][k] == v, (code, k)


def test_rolling_update_skew_fires_without_pod_template_hash_key():
    old = pods_on("a1=2", labels={**WEB, "pod-template-hash": "old"})
    new = [make_pod("new-0", node="b1", labels={**WEB, "pod-template-hash": "new"})]
    nodes = zones("a", "b")
    got = detect(nodes, old + new, make_constraint(max_skew=3))
    assert [(t.code, t.params["revisions"]) for t in got] == [("RollingUpdateSkew", {"new": 1, "old": 2})]
    with_key = make_constraint(max_skew=3, match_label_keys=["pod-template-hash"])
    assert detect(nodes, old + new, with_key, incoming_labels={**WEB, "pod-template-hash": "new"}) == []


def test_implicit_constraints_skip_missing_labels():
    c = make_constraint(mode=SCHEDULE_ANYWAY, implicit=True)
    assert detect(zones("a", "x-"), [], c) == []


@pytest.mark.parametrize("trap,fragments", [
    (traps.Trap("CordonedDomain", {"key": "zone", "domains": ["c"], "pods": 0, "global_min": 0,
                                   "global_min_without": 3, "max_skew": 1, "node_taints_policy": "Ignore"}),
     ["zone c exists only through cordoned nodes", "at 0 instead of 3", "nodeTaintsPolicy: Honor"]),
    (traps.Trap("InvisibleEmptyDomain", {"key": "zone", "values": ["c"], "nodes": ["c1"], "domains": 2,
                                         "min_domains": 1}), ["zone c has 1 node", "other 2 domains", "minDomains"]),
    (traps.Trap("MinDomainsUnreachable", {"key": "zone", "min_domains": 3, "domains": 2, "max_skew": 1,
                                          "per_domain": 1, "capacity": 2}),
     ["minDomains is 3 but only 2 domains", "pinned to 0", "at most 1 matching pods, 2 in all"]),
    (traps.Trap("RollingUpdateSkew", {"key": "zone", "revisions": {"new": 1, "old": 2}, "counted": 3}),
     ["3 counted pods span 2 pod-template-hash values", "new=1, old=2", "matchLabelKeys"]),
    (traps.Trap("MissingLabels", {"key": "zone", "nodes": ["x1"], "missing_own_key": 1, "missing_other_key": 0,
                                  "hard": True}), ["1 node (x1)", "cannot be placed"]),
    (traps.Trap("EnforcedOnlyAtPlacement", {"key": "zone", "skew": 3, "max_skew": 1, "max_domain": "a",
                                            "max_pods": 4, "global_min": 1}),
     ["skew on zone is 3, above maxSkew 1", "a has 4", "only gates new placements"]),
], ids=lambda x: x.code if isinstance(x, traps.Trap) else "")
def test_trap_message(trap, fragments):
    msg = trap_message(trap)
    assert msg.endswith(".") and "\n" not in msg
    for f in fragments:
        assert f in msg
