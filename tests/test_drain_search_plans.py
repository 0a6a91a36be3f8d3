"""Whole plans of the search (views/drain/core/search.py over views/drain/core/steps.py): the benchmark clusters' zone
drains (a trap under nodeTaintsPolicy Ignore) and the remedy re-plans that trap makes first;
candidates rolled back; replacements that tolerate the cordon; counts under Honor; the
DrainPlan's settled pods and stranding details; pods that need the engine's per-node filters."""

from __future__ import annotations


import pytest

import benchclusters
from conftest import make_constraint, make_node, make_pod, make_snapshot
from drain_builders import nodes_in, web
from kubectl_tspread.views.drain.core import search
from kubectl_tspread.model.plan import INFO, PlanOptions
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.views.drain.pods import DrainFlags
from kubectl_tspread.views.drain.remedies import first_replans
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HOSTNAME_KEY, SET_NODE_TAINTS_POLICY_HONOR, ZONE_KEY, HostPort, PodAffinityTerm, \
    Toleration

FLAGS = DrainFlags(True, False, True)  # --ignore-daemonsets --delete-emptydir-data
TOLERATES_CORDON = (Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),)


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("bench"))
    return {size: benchclusters.load(size, cache) for size in ("tiny", "small")}


def _node(name: str, pods: int = 1, cordoned: bool = False, cpu: int = 1000):
    """A node of zone name[0] with room for `pods` pods, cordoned (its taint too) or not."""
    taints = ("node.kubernetes.io/unschedulable:NoSchedule",) if cordoned else ()
    return make_node(name, zone=name[0], allocatable={"cpu": cpu, "memory": 1 << 34, "pods": pods},
                     unschedulable=cordoned, taints=taints)


def _verdict(plan) -> tuple[bool, set[tuple[str, str | None]]]:
    """The plan's verdict: safe or not, and its findings' codes and workloads (notes left out)."""
    return plan.safe, {(f.code, f.workload) for f in plan.findings if f.severity != INFO}


def _placed(plan) -> list[tuple[str, str | None]]:
    """Each eviction's pod and the node its replacement is predicted on (None: not replaced, or stranded)."""
    return [(f"{e.namespace}/{e.name}", e.predicted_node if e.replaced else None) for s in plan.steps
            for e in s.evictions]


def _honor_replan(snapshot, targets, options):
    """(edited snapshot, options) of the SetNodeTaintsPolicyHonor re-plan remedies.py makes first
    for the plan's findings."""
    plan = plan_drain(snapshot, targets, options)
    for _, action, snap, opts in first_replans(snapshot, targets, options, plan, plan.findings):
        if action == SET_NODE_TAINTS_POLICY_HONOR:
            return snap(), opts
    raise AssertionError("the plan's findings ask for no SetNodeTaintsPolicyHonor re-plan")


def _planned(snapshot, deleting: bool, honor: bool = False):
    targets = benchclusters.zone_targets(snapshot)
    options = benchclusters.plan_options(snapshot, targets, deleting)
    if honor:
        snapshot, options = _honor_replan(snapshot, targets, options)
    return options, targets, plan_drain(snapshot, targets, options), snapshot


# ---- the benchmark clusters' zone b ---------------------------------------------------------

@pytest.mark.parametrize("size", ["tiny", "small"])
@pytest.mark.parametrize("deleting,honor", [(False, False), (True, False), (False, True)],
                         ids=["plan", "deleting-replan", "honor-replan"])
def test_a_zone_drain_of_the_benchmark_cluster(clusters, size, deleting, honor):
    """Zone b drained under nodeTaintsPolicy Ignore strands replacements whatever the order, and
    so do the re-plans that delete the drained nodes or set Honor on the first stranded workload.
    forced.py proves it, in the small cluster with the drained nodes deleted too: nodes of zone b
    hold pods a PDB blocks from the start, so they are never emptied nor deleted and zone b stays a
    closed domain. In the tiny cluster the PDBs block pods only once the drain has used their
    budgets, so the proof deletes every node of zone b and proves nothing: its deleting re-plan's
    fallback weighs its candidates."""
    options, targets, plan, snapshot = _planned(clusters[size], deleting, honor)
    assert honor == any(c.node_taints_policy == "Honor" for p in snapshot.pods for c in p.spread)
    assert not plan.safe
    # a step per target: with every target cordoned at step 1 no replacement lands on a later
    # target to be evicted again, and the PDB budgets that then split batches into steps hold
    assert len(plan.steps) == len(targets)
    assert set(plan.steps[0].cordon) | set(plan.already_cordoned) == set(targets)
    assert plan.evicted_again == 0
    if plan.no_safe_order:
        # every level's harm is one the proof names: each level takes its first candidate
        assert plan.explored == len(targets)
    else:
        assert plan.explored > len(targets)  # candidates rolled back
    assert any(s.deleted_nodes for s in plan.steps) == deleting
    placed_nowhere = sum(node is None for _, node in _placed(plan))
    assert placed_nowhere == sum(1 for s in plan.stranded if s.reason != "PdbBlocks") > 0
    assert plan.no_safe_order == (not deleting or size == "small")
    # cordon-first: zone b is closed from step 1, so its spread refusals are the trap's
    assert {"CordonedDomainTrap", "PdbBlocks"} <= {code for code, _ in _verdict(plan)[1]}
    if size == "small" and not (deleting or honor):
        assert any(s.pdbs for s in plan.steps) and any(s.skipped for s in plan.steps)
        hostname = next(c for c in plan.steps[0].constraints_after if c.topology_key == HOSTNAME_KEY)
        assert len(hostname.distribution) > 100 and hostname.distribution.extremes()[1] >= 1


def test_the_greedy_fallback_keeps_the_least_bad_candidate(clusters, monkeypatch):
    """Where harm is not proven unavoidable the fallback weighs GREEDY_CANDIDATES candidates per
    level: taking the first each time makes another plan of the tiny cluster's zone with the
    drained nodes deleted (the proof does not hold there)."""
    _, targets, plan, snapshot = _planned(clusters["tiny"], True)
    assert not plan.no_safe_order
    monkeypatch.setattr(search, "GREEDY_CANDIDATES", 1)
    first_only = plan_drain(snapshot, targets, benchclusters.plan_options(snapshot, targets, True))
    assert first_only.explored < plan.explored
    assert _placed(first_only) != _placed(plan)


def test_the_zone_traps_remedies(clusters, forks, results):
    """The small cluster's zone with its remedies verified in forked re-plans: setting Honor
    clears the trap; deleting the drained nodes does not (with every target cordoned at step 1,
    the zone's other nodes, cordoned and still holding pods, keep it a closed domain)."""
    snapshot = clusters["small"]
    plan = plan_drain(snapshot, benchclusters.zone_targets(snapshot), PlanOptions(FLAGS), workers=forks)
    assert not plan.safe and plan.no_safe_order
    remedies = {r.action: r.verified for f in plan.findings for r in f.remedies}
    assert remedies.get("SetNodeTaintsPolicyHonor") and "DeleteDrainedNodes" not in remedies
    assert [v for _, v in results if v is not None], "no re-plan was made in a forked worker"


# ---- small clusters -------------------------------------------------------------------------

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
    options = PlanOptions(FLAGS, search_budget=0, verify_remedies=False, stage_cordons=staged)
    plan = plan_drain(snapshot, ["a1", "b1"], options)
    assert plan.explored > len(plan.steps)  # a candidate rolled back
    assert plan.steps[0].nodes == ("a1",)
    assert dict(plan.steps[0].constraints_after[0].distribution) == ({"b": 1, "c": 0} if staged else {"c": 0})


@pytest.mark.parametrize("staged", [True, False], ids=["staged cordons", "cordons first"])
def test_counts_of_many_domains_under_honor(staged):
    """140 nodes of one pod each in 70 racks (a node of zone a and one of b each), web on zone
    a's with a rack constraint under Honor, room on b1 and b2 alone: each cordon takes its
    node's pod out of its rack's count (the rack keeps its b node), each replacement moves a
    count, and from the third step on the candidates strand and are rolled back."""
    rack = "example.com/rack"
    nodes = [make_node(f"{z}{i}", zone=z, labels={rack: f"r{i}"},
                       allocatable={"cpu": 4000, "memory": 1 << 34, "pods": 1})
             for z in "ab" for i in range(1, 71)]
    full = [make_pod(f"other-{i}", node=f"b{i}") for i in range(3, 71)]
    snapshot = make_snapshot(nodes, web({f"a{i}": 1 for i in range(1, 71)},
                                        (make_constraint(rack, 1, node_taints_policy="Honor"),)) + full)
    options = PlanOptions(FLAGS, search_budget=0, verify_remedies=False, stage_cordons=staged)
    plan = plan_drain(snapshot, [f"a{i}" for i in range(1, 9)], options)
    assert plan.explored > len(plan.steps)  # candidates rolled back
    counts = [c.distribution for s in plan.steps for c in s.constraints_after]
    assert len(counts) == len(plan.steps) and all(len(d) == 70 for d in counts)
    if staged:
        # a1's pod went to b1, in its own rack; a3's left its rack at its cordon and stranded
        assert [d["r1"] for d in counts[:3]] == [1, 1, 1] and [d["r3"] for d in counts[1:3]] == [1, 0]
    else:  # every a node's pod left its rack at step 1; a1's replacement is back in r1 (on b1)
        assert counts[0]["r1"] == 1 and [counts[0][f"r{i}"] for i in range(2, 9)] == [0] * 7


def test_settled_pods_and_the_details_of_a_stranding():
    """Web's two Pending pods are settled first (web-p1 on d1, the only node with room; web-p2
    on none), and a1's replacements fit no node. Their NoCapacity details count each node's
    first failure in the scheduler's order: a1 and a2 cordoned, b1 tainted, b2 full, b3 and d1
    short of cpu (d1 since web-p1), c1 without the label web's nodeSelector asks for."""
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
    plan = plan_drain(make_snapshot(nodes, pods), ["a1"], PlanOptions(FLAGS, search_budget=0, verify_remedies=False))
    assert [(e.name, e.predicted_node) for e in plan.settled] == [("web-p1", "d1"), ("web-p2", None)]
    assert [(s.name, s.reason) for s in plan.stranded] == [("web-1", "NoCapacity"), ("web-2", "NoCapacity")]
    assert plan.stranded[0].details == {"reasons": {
        "Insufficient cpu": 2, "Too many pods": 1, "node(s) didn't match Pod's node affinity/selector": 1,
        "node(s) had untolerated taint(s)": 1, "node(s) were unschedulable": 2}, "node": "a1"}


@pytest.mark.parametrize("policy", ["Ignore", "Honor"])
@pytest.mark.parametrize("deleting", [False, True], ids=["plan", "deleting-replan"])
def test_replacements_that_tolerate_the_cordon(policy, deleting):
    """A workload that tolerates the cordon: NodeUnschedulable lets its replacements on the
    cordoned nodes, the one being drained included, where the evicted pods hold their room
    until the step ends (web-4's replacement goes back on b1, the node it drains, unless the
    drained nodes are deleted); under Honor a cordon keeps the node in the workload's domains."""
    nodes = nodes_in({"a": 2, "b": 2, "c": 2}, pods_cap=3)
    pods = web({"a1": 2, "a2": 1, "b1": 1, "c1": 1, "b2": 1},
               (make_constraint(ZONE_KEY, 1, node_taints_policy=policy),), tolerations=TOLERATES_CORDON)
    options = PlanOptions(FLAGS, search_budget=0, verify_remedies=False, delete_drained_nodes=deleting)
    plan = plan_drain(make_snapshot(nodes, pods), ["a1", "b1"], options)
    assert _verdict(plan) == (True, set())
    assert [node for _, node in _placed(plan)] == ["c2", "a2", "b2" if deleting else "b1"]


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
    options = PlanOptions(FLAGS, search_budget=0, verify_remedies=False, delete_drained_nodes=deleting)
    plan = plan_drain(snapshot, ["a1"], options)
    assert [(f"{s.namespace}/{s.name}", s.step, s.reason) for s in plan.stranded] == [("default/web-1", 1, reason)]
    assert _verdict(plan) == (False, {(reason, "ReplicaSet/web-1")})


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
    options = PlanOptions(FLAGS, search_budget=0, verify_remedies=False, stage_cordons=staged)
    plan = plan_drain(snapshot, ["a2", "a3"], options)
    if staged:
        assert [[(e.name, e.predicted_node) for e in s.evictions] for s in plan.steps] == [
            [("web-1", None)], [("web-2", None)]]
    else:
        assert _placed(plan)[0] == ("default/web-1", "a1")


OTHER_FILTERS = {
    "nothing else": {},
    "affinity": dict(pod_anti_affinity=(PodAffinityTerm(Selector.from_api({"matchLabels": {"app": "other"}}),
                                                        HOSTNAME_KEY),)),
    "host ports": dict(host_ports=(HostPort(8080),)),
    "resource": dict(requests={"example.com/dongle": 1}),
    # InterPodAffinity's score reads pods across the cluster
    "preferred anti-affinity": dict(preferred_pod_anti_affinity=(
        (50, PodAffinityTerm(Selector.from_api({"matchLabels": {"app": "web"}}), HOSTNAME_KEY)),)),
}


@pytest.mark.parametrize("what", list(OTHER_FILTERS))
def test_a_zone_trap_whatever_else_the_pods_ask_is_cleared_by_its_verified_remedies(what):
    """Pod anti-affinity (required or preferred), host ports, an extended resource: zone a
    drained under Ignore is a trap whatever else the pods have, and the re-plans verify that
    deleting its nodes, or setting Honor, clears it."""
    nodes = nodes_in({"a": 2, "b": 2, "c": 2})
    for n in nodes:
        n.allocatable["example.com/dongle"] = 4
    snapshot = make_snapshot(nodes, web({"a1": 1, "a2": 1, "b1": 1, "c1": 1}, (make_constraint(ZONE_KEY, 1),),
                                        **OTHER_FILTERS[what]))
    plan = plan_drain(snapshot, ["a1", "a2"], PlanOptions(FLAGS))
    assert not plan.safe and plan.no_safe_order
    verified = {r.action for f in plan.findings for r in f.remedies if r.verified and r.makes_safe}
    assert {"DeleteDrainedNodes", "SetNodeTaintsPolicyHonor"} <= verified
