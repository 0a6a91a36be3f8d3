"""Counts stay right when evaluations share work: a partition's zero-count domains reused by
many workloads, the per-pod counted/uncounted reasons computed once for the traps and the
report, and the cordoned-node set judged once per report.

Each case is checked against a count made from scratch in the test, so a domain leaking
from one workload into another, a lost zero domain or a wrong minimum fails here.
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import make_constraint, make_node, make_pod, make_snapshot

from kubectl_tspread.views.distribution import compute_distribution
from kubectl_tspread.engine import spread, traps
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import HONOR, HOSTNAME_KEY
from kubectl_tspread.views.targets import group_pods


def hosts(n, cordoned=()):
    return [make_node(f"h{i}", zone="z", unschedulable=f"h{i}" in cordoned) for i in range(n)]


def pods_of(app, spec, **kw):
    """'h0=2 h3=1' -> pods of app `app` on those nodes."""
    out = []
    for item in spec.split():
        node, n = item.split("=")
        out += [make_pod(f"{app}-{node}-{i}", node=node, labels={"app": app}, **kw) for i in range(int(n))]
    return out


def reference(nodes, pods, app):
    """Per hostname domain, the matching bound pods: every node a domain, zeros included."""
    per = Counter(p.node_name for p in pods if p.labels.get("app") == app and p.node_name and not p.terminating)
    return {n.name: per.get(n.name, 0) for n in sorted(nodes, key=lambda n: n.name)}


# (id, nodes, per-app pod spec, minDomains, expected (globalMin, skew, minForcedZero) per app)
SHARED_CASES = [
    ("5 hosts, web [2,1,0,0,0] and api [1,1,1,1,1] share one partition", hosts(5),
     {"web": "h0=2 h1=1", "api": "h0=1 h1=1 h2=1 h3=1 h4=1"}, 1, {"web": (0, 2, False), "api": (1, 0, False)}),
    ("3 hosts, web fills every host [3,1,2]: globalMin is the smallest count", hosts(3),
     {"web": "h0=3 h1=1 h2=2", "api": "h2=1"}, 1, {"web": (1, 2, False), "api": (0, 1, False)}),
    ("3 hosts [1,1,1] with minDomains 4: globalMin forced to 0", hosts(3),
     {"web": "h0=1 h1=1 h2=1"}, 4, {"web": (0, 1, True)}),
    ("4 hosts, no pod of the workload: all zeros", hosts(4), {"web": ""}, 1, {"web": (0, 0, False)}),
]


@pytest.mark.parametrize("nodes,apps,min_domains,want", [c[1:] for c in SHARED_CASES],
                         ids=[c[0] for c in SHARED_CASES])
def test_workloads_sharing_a_partition_get_their_own_counts(nodes, apps, min_domains, want):
    pods = [p for app, spec in apps.items() for p in pods_of(app, spec)]
    index = ClusterIndex(make_snapshot(nodes, pods))
    shared: dict = {}
    for _ in range(2):  # the second round reads only memoised partitions
        for app in apps:
            c = make_constraint(key=HOSTNAME_KEY, selector={"app": app}, min_domains=min_domains)
            incoming = make_pod("incoming", labels={"app": app})
            got = spread.compute(index, incoming, [c], partitions=shared).constraints[0]
            alone = spread.compute(index, incoming, [c]).constraints[0]
            counts = {v: d.pods for v, d in got.domains.items()}
            assert counts == reference(nodes, pods, app)
            assert list(got.domains) == sorted(got.domains)
            assert all(d.value == v and d.nodes == (v,) for v, d in got.domains.items())
            assert (got.global_min, got.skew, got.min_forced_zero) == want[app]
            assert (alone.domains, alone.global_min, alone.skew) == (got.domains, got.global_min, got.skew)
    # the memoised zero domains are never written through
    for part in shared.values():
        assert all(d.pods == 0 for d in part.zeros.values())
        assert list(part.zeros) == list(part.members)


def test_no_domains_gives_zero_minimum_and_skew():
    nodes = [make_node("n0", hostname="")]
    index = ClusterIndex(make_snapshot(nodes, []))
    cs = spread.compute(index, make_pod("incoming", labels={"app": "web"}),
                        [make_constraint(key=HOSTNAME_KEY)]).constraints[0]
    assert (dict(cs.domains), cs.global_min, cs.skew, cs.status) == ({}, 0, 0, spread.STATUS_OK)


def test_uncounted_reasons_match_one_pod_at_a_time_and_split_the_workload():
    nodes = hosts(2)
    pods = (pods_of("web", "h0=2 h1=1") + pods_of("web", "h1=1", terminating=True)
            + [make_pod("web-pending", labels={"app": "web"}),
               make_pod("web-other-ns", node="h0", labels={"app": "web"}, namespace="other"),
               make_pod("web-done", node="h0", labels={"app": "web"}, phase="Succeeded")])
    index = ClusterIndex(make_snapshot(nodes, pods))
    cs = spread.compute(index, make_pod("incoming", labels={"app": "web"}),
                        [make_constraint(key=HOSTNAME_KEY)]).constraints[0]
    reasons = cs.uncounted_reasons(pods)
    assert reasons == [cs.uncounted_reason(p) for p in pods]
    assert reasons == [None, None, None, "Terminating", "Unscheduled", "SelectorMismatch", None]
    counted = spread.counted_pods(pods, reasons)
    assert [p.name for p in counted] == ["web-h0-0", "web-h0-1", "web-h1-0"]
    assert [u.name for u in spread.uncounted_pods(pods, reasons)] == [u.name for u in cs.uncounted(pods)]


# (id, cordoned hosts, pods, expected CordonedDomain domains or None)
CORDON_CASES = [
    ("h3 and h1 cordoned, empty: both listed in value order", ("h3", "h1"), "h0=1 h2=1", ["h1", "h3"]),
    ("h1 cordoned but holds a pod: it still is the only domain listed", ("h1",), "h0=2 h1=1 h2=2 h3=2", ["h1"]),
    ("nothing cordoned: no trap", (), "h0=1 h2=1", None),
]


@pytest.mark.parametrize("cordoned,spec,want", [c[1:] for c in CORDON_CASES], ids=[c[0] for c in CORDON_CASES])
def test_cordoned_domain_with_and_without_the_shared_cordoned_set(cordoned, spec, want):
    nodes = hosts(4, cordoned)
    pods = pods_of("web", spec)
    index = ClusterIndex(make_snapshot(nodes, pods))
    cs = spread.compute(index, make_pod("incoming", labels={"app": "web"}),
                        [make_constraint(key=HOSTNAME_KEY)]).constraints[0]
    assert traps.cordoned_nodes(index) == frozenset(cordoned)
    shared = traps.cordoned_domain(index, cs, traps.cordoned_nodes(index))
    assert shared == traps.cordoned_domain(index, cs)
    assert (shared.params["domains"] if shared else None) == want


def test_distribution_report_uncounted_and_traps_per_constraint():
    """Two constraints (hostname, zone with nodeTaintsPolicy Honor) over one workload: each gets its own
    counted pods, so the rolling-update trap fires for one and not the other."""
    nodes = [make_node("a1", zone="a"), make_node("b1", zone="b", taints=["x=y:NoSchedule"])]
    constraints = (make_constraint(key=HOSTNAME_KEY), make_constraint(node_taints_policy=HONOR))
    old = [make_pod(f"web-old-{i}", node="a1", labels={"app": "web", "pod-template-hash": "1"},
                    spread=constraints, created=f"2024-01-01T00:00:0{i}Z", owner="Deployment/web") for i in range(2)]
    new = [make_pod("web-new-0", node="b1", labels={"app": "web", "pod-template-hash": "2"},
                    spread=constraints, created="2024-01-02T00:00:00Z", owner="Deployment/web")]
    index = ClusterIndex(make_snapshot(nodes, old + new))
    report = compute_distribution(index, group_pods(index, old + new))
    (w,) = report.workloads
    host, zone = w.constraints
    assert host.uncounted == [] and zone.uncounted == [spread.UncountedPod("default", "web-new-0", "ExcludedNode")]
    # hostname counts both revisions (a1=2 b1=1); the zone constraint excludes b1, so only one
    assert [t.code for t in host.traps] == ["RollingUpdateSkew"]
    assert host.traps[0].params["revisions"] == {"1": 2, "2": 1} and host.traps[0].params["counted"] == 3
    assert [t.code for t in zone.traps] == ["InvisibleEmptyDomain"]


@pytest.mark.parametrize("n,spec,full,want", [
    (3, "h0=2", False, "h0=2 h1=0 h2=0"),
    (8, "h0=2 h7=1", False, "8 domains, min 0, max 2"),
    (8, "h0=1 h1=1 h2=1 h3=1 h4=1 h5=1 h6=1 h7=3", False, "8 domains, min 1, max 3"),
    (7, "h6=1", True, "h0=0 h1=0 h2=0 h3=0 h4=0 h5=0 h6=1"),
], ids=["3 hosts listed", "8 hosts summarised", "8 hosts all counted: min 1", "7 hosts with -o wide listed"])
def test_distribution_string_of_hostname_domains(n, spec, full, want):
    from kubectl_tspread.render.table import distribution_string, format_counts

    nodes, pods = hosts(n), pods_of("web", spec)
    index = ClusterIndex(make_snapshot(nodes, pods))
    cs = spread.compute(index, make_pod("incoming", labels={"app": "web"}),
                        [make_constraint(key=HOSTNAME_KEY)]).constraints[0]
    assert distribution_string(cs, full) == want == format_counts(reference(nodes, pods, "web"), full)
