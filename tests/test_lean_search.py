"""kubectl_tspread/views/drain/core/lean.py through bench/lean_search.py: the zone plan, and its remedy
re-plans, decided on flat arrays alone come out step for step as the planner's, with the same
strandings and verdict, and a difference is reported; plan_drain's remedy re-plans answered by
the lean search give the plans the planner's own re-plans give."""

import dataclasses
import json
import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bench import lean_probe, lean_search  # noqa: E402
from conftest import make_constraint, make_node, make_pod, make_snapshot  # noqa: E402
from drain_builders import nodes_in, web  # noqa: E402
from kubectl_tspread.views.drain.core import lean as lean_module  # noqa: E402
from kubectl_tspread.views.drain import plan as plan_module  # noqa: E402
from kubectl_tspread.model.plan import DRAIN_KINDS, PlanOptions  # noqa: E402
from kubectl_tspread.views.drain.plan import plan_drain  # noqa: E402
from kubectl_tspread.views.drain.pods import DrainFlags  # noqa: E402
from kubectl_tspread.model.labels import Selector  # noqa: E402
from kubectl_tspread.model import HOSTNAME_KEY, ZONE_KEY, HostPort, PodAffinityTerm, Toleration  # noqa: E402
from kubectl_tspread.cli.options import SourceOptions  # noqa: E402
from kubectl_tspread.snapshot import load_snapshot  # noqa: E402
from test_acceptance_drain import clusters as random_clusters  # noqa: E402


@pytest.fixture(autouse=True)
def planner_plans(monkeypatch):
    """plan_drain's plans are the planner's alone here (what the lean search is compared with);
    the tests of plan.py's use of the lean search for a proven trap's plan turn it on."""
    monkeypatch.setattr(plan_module, "LEAN_PLANS", False)


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("bench"))
    return {size: lean_probe.load(size, cache) for size in ("tiny", "small")}


TOLERATES_CORDON = (Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),)


def _node(name: str, pods: int = 1, cordoned: bool = False, cpu: int = 1000):
    """A node of zone name[0] with room for `pods` pods, cordoned (its taint too) or not."""
    taints = ("node.kubernetes.io/unschedulable:NoSchedule",) if cordoned else ()
    return make_node(name, zone=name[0], allocatable={"cpu": cpu, "memory": 1 << 34, "pods": pods},
                     unschedulable=cordoned, taints=taints)


def _planned(snapshot, deleting: bool, honor: bool = False):
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    options = lean_probe.plan_options(snapshot, targets, deleting)
    if honor:
        snapshot, options = lean_search.honor_replan(snapshot, targets, options)
    return options, targets, plan_drain(snapshot, targets, options), snapshot


@pytest.mark.parametrize("size", ["tiny", "small"])
@pytest.mark.parametrize("deleting,honor", [(False, False), (True, False), (False, True)],
                         ids=["plan", "deleting-replan", "honor-replan"])
def test_the_search_on_flat_arrays_makes_the_planners_plan(clusters, size, deleting, honor):
    options, targets, plan, snapshot = _planned(clusters[size], deleting, honor)
    assert honor == any(c.node_taints_policy == "Honor" for p in snapshot.pods for c in p.spread)
    lean = lean_search.lean_for(snapshot, targets, options)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    assert not found and not plan.safe  # a zone under nodeTaintsPolicy Ignore strands replacements
    # a step per target: with every target cordoned at step 1 no replacement lands on a later
    # target to be evicted again, and the PDB budgets that then split batches into steps hold
    assert len(lean.steps) == len(plan.steps) == len(targets)
    assert plan.evicted_again == 0
    assert lean.explored == plan.explored > len(targets)  # candidates rolled back
    assert any(s.deleted_nodes for s in lean.steps) == deleting
    placed_nowhere = sum(node is None for s in lean.steps for _, node in s.evicted)
    assert placed_nowhere == sum(1 for s in lean.stranded if s[2] != "PdbBlocks") > 0
    assert lean.forced == (not deleting)  # forced.py proves the trap, except with the nodes deleted
    safe, findings = lean.verdict(found)
    assert (safe, findings) == lean_search.planner_verdict(plan)
    # cordon-first: zone b is closed from step 1, so its spread refusals are the trap's (before,
    # some came while b still had open nodes, as SpreadBlocked)
    assert {"CordonedDomainTrap", "PdbBlocks"} <= {code for code, _ in findings}


def test_a_step_unlike_the_planners_is_reported(clusters):
    snapshot = clusters["tiny"]
    options, targets, plan, _ = _planned(snapshot, False)
    lean = lean_search.lean_for(snapshot, targets, options)
    lean.run()
    # the first step with a placed replacement (with the cordons first the trap strands most)
    k = next(i for i, s in enumerate(lean.steps) if any(node is not None for _, node in s.evicted))
    step = lean.steps[k]
    key, node = next((key, node) for key, node in step.evicted if node is not None)
    other = next(n for n in lean.flat.order if n != node)
    moved = tuple((k, other if k == key else n) for k, n in step.evicted)
    lean.steps[k] = dataclasses.replace(step, evicted=moved)
    assert lean_search.compare(lean, plan) == [
        f"step {k + 1}: evictions #{[k for k, _ in step.evicted].index(key) + 1} of {len(moved)}: "
        f"({key!r}, {other!r}) here, the planner's ({key!r}, {node!r})"]
    lean.steps.pop()
    assert lean_search.compare(lean, plan)[0] == f"{len(plan.steps) - 1} steps here, the planner's {len(plan.steps)}"


def test_what_a_step_reports_is_the_planners_and_a_difference_is_reported(clusters):
    """With `report`, each step keeps the planner's eviction records (accepting domains in order),
    judgement of every tracked constraint (its distribution's domains and counts in order), PDB
    uses and skipped pods."""
    snapshot = clusters["small"]
    options, targets, plan, _ = _planned(snapshot, False)
    lean = lean_search.lean_for(snapshot, targets, options, report=True)
    lean.run()
    assert lean_search.compare(lean, plan) == []
    assert any(s.pdbs for s in lean.steps) and any(s.skipped for s in lean.steps)
    hostname = next(c for c in lean.steps[0].constraints_after if c.topology_key == HOSTNAME_KEY)
    assert len(hostname.distribution) > 100 and hostname.distribution.extremes()[1] >= 1
    k, step = next((k, s) for k, s in enumerate(lean.steps) if s.pdbs and len(s.constraints_after) > 1)
    after = list(step.constraints_after)
    c = after[0]
    counts = dict(c.distribution)
    first = next(iter(counts))
    counts[first] += 1
    after[0] = dataclasses.replace(c, distribution=counts)
    e = next(e for e in step.evictions if e.predicted_node and e.accepting_domains)
    key = next(iter(e.accepting_domains))
    fewer = dataclasses.replace(e, accepting_domains={key: tuple(e.accepting_domains[key])[1:]})
    lean.steps[k] = dataclasses.replace(step, constraints_after=tuple(after),
                                        evictions=tuple(fewer if x is e else x for x in step.evictions),
                                        pdbs=(dataclasses.replace(step.pdbs[0], evictions=99),) + step.pdbs[1:])
    at = step.evictions.index(e) + 1
    assert lean_search.compare(lean, plan) == [
        f"step {step.number}: constraint 1 #6 of 11: {tuple(counts.items())!r} here, the planner's "
        f"{tuple(c.distribution.items())!r}",
        f"step {step.number}: eviction records #{at} of {len(step.evictions)}: {lean_search._eviction(fewer)!r} "
        f"here, the planner's {lean_search._eviction(e)!r}",
        f"step {step.number}: PDB uses #1 of {len(step.pdbs)}: {lean.steps[k].pdbs[0]!r} here, the planner's "
        f"{step.pdbs[0]!r}"]


@pytest.mark.parametrize("staged", [True, False], ids=["staged cordons", "cordons first"])
def test_a_candidate_rolled_back_leaves_no_gone_domain_in_the_report(staged):
    """One node a zone, a1 and c1 full, web under Honor: the search first plays b1 (web's
    replacement strands), rolls it back with zone b gone from web's domains, and keeps a1, whose
    step reports zone a gone and b holding web, not the candidate's domains (cordons staged).
    With the cordons first, step 1 cordons a1 and b1 whatever the batch: both zones are gone
    from web's domains at once, and the step says so."""
    nodes = [_node(name) for name in ("a1", "b1", "c1")]
    snapshot = make_snapshot(nodes, web({"b1": 1}, (make_constraint(ZONE_KEY, 1, node_taints_policy="Honor"),))
                             + [make_pod("other", node="a1"), make_pod("more", node="c1")])
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False, stage_cordons=staged)
    plan = plan_drain(snapshot, ["a1", "b1"], options)
    lean = lean_search.lean_for(snapshot, ["a1", "b1"], options, report=True)
    lean.run()
    assert lean_search.compare(lean, plan) == []
    assert lean.explored > len(lean.steps)  # a candidate rolled back
    assert lean.steps[0].nodes == ("a1",)
    assert dict(lean.steps[0].constraints_after[0].distribution) == ({"b": 1, "c": 0} if staged else {"c": 0})


def _racks():
    """140 nodes of room for one pod in 70 racks (rK: aK of zone a and bK of b), web on each a
    node with a rack constraint under Honor, other pods on b3 to b70; a1 to a8 drained."""
    rack = "example.com/rack"
    nodes = [make_node(f"{z}{i}", zone=z, labels={rack: f"r{i}"},
                       allocatable={"cpu": 4000, "memory": 1 << 34, "pods": 1})
             for z in "ab" for i in range(1, 71)]
    full = [make_pod(f"other-{i}", node=f"b{i}") for i in range(3, 71)]
    snapshot = make_snapshot(nodes, web({f"a{i}": 1 for i in range(1, 71)},
                                        (make_constraint(rack, 1, node_taints_policy="Honor"),)) + full)
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False)
    return snapshot, [f"a{i}" for i in range(1, 9)], options


@pytest.mark.parametrize("staged", [True, False], ids=["staged cordons", "cordons first"])
def test_counts_of_many_domains_kept_as_changes_are_the_planners_under_honor(staged):
    """140 nodes of one pod each in 70 racks (a node of zone a and one of b each), web on zone
    a's with a rack constraint under Honor, room on b1 and b2 alone: each cordon takes its
    node's pod out of its rack's count (the rack keeps its b node), each replacement moves a
    count, and from the third step on the candidates strand and are rolled back. The report
    keeps the rack counts as changes to a shared copy (LeanCounts), told by the domains each
    move, cordon and rollback touched; every step's distribution is the planner's. (Staged
    cordons; with the cordons first step 1 takes all eight pods out of their racks' counts.)"""
    snapshot, targets, options = _racks()
    options = dataclasses.replace(options, stage_cordons=staged)
    plan = plan_drain(snapshot, targets, options)
    lean = lean_search.lean_for(snapshot, targets, options, report=True)
    lean.run()
    assert lean_search.compare(lean, plan) == []
    assert lean.explored > len(lean.steps)  # candidates rolled back
    counts = [c.distribution for s in lean.steps for c in s.constraints_after]
    assert len(counts) == len(lean.steps) and all(len(d) == 70 for d in counts)
    if staged:
        # a1's pod went to b1, in its own rack; a3's left its rack at its cordon and stranded
        assert [d["r1"] for d in counts[:3]] == [1, 1, 1] and [d["r3"] for d in counts[1:3]] == [1, 0]
    else:  # every a node's pod left its rack at step 1; a1's replacement is back in r1 (on b1)
        assert counts[0]["r1"] == 1 and [counts[0][f"r{i}"] for i in range(2, 9)] == [0] * 7
    if not staged:
        return
    assert any(len(d._at) for d in counts)  # changes to a copy, not a copy each step
    # and a new copy once they pass 1/32 of the domains (3 of 70 at step 5)
    assert 1 < len({id(d._base) for d in counts}) < len(counts)


def test_a_rollback_starts_the_copies_of_the_counts_again():
    """A web pod bound on b3 makes rack r3 hold 2, and a candidate's cordon of b3 under Honor
    takes it back to 1, the count of the copy the report keeps: that judgement keeps no change
    for r3. The rollback puts the 2 back, and the next judgement reads it (not the copy's 1)."""
    snapshot, targets, options = _racks()
    lean = lean_search.lean_for(snapshot, targets, options, report=True)
    flat = lean.flat
    pod = next(p for p in flat.pods.values() if p.name == "web-1")
    j = flat.position["b3"]
    assert lean._constraints_after()[0].distribution["r3"] == 1  # the copy: a3's pod
    flat.move(pod, j, +1)
    assert lean._constraints_after()[0].distribution["r3"] == 2
    saved = lean.mark()
    flat.cordon("b3")
    counts = lean._constraints_after()[0].distribution
    assert counts["r3"] == 1 and len(counts._at) == 0
    lean.rollback(saved)
    assert lean._constraints_after()[0].distribution["r3"] == 2


def test_a_plan_made_on_the_arrays_is_the_planners_document():
    """LeanSearch.drain_plan makes the planner's DrainPlan: web's two Pending pods are settled
    first (web-p1 on d1, the only node with room; web-p2 on none), and a1's replacements fit
    no node. Their NoCapacity details count each node's first failure in the scheduler's order:
    a1 and a2 cordoned, b1 tainted, b2 full, b3 and d1 short of cpu (d1 since web-p1), c1
    without the label web's nodeSelector asks for."""
    ssd = {"disk": "ssd"}
    nodes = [make_node("a1", zone="a", labels=ssd, allocatable={"cpu": 2000, "memory": 1 << 34, "pods": 110}),
             make_node("a2", zone="a", labels=ssd, unschedulable=True),
             make_node("b1", zone="b", labels=ssd, taints=("dedicated=x:NoSchedule",)),
             make_node("b2", zone="b", labels=ssd, allocatable={"cpu": 4000, "memory": 1 << 34, "pods": 1}),
             make_node("b3", zone="b", labels=ssd, allocatable={"cpu": 500, "memory": 1 << 34, "pods": 110}),
             make_node("c1", zone="c"),
             make_node("d1", zone="d", labels=ssd, allocatable={"cpu": 1000, "memory": 1 << 34, "pods": 110})]
    cpu = {"cpu": 1000}
    pods = web({"a1": 2}, (), requests=cpu, node_selector=ssd) + [
        make_pod(f"web-p{k}", labels={"app": "web"}, owner="ReplicaSet/web-1", requests=cpu, node_selector=ssd)
        for k in (1, 2)] + [make_pod("other", node="b2")]
    snapshot = make_snapshot(nodes, pods)
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False)
    plan = plan_drain(snapshot, ["a1"], options)
    lean = lean_search.lean_for(snapshot, ["a1"], options, report=True)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    assert lean_search.compare_plan(lean, found, plan) == []
    mine, _ = lean.drain_plan(found)
    assert [(e.name, e.predicted_node) for e in mine.settled] == [("web-p1", "d1"), ("web-p2", None)]
    assert [(s.name, s.reason) for s in mine.stranded] == [("web-1", "NoCapacity"), ("web-2", "NoCapacity")]
    assert mine.stranded[0].details == {"reasons": {
        "Insufficient cpu": 2, "Too many pods": 1, "node(s) didn't match Pod's node affinity/selector": 1,
        "node(s) had untolerated taint(s)": 1, "node(s) were unschedulable": 2}, "node": "a1"}
    # a difference is reported: the details, a settled pod, the findings made of them
    tampered = dataclasses.replace(lean.strandings[1], details={**lean.strandings[1].details, "node": "a2"})
    lean.strandings[1] = tampered
    lean.settled[0] = dataclasses.replace(lean.settled[0], predicted_node="b1")
    assert [line.split(":")[0] for line in lean_search.compare_plan(lean, found, plan)] == [
        "stranded #2 of 2", "settled #1 of 2"]


def test_no_report_of_a_plan_that_deletes_the_drained_nodes():
    """Each deletion takes a domain from every hostname constraint, and the report copies the
    counts of each constraint a step changed: the lean search refuses it (only remedy re-plans
    delete the drained nodes, and they want a verdict)."""
    snapshot = make_snapshot(nodes_in({"a": 1, "b": 1}), web({"a1": 1}, (make_constraint(ZONE_KEY, 1),)))
    with pytest.raises(lean_module.Unsupported, match="deletes"):
        lean_module.LeanSearch(snapshot, ["a1"], PlanOptions(search_budget=0, delete_drained_nodes=True), report=True)


def test_the_greedy_fallback_keeps_the_least_bad_candidate(clusters, monkeypatch):
    """Where the planner's fallback kept a later candidate than the first, the lean search
    does too: taking the first each time comes out otherwise."""
    snapshot = clusters["small"]
    options, targets, plan, _ = _planned(snapshot, False)
    monkeypatch.setattr(lean_module, "GREEDY_CANDIDATES", 1)
    lean = lean_search.lean_for(snapshot, targets, options)
    lean.run()
    assert lean_search.compare(lean, plan)


def test_a_candidate_rolled_back_leaves_the_search_where_it_was(clusters):
    snapshot = clusters["tiny"]
    options, targets, _, _ = _planned(snapshot, True)
    lean = lean_search.lean_for(snapshot, targets, options)
    flat = lean.flat

    def state():
        return (sorted(lean.done), {n: [p.key for p in ps] for n, ps in lean.remaining.items()}, lean.budgets.copy(),
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


CORDON_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


@st.composite
def tolerating_clusters(draw):
    """The acceptance suite's random clusters, the pods of some workloads (and so their
    replacements) tolerating the cordon: NodeUnschedulable lets them on cordoned nodes, the
    nodes being drained included, and under nodeTaintsPolicy Honor a cordon keeps the node in
    their domains."""
    doc, targets, parallel = draw(random_clusters())
    apps = sorted({item["metadata"]["labels"]["app"] for item in doc["items"]
                   if item["kind"] == "Pod" and "app" in item["metadata"].get("labels", {})})
    tolerant = draw(st.sets(st.sampled_from(apps))) if apps and draw(st.booleans()) else set()
    for item in doc["items"]:
        if item["kind"] == "Pod" and item["metadata"].get("labels", {}).get("app") in tolerant:
            item["spec"]["tolerations"] = item["spec"].get("tolerations", []) + [CORDON_TOLERATION]
    if tolerant:
        event("pods tolerating the cordon")
    return doc, targets, parallel


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=tolerating_clusters(), deleting=st.booleans())
def test_random_clusters_the_lean_search_makes_the_remedy_replans_plan_and_verdict(tmp_path, case, deleting):
    """The acceptance suite's random small clusters (zone or hostname constraints, Ignore or
    Honor, minDomains, matchLabelKeys mid-rollout, cordoned nodes, PDBs, --max-parallel 1-2),
    some workloads tolerating the cordon: the search a remedy's re-plan makes (search_budget 0),
    with or without the drained nodes deleted, comes out step for step as the planner's, with
    the same stranded pods, reasons and verdict; keeping the drained nodes, the DrainPlan its
    report makes is the planner's (stranded pods' details, settled pods, findings)."""
    doc, targets, parallel = case
    if '"Honor"' in json.dumps(doc):
        event("nodeTaintsPolicy Honor")
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    snapshot = load_snapshot(SourceOptions(from_file=(str(path),), all_namespaces=True), DRAIN_KINDS)
    options = PlanOptions(DrainFlags(True, False, True), max_parallel=parallel, search_budget=0,
                          verify_remedies=False, delete_drained_nodes=deleting)
    plan = plan_drain(snapshot, targets, options)
    lean = lean_search.lean_for(snapshot, targets, options, report=not deleting)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    if not deleting:  # the rest of the DrainPlan, as its JSON document has it
        assert lean_search.compare_plan(lean, found, plan) == []
        if any(s.details.get("budgetLost") for s in plan.stranded):
            event("PDB budget lost to stranded replacements")
        if plan.settled:
            event("pending pods settled first")
    verdict = lean.verdict(found)
    assert verdict == lean_search.planner_verdict(plan)
    for code in sorted({code for code, _ in verdict[1]}) or ["safe" if verdict[0] else "no finding"]:
        event(code)  # pytest --hypothesis-show-statistics: which findings the cases reached


def _with_remedies(snapshot, targets, parallel=1):
    return plan_drain(snapshot, targets, PlanOptions(DrainFlags(True, False, True), max_parallel=parallel))


@pytest.mark.parametrize("fork", ["0", "1"], ids=["forked", "in-process"])
def test_the_remedy_replans_are_answered_by_the_lean_search(clusters, monkeypatch, fork, request):
    """plan_drain's remedies: the plan (a proven trap) and the re-plans are the lean search's
    (counted: in process, the one that deletes the drained nodes and the one under
    nodeTaintsPolicy Honor, which forking carries along the lean plan instead), and the plan
    with its findings and verified remedies is the one the planner alone gives."""
    monkeypatch.setenv("TSPREAD_NO_FORK", fork)
    monkeypatch.setattr(plan_module, "LEAN_PLANS", True)
    snapshot = clusters["small"]
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    calls = []
    answer = lean_module.replan_verdict

    def counted(snap, targets, opts, sim=None):
        honor = any(c.node_taints_policy == "Honor" for p in snap.pods for c in p.spread)
        calls.append((os.getpid(), opts.delete_drained_nodes, honor))
        return answer(snap, targets, opts, sim)

    monkeypatch.setattr(lean_module, "replan_verdict", counted)
    made, real = [], plan_module._lean_plan
    monkeypatch.setattr(plan_module, "_lean_plan", lambda *args: made.append(real(*args)) or made[-1])
    if fork == "0":  # forked even on a runner of one CPU
        request.getfixturevalue("counting")
        results = request.getfixturevalue("results")
    with_lean = _with_remedies(snapshot, targets)
    assert [type(m) for m in made] == [tuple]  # the plan was the lean search's
    if fork == "0":  # cordon-first: the SetNodeTaintsPolicyHonor re-plan is not carried (views/drain/core/shared.py), re-planned instead
        assert [v.carried for _, v in results if v is not None and v.carried is not None] == []
    if fork == "1":  # in this process: each re-plan's verdict was the lean search's
        assert calls == [(os.getpid(), True, False), (os.getpid(), False, True)]
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", False)
    monkeypatch.setattr(plan_module, "LEAN_PLANS", False)
    without = _with_remedies(snapshot, targets)
    assert with_lean == without
    remedies = {r.action: r.verified for f in with_lean.findings for r in f.remedies}
    # cordon-first: deleting the drained nodes node by node no longer clears the zone trap (the
    # zone's other nodes, cordoned and still holding pods, keep it a closed domain)
    assert remedies.get("SetNodeTaintsPolicyHonor") and "DeleteDrainedNodes" not in remedies


@pytest.mark.parametrize("policy", ["Ignore", "Honor"])
@pytest.mark.parametrize("deleting", [False, True], ids=["plan", "deleting-replan"])
def test_replacements_that_tolerate_the_cordon_are_placed_as_the_planner_places_them(policy, deleting):
    """A workload that tolerates the cordon: NodeUnschedulable lets its replacements on the
    cordoned nodes, the one being drained included, where the evicted pods hold their room
    until the step ends (the planner puts web-4's replacement back on b1, the node it drains);
    under Honor a cordon keeps the node in the workload's domains."""
    nodes = nodes_in({"a": 2, "b": 2, "c": 2}, pods_cap=3)
    pods = web({"a1": 2, "a2": 1, "b1": 1, "c1": 1, "b2": 1},
               (make_constraint(ZONE_KEY, 1, node_taints_policy=policy),), tolerations=TOLERATES_CORDON)
    snapshot, targets = make_snapshot(nodes, pods), ["a1", "b1"]
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False,
                          delete_drained_nodes=deleting)
    plan = plan_drain(snapshot, targets, options)
    lean = lean_search.lean_for(snapshot, targets, options)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    assert lean.verdict(found) == lean_search.planner_verdict(plan) == (True, set())
    assert [node for s in lean.steps for _, node in s.evicted] == ["c2", "a2", "b2" if deleting else "b1"]


@pytest.mark.parametrize("policy,reason", [("Ignore", "CordonedDomainTrap"), ("Honor", "SpreadBlocked")])
@pytest.mark.parametrize("deleting", [False, True], ids=["plan", "deleting-replan"])
def test_a_replacement_that_tolerates_the_cordon_strands_where_spread_refuses_the_cordoned_node(
        deleting, policy, reason):
    """Only a2, cordoned before the drain, has room for web-1's replacement, which tolerates the
    cordon: spread refuses it there (zone a would hold 2 against 0 in b and c), so it strands
    for spread, not for capacity. Zone c's one node is cordoned too and c holds the global
    minimum: a CordonedDomainTrap under Ignore; under Honor c's node stays in the workload's
    domains (it tolerates the cordon), yet no domain is closed there: SpreadBlocked."""
    nodes = [_node("a1", cpu=4000), _node("a2", 2, True, cpu=4000), _node("b1", cpu=4000),
             _node("c1", 1, True, cpu=4000)]
    snapshot = make_snapshot(nodes, web({"a1": 1, "a2": 1}, (make_constraint(ZONE_KEY, 1, node_taints_policy=policy),),
                                        tolerations=TOLERATES_CORDON)
                             + [make_pod("other", node="b1"), make_pod("more", node="c1")])
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False,
                          delete_drained_nodes=deleting)
    plan = plan_drain(snapshot, ["a1"], options)
    lean = lean_search.lean_for(snapshot, ["a1"], options)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    assert lean.stranded == [("default/web-1", 1, reason)]
    assert lean.verdict(found) == lean_search.planner_verdict(plan) == (False, {(reason, "ReplicaSet/web-1")})


@pytest.mark.parametrize("staged", [True, False], ids=["staged cordons", "cordons first"])
def test_a_cordon_under_honor_moves_the_counts_the_search_remembers(staged):
    """Zone a alone makes a domain under Honor (b and c are cordoned; minDomains 2 keeps the
    minimum at 0), and each cordon takes its node's pod out of a's count: web-1's replacement
    strands at step 1 (a would hold 2), and the cordon of a3 at step 2 empties a, so its retry
    as step 2 starts fits on a1, which leaves web-2's none. A cordon that left the count
    unversioned skipped that retry as still stuck. (Staged cordons; with the cordons first, step
    1 cordons a2 and a3 together: a holds 0, and web-1's replacement fits on a1 at once.)"""
    nodes = [_node(name, cordoned=name[0] != "a") for name in ("a1", "a2", "a3", "b1", "b2", "c1")]
    snapshot = make_snapshot(nodes, web({"a2": 1, "a3": 1}, (make_constraint(ZONE_KEY, 1, min_domains=2,
                                                                              node_taints_policy="Honor"),)))
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False,
                          stage_cordons=staged)
    plan = plan_drain(snapshot, ["a2", "a3"], options)
    lean = lean_search.lean_for(snapshot, ["a2", "a3"], options)
    found = lean.run()
    assert lean_search.compare(lean, plan) == []
    if staged:
        assert [s.evicted for s in lean.steps] == [(("default/web-1", None),), (("default/web-2", None),)]
    else:
        assert [s.evicted for s in lean.steps][0] == (("default/web-1", "a1"),)
    assert lean.verdict(found) == lean_search.planner_verdict(plan)


UNCOVERED = {
    "affinity": dict(pod_anti_affinity=(PodAffinityTerm(Selector.from_api({"matchLabels": {"app": "other"}}),
                                                        HOSTNAME_KEY),)),
    "host ports": dict(host_ports=(HostPort(8080),)),
    "resource": dict(requests={"example.com/dongle": 1}),
    # InterPodAffinity's score reads pods across the cluster
    "preferred anti-affinity": dict(preferred_pod_anti_affinity=(
        (50, PodAffinityTerm(Selector.from_api({"matchLabels": {"app": "web"}}), HOSTNAME_KEY)),)),
}


@pytest.mark.parametrize("what", list(UNCOVERED))
def test_a_cluster_the_lean_search_does_not_cover_is_replanned_by_the_planner(monkeypatch, what):
    """Pod anti-affinity (required or preferred), host ports, a resource its arrays do not track: the lean search says
    so, and the planner plans and re-plans (zone a drained under Ignore is a trap whatever else
    the pods have, and deleting its nodes is verified to clear it)."""
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    nodes = nodes_in({"a": 2, "b": 2, "c": 2})
    for n in nodes:
        n.allocatable["example.com/dongle"] = 4
    snapshot = make_snapshot(nodes, web({"a1": 1, "a2": 1, "b1": 1, "c1": 1}, (make_constraint(ZONE_KEY, 1),),
                                        **UNCOVERED[what]))
    with pytest.raises(lean_module.Unsupported):
        lean_module.replan_verdict(snapshot, ["a1", "a2"], PlanOptions(delete_drained_nodes=True,
                                                                               search_budget=0))
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", False)
    without = _with_remedies(snapshot, ["a1", "a2"])
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", True)
    monkeypatch.setattr(plan_module, "LEAN_PLANS", True)
    assert _with_remedies(snapshot, ["a1", "a2"]) == without
    assert not without.safe and any(r.action == "DeleteDrainedNodes" and r.verified and r.makes_safe
                                    for f in without.findings for r in f.remedies)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=random_clusters())
def test_random_clusters_plans_with_remedies_are_the_same_with_the_lean_replans(tmp_path, monkeypatch, case):
    """The acceptance suite's random clusters planned with remedies verified: the same plan,
    findings and remedies whether the lean search or the planner makes the proven traps' plans
    and answers the remedies' re-plans."""
    doc, targets, parallel = case
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    snapshot = load_snapshot(SourceOptions(from_file=(str(path),), all_namespaces=True), DRAIN_KINDS)
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", True)
    monkeypatch.setattr(plan_module, "LEAN_PLANS", True)
    with_lean = _with_remedies(snapshot, targets, parallel)
    monkeypatch.setattr(plan_module, "LEAN_REPLANS", False)
    monkeypatch.setattr(plan_module, "LEAN_PLANS", False)
    assert _with_remedies(snapshot, targets, parallel) == with_lean
    event("unsafe" if not with_lean.safe else "safe")


def test_the_planner_replans_when_the_lean_search_cannot(monkeypatch):
    """Should the lean search fail, the planner re-plans and the plan is the same."""
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    monkeypatch.setattr(plan_module, "LEAN_PLANS", False)  # the plan itself: the next test
    snapshot = make_snapshot(nodes_in({"a": 2, "b": 2, "c": 2}),
                             web({"a1": 1, "a2": 1, "b1": 1, "c1": 1}, (make_constraint(ZONE_KEY, 1),)))
    targets = ["a1", "a2"]
    calls = []
    answer = lean_module.replan_verdict

    def counted(*args, **kw):
        calls.append(1)
        return answer(*args, **kw)

    monkeypatch.setattr(lean_module, "replan_verdict", counted)
    expected = _with_remedies(snapshot, targets)
    asked = len(calls)
    assert asked >= 2  # every re-plan: deleting the drained nodes, Honor, raising maxSkew, ...
    def broken(self):
        raise IndexError("a fault")

    monkeypatch.setattr(lean_module.LeanSearch, "run", broken)
    assert _with_remedies(snapshot, targets) == expected
    assert len(calls) == 2 * asked  # each asked again, and the planner answered
    assert {"DeleteDrainedNodes", "SetNodeTaintsPolicyHonor"} <= {
        r.action for f in expected.findings for r in f.remedies if r.verified}


@pytest.mark.parametrize("fault", ["a fault of its own", "a fault after the first stranding"])
def test_the_planner_plans_when_the_lean_search_cannot(clusters, monkeypatch, fault, counting):
    """A plan forced.py proves unsafe is the lean search's (LeanSearch.drain_plan) and the
    planner's alike: should the lean search fail (before or after it told
    plan.py the first stranded pod and a carried re-plan may have started), the planner makes
    it, with the same findings and remedies (re-plans forked, as the CLI makes them)."""
    monkeypatch.setattr(plan_module, "LEAN_PLANS", True)
    snapshot = clusters["tiny"]
    targets = lean_probe.resolve_targets(snapshot, (), None, (ZONE_KEY, lean_probe.ZONE))
    made, real = [], plan_module._lean_plan

    def lean_plan(*args):
        made.append(real(*args))
        return made[-1]

    monkeypatch.setattr(plan_module, "_lean_plan", lean_plan)
    expected = _with_remedies(snapshot, targets)
    assert isinstance(made[0], tuple) and not expected.safe  # the lean search made it
    real_step = lean_module.LeanSearch._play_step

    def broken(self, *args):
        if fault == "a fault of its own" or (self.strandings and self.on_strand is None):  # told
            raise IndexError("a fault")
        return real_step(self, *args)

    monkeypatch.setattr(lean_module.LeanSearch, "_play_step", broken)
    again = _with_remedies(snapshot, targets)
    assert made[1] is (fault == "a fault after the first stranding")  # whether on_strand was told
    assert again == expected
    monkeypatch.setattr(plan_module, "LEAN_PLANS", False)
    assert _with_remedies(snapshot, targets) == expected


def _partly_racked(seed: int):
    """Issue 59's example: 9 nodes in 3 zones, web under a hard zone constraint and a
    ScheduleAnyway one on `rack`, a label ~40 % of the nodes lack; nodes of several sizes
    and usages, some with a PreferNoSchedule taint, so that every array score decides."""
    import random

    rng = random.Random(seed)
    nodes = []
    for z in "abc":
        for i in range(1, 4):
            labels = {"rack": f"r{rng.randint(1, 3)}"} if rng.random() < 0.6 else {}
            taints = ("dedicated=batch:PreferNoSchedule",) if rng.random() < 0.25 else ()
            nodes.append(make_node(f"{z}{i}", zone=z, labels=labels, taints=taints,
                                   allocatable={"cpu": rng.choice([2000, 4000, 8000]),
                                                "memory": rng.choice([4, 8, 16]) << 30, "pods": 110}))
    spread = (make_constraint(ZONE_KEY, 2), make_constraint("rack", 1, mode="ScheduleAnyway"))
    pods = [make_pod(f"web-{k}", node=rng.choice(nodes).name, labels={"app": "web"}, spread=spread,
                     owner="ReplicaSet/web-1", requests={"cpu": rng.choice([100, 500]), "memory": 1 << 28})
            for k in range(1, 13)]
    pods += [make_pod(f"filler-{k}", node=rng.choice(nodes).name, requests={"cpu": 700, "memory": 1 << 30})
             for k in range(6)]
    return make_snapshot(nodes, pods)


@pytest.mark.parametrize("seed", range(12))
def test_a_soft_constraint_on_a_partly_labelled_key_is_placed_alike_on_the_arrays(seed):
    """The lean search and the planner predict the same node for every replacement when a
    soft constraint's key is missing from some nodes (both leave those nodes out of its score:
    IgnoredNodes) and the other scores (TaintToleration, both resource scores) decide."""
    snapshot = _partly_racked(seed)
    targets = ["a1", "a2", "a3"]
    options = PlanOptions(DrainFlags(True, False, True), search_budget=0, verify_remedies=False)
    plan = plan_drain(snapshot, targets, options)
    lean = lean_search.lean_for(snapshot, targets, options)
    lean.run()
    assert lean_search.compare(lean, plan) == []
