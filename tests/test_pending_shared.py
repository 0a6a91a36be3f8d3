"""explain_pods judges pending replicas of one template once: every report must be the one
explain_pending gives for that pod alone, live message and its comparison included."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import make_pod
from kubectl_tspread.views import pending
from kubectl_tspread.model import Event, OwnerRef, PodCondition
from pending_cases import WEB, index_of, zoned

RS = OwnerRef("ReplicaSet", "web-7d9", uid="rs-uid")
STALE = "0/9 nodes are available: 9 Insufficient cpu."


def _replica(name, **kw):
    fields = {"labels": WEB, "requests": {"cpu": 500}, "owner": RS, "created": "2026-01-01T00:00:00Z", **kw}
    return make_pod(name, **fields)


def _cluster(variants):
    """zones a=2 b=1, b full; pending replicas named r0.. built from `variants` (extra Pod fields)."""
    snap, template = zoned({"a": 2, "b": 1}, full="b")
    replicas = [_replica(f"r{i}", spread=template.spread, **kw) for i, kw in enumerate(variants)]
    pods = tuple(p for p in snap.pods if p.name != "web-new") + tuple(replicas)
    return replace(snap, pods=pods), replicas


SCENARIOS = [
    pytest.param([{}, {}, {}], id="three identical replicas share one evaluation"),
    pytest.param([{}, {"priority": 100}, {}], id="a higher-priority replica gets its own (eviction fix)"),
    pytest.param([{}, {"requests": {"cpu": 5000}}], id="a larger request changes every verdict"),
    pytest.param([{}, {"nominated_node": "a0"}], id="a nominated node changes the preemption message"),
    pytest.param([{"conditions": (PodCondition("PodScheduled", "False", "Unschedulable", STALE, "t"),)}, {},
                  {"created": "2027-01-01T00:00:00Z", "uid": "other"}],
                 id="identity, conditions and creation time differ: shared, live messages per pod"),
]


@pytest.mark.parametrize("variants", SCENARIOS)
def test_every_report_is_the_one_for_the_pod_alone(variants):
    snap, replicas = _cluster(variants)
    events = (Event("default", "Pod", "r1", "FailedScheduling", STALE, last_seen="2026-01-02T00:00:00Z"),)
    snap = replace(snap, events=events)
    index = index_of(snap)
    together = pending.explain_pods(index, replicas)
    alone = [pending.explain_pending(index_of(snap), p) for p in replicas]
    assert [r.pod for r in together.reports] == replicas
    for shared, single in zip(together.reports, alone):
        assert shared == single
    assert together.reports[0].suggestions  # something to share: fixes were searched


def test_live_messages_are_per_pod_when_verdicts_are_shared():
    snap, replicas = _cluster([{}, {}])
    events = (Event("default", "Pod", "r1", "FailedScheduling", STALE, last_seen="2026-01-02T00:00:00Z"),)
    out = pending.explain_pods(index_of(replace(snap, events=events)), replicas)
    first, second = out.reports
    assert first.verdicts == second.verdicts and first.live is None
    assert second.live is not None and second.live.text == STALE and second.agree is False
    assert second.causes == [pending.CAUSE_STALE_MESSAGE]


def test_evaluations_are_computed_once_per_template(monkeypatch):
    snap, replicas = _cluster([{}, {}, {}, {"priority": 100}])
    calls = []
    real = pending._evaluate
    monkeypatch.setattr(pending, "_evaluate", lambda index, pod, *rest: calls.append(pod.name) or real(index, pod, *rest))
    pending.explain_pods(index_of(snap), replicas)
    assert calls == ["r0", "r3"]
