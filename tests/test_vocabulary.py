"""One vocabulary for what-if changes (issue 59, item 7): why-pending's fixes and drain-safe's
remedies are one change type, name the same change with the same action and parameters in
their JSON and text, word side effects alike, rank by one destructive set, and keep the names
they replaced readable for one minor version."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from apiobjects import ZONE, as_dump, node_obj, pod_obj, spread_obj, workload_obj
from kubectl_tspread import model
from kubectl_tspread.cli import main
from kubectl_tspread.model import plan as drain_model
from kubectl_tspread.views.fixes import Suggestion
from kubectl_tspread.render import changes
from kubectl_tspread.render.text import side_effect_text

ROOT = Path(__file__).resolve().parent.parent
CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
NAMES = ("a1", "a2", "b1", "b2", "c1", "c2")
# the changes both commands propose for a zone-spread workload held back by a cordoned zone
SHARED = (model.SET_NODE_TAINTS_POLICY_HONOR, model.RAISE_MAX_SKEW, model.ADD_NODE)


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _web(name: str, node: str | None) -> dict:
    return pod_obj(name, node=node, labels={"app": "web"}, spread=[spread_obj()], owner=("ReplicaSet", "web"))


def _pending_cluster() -> dict:
    """Zone c's nodes are cordoned (drained), a and b hold one web pod each: web-new waits for
    zone c, which spread alone allows."""
    nodes = [node_obj(n, zone=n[0], **({"unschedulable": True, "taints": [CORDON_TAINT]} if n[0] == "c" else {}))
             for n in NAMES]
    pods = [_web("web-a1", "a1"), _web("web-b1", "b1"), _web("web-new", None)]
    return as_dump(nodes + [workload_obj("ReplicaSet", "web", {"app": "web"}, replicas=3)] + pods)


def _drain_cluster() -> dict:
    """A web pod on each of six nodes in three zones: draining zone a cordons it, and under
    nodeTaintsPolicy Ignore the cordoned zone holds the global minimum at 0."""
    pods = [_web(f"web-{n}", n) for n in NAMES]
    return as_dump([node_obj(n, zone=n[0]) for n in NAMES]
                   + [workload_obj("ReplicaSet", "web", {"app": "web"}, replicas=6)] + pods)


@pytest.fixture
def documents(capsys, tmp_path) -> tuple[list[dict], list[dict], str, str]:
    """(why-pending's suggestions, drain-safe's remedies of the trap, both texts)."""
    pending, drain = tmp_path / "pending.json", tmp_path / "drain.json"
    pending.write_text(json.dumps(_pending_cluster()))
    drain.write_text(json.dumps(_drain_cluster()))
    code, out, err = run(capsys, "why-pending", "web-new", "--from-file", str(pending), "-o", "json")
    assert (code, err) == (0, "")
    (pod,) = json.loads(out)["pods"]
    code, out, err = run(capsys, "drain-safe", "--domain", f"{ZONE}=a", "--from-file", str(drain), "-o", "json")
    assert (code, err) == (3, "")
    trap = next(f for f in json.loads(out)["findings"] if f["code"] == "CordonedDomainTrap")
    _, pending_text, _ = run(capsys, "why-pending", "web-new", "--from-file", str(pending))
    _, drain_text, _ = run(capsys, "drain-safe", "--domain", f"{ZONE}=a", "--from-file", str(drain))
    return pod["suggestions"], trap["remedies"], pending_text, drain_text


def _first(docs: list[dict], action: str) -> dict:
    return next(d for d in docs if d["action"] == action)


def _new_keys(doc: dict, command: str) -> set[str]:
    old = changes.OLD_PARAMS.get(command, {}).get(doc["action"], {})
    return set(doc["details"]) - set(old)


def test_both_commands_name_the_same_change_with_the_same_action_and_parameters(documents):
    fixes, remedies, _, _ = documents
    for action in SHARED:
        fix, remedy = _first(fixes, action), _first(remedies, action)
        shared = _new_keys(fix, changes.WHY_PENDING) & _new_keys(remedy, changes.DRAIN_SAFE)
        assert {"topologyKey"} <= shared, action
        assert fix["details"]["topologyKey"] == remedy["details"]["topologyKey"] == ZONE
    honor = _first(fixes, model.SET_NODE_TAINTS_POLICY_HONOR), _first(remedies, model.SET_NODE_TAINTS_POLICY_HONOR)
    raise_ = _first(fixes, model.RAISE_MAX_SKEW), _first(remedies, model.RAISE_MAX_SKEW)
    add = _first(fixes, model.ADD_NODE), _first(remedies, model.ADD_NODE)
    assert [d["details"]["position"] for d in honor[:1]] == [0] and honor[1]["details"]["workload"] == "ReplicaSet/web"
    # the value set under the field's own name, the value before as `old`, in both
    for d in raise_:
        assert {"topologyKey", "old", "maxSkew"} <= set(d["details"]) and d["details"]["old"] == 1
        assert d["details"]["maxSkew"] > 1
    # one "new node like this one": the same parameters, the same naming of the node it adds
    for d in add:
        p = d["details"]
        assert {"topologyKey", "domain", "like", "name"} <= set(p)
        assert p["name"] == f"{p['like']}-new"
        assert d["sideEffects"] == [{"code": "AddsNode", "objects": [p["name"]],
                                     "message": f"adds node {p['name']} (capacity you pay for until it is removed)"}]
    assert (add[0]["details"]["domain"], add[1]["details"]["domain"]) == ("c", "a")
    # the same change has the same side effects in both
    for pair in (honor, raise_, add):
        assert [e["code"] for e in pair[0]["sideEffects"]] == [e["code"] for e in pair[1]["sideEffects"]]


def test_every_parameter_is_in_the_vocabulary(documents):
    fixes, remedies, _, _ = documents
    for docs, command in ((fixes, changes.WHY_PENDING), (remedies, changes.DRAIN_SAFE)):
        assert docs
        for d in docs:
            assert _new_keys(d, command) <= set(model.ACTION_PARAMETERS[d["action"]]), (command, d["action"])


def test_old_names_stay_readable_where_they_were_written(documents):
    fixes, remedies, _, _ = documents
    honor = _first(remedies, model.SET_NODE_TAINTS_POLICY_HONOR)
    assert honor["deprecatedAction"] == "HonorTaints"
    rolls = next(e for e in honor["sideEffects"] if e["code"] == model.ROLLS_WORKLOAD)
    assert rolls["count"] == rolls["details"]["pods"] == 6
    # why-pending's old parameter keys, beside the new ones with the same values
    fix = _first(fixes, model.SET_NODE_TAINTS_POLICY_HONOR)
    assert fix["details"]["key"] == fix["details"]["topologyKey"] == ZONE
    raised = _first(fixes, model.RAISE_MAX_SKEW)["details"]
    assert raised["new"] == raised["maxSkew"] and raised["key"] == ZONE
    added = _first(fixes, model.ADD_NODE)["details"]
    assert (added["template"], added["key"]) == (added["like"], added["topologyKey"]) == ("c1", ZONE)
    # only in the documents of the command that used them
    assert not any("deprecatedAction" in d for d in fixes)
    assert not any({"key", "template", "new"} & set(d["details"]) for d in remedies)
    assert not any("count" in e for d in fixes for e in d["sideEffects"])


def test_side_effects_and_changes_are_worded_the_same_in_both(documents):
    fixes, remedies, pending_text, drain_text = documents
    rolls = [e for d in fixes + remedies for e in d["sideEffects"] if e["code"] == model.ROLLS_WORKLOAD]
    assert len({re.sub(r"of \S+ \(\d+ pods", "of W (N pods", e["message"]) for e in rolls}) == 1, rolls
    for d in fixes + remedies:
        for e in d["sideEffects"]:
            made = model.SideEffect(e["code"], tuple(e["objects"]), e.get("details", {}))
            assert e["message"] == side_effect_text(made)
            assert f"side effect: {e['message']}" in (pending_text if d in fixes else drain_text)
    honor = "set nodeTaintsPolicy: Honor on "
    assert _first(fixes, model.SET_NODE_TAINTS_POLICY_HONOR)["text"].startswith(honor)
    assert _first(remedies, model.SET_NODE_TAINTS_POLICY_HONOR)["text"] == (
        f"{honor}ReplicaSet/web's {ZONE} constraint, so cordoned and tainted nodes stop making domains")
    assert _first(fixes, model.RAISE_MAX_SKEW)["text"].startswith(f"raise maxSkew on the {ZONE} constraint from 1 to ")
    assert _first(remedies, model.RAISE_MAX_SKEW)["text"].startswith(
        f"raise maxSkew on ReplicaSet/web's {ZONE} constraint from 1 to ")
    assert _first(fixes, model.ADD_NODE)["text"].startswith("add a node like c1 in zone c")
    assert _first(remedies, model.ADD_NODE)["text"].startswith("add a node like a1 in zone a")


def _pdb(name: str, labels: dict) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": labels}},
            "status": {"disruptionsAllowed": 0, "currentHealthy": 6, "desiredHealthy": 6, "expectedPods": 6}}


@pytest.mark.parametrize("extra, actions", [
    pytest.param([_pdb("web", {"app": "web"})], {model.RAISE_PDB_BUDGET}, id="a PDB allows no disruption"),
    pytest.param([_pdb("web", {"app": "web"}), _pdb("all", {})], {model.REMOVE_PDB}, id="two PDBs cover a pod"),
    pytest.param([pod_obj("debug", node="a1")], {model.FLAG}, id="a pod without a controller"),
])
def test_every_drain_remedy_is_in_the_vocabulary(capsys, tmp_path, extra, actions):
    pods = [_web(f"web-{n}", n) for n in NAMES]
    doc = as_dump([node_obj(n, zone=n[0]) for n in NAMES]
                  + [workload_obj("ReplicaSet", "web", {"app": "web"}, replicas=6)] + pods + extra)
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "drain-safe", "a1", "--from-file", str(path), "-o", "json")
    assert (code, err) == (3, "")
    proposed = [r for f in json.loads(out)["findings"] for r in f["remedies"] + f["uncheckedRemedies"]]
    assert actions <= {r["action"] for r in proposed}
    for r in proposed:
        assert _new_keys(r, changes.DRAIN_SAFE) <= set(model.ACTION_PARAMETERS[r["action"]]), r


def test_the_stage_cordons_remedy_is_in_the_vocabulary(capsys, tmp_path):
    """drain-safe's StageCordons (cordon-first drains, issue 59 item 4): its parameters are the
    vocabulary's, its side effect MovesPodsTwice is worded by side_effect_text in JSON and table
    alike with its count in `details`, and it ranks with the changes that delete nothing."""
    from test_drain_cordon_first import _honor_skew

    snap, targets = _honor_skew()
    c = spread_obj(max_skew=2, match_labels={"app": "w"}, nodeTaintsPolicy="Honor")
    nodes = [node_obj(n.name, zone=n.name[0], pods=str(n.allocatable["pods"])) for n in snap.nodes]
    pods = [pod_obj(p.name, node=p.node_name, labels={"app": "w"}, spread=[c], owner=("ReplicaSet", "w"))
            for p in snap.pods]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(as_dump(nodes + [workload_obj("ReplicaSet", "w", {"app": "w"})] + pods)))
    path = str(path)
    code, out, err = run(capsys, "drain-safe", *targets, "--from-file", path, "-o", "json")
    assert (code, err) == (3, "")
    (stage,) = [r for f in json.loads(out)["findings"] for r in f["remedies"] if r["action"] == model.STAGE_CORDONS]
    assert set(stage["details"]) == set(model.ACTION_PARAMETERS[model.STAGE_CORDONS]) == {"nodes"}
    assert stage["category"] == changes.CATEGORY[model.TIER_NO_POD_CHANGE]
    (moved,) = stage["sideEffects"]
    assert (moved["code"], moved["details"]) == (model.MOVES_PODS_TWICE, {"pods": 1}) and "count" not in moved
    assert moved["message"] == side_effect_text(model.SideEffect(moved["code"], (), moved["details"]))
    _, text, _ = run(capsys, "drain-safe", *targets, "--from-file", path)
    assert f"side effect: {moved['message']}" in text


def test_every_fix_of_the_fix_scenarios_is_in_the_vocabulary():
    from test_fixes import WORKS

    assert len({p.values[1] for p in WORKS}) >= 8
    for p in WORKS:
        _build, action, params = p.values
        assert set(params) <= set(model.ACTION_PARAMETERS[action]), p.id


@pytest.mark.parametrize("code", [
    model.DELETES_PODS, model.EVICTS_PODS, model.STRANDS_VOLUMES, model.REDUCES_AVAILABILITY, model.ROLLS_WORKLOAD,
    model.RECREATES_POD, model.WEAKENS_SPREAD, model.ADDS_NODE, model.DELETES_NODES, model.LOSES_DATA])
def test_every_side_effect_code_has_its_words(code):
    text = side_effect_text(model.SideEffect(code, ("default/x",), {"pods": 1}))
    assert not text.startswith(code) and "default/x" in text


def test_moves_pods_twice_has_its_words():
    """No objects (the replacements moved twice are counted, not named): the words carry the count."""
    text = side_effect_text(model.SideEffect(model.MOVES_PODS_TWICE, (), {"pods": 3}))
    assert text == "3 replacement(s) land on nodes drained later and are evicted again (a pod moves twice)"


def test_one_change_type_and_one_destructive_set():
    assert drain_model.Remedy is model.ProposedChange and Suggestion is model.ProposedChange
    assert not hasattr(drain_model, "DESTRUCTIVE")
    # a kubectl flag that loses emptyDir data is destructive in both commands' ranking, as
    # evicting pods is (the sets differed: LosesData only in drain-safe's, EvictsPods only in
    # why-pending's)
    for code in (model.LOSES_DATA, model.EVICTS_PODS, model.DELETES_PODS, model.STRANDS_VOLUMES):
        change = model.ProposedChange("Any", {}, side_effects=(model.SideEffect(code),))
        assert change.tier == model.TIER_DESTRUCTIVE and changes.CATEGORY[change.tier] == "Destructive"
    rolls = model.ProposedChange("Any", {}, side_effects=(model.SideEffect(model.ROLLS_WORKLOAD),))
    nodes = model.ProposedChange("Any", {}, side_effects=(model.SideEffect(model.DELETES_NODES),))
    assert (rolls.tier, nodes.tier) == (model.TIER_TEMPLATE, model.TIER_NO_POD_CHANGE)
    # moving a replacement twice deletes nothing and edits no template: StageCordons ranks first
    twice = model.ProposedChange(model.STAGE_CORDONS, {"nodes": ["a1", "b1"]},
                                 side_effects=(model.SideEffect(model.MOVES_PODS_TWICE, (), {"pods": 2}),))
    assert not twice.side_effects[0].destructive and twice.tier == model.TIER_NO_POD_CHANGE


def test_one_new_node_builder():
    template = model.Node("c1", {ZONE: "c", model.HOSTNAME_KEY: "c1"}, unschedulable=True,
                          taints=(model.Taint(model.UNSCHEDULABLE_TAINT_KEY),), allocatable={"cpu": 4000},
                          created="2026-01-01T00:00:00Z")
    made = model.new_node_like(template, {"c1", "c1-new"})
    assert (made.name, made.labels, made.unschedulable, made.taints, made.allocatable, made.created) == (
        "c1-new2", {ZONE: "c", model.HOSTNAME_KEY: "c1-new2"}, False, (), {"cpu": 4000}, "")


def test_readme_lists_every_action_with_its_parameters_and_old_names():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## What-if vocabulary", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.M)}
    assert set(rows) == set(model.ACTION_PARAMETERS)
    for action, params in model.ACTION_PARAMETERS.items():
        cells = rows[action].split(" | ")
        for p in params:
            assert f"`{p}`" in cells[3], (action, p)
        olds = [o for command in changes.OLD_PARAMS.values() for o in command.get(action, {})]
        olds += [o for command in changes.OLD_ACTIONS.values() for a, o in command.items() if a == action]
        for old in olds:
            assert f"`{old}`" in cells[4], (action, old)
    assert "`count`" in section


def test_deleting_nodes_takes_away_the_same_pods_in_both_commands():
    """A DaemonSet or mirror pod goes with its node; a pod left in place for another reason (a
    PodDisruptionBudget, kubectl's refusal) is taken away: why-pending's DeleteNodes and
    drain-safe's DeleteDrainedNodes count alike."""
    from conftest import make_node, make_pod
    from pending_cases import index_of

    from kubectl_tspread.views.drain.remedies import _Lookups
    from kubectl_tspread.views.fixes_effects import lost_pods

    agent = make_pod("agent", node="a1", owner="DaemonSet/agent")
    static = model.Pod("kube-system", "proxy-a1", node_name="a1", phase="Running", mirror=True)
    held = make_pod("db-0", node="a1", owner="StatefulSet/db")
    snap = model.Snapshot(nodes=(make_node("a1", zone="a"),), pods=(agent, static, held))
    assert [p.key for p in lost_pods(index_of(snap), ["a1"])] == [held.key]
    skipped = tuple(drain_model.Skipped(p.namespace, p.name, "a1", reason)
                    for p, reason in ((agent, "DaemonSetPod"), (static, "MirrorPod"), (held, "PdbBlocks")))
    step = drain_model.Step(1, ("a1",), ("a1",), (), skipped, (), (), False)
    plan = drain_model.DrainPlan(("a1",), False, (step,), (), ())
    assert _Lookups(snap).left_on(plan, ["a1"]) == (held.key,)
