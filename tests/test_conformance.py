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
                           "--cases", str(CASES), "--seed", "1", *gaps],
                          capture_output=True, text=True, cwd=REPO, timeout=1800)
    summary = [line for line in proc.stdout.splitlines() if line.startswith("conformance ")]
    print("\n".join(summary))
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
    assert summary and summary[-1].startswith(f"conformance {minor}: filter ")


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
