"""The scheduler's FailedScheduling message rebuilt from verdicts, and parsed back."""

from __future__ import annotations

import pytest

from conftest import GI, make_node, make_pod, make_snapshot
from kubectl_tspread.engine import message, preemption, versions
from kubectl_tspread.engine.filters import NodeVerdict, evaluate
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.message import (
    parse_preemption_message, parse_scheduler_message, scheduler_message, split_scheduler_message,
)
from kubectl_tspread.engine.spread import FilterFailure
from kubectl_tspread.model.labels import Requirement, Selector
from kubectl_tspread.model import NodeSelectorTerm, Pdb, PersistentVolumeClaim, PodCondition, Volume

U, UU = "Unschedulable", "UnschedulableAndUnresolvable"
R33, R36 = versions.rules_for("1.33"), versions.rules_for("1.36")
SMALL = {"cpu": 1000, "memory": 4 * GI, "pods": 110}


def v(name, *fails, plugin="NodeResourcesFit", status=U):
    return NodeVerdict(name, tuple(FilterFailure(plugin, status, r) for r in fails))


def run(nodes, pods, pod, **kw):
    index = ClusterIndex(make_snapshot(nodes, [*pods, pod]))
    return scheduler_message(evaluate(index, pod), pod, index, **kw)


# ---- the histogram -----------------------------------------------------------------------

def test_counts_sort_as_strings_not_numbers():
    verdicts = [v(f"a{i}", "node(s) were unschedulable", plugin="NodeUnschedulable", status=UU) for i in range(10)]
    verdicts += [v(f"b{i}", "Insufficient cpu", status=UU) for i in range(9)]
    head = message.filter_message(verdicts)
    # numeric or by-reason order would put "9 Insufficient cpu" first
    assert head == "0/19 nodes are available: 10 node(s) were unschedulable, 9 Insufficient cpu."


def test_several_resource_reasons_on_one_node_count_past_n():
    verdicts = [v("a", "Insufficient cpu", "Insufficient memory"), v("b", "Insufficient cpu", "Insufficient memory"),
                v("c", "Too many pods", "Insufficient cpu")]
    head = message.filter_message(verdicts)
    assert head == "0/3 nodes are available: 1 Too many pods, 2 Insufficient memory, 3 Insufficient cpu."
    assert sum(parse_scheduler_message(head).values()) == 6


def test_only_the_first_failing_plugin_of_a_node_counts():
    node = NodeVerdict("a", (FilterFailure("NodeResourcesFit", U, "Insufficient cpu"),
                             FilterFailure("PodTopologySpread", U, "node(s) didn't match pod topology spread constraints")))
    assert message.filter_message([node]) == "0/1 nodes are available: 1 Insufficient cpu."


def test_a_passing_node_means_no_message_and_no_nodes_is_its_own_message():
    assert scheduler_message([v("a"), v("b", "Insufficient cpu")]) == ""
    assert scheduler_message([]) == "no nodes available to schedule pods"


# ---- whole messages, shaped like events seen on real clusters ------------------------------

def test_tainted_control_plane_and_full_workers():
    nodes = [make_node("cp", taints=["node-role.kubernetes.io/control-plane:NoSchedule"]),
             make_node("w1", allocatable=SMALL), make_node("w2", allocatable=SMALL)]
    busy = [make_pod(f"b{i}", node=f"w{i}", requests={"cpu": 800}) for i in (1, 2)]
    got = run(nodes, busy, make_pod("p", requests={"cpu": 500}), rules=R36)
    assert got == ("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
                   "no new claims to deallocate, preemption: 0/3 nodes are available: "
                   "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.")


def test_daemonset_pod_pinned_by_name_before_dra():
    nodes = [make_node(f"n{i}", allocatable=SMALL) for i in range(4)]
    busy = [make_pod("b", node="n0", requests={"cpu": 900})]
    pod = make_pod("ds", requests={"cpu": 500}, node_affinity=(NodeSelectorTerm(
        match_fields=(Requirement("metadata.name", "In", ("n0",)),)),))
    assert run(nodes, busy, pod, rules=R33) == (
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, "
        "3 Preemption is not helpful for scheduling.")


def test_prefilter_rejection_has_no_counts():
    nodes = [make_node("a"), make_node("b")]
    pod = make_pod("p", volumes=(Volume("v", pvc="data"),))
    index = ClusterIndex(make_snapshot(nodes, [pod], pvcs=(PersistentVolumeClaim("default", "other"),)))
    got = scheduler_message(evaluate(index, pod), pod, index, rules=R33)
    assert got == ('0/2 nodes are available: persistentvolumeclaim "data" not found. '
                   "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert parse_scheduler_message(got) == {'persistentvolumeclaim "data" not found': 2}


# ---- preemption --------------------------------------------------------------------------

def test_evicting_lower_priority_pods_that_make_room_leaves_no_suffix_before_137():
    nodes = [make_node("a", allocatable=SMALL)]
    low = make_pod("low", node="a", priority=0, requests={"cpu": 800})
    got = run(nodes, [low], make_pod("p", priority=1000, requests={"cpu": 500}), rules=R36)
    assert got == "0/1 nodes are available: 1 Insufficient cpu."


def test_from_137_a_preemption_that_finds_victims_names_node_and_count():
    nodes = [make_node("a", allocatable=SMALL)]
    low = make_pod("low", node="a", priority=0, requests={"cpu": 800})
    got = run(nodes, [low], make_pod("p", priority=1000, requests={"cpu": 500}))
    assert got == ("0/1 nodes are available: 1 Insufficient cpu. "
                   "preemption: found a potential placement for pod on node a, preempting 1 victims")


def _candidates(pods_by_node, pdbs=(), pod_cpu=500):
    nodes = [make_node(n, allocatable=SMALL) for n in pods_by_node]
    pods = [make_pod(name, node=n, priority=prio, requests={"cpu": cpu}, labels=labels, created=created)
            for n, spec in pods_by_node.items() for name, prio, cpu, labels, created in spec]
    pod = make_pod("p", priority=1000, requests={"cpu": pod_cpu})
    index = ClusterIndex(make_snapshot(nodes, [*pods, pod], pdbs=tuple(pdbs)))
    return preemption.simulate(evaluate(index, pod), pod, index)


T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"


def test_reprieve_keeps_the_victims_the_pod_fits_beside():
    # a: 1000m; the pod needs 500m: of 400m + 300m + 200m, the most important goes back first
    got = _candidates({"a": [("x", 10, 400, {}, T0), ("y", 5, 300, {}, T0), ("z", 1, 200, {}, T0)]})
    assert (got.node, got.victims) == ("a", 2)  # x reprieved (400 + 500 fit), y and z evicted


@pytest.mark.parametrize("case, by_node, pdbs, want, tied", [
    ("fewest PDB violations first",
     {"a": [("x", 1, 800, {"app": "db"}, T0)], "b": [("y", 9, 800, {}, T0)]},
     [Pdb("default", "db", Selector.from_match_labels({"app": "db"}), disruptions_allowed=0)], "b", ("b",)),
    ("then the lowest highest victim priority",
     {"a": [("x", 5, 800, {}, T0)], "b": [("y", 1, 400, {}, T0), ("y2", 1, 400, {}, T0)]}, [], "b", ("b",)),
    ("then the lowest priority sum",  # b keeps y beside the pod, y2 and y3 go
     {"a": [("x", 1, 800, {}, T0)], "b": [("y", 1, 300, {}, T0), ("y2", 1, 300, {}, T0), ("y3", 1, 300, {}, T0)]},
     [], "a", ("a",)),
    ("then the latest start of the top victims",
     {"a": [("x", 1, 800, {}, T0)], "b": [("y", 1, 800, {}, T1)]}, [], "b", ("b",)),
    ("equal on every criterion is a tie",
     {"a": [("x", 1, 800, {}, T0)], "b": [("y", 1, 800, {}, T0)]}, [], "a", ("a", "b")),
])
def test_preemption_picks_a_node_like_the_scheduler(case, by_node, pdbs, want, tied):
    got = _candidates(by_node, pdbs)
    assert (got.node, got.tied) == (want, tied), case


def test_lower_priority_pods_too_small_to_help_report_the_filter_again():
    nodes = [make_node("a", allocatable=SMALL)]
    low = make_pod("low", node="a", priority=0, requests={"cpu": 100})
    high = make_pod("high", node="a", priority=5000, requests={"cpu": 800})
    got = run(nodes, [low, high], make_pod("p", priority=1000, requests={"cpu": 500}))
    assert got.endswith("preemption: 0/1 nodes are available: 1 Insufficient cpu.")


def test_equal_priority_pods_are_no_victims():
    nodes = [make_node("a", allocatable=SMALL)]
    peer = make_pod("peer", node="a", priority=1000, requests={"cpu": 800})
    got = run(nodes, [peer], make_pod("p", priority=1000, requests={"cpu": 500}))
    assert parse_preemption_message(got) == {"No preemption victims found for incoming pod": 1}


def test_a_preemptor_waiting_for_its_victims_is_not_eligible():
    nodes = [make_node("a", allocatable=SMALL)]
    victim = make_pod("victim", node="a", priority=0, terminating=True, requests={"cpu": 800},
                      conditions=(PodCondition("DisruptionTarget", "True", "PreemptionByScheduler"),))
    pod = make_pod("p", priority=1000, requests={"cpu": 500}, nominated_node="a")
    assert run(nodes, [victim], pod, rules=R36).endswith(
        "no new claims to deallocate, preemption: not eligible due to a terminating pod on the nominated node.")


def test_without_pod_and_index_unschedulable_nodes_read_no_victims():
    got = scheduler_message([v("a", "Insufficient cpu"), v("b", "node(s) were unschedulable", status=UU)], rules=R33)
    assert got == ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. preemption: "
                   "0/2 nodes are available: 1 No preemption victims found for incoming pod, "
                   "1 Preemption is not helpful for scheduling.")


# ---- parsing -----------------------------------------------------------------------------

TAINT_SPELLINGS = [
    ("1.34+", "0/3 nodes are available: 3 node(s) had untolerated taint(s)."),
    ("1.25-1.33 with the taint", "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/"
     "control-plane: }, 2 node(s) had untolerated taint {spray: mortein}. preemption: 0/3 nodes are available: "
     "3 Preemption is not helpful for scheduling."),
    ("before 1.25", "0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate."),
    ("1.18-era wording", "0/3 nodes are available: 2 node(s) had taint {a: b}, that the pod didn't tolerate, "
     "1 node(s) had taints that the pod didn't tolerate."),
]


@pytest.mark.parametrize("msg", [c[1] for c in TAINT_SPELLINGS], ids=[c[0] for c in TAINT_SPELLINGS])
def test_taint_spellings_normalise(msg):
    assert parse_scheduler_message(msg) == {"node(s) had untolerated taint(s)": 3}


def test_parse_round_trips_a_rebuilt_message():
    verdicts = [v(f"n{i}", "Insufficient cpu") for i in range(12)] + [v("x", "Insufficient example.com/gpu")]
    msg = scheduler_message(verdicts)
    assert parse_scheduler_message(msg) == {"Insufficient cpu": 12, "Insufficient example.com/gpu": 1}
    assert parse_preemption_message(msg) == {"No preemption victims found for incoming pod": 13}


def test_split_handles_old_double_period_and_non_messages():
    total, part, post = split_scheduler_message(
        "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..")
    assert (total, part) == (1, "1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }")
    assert parse_preemption_message("0/1 nodes are available: 1 Insufficient cpu. " + post) == {
        "Preemption is not helpful for scheduling": 1}
    assert split_scheduler_message("Successfully assigned default/p to n1") == (None, "", "")
    assert parse_scheduler_message("binding rejected") == {}


def test_a_message_with_a_count_of_thousands_of_digits_is_no_scheduler_message():
    """An Event's message is the server's text: int() refuses a count of over 4,300 digits (it was
    'error: unexpected ValueError'); no scheduler writes one, so it is not read as its message."""
    huge = "9" * 5000
    assert message.parse_scheduler_message(f"0/{huge} nodes are available: 1 Insufficient cpu.") == {}
    assert message.parse_scheduler_message(f"0/3 nodes are available: {huge} Insufficient cpu.") == {}
