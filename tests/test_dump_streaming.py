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
from kubectl_tspread.snapshot import files, jsonstream


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
