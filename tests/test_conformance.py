"""The engine against kube-scheduler's own code (conformance/oracle), per supported minor.

Needs Go to build the oracles (scripts/oracle-build caches them by version outside the
clone). Without Go these tests skip with one line; under CI (CI=true) or with
TSPREAD_REQUIRE_GO=1 a missing Go is a failure, so CI always runs them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# every supported minor: each boundary of engine/versions.py lies between two of them
MINORS = ("1.33", "1.34", "1.35", "1.36", "1.37")
CASES = int(os.environ.get("TSPREAD_CONFORMANCE_CASES", "500"))

pytestmark = pytest.mark.slow


def _go_required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("TSPREAD_REQUIRE_GO") == "1"


@pytest.fixture(scope="session")
def oracles() -> dict[str, str]:
    if shutil.which("go") is None:
        if _go_required():
            pytest.fail("go is not installed, and CI must run the conformance tests against the real scheduler")
        pytest.skip("go not found: the kube-scheduler oracle cannot be built (install Go 1.26+ to run these)")
    built = {}
    for minor in MINORS:
        proc = subprocess.run(["bash", str(REPO / "scripts" / "oracle-build"), "--version", minor],
                              capture_output=True, text=True, timeout=3600)
        assert proc.returncode == 0, f"oracle-build {minor} failed:\n{proc.stderr[-4000:]}"
        built[minor] = proc.stdout.strip()
    return built


# every aspect must agree, the drain planner's predicted node included (no known gap)
KNOWN_GAPS: tuple[str, ...] = ()


@pytest.mark.parametrize("minor", MINORS)
def test_engine_agrees_with_the_scheduler_on_random_clusters(oracles, minor):
    gaps = [arg for gap in KNOWN_GAPS for arg in ("--known-gap", gap)]
    proc = subprocess.run([sys.executable, "-m", "conformance.run", "--oracle", f"{minor}={oracles[minor]}",
                           "--cases", str(CASES), "--drains", str(CASES), "--seed", "1", *gaps],
                          capture_output=True, text=True, cwd=REPO, timeout=1800)
    summary = [line for line in proc.stdout.splitlines() if line.startswith("conformance ")]
    print("\n".join(summary))
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
    assert summary and summary[-1].startswith(f"conformance {minor}: filter ")
    assert f"; drains {CASES}: drain placement " in summary[-1]


@pytest.mark.parametrize("minor", MINORS)
def test_the_oracle_passes_its_own_checks(oracles, minor):
    """conformance/oracle's go test: hand-written cases whose answers are known (the cordon
    without its taint, a missing claim, a schedulable pod's top-scored node, …)."""
    tag = minor.replace(".", "_")
    flags = [] if minor == "1.37" else [f"-modfile=go.{minor}.mod", "-tags", f"k8s{tag}"]
    proc = subprocess.run(["go", "test", "-count=1", *flags, "."], capture_output=True, text=True,
                          cwd=REPO / "conformance" / "oracle", timeout=3600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


def test_a_wrong_engine_answer_is_caught(oracles):
    """The comparison can fail: a case whose answer is tampered with is reported."""
    from conformance.compare import compare, ours
    from conformance.generate import cases
    from conformance.run import run_oracle

    batch = cases(7, 40, 37)
    answers = run_oracle(oracles["1.37"], batch)
    unschedulable = next(i for i, a in enumerate(answers) if not a["schedulable"] and a["spread"])
    case, answer = batch[unschedulable], answers[unschedulable]
    mine = ours(case, 37)
    assert compare(case, answer, mine).diffs == []
    mine.message = mine.message.replace("0/", "1/", 1)
    mine.counts = [(k, {d: n + 1 for d, n in c.items()}, m) for k, c, m in mine.counts]
    outcome = compare(case, answer, mine)
    assert outcome.agree["message"] is False
    assert outcome.agree["counts"] is False or not mine.counts


def test_a_wrong_drain_prediction_is_caught(oracles):
    """The drain comparison can fail: a placement whose predicted node, or whose tie, is
    tampered with is reported."""
    from dataclasses import replace

    from conformance.drains import Placement, drain_cases, judge
    from conformance.run import run_oracle

    batch = [p for p in drain_cases(7, 60, 37) if isinstance(p, Placement)]
    answers = run_oracle(oracles["1.37"], [p.case for p in batch])
    scored = [(p, a) for p, a in zip(batch, answers) if a["schedulable"] and len(a["scores"]) > len(a["top"])]
    assert scored, "no placement with a node outside the top"
    placement, answer = scored[0]
    assert judge(placement, answer) == ({"drain placement": True, "drain ties": True}, [])
    other = next(s["name"] for s in answer["scores"] if s["name"] not in answer["top"])
    agree, diffs = judge(replace(placement, predicted=other, tied=()), answer)
    assert agree["drain placement"] is False and diffs
    agree, diffs = judge(replace(placement, tied=tuple(sorted({placement.predicted, other}))), answer)
    assert agree == {"drain placement": True, "drain ties": False} and diffs


def test_a_wrong_step_judgement_is_caught(oracles):
    """The counts and global minimum a step prints are checked: a judgement whose minimum or
    whose count in one domain is off by one is reported."""
    from dataclasses import replace

    from conformance.drains import Judged, drain_cases, judge
    from conformance.run import run_oracle

    batch = [j for j in drain_cases(7, 80, 37) if isinstance(j, Judged)]
    assert batch, "no step judged a DoNotSchedule constraint"
    answers = run_oracle(oracles["1.37"], [j.case for j in batch])
    judged, answer = next((j, a) for j, a in zip(batch, answers) if any(r.distribution for _, r in j.rows))
    assert judge(judged, answer) == ({"drain skew": True}, [])
    at, row = next((at, r) for at, r in judged.rows if r.distribution)
    off_min = replace(judged, rows=[(at, replace(row, global_min=row.global_min + 1))])
    domain = next(iter(row.distribution))
    off_count = replace(judged, rows=[(at, replace(row, distribution={**dict(row.distribution),
                                                                       domain: row.distribution[domain] + 1}))])
    for tampered in (off_min, off_count):
        agree, diffs = judge(tampered, answer)
        assert agree == {"drain skew": False} and diffs


def test_a_drain_is_rebuilt_step_by_step_for_the_oracle():
    """Each placement's cluster is the plan's own: targets cordoned with the controller's taint,
    the step's evicted pods terminating, earlier steps' evicted pods gone and every earlier
    replacement bound where the plan put it (no Go needed)."""
    from conformance.drains import Placement, drain_cases

    placements = [p for p in drain_cases(1, 120, 37) if isinstance(p, Placement)]
    multi = [p for p in placements if p.step > 1]
    assert multi, "no plan of several steps among the drains"
    for p in placements:
        objs = p.case.objects
        pods = {(o["metadata"].get("namespace") or "default", o["metadata"]["name"]): o
                for o in objs if o["kind"] == "Pod"}
        incoming = pods[(p.case.namespace, p.case.name)]
        assert "nodeName" not in incoming["spec"] and incoming["status"] == {"phase": "Pending"}
        assert p.case.name.rsplit("-", 1)[1].startswith("new")
        cordoned = [o for o in objs if o["kind"] == "Node" and o["spec"].get("unschedulable")]
        assert any(any(t["key"] == "node.kubernetes.io/unschedulable" for t in o["spec"].get("taints", ()))
                   for o in cordoned)
        bound = [o for k, o in pods.items() if "-new" in k[1] and o is not incoming]
        assert all(o["spec"].get("nodeName") and o["status"]["phase"] == "Running" for o in bound)
    first_late = multi[0]
    earlier = [p for p in placements if p.case.id.rsplit("-", 1)[0] == first_late.case.id.rsplit("-", 1)[0]
               and p.step < first_late.step]
    names = {o["metadata"]["name"]: o for o in first_late.case.objects if o["kind"] == "Pod"}
    # (a replacement an earlier step put on a target that tolerates the cordon may be gone again)
    still = [e for e in earlier if e.case.name in names]
    assert still
    for e in still:
        assert names[e.case.name]["spec"]["nodeName"] == e.predicted


def test_an_answer_from_a_lagging_volume_cache_is_asked_again_only_when_the_pv_exists():
    """The harness asks again when VolumeBinding says a claim's PV is missing although the case
    holds it (its assume cache lagged); a PV that is really missing is a real answer."""
    from conformance.generate import Case
    from conformance.run import _lagging

    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"}}
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
           "spec": {"volumeName": "pv-1"}}
    lagged = {"message": "0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) bound to "
                         "non-existent pv(s)."}
    assert _lagging(Case("c", [pv, pvc], "default", "p"), lagged)
    assert not _lagging(Case("c", [pvc], "default", "p"), lagged)
    assert not _lagging(Case("c", [pv, pvc], "default", "p"), {"message": "0/1 nodes are available: 1 Insufficient cpu."})


def test_an_answer_whose_filters_pass_a_node_the_cycle_did_not_find_is_asked_again():
    from conformance.run import _stale_snapshot

    passing = {"name": "n1", "first": None}
    failing = {"name": "n2", "first": {"plugin": "NodeResourcesFit", "code": "Unschedulable"}}
    assert _stale_snapshot({"schedulable": False, "nodes": [passing, failing]})
    assert not _stale_snapshot({"schedulable": True, "nodes": [passing, failing]})
    assert not _stale_snapshot({"schedulable": False, "nodes": [failing]})
