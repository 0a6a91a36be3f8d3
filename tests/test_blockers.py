"""why-pending names the real blocker (blockedBy, most decisive first, and the answer from it), offers
verified fixes for non-spread blockers, recognises autoscaler taints, and every fix carries its side
effects in tier order: no change to running pods, then template edits, then destructive ones."""

from __future__ import annotations

import json

import pytest

from apiobjects import as_list, node_obj, pod_obj, spread_obj
from conftest import GI, make_node, make_pod
from kubectl_tspread.views import blockers as B, fixes
from kubectl_tspread.cli import main
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.traps import AUTOSCALER_DOMAIN, CORDONED_DOMAIN
from kubectl_tspread.views.fixes_blockers import ADD_NODE_WITH_LABELS, ADD_LARGER_NODE, LOWER_REQUEST
from kubectl_tspread.views.fixes_nodes import ADD_NODE, DELETE_NODES, UNCORDON
from kubectl_tspread.model.labels import Requirement
from kubectl_tspread.model import (
    DELETES_PODS, REDUCES_AVAILABILITY, ROLLS_WORKLOAD, STRANDS_VOLUMES, NodeSelectorTerm, PersistentVolume,
    PersistentVolumeClaim, Volume, ZONE_KEY,
)
from kubectl_tspread.views.pending import NO_DOMAINS, explain_pending
from kubectl_tspread.render import pending as view
from pending_cases import WEB, index_of, zone_node, zoned

ZONE_D = (NodeSelectorTerm(match_expressions=(Requirement(ZONE_KEY, "In", ("d",)),)),)


def _report(snap, pod):
    return explain_pending(index_of(snap), pod)


def _by_action(r):
    return {s.action: s for s in reversed(r.suggestions)}


def test_unmatched_node_affinity_is_named_and_spread_is_not_blamed():
    snap, pod = zoned({"a": 1, "b": 1, "c": 1}, pod_kw={"node_affinity": ZONE_D})
    r = _report(snap, pod)
    first = r.blockers[0]
    assert (first.plugin, first.code, first.alone) == ("NodeAffinity", B.NODE_AFFINITY_UNMATCHED, True)
    assert first.nodes == ("a0", "b0", "c0")
    assert first.params["terms"] == [{"term": 1, "requirements": ["topology.kubernetes.io/zone=d"]}]
    code, sentence = view.answer(r)
    assert code == B.NODE_AFFINITY_UNMATCHED
    assert "term 1 (topology.kubernetes.io/zone=d) matches no node" in sentence
    assert "Spread allows" not in sentence
    # the constraint has no domain at all: its own line says spread is not the cause
    assert r.constraints[0].summary.code == NO_DOMAINS
    assert "spread is not what blocks the pod" in view.summary_text(r.constraints[0].summary)
    add = _by_action(r)[ADD_NODE_WITH_LABELS]
    assert add.params["labels"] == {ZONE_KEY: "d"} and add.nodes == (add.params["name"],)
    _independently_verified(snap, pod, r, add)


def _independently_verified(snap, pod, r, s):
    """The suggestion's change, applied to the snapshot and re-indexed, lets the pod in where it says."""
    index = index_of(snap)
    verdicts = filters.evaluate(index, pod)
    groups = fixes._candidate_groups(index, pod, verdicts, spread.compute(index, pod), r.blockers)
    cand = next(c for _a, group in groups for c in group if c.action == s.action and c.params == s.params)
    assert fixes.schedulable_nodes(cand.apply(snap), pod.key) == s.nodes != ()
    assert fixes.schedulable_nodes(snap, pod.key) == ()


def test_unmatched_node_selector_is_named_and_a_labelled_node_fixes_it():
    snap, pod = zoned({"a": 1, "b": 1}, pod_kw={"node_selector": {"disk": "ssd"}})
    r = _report(snap, pod)
    assert r.blockers[0].params["selector"] == ["disk=ssd"]
    assert "no node carries nodeSelector disk=ssd" in view.answer(r)[1]
    add = _by_action(r)[ADD_NODE_WITH_LABELS]
    assert add.params["labels"] == {"disk": "ssd"}
    assert add.tier == 0 and [e.code for e in add.side_effects] == ["AddsNode"]


def test_request_above_every_allocatable_names_the_largest_and_offers_bigger_node_or_smaller_request():
    big = make_node("big", zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110})
    snap, pod = zoned({"a": 1, "b": 1}, extra_nodes=[big],
                      pod_kw={"requests": {"cpu": 100, "memory": 64 * GI}, "owner": "ReplicaSet/web-7d"})
    r = _report(snap, pod)
    first = r.blockers[0]
    assert (first.code, first.reason, first.alone) == (B.REQUEST_ABOVE_ALLOCATABLE, "Insufficient memory", True)
    assert first.params == {"resource": "memory", "request": 64 * GI, "largest": 16 * GI, "node": "big"}
    sentence = view.answer(r)[1]
    assert "requests 64Gi memory" in sentence and "the largest is 16Gi, on node big" in sentence
    assert "Spread" not in sentence
    found = _by_action(r)
    larger, lower = found[ADD_LARGER_NODE], found[LOWER_REQUEST]
    assert larger.params["allocatable"] == {"memory": 64 * GI} and larger.params["like"] == "big"
    assert lower.params == {"old": {"memory": 64 * GI}, "new": {"memory": 16 * GI}}
    # lowering the request is a template edit: it rolls the workload, after the new node
    assert [e.code for e in lower.side_effects] == [ROLLS_WORKLOAD]
    assert r.suggestions.index(larger) < r.suggestions.index(lower)
    _independently_verified(snap, pod, r, larger)
    _independently_verified(snap, pod, r, lower)


def _pinned_to_c(**kw):
    pv = PersistentVolume("pv-data", node_affinity=(NodeSelectorTerm(
        match_expressions=(Requirement(ZONE_KEY, "In", ("c",)),)),), claim="default/data")
    pvc = PersistentVolumeClaim("default", "data", volume_name="pv-data", phase="Bound")
    return zoned({"a": 1, "b": 1, "c": 1}, full="c", pod_kw={"volumes": (Volume("data", pvc="data"),)},
                 pvs=[pv], pvcs=[pvc], **kw)


def test_volume_conflict_names_the_pv_and_its_zone():
    snap, pod = _pinned_to_c()
    r = _report(snap, pod)
    first = r.blockers[0]
    assert first.code == B.VOLUME_CONFLICT and first.nodes == ("a0", "b0")
    assert first.params["volumes"] == [{"pv": "pv-data", "claim": "data", "zones": ["c"], "nodes": ["c0"]}]
    assert view.answer(r)[1].startswith("volume pv-data (claim data) is pinned to zone c: 2 nodes outside it")


@pytest.mark.parametrize("taint, who", [
    ("ToBeDeletedByClusterAutoscaler=1700000000:NoSchedule", "cluster-autoscaler"),
    ("karpenter.sh/disrupted:NoSchedule", "Karpenter"),
    ("karpenter.sh/disruption=disrupting:NoSchedule", "Karpenter"),
], ids=["cluster-autoscaler", "karpenter disrupted", "karpenter disruption"])
def test_autoscaler_taint_holding_the_minimum_at_zero_is_named_with_the_safe_fix(taint, who):
    snap, pod = zoned({"a": 1, "b": 1}, extra_nodes=[zone_node("c0", "c", taints=[taint])])
    r = _report(snap, pod)
    traps = r.constraints[0].traps
    assert [t.code for t in traps if t.code in (AUTOSCALER_DOMAIN, CORDONED_DOMAIN)] == [AUTOSCALER_DOMAIN]
    assert traps[0].params["nodes"] == ["c0"] and traps[0].params["autoscalers"] == [who]
    found = _by_action(r)
    assert UNCORDON not in found  # removing the autoscaler's taint is never offered
    wait = found[DELETE_NODES]
    assert wait.params["autoscalers"] == [who] and wait.side_effects == () and wait.tier == 0
    text = view.suggestion_text(wait)
    assert text.startswith(f"let {who} finish deleting the Node objects of zone c (c0); do not remove its taint")
    assert B.AUTOSCALER_REMOVING in [b.code for b in r.blockers]


def test_deleting_nodes_that_hold_pods_lists_them_and_ranks_after_every_other_fix():
    others = [make_pod("db-0", node="c0", labels={"app": "db"}, owner="StatefulSet/db"),
              make_pod("exporter-c0", node="c0", owner="DaemonSet/exporter")]
    pv = PersistentVolume("pv-db", node_affinity=(NodeSelectorTerm(
        match_expressions=(Requirement(ZONE_KEY, "In", ("c",)),)),))
    snap, pod = zoned({"a": 1, "b": 1, "c": 0}, cordoned="c", extra_pods=others, pvs=[pv])
    r = _report(snap, pod)
    delete = _by_action(r)[DELETE_NODES]
    codes = {e.code: e for e in delete.side_effects}
    assert codes[DELETES_PODS].objects == ("default/db-0",)  # the DaemonSet pod belongs to the node
    assert codes[REDUCES_AVAILABILITY].objects == ("default/StatefulSet/db",)
    assert codes[STRANDS_VOLUMES].objects == ("pv-db",)
    assert r.suggestions[-1] is delete and delete.tier == 2
    assert "which still hold running pods or volumes" in view.suggestion_text(delete)


def test_deleting_empty_drained_nodes_has_no_side_effect_and_ranks_first_tier():
    snap, pod = zoned({"a": 1, "b": 1, "c": 0}, cordoned="c")
    r = _report(snap, pod)
    delete = _by_action(r)[DELETE_NODES]
    assert delete.side_effects == () and delete.tier == 0
    assert "which are empty" in view.suggestion_text(delete)


def test_fixes_come_in_tiers_and_template_edits_say_they_roll_the_workload():
    mates = [make_pod(f"web-x{i}", node="a0", labels=WEB, owner="ReplicaSet/web-7d") for i in range(2)]
    snap, pod = zoned({"a": 1, "b": 1, "c": 0}, cordoned="c", extra_pods=mates,
                      pod_kw={"owner": "ReplicaSet/web-7d"})
    r = _report(snap, pod)
    tiers = [s.tier for s in r.suggestions]
    assert tiers == sorted(tiers) and set(tiers) == {0, 1}
    actions = [s.action for s in r.suggestions]
    assert actions.index(ADD_NODE) < actions.index(fixes.SET_NODE_TAINTS_POLICY_HONOR)
    for s in r.suggestions:
        rolls = [e for e in s.side_effects if e.code == ROLLS_WORKLOAD]
        assert bool(rolls) == (s.action in fixes.TEMPLATE_EDITS)
        if rolls:  # the two mates and the pending pod
            assert rolls[0].objects == ("default/ReplicaSet/web-7d",) and rolls[0].params == {"pods": 3}


def _dump(tmp_path):
    nodes = [node_obj("a0", zone="a"), node_obj("b0", zone="b"), node_obj("c0", zone="c", unschedulable=True)]
    pods = [pod_obj("web-a", node="a0", labels=WEB, spread=[spread_obj()]),
            pod_obj("web-b", node="b0", labels=WEB, spread=[spread_obj()]),
            pod_obj("db-0", node="c0", labels={"app": "db"}),
            pod_obj("web-new", labels=WEB, spread=[spread_obj()])]
    big = pod_obj("huge", labels={"app": "huge"})
    big["spec"]["containers"][0]["resources"]["requests"]["memory"] = "64Gi"
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(as_list(nodes + pods + [big])))
    return path


def _run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_json_has_blocked_by_answer_side_effects_and_verifies(capsys, tmp_path):
    code, out, err = _run(capsys, "why-pending", "-A", "--from-file", str(_dump(tmp_path)), "-o", "json")
    assert (code, err) == (0, "")
    pods = {p["name"]: p for p in json.loads(out)["pods"]}
    huge = pods["huge"]
    assert huge["blockedBy"][0]["plugin"] == "NodeResourcesFit"
    assert huge["blockedBy"][0]["reason"] == "Insufficient memory"
    assert huge["blockedBy"][0]["nodes"] == ["a0", "b0", "c0"] and huge["blockedBy"][0]["refusesEveryNode"]
    assert huge["answer"]["code"] == "RequestAboveAllocatable" and "64Gi memory" in huge["answer"]["message"]
    assert "AddLargerNode" in [s["action"] for s in huge["suggestions"]]
    web = pods["web-new"]
    assert web["blockedBy"][0]["plugin"] == "PodTopologySpread"
    for s in web["suggestions"]:
        assert s["verifies"] == "PodFits" and isinstance(s["sideEffects"], list)
    delete = next(s for s in web["suggestions"] if s["action"] == "DeleteNodes")
    assert delete["category"] == "Destructive" and web["suggestions"][-1] is delete
    effect = next(e for e in delete["sideEffects"] if e["code"] == "DeletesPods")
    assert effect["objects"] == ["default/db-0"] and "default/db-0" in effect["message"]


def test_table_shows_answer_first_and_side_effects_under_each_fix(capsys, tmp_path):
    code, out, err = _run(capsys, "why-pending", "pod/huge", "--from-file", str(_dump(tmp_path)))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1].startswith("Answer: The pod requests 64Gi memory, more than any node's whole allocatable "
                               "memory (the largest is 16Gi, on node c0)")
    assert "add a node like" in out and "with at least 64Gi memory allocatable" in out
    code, out, _ = _run(capsys, "why-pending", "pod/web-new", "--from-file", str(_dump(tmp_path)))
    assert "side effect: deletes 1 running pod: default/db-0" in out
    # web-new has no controller: editing its constraint means creating it again
    assert "side effect: the pod has no controller: it must be deleted and created again (default/web-new)" in out
