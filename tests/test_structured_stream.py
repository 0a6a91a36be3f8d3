"""structured.write: a document with a Stream is written piece by piece as the same text that
dump() makes of it whole (JSON and YAML), each streamed item made only as it is written."""

from __future__ import annotations

import sys

import pytest

from kubectl_tspread.render import structured
from kubectl_tspread.render.structured import Stream

SHARED = {"zone-a": 2, "zone-b": 0}  # one object in two places: YAML writes an anchor and an alias

ITEMS = [
    {"step": 1, "nodes": ["a1"], "evictions": [], "distribution": {"a": 1, "é": 2}, "note": None},
    {"step": 2, "nodes": ["a2", "b1"], "evictions": [{"name": "web-1", "pdbs": []}], "safe": False,
     "text": "a long line " * 12 + "that YAML folds", "nested": {"deep": [[1, 2], {"x": "y: z"}]}},
    {"step": 3, "nodes": [], "evictions": [{}], "safe": True},
]


def _doc(items):
    return {"apiVersion": "tspread/v1alpha1", "kind": "DrainPlan", "nodes": ["a1", "a2"], "safe": True,
            "steps": Stream(lambda: iter(items)),
            "stranded": [{"details": {"distribution": SHARED}}, {"details": {"distribution": SHARED}}],
            "findings": [{"details": {"distribution": SHARED}}], "verdict": "UNSAFE: ...", "explored": 3}


def _written(doc, fmt) -> str:
    pieces: list[str] = []
    structured.write(doc, fmt, pieces.append)
    return "".join(pieces)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("items", [ITEMS, ITEMS[:1], []], ids=["three", "one", "none"])
def test_streamed_text_is_the_whole_documents(fmt, items):
    whole = structured.dump(_doc(items), fmt)
    assert _written(_doc(items), fmt) == whole
    if fmt == "yaml":
        assert "&id001" in whole and "*id001" in whole  # the aliases of the keys after the stream


def test_streamed_json_without_orjson_is_the_stdlib_documents(monkeypatch):
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson raises ImportError
    assert _written(_doc(ITEMS), "json") == structured.dump(_doc(ITEMS), "json")
    assert '"é": 2' in structured.dump(_doc(ITEMS), "json")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_each_item_is_made_when_it_is_written(fmt):
    made, seen = [], []

    def items():
        for item in ITEMS:
            made.append(item["step"])
            yield item

    doc = dict(_doc(ITEMS), steps=Stream(items))
    structured.write(doc, fmt, lambda text: seen.append((len(made), text)))
    # the piece that holds step N is written before step N + 1 is made
    for n in (1, 2):
        marker = f'"step": {n},' if fmt == "json" else f"- step: {n}\n"
        assert [count for count, text in seen if marker in text] == [n]


def test_a_document_without_a_stream_is_written_whole():
    pieces: list[str] = []
    doc = {"kind": "DistributionReport", "workloads": []}
    structured.write(doc, "json", pieces.append)
    assert pieces == [structured.dump(doc, "json")]
