"""bench/lean_probe.py at the tiny size: its flat-array replay of the zone plan's harmless
prefix puts every replacement where the planner does, and a wrong placement is counted."""

import pytest

pytest.importorskip("numpy")

from bench import lean_probe  # noqa: E402
from kubectl_tspread.model import ZONE_KEY  # noqa: E402


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    snapshot = lean_probe.load("tiny", str(tmp_path_factory.mktemp("bench")))
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, stamps, _, _ = lean_probe.plan_timed(snapshot, targets)
    return snapshot, plan, stamps


def test_the_replay_places_every_replacement_where_the_planner_does(planned):
    snapshot, plan, stamps = planned
    prefix = lean_probe.harmless_prefix(plan)
    assert prefix and len(prefix) < len(plan.steps)  # the tiny zone strands replacements later on
    assert len(stamps) >= len({s.nodes for s in prefix})  # one timestamp per simulated batch
    assert all(began <= end and before <= after for began, end, _, before, after in stamps)
    assert stamps[-1][4] > 0  # the planner's placements were timed
    differ, placed, took, placing = lean_probe.replay(lean_probe.FlatCluster(snapshot), plan, prefix)
    assert placed == sum(e.replaced for s in prefix for e in s.evictions) > 20
    assert differ == 0
    assert 0 <= placing <= took


def test_a_placement_the_planner_did_not_make_is_counted(planned):
    snapshot, plan, _ = planned

    class OneOver(lean_probe.FlatCluster):
        def place(self, pod):
            i = super().place(pod)
            return None if i is None else (i + 1) % self.size

    prefix = lean_probe.harmless_prefix(plan)
    differ, placed, _, _ = lean_probe.replay(OneOver(snapshot), plan, prefix)
    assert differ > 0


def test_the_stranding_step_ends_the_prefix(planned):
    _, plan, _ = planned
    prefix = lean_probe.harmless_prefix(plan)
    after = plan.steps[len(prefix)]
    assert any(e.replaced and e.predicted_node is None for e in after.evictions)
    assert all(e.predicted_node is not None for s in prefix for e in s.evictions if e.replaced)


def test_main_reports_the_two_costs(tmp_path, capsys):
    assert lean_probe.main(["--size", "tiny", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "harmless prefix" in out and "placements that differ: 0" in out


def test_the_window_judged_first_gives_the_same_placements(tmp_path_factory, monkeypatch):
    """With the scheduler looking for 5 of the tiny cluster's 20 nodes, both the planner and
    the probe judge a window of nodes first; every placement still agrees."""
    from kubectl_tspread.drain import placement

    monkeypatch.setattr(placement, "num_feasible_to_find", lambda total, percentage=0: min(total, 5))
    monkeypatch.setattr(lean_probe, "num_feasible_to_find", lambda total, percentage=0: min(total, 5))
    windows = []
    feasible = lean_probe.FlatCluster._feasible

    def counted(self, pod, shape, hard, rows):
        windows.append(rows != slice(None))
        return feasible(self, pod, shape, hard, rows)

    monkeypatch.setattr(lean_probe.FlatCluster, "_feasible", counted)
    snapshot = lean_probe.load("tiny", str(tmp_path_factory.mktemp("bench")))
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    plan, _, _, _ = lean_probe.plan_timed(snapshot, targets)
    prefix = lean_probe.harmless_prefix(plan)
    differ, placed, _, _ = lean_probe.replay(lean_probe.FlatCluster(snapshot), plan, prefix)
    assert placed > 20 and differ == 0
    assert any(windows) and not all(windows)
