"""Each command says what its answer rests on: kinds it depends on that the input lacked are one
`warning:` line on stderr and a MissingKinds entry in every JSON/YAML document; `dump` writes
exactly the kinds the commands read, and reads back through --from-file to the same answers."""

from __future__ import annotations

import json

import pytest
import yaml

from apiobjects import as_list, node_obj, pod_obj, spread_obj, workload_obj
from conftest import make_node, make_pod, make_snapshot
from fakeapi import FakeApiServer, token_user, write_kubeconfig
from kubectl_tspread.views import inputs
from kubectl_tspread.cli import main
from kubectl_tspread.model import Volume
from kubectl_tspread.snapshot.kinds import DUMP_KINDS


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _rs_pod(name, node=None, **kw):
    return make_pod(name, node=node, labels={"app": "web"}, owner="ReplicaSet/web-1", **kw)


@pytest.mark.parametrize("command, kinds_read, want", [
    ("drain-safe", {"Node", "Pod", "ReplicaSet", "Deployment"}, ["PodDisruptionBudget", "Service"]),
    ("distribution", {"Node", "Pod", "ReplicaSet", "Deployment"}, ["Service"]),
    ("why-pending", {"Node", "Pod", "ReplicaSet", "Service"}, []),
    ("drain-safe", {"Node", "Pod", "ReplicaSet", "Service", "PodDisruptionBudget"}, []),
], ids=["dump of nodes,pods,rs,deploy: drain-safe lacks PDBs and Services",
        "the same dump: distribution lacks Services for the default constraints",
        "why-pending needs no PDBs", "a complete dump lacks nothing"])
def test_missing_kinds_per_command(command, kinds_read, want):
    snap = make_snapshot([make_node("n1", zone="a")], [_rs_pod("web-1", node="n1")],
                         kinds_read=frozenset(kinds_read))
    assert inputs.missing_kinds(snap, command) == want


def test_conditional_kinds_follow_the_pods():
    claim = (Volume("data", pvc="data-0"),)
    sts = make_pod("db-0", node="n1", owner="StatefulSet/db", volumes=claim)
    snap = make_snapshot([make_node("n1", zone="a")], [sts], kinds_read=frozenset({"Node", "Pod"}))
    assert inputs.missing_kinds(snap, "distribution") == ["Service", "StatefulSet"]
    assert inputs.missing_kinds(snap, "why-pending") == [
        "PersistentVolume", "PersistentVolumeClaim", "Service", "StatefulSet", "StorageClass"]
    # records built in code (or the demo) read everything
    assert inputs.missing_kinds(make_snapshot([make_node("n1")], [sts]), "drain-safe") == []


def _dump_without_services(tmp_path):
    objs = [node_obj("a0", zone="a"), node_obj("b0", zone="b"),
            workload_obj("ReplicaSet", "web-1", {"app": "web"}),
            pod_obj("web-1-x", node="a0", labels={"app": "web"}, owner=("ReplicaSet", "web-1")),
            pod_obj("web-1-y", labels={"app": "web"}, owner=("ReplicaSet", "web-1"), cpu="64")]
    path = tmp_path / "nodes-pods-rs.json"
    path.write_text(json.dumps(as_list(objs)))
    return str(path)


@pytest.mark.parametrize("command", ["distribution", "why-pending"])
@pytest.mark.parametrize("fmt", ["table", "json", "yaml"])
def test_a_dump_without_a_needed_kind_warns_once_and_says_so_in_the_document(capsys, tmp_path, command, fmt):
    code, out, err = run(capsys, command, "--from-file", _dump_without_services(tmp_path), "-o", fmt)
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: the input holds no Service (")
    assert "kubectl tspread dump -A" in lines[0]
    if fmt != "table":
        doc = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert doc["warnings"] == [{"code": "MissingKinds", "kinds": ["Service"], "message": lines[0][len("warning: "):]}]


def test_a_complete_dump_has_no_warning_and_an_empty_warnings_list(capsys, tmp_path):
    code, out, err = run(capsys, "dump", "--demo", "-A")
    path = tmp_path / "cluster.json"
    path.write_text(out)
    code, out, err = run(capsys, "distribution", "-A", "--from-file", str(path), "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["warnings"] == []


def _live(api, tmp_path):
    return write_kubeconfig(str(tmp_path / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                            {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")


def _claiming_cluster():
    pod = pod_obj("db-0", labels={"app": "db"}, spread=[spread_obj(match_labels={"app": "db"})])
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}]
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-0", "namespace": "default"},
           "spec": {"volumeName": "pv-0", "storageClassName": "gp3"}, "status": {"phase": "Bound"}}
    return [node_obj("a0", zone="a"), pod, pvc]


def test_live_kind_listed_empty_is_not_missing_but_a_403_is(capsys, tmp_path, env):
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*_claiming_cluster())  # no PVs, no StorageClasses: listed and empty
        code, out, err = run(capsys, "why-pending", "--kubeconfig", _live(api, tmp_path), "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["warnings"] == []
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*_claiming_cluster())
        api.fail("*/persistentvolumes", 403, times=None)
        code, out, err = run(capsys, "why-pending", "--kubeconfig", _live(api, tmp_path), "-o", "json")
    assert code == 0
    lines = err.splitlines()
    assert lines[0].startswith("warning: skipped persistentvolumes: ")
    assert lines[1].startswith("warning: the input holds no PersistentVolume (") and len(lines) == 2
    assert json.loads(out)["warnings"][0]["kinds"] == ["PersistentVolume"]


# -- dump ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, load", [("json", json.loads), ("yaml", yaml.safe_load)])
def test_dump_round_trip_gives_the_same_answers(capsys, tmp_path, fmt, load):
    code, out, err = run(capsys, "dump", "--demo", "-A", "-o", fmt)
    assert (code, err) == (0, "")
    doc = load(out)
    assert (doc["apiVersion"], doc["kind"]) == ("v1", "List")
    kinds = {o["kind"] for o in doc["items"]}
    assert kinds <= set(DUMP_KINDS) and "Namespace" not in kinds  # the demo has Namespaces: left out
    assert {"Node", "Pod", "ReplicaSet", "StatefulSet", "PodDisruptionBudget", "Service"} <= kinds
    path = tmp_path / f"cluster.{fmt}"
    path.write_text(out)
    for args in (["distribution", "-A"], ["why-pending", "-A", "-o", "json"],
                 ["why-pending", "pod/notifications-hbwg8j56n9-mbkxz", "-n", "shop"],
                 ["distribution", "deploy/inventory", "-n", "shop", "--timeline"]):
        demo = run(capsys, *args, "--demo")
        dumped = run(capsys, *args, "--from-file", str(path))
        assert dumped[0] == demo[0] and dumped[2] == "" and dumped[1] == demo[1], args


def test_dump_from_files_keeps_only_the_kinds_the_commands_read(capsys, tmp_path):
    objs = [node_obj("a0", zone="a"), pod_obj("web-1", node="a0"), pod_obj("done", node="a0", phase="Succeeded"),
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}]
    objs[1]["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    src = tmp_path / "mixed.yaml"
    src.write_text(yaml.safe_dump_all(objs))
    code, out, err = run(capsys, "dump", "--from-file", str(src))
    assert (code, err) == (0, "")
    items = json.loads(out)["items"]
    assert [(o["kind"], o["metadata"]["name"]) for o in items] == [("Node", "a0"), ("Pod", "web-1")]
    assert "managedFields" not in items[1]["metadata"]


def test_dump_live_lists_every_kind_and_skips_a_hidden_optional_one(capsys, tmp_path, env):
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*_claiming_cluster())
        api.fail("*/events", 403, times=None)
        code, out, err = run(capsys, "dump", "--kubeconfig", _live(api, tmp_path), "-A")
        listed = {r.path.rsplit("/", 1)[-1] for r in api.logged("GET")}
    assert code == 0 and err.startswith("warning: skipped events: ") and err.count("\n") == 1
    assert {"nodes", "pods", "poddisruptionbudgets", "statefulsets", "persistentvolumeclaims"} <= listed
    items = json.loads(out)["items"]
    assert [(o["apiVersion"], o["kind"]) for o in items] == [("v1", "Node"), ("v1", "Pod"),
                                                               ("v1", "PersistentVolumeClaim")]


def test_dump_refuses_two_sources_with_one_error_line(capsys):
    code, out, err = run(capsys, "dump", "--demo", "--from-file", "x.json")
    assert code == 2 and out == "" and err.startswith("error: --demo and --from-file cannot be used together")


def test_a_live_dump_says_what_it_listed_and_the_servers_version(capsys, tmp_path, env):
    """A cluster without PVs or StorageClasses, dumped and read back: not missing them (they were
    listed empty), and the answers follow the server's minor (1.33 names the taint)."""
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*_claiming_cluster())
        api.git_version = "v1.33.7"
        code, out, err = run(capsys, "dump", "-A", "--kubeconfig", _live(api, tmp_path))
    assert (code, err) == (0, "")
    annotations = json.loads(out)["metadata"]["annotations"]
    assert annotations["tspread.dev/kube-version"] == "v1.33.7"
    assert "PersistentVolume" in annotations["tspread.dev/kinds-read"].split(",")
    path = tmp_path / "cluster.json"
    path.write_text(out)
    code, out, err = run(capsys, "why-pending", "-A", "-o", "json", "--from-file", str(path))
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["warnings"] == [] and doc["schedulerVersion"] == "1.33"
    # the same objects without the annotations: the kinds without objects are missing again
    bare = json.loads(path.read_text())
    del bare["metadata"]["annotations"]
    path.write_text(json.dumps(bare))
    code, out, err = run(capsys, "why-pending", "-A", "-o", "json", "--from-file", str(path))
    assert code == 0 and err.startswith("warning: the input holds no PersistentVolume")
    assert json.loads(out)["schedulerVersion"] == "1.37"
