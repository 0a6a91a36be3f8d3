"""The distribution verb: grouping, constraint sets, uncounted pods, timeline, views and tables."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import make_constraint, make_node, make_pod, make_service, make_snapshot, make_workload
from kubectl_tspread.views.distribution import compute_distribution
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.errors import NotFoundError, UsageError
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HOSTNAME_KEY, SCHEDULE_ANYWAY, OwnerRef
from kubectl_tspread.render import structured, table
from kubectl_tspread.views.targets import Target, parse_target, resolve

ZONE3 = [make_node(f"n{i}", zone=z) for i, z in enumerate("aabbcc")]


def _pods(name, nodes, labels=None, spread=None, owner=None, ns="default", **kw):
    labels = labels or {"app": name}
    spread = [make_constraint(selector={"app": name})] if spread is None else spread
    return [make_pod(f"{name}-{i}", node=n, labels=labels, spread=spread, namespace=ns,
                     owner=owner or f"ReplicaSet/{name}-rs", created=f"2026-01-01T00:00:{i:02d}Z", **kw)
            for i, n in enumerate(nodes)]


def _report(pods, nodes=ZONE3, target=None, selector=None, timeline=False, namespace="default", **snap):
    idx = ClusterIndex(make_snapshot(nodes, pods, **snap))
    return compute_distribution(idx, resolve(idx, namespace, target, selector), with_timeline=timeline,
                                namespace=namespace)


def _render(fn, report, **kw) -> str:
    return fn(report, **kw)


@pytest.mark.parametrize("placements, counts, skew, status", [
    (["n0", "n2", "n4"], {"a": 1, "b": 1, "c": 1}, 0, "OK"),
    (["n0", "n1", "n2", "n4"], {"a": 2, "b": 1, "c": 1}, 1, "AT LIMIT"),
    (["n0", "n1", "n0", "n2", "n4"], {"a": 3, "b": 1, "c": 1}, 2, "VIOLATED"),
    (["n0", "n1"], {"a": 2, "b": 0, "c": 0}, 2, "VIOLATED"),
], ids=["3 zones [1,1,1] balanced -> OK", "3 zones [2,1,1], maxSkew 1 -> AT LIMIT",
        "3 zones [3,1,1] after scale-down -> VIOLATED", "zones b and c exist with 0 pods -> skew 2"])
def test_counts_skew_and_status(placements, counts, skew, status):
    r = _report(_pods("web", placements))
    (w,) = r.workloads
    (c,) = w.constraints
    assert {d.value: d.pods for d in c.state.domains.values()} == counts
    assert (c.state.skew, c.state.status) == (skew, status)
    assert r.violated is (status == "VIOLATED")


def test_soft_constraint_over_max_skew_is_drifted_not_violated():
    soft = [make_constraint(selector={"app": "web"}, mode=SCHEDULE_ANYWAY)]
    r = _report(_pods("web", ["n0", "n1", "n0", "n2"], spread=soft))
    assert r.workloads[0].constraints[0].state.status == "DRIFTED"
    assert not r.violated


def test_summary_is_worst_first_and_skips_pods_without_constraints():
    pods = (_pods("ok", ["n0", "n2", "n4"]) + _pods("bad", ["n0", "n1", "n0", "n2", "n4"])
            + _pods("lim", ["n0", "n1", "n2", "n4"]) + _pods("bare", ["n0"], spread=[], owner=None))
    r = _report(pods)
    out = _render(table.summary_text, r)
    lines = out.splitlines()
    assert lines[0].split() == ["NAMESPACE", "WORKLOAD", "PODS", "PENDING", "CONSTRAINT", "DISTRIBUTION", "SKEW",
                                "STATUS"]
    order = [line.split()[1] for line in lines[1:]]
    assert order == ["replicaset/bad-rs", "replicaset/lim-rs", "replicaset/ok-rs"]
    assert "a=3 b=1 c=1" in lines[1] and lines[1].rstrip().endswith("VIOLATED")
    assert "bare" not in out
    assert _render(table.summary_text, r, no_headers=True).splitlines()[0].split()[1] == "replicaset/bad-rs"


def test_deployment_target_follows_replicasets_and_reports_each_constraint_set():
    deploy = make_workload("Deployment", "web", {"app": "web"})
    rs_old = make_workload("ReplicaSet", "web-old", {"app": "web"}, owner=OwnerRef("Deployment", "web", deploy.uid))
    rs_new = make_workload("ReplicaSet", "web-new", {"app": "web"}, owner=OwnerRef("Deployment", "web", deploy.uid))
    old = _pods("web", ["n0", "n2"], owner="ReplicaSet/web-old",
                spread=[make_constraint(selector={"app": "web"}, max_skew=2)])
    new = [make_pod("web-new-0", node="n4", labels={"app": "web"}, owner="ReplicaSet/web-new",
                    spread=[make_constraint(selector={"app": "web"}, max_skew=1)], created="2026-01-02T00:00:00Z")]
    r = _report(old + new, target=Target("Deployment", "web"), workloads=[deploy, rs_old, rs_new])
    assert [(w.kind, w.name, w.pods, w.constraint_set, w.constraint_sets) for w in r.workloads] == [
        ("Deployment", "web", 1, 1, 2), ("Deployment", "web", 2, 2, 2)]
    # the newest set first; both count all three app=web pods
    assert [w.constraints[0].constraint.max_skew for w in r.workloads] == [1, 2]
    assert all(sum(d.pods for d in w.constraints[0].state.domains.values()) == 3 for w in r.workloads)


def test_uncounted_pods_terminating_other_revision_and_unscheduled():
    c = make_constraint(selector={"app": "web"}, match_label_keys=["pod-template-hash"])
    pods = [
        make_pod("web-new-1", node="n0", labels={"app": "web", "pod-template-hash": "new"}, spread=[c],
                 owner="ReplicaSet/web", created="2026-01-01T00:00:05Z"),
        make_pod("web-old-1", node="n2", labels={"app": "web", "pod-template-hash": "old"}, spread=[c],
                 owner="ReplicaSet/web", created="2026-01-01T00:00:01Z"),
        make_pod("web-new-2", node="n4", labels={"app": "web", "pod-template-hash": "new"}, spread=[c],
                 owner="ReplicaSet/web", created="2026-01-01T00:00:02Z", terminating=True),
        make_pod("web-new-3", labels={"app": "web", "pod-template-hash": "new"}, spread=[c],
                 owner="ReplicaSet/web", created="2026-01-01T00:00:03Z"),
    ]
    r = _report(pods)
    (w,) = r.workloads
    assert w.incoming.name == "web-new-1"
    got = {u.name: u.reason for u in w.constraints[0].uncounted}
    assert got == {"web-old-1": "OtherRevision", "web-new-2": "Terminating", "web-new-3": "Unscheduled"}
    assert {d.value: d.pods for d in w.constraints[0].state.domains.values()} == {"a": 1, "b": 0, "c": 0}


def test_timeline_counts_every_domain_and_flags_rows_over_max_skew():
    r = _report(_pods("web", ["n0", "n1", "n2", "n4"]), timeline=True)
    rows = r.workloads[0].timeline
    key = "topology.kubernetes.io/zone"
    assert [row.counts[key] for row in rows] == [
        {"a": 1, "b": 0, "c": 0}, {"a": 2, "b": 0, "c": 0}, {"a": 2, "b": 1, "c": 0}, {"a": 2, "b": 1, "c": 1}]
    assert [row.skew[key] for row in rows] == [1, 2, 2, 1]
    assert [row.over for row in rows] == [False, True, True, False]
    assert [row.domains[key] for row in rows] == ["a", "a", "b", "c"]


def test_timeline_respects_min_domains_when_computing_skew():
    c = make_constraint(selector={"app": "web"}, min_domains=4)
    r = _report(_pods("web", ["n0", "n2", "n4"], spread=[c]), timeline=True)
    key = "topology.kubernetes.io/zone"
    # 3 domains < minDomains 4: globalMin is 0, so skew = max count
    assert [row.skew[key] for row in r.workloads[0].timeline] == [1, 1, 1]
    assert r.workloads[0].constraints[0].state.min_forced_zero


def test_pod_target_uses_the_pending_pod_as_incoming():
    pods = _pods("web", ["n0", "n2"]) + [make_pod("web-p", labels={"app": "web"}, owner="ReplicaSet/web-rs",
                                                   spread=[make_constraint(selector={"app": "web"})])]
    r = _report(pods, target=Target("Pod", "web-p"))
    (w,) = r.workloads
    assert (w.kind, w.name, w.incoming.name, w.pods) == ("Pod", "web-p", "web-p", 1)
    cs = w.constraints[0].state
    assert {v: cs.headroom(v) for v in cs.domains} == {"a": 0, "b": 0, "c": 1}


def test_implicit_defaults_appear_for_service_selected_pods():
    pods = _pods("api", ["n0", "n1", "n2"], spread=[])
    r = _report(pods, services=[make_service("api", {"app": "api"})])
    (w,) = r.workloads
    assert [(c.constraint.topology_key, c.constraint.max_skew, c.constraint.implicit) for c in w.constraints] == [
        (HOSTNAME_KEY, 3, True), ("topology.kubernetes.io/zone", 5, True)]


def test_unknown_targets_are_clear_errors():
    idx = ClusterIndex(make_snapshot(ZONE3, _pods("web", ["n0"]), source="file x.json"))
    with pytest.raises(NotFoundError, match=r'deployment "nope" not found in namespace "default" \(file x.json\)'):
        resolve(idx, "default", Target("Deployment", "nope"))
    with pytest.raises(NotFoundError, match='pod "nope"'):
        resolve(idx, "default", Target("Pod", "nope"))


@pytest.mark.parametrize("text, expected", [
    ("deploy/web", Target("Deployment", "web")), ("sts/db", Target("StatefulSet", "db")),
    ("rs/web-1", Target("ReplicaSet", "web-1")), ("po/x", Target("Pod", "x")),
    ("Deployment/web", Target("Deployment", "web")),
])
def test_parse_target(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize("text", ["web", "svc/web", "deploy/", "cronjob/x"])
def test_parse_target_rejects(text):
    with pytest.raises(UsageError):
        parse_target(text)


def test_selector_target_filters_pods():
    pods = _pods("web", ["n0", "n2"]) + _pods("db", ["n0", "n1"])
    r = _report(pods, selector=Selector.parse("app=db"))
    assert [w.name for w in r.workloads] == ["db-rs"]


def test_json_view_matches_the_public_schema():
    r = _report(_pods("web", ["n0", "n1", "n2"]), timeline=True)
    doc = structured.listed(structured.distribution_view(r))
    assert doc["apiVersion"] == "tspread/v1alpha1" and doc["kind"] == "DistributionReport"
    w = doc["workloads"][0]
    assert {k: w[k] for k in ("kind", "namespace", "name", "pods")} == {
        "kind": "ReplicaSet", "namespace": "default", "name": "web-rs", "pods": 3}
    c = w["constraints"][0]
    assert c["domains"] == [{"value": "a", "pods": 2, "nodes": 2, "headroom": 0, "acceptsNow": 0, "state": None},
                            {"value": "b", "pods": 1, "nodes": 2, "headroom": 0, "acceptsNow": 0, "state": None},
                            {"value": "c", "pods": 0, "nodes": 2, "headroom": 1, "acceptsNow": 1, "state": None}]
    assert (c["globalMin"], c["skew"], c["status"], c["selector"], c["implicit"]) == (0, 2, "VIOLATED", "app=web", False)
    assert (c["minDomains"], c["nodeAffinityPolicy"], c["nodeTaintsPolicy"], c["matchLabelKeys"]) == (1, "Honor", "Ignore", [])
    assert [t["code"] for t in c["traps"]] == ["EnforcedOnlyAtPlacement"]
    assert w["timeline"][1]["counts"] == {"topology.kubernetes.io/zone": {"a": 2, "b": 0, "c": 0}}
    assert w["timeline"][1]["skew"] == {"topology.kubernetes.io/zone": 2}
    # YAML is the same document
    assert yaml.safe_load(structured.dump(doc, "yaml")) == json.loads(structured.dump(doc, "json"))


GOLDEN_DETAIL = """\
ReplicaSet default/web-rs · 4 pods · counted for incoming pod web-3

topology.kubernetes.io/zone · maxSkew 1 · DoNotSchedule · selector app=web
DOMAIN   PODS   NODES   HEADROOM
a        2      2       0          ██
b        1      2       1          █
c        1      2       1          █
global minimum 1 · skew 1 · maxSkew 1 · AT LIMIT
"""


def test_detail_golden_table():
    assert _render(table.detail_text, _report(_pods("web", ["n0", "n1", "n2", "n4"]))) == GOLDEN_DETAIL


def test_bar_scales_past_its_width():
    assert table.bar(0, 5) == "" and table.bar(3, 5) == "███"
    assert len(table.bar(100, 100)) == table.BAR_WIDTH and table.bar(1, 1000) == "█"


def test_distribution_column_summarises_many_domains_unless_wide():
    nodes = [make_node(f"h{i}", zone="a") for i in range(8)]
    c = make_constraint(key=HOSTNAME_KEY, selector={"app": "web"})
    r = _report(_pods("web", ["h0", "h1", "h1"], spread=[c]), nodes=nodes)
    narrow = _render(table.summary_text, r).splitlines()[1]
    wide = _render(table.summary_text, r, wide=True).splitlines()[1]
    assert "8 domains, min 0, max 2" in narrow
    assert "h0=1 h1=2 h2=0 h3=0 h4=0 h5=0 h6=0 h7=0" in wide


def test_timeline_does_not_flag_uncounted_pending_rows():
    pods = _pods("web", ["n0", "n1"]) + [make_pod("web-p", labels={"app": "web"}, owner="ReplicaSet/web-rs",
                                                   spread=[make_constraint(selector={"app": "web"})],
                                                   created="2026-01-01T00:01:00Z")]
    rows = _report(pods, timeline=True).workloads[0].timeline
    assert [(r.pod, r.over) for r in rows] == [("web-0", False), ("web-1", True), ("web-p", False)]
    assert rows[2].skew == rows[1].skew


def test_verdict_line_explains_a_minimum_forced_to_zero():
    c = make_constraint(selector={"app": "web"}, min_domains=4)
    out = _render(table.detail_text, _report(_pods("web", ["n0", "n2", "n4"], spread=[c])))
    assert "global minimum 0 (forced to 0: 3 domains, fewer than minDomains 4)" in out
    bare = [make_node("x", zone=None)]
    out = _render(table.detail_text, _report(_pods("web", ["x"]), nodes=bare))
    assert "global minimum 0 (no domains)" in out


def test_format_counts_sorts_and_summarises():
    assert table.format_counts({"b": 1, "a": 2}) == "a=2 b=1"
    many = {f"n{i}": i % 3 for i in range(7)}
    assert table.format_counts(many) == "7 domains, min 0, max 2"
    assert table.format_counts(many, full=True).startswith("n0=0 n1=1 n2=2")
    assert table.format_counts({}) == "<no domains>"


def test_shared_partitions_change_no_number_on_the_demo():
    from kubectl_tspread.views.distribution import analyse_group
    from kubectl_tspread.snapshot.demo import load_demo
    idx = ClusterIndex(load_demo(all_namespaces=True))
    groups = resolve(idx, None)
    shared = compute_distribution(idx, groups)
    fresh = [w for g in groups for w in analyse_group(idx, g)]
    assert list(structured.distribution_view(shared)["workloads"]) == \
        list(structured.distribution_view(type(shared)(fresh))["workloads"])


def test_json_dump_is_the_same_text_from_orjson_and_from_the_json_module():
    """orjson writes the documents; the json module writes what orjson refuses (a lone surrogate,
    an integer past 64 bits) in the same layout."""
    doc = structured.listed(structured.distribution_view(_report(_pods("wéb", ["n0", "n2"]), timeline=True)))
    fast = structured.dump(doc, "json")
    assert structured._stdlib_json_text(doc) + "\n" == fast
    assert json.loads(fast) == doc and fast.startswith('{\n  "apiVersion"')
