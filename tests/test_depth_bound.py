"""Issue 58, nesting depth: bounded (jsonscan.MAX_DEPTH, 200 levels) before any recursive
decoder — msgspec, orjson, the json module — sees the bytes, in every form a dump comes in
and in the live path's answers but its pod pages (read by a typed parse that bounds itself);
YAML is built without recursion and bounded alike."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

import pytest
import yaml

from apiobjects import as_list
from fakeapi import FakeApiServer, raw_node, raw_pod, token_user, write_kubeconfig
from test_hostile_input import assert_one_error, cluster, run, write
from kubectl_tspread.snapshot import jsonbits, jsonscan, jsonstream

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEP = 300  # past the bound, and within the reach of a recursion limit lowered to 150 below


def nested(depth: int):
    value: object = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def deep_cluster() -> dict:
    doc = cluster()
    doc["items"][5]["spec"]["x"] = nested(DEEP)  # a pod, in the middle of the List
    return doc


def forms() -> dict[str, bytes]:
    doc = deep_cluster()
    items = doc["items"]
    return {
        "List": json.dumps(doc).encode(),
        "Lists one after another": b"\n".join(json.dumps(as_list(items[i:i + 3])).encode() for i in range(0, 9, 3)),
        "bare array": json.dumps(items).encode(),
        "objects one after another": b"\n".join(json.dumps(o).encode() for o in items),
        "YAML, block": yaml.safe_dump(doc).encode(),
        "YAML, flow": ("apiVersion: v1\nkind: List\nitems:\n- " + json.dumps(items[5]) + "\n").encode(),
    }


FORMS = sorted(forms())
WANTS = {"YAML, block": "nested deeper than 200 levels", "YAML, flow": "nested deeper than 200 levels"}


@pytest.mark.parametrize("split", [False, True], ids=["read whole", "read item by item"])
@pytest.mark.parametrize("form", FORMS)
def test_a_deep_dump_is_one_error_naming_the_file_and_the_bound(tmp_path, capsys, monkeypatch, form, split):
    if split:
        monkeypatch.setattr(jsonstream, "CHUNK", 97)
        monkeypatch.setattr(jsonstream, "WHOLE", 300)
    path = write(tmp_path, forms()[form], "deep.yaml" if form.startswith("YAML") else "deep.json")
    code, out, err = run(capsys, "distribution", "-A", "--from-file", path)
    assert_one_error(code, out, err, path, WANTS.get(form, "holds JSON nested deeper than 200 levels (at byte "))


def test_a_deep_dump_on_stdin_is_one_error(capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(forms()["List"])))
    code, out, err = run(capsys, "distribution", "-A", "--from-file", "-")
    assert_one_error(code, out, err, "stdin holds JSON nested deeper than 200 levels")


def test_no_recursive_decoder_sees_a_deep_dump(tmp_path):
    """With the recursion limit at 150, msgspec or json would raise RecursionError on 300
    levels: the error line must come from the walk before them, for every form, and a
    dump of ordinary depth must still be read."""
    paths = []
    for form, data in sorted(forms().items()):
        paths.append(write(tmp_path, data, f"{form.replace(' ', '-').replace(',', '')}.{'yaml' if 'YAML' in form else 'json'}"))
    paths.append(write(tmp_path, cluster(), "ordinary.json"))
    child = (
        "import contextlib, io, json, sys\n"
        "from kubectl_tspread.cli import main\n"
        "from kubectl_tspread.snapshot import jsonstream\n"
        "sys.setrecursionlimit(150)\n"
        "out = []\n"
        "for split in (False, True):\n"
        "    if split:\n"
        "        jsonstream.CHUNK, jsonstream.WHOLE = 97, 300\n"
        "    for path in sys.argv[1:]:\n"
        "        err = io.StringIO()\n"
        "        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):\n"
        "            try:\n"
        "                main(['distribution', '-A', '--from-file', path])\n"
        "            except SystemExit as e:\n"
        "                out.append([path, e.code, err.getvalue()])\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", child, *paths], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": REPO, "COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == 2 * len(paths)
    for path, code, err in results:
        if path.endswith("ordinary.json"):
            assert code == 0, err
            continue
        assert code == 1 and err.count("\n") == 1 and "200 levels" in err and path in err, (path, err)
        assert "Recursion" not in err and "unexpected" not in err, (path, err)


def _live(env, capsys, node: dict, pod: dict, pod_page: bytes | None = None) -> tuple[int, str, str, str]:
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(node)
        if pod_page is None:
            api.add(pod)
        else:  # bytes the fake's encoder could not make, or a pod it could not file
            api.add_route("GET", re.compile(r"^/api/v1/(namespaces/[^/]+/)?pods$"),
                          lambda server, req, m: (200, pod_page, {}))
        config = write_kubeconfig(str(env / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                                  {"fake": {"cluster": "fake", "user": "alice", "namespace": "prod"}}, "fake")
        code, out, err = run(capsys, "distribution", "--kubeconfig", config, "--request-timeout", "5s")
    return code, out, err, api.url


def test_a_deep_live_answer_is_one_error_naming_the_server(env, capsys):
    """Answers the tool parses whole are walked first; a pod page nested past the typed parse's
    own bound (Python's recursion limit) goes the same way."""
    node, pod = raw_node("n1"), raw_pod("web-1", "prod", node="n1")
    node["spec"]["x"] = nested(DEEP)
    code, out, err, url = _live(env, capsys, node, pod)
    assert_one_error(code, out, err, url, "with JSON nested deeper than 200 levels")
    node, pod = raw_node("n1"), raw_pod("web-1", "prod", node="n1")
    pod["spec"]["x"] = "DEEP"
    depth = 100_000
    page = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [pod]}).encode()
    page = page.replace(b'"DEEP"', b"[" * depth + b"]" * depth)
    code, out, err, url = _live(env, capsys, node, pod, page)
    assert_one_error(code, out, err, url, "/api/v1/namespaces/prod/pods", "with JSON nested deeper than 200 levels")


def test_a_pod_page_is_not_walked_for_nesting_the_decoder_never_builds(env, capsys):
    """Pod pages skip the walk (a pass over most of the bytes read): a deep field no filter reads
    is skipped inside the typed parse, unbuilt, and the pod is read; a deep value where the
    decoder reads one is named with its pod and field, never a RecursionError."""
    node, pod = raw_node("n1"), raw_pod("web-1", "prod", node="n1", labels={"app": "web"})
    pod["spec"]["x"] = nested(DEEP)
    pod["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                 "whenUnsatisfiable": "DoNotSchedule",
                                                 "labelSelector": {"matchLabels": {"app": "web"}}}]
    code, out, err, _ = _live(env, capsys, node, pod)
    assert (code, err) == (0, ""), err
    assert "pod/web-1" in out and "a=1" in out, out
    for where, field in ((("metadata", "name"), "metadata.name"),
                         (("spec", "nodeSelector"), "spec.nodeSelector"),
                         (("spec", "schedulerName"), "spec.schedulerName")):
        node, pod = raw_node("n1"), raw_pod("web-1", "prod", node="n1")
        pod[where[0]][where[1]] = nested(DEEP)
        page = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [pod]}).encode()
        code, out, err, url = _live(env, capsys, node, pod, page)
        assert_one_error(code, out, err, field)
        assert "Recursion" not in err, err


@pytest.mark.parametrize("window", [64, 128, 1 << 20])
def test_the_walk_agrees_with_a_byte_by_byte_walk(monkeypatch, window):
    """Strings with brackets, quotes and runs of backslashes inside, windows cut anywhere."""
    monkeypatch.setattr(jsonbits, "_WINDOW", window)
    rnd = random.Random(window)
    pieces = ['"a[{"', '"\\\\"', '"\\"]"', '"\\\\\\"}"', "[", "]", "{", "}", ",", " ", '"x"']
    for _ in range(300):
        data = "".join(rnd.choice(pieces) if rnd.random() < 0.8 else rnd.choice("[{") * rnd.randint(1, 120)
                       for _ in range(rnd.randint(0, 200))).encode()
        level = rnd.randint(0, 3)
        want_at, depth, string, escaped, too_deep = [], 0, False, False, None
        for i, c in enumerate(data):
            if string:
                escaped, string = (False, True) if escaped else (c == 92, c != 34)
                continue
            if c == 34:
                string = True
            elif c in b"[{":
                depth += 1
                if depth > jsonscan.MAX_DEPTH and too_deep is None:
                    too_deep = i
                if depth - 1 <= level:
                    want_at.append((i, depth, True))
            elif c in b"]}":
                depth -= 1
                if depth <= level:
                    want_at.append((i, depth, False))
        scanned = jsonscan.scan(data, 0, 0, True, level)
        assert list(zip(*scanned.returns())) == want_at
        assert (scanned.too_deep, scanned.end_depth) == (too_deep, depth)
