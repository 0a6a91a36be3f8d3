"""A dump redirected by Windows PowerShell (`kubectl get … -o json > dump.json` writes UTF-16
with a BOM) reads as kubectl reads it, by its BOM: the same answer as its UTF-8 twin, in every
form, from a file or stdin, however the chunks cut its characters."""

from __future__ import annotations

import io
import json

import pytest
import yaml

from test_hostile_input import assert_one_error, cluster, run, write
from kubectl_tspread.snapshot import jsonstream


def _forms() -> dict[str, str]:
    doc = cluster()
    # characters UTF-16 and UTF-8 spell in other lengths (2 and 2, 2 and 3, 4 and 4 bytes)
    doc["items"][0]["metadata"]["labels"]["note"] = "zoné-ä-日本-" + "区" * 40 + "-\U0001F600"
    return {"json": json.dumps(doc, ensure_ascii=False), "yaml": yaml.safe_dump(doc, allow_unicode=True),
            "objects": "\n".join(json.dumps(o, ensure_ascii=False) for o in doc["items"])}


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("form", sorted(_forms()))
@pytest.mark.parametrize("chunk", [None, 7], ids=["whole", "7-byte chunks"])
def test_a_utf16_dump_reads_as_its_utf8_twin(tmp_path, capsys, monkeypatch, codec, form, chunk):
    if chunk:
        monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    text = _forms()[form]
    data = text.encode(codec)
    if codec != "utf-16":  # the explicit byte orders write no BOM: add the one PowerShell writes
        data = ("\ufeff").encode(codec) + data
    want = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, text.encode(), "utf8.json"), "-o", "json")
    got = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, data, "utf16.json"), "-o", "json")
    assert want[0] == 0 and got == want


def test_utf16_on_stdin(capsys, monkeypatch):
    text = _forms()["json"]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-16"))))
    code, out, err = run(capsys, "distribution", "-A", "--from-file", "-", "-o", "json")
    assert (code, err) == (0, ""), err
    assert json.loads(out)["workloads"]


def test_a_file_that_starts_as_utf16_but_is_not_is_one_error(tmp_path, capsys):
    data = "{\"kind\": \"List\"".encode("utf-16") + b"\x00\xd8\x41\x00"  # a lone high surrogate, then 'A'
    code, out, err = run(capsys, "distribution", "-A", "--from-file", write(tmp_path, data, "bad.json"))
    assert_one_error(code, out, err, "starts as UTF-16 but is not (byte ")
