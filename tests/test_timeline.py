"""--timeline is honest history: it says it replays the pods that exist now, a row over maxSkew under
DoNotSchedule is marked as not a placement the scheduler made (with the likely cause), in table and
JSON, and each SKEW column names its constraint."""

from __future__ import annotations

import json

from conftest import make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views.distribution import REPLAY_DOMAINS_JOINED_LATER, REPLAY_PODS_GONE, compute_distribution
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import HOSTNAME_KEY, SCHEDULE_ANYWAY
from kubectl_tspread.render import structured, table
from kubectl_tspread.views.targets import Target, resolve
from test_blockers import _run


def _report(nodes, pods):
    idx = ClusterIndex(make_snapshot(nodes, pods))
    return compute_distribution(idx, resolve(idx, "default", Target("ReplicaSet", "web-rs"), None),
                                with_timeline=True, namespace="default")


def _pods(nodes, spread, start=0):
    return [make_pod(f"web-{i}", node=n, labels={"app": "web"}, spread=spread, owner="ReplicaSet/web-rs",
                     created=f"2026-01-01T00:00:{start + i:02d}Z") for i, n in enumerate(nodes)]


def _detail(report) -> str:
    return table.detail_text(report)


def _timeline_json(report) -> list[dict]:
    return json.loads(structured.dump(structured.distribution_view(report), "json"))["workloads"][0]


ZONES = [make_node("a0", zone="a"), make_node("b0", zone="b")]


def test_a_hard_row_over_max_skew_is_not_a_scheduler_placement_pods_gone():
    # web-1 on a0 after web-0 on a0: skew 2 under DoNotSchedule, refused by the scheduler; the b pod
    # that made it legal is gone
    r = _report(ZONES, _pods(["a0", "a0", "b0"], [make_constraint(selector={"app": "web"})]))
    rows = r.workloads[0].timeline
    assert [row.replay_gap.code if row.replay_gap else None for row in rows] == [None, REPLAY_PODS_GONE, None]
    out = _detail(r)
    assert "Timeline: a replay of the 3 pods that exist now, in creation order" in out
    assert "pods deleted since are not in it" in out
    assert "> maxSkew, see note 1" in out
    assert ("note 1 (row 2): not a placement the scheduler made against these pods (DoNotSchedule on zone "
            "refuses it): likely pods deleted since") in out
    w = _timeline_json(r)
    assert w["timelineNote"].startswith("Timeline: a replay of the 3 pods that exist now")
    second = w["timeline"][1]
    assert second["schedulerPlacement"] is False and second["replayGap"]["code"] == "PodsGoneOrChanged"
    assert second["replayGap"]["topologyKeys"] == ["topology.kubernetes.io/zone"]
    assert w["timeline"][0]["schedulerPlacement"] is True and w["timeline"][0]["replayGap"] is None


def test_a_zone_whose_nodes_joined_later_is_named_as_the_cause():
    nodes = [make_node("a0", zone="a", created="2026-01-01T00:00:00Z"),
             make_node("b0", zone="b", created="2026-01-01T00:00:00Z"),
             make_node("c0", zone="c", created="2026-01-02T00:00:00Z")]
    r = _report(nodes, _pods(["a0", "b0", "a0"], [make_constraint(selector={"app": "web"})]))
    gap = r.workloads[0].timeline[2].replay_gap
    assert (gap.code, gap.domains) == (REPLAY_DOMAINS_JOINED_LATER, ("c",))
    assert "c had no node yet when it was placed" in _detail(r)


def test_schedule_anyway_over_max_skew_is_a_possible_placement():
    soft = [make_constraint(selector={"app": "web"}, mode=SCHEDULE_ANYWAY)]
    r = _report(ZONES, _pods(["a0", "a0"], soft))
    row = r.workloads[0].timeline[1]
    assert row.over and row.replay_gap is None
    assert "> maxSkew (ScheduleAnyway)" in _detail(r)


def test_each_skew_column_is_labelled_by_its_constraint():
    two = [make_constraint(selector={"app": "web"}), make_constraint(key=HOSTNAME_KEY, selector={"app": "web"})]
    r = _report(ZONES, _pods(["a0", "b0"], two))
    header = next(line for line in _detail(r).splitlines() if line.startswith("#"))
    assert "SKEW(ZONE)" in header and "SKEW(HOSTNAME)" in header and " SKEW " not in f" {header} "


def test_demo_cart_timeline_through_the_command(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = _run(capsys, "distribution", "deploy/cart", "--demo", "--timeline")
    assert (code, err) == (0, "")
    row3 = next(line for line in out.splitlines() if line.startswith("3 "))
    assert row3.rstrip().endswith("> maxSkew, see note 1")
    assert "note 1 (row 3): not a placement the scheduler made against these pods" in out
