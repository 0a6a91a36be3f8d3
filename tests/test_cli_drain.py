"""`kubectl tspread drain-safe` (plan mode) end to end through main(): dumps and --demo, exit codes,
stdout and stderr apart, JSON and YAML views of the DrainPlan."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from apiobjects import HOST, ZONE, as_dump, as_list, node_obj, pod_obj, spread_obj, workload_obj
from kubectl_tspread.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _cluster(policy: str = "Ignore", extra=()) -> dict:
    nodes = [node_obj(n, zone=n[0]) for n in ("a1", "a2", "b1", "b2", "c1", "c2")]
    rs = workload_obj("ReplicaSet", "web-5d8f", {"app": "web"})
    pods = [pod_obj(f"web-5d8f-{n}", node=n, labels={"app": "web", "pod-template-hash": "5d8f"},
                    spread=[spread_obj(nodeTaintsPolicy=policy)], owner=("ReplicaSet", "web-5d8f"))
            for n in ("a1", "a2", "b1", "b2", "c1", "c2")]
    return as_dump(nodes + [rs] + pods + list(extra))


@pytest.fixture
def dump(tmp_path):
    def write(doc=None, name="cluster.json"):
        p = tmp_path / name
        p.write_text(json.dumps(doc if doc is not None else _cluster()))
        return str(p)
    return write


def test_safe_plan_exits_0_with_a_table_on_stdout(capsys, dump):
    code, out, err = run(capsys, "drain-safe", "a1", "--from-file", dump())
    assert (code, err) == (0, "")
    # the verdict comes first, then the summary by workload, then the step table (issue 57: the
    # verdict of a big plan was thousands of lines down)
    assert out.startswith("SAFE: 1 step(s) drain a1")
    assert "\nSTEP   NODES   EVICT" in out and "default/web-5d8f-a1" in out


def test_whole_zone_under_ignore_exits_3_and_names_the_trap(capsys, dump):
    code, out, err = run(capsys, "drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--from-file", dump())
    assert (code, err) == (3, "")
    assert "UNSAFE" in out and "CordonedDomainTrap:" in out
    assert "fix (verified, makes the plan safe): set nodeTaintsPolicy: Honor" in out


def test_the_remedies_are_verified_in_forked_children_with_the_answer_of_one_process(capsys, dump, monkeypatch):
    """drain-safe hands plan_drain the cli's forked workers (cli/workers.py): children verify
    the remedies; TSPREAD_NO_FORK=1 starts none, and prints the same bytes."""
    from kubectl_tspread.cli import workers

    started, real = [], workers.Forks.start

    def start(self, fn):
        started.append(fn)
        return real(self, fn)

    monkeypatch.setattr(workers.Forks, "start", start)
    monkeypatch.setattr(workers, "available", lambda: os.environ.get("TSPREAD_NO_FORK") != "1")  # any CPU count
    args = ("drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--from-file", dump())
    monkeypatch.delenv("TSPREAD_NO_FORK", raising=False)
    forked = run(capsys, *args)
    assert forked[0] == 3 and "fix (verified" in forked[1] and started
    monkeypatch.setenv("TSPREAD_NO_FORK", "1")
    del started[:]
    assert run(capsys, *args) == forked and not started


def test_whole_zone_under_honor_is_safe(capsys, dump):
    code, out, _ = run(capsys, "drain-safe", "-l", "topology.kubernetes.io/zone=a", "--from-file",
                       dump(_cluster("Honor")))
    assert code == 0 and "SAFE: 2 step(s)" in out


def test_json_follows_the_drainplan_contract_and_yaml_agrees(capsys, dump):
    path = dump()
    code, out, err = run(capsys, "drain-safe", "a1", "a2", "--from-file", path, "-o", "json")
    assert (code, err) == (3, "")
    doc = json.loads(out)
    assert (doc["apiVersion"], doc["kind"], doc["nodes"], doc["safe"]) == ("tspread/v1alpha1", "DrainPlan",
                                                                         ["a1", "a2"], False)
    step = doc["steps"][0]
    assert set(step) >= {"step", "nodes", "evictions", "skipped", "constraintsAfter", "pdbs"}
    ev = step["evictions"][0]
    assert set(ev) >= {"namespace", "name", "workload", "predictedNode", "acceptingDomains", "tiedNodes"}
    assert ev["workload"] == "ReplicaSet/web-5d8f"
    c = step["constraintsAfter"][0]
    assert set(c) >= {"workload", "topologyKey", "maxSkew", "distribution", "skew", "status"}
    s = doc["stranded"][0]
    # cordon-first: a1 and a2 are cordoned at step 1, where a1's replacement strands
    assert (s["workload"], s["step"], s["reason"]) == ("ReplicaSet/web-5d8f", 1, "CordonedDomainTrap")
    assert (doc["cordonFirst"], doc["cordonedAtStep"], doc["evictedAgain"]) == (True, {"a1": 1, "a2": 1}, 0)
    assert [st["cordon"] for st in doc["steps"]] == [["a1", "a2"], []]
    f = doc["findings"][0]
    assert f["code"] == "CordonedDomainTrap" and f["message"]
    assert all(r["verified"] is True and r["text"] for r in f["remedies"])
    code, out_yaml, _ = run(capsys, "drain-safe", "a1", "a2", "--from-file", path, "-o", "yaml")
    assert yaml.safe_load(out_yaml) == doc


def test_kubectl_refusals_show_kubectls_message(capsys, dump):
    bare = pod_obj("debug", node="a1", labels={"run": "debug"})
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", dump(_cluster(extra=[bare])))
    assert code == 3
    assert ("kubectl drain would fail: cannot delete Pods that declare no controller (use --force to override): "
            "default/debug") in out
    assert "fix (verified, makes the plan safe): rerun with --force" in out
    # the finding words it once (it read "cannot delete cannot delete Pods …")
    assert ("UnmanagedPod: kubectl drain refuses: cannot delete Pods that declare no controller (use --force to "
            "override): default/debug.") in out and "cannot delete cannot delete" not in out
    code, out, _ = run(capsys, "drain-safe", "a1", "--force", "--from-file", dump(_cluster(extra=[bare])))
    assert code == 0


def test_pdb_from_a_dump_caps_a_step(capsys, dump):
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}},
           "status": {"disruptionsAllowed": 0, "currentHealthy": 6, "desiredHealthy": 6, "expectedPods": 6}}
    code, out, _ = run(capsys, "drain-safe", "b1", "--from-file", dump(_cluster(extra=[pdb])), "-o", "json")
    doc = json.loads(out)
    assert code == 3
    assert [f["code"] for f in doc["findings"]] == ["PdbBlocks"]


@pytest.mark.parametrize("args,code,message", [
    (["drain-safe", "zz"], 1, 'error: node "zz" not found'),
    (["drain-safe"], 2, "error: name the nodes to drain"),
    (["drain-safe", "--domain", "zone"], 2, "is not KEY=VALUE"),
    (["drain-safe", "a1", "--yes"], 2, "error: --yes, --dry-run and --log only apply with --execute"),
], ids=["unknown node is an error", "no target is a usage error", "malformed --domain",
        "execute-only flag without --execute"])
def test_errors_are_one_line_on_stderr(capsys, dump, args, code, message):
    got, out, err = run(capsys, *args, "--from-file", dump())
    assert got == code and out == ""
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("source", [["--from-file"], ["--demo"]], ids=["--execute on a dump", "--execute on the demo"])
def test_execute_refuses_an_offline_source_before_reading_or_asking(capsys, dump, tmp_path, monkeypatch, source):
    # a kubeconfig that would be used if the command went on: the refusal must come first
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nowhere"))
    args = source + [dump()] if source == ["--from-file"] else source
    code, out, err = run(capsys, "drain-safe", "a1", "--execute", "--yes", *args)
    assert (code, out) == (2, "")
    assert err == ("error: --execute drains the cluster of your kubeconfig, so it plans from that cluster too: "
                   "drop --demo/--from-file (run without --execute to plan offline)\n")


def test_demo_zone_c_is_cordoned_and_has_pdbs(capsys):
    code, out, err = run(capsys, "drain-safe", "--demo", "--domain", "topology.kubernetes.io/zone=us-east-2c",
                         "--ignore-daemonsets", "-o", "json")
    assert err == "" and code == 3
    doc = json.loads(out)
    assert doc["alreadyCordoned"] == ["node-c1", "node-c2", "node-c3"]
    assert {"CordonedDomainTrap", "PdbBlocks"} <= {f["code"] for f in doc["findings"]}
    assert all(s["cordon"] == [] for s in doc["steps"])


def test_demo_without_ignore_daemonsets_is_refused_like_kubectl(capsys):
    code, out, _ = run(capsys, "drain-safe", "--demo", "node-b1")
    assert code == 3
    assert "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)" in out


def test_help_names_every_flag(capsys):
    code, out, _ = run(capsys, "drain-safe", "--help")
    assert code == 0
    for flag in ("--domain", "--ignore-daemonsets", "--force", "--delete-emptydir-data", "--max-parallel",
                 "--execute", "--yes", "--dry-run", "--timeout", "--log"):
        assert flag in out


def test_collector_stays_off_through_the_output_and_comes_back(capsys, dump, monkeypatch):
    """The plan's objects are not walked by a collection the output would trigger: the
    collector is off while the plan is printed, and on again once the command returns."""
    import gc

    from kubectl_tspread.cli import drain as cli_drain

    seen = []
    real = cli_drain.render_plan

    def spy(plan, out, body=None):
        seen.append(gc.isenabled())
        return real(plan, out, body)

    monkeypatch.setattr(cli_drain, "render_plan", spy)
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", dump())
    assert code == 0 and "SAFE" in out
    assert seen == [False] and gc.isenabled()
    # the plan's objects were frozen before it came back: no collection walks them at exit
    assert gc.get_freeze_count() > frozen


@pytest.mark.parametrize("wide", [False, True])
def test_the_body_rendered_while_remedies_are_verified_is_the_tables_own(capsys, dump, monkeypatch, wide):
    """An unsafe plan's table up to its findings is rendered before the remedies are verified
    (plan_drain's before_remedies), while the re-plans run; what is printed is byte for byte
    plan_text of the plan returned, remedies included."""
    from kubectl_tspread.cli import drain as cli_drain
    from kubectl_tspread.views.drain import remedies
    from kubectl_tspread.render.drain import plan_text

    made_before, got = [], []
    real_attach, real_render = remedies.attach_remedies, cli_drain.render_plan

    def attach(*args, **kwargs):
        made_before.append(early[0].text is not None)
        return real_attach(*args, **kwargs)

    early = []
    real_early = cli_drain._EarlyBody

    def make_early(out):
        early.append(real_early(out))
        return early[-1]

    def render(plan, out, body=None):
        got.append((plan, body))
        return real_render(plan, out, body)

    monkeypatch.setattr(remedies, "attach_remedies", attach)
    monkeypatch.setattr(cli_drain, "_EarlyBody", make_early)
    monkeypatch.setattr(cli_drain, "render_plan", render)
    args = ["drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--from-file", dump()]
    code, out, _ = run(capsys, *(args + (["-o", "wide"] if wide else [])))
    assert code == 3 and made_before == [True]
    (plan, body), = got
    assert body and out.startswith(body) and "fix (verified" in out[len(body):] and "fix (" not in body
    assert out == plan_text(plan, wide=wide)


def test_an_early_body_is_used_only_for_the_plan_it_was_made_for():
    """A body made for one plan is never printed for another that differs in more than its
    findings (its cordoned nodes, its verdict: other objects), nor for -o json; under colors it
    is the colored body."""
    from dataclasses import replace

    from kubectl_tspread.cli import drain as cli_drain
    from kubectl_tspread.model.plan import DrainPlan
    from kubectl_tspread.cli.options import OutputOptions

    plan = DrainPlan(nodes=("a1",), safe=False, steps=(), stranded=(), findings=())
    early = cli_drain._EarlyBody(OutputOptions(color="never"))
    assert early.text_for(plan) is None  # nothing made yet
    early(plan)
    assert early.text_for(replace(plan, findings=())) == early.text
    assert early.text is not None and "UNSAFE" in early.text
    assert early.text_for(replace(plan, already_cordoned=("a1",))) is None
    assert early.text_for(replace(plan, safe=True)) is None
    colored = cli_drain._EarlyBody(OutputOptions(color="always"))
    colored(plan)
    assert colored.text_for(plan) == "\x1b[1;31mUNSAFE\x1b[0m" + early.text[len("UNSAFE"):]
    other = cli_drain._EarlyBody(OutputOptions(output="json", color="never"))
    other(plan)
    assert other.text is None and other.text_for(plan) is None


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_streamed_output_is_the_whole_documents_text(capsys, dump, fmt):
    """-o json|yaml writes the plan step by step (structured.pieces): the same bytes as the
    whole document dumped at once, on a plan of several steps with strandings and findings."""
    from kubectl_tspread.model.plan import DRAIN_KINDS, PlanOptions
    from kubectl_tspread.views.drain.plan import plan_drain, resolve_targets
    from kubectl_tspread.views.drain.remedy_effects import with_rerun_hints
    from kubectl_tspread.cli.options import SourceOptions
    from kubectl_tspread.render import structured
    from kubectl_tspread.render.drain import drain_plan_view
    from kubectl_tspread.snapshot import load_snapshot

    path = dump()
    code, out, _ = run(capsys, "drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--from-file", path,
                       "-o", fmt)
    snap = load_snapshot(SourceOptions(from_file=(path,), all_namespaces=True), DRAIN_KINDS)
    zone = ("topology.kubernetes.io/zone", "a")
    # the command adds the narrower selection to remedies its --domain would undo (with_rerun_hints)
    plan = with_rerun_hints(plan_drain(snap, resolve_targets(snap, (), None, zone), PlanOptions()), snap, None, zone)
    assert code == 3 and len(plan.steps) >= 2 and plan.stranded and plan.findings
    assert out == structured.dump(drain_plan_view(plan), fmt)


# --- verdicts agree with the tables (issue 57, item 3) ---------------------------------

def test_safe_verdict_names_a_constraint_that_was_already_violated(capsys):
    """The demo's inventory is at skew 3 before the drain (VIOLATED in the table); draining
    node-a3 takes it to 2: SAFE (never worse), and the sentence says so instead of "no
    constraint goes past maxSkew" next to a VIOLATED row."""
    code, out, _ = run(capsys, "drain-safe", "node-a3", "--demo", "--ignore-daemonsets")
    assert code == 0
    row = next(line for line in out.splitlines() if "Deployment/inventory" in line and "maxSkew=1" in line)
    assert row.split()[-1] == "VIOLATED"
    verdict = next(line for line in out.splitlines() if line.startswith("SAFE"))
    assert "Deployment/inventory was already VIOLATED (zone maxSkew 1), skew 3 → 2" in verdict
    assert "or gets worse than before the drain" in verdict
    code, out, _ = run(capsys, "drain-safe", "node-a3", "--demo", "--ignore-daemonsets", "-o", "json")
    doc = json.loads(out)
    assert doc["alreadyViolated"] == [{"workload": "Deployment/inventory", "namespace": "shop",
                                       "topologyKey": "topology.kubernetes.io/zone", "maxSkew": 1,
                                       "skewBefore": 3, "skewAfter": 2}]
    assert "already VIOLATED" in doc["verdict"]


def test_safe_verdict_without_violations_names_none(capsys, dump):
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", dump(), "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["alreadyViolated"] == [] and "already VIOLATED" not in doc["verdict"]


def test_help_and_readme_define_every_status_word(capsys):
    from pathlib import Path

    code, out, _ = run(capsys, "drain-safe", "--help")
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("## drain-safe"):readme.index("## Shell completion")]
    for word in ("SAFE (", "UNSAFE (", "OK (", "AT LIMIT (", "VIOLATED (", "DRIFTED (", "OVER", "<stranded>",
                 "<deleted, not replaced>"):
        assert word in out, word
    for word in ("SAFE when", "UNSAFE", "OK (", "AT LIMIT (", "VIOLATED (", "DRIFTED (", "OVER LIMIT (",
                 "`<stranded>`", "`<deleted, not replaced>`"):
        assert word in section, word


# --- "verified" says what was verified; side effects and their ranking (issue 57, items 2, 1) ---

def _pdb(name: str = "web", allowed: int = 0, labels=None) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"maxUnavailable": allowed, "selector": {"matchLabels": labels or {"app": "web"}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 6, "desiredHealthy": 6, "expectedPods": 6}}


def _lone_zone_c() -> dict:
    """Zones a and b with two nodes each, zone c with one (c1): a web pod per node, zone spread
    maxSkew 1 under Ignore, a PDB that allows no disruption. Draining c1: the PDB blocks the
    eviction, and once it allows one, the replacement meets the cordoned zone c (0 pods)."""
    names = ("a1", "a2", "b1", "b2", "c1")
    nodes = [node_obj(n, zone=n[0]) for n in names]
    pods = [pod_obj(f"web-5d8f-{n}", node=n, labels={"app": "web", "pod-template-hash": "5d8f"},
                    spread=[spread_obj()], owner=("ReplicaSet", "web-5d8f")) for n in names]
    return as_list(nodes + [workload_obj("ReplicaSet", "web-5d8f", {"app": "web"})] + pods + [_pdb()])


def test_a_pdb_fix_that_leaves_the_plan_unsafe_says_what_it_verified_and_what_comes_next(capsys, dump):
    path = dump(_lone_zone_c())
    code, out, _ = run(capsys, "drain-safe", "c1", "--from-file", path)
    assert code == 3
    line = next(x for x in out.splitlines() if "let PodDisruptionBudget default/web allow 1" in x)
    # before: "fix (verified): …", which read as "makes the drain safe"
    assert line.startswith("  fix (verified: unblocks the eviction; the plan stays unsafe: ")
    assert "CordonedDomainTrap" in line
    code, out, _ = run(capsys, "drain-safe", "c1", "--from-file", path, "-o", "json")
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "PdbBlocks"]
    r = next(r for r in f["remedies"] if r["action"] == "RaisePdbBudget")
    assert (r["verified"], r["makesPlanSafe"], r["verifies"]) == (True, False, "EvictionAllowed")
    assert r["then"]["code"] == "CordonedDomainTrap" and r["then"]["workload"] == "ReplicaSet/web-5d8f"
    assert r["sideEffects"] == [{"code": "ReducesAvailability", "objects": ["default/web"],
                                 "message": "PodDisruptionBudget default/web then lets more of its pods be down "
                                            "at once", "details": {"kind": "PodDisruptionBudget"}}]


def test_a_fix_that_makes_the_plan_safe_verifies_plansafe(capsys, dump):
    code, out, _ = run(capsys, "drain-safe", "b1", "--from-file", dump(_cluster(extra=[_pdb()])), "-o", "json")
    (f,) = json.loads(out)["findings"]
    (r,) = f["remedies"]
    assert (r["verifies"], r["makesPlanSafe"], r["then"]) == ("PlanSafe", True, None)
    assert r["outcome"] == "verified, makes the plan safe"


def test_candidates_past_the_replan_allowance_are_not_checked_never_no_remedy(capsys, dump, monkeypatch):
    """With the allowance spent before a finding's candidates are re-planned, the finding says
    "not checked" and lists them apart (JSON uncheckedRemedies); "no remedy the simulation
    confirms" is kept for candidates that were re-planned and failed."""
    from kubectl_tspread.views.drain import remedies

    monkeypatch.setattr(remedies, "MIN_REMEDY_REPLANS", 1)
    monkeypatch.setattr(remedies, "REMEDY_REPLANS", 1)
    bare = pod_obj("debug", node="a1", labels={"run": "debug"})
    path = dump(_cluster(extra=[bare, _pdb()]))
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", path)
    assert code == 3
    assert "no remedy the simulation confirms" not in out
    assert "  not checked (the re-plan allowance was spent): rerun with --force" in out
    assert "  no candidate was checked: none can be offered as a fix yet" in out
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", path, "-o", "json")
    by_code = {f["code"]: f for f in json.loads(out)["findings"]}
    assert [r["verifies"] for r in by_code["PdbBlocks"]["remedies"]] == ["EvictionAllowed"]
    unmanaged = by_code["UnmanagedPod"]
    assert unmanaged["remedies"] == [] and unmanaged["candidatesFailed"] == 0
    (u,) = unmanaged["uncheckedRemedies"]
    assert (u["action"], u["verified"], u["verifies"], u["outcome"]) == ("Flag", False, None, None)
    # unchecked, it still says what it would do: --force deletes a pod nothing recreates
    assert u["sideEffects"][0]["code"] == "DeletesPods" and u["sideEffects"][0]["objects"] == ["default/debug"]


def _zone_a_with_daemonset_and_local_volume() -> dict:
    ds = workload_obj("DaemonSet", "agent", {"app": "agent"})
    agents = [pod_obj(f"agent-{n}", node=n, labels={"app": "agent"}, owner=("DaemonSet", "agent"))
              for n in ("a1", "a2")]
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local-a1"},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                   "claimRef": {"namespace": "default", "name": "data-0"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "kubernetes.io/hostname", "operator": "In", "values": ["a1"]}]}]}}},
          "status": {"phase": "Bound"}}
    zonal = [{"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"ebs-{z}"},
              "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                  {"key": ZONE, "operator": "In", "values": [z]}]}]}}}} for z in ("a", "b")]
    return _cluster(extra=[ds, *agents, pv, *zonal])


def test_every_remedy_carries_its_side_effects_and_destructive_ones_rank_last(capsys, dump):
    path = dump(_zone_a_with_daemonset_and_local_volume())
    # both nodes of zone a in one step: with every target cordoned first, deleting the drained
    # nodes one step at a time leaves the other one a closed domain (cordon-first)
    code, out, _ = run(capsys, "drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--ignore-daemonsets",
                       "--max-parallel", "2", "--from-file", path, "-o", "json")
    assert code == 3
    f = next(f for f in json.loads(out)["findings"] if f["code"] == "CordonedDomainTrap")
    by_action = {r["action"]: r for r in f["remedies"]}
    assert {"DeleteDrainedNodes", "SetNodeTaintsPolicyHonor"} <= set(by_action)
    honor = by_action["SetNodeTaintsPolicyHonor"]["sideEffects"]
    assert honor == [{"code": "RollsWorkload", "objects": ["ReplicaSet/web-5d8f"], "details": {"pods": 6},
                      "count": 6,  # the old key, kept for one minor version
                      "message": "a template edit: rolls every pod of ReplicaSet/web-5d8f (6 pods replaced by a "
                                 "rolling update)"}]
    delete = {e["code"]: e["objects"] for e in by_action["DeleteDrainedNodes"]["sideEffects"]}
    # the DaemonSet pods left in place go with their nodes: no pod is taken away from a workload
    # (why-pending's DeleteNodes counts them alike)
    assert delete == {"DeletesNodes": ["a1", "a2"],
                      "StrandsVolumes": ["local-a1 (claim default/data-0)", "ebs-a"]}  # not ebs-b: zone b stays
    # no change to running pods, then template edits, then destructive actions
    rank = {"AddNode": 0, "RaisePdbBudget": 0, "SetNodeTaintsPolicyHonor": 1, "RaiseMaxSkew": 1,
            "DeleteDrainedNodes": 2}
    ranks = [rank[r["action"]] for r in f["remedies"]]
    assert ranks == sorted(ranks) and ranks[-1] == 2
    code, out, _ = run(capsys, "drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--ignore-daemonsets",
                       "--max-parallel", "2", "--from-file", path)
    assert "agent-a1" not in "".join(x for x in out.splitlines() if "side effect" in x)
    assert ("    side effect: strands 2 persistent volumes that only these nodes can mount: "
            "local-a1 (claim default/data-0), ebs-a (their pods cannot run anywhere else)") in out
    fixes = [x for x in out.splitlines() if x.startswith("  fix (")]
    assert "delete each drained Node object" in fixes[-1]


def test_delete_drained_nodes_of_empty_nodes_is_not_destructive():
    from kubectl_tspread.model.plan import DELETES_NODES, Remedy, SideEffect

    assert Remedy("DeleteDrainedNodes", {}, True, True, "PlanSafe", (SideEffect(DELETES_NODES, ("a1",)),)).tier == 0


# --- finding names that point at the cause (issue 57, item 8) --------------------------

def _volume_pinned_cluster() -> dict:
    """A StatefulSet pod in zone a whose bound volume lives in zone a; zone a's two nodes
    are drained: the other zones' nodes refuse it for its volume, not for room."""
    nodes = [node_obj(n, zone=n[0]) for n in ("a1", "a2", "b1", "b2", "c1", "c2")]
    sts = workload_obj("StatefulSet", "db", {"app": "db"})
    pod = pod_obj("db-0", node="a1", labels={"app": "db"}, owner=("StatefulSet", "db"))
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data-db-0", "namespace": "default",
                        "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
           "spec": {"volumeName": "pv-a", "storageClassName": "ebs"}, "status": {"phase": "Bound"}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a"},
          "spec": {"storageClassName": "ebs", "claimRef": {"namespace": "default", "name": "data-db-0"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": ZONE, "operator": "In", "values": ["a"]}]}]}}},
          "status": {"phase": "Bound"}}
    return as_dump(nodes + [sts, pod, pvc, pv])


def _anti_affinity_cluster() -> dict:
    nodes = [node_obj(n, zone=n[0]) for n in ("a1", "b1", "c1")]
    rs = workload_obj("ReplicaSet", "cache-1", {"app": "cache"})
    pods = []
    for n in ("a1", "b1", "c1"):
        p = pod_obj(f"cache-1-{n}", node=n, labels={"app": "cache"}, owner=("ReplicaSet", "cache-1"))
        p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": HOST}]}}
        pods.append(p)
    return as_dump(nodes + [rs] + pods)


@pytest.mark.parametrize("build,args,cause,words", [
    (_volume_pinned_cluster, ["--domain", "topology.kubernetes.io/zone=a"], "VolumeZoneConflict",
     "their volumes pin them to nodes that cannot take them"),
    (_anti_affinity_cluster, ["a1"], "PodAntiAffinity", "pod anti-affinity keeps them off every node"),
], ids=["volume pinned to the drained zone", "required pod anti-affinity on hostname"])
def test_a_stranding_not_caused_by_resources_is_named_by_its_cause(capsys, dump, build, args, cause, words):
    path = dump(build())
    code, out, _ = run(capsys, "drain-safe", *args, "--from-file", path)
    assert code == 3
    # before: "NoCapacity: … no node passes the scheduler's filters …"
    assert f"\n{cause}: " in out and words in out and "NoCapacity" not in out
    assert out.count(f": {cause}\n") >= 1  # the stranded line names it too
    code, out, _ = run(capsys, "drain-safe", *args, "--from-file", path, "-o", "json")
    doc = json.loads(out)
    (f,) = [f for f in doc["findings"] if f["severity"] == "error"]
    # the code JSON consumers read is kept; the cause is added
    assert (f["code"], f["cause"]) == ("NoCapacity", cause)
    assert {(s["reason"], s["cause"]) for s in doc["stranded"]} == {("NoCapacity", cause)}


def test_resources_keep_the_name_nocapacity(capsys, dump):
    nodes = [node_obj(n, zone=n[0], cpu="1") for n in ("a1", "b1")]
    rs = workload_obj("ReplicaSet", "big-1", {"app": "big"})
    pods = [pod_obj(f"big-1-{n}", node=n, labels={"app": "big"}, owner=("ReplicaSet", "big-1"), cpu="800m")
            for n in ("a1", "b1")]
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", dump(as_list(nodes + [rs] + pods)), "-o", "json")
    (f,) = json.loads(out)["findings"]
    assert code == 3 and (f["code"], f["cause"]) == ("NoCapacity", "NoCapacity")
    assert "no node has room" in f["message"]


def test_pdb_blocked_pods_are_counted_apart_from_stranded_ones(capsys):
    code, out, _ = run(capsys, "drain-safe", "--demo", "--domain", "topology.kubernetes.io/zone=us-east-2c",
                       "--ignore-daemonsets", "-o", "json")
    doc = json.loads(out)
    blocked = [s for s in doc["stranded"] if s["reason"] in ("PdbBlocks", "MultiplePdbs")]
    assert blocked and doc["pdbBlockedCount"] == len(blocked)
    assert doc["strandedCount"] == len(doc["stranded"]) - len(blocked)
    # before: "10 pod(s) of … would be stranded", PDB-blocked pods (which keep running) included
    assert (f"{doc['strandedCount']} pod(s) of Deployment/cart, Deployment/catalog, Deployment/checkout, "
            f"Deployment/inventory would be stranded; {len(blocked)} pod(s) of ") in doc["verdict"]
    assert "cannot be evicted (PodDisruptionBudget; they keep running)" in doc["verdict"]


def test_a_hostname_trap_names_the_nodes_that_hold_the_minimum_and_why(capsys, dump):
    taint = {"key": "ToBeDeletedByClusterAutoscaler", "value": "1700000000", "effect": "NoSchedule"}
    nodes = [node_obj(n, zone=n[0]) for n in ("a1", "a2", "b1", "b2")] + [node_obj("d1", zone="d", taints=[taint])]
    rs = workload_obj("ReplicaSet", "web-5d8f", {"app": "web"})
    pods = [pod_obj(f"web-5d8f-{n}", node=n, labels={"app": "web"}, spread=[spread_obj(HOST)],
                    owner=("ReplicaSet", "web-5d8f")) for n in ("a1", "a2", "b1", "b2")]
    path = dump(as_list(nodes + [rs] + pods))
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", path, "-o", "json")
    assert code == 3
    (f,) = [f for f in json.loads(out)["findings"] if f["code"] == "HostnameSpreadFull"]
    held = {h["node"]: h["why"] for h in f["details"]["minimumHeldBy"]}
    assert held == {"a1": "drained by this plan (cordoned, it stays a domain under nodeTaintsPolicy Ignore)",
                    "d1": "tainted ToBeDeletedByClusterAutoscaler (being scaled down)"}
    assert "The global minimum is held at 0 by a1 (drained by this plan" in f["message"]
    assert "d1 (tainted ToBeDeletedByClusterAutoscaler" in f["message"]


# --- readable at any size (issue 57, item 11) ------------------------------------------

def _many_workloads(zones=("a", "b", "c"), per_zone=12, workloads=20) -> dict:
    nodes = [node_obj(f"{z}{i}", zone=z) for z in zones for i in range(per_zone)]
    objs = []
    for w in range(workloads):
        app = f"app{w:02d}"
        objs.append(workload_obj("ReplicaSet", f"{app}-1", {"app": app}))
        for z in zones:
            for i in range(2):
                node = f"{z}{(w + i * 5) % per_zone}"
                objs.append(pod_obj(f"{app}-1-{node}-{i}", node=node, labels={"app": app},
                                    spread=[spread_obj(match_labels={"app": app}, mode="ScheduleAnyway")],
                                    owner=("ReplicaSet", f"{app}-1")))
    ds = workload_obj("DaemonSet", "agent", {"app": "agent"})
    agents = [pod_obj(f"agent-{n['metadata']['name']}", node=n["metadata"]["name"], labels={"app": "agent"},
                      owner=("DaemonSet", "agent")) for n in nodes]
    return as_dump(nodes + objs + [ds] + agents)


def test_a_whole_zone_plan_starts_with_its_verdict_and_a_short_summary(capsys, dump):
    path = dump(_many_workloads())
    code, out, _ = run(capsys, "drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--ignore-daemonsets",
                       "--from-file", path)
    lines = out.splitlines()
    assert code == 0 and len(lines) > 60
    assert lines[0].startswith("SAFE: 12 step(s) drain a0, ")
    # the summary keeps the first screen: eight quiet workloads, and a count of the others
    assert lines[2].split() == ["WORKLOAD", "EVICTED", "STRANDED", "NOT-EVICTABLE", "FINDINGS"]
    assert lines[11] == "… and 12 more workload(s) with evictions only (-o wide lists every one)"
    assert next(i for i, x in enumerate(lines) if x.startswith("STEP   NODES   EVICT")) < 20
    # one line per step for the DaemonSet pods --ignore-daemonsets leaves (was one line per pod)
    left = [x for x in lines if "DaemonSet pod(s) left in place" in x]
    assert len(left) == 12 and not any("not evicted" in x and "DaemonSetPod" in x for x in lines)
    assert left[0] == "step 1: 1 DaemonSet pod(s) left in place (--ignore-daemonsets): default/agent-" + \
        left[0].rsplit("agent-", 1)[1]
    code, out, _ = run(capsys, "drain-safe", "--domain", "topology.kubernetes.io/zone=a", "--ignore-daemonsets",
                       "--from-file", path, "-o", "wide")
    wide = out.splitlines()
    assert "more workload(s)" not in out and sum(x.startswith("ReplicaSet/app") for x in wide[:30]) == 20


def test_the_summary_groups_evictions_strandings_and_findings_by_workload(capsys):
    args = ["drain-safe", "--demo", "--domain", "topology.kubernetes.io/zone=us-east-2c", "--ignore-daemonsets"]
    code, out, _ = run(capsys, *args)
    lines = out.splitlines()
    assert lines[0].startswith("UNSAFE: ")
    assert lines[3].split() == ["Deployment/search", "0", "0", "3", "PdbBlocks"]
    assert lines[4].split() == ["Deployment/catalog", "1", "1", "1", "CordonedDomainTrap,", "PdbBlocks"]
    code, out, _ = run(capsys, *args, "-o", "json")
    summary = {r["workload"]: r for r in json.loads(out)["summary"]}
    assert summary["Deployment/search"] == {"workload": "Deployment/search", "evicted": 0, "stranded": 0,
                                            "notEvictable": 3, "findings": ["PdbBlocks"]}
    assert summary["Deployment/cart"]["stranded"] == 2 and summary["StatefulSet/orders-db"]["findings"] == []


@pytest.mark.parametrize("args,word,style", [
    (["node-a3"], "SAFE", "\x1b[1;32m"), (["node-b1"], "UNSAFE", "\x1b[1;31m")], ids=["safe green", "unsafe red"])
def test_color_always_colours_the_verdict_and_statuses(capsys, args, word, style):
    code, out, _ = run(capsys, "drain-safe", *args, "--demo", "--ignore-daemonsets", "--color", "always")
    assert out.startswith(f"{style}{word}\x1b[0m: ")
    code, plain, _ = run(capsys, "drain-safe", *args, "--demo", "--ignore-daemonsets", "--color", "never")
    assert "\x1b[" not in plain and plain.startswith(word)
    if word == "SAFE:":
        assert "\x1b[31mVIOLATED\x1b[0m" in out  # the inventory row, red like distribution's


# --- a remedy is never undone by the command line that produced it (issue 57, item 5) --

@pytest.mark.parametrize("selection", [["--domain", "topology.kubernetes.io/zone=a"],
                                       ["-l", "topology.kubernetes.io/zone=a"]], ids=["--domain", "-l"])
def test_a_node_to_add_that_the_selection_would_drain_names_the_narrower_selection(capsys, dump, selection):
    path = dump()
    code, out, _ = run(capsys, "drain-safe", *selection, "--from-file", path, "-o", "json")
    assert code == 3
    adds = [r for f in json.loads(out)["findings"] for r in f["remedies"] + f["uncheckedRemedies"]
            if r["action"] == "AddNode" and r["details"]["domain"] == "a"]
    assert adds
    for r in adds:
        assert r["details"]["matchedBy"] == f"{selection[0]} topology.kubernetes.io/zone=a"
        assert r["details"]["rerunNodes"] == ["a1", "a2"]
        assert r["text"].endswith("would drain that node too, so rerun naming the drained nodes instead (with your "
                                  "other flags): kubectl tspread drain-safe a1 a2")
    code, out, _ = run(capsys, "drain-safe", *selection, "--from-file", path)
    assert "kubectl tspread drain-safe a1 a2" in out


def test_nodes_named_on_the_command_line_need_no_narrower_selection(capsys, dump):
    code, out, _ = run(capsys, "drain-safe", "a1", "a2", "--from-file", dump(), "-o", "json")
    adds = [r for f in json.loads(out)["findings"] for r in f["remedies"] if r["action"] == "AddNode"]
    assert adds and all("matchedBy" not in r["details"] for r in adds)


def test_the_verdict_hook_for_missing_kinds_says_what_was_not_checked(capsys, dump):
    from kubectl_tspread.model.plan import DrainPlan
    from kubectl_tspread.render.drain import verdict_line

    plan = DrainPlan(nodes=("a1",), safe=True, steps=(), stranded=(), findings=(),
                     missing_kinds=("PodDisruptionBudget", "Namespace"))
    assert verdict_line(plan).startswith(
        "SAFE (PodDisruptionBudgets not checked: none in the input): 0 step(s) drain a1;")
    assert verdict_line(plan, ()).startswith("SAFE: 0 step(s)")


def test_the_plan_tables_fit_the_width_by_wrapping_lists_never_names(capsys, monkeypatch):
    """COLUMNS narrows the tables' list cells (DISTRIBUTION, FINDINGS); pod and workload names
    stay whole, and -o wide is never narrowed."""
    monkeypatch.setenv("COLUMNS", "90")
    args = ("drain-safe", "node-a3", "--demo", "--ignore-daemonsets")
    code, out, _ = run(capsys, *args)
    assert code == 0
    lines = out[out.index("Constraints after each step:"):].splitlines()[1:]
    table = lines[:next(i for i, line in enumerate(lines) if line.startswith("step "))]  # prose follows
    assert table and all(len(line) <= 90 for line in table), table
    assert any(line.startswith(" ") and "us-east-2" in line for line in table)  # a wrapped DISTRIBUTION
    assert "shop/recommendations-nfxv7n4fdz-q7t8p" in out and "Deployment/recommendations" in out
    code, wide, _ = run(capsys, *args, "-o", "wide")
    assert max(len(line) for line in wide.splitlines() if line.startswith("1 ")) > 90
