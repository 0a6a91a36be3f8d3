"""Issue 58, bounded memory: a dump is read a chunk at a time (snapshot/jsonstream.py), a long
List or bare array item by item, and every form gives the records the whole read gives.

The chunk and the length past which a document is split are shrunk here (jsonstream.CHUNK,
WHOLE) so that a small dump takes the paths a 200,000-pod one takes; bench/dump_forms.py
measures the real thing."""

from __future__ import annotations

import io
import json

import pytest
import yaml

from apiobjects import as_list
from test_hostile_input import FORMS, _form, assert_one_error, cluster, run, write
from kubectl_tspread.snapshot import files, jsonstream, yamlread


def load(path_or_data, tmp_path, stdin: bool = False):
    if stdin:
        return files.load_files(["-"], all_namespaces=True, stdin=io.TextIOWrapper(io.BytesIO(path_or_data)))
    return files.load_files([write(tmp_path, path_or_data, "form.json")], all_namespaces=True)


def records(snap):
    return snap.nodes, snap.pods, snap.workloads, snap.kinds_read


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 97 bytes, documents split past 300: each item of cluster() crosses a chunk."""
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(jsonstream, "WHOLE", 300)


def kubectl_order(doc: dict) -> dict:
    """A List as `kubectl get -o json` writes it: items before kind and metadata."""
    return {"apiVersion": doc["apiVersion"], "items": doc["items"], "kind": doc["kind"], "metadata": doc["metadata"]}


def typed(doc: dict, kind_first: bool) -> bytes:
    """The pods of doc as a PodList whose items have no kind (as the API server sends them)."""
    pods = [{k: v for k, v in o.items() if k != "kind"} for o in doc["items"] if o["kind"] == "Pod"]
    rest = [o for o in doc["items"] if o["kind"] != "Pod"]
    head = {"kind": "PodList", "apiVersion": "v1"} if kind_first else {"apiVersion": "v1"}
    pod_list = {**head, "items": pods, **({} if kind_first else {"kind": "PodList"})}
    return json.dumps(pod_list).encode() + b"\n" + json.dumps(as_list(rest)).encode()


@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
@pytest.mark.parametrize("form", FORMS + ["kubectl's order", "PodList, kind first", "PodList, kind last"])
def test_every_form_read_in_small_chunks_gives_the_whole_read_records(tmp_path, monkeypatch, form, stdin):
    doc = cluster()
    data = {"kubectl's order": lambda: json.dumps(kubectl_order(doc), indent=2).encode(),
            "PodList, kind first": lambda: typed(doc, True),
            "PodList, kind last": lambda: typed(doc, False)}.get(form, lambda: _form(doc, form))()
    whole = load(data, tmp_path)
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(jsonstream, "WHOLE", 300)
    assert records(load(data, tmp_path, stdin)) == records(whole)
    assert len(whole.pods) == 4 and len(whole.nodes) == 3


def test_a_long_list_is_handed_over_item_by_item_with_a_bounded_buffer(small_chunks):
    doc = kubectl_order(cluster())
    doc["items"] = doc["items"] * 40  # about 90 KB, 400 items
    data = json.dumps(doc).encode()
    stream = io.BytesIO(data)
    reader = jsonstream.JsonReader("x", stream, stream.read(jsonstream.CHUNK), lambda b: json.loads(b))
    documents = reader.documents()
    streamed = next(documents)
    assert isinstance(streamed, jsonstream.StreamedList)
    seen, largest = [], 0
    for index, raw in streamed.items():
        seen.append(json.loads(bytes(raw)))
        largest = max(largest, len(reader.buf))
        if index == 0:
            assert stream.tell() < len(data) // 10  # the first item comes before the rest is read
    assert seen == doc["items"]
    assert largest <= jsonstream.CHUNK + max(len(json.dumps(o)) for o in doc["items"]) + 64
    assert streamed.shell() == {**doc, "items": []}
    assert list(documents) == []


@pytest.mark.parametrize("mutate, wants", [
    pytest.param(lambda d: d["items"].__setitem__(5, 7), "dump.json: item 5 of the List is not a Kubernetes object",
                 id="a scalar item"),
    pytest.param(lambda d: d["items"][6]["spec"]["topologySpreadConstraints"][0].__setitem__("maxSkew", "abc"),
                 "cannot read Pod default/web-5d8f-1: spec.topologySpreadConstraints[0].maxSkew", id="a bad field"),
    pytest.param(lambda d: d.pop("apiVersion"), "document 1 is not a Kubernetes object (no kind/apiVersion)",
                 id="a List without apiVersion, after a bad item"),
])
def test_a_long_lists_errors_are_worded_as_a_whole_lists(tmp_path, capsys, monkeypatch, mutate, wants):
    doc = kubectl_order(cluster())
    mutate(doc)
    if "apiVersion" not in doc:
        doc["items"][6]["spec"]["topologySpreadConstraints"][0]["maxSkew"] = "abc"  # the List's error comes first
    path = write(tmp_path, doc)
    whole = run(capsys, "distribution", "-A", "--from-file", path)
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(jsonstream, "WHOLE", 300)
    code, out, err = run(capsys, "distribution", "-A", "--from-file", path)
    assert_one_error(code, out, err, wants)
    assert (code, out, err) == whole


@pytest.mark.parametrize("data, wants", [
    pytest.param(b"[" + b", ".join(b"%d" % i for i in range(200)) + b"]", "document 1, item 0 is not a Kubernetes object",
                 id="an array of numbers"),
    pytest.param(json.dumps(cluster()).encode()[:-700], "never ends", id="a cut List"),
    pytest.param(json.dumps(cluster()["items"]).encode()[:-700], "never ends", id="a cut array"),
    pytest.param(json.dumps(cluster()).encode().replace(b'"web-5d8f-1"', b'"web-5d8f-1",', 1),
                 "item 6 of the List: Expecting property name", id="a syntax error in an item"),
])
def test_a_long_document_that_is_not_a_list_of_objects_is_one_error(tmp_path, capsys, small_chunks, data, wants):
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, data))
    assert_one_error(code, out, err, "dump.json", wants)


def test_an_array_of_numbers_is_refused_before_it_is_read_whole(small_chunks):
    """Whatever is not an item is refused as soon as it is read: a huge array of numbers
    (or /dev/zero-like input in an array) never fills the memory."""
    class Endless(io.RawIOBase):
        read_bytes = 0

        def readinto(self, b):
            b[:] = b"1, " * (len(b) // 3) + b"1" * (len(b) % 3)
            self.read_bytes += len(b)
            return len(b)

    stream = Endless()
    reader = jsonstream.JsonReader("x", stream, b"[" + b"0, " * 200, lambda b: json.loads(b))
    with pytest.raises(files.InputError, match="document 1, item 0 is not a Kubernetes object"):
        list(reader.documents())
    assert stream.read_bytes < 10 * jsonstream.CHUNK


def test_yaml_after_json_documents_is_still_read(tmp_path, small_chunks):
    doc = cluster()
    data = json.dumps(as_list(doc["items"][:3])).encode() + b"\n---\n" + yaml.safe_dump(as_list(doc["items"][3:])).encode()
    snap = files.load_files([write(tmp_path, data)], all_namespaces=True)
    assert len(snap.nodes) == 3 and len(snap.pods) == 4


@pytest.mark.parametrize("form", ["kubectl's order", "PodList, kind last", "bare array"])
def test_dump_from_a_long_document_writes_what_the_whole_read_writes(tmp_path, capsys, monkeypatch, form):
    doc = cluster()
    data = {"kubectl's order": lambda: json.dumps(kubectl_order(doc)).encode(),
            "PodList, kind last": lambda: typed(doc, False),
            "bare array": lambda: json.dumps(doc["items"]).encode()}[form]()
    path = write(tmp_path, data)
    whole = run(capsys, "dump", "--from-file", path)
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(jsonstream, "WHOLE", 300)
    assert run(capsys, "dump", "--from-file", path) == whole
    assert whole[0] == 0 and len(json.loads(whole[1])["items"]) == 9


# --- YAML: read a piece at a time, a List's items handed over one by one -------------------------

def yaml_typed(doc: dict, kind_first: bool) -> bytes:
    """typed()'s PodList (items without kind) and List, as YAML: sorted keys put kind after items."""
    pod_list, rest = (json.loads(line) for line in typed(doc, kind_first).splitlines())
    return yaml.safe_dump_all([pod_list, rest], sort_keys=not kind_first).encode()


def yaml_shared(doc: dict) -> bytes:
    """The List with one labels map and one constraint list shared by every pod: the dumper writes
    an anchor in the first pod and aliases in the others."""
    pods = [o for o in doc["items"] if o["kind"] == "Pod"]
    for pod in pods[1:]:
        pod["metadata"]["labels"] = pods[0]["metadata"]["labels"]
        pod["spec"]["topologySpreadConstraints"] = pods[0]["spec"]["topologySpreadConstraints"]
    data = yaml.safe_dump(doc).encode()
    assert b"&id001" in data and b"*id001" in data
    return data


def yaml_merged(doc: dict) -> bytes:
    """A List whose later nodes and pods merge (<<) the first one's keys, each written as JSON
    (YAML flow style) after an anchor, kind after items."""
    lines = ["apiVersion: v1", "items:"]
    first: dict[str, str] = {}
    for o in doc["items"]:
        kind = o["kind"]
        if kind in ("Node", "Pod") and kind in first:
            lines.append(f"- <<: *{first[kind]}")
            lines += [f"  {k}: {json.dumps(v)}" for k, v in o.items() if k in ("metadata", "spec")]
        elif kind in ("Node", "Pod"):
            first[kind] = kind.lower()
            lines.append(f"- &{first[kind]} {json.dumps(o)}")
        else:
            lines.append(f"- {json.dumps(o)}")
    return ("\n".join(lines + ["kind: List", "metadata: {}", ""])).encode()


YAML_FORMS = {
    "YAML List": lambda doc: yaml.safe_dump(doc).encode(),
    "YAML PodList, kind first": lambda doc: yaml_typed(doc, True),
    "YAML PodList, kind last": lambda doc: yaml_typed(doc, False),
    "YAML documents": lambda doc: _form(doc, "YAML documents"),
    "YAML bare array": lambda doc: _form(doc, "YAML bare array"),
    "YAML anchors across items": yaml_shared,
    "YAML merge keys across items": yaml_merged,
    "JSON then a YAML List": lambda doc: json.dumps(as_list(doc["items"][:2])).encode() + b"\n---\n"
    + yaml.safe_dump(as_list(doc["items"][2:])).encode(),
}


@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
@pytest.mark.parametrize("form", YAML_FORMS)
def test_every_yaml_form_read_in_small_pieces_gives_the_whole_read_records(tmp_path, monkeypatch, form, stdin):
    """The records of each YAML form equal those of the same objects read whole: as the JSON
    of what PyYAML's own loader builds of the text (anchors and merges expanded)."""
    data = YAML_FORMS[form](cluster())
    whole = load(b"\n".join(json.dumps(d).encode() for d in yaml.safe_load_all(data)), tmp_path)
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(files, "_YAML_READ", 97)
    assert records(load(data, tmp_path, stdin)) == records(whole)
    assert len(whole.pods) == 4 and len(whole.nodes) == 3


class Reads(io.BytesIO):
    """A stream that counts what was read of it."""
    def __init__(self, data: bytes):
        super().__init__(data)
        self.most = 0

    def read(self, n=-1):
        data = super().read(n)
        self.most = max(self.most, self.tell())
        return data


@pytest.mark.parametrize("sort_keys", [True, False], ids=["kind after items", "kind before items"])
def test_a_long_yaml_list_is_handed_over_item_by_item(sort_keys):
    doc = cluster()
    doc["items"] = json.loads(json.dumps(doc["items"] * 40))  # 400 items, none shared (no anchors)
    data = yaml.safe_dump(doc, sort_keys=sort_keys).encode()
    stream = Reads(data)
    documents = yamlread.documents(_Pieces(stream), lists=True)
    doc_no, index, streamed = next(documents)
    assert (doc_no, index) == (1, None) and isinstance(streamed, yamlread.StreamedItems)
    keys = sorted(doc) if sort_keys else list(doc)
    assert streamed.head == {k: doc[k] for k in keys[:keys.index("items")]}  # what was written before the items
    assert ("kind" in streamed.head) == (not sort_keys)
    seen = []
    for i, item in streamed.items():
        assert i == len(seen)
        seen.append(item)
        if i == 0:
            assert stream.most < len(data) // 10  # the first item comes before the rest is read
    assert seen == doc["items"]
    assert streamed.shell() == {**doc, "items": []}
    assert list(documents) == []


class _Pieces:
    """read(n) of at most 1,000 bytes, as a pipe gives them."""
    def __init__(self, stream):
        self.stream = stream

    def read(self, n=-1):
        return self.stream.read(min(n, 1000) if n > 0 else 1000)


def test_an_anchored_yaml_items_sequence_is_kept_for_its_aliases():
    data = b"apiVersion: v1\nkind: List\nitems: &all\n- {kind: Node, metadata: {name: a}}\nmetadata: {copy: *all}\n"
    got = list(yamlread.documents(data, lists=True))
    assert got == [(1, None, yaml.safe_load(data))]


@pytest.mark.parametrize("data, wants", [
    pytest.param(lambda: yaml.safe_dump(cluster()).encode() + b"\xff", "dump.json is not UTF-8 text (byte ",
                 id="a byte that is not UTF-8 after the items"),
    pytest.param(lambda: yaml.safe_dump(cluster()).encode().replace(b"name: web-5d8f-1", b"name: [web", 1),
                 "dump.json is neither JSON nor YAML: ", id="a syntax error in an item"),
    pytest.param(lambda: b"kind: List\napiVersion: v1\nitems:\n- &a [1]\n- [*a, *a, *a, *a, *a]\n" * 1,
                 "item 0 of the List is not a Kubernetes object", id="items that are not objects"),
])
def test_a_yaml_list_read_item_by_item_fails_with_one_error(tmp_path, capsys, monkeypatch, data, wants):
    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(files, "_YAML_READ", 97)
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, data()))
    assert_one_error(code, out, err, wants)


@pytest.mark.parametrize("form", ["YAML List", "YAML PodList, kind last", "YAML merge keys across items"])
def test_dump_from_a_yaml_list_writes_what_the_same_objects_as_json_write(tmp_path, capsys, monkeypatch, form):
    data = YAML_FORMS[form](cluster())
    as_json = b"\n".join(json.dumps(d).encode() for d in yaml.safe_load_all(data))
    whole = run(capsys, "dump", "--from-file", write(tmp_path, as_json, "whole.json"))
    monkeypatch.setattr(files, "_YAML_READ", 97)
    assert run(capsys, "dump", "--from-file", write(tmp_path, data)) == whole
    assert whole[0] == 0 and len(json.loads(whole[1])["items"]) == 9


def test_a_yaml_stdin_that_fails_midway_is_named_as_unreadable(monkeypatch):
    """What the read raises passes through libyaml as it was raised."""
    data = yaml.safe_dump(cluster()).encode()

    class Failing(io.RawIOBase):
        sent = 0

        def readable(self):
            return True

        def readinto(self, b):
            if self.sent > 200:
                raise OSError(5, "Input/output error")
            n = min(len(b), 150)
            b[:n] = data[self.sent:self.sent + n]
            self.sent += n
            return n

    monkeypatch.setattr(jsonstream, "CHUNK", 97)
    monkeypatch.setattr(files, "_YAML_READ", 97)
    with pytest.raises(files.InputError, match=r"^cannot read stdin: Input/output error$"):
        files.load_files(["-"], all_namespaces=True, stdin=Failing())


def items_twice(doc: dict, yaml_form: bool, second_empty: bool) -> bytes:
    """doc (a List) with a second `items` after the first: its last two items, or none."""
    second = [] if second_empty else doc["items"][-2:]
    first = {"apiVersion": doc["apiVersion"], "items": doc["items"][:-2]}
    rest = {"items": second, "kind": doc["kind"], "metadata": doc["metadata"]}
    if yaml_form:
        return (yaml.safe_dump(first, sort_keys=False) + yaml.safe_dump(rest, sort_keys=False)).encode()
    return json.dumps(first).encode()[:-1] + b", " + json.dumps(rest).encode()[1:]


@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "item by item"])
@pytest.mark.parametrize("yaml_form", [False, True], ids=["json", "yaml"])
@pytest.mark.parametrize("second_empty", [False, True], ids=["second with items", "second empty"])
def test_a_list_naming_items_twice_is_refused_however_it_is_read(tmp_path, capsys, monkeypatch, stdin, streamed,
                                                                  yaml_form, second_empty):
    # before: a JSON List read whole took the second array, read item by item the first, and
    # YAML both, so the same dump gave three clusters depending on its size and form
    data = items_twice(cluster(), yaml_form, second_empty)
    if streamed:
        monkeypatch.setattr(jsonstream, "CHUNK", 97)
        monkeypatch.setattr(jsonstream, "WHOLE", 300)
        monkeypatch.setattr(files, "_YAML_READ", 97)
    path = write(tmp_path, data, "dump.yaml" if yaml_form else "dump.json")
    if stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, err = run(capsys, "distribution", "-A", "--from-file", "-" if stdin else path)
    assert_one_error(code, out, err, "holds the key `items` twice, and readers differ on which to take; keep one "
                                     "items array", "stdin" if stdin else path)


def test_items_named_inside_an_item_is_no_second_items(tmp_path):
    doc = cluster()
    doc["items"][0]["metadata"]["annotations"] = {"items": "x"}
    doc["items"][1]["metadata"]["labels"] = {"items": "y"}
    data = json.dumps(kubectl_order(doc)).encode()
    assert len(load(data, tmp_path).nodes) == 3
