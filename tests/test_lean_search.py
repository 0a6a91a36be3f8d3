"""kubectl_tspread/drain/lean.py through bench/lean_search.py: the zone plan, and its re-plan that
deletes the drained nodes, decided on flat arrays alone come out step for step as the planner's,
with the same strandings and verdict, and a difference is reported."""

import dataclasses
import json
import os

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("numpy")

from bench import lean_probe, lean_search  # noqa: E402
from conftest import make_constraint, make_snapshot  # noqa: E402
from drain_builders import nodes_in, web  # noqa: E402
from kubectl_tspread.drain import lean as lean_module  # noqa: E402
from kubectl_tspread.drain import plan as plan_module  # noqa: E402
from kubectl_tspread.drain.model import DRAIN_KINDS, PlanOptions  # noqa: E402
from kubectl_tspread.drain.plan import plan_drain  # noqa: E402
from kubectl_tspread.drain.pods import DrainFlags  # noqa: E402
from kubectl_tspread.labels import Selector  # noqa: E402
from kubectl_tspread.model import HOSTNAME_KEY, ZONE_KEY, HostPort, PodAffinityTerm  # noqa: E402
from kubectl_tspread.options import SourceOptions  # noqa: E402
from kubectl_tspread.snapshot import load_snapshot  # noqa: E402
from test_acceptance_drain import clusters as random_clusters  # noqa: E402


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("bench"))
    return {size: lean_probe.load(size, cache) for size in ("tiny", "small")}


def _planned(snapshot, deleting: bool):
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    options = lean_probe.plan_options(snapshot, targets, deleting)
    return options, targets, plan_drain(snapshot, targets, options)


@pytest.mark.parametrize("size", ["tiny", "small"])
@pytest.mark.parametrize("deleting", [False, True], ids=["plan", "deleting-replan"])
def test_the_search_on_flat_arrays_makes_the_planners_plan(clusters, size, deleting):
    snapshot = clusters[size]
    options, targets, plan = _planned(snapshot, deleting)
    lean = lean_search.lean_for(snapshot, targets, options)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    assert not found and not plan.safe  # a zone under nodeTaintsPolicy Ignore strands replacements
    assert len(lean.steps) == len(plan.steps) > len(targets)  # PDB budgets split batches into steps
    assert lean.explored == plan.explored > len(targets)  # candidates rolled back
    assert any(s.deleted_nodes for s in lean.steps) == deleting
    placed_nowhere = sum(node is None for s in lean.steps for _, node in s.evicted)
    assert placed_nowhere == sum(1 for s in lean.stranded if s[2] != "PdbBlocks") > 0
    assert lean.forced == (not deleting)  # forced.py proves the trap, except with the nodes deleted
    safe, findings = lean.verdict(found)
    assert (safe, findings) == lean_search.planner_verdict(plan)
    assert {"CordonedDomainTrap", "SpreadBlocked", "PdbBlocks"} <= {code for code, _ in findings}


def test_a_step_unlike_the_planners_is_reported(clusters):
    snapshot = clusters["tiny"]
    options, targets, plan = _planned(snapshot, False)
    lean = lean_search.lean_for(snapshot, targets, options)
    lean.run()
    step = lean.steps[3]
    key, node = next((key, node) for key, node in step.evicted if node is not None)
    other = next(n for n in lean.flat.order if n != node)
    moved = tuple((k, other if k == key else n) for k, n in step.evicted)
    lean.steps[3] = dataclasses.replace(step, evicted=moved)
    assert lean_search.compare(lean, plan) == [
        f"step 4: evictions #{[k for k, _ in step.evicted].index(key) + 1} of {len(moved)}: "
        f"({key!r}, {other!r}) here, the planner's ({key!r}, {node!r})"]
    lean.steps.pop()
    assert lean_search.compare(lean, plan)[0] == f"{len(plan.steps) - 1} steps here, the planner's {len(plan.steps)}"


def test_the_greedy_fallback_keeps_the_least_bad_candidate(clusters, monkeypatch):
    """Where the planner's fallback kept a later candidate than the first, the lean search
    does too: taking the first each time comes out otherwise."""
    snapshot = clusters["small"]
    options, targets, plan = _planned(snapshot, False)
    monkeypatch.setattr(lean_module, "GREEDY_CANDIDATES", 1)
    lean = lean_search.lean_for(snapshot, targets, options)
    lean.run()
    assert lean_search.compare(lean, plan)


def test_a_candidate_rolled_back_leaves_the_search_where_it_was(clusters):
    snapshot = clusters["tiny"]
    options, targets, _ = _planned(snapshot, True)
    lean = lean_search.lean_for(snapshot, targets, options)
    flat = lean.flat

    def state():
        return (sorted(lean.done), {n: [p.key for p in ps] for n, ps in lean.remaining.items()}, lean.budgets,
                flat.sim.seq, [list(a) for a in flat.free.values()], flat.cordoned.tolist(), flat.size,
                lean.total_excess, [c.per_domain.tolist() for c in flat.constraints], len(lean.steps),
                {i: [p.key for p in ps] for i, ps in flat.replacements_on.items() if ps})

    first = next(lean.batches(lean._todo()))
    lean.run_batch(first)  # kept
    before = state()
    saved = lean.mark()
    for batch in list(lean.batches(lean._todo()))[:4]:  # replacements adopted, nodes deleted, strandings
        lean.run_batch(batch)
    assert state() != before
    lean.rollback(saved)
    assert state() == before


def test_main_reports_agreement(tmp_path, capsys):
    assert lean_search.main(["--size", "tiny", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "steps that differ: none" in out and "lean search:" in out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=random_clusters(), deleting=st.booleans())
def test_random_clusters_the_lean_search_makes_the_remedy_replans_plan_and_verdict(tmp_path, case, deleting):
    """The acceptance suite's random small clusters (zone or hostname constraints, minDomains,
    matchLabelKeys mid-rollout, cordoned nodes, PDBs, --max-parallel 1-2): the search a remedy's
    re-plan makes (search_budget 0), with or without the drained nodes deleted, comes out step for
    step as the planner's, with the same stranded pods, reasons and verdict. nodeTaintsPolicy
    Honor is outside the lean search (it refuses it)."""
    doc, targets, parallel = case
    assume('"Honor"' not in json.dumps(doc))
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    snapshot = load_snapshot(SourceOptions(from_file=(str(path),), all_namespaces=True), DRAIN_KINDS)
    options = PlanOptions(DrainFlags(True, False, True), max_parallel=parallel, search_budget=0,
                          verify_remedies=False, delete_drained_nodes=deleting)
    plan = plan_drain(snapshot, targets, options)
    lean = lean_search.lean_for(snapshot, targets, options)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    verdict = lean.verdict(found)
    assert verdict == lean_search.planner_verdict(plan)
    for code in sorted({code for code, _ in verdict[1]}) or ["safe" if verdict[0] else "no finding"]:
        event(code)  # pytest --hypothesis-show-statistics: which findings the cases reached


def _with_remedies(snapshot, targets, parallel=1):
    return plan_drain(snapshot, targets, PlanOptions(DrainFlags(True, False, True), max_parallel=parallel))


@pytest.mark.parametrize("fork", ["0", "1"], ids=["forked", "in-process"])
def test_the_remedy_replan_that_deletes_nodes_is_answered_by_the_lean_search(clusters, monkeypatch, fork):
    """plan_drain's remedies: the re-plan that deletes the drained nodes is the lean search's
    (counted), and the plan with its findings and verified remedies is the one the planner's own
    re-plans give."""
    monkeypatch.setenv("TSPREAD_NO_FORK", fork)
    snapshot = clusters["small"]
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    calls = []
    answer = lean_module.deleting_replan_verdict

    def counted(*args, **kw):
        calls.append(os.getpid())
        return answer(*args, **kw)

    monkeypatch.setattr(lean_module, "deleting_replan_verdict", counted)
    with_lean = _with_remedies(snapshot, targets)
    if fork == "1":
        assert calls == [os.getpid()]  # in this process: the re-plan's verdict was the lean search's
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", False)
    without = _with_remedies(snapshot, targets)
    assert with_lean == without
    deleting = [r for f in with_lean.findings for r in f.remedies if r.action == "DeleteDrainedNodes"]
    assert deleting and all(r.verified for r in deleting)


UNCOVERED = {
    "affinity": dict(pod_anti_affinity=(PodAffinityTerm(Selector.from_api({"matchLabels": {"app": "other"}}),
                                                        HOSTNAME_KEY),)),
    "host ports": dict(host_ports=(HostPort(8080),)),
    "resource": dict(requests={"example.com/dongle": 1}),
    "Honor": dict(spread=(make_constraint(ZONE_KEY, 1),
                          make_constraint(HOSTNAME_KEY, 5, node_taints_policy="Honor"))),
}


@pytest.mark.parametrize("what", list(UNCOVERED))
def test_a_cluster_the_lean_search_does_not_cover_is_replanned_by_the_planner(monkeypatch, what):
    """Pod anti-affinity, host ports, a resource its arrays do not track, nodeTaintsPolicy
    Honor: the lean search says so, and the planner re-plans (zone a drained under Ignore is a
    trap whatever else the pods have, and deleting its nodes is verified to clear it)."""
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    nodes = nodes_in({"a": 2, "b": 2, "c": 2})
    for n in nodes:
        n.allocatable["example.com/dongle"] = 4
    kw = dict(UNCOVERED[what])
    spread = kw.pop("spread", (make_constraint(ZONE_KEY, 1),))
    snapshot = make_snapshot(nodes, web({"a1": 1, "a2": 1, "b1": 1, "c1": 1}, spread, **kw))
    with pytest.raises(lean_module.Unsupported):
        lean_module.deleting_replan_verdict(snapshot, ["a1", "a2"], PlanOptions(delete_drained_nodes=True,
                                                                               search_budget=0))
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", False)
    without = _with_remedies(snapshot, ["a1", "a2"])
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", True)
    assert _with_remedies(snapshot, ["a1", "a2"]) == without
    assert not without.safe and any(r.action == "DeleteDrainedNodes" and r.verified and r.makes_safe
                                    for f in without.findings for r in f.remedies)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=random_clusters())
def test_random_clusters_plans_with_remedies_are_the_same_with_the_lean_replans(tmp_path, monkeypatch, case):
    """The acceptance suite's random clusters planned with remedies verified: the same plan,
    findings and remedies whether the lean search or the planner answers the re-plan that
    deletes the drained nodes."""
    doc, targets, parallel = case
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    snapshot = load_snapshot(SourceOptions(from_file=(str(path),), all_namespaces=True), DRAIN_KINDS)
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", True)
    with_lean = _with_remedies(snapshot, targets, parallel)
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", False)
    assert _with_remedies(snapshot, targets, parallel) == with_lean
    event("unsafe" if not with_lean.safe else "safe")


@pytest.mark.parametrize("fault", ["no numpy", "a fault of its own"])
def test_the_planner_replans_when_the_lean_search_cannot(monkeypatch, fault):
    """Without numpy, or should the lean search fail, the planner re-plans and the plan is the same."""
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    snapshot = make_snapshot(nodes_in({"a": 2, "b": 2, "c": 2}),
                             web({"a1": 1, "a2": 1, "b1": 1, "c1": 1}, (make_constraint(ZONE_KEY, 1),)))
    targets = ["a1", "a2"]
    calls = []
    answer = lean_module.deleting_replan_verdict

    def counted(*args, **kw):
        calls.append(1)
        return answer(*args, **kw)

    monkeypatch.setattr(lean_module, "deleting_replan_verdict", counted)
    expected = _with_remedies(snapshot, targets)
    assert calls == [1]
    if fault == "no numpy":
        monkeypatch.setattr(lean_module, "np", None)
        with pytest.raises(lean_module.Unsupported, match="numpy"):
            answer(snapshot, targets, PlanOptions(delete_drained_nodes=True, search_budget=0))
    else:
        def broken(self):
            raise IndexError("a fault")

        monkeypatch.setattr(lean_module.LeanSearch, "run", broken)
    assert _with_remedies(snapshot, targets) == expected
    assert calls == [1, 1]  # asked, and the planner answered
    assert any(r.action == "DeleteDrainedNodes" and r.verified for f in expected.findings for r in f.remedies)
