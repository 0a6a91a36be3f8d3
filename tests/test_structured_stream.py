"""structured.pieces: a document with a Stream comes in pieces, the same text that dump()
makes of it whole (JSON and YAML), each streamed item made only as the piece before it is taken."""

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
    return "".join(structured.pieces(doc, fmt))


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("items", [ITEMS, ITEMS[:1], []], ids=["three", "one", "none"])
def test_streamed_text_is_the_whole_documents(fmt, items):
    whole = structured.dump(_doc(items), fmt)
    assert _written(_doc(items), fmt) == whole
    if fmt == "yaml":
        assert "&id001" in whole and "*id001" in whole  # the aliases of the keys after the stream


def test_streamed_json_keeps_non_ascii_text_as_it_is():
    assert '"é": 2' in _written(_doc(ITEMS), "json")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_each_item_is_made_when_it_is_written(fmt):
    made, seen = [], []

    def items():
        for item in ITEMS:
            made.append(item["step"])
            yield item

    doc = dict(_doc(ITEMS), steps=Stream(items))
    for text in structured.pieces(doc, fmt):
        seen.append((len(made), text))
    # the piece that holds step N is handed over before step N + 1 is made
    for n in (1, 2):
        marker = f'"step": {n},' if fmt == "json" else f"- step: {n}\n"
        assert [count for count, text in seen if marker in text] == [n]


def test_a_document_without_a_stream_is_written_whole():
    doc = {"kind": "DistributionReport", "workloads": []}
    assert list(structured.pieces(doc, "json")) == [structured.dump(doc, "json")]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "whole"])
def test_no_piece_is_longer_than_PIECE(monkeypatch, fmt, streamed):
    # a write of over 2 GiB reaches the OS in one call and is cut there without an error;
    # pieces() hands over slices of at most PIECE characters, the same text in all
    monkeypatch.setattr(structured, "PIECE", 7)
    doc = _doc(ITEMS) if streamed else structured.listed(_doc(ITEMS))
    pieces = list(structured.pieces(doc, fmt))
    assert "".join(pieces) == structured.dump(_doc(ITEMS), fmt)
    assert max(map(len, pieces)) == 7 and min(map(len, pieces)) >= 1


def _big(n: int) -> dict:
    return {"kind": "Big", "items": ["x" * 1000] * n}


def _big_size(n: int) -> int:
    # '{\n  "kind": "Big",\n  "items": [\n' + n × '    "x…x",\n' less the last comma + '  ]\n}\n'
    return 32 + n * 1008 - 1 + 6


def test_the_big_documents_size_is_counted_right():
    for n in (1, 3):
        assert len(structured.dump(_big(n), "json").encode()) == _big_size(n)


@pytest.mark.slow
def test_a_document_over_2_gib_reaches_a_pipe_whole():
    """The real failure: CPython gives one write of 2.2 GB to the OS, which moves 2,147,479,552
    bytes of it, and the rest is lost with exit 0. Through pieces() and click.echo every byte
    arrives (~15 s; the child holds the 2.2 GB text twice)."""
    import subprocess

    n = 2**31 // 1008 + 1000
    assert _big_size(n) > 2**31
    code = ("import click\nfrom kubectl_tspread.render import structured\n"
            f"doc = {{'kind': 'Big', 'items': ['x' * 1000] * {n}}}\n"
            "for piece in structured.pieces(doc, 'json'):\n    click.echo(piece, nl=False)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    received, tail = 0, b""
    while chunk := proc.stdout.read(1 << 24):
        received += len(chunk)
        tail = (tail + chunk)[-64:]
    assert proc.wait() == 0
    assert received == _big_size(n)
    assert tail.endswith(b'xxx"\n  ]\n}\n')
