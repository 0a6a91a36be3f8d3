"""--from-file: every input shape kubectl prints, the namespace rule, and every error message."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from kubectl_tspread.model.errors import EXIT_ERROR, InputError
from kubectl_tspread.snapshot import files
from kubectl_tspread.snapshot.files import decode_objects, load_files
from test_wire import FULL_POD, assert_same_record

DATA = Path(__file__).parent / "data"


def d(name: str) -> str:
    return str(DATA / name)


def names(records) -> list[str]:
    return [r.name for r in records]


# --- input shapes ---------------------------------------------------------------------------

SHAPES = [
    pytest.param([d("cluster-list.json")], ["n-a", "n-b", "n-c"], ["web-5d8f7c9b4-abcde", "web-5d8f7c9b4-fghij"],
                 ["Deployment/web"], id="List whose items carry their kind, finished pod and ConfigMap left out"),
    pytest.param([d("nodes.yaml")], ["n-a", "n-b"], [], [],
                 id="typed NodeList in YAML, items without kind"),
    pytest.param([d("nodes.yaml"), d("pods.json")], ["n-a", "n-b"], ["api-7c9d-1", "api-7c9d-2", "api-7c9d-3"], [],
                 id="two paths merge: NodeList YAML + PodList JSON, the Failed pod left out"),
    pytest.param([d("multi-doc.yaml")], ["n-a"], ["db-0"], [],
                 id="multi-document YAML with an empty document"),
    pytest.param([d("json-content.yaml"), d("yaml-content.json")], ["n-json", "n-yaml"], [], [],
                 id="JSON in a .yaml file and YAML in a .json file: content decides"),
    pytest.param([d("appended.json")], ["n-a"], ["web-1"], [],
                 id="JSON documents one after another, as `-o json >> dump.json` leaves them"),
    pytest.param([d("dump-dir")], ["n-a", "n-b"], ["web-1"], ["Deployment/web"],
                 id="directory: .json .yml .YAML read in name order, .txt and hidden files skipped"),
]


@pytest.mark.parametrize("paths, want_nodes, want_pods, want_workloads", SHAPES)
def test_input_shapes(paths, want_nodes, want_pods, want_workloads):
    snap = load_files(paths)
    assert names(snap.nodes) == want_nodes
    assert names(snap.pods) == want_pods
    assert [w.ref for w in snap.workloads] == want_workloads


def test_unknown_kinds_are_skipped_and_logged_at_debug(caplog):
    with caplog.at_level("DEBUG", logger="kubectl_tspread.snapshot.files"):
        load_files([d("cluster-list.json")])
    assert "skipped objects of kinds tspread does not use: 1 ConfigMap" in caplog.text


def test_typed_list_items_get_the_list_kind():
    """A DeploymentList item has no kind; the record must still say Deployment."""
    snap = load_files([d("dump-dir")])
    (w,) = snap.workloads
    assert (w.kind, w.namespace, w.name, w.replicas) == ("Deployment", "prod", "web", 1)


def test_list_fields_are_decoded():
    snap = load_files([d("cluster-list.json")])
    n_a, n_b, n_c = snap.nodes
    assert n_a.allocatable == {"cpu": 3920, "memory": 15050868 * 1024, "pods": 58}
    assert [(t.key, t.value, t.effect) for t in n_b.taints] == [("dedicated", "db", "NoSchedule")]
    assert n_c.unschedulable
    web = snap.pods[0]
    assert web.node_name == "n-a" and web.requests == {"cpu": 250, "memory": 256 * 2**20}
    assert web.owner is not None and web.owner.kind == "ReplicaSet"
    assert web.spread[0].max_skew == 1 and web.spread[0].topology_key == "topology.kubernetes.io/zone"


def test_stdin_dash_reads_the_given_stream():
    text = (DATA / "cluster-list.json").read_text()
    snap = load_files(["-"], stdin=io.StringIO(text))
    assert names(snap.nodes) == ["n-a", "n-b", "n-c"]
    assert snap.source == "stdin"


def test_stdin_dash_defaults_to_sys_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO((DATA / "multi-doc.yaml").read_text()))
    assert names(load_files(["-"]).pods) == ["db-0"]


def test_stdin_merges_with_files():
    nodes = (DATA / "nodes.yaml").read_text()
    snap = load_files(["-", d("pods.json")], stdin=io.StringIO(nodes))
    assert names(snap.nodes) == ["n-a", "n-b"] and len(snap.pods) == 3
    assert snap.source == f"files stdin, {d('pods.json')}"


def test_bare_json_array_of_objects(tmp_path):
    items = json.loads((DATA / "cluster-list.json").read_text())["items"]
    p = tmp_path / "items.json"
    p.write_text(json.dumps(items))
    assert names(load_files([str(p)]).nodes) == ["n-a", "n-b", "n-c"]


def test_a_later_copy_of_an_object_replaces_the_earlier_one(tmp_path):
    newer = tmp_path / "newer.yaml"
    newer.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n-b\n  labels: {topology.kubernetes.io/zone: moved}\n")
    snap = load_files([d("nodes.yaml"), str(newer)])
    assert names(snap.nodes) == ["n-a", "n-b"]
    assert snap.node("n-b").labels == {"topology.kubernetes.io/zone": "moved"}


def test_unquoted_yaml_timestamps_stay_rfc3339_strings():
    (n_a, n_b) = load_files([d("nodes.yaml")]).nodes
    assert n_a.created == "2026-01-10T08:00:00Z"  # unquoted in the file
    assert n_b.created == "2026-01-10T08:00:10Z"  # quoted


_STATUS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Forbidden",
           "message": "pods is forbidden", "code": 403}
_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}


@pytest.mark.parametrize("text, what", [
    (json.dumps(_NODE) + json.dumps(_STATUS), "document 2 is a Status (Failure, Forbidden: pods is forbidden)"),
    (json.dumps({"kind": "List", "apiVersion": "v1", "items": [_NODE, _STATUS]}),
     "item 1 of the List is a Status (Failure, Forbidden: pods is forbidden)"),
    ("kind: Status\napiVersion: v1\nstatus: Failure\nmessage: |\n  two\n  lines\n---\n" + json.dumps(_NODE),
     "document 1 is a Status (Failure: two lines)"),
], ids=["JSON documents", "an item of a List", "YAML, a message of two lines"])
def test_a_status_in_a_dump_is_an_error_not_objects_of_no_use(tmp_path, text, what):
    """A Status is where the objects a failed request asked for should be: skipped, the dump
    would read as a cluster without them. `dump --from-file` refuses it too."""
    path = tmp_path / "dump.json"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        load_files([str(path)])
    assert what in str(e.value) and "the answer to a request that failed" in str(e.value)
    with pytest.raises(InputError) as e:
        list(files.raw_objects([str(path)]))
    assert what in str(e.value)


@pytest.mark.parametrize("item, message", [
    ({}, "cannot read a Pod without usable metadata (item 1 of the PodList): metadata.name: expected a non-empty "
         "string, got null"),
    ({"metadata": {"name": "", "namespace": "d"}}, "cannot read a Pod without a usable name (item 1 of the PodList): "
                                                   "metadata.name: expected a non-empty string, got ''"),
], ids=["an empty object", "a name that is empty"])
def test_an_object_without_a_name_is_named_by_its_place(tmp_path, item, message):
    path = tmp_path / "dump.json"
    pods = {"kind": "PodList", "apiVersion": "v1", "items": [{"metadata": {"name": "p"}}, item]}
    path.write_text(json.dumps(_NODE) + json.dumps(pods))
    with pytest.raises(InputError) as e:
        load_files([str(path)])
    assert message in str(e.value)


def test_a_pod_without_a_namespace_in_a_dump_is_in_default():
    """A hand-written manifest leaves the namespace out; only the API server's answers must name it."""
    snap = decode_objects([_NODE, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}], None, True, "t")
    assert [(p.namespace, p.name) for p in snap.pods] == [("default", "p")]


def test_a_label_value_of_null_is_empty_text(tmp_path):
    """null is "" (as Go reads it into a map of strings); str() made "None" before."""
    path = tmp_path / "dump.yaml"
    path.write_text("kind: Node\napiVersion: v1\nmetadata: {name: n}\n---\n"
                    "kind: Pod\napiVersion: v1\nmetadata: {name: p, labels: {empty: , app: web}}\n")
    pod = load_files([str(path)]).pods[0]
    assert dict(pod.labels) == {"empty": "", "app": "web"}


@pytest.mark.parametrize("value, shown", [
    pytest.param("true", "true", id="true"),
    pytest.param("yes", "true", id="yes, which YAML 1.1 reads as true"),
    pytest.param("1.10", "1.1", id="1.10, which would be the label 1.1"),
    pytest.param("012", "10", id="012, octal to YAML 1.1"),
    pytest.param("1", "1", id="1"),
])
def test_a_label_value_unquoted_yaml_made_no_string_is_refused(tmp_path, value, shown):
    """The API server refuses a label that is no string; read as its value's text, it would be
    another label than the one written (1.10 as 1.1)."""
    path = tmp_path / "dump.yaml"
    path.write_text("kind: Node\napiVersion: v1\nmetadata: {name: n}\n---\n"
                    f"kind: Pod\napiVersion: v1\nmetadata: {{name: p, labels: {{version: {value}}}}}\n")
    with pytest.raises(InputError, match=f"cannot read Pod p: metadata.labels.version: expected a string "
                                         f"\\(quote what YAML reads as a number or true/false\\), got {shown};"):
        load_files([str(path)])


def test_events_are_all_kept_even_without_names():
    objs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
            {"apiVersion": "v1", "kind": "EventList", "items": [
                {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "FailedScheduling", "message": "one"},
                {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "FailedScheduling", "message": "two"}]}]
    snap = decode_objects(objs, None, False, "test")
    assert [e.message for e in snap.events] == ["one", "two"]


SPLIT_CASES = [
    pytest.param(b'{"kind":"List","apiVersion":"v1","items":[{"kind":"Node"},{"kind":"Pod"}]}', True,
                 id="a List is split into its items' bytes"),
    pytest.param(b'{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}', True,
                 id="a typed list with no items is split too"),
    pytest.param(b'{"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}}', False,
                 id="a single object is parsed whole"),
    pytest.param(b'{"kind":"List","apiVersion":"v1"}', False, id="a List without items is parsed whole"),
    pytest.param(b'{"kind":"List","items":[]}{"kind":"List","items":[]}', False,
                 id="documents one after another are parsed whole"),
    pytest.param(b'{"kind":"List","items":[{"kind":"Node",}]}', False,
                 id="a syntax error goes the whole-parse way, which words the error"),
    pytest.param(b'[{"kind":"Node"}]', True, id="a bare array is split into its items' bytes"),
]


@pytest.mark.parametrize("data, split", SPLIT_CASES)
def test_which_dumps_are_split_into_raw_items(data, split):
    try:
        doc = files._parse_one(memoryview(data))
    except files._SHELL_ERRORS:
        doc = None
    items = doc if isinstance(doc, list) else doc.get("items") if isinstance(doc, dict) else None
    assert isinstance(items, files.RawItems) == split
    if split:
        whole = json.loads(data)
        assert [files._item_tree(i, "") for i in items] == (whole if isinstance(whole, list) else whole["items"])


def test_split_and_whole_parse_give_the_same_snapshot():
    """The memory-saving split of a List must not change a single record."""
    split = load_files([d("cluster-list.json"), d("pods.json")], all_namespaces=True)
    objs = [obj for name in ("cluster-list.json", "pods.json") for obj in [json.loads(Path(d(name)).read_text())]]
    whole = decode_objects(objs, None, True, "test")  # the same objects parsed whole by the json module
    assert (split.pods, split.nodes, split.workloads) == (whole.pods, whole.nodes, whole.workloads)
    assert names(split.pods) == ["web-5d8f7c9b4-abcde", "web-5d8f7c9b4-fghij", "api-7c9d-1", "api-7c9d-2",
                                 "api-7c9d-3"]


def _rich_pod(name: str) -> dict:
    """A pod with every field the decoder reads and several it skips (test_wire.py's, renamed)."""
    pod = json.loads(json.dumps(FULL_POD))
    pod["metadata"]["name"] = name
    return pod


def test_a_dumps_pods_are_parsed_partially_and_give_the_same_records(tmp_path, monkeypatch):
    """A split List's pods are parsed to the decoder's fields only (wire.py), its other objects
    whole, in a List (each item names its kind) and in a PodList (the list names it): every
    record is the one a whole parse gives."""
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n-a", "labels": {"zone": "a"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = {"kind": "Pod", "apiVersion": "v1", **_rich_pod("p-1")}
    listed = {"kind": "List", "apiVersion": "v1", "items": [node, pod]}
    typed = {"kind": "PodList", "apiVersion": "v1", "items": [_rich_pod("p-2"), {"metadata": {"name": "bare"}}]}
    paths = []
    for i, doc in enumerate((listed, typed)):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(doc))
    seen = []
    real = files.decode_pod_item
    monkeypatch.setattr(files, "decode_pod_item", lambda raw, kind: seen.append(real(raw, kind)) or seen[-1])
    split = load_files([str(p) for p in paths], all_namespaces=True)
    # the node's item fell back to the whole parse; each pod's got the partial one
    assert [x is not None for x in seen] == [False, True, True, True]
    assert "managedFields" not in seen[1]["metadata"]
    assert not isinstance(seen[1]["spec"]["containers"], list)  # left as JSON text for the decoder's memos
    whole = decode_objects([listed, typed], None, True, "test")  # the same objects parsed whole
    assert (split.pods, split.nodes) == (whole.pods, whole.nodes)
    assert names(split.pods) == ["p-1", "p-2", "bare"] and names(split.nodes) == ["n-a"]
    for got, want in zip(split.pods, whole.pods):
        assert_same_record(got, want)


# --- the namespace rule ----------------------------------------------------------------------

NAMESPACE_CASES = [
    pytest.param([d("cluster-list.json")], None, False, "prod",
                 id="all pods in prod (finished one too): prod, as `kubectl get pods -n prod -o json` needs"),
    pytest.param([d("cluster-list.json")], "other", False, "other", id="explicit -n wins"),
    pytest.param([d("cluster-list.json")], "other", True, None, id="-A: no namespace, even with -n"),
    pytest.param([d("nodes.yaml")], None, False, "default", id="no pods at all: default"),
    pytest.param([d("cluster-list.json"), d("pods.json")], None, False, "default",
                 id="pods in prod and staging: default, as kubectl would"),
    pytest.param([d("multi-doc.yaml")], None, False, "data", id="one pod in data: data"),
]


@pytest.mark.parametrize("paths, namespace, all_namespaces, want", NAMESPACE_CASES)
def test_namespace_rule(paths, namespace, all_namespaces, want):
    assert load_files(paths, namespace=namespace, all_namespaces=all_namespaces).namespace == want


# --- errors: one line, says what to do, nothing on stdout ------------------------------------

NODE = '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}\n'


def pod_with(spec: str) -> str:
    return ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "prod"}, '
            f'"spec": {spec}}}\n')


ERRORS = [
    pytest.param({"bad.json": '{"kind": "Node",, "apiVersion": "v1"}'}, ["bad.json is neither JSON nor YAML", "line 1, column"],
                 id="broken JSON: file and position"),
    pytest.param({"bad.yaml": "a: [1, 2\nb: c\n"}, ["bad.yaml is neither JSON nor YAML", "line 2, column"],
                 id="broken YAML: file and position"),
    pytest.param({"x.json": '{"foo": 1}'}, ["x.json: document 1 is not a Kubernetes object (no kind/apiVersion)",
                                           "kubectl get"],
                 id="a mapping without kind/apiVersion"),
    pytest.param({"x.yaml": NODE + "---\nkind: Pod\nmetadata: {name: p}\n"},
                 ["x.yaml: document 2 is not a Kubernetes object (no kind/apiVersion)"],
                 id="second YAML document without apiVersion"),
    pytest.param({"notes.txt": "just some words\n"}, ["notes.txt: document 1 is not a Kubernetes object"],
                 id="plain text is a YAML scalar, not an object"),
    pytest.param({"l.json": '{"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "x"}}]}'},
                 ["l.json: item 0 of the List has no kind"], id="generic List item without kind"),
    pytest.param({"l.json": '{"apiVersion": "v1", "kind": "PodList", "items": ["pod-a"]}'},
                 ["l.json: item 0 of the PodList is not a Kubernetes object"], id="list item that is not a mapping"),
    pytest.param({"pods.json": pod_with('{"nodeName": "n"}')},
                 ["file ", "pods.json holds no Nodes; dump them too: kubectl get nodes -o json > nodes.json"],
                 id="no Node objects"),
    pytest.param({"p.json": NODE + pod_with('{"topologySpreadConstraints": [{"maxSkew": "abc"}]}')},
                 ["cannot read Pod prod/web-1",
                  "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer, got 'abc'", "fix that field"],
                 id="maxSkew 'abc' names the pod"),
    pytest.param({"p.json": NODE + pod_with(
        '{"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}')},
                 ["cannot read Pod prod/web-1", "spec.containers[0].resources.requests.cpu: expected a quantity",
                  "got 'lots'"], id="bad quantity names the pod"),
    pytest.param({"n.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints: oops\n"},
                 ["cannot read Node n1", "spec.taints: expected a list, got 'oops'"], id="a string where the API puts a list"),
    pytest.param({"n.yaml": "apiVersion: v1\nkind: Node\nmetadata: just-a-name\n"},
                 ["cannot read a Node without usable metadata", "metadata: expected a map, got 'just-a-name'"],
                 id="metadata that is not a mapping"),
]


def write_all(tmp_path: Path, contents: dict[str, str]) -> list[str]:
    out = []
    for name, text in contents.items():
        p = tmp_path / name
        p.write_text(text)
        out.append(str(p))
    return out


@pytest.mark.parametrize("contents, wants", ERRORS)
def test_errors_are_one_actionable_line(tmp_path, capsys, contents, wants):
    with pytest.raises(InputError) as exc:
        load_files(write_all(tmp_path, contents))
    msg = str(exc.value)
    for want in wants:
        assert want in msg
    assert "\n" not in msg and exc.value.exit_code == EXIT_ERROR
    assert exc.value.__traceback__ is not None  # raised, not printed
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_missing_file_is_named(tmp_path, capsys):
    missing = str(tmp_path / "nope.json")
    with pytest.raises(InputError, match=r"^file not found: .*nope\.json; check the path given to --from-file$"):
        load_files([d("nodes.yaml"), missing])
    assert capsys.readouterr() == ("", "")


def test_directory_without_dumps(tmp_path):
    (tmp_path / "README.md").write_text("hi")
    with pytest.raises(InputError, match=r"has no \.json, \.yaml or \.yml files"):
        load_files([str(tmp_path)])


def test_not_utf8(tmp_path):
    p = tmp_path / "bin.json"
    p.write_bytes(b"kind: \xff\xfe\x00{")  # (at the start, FF FE is UTF-16's BOM: tests/test_utf16_dumps.py)
    with pytest.raises(InputError, match=r"bin\.json is not UTF-8 text"):
        load_files([str(p)])


def test_no_paths_at_all():
    with pytest.raises(InputError, match="no dump file given"):
        load_files([])


def test_empty_file_holds_no_nodes(tmp_path):
    p = tmp_path / "empty.yaml"
    p.write_text("\n\n")
    with pytest.raises(InputError, match="holds no Nodes"):
        load_files([str(p)])


def test_utf8_bom_is_tolerated(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + NODE.encode())
    assert names(load_files([str(p)]).nodes) == ["n"]


def test_yaml_flow_mapping_that_looks_like_json(tmp_path):
    """`{…}` that is not JSON but is valid YAML flow style is read as YAML."""
    p = tmp_path / "flow.yaml"
    p.write_text("{apiVersion: v1, kind: Node, metadata: {name: n-flow}}\n")
    assert names(load_files([str(p)]).nodes) == ["n-flow"]


def test_nothing_is_written(tmp_path):
    before = sorted(q.name for q in DATA.rglob("*"))
    load_files([d("cluster-list.json"), d("dump-dir")])
    assert sorted(q.name for q in DATA.rglob("*")) == before


_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"}, "spec": {"nodeName": "n"},
        "status": {"phase": "Running"}}


def _with(obj: dict, path: str, value) -> dict:
    """`obj` with the field at `path` (dots) set to `value`."""
    out = json.loads(json.dumps(obj))
    *parents, last = path.split(".")
    at = out
    for key in parents:
        at = at.setdefault(key, {})
    at[last] = value
    return out


@pytest.mark.parametrize("objs, message", [
    ([_with(_NODE, "spec.taints", [{"key": "k", "effect": "NoScheduel"}]), _POD],
     "Node n: spec.taints[0].effect: expected NoSchedule or PreferNoSchedule or NoExecute, got 'NoScheduel'"),
    ([_with(_NODE, "spec.taints", [{"key": "k"}]), _POD],
     "Node n: spec.taints[0].effect: expected NoSchedule or PreferNoSchedule or NoExecute, got null"),
    ([_NODE, _with(_POD, "spec.tolerations", [{"key": "k", "operator": "Exists", "effect": "noschedule"}])],
     "Pod d/p: spec.tolerations[0].effect: expected NoSchedule or PreferNoSchedule or NoExecute, got 'noschedule'"),
    ([_NODE, _with(_POD, "status.phase", "running")],
     "Pod d/p: status.phase: expected Pending or Running or Succeeded or Failed or Unknown, got 'running'"),
    ([_NODE, _with(_POD, "spec.hostNetwork", "true")], "Pod d/p: spec.hostNetwork: expected true or false, got 'true'"),
    ([_NODE, _with(_POD, "spec.hostUsers", "false")], "Pod d/p: spec.hostUsers: expected true or false, got 'false'"),
], ids=["a misspelt taint effect", "a taint without an effect", "a toleration's effect in other letters",
        "a phase in other letters", "hostNetwork the text true", "hostUsers the text false"])
def test_a_value_the_api_does_not_have_is_named_not_read_as_another(objs, message):
    """Each of these was read as a meaning before: a taint the scheduler ignores, a toleration of
    no taint, a pod neither running nor done (counted by no phase rule), a host-network pod whose
    node feature went unseen. The API refuses them all."""
    with pytest.raises(InputError) as e:
        decode_objects(objs, None, True, "t")
    assert message in str(e.value)


def test_the_values_the_api_has_are_read():
    tolerations = [{"key": "k", "operator": "Exists", "effect": e} for e in ("", "NoSchedule", "NoExecute")]
    objs = [_with(_NODE, "spec.taints", [{"key": "k", "effect": "PreferNoSchedule"}]),
            _with(_with(_with(_POD, "spec.tolerations", tolerations), "spec.hostNetwork", True),
                  "spec.hostUsers", False)]
    snap = decode_objects(objs, None, True, "t")
    assert [t.effect for t in snap.nodes[0].taints] == ["PreferNoSchedule"]
    assert [t.effect for t in snap.pods[0].tolerations] == ["", "NoSchedule", "NoExecute"]
    assert snap.pods[0].phase == "Running"
