"""End to end: realistic `--from-file` dumps through the real CLI, checked against kube-scheduler.

Three groups, all on the files under tests/data/scenarios/ (built by scenario_dumps.py):

1. kube-scheduler's own test tables (filtering_test.go), one dump per upstream case, named
   after it. For the incoming Pending pod `p`, `distribution pod/p -o json` must show the
   PreFilter state upstream expects (TpValueToMatchNum per hard constraint, globalMin = the
   first critical path's count, or 0 under minDomains) and, per domain, headroom > 0 exactly
   when upstream's Filter lets a node of that domain pass.
2. The seed article's two stories (ScheduleAnyway drifted to skew 6 on large nodes;
   DoNotSchedule observed at skew 2 during a fast scale-up): summary, JSON detail and the
   creation-order timeline, with every running count written out by hand.
3. Dump shapes: the same clusters as a `List`, as typed lists without item kinds, as
   multi-document YAML, as a directory, as a bare array and on stdin give identical JSON.

Expected numbers are literals here, never computed from the engine.
"""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import dataclass, field

import pytest
import yaml

import scenario_dumps as sd
from apiobjects import as_list
from kubectl_tspread.cli import main

ARTICLE = os.path.join(sd.DATA_DIR, "article")
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    """These tests read table rows line by line: a terminal wide enough that no cell wraps."""
    monkeypatch.setenv("COLUMNS", "400")


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def run_json(capsys, *args: str) -> dict:
    code, out, err = run(capsys, *args, "-o", "json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


def upstream_file(name: str) -> str:
    return os.path.join(sd.DATA_DIR, "upstream", sd.slug(name) + ".json")


def counts(text: str) -> dict[str, int]:
    """'zone1=3 zone2=2' -> {'zone1': 3, 'zone2': 2}"""
    return {k: int(v) for k, v in (pair.split("=") for pair in text.split())}


# ---- 1. kube-scheduler's tables ---------------------------------------------------------------

@dataclass(frozen=True)
class Hard:
    """What upstream's PreFilter/Filter hold for one DoNotSchedule constraint."""

    index: int  # position in the pod's topologySpreadConstraints (soft ones included)
    domains: str  # TpValueToMatchNum as 'value=count …'
    global_min: int
    allowed: str  # domains whose nodes pass Filter, space separated
    excluded: dict[str, str] = field(default_factory=dict)  # node -> reason left out of counting
    forced_zero: bool = False


UPSTREAM_EXPECTED: list[tuple[str, list[Hard]]] = [
    # TestPreFilterState
    ("clean cluster with one spreadConstraint", [Hard(0, "zone1=0 zone2=0", 0, "zone1 zone2")]),
    ("normal case with one spreadConstraint", [Hard(0, "zone1=3 zone2=2", 2, "zone2")]),
    ("normal case with null label selector", [Hard(0, "zone1=0 zone2=0", 0, "zone1 zone2")]),
    ("normal case with one spreadConstraint, on a 3-zone cluster",
     [Hard(0, "zone1=3 zone2=2 zone3=0", 0, "zone3")]),
    ("namespace mismatch doesn't count", [Hard(0, "zone1=2 zone2=1", 1, "zone2")]),
    ("normal case with two spreadConstraints",
     [Hard(0, "zone1=3 zone2=4", 3, "zone1"), Hard(1, "node-a=2 node-b=1 node-x=0 node-y=4", 0, "node-x")]),
    ("soft spreadConstraints should be bypassed",
     [Hard(1, "zone1=3 zone2=4", 3, "zone1"), Hard(3, "node-a=2 node-b=1 node-y=4", 1, "node-b")]),
    ("different labelSelectors - complex pods",
     [Hard(0, "zone1=3 zone2=4", 3, "zone1"), Hard(1, "node-a=1 node-b=0 node-y=2", 0, "node-b")]),
    ("two spreadConstraints, and with podAffinity",
     [Hard(0, "zone1=3 zone2=4", 3, "zone1", {"node-x": "NodeAffinity"}),
      Hard(1, "node-a=2 node-b=1 node-y=4", 1, "node-b", {"node-x": "NodeAffinity"})]),
    ("NodeAffinityPolicy honored with labelSelectors",
     [Hard(0, "node-a=1 node-b=2", 1, "node-a node-b", {"node-c": "NodeAffinity"})]),
    ("NodeAffinityPolicy ignored with labelSelectors", [Hard(0, "node-a=1 node-b=2 node-c=0", 0, "node-a node-c")]),
    ("NodeAffinityPolicy honored with nodeAffinity",
     [Hard(0, "node-a=1 node-b=2", 1, "node-a node-b", {"node-c": "NodeAffinity"})]),
    ("NodeTaintsPolicy ignored", [Hard(0, "node-a=1 node-b=2 node-c=0", 0, "node-a node-c")]),
    ("NodeTaintsPolicy honored",
     [Hard(0, "node-a=1 node-b=2", 1, "node-a node-b", {"node-c": "UntoleratedTaint"})]),
    ("NodeTaintsPolicy honored with tolerated taints", [Hard(0, "node-a=1 node-b=2 node-c=0", 0, "node-a node-c")]),
    ("two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
     [Hard(0, "zone1=0 zone2=1", 0, "zone1", {"node-a": "NodeAffinity", "node-y": "NodeAffinity"}),
      Hard(1, "node-b=0 node-x=1", 0, "node-b", {"node-a": "NodeAffinity", "node-y": "NodeAffinity"})]),
    ("two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
     [Hard(0, "zone1=2 zone2=3", 2, "zone1"),
      Hard(1, "node-x=2 node-y=1", 1, "node-y", {"node-a": "NodeAffinity", "node-b": "UntoleratedTaint"})]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
     [Hard(0, "zone1=1 zone2=1", 1, "zone1 zone2")]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty", [Hard(0, "zone1=3 zone2=2", 2, "zone2")]),
    ("key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
     [Hard(0, "zone1=0 zone2=0", 0, "zone1 zone2")]),
    ("two spreadConstraints with the same topologyKey",
     [Hard(0, "zone1=2 zone2=1", 1, "zone2"), Hard(1, "zone1=1 zone2=3", 1, "zone1")]),
    # TestSingleConstraint (upstream states Filter verdicts per node; counts follow from its pods)
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     [Hard(0, "zone1=1 zone2=2", 1, "zone1", {"node-b": "MissingTopologyKey"})]),
    ("terminating Pods should be excluded", [Hard(0, "node-a=0 node-b=1", 0, "node-a")]),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
     "then the third node fits", [Hard(0, "node-a=2 node-b=2 node-c=1", 0, "node-c", forced_zero=True)]),
    ("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
     "then the all nodes fit", [Hard(0, "node-a=2 node-b=2 node-c=1", 1, "node-a node-b node-c")]),
    ("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
     "then the third and fourth nodes fit", [Hard(0, "zone1=2 zone2=1", 0, "zone2", forced_zero=True)]),
    # TestMultipleConstraints
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     [Hard(0, "zone1=1 zone2=1", 1, "zone1 zone2", {"node-x": "MissingTopologyKey"}),
      Hard(1, "node-a=1 node-b=0 node-y=1", 0, "node-b", {"node-x": "MissingTopologyKey"})]),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     [Hard(0, "zone1=1 zone2=0", 0, "zone1 zone2"),
      Hard(1, "node-a=0 node-b=0 node-x=1 node-y=1", 0, "node-a node-b")]),
]


def test_every_upstream_dump_has_expectations():
    assert sorted(sd.UPSTREAM) == sorted(name for name, _ in UPSTREAM_EXPECTED)


@pytest.mark.parametrize("name, hard", UPSTREAM_EXPECTED, ids=[n for n, _ in UPSTREAM_EXPECTED])
def test_upstream_prefilter_state_and_filter(capsys, name, hard):
    doc = run_json(capsys, "distribution", "pod/p", "--from-file", upstream_file(name))
    (w,) = doc["workloads"]
    assert (w["kind"], w["name"], w["incomingPod"]) == ("Pod", "p", "p")
    constraints = w["constraints"]
    assert [i for i, c in enumerate(constraints) if c["whenUnsatisfiable"] == "DoNotSchedule"] == \
        [h.index for h in hard]
    for h in hard:
        c = constraints[h.index]
        got = {d["value"]: d["pods"] for d in c["domains"]}
        assert got == counts(h.domains)
        assert c["globalMin"] == h.global_min
        assert c["globalMinForcedToZero"] is h.forced_zero
        allowed = {d["value"] for d in c["domains"] if d["headroom"] > 0}
        assert allowed == set(h.allowed.split())
        assert {e["name"]: e["reason"] for e in c["excludedNodes"]} == h.excluded


# ---- 2. the seed article ----------------------------------------------------------------------

def summary_rows(out: str) -> dict[str, list[str]]:
    """Summary table -> {'ns workload': [cells after WORKLOAD]} (cells split on 2+ spaces)."""
    import re

    lines = out.splitlines()
    assert lines[0].split()[:3] == ["NAMESPACE", "WORKLOAD", "PODS"]
    rows = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.strip())
        rows[f"{cells[0]} {cells[1]}"] = cells[2:]
    return rows


def timeline(w: dict) -> list[tuple[str, str | None, str, int, bool]]:
    """(pod, zone, 'a=… b=… c=…', skew, over) per timeline row, zone names shortened to their letter."""
    rows = []
    for r in w["timeline"]:
        running = " ".join(f"{k[-1]}={v}" for k, v in r["counts"][ZONE].items())
        zone = r["domains"][ZONE]
        rows.append((r["pod"], zone[-1] if zone else None, running, r["skew"][ZONE], r["overMaxSkew"]))
    return rows


DRIFT = os.path.join(ARTICLE, "schedule-anyway-drift.yaml")
# creation order of web's 15 replicas: zone of each, then the running counts and skew after it
DRIFT_TIMELINE = [
    ("a", "a=1 b=0 c=0", 1), ("b", "a=1 b=1 c=0", 1), ("c", "a=1 b=1 c=1", 0), ("a", "a=2 b=1 c=1", 1),
    ("a", "a=3 b=1 c=1", 2), ("b", "a=3 b=2 c=1", 2), ("a", "a=4 b=2 c=1", 3), ("a", "a=5 b=2 c=1", 4),
    ("b", "a=5 b=3 c=1", 4), ("a", "a=6 b=3 c=1", 5), ("c", "a=6 b=3 c=2", 4), ("a", "a=7 b=3 c=2", 5),
    ("b", "a=7 b=4 c=2", 5), ("a", "a=8 b=4 c=2", 6), ("b", "a=8 b=5 c=2", 6),
]


def test_article_schedule_anyway_drift_summary(capsys):
    code, out, err = run(capsys, "distribution", "-A", "--exit-code", "--from-file", DRIFT)
    # ScheduleAnyway never makes --exit-code fail: DRIFTED is not VIOLATED
    assert (code, err) == (0, "")
    rows = summary_rows(out)
    assert rows["shop deployment/web"] == [
        "15", "0", "zone maxSkew=1 ScheduleAnyway", "us-east-1a=8 us-east-1b=5 us-east-1c=2", "6", "DRIFTED"]
    # the staging copy carries the same app=web label in its own namespace: counted apart
    assert rows["shop-staging replicaset/web-55d4b8"][3:] == ["us-east-1a=0 us-east-1b=0 us-east-1c=3", "3", "DRIFTED"]


def test_article_schedule_anyway_drift_detail_and_timeline(capsys):
    doc = run_json(capsys, "distribution", "deploy/web", "-n", "shop", "--timeline", "--from-file", DRIFT)
    (w,) = doc["workloads"]
    assert (w["kind"], w["namespace"], w["name"], w["pods"]) == ("Deployment", "shop", "web", 15)
    (c,) = w["constraints"]
    assert [(d["value"], d["pods"], d["nodes"], d["headroom"]) for d in c["domains"]] == [
        ("us-east-1a", 8, 3, 0), ("us-east-1b", 5, 3, 0), ("us-east-1c", 2, 3, 1)]
    assert (c["globalMin"], c["skew"], c["status"], c["selector"]) == (2, 6, "DRIFTED", "app=web")
    assert (c["uncountedPods"], c["excludedNodes"]) == ([], [])
    got = timeline(w)
    assert [(z, running, skew) for _, z, running, skew, _ in got] == DRIFT_TIMELINE
    assert [over for *_, over in got] == [skew > 1 for _, _, skew in DRIFT_TIMELINE]
    assert [p for p, *_ in got] == [f"web-7f9c6d-p{i:02d}" for i in range(1, 16)]


SCALEUP_BEFORE = os.path.join(ARTICLE, "do-not-schedule-scaleup-before.json")
SCALEUP_AFTER = os.path.join(ARTICLE, "do-not-schedule-scaleup-after.yaml")
# the four placements made before zone c's node registered, replayed against today's three zones
SCALEUP_FIRST_FOUR = [("a", "a=1 b=0 c=0", 1, False), ("b", "a=1 b=1 c=0", 1, False),
                      ("a", "a=2 b=1 c=0", 2, True), ("b", "a=2 b=2 c=0", 2, True)]


def test_article_do_not_schedule_skew_2_mid_scaleup(capsys):
    # every pod of the dump lives in `payments`: the namespace is taken from the dump
    code, out, err = run(capsys, "distribution", "--exit-code", "--from-file", SCALEUP_BEFORE)
    assert (code, err) == (3, "")
    # two of the six replicas wait for the scheduler: the PENDING column says so
    assert summary_rows(out)["payments deployment/api"] == [
        "6", "2", "zone maxSkew=1 DoNotSchedule", "us-east-1a=2 us-east-1b=2 us-east-1c=0", "2", "VIOLATED"]
    doc = run_json(capsys, "distribution", "deploy/api", "--timeline", "--from-file", SCALEUP_BEFORE)
    (w,) = doc["workloads"]
    (c,) = w["constraints"]
    # only zone c accepts: a and b would reach 3 - 0 > 1
    assert [(d["value"], d["pods"], d["headroom"]) for d in c["domains"]] == [
        ("us-east-1a", 2, 0), ("us-east-1b", 2, 0), ("us-east-1c", 0, 1)]
    assert (c["globalMin"], c["skew"], c["status"]) == (0, 2, "VIOLATED")
    assert [(u["name"], u["reason"]) for u in c["uncountedPods"]] == [
        ("api-6b8d5f-q6k8m", "Unscheduled"), ("api-6b8d5f-z4n7r", "Unscheduled")]
    assert "EnforcedOnlyAtPlacement" in [t["code"] for t in c["traps"]]
    got = timeline(w)
    assert [row[1:] for row in got[:4]] == SCALEUP_FIRST_FOUR
    # the Pending replicas are on no node and change no count
    assert [row[1:] for row in got[4:]] == [(None, "a=2 b=2 c=0", 2, False)] * 2  # pending rows place nothing


def test_article_do_not_schedule_back_to_balance_after_scaleup(capsys):
    code, out, err = run(capsys, "distribution", "deploy/api", "--timeline", "--exit-code",
                         "--from-file", SCALEUP_AFTER)
    assert (code, err) == (0, "")
    timeline_lines = [line for line in out.splitlines() if line[:1].isdigit()]
    assert [line.split()[0] for line in timeline_lines] == ["1", "2", "3", "4", "5", "6"]
    # rows 3 and 4 are the skew-2 moment the article observed; they stand out
    assert ["> maxSkew" in line for line in timeline_lines] == [False, False, True, True, False, False]
    assert "global minimum 2 · skew 0 · maxSkew 1 · OK" in out
    doc = run_json(capsys, "distribution", "deploy/api", "--timeline", "--from-file", SCALEUP_AFTER)
    (w,) = doc["workloads"]
    got = timeline(w)
    assert [row[1:] for row in got] == SCALEUP_FIRST_FOUR + [("c", "a=2 b=2 c=1", 1, False),
                                                             ("c", "a=2 b=2 c=2", 0, False)]


DRAINED = {policy: os.path.join(sd.DATA_DIR, "ops", f"drained-zone-taints-{policy.lower()}.{ext}")
           for policy, ext in (("Ignore", "json"), ("Honor", "yaml"))}
DRAINED_CASES = [
    ("zone-c drained, nodeTaintsPolicy Ignore: empty zone-c pins globalMin 0, only c has headroom", "Ignore",
     [("zone-a", 3, 2, 0), ("zone-b", 3, 2, 0), ("zone-c", 0, 2, 1)], 0, 3, "VIOLATED", {},
     {"CordonedDomain", "EnforcedOnlyAtPlacement"}),
    # worker-c2 is cordoned without the taint in the dump: the scheduler reads spec.taints only, so
    # under Honor it still passes and keeps zone-c a domain (kube-scheduler 1.33 and 1.37 agree:
    # tests/test_conformance.py); only the tainted worker-c1 is left out
    ("zone-c drained, nodeTaintsPolicy Honor: the untainted cordoned node keeps zone-c a domain", "Honor",
     [("zone-a", 3, 2, 0), ("zone-b", 3, 2, 0), ("zone-c", 0, 1, 1)], 0, 3, "VIOLATED",
     {"worker-c1": "UntoleratedTaint"}, {"CordonedDomain", "EnforcedOnlyAtPlacement"}),
]


@pytest.mark.parametrize("policy, domains, gmin, skew, status, excluded, traps",
                         [c[1:] for c in DRAINED_CASES], ids=[c[0] for c in DRAINED_CASES])
def test_drained_zone(capsys, policy, domains, gmin, skew, status, excluded, traps):
    doc = run_json(capsys, "distribution", "deploy/cart", "--from-file", DRAINED[policy])
    (w,) = doc["workloads"]
    (c,) = w["constraints"]
    assert c["nodeTaintsPolicy"] == policy
    assert [(d["value"], d["pods"], d["nodes"], d["headroom"]) for d in c["domains"]] == domains
    assert (c["globalMin"], c["skew"], c["status"]) == (gmin, skew, status)
    assert {e["name"]: e["reason"] for e in c["excludedNodes"]} == excluded
    assert {t["code"] for t in c["traps"]} == traps


# ---- 3. dump shapes ---------------------------------------------------------------------------

def _objects(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)["items"]


def _typed_lists(objs: list[dict]) -> dict[str, dict]:
    """{kind: <Kind>List} with items stripped of kind/apiVersion, as `kubectl get pods -o json` prints."""
    lists: dict[str, dict] = {}
    for o in objs:
        lst = lists.setdefault(o["kind"], {"apiVersion": o["apiVersion"], "kind": o["kind"] + "List",
                                           "metadata": {"resourceVersion": "12345"}, "items": []})
        lst["items"].append({k: v for k, v in o.items() if k not in ("kind", "apiVersion")})
    return lists


def shape_args(shape: str, objs: list[dict], tmp_path, monkeypatch) -> list[str]:
    """Write `objs` in one dump shape under `tmp_path`; return the --from-file arguments that read it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    if shape == "typed lists":
        paths = []
        for kind, lst in _typed_lists(objs).items():
            p = tmp_path / f"{kind.lower()}s.json"
            p.write_text(sd.to_json(lst))
            paths.append(str(p))
        return [a for p in paths for a in ("--from-file", p)]
    if shape == "multi-document yaml":
        p = tmp_path / "cluster.yaml"
        p.write_text("".join("---\n" + sd.to_yaml(o) for o in objs))
        return ["--from-file", str(p)]
    if shape == "directory":
        d = tmp_path / "dump"
        d.mkdir()
        for i, (kind, lst) in enumerate(_typed_lists(objs).items()):
            # alternate JSON and YAML, as people collect them from several commands
            text = sd.to_yaml(lst) if i % 2 else sd.to_json(lst)
            (d / f"{kind.lower()}s.{'yaml' if i % 2 else 'json'}").write_text(text)
        return ["--from-file", str(d)]
    if shape == "bare array":
        p = tmp_path / "items.json"
        p.write_text(json.dumps(objs))
        return ["--from-file", str(p)]
    if shape == "stdin":
        monkeypatch.setattr(sys, "stdin", io.StringIO(sd.to_yaml(as_list(objs))))
        return ["--from-file", "-"]
    raise AssertionError(shape)


SHAPES = ["typed lists", "multi-document yaml", "directory", "bare array", "stdin"]
SHAPE_SCENARIOS = [(upstream_file(n), ["pod/p"]) for n, _ in UPSTREAM_EXPECTED] + [
    (DRIFT, ["deploy/web", "-n", "shop", "--timeline"]),
    (DRIFT, ["-A"]),
    (SCALEUP_BEFORE, ["deploy/api", "--timeline"]),
    (SCALEUP_AFTER, []),
    (DRAINED["Ignore"], ["deploy/cart", "--timeline"]),
    (DRAINED["Honor"], ["-A"]),
]


@pytest.mark.parametrize("path, args", SHAPE_SCENARIOS,
                         ids=[f"{os.path.basename(p)} {' '.join(a)}" for p, a in SHAPE_SCENARIOS])
def test_every_dump_shape_gives_the_same_json(capsys, tmp_path, monkeypatch, path, args):
    want = run_json(capsys, "distribution", *args, "--from-file", path)
    assert want["workloads"], "a scenario that reports nothing proves nothing"
    objs = _objects(path)
    for shape in SHAPES:
        got = run_json(capsys, "distribution", *args, *shape_args(shape, objs, tmp_path / shape.replace(" ", "-"),
                                                                   monkeypatch))
        assert got == want, shape


def test_dumps_on_disk_match_the_generator():
    for rel, text in sd.files().items():
        with open(os.path.join(sd.DATA_DIR, rel), encoding="utf-8") as fh:
            assert fh.read() == text, f"{rel} is stale: run python tests/scenario_dumps.py"
