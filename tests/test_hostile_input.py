"""Issue 58, the input half: hostile dumps end quickly with exit 0-3, at most one `error:`
line naming what is wrong, and never half a document on stdout.

Each example of the issue is a case here, run through main() as a user runs the program
(a few through a child process: a FIFO or a device must not block the test either)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from apiobjects import as_dump, as_list, node_obj, pod_obj, spread_obj, workload_obj
from fakeapi import FakeApiServer, raw_node, raw_pod, token_user, write_kubeconfig
from kubectl_tspread.cli import main
from kubectl_tspread.model.errors import InputError
from kubectl_tspread.snapshot import files, jsonstream

COMMANDS = (["distribution", "-A"], ["why-pending", "-A"], ["drain-safe", "n0"])


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def assert_one_error(code: int, out: str, err: str, *wants: str) -> None:
    """Exit 1, nothing on stdout, exactly one line on stderr: `error: …` naming each of `wants`."""
    assert (code, out) == (1, ""), err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "unexpected" not in err and "Traceback" not in err, err
    for want in wants:
        assert want in err


def cluster() -> dict:
    nodes = [node_obj(f"n{i}", zone=z) for i, z in enumerate("aab")]
    deploy = workload_obj("Deployment", "web", {"app": "web"})
    rs = workload_obj("ReplicaSet", "web-5d8f", {"app": "web"}, owner=("Deployment", "web"))
    pods = [pod_obj(f"web-5d8f-{i}", node=n, labels={"app": "web", "pod-template-hash": "5d8f"},
                    spread=[spread_obj()], owner=("ReplicaSet", "web-5d8f"), created=f"2026-01-01T00:00:0{i}Z")
            for i, n in enumerate(("n0", "n1", "n2"))]
    pending = pod_obj("web-5d8f-p", labels={"app": "web", "pod-template-hash": "5d8f"}, spread=[spread_obj()],
                      owner=("ReplicaSet", "web-5d8f"), created="2026-01-01T00:00:09Z")
    return as_dump(nodes + [deploy, rs] + pods + [pending])


def item(doc: dict, kind: str, name: str) -> dict:
    return next(o for o in doc["items"] if o["kind"] == kind and o["metadata"]["name"] == name)


def write(tmp_path, doc, name="dump.json") -> str:
    p = tmp_path / name
    if isinstance(doc, bytes):
        p.write_bytes(doc)
    elif isinstance(doc, str):
        p.write_text(doc)
    else:
        p.write_text(json.dumps(doc))
    return str(p)


# --- item 4: every malformed field is named --------------------------------------------------

def _set(path: str, value):
    """A mutation of cluster(): `Kind/name:dotted.path` set to value."""
    where, field = path.split(":")
    kind, name = where.split("/")

    def mutate(doc):
        obj = item(doc, kind, name)
        *parents, last = field.split(".")
        for p in parents:
            obj = obj[int(p)] if isinstance(obj, list) else obj.setdefault(p, {})
        if isinstance(obj, list):
            obj[int(last)] = value
        else:
            obj[last] = value
    return mutate


MALFORMED = [
    pytest.param(_set("Pod/web-5d8f-0:metadata.name", ["a", "b"]),
                 ["a Pod without a usable name", "metadata.name: expected a string, got a list"], id="name is a list"),
    pytest.param(_set("Pod/web-5d8f-0:metadata.namespace", {"a": 1}),
                 ["Pod web-5d8f-0", "metadata.namespace: expected a string, got a map"], id="namespace is a map"),
    pytest.param(_set("Pod/web-5d8f-1:metadata.creationTimestamp", 1767225600),
                 ["Pod default/web-5d8f-1", "metadata.creationTimestamp: expected a string, got 1767225600"],
                 id="creationTimestamp is an int"),
    pytest.param(_set("Pod/web-5d8f-0:spec.topologySpreadConstraints.0.nodeAffinityPolicy", {"x": "Honor"}),
                 ["Pod default/web-5d8f-0", "spec.topologySpreadConstraints[0].nodeAffinityPolicy: "
                  "expected Honor or Ignore, got a map"], id="node policy is a map"),
    pytest.param(_set("Deployment/web:metadata.uid", {"id": 1}),
                 ["Deployment default/web", "metadata.uid: expected a string, got a map"], id="workload uid is a map"),
    pytest.param(_set("Pod/web-5d8f-0:spec.topologySpreadConstraints.0.maxSkew", -1),
                 ["spec.topologySpreadConstraints[0].maxSkew: expected a positive integer from 1 to 2147483647, "
                  "got -1"], id="negative maxSkew"),
    pytest.param(_set("Pod/web-5d8f-0:spec.topologySpreadConstraints.0.maxSkew", 2**64),
                 ["spec.topologySpreadConstraints[0].maxSkew: expected a positive integer from 1 to 2147483647, "
                  "got 18446744073709551616"], id="maxSkew 2^64"),
    pytest.param(_set("Pod/web-5d8f-2:spec.topologySpreadConstraints.0.maxSkew", "abc"),
                 ["Pod default/web-5d8f-2", "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer, "
                  "got 'abc'"], id="maxSkew abc"),
    pytest.param(_set("Node/n1:status.allocatable.cpu", 1e18),
                 ["Node n1", "status.allocatable.cpu: expected a quantity", "got 1e+18"], id="allocatable cpu 1e18"),
    pytest.param(_set("Pod/web-5d8f-0:spec.containers", [{"name": "c", "resources": {"requests": {"cpu": "1.5.3Gi"}}}]),
                 ["Pod default/web-5d8f-0", "spec.containers[0].resources.requests.cpu: expected a quantity",
                  "got '1.5.3Gi'"], id="cpu 1.5.3Gi"),
    pytest.param(_set("Pod/web-5d8f-0:metadata", "web-5d8f-0"),
                 ["a Pod without usable metadata", "metadata: expected a map, got 'web-5d8f-0'"],
                 id="metadata is a string"),
    pytest.param(_set("Pod/web-5d8f-0:metadata.labels", {"app": ["web"]}),
                 ["metadata.labels.app: expected a string, got a list"], id="label value is a list"),
    pytest.param(_set("Pod/web-5d8f-0:spec.tolerations", {"key": "a"}),
                 ["spec.tolerations: expected a list, got a map"], id="tolerations is a map"),
    pytest.param(_set("Pod/web-5d8f-0:spec.affinity", {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": ["zone"]}}),
                 ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: expected a map, "
                  "got a list"], id="required node affinity is a list"),
    pytest.param(_set("Pod/web-5d8f-0:spec.containers", [{"name": "c", "resources": {"requests": {"cpu": True}}}]),
                 ["spec.containers[0].resources.requests.cpu: expected a quantity", "got true"],
                 id="a quantity that is a bool"),
    pytest.param(_set("Pod/web-5d8f-0:status.containerStatuses", [{"name": "c", "allocatedResources": {"cpu": "x"}}]),
                 ["status.containerStatuses[0].allocatedResources.cpu: expected a quantity"],
                 id="a resize status quantity that is not one"),
    pytest.param(_set("Pod/web-5d8f-0:spec.containers", [{"name": "c", "restartPolicyRules": ["RestartAll"]}]),
                 ["spec.containers[0].restartPolicyRules[0]: expected a map, got 'RestartAll'"],
                 id="a restart rule that is not a map"),
    pytest.param(_set("Node/n1:status.declaredFeatures", "UserNamespacesHostNetworkSupport"),
                 ["status.declaredFeatures: expected a list"], id="declared features that are not a list"),
]


@pytest.mark.parametrize("mutate, wants", MALFORMED)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_malformed_field_is_named(tmp_path, capsys, mutate, wants, command, fmt):
    doc = cluster()
    mutate(doc)
    path = write(tmp_path, json.dumps(doc) if fmt == "json" else yaml.safe_dump(doc), f"dump.{fmt}")
    code, out, err = run(capsys, *command, "--from-file", path, "-o", "json")
    assert_one_error(code, out, err, "dump." + fmt, "fix that field", *wants)


@pytest.mark.parametrize("value, shown", [
    pytest.param("!!timestamp 2026-01-01T00:00:00Z", "got a datetime", id="YAML !!timestamp"),
    pytest.param(".nan", "got nan", id="YAML .nan"),
    pytest.param("12", "got 12", id="YAML int"),
])
def test_a_creation_timestamp_that_is_not_a_string_is_named(tmp_path, capsys, value, shown):
    doc = yaml.safe_dump(cluster()).replace("creationTimestamp: '2026-01-01T00:00:01Z'", f"creationTimestamp: {value}")
    assert value in doc
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, doc, "d.yaml"))
    assert_one_error(code, out, err, "Pod default/web-5d8f-1", "metadata.creationTimestamp: expected a string", shown)


def test_json_nested_deeper_than_a_thousand_levels_is_refused(tmp_path, capsys):
    doc = json.dumps(cluster())
    deep = doc.replace('"spec": {"containers"', '"x": ' + "[" * 5000 + "]" * 5000 + ', "spec": {"containers"', 1)
    for text in (deep, "[" * 100_000 + "]" * 100_000):
        code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, text))
        assert_one_error(code, out, err, "nested deeper than")


def test_yaml_nested_deeper_than_a_thousand_levels_is_refused(tmp_path, capsys):
    text = yaml.safe_dump(cluster()) + "---\nkind: Pod\napiVersion: v1\nspec: " + "[" * 5000 + "]" * 5000 + "\n"
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, text, "d.yaml"))
    assert_one_error(code, out, err, "d.yaml", "nest")


def test_invalid_utf8_inside_a_list_item_is_named(tmp_path, capsys):
    data = json.dumps(cluster()).encode().replace(b'"web-5d8f-1"', b'"web-\xff-1"', 1)
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, data))
    assert_one_error(code, out, err, "dump.json", "is not UTF-8 text")


@pytest.mark.parametrize("dump, want", [
    pytest.param(json.dumps, "stdin: item 6 of the List is not UTF-8 text", id="JSON"),
    pytest.param(yaml.safe_dump, "stdin is not UTF-8 text (byte ", id="YAML"),
])
def test_non_utf8_bytes_on_stdin_are_named(capsys, monkeypatch, dump, want):
    data = dump(cluster()).encode().replace(b"web-5d8f-1", b"web-\xff\xfe-1", 1)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, out, err = run(capsys, "distribution", "-A", "--from-file", "-")
    assert_one_error(code, out, err, want)


def test_stdin_is_read_as_bytes_whatever_its_text_layer_says(capsys, monkeypatch):
    data = yaml.safe_dump(cluster(), allow_unicode=True).replace("web-5d8f-1", "wéb-5d8f-1").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="ascii"))
    code, out, err = run(capsys, "why-pending", "-A", "--from-file", "-", "-o", "json")
    assert code == 0 and err == ""
    assert json.loads(out)["kind"] == "PendingReport"


def test_an_unreadable_directory_is_named(tmp_path, capsys, monkeypatch):
    (tmp_path / "d").mkdir()

    def refuse(path):
        raise PermissionError(13, "Permission denied", path)

    # as root (CI containers) chmod 000 does not stop a listing: the refusal is made here
    monkeypatch.setattr(files.os, "listdir", refuse)
    code, out, err = run(capsys, "distribution", "--from-file", str(tmp_path / "d"))
    assert_one_error(code, out, err, "cannot list directory", "Permission denied")


def test_a_malformed_field_in_a_live_answer_is_named_the_same_way(env, capsys):
    """The live path decodes through the same decoders: the object and the field are named."""
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(raw_node("n1"))
        bad = raw_pod("web-1", "prod", node="n1")
        bad["spec"]["topologySpreadConstraints"] = [{"maxSkew": "abc", "topologyKey": "zone",
                                                     "whenUnsatisfiable": "DoNotSchedule"}]
        api.add(bad)
        config = write_kubeconfig(str(env / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                                  {"fake": {"cluster": "fake", "user": "alice", "namespace": "prod"}}, "fake")
        code, out, err = run(capsys, "distribution", "--kubeconfig", config, "--request-timeout", "5s")
    assert_one_error(code, out, err,
                     "cannot read Pod prod/web-1 (item 0 of the PodList from GET /api/v1/namespaces/prod/pods on ",
                     "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer, got 'abc'")


# --- item 1: bounded work for any input ------------------------------------------------------

def _program(*args: str, stdin=None, timeout: float = 30) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "kubectl_tspread", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=stdin if stdin is not None else subprocess.DEVNULL)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "dump.json"
    os.mkfifo(fifo)
    got = _program("distribution", "--from-file", str(fifo))
    assert got.returncode == 1 and got.stdout == ""
    assert got.stderr == (f"error: {fifo} is a FIFO (named pipe), not a regular file; save the dump to a file first "
                          "(kubectl get … -o json > dump.json), or pipe it in with --from-file -\n")


def test_a_device_is_refused_as_a_path_and_as_stdin():
    got = _program("distribution", "--from-file", "/dev/zero")
    assert (got.returncode, got.stdout) == (1, "")
    assert got.stderr.startswith("error: /dev/zero is a character device, not a regular file")
    with open("/dev/zero", "rb") as zero:
        got = _program("distribution", "--from-file", "-", stdin=zero)
    assert (got.returncode, got.stdout) == (1, "")
    assert got.stderr.startswith("error: stdin is a character device, not a dump")


def _laughs(levels: int = 9, width: int = 10) -> str:
    """A YAML list bomb: a{levels} stands for width**levels values."""
    lines = ["  a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines)


def _map_laughs(levels: int = 9, width: int = 10) -> str:
    lines = ["  m0: &m0 {" + ", ".join(f"k{j}: lol" for j in range(width)) + "}"]
    lines += [f"  m{i}: &m{i} {{" + ", ".join(f"k{j}: *m{i - 1}" for j in range(width)) + "}"
              for i in range(1, levels + 1)]
    return "\n".join(lines)


def _bomb_pod(field_yaml: str, bomb: str) -> str:
    return ("apiVersion: v1\nkind: Pod\nx-bomb:\n" + bomb + "\nmetadata:\n  name: boom\n  namespace: default\n"
            + field_yaml + "\n")


BOMBS = [
    pytest.param(_bomb_pod("spec:\n  tolerations: *a9", _laughs()), id="list bomb in tolerations"),
    pytest.param(_bomb_pod("spec:\n  topologySpreadConstraints: *a9", _laughs()), id="list bomb in spread"),
    pytest.param(_bomb_pod("spec:\n  overhead: *a9", _laughs()), id="list bomb in overhead"),
    pytest.param(_bomb_pod("spec:\n  containers:\n  - name: c\n    resources: *a9", _laughs()),
                 id="list bomb in containers[].resources"),
    pytest.param(_bomb_pod("  labels: *m9", _map_laughs()).replace("x-bomb:", "x-bomb:", 1),
                 id="map bomb in labels"),
    pytest.param(_bomb_pod("spec:\n  nodeSelector: *m9", _map_laughs()), id="map bomb in nodeSelector"),
]


@pytest.mark.parametrize("bomb", BOMBS)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_billion_laughs_end_within_seconds_with_one_error(tmp_path, capsys, bomb, command):
    nodes = write(tmp_path, as_list([node_obj("n0", zone="a")]), "nodes.json")
    started = time.monotonic()
    code, out, err = run(capsys, *command, "--from-file", nodes, "--from-file", write(tmp_path, bomb, "bomb.yaml"))
    assert time.monotonic() - started < 10
    assert_one_error(code, out, err, "bomb.yaml", "aliases stand for more than 100,000 values")


def test_a_small_alias_reads_as_its_anchor(tmp_path):
    text = ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n0, labels: &l {zone: a}}}\n"
            "- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: *l}}\n")
    snap = files.load_files([write(tmp_path, text, "n.yaml")])
    assert [(n.name, n.labels) for n in snap.nodes] == [("n0", {"zone": "a"}), ("n1", {"zone": "a"})]
    # an anchor lives in its own document, as YAML has it
    with pytest.raises(InputError, match="document 2 uses the alias \\*l before its anchor"):
        files.load_files([write(tmp_path, text.replace("- {apiVersion: v1, kind: Node, metadata: {name: n1",
                                                       "---\n{apiVersion: v1, kind: Node, metadata: {name: n1"),
                                "n2.yaml")])


@pytest.mark.parametrize("shape", ["top-level", "items of a List", "inside an object"])
def test_a_50mb_yaml_flow_sequence_is_refused_quickly(tmp_path, capsys, shape):
    numbers = "[" + ", ".join(map(str, range(6_500_000))) + "]"
    assert len(numbers) > 50_000_000
    text = {"top-level": numbers + "\n",
            "items of a List": "apiVersion: v1\nkind: List\nitems: " + numbers + "\n",
            "inside an object": "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: " + numbers + "}\n"}[shape]
    path = write(tmp_path, text, "flow.yaml")
    del numbers, text
    started = time.monotonic()
    code, out, err = run(capsys, "distribution", "-A", "--from-file", path)
    assert time.monotonic() - started < 30
    assert_one_error(code, out, err, "flow.yaml")
    # a List whose kind comes first is refused at its first item that is no object
    assert {"top-level": "document 1, item 0 is not a Kubernetes object",
            "items of a List": "item 0 of the List is not a Kubernetes object",
            "inside an object": "an object of more than 250,000 values"}[shape] in err


FORMS = ["List", "bare array", "concatenated Lists", "concatenated objects", "YAML documents", "YAML bare array"]


def _form(doc: dict, form: str) -> bytes:
    items = doc["items"]
    if form == "List":
        return json.dumps(doc).encode()
    if form == "bare array":
        return json.dumps(items).encode()
    if form == "concatenated Lists":
        return b"\n".join(json.dumps(as_list(items[i:i + 3]), indent=4).encode() for i in range(0, len(items), 3))
    if form == "concatenated objects":
        return b"".join(json.dumps(o).encode() + b" \n" for o in items)
    if form == "YAML documents":
        return yaml.safe_dump_all(items).encode()
    return yaml.safe_dump(items).encode()


@pytest.mark.parametrize("form", FORMS)
def test_every_accepted_form_gives_the_same_snapshot(tmp_path, form):
    doc = cluster()
    want = files.load_files([write(tmp_path, doc, "list.json")], all_namespaces=True)
    got = files.load_files([write(tmp_path, _form(doc, form), "form.json")], all_namespaces=True)
    assert (got.nodes, got.pods, got.workloads) == (want.nodes, want.pods, want.workloads)


@pytest.mark.parametrize("data, bare", [
    pytest.param(b'[{"kind": "Node"}, {"kind": "Pod"}]', True, id="bare array"),
    pytest.param(b'{"kind": "List", "items": [{"kind": "Node"}]}', False, id="List"),
])
def test_bare_arrays_and_concatenated_documents_are_split_into_raw_items(data, bare):
    """Not held whole: each item stays its raw bytes until the collector reaches it, as a List's."""
    doc, used = files._one_json(memoryview(data + b"\n" + data))
    assert used == len(data) + 1  # where the next document starts
    items = doc if bare else doc["items"]
    assert isinstance(items, files.RawItems) and items.bare == bare
    assert all(type(i) is files._RAW for i in items)


@pytest.mark.parametrize("doc, want", [
    pytest.param({"apiVersion": "v1", "kind": ["Node"]}, "document 1: kind: expected a string, got a list",
                 id="kind is a list"),
    pytest.param({"apiVersion": "v1", "kind": "PodList", "items": 5}, "the PodList's items: expected a list, got 5",
                 id="a list's items are a number"),
    pytest.param([{"apiVersion": "v1", "kind": {"a": 1}}], "document 1, item 0: kind: expected a string, got a map",
                 id="an item's kind is a map"),
])
def test_a_document_of_the_wrong_shape_is_named(tmp_path, capsys, doc, want):
    code, out, err = run(capsys, "distribution", "--from-file", write(tmp_path, doc))
    assert_one_error(code, out, err, "dump.json", want)


def test_a_name_with_control_characters_stays_on_one_error_line(tmp_path, capsys):
    doc = cluster()
    pod = item(doc, "Pod", "web-5d8f-0")
    pod["metadata"]["name"] = "web\n\x1b[31mred\ud800"
    pod["spec"]["topologySpreadConstraints"][0]["maxSkew"] = "abc"
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, doc))
    assert_one_error(code, out, err, "cannot read Pod default/web\\n\\x1b[31mred\\ud800: ")
    assert "\x1b" not in err


def test_documents_msgspec_refuses_are_read_by_the_json_module_from_there_on(tmp_path):
    """A lone surrogate in the second of several documents: every document is still read."""
    items = cluster()["items"]
    items[5]["metadata"]["name"] = "web-\ud800"  # the first pod
    data = b"\n".join(json.dumps(o).encode() for o in items)
    snap = files.load_files([write(tmp_path, data)], all_namespaces=True)
    assert len(snap.nodes) == 3 and "web-\ud800" in [p.name for p in snap.pods] and len(snap.pods) == 4


def test_json_documents_then_yaml_ones_are_read_in_order(tmp_path):
    doc = cluster()
    text = json.dumps(doc["items"][0]) + "\n---\n" + yaml.safe_dump(doc["items"][1])
    snap = files.load_files([write(tmp_path, text, "mixed.yaml")])
    assert [n.name for n in snap.nodes] == ["n0", "n1"]


# --- item 3: whole answers or none -----------------------------------------------------------

def _surrogate_cluster() -> str:
    doc = cluster()
    for o in doc["items"]:
        if o["kind"] == "Pod":
            o["metadata"]["name"] = o["metadata"]["name"].replace("web", "web-\ud800")
    return json.dumps(doc)  # ensure_ascii: the lone surrogate is written as the escape \ud800


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("fmt", ["json", "yaml", "wide", "table"])
def test_a_lone_surrogate_is_escaped_never_fatal(tmp_path, capsys, command, fmt):
    path = write(tmp_path, _surrogate_cluster())
    timeline = ["--timeline"] if command[0] == "distribution" else []  # pod names are in the timeline
    code, out, err = run(capsys, *command, *timeline, "--from-file", path, *(["-o", fmt] if fmt != "table" else []))
    assert code in (0, 3) and err == "", err
    assert "\\ud800" in out.lower()
    if fmt in ("json", "yaml"):
        doc = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert "web-\ud800" in json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize("fmt", ["json", "yaml", "table"])
def test_a_document_that_fails_half_way_leaves_stdout_empty(tmp_path, capsys, monkeypatch, fmt):
    """A render that raises after the first piece was made: nothing reaches stdout."""
    from kubectl_tspread.render import structured, table

    doc = cluster()
    doc["items"].append(workload_obj("Deployment", "api", {"app": "api"}))
    doc["items"].append(pod_obj("api-1", node="n0", labels={"app": "api"}, spread=[spread_obj(match_labels={"app": "api"})]))
    calls = []
    real = structured._workload_view if fmt != "table" else table.summary_text

    def second_fails(*args, **kwargs):
        calls.append(1)
        if fmt == "table":
            # render returns text and writes none: what is written before it fails is the
            # command's, into the spool (cli/output.whole_answer)
            sys.stdout.write("half a table\n")
            raise RuntimeError("render broke")
        if len(calls) == 2:
            raise RuntimeError("render broke")
        return real(*args, **kwargs)

    monkeypatch.setattr(structured if fmt != "table" else table,
                        "_workload_view" if fmt != "table" else "summary_text", second_fails)
    args = ["distribution", "-A", "--from-file", write(tmp_path, doc)] + (["-o", fmt] if fmt != "table" else [])
    code, out, err = run(capsys, *args)
    assert calls and (code, out) == (1, "")
    assert err.startswith("error: unexpected RuntimeError: render broke") and err.count("\n") == 1


def test_maxskew_past_64_bits_is_an_input_error_not_half_a_json(tmp_path, capsys):
    doc = cluster()
    _set("Pod/web-5d8f-0:spec.topologySpreadConstraints.0.maxSkew", 2**64)(doc)
    for fmt in ("json", "yaml"):
        code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, doc), "-o", fmt)
        assert_one_error(code, out, err, "Pod default/web-5d8f-0", "maxSkew")


def test_the_spool_copies_every_byte_past_its_memory(monkeypatch, capsys):
    from kubectl_tspread.cli import output as cli_output

    monkeypatch.setattr(cli_output, "SPOOL_MEMORY", 1000)
    text = "".join(f"line {i} é\n" for i in range(5000))
    with cli_output.whole_answer():
        sys.stdout.write(text)
        assert capsys.readouterr().out == ""  # nothing before the end
    assert capsys.readouterr().out == text


def test_the_spool_writes_nothing_when_the_block_fails(capsys):
    from kubectl_tspread.cli import output as cli_output

    with pytest.raises(ZeroDivisionError):
        with cli_output.whole_answer():
            print("half")
            1 / 0
    assert capsys.readouterr().out == ""


# --- floods of tiny objects: refused at the first that cannot be read, or by a bound -------

def _flood(form: str, n: int) -> bytes:
    body = b",".join([b"{}"] * n)
    return {"concatenated": b"{}" * n,
            "bare array": b"[" + body + b"]",
            "a PodList, kind first": b'{"kind":"PodList","apiVersion":"v1","items":[' + body + b"]}",
            "a List": b'{"apiVersion":"v1","kind":"List","items":[' + body + b"]}"}[form]


@pytest.mark.parametrize("form", ["concatenated", "bare array", "a PodList, kind first", "a List"])
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak memory from /proc")
def test_a_flood_of_empty_objects_is_refused_at_the_first_in_bounded_memory(tmp_path, form):
    """Five million `{}` (15 MB): held whole they were five million msgspec objects, and the
    walk of a chunk of `{}{}{}…` ten million Python ints (2 GB for ten million)."""
    path = write(tmp_path, _flood(form, 5_000_000))
    # VmHWM: the peak of this process's memory since its exec (ru_maxrss may carry the parent's)
    code = ("import sys\nfrom kubectl_tspread.cli import main\n"
            f"try:\n    main(['distribution', '-A', '--from-file', {path!r}])\n"
            "except SystemExit as e:\n"
            "    peak = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
            "    print(e.code, peak, file=sys.stderr)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    started = time.monotonic()
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert time.monotonic() - started < 20
    error, status = got.stderr.splitlines()
    assert error.startswith("error: ") and "item 0" in error or "document 1 " in error, got.stderr
    exit_code, peak_kb = status.split()
    assert exit_code == "1" and got.stdout == ""
    assert int(peak_kb) < 250_000, f"peak RSS {int(peak_kb) // 1024} MB"


@pytest.mark.parametrize("doc", [
    pytest.param(b'{"apiVersion":"v1","items":[%s],"kind":"PodList"}', id="kind after items (they wait for it)"),
    pytest.param(b'{"kind":"EventList","apiVersion":"v1","items":[%s]}', id="events (no name needed)"),
    pytest.param(b'{"kind":"ConfigMapList","apiVersion":"v1","items":[%s]}', id="a kind not read"),
])
def test_an_input_of_more_objects_than_any_cluster_is_refused(tmp_path, capsys, monkeypatch, doc):
    """Objects that are read (events), skipped or wait for their List's kind each cost a few
    microseconds: ten million of them (30 MB) took 30 to 130 s and 2.6 GB."""
    monkeypatch.setattr(files, "MAX_OBJECTS", 1000)
    # the paths a 30 MB input takes: read a chunk at a time, its List item by item
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(jsonstream, "WHOLE", 300)
    nodes = write(tmp_path, as_list([node_obj("n0", zone="a")]), "nodes.json")
    path = write(tmp_path, doc % b",".join([b"{}"] * 3000), "flood.json")
    code, out, err = run(capsys, "why-pending", "-A", "--from-file", nodes, "--from-file", path)
    assert_one_error(code, out, err, "flood.json: the dumps hold more than 1,000 objects")


@pytest.mark.parametrize("form", FORMS)
def test_a_byte_order_mark_at_the_start_is_read_in_every_form(tmp_path, capsys, monkeypatch, form):
    doc = cluster()
    want = files.load_files([write(tmp_path, doc, "list.json")], all_namespaces=True)
    data = b"\xef\xbb\xbf" + _form(doc, form)
    got = files.load_files([write(tmp_path, data, "bom.json")], all_namespaces=True)
    assert (got.nodes, got.pods, got.workloads) == (want.nodes, want.pods, want.workloads)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, out, err = run(capsys, "distribution", "-A", "--from-file", "-", "-o", "json")
    assert code == 0 and err == "" and json.loads(out)["kind"] == "DistributionReport"


def test_more_nodes_than_any_cluster_has_are_refused(tmp_path, capsys, monkeypatch):
    """Each answer walks every node (why-pending once per pending pod): 200,000 nodes took 35 s."""
    monkeypatch.setattr(files, "MAX_NODES", 2)
    code, out, err = run(capsys, "why-pending", "-A", "--from-file", write(tmp_path, cluster()))
    assert_one_error(code, out, err, "holds 3 Nodes, more than any cluster has", "read up to 2)")


@pytest.mark.parametrize("form", ["List", "bare array", "concatenated objects"])
def test_an_object_longer_than_the_walks_window_is_read_and_a_huge_one_refused(tmp_path, capsys, monkeypatch, form):
    """The walk covers a window at a time: an item longer than the widest window is still read
    whole (it once never ended), and one longer than an object can be is refused early."""
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(jsonstream, "WHOLE", 300)
    monkeypatch.setattr(jsonstream, "WINDOW", 64)
    monkeypatch.setattr(jsonstream, "_WIDEST", 128)
    doc = cluster()
    item(doc, "Node", "n0")["metadata"]["labels"].update({f"k{i}": "v" for i in range(100)})  # about 1.4 KB
    path = write(tmp_path, _form(doc, form), "big.json")
    assert files.load_files([path]).nodes[0].labels["k99"] == "v"
    monkeypatch.setattr(jsonstream, "OBJECT_BYTES", 1000)
    code, out, err = run(capsys, "distribution", "-A", "--from-file", path)
    assert_one_error(code, out, err, "big.json: ", "is an object of more than 1,000 bytes of JSON; the API server stores "
                                                   "none over 1.5 MiB")
