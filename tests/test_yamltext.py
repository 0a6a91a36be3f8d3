"""render/yamltext.py writes the text PyYAML's C dumper writes, byte for byte: on random
documents, on the scalars YAML 1.1 reads as something else, on collections PyYAML anchors,
and on the commands' own -o yaml documents; and it writes most of it itself."""

from __future__ import annotations

import random

import pytest

yaml = pytest.importorskip("yaml")
if not hasattr(yaml, "CSafeDumper"):  # pragma: no cover - PyYAML's wheels have libyaml
    pytest.skip("the fast path is only used with PyYAML's C dumper", allow_module_level=True)

from kubectl_tspread.render import structured, yamltext  # noqa: E402


def pyyaml(value):
    return yaml.dump(value, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True)


class Counting:
    """pyyaml, counting its calls: how much the module left to PyYAML."""

    def __init__(self):
        self.calls = 0

    def __call__(self, value):
        self.calls += 1
        return pyyaml(value)


def _same(value, expect_calls=None):
    counting = Counting()
    text = yamltext.dumper(counting)(value)
    assert text == pyyaml(value)
    if expect_calls is not None:
        assert counting.calls == expect_calls
    return counting.calls


def test_a_document_of_plain_words_and_numbers_is_written_without_pyyaml():
    doc = {"apiVersion": "tspread/v1alpha1", "kind": "DrainPlan", "safe": False, "note": None,
           "steps": [{"step": 1, "nodes": ["node-b-00430"], "evictions": [
               {"namespace": "team-00", "name": "api-0000-e87da9a6b-wgb65", "workload": "Deployment/api-0000",
                "predictedNode": "node-a-00162", "acceptingDomains": {"topology.kubernetes.io/zone": ["zone-a"]}}],
               "skipped": [], "constraintsAfter": [{"distribution": {"zone-a": 3, "zone-b": 0, "zone-c": -1}}],
               "pdbs": {}}],
           "nested": [[1, [2, []], {}], [{"a": {"b": [{"c": {"d": 1}}]}}]]}
    _same(doc, expect_calls=0)


@pytest.mark.parametrize("word", [
    "true", "True", "FALSE", "yes", "No", "on", "OFF", "null", "Null", "NULL", "~", "1", "-1", "+1", "1.5",
    "1e3", "1_000", "0x1F", "0o17", "017", "0b101", "1:20", "190:20:30", "2026-11-27", "2026-11-27T03:35:36Z",
    ".5", ".inf", ".nan", "...", "---", "-", "-a", ":a", "a:", "a: b", "a:b", "a #b", "#a", "a#b", "<<", "=",
    "", " a", "a ", "é", "a\nb", "a\tb", "'a'", '"a"', "a'b", "@a", "`a", "!a", "&a", "*a", "%a", "|", ">",
    "[a]", "{a}", "a,b", "?a", "? a", "x" * 90 + " y" * 20, "x" * 200, "Deployment/web-1", "node-a1",
    "topology.kubernetes.io/zone", "AT LIMIT", "0/500 nodes are available: 3 Insufficient cpu.",
])
def test_scalars_as_keys_values_and_items(word):
    _same({word: word, "k": [word, {word: [word]}], "m": {"n": {"o": word}}})
    _same([word, [word, {"a": word}]])


@pytest.mark.parametrize("number", [0, -0.0, 0.0, 1.5, -2.25, 1e20, 1e-7, float("inf"), float("-inf"),
                                    float("nan"), 10**30, -7, True, False, None])
def test_numbers_and_constants(number):
    _same({"a": number, "b": [number, -0.0, 0.0], "c": {"d": number}})


def test_collections_met_twice_get_pyyaml_anchors():
    shared, empty = {"zone-a": 2}, []
    doc = {"a": shared, "b": [shared], "c": empty, "d": empty}
    text = yamltext.dumper(pyyaml)(doc)
    assert text == pyyaml(doc) and "&id001" in text and "*id002" in text


@pytest.mark.parametrize("doc", [{1: "a"}, {"a": (1, 2)}, {"a": {"x" * 130: 1}}, {("k",): 1}],
                         ids=["int key", "tuple", "long key", "tuple key"])
def test_what_pyyaml_writes_or_refuses_goes_through_it(doc):
    try:
        expected = pyyaml(doc)
    except yaml.YAMLError as err:
        with pytest.raises(type(err)):
            yamltext.dumper(pyyaml)(doc)
        return
    assert yamltext.dumper(pyyaml)(doc) == expected


def test_empty_and_top_level_values_are_pyyamls():
    for value in ({}, [], "a", 1, None):
        assert yamltext.dumper(pyyaml)(value) == pyyaml(value)


_ALPHABET = list("abcxyzAZ019_./:-") * 4 + list(" '\"#&*!|>%@`?,[]{}\n\té~<=+")
_WORDS = ["true", "no", "null", "1:20", "0x10", "2026-11-27", "1e3", ".5", "-", "x" * 120, "a " * 60, ""]


def _random_scalar(rng: random.Random):
    kind = rng.random()
    if kind < 0.35:
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.choice([1, 2, 5, 12, 40, 95])))
    if kind < 0.45:  # words joined by spaces, some past the folding column
        return " ".join(rng.choice("abz09_/") + "".join(rng.choice("abz09_./:-") for _ in range(rng.randint(0, 11)))
                        for _ in range(rng.randint(2, 14)))
    if kind < 0.55:
        return rng.choice(_WORDS)
    if kind < 0.75:
        return rng.randint(-10**6, 10**6)
    if kind < 0.85:
        return rng.choice([rng.uniform(-1e6, 1e6), 0.0, -0.0, 1e21, float("inf")])
    return rng.choice([True, False, None])


def _random_doc(rng: random.Random, depth: int):
    if depth == 0 or rng.random() < 0.3:
        return _random_scalar(rng)
    if rng.random() < 0.5:
        return [_random_doc(rng, depth - 1) for _ in range(rng.randint(0, 4))]
    out = {}
    for _ in range(rng.randint(0, 4)):
        k = _random_scalar(rng)
        k = k if isinstance(k, str) else str(k)
        out[k] = k if rng.random() < 0.2 else _random_doc(rng, depth - 1)  # a key's text as a value too
    return out


def test_random_documents_are_pyyamls_text():
    rng = random.Random(20261127)
    by_itself = 0
    for _ in range(3000):
        doc = _random_doc(rng, rng.randint(1, 6))
        if not isinstance(doc, (dict, list)):
            doc = {"top": doc}
        # a dumper per document: one that has handed PyYAML too many scalars sends it everything
        if _same(doc) == 0:
            by_itself += 1
    assert by_itself > 500  # documents the module wrote without PyYAML


def _run(capsys, args):
    from kubectl_tspread.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    out, _ = capsys.readouterr()
    return exc.value.code, out


@pytest.mark.parametrize("args", [
    ["distribution", "--demo", "-A"], ["distribution", "--demo", "-n", "shop", "deploy/inventory", "--timeline"],
    ["why-pending", "--demo", "-A"],
    ["drain-safe", "--demo", "--domain", "topology.kubernetes.io/zone=us-east-2c", "--ignore-daemonsets"],
    ["drain-safe", "--demo", "node-a3", "--ignore-daemonsets"],
], ids=["distribution", "timeline", "why-pending", "drain zone", "drain node"])
def test_the_commands_yaml_is_pyyamls_text(monkeypatch, capsys, args):
    """Each command's -o yaml on the demo cluster, as written, against the same command's
    output with PyYAML writing every piece."""
    fast = _run(capsys, args + ["-o", "yaml"])
    assert fast[0] in (0, 3)
    monkeypatch.setattr(structured, "_yaml_writer", lambda: pyyaml)
    assert _run(capsys, args + ["-o", "yaml"]) == fast
    assert len(fast[1]) > 1000


def test_structured_dump_uses_it_and_matches_pyyaml():
    assert structured._yaml_writer().__module__ == yamltext.__name__
    doc = {"apiVersion": "v", "kind": "K", "items": [{"a": "AT LIMIT", "b": [1, 2.5, None]}]}
    assert structured.dump(doc, "yaml") == pyyaml(doc)


def test_words_joined_by_spaces_around_the_folding_column():
    # libyaml folds a long value at a space past column 80: the module writes such a value
    # itself only when it ends before that, and PyYAML writes the others
    rng = random.Random(7)
    fast = yamltext.dumper(pyyaml)
    for length in range(40, 110, 3):
        words = []
        while len(" ".join(words)) < length:
            words.append("".join(rng.choice("abcxyz019-./:") for _ in range(rng.randint(1, 9))))
        text = " ".join(words)
        for doc in ({"k": text}, {"a": {"bb": {"message": text}}}, {"a": [text, [text, {"ccc": text}]]},
                    [{"key": 1, "message": text}], {text[:90]: text}):
            assert fast(doc) == pyyaml(doc), doc


def test_a_plain_spaced_value_is_written_without_pyyaml():
    _same({"status": "AT LIMIT", "steps": [{"skipped": [{"reason": "ignoring DaemonSet-managed Pods"}]}],
           "a b": ["c d", "2001-12-14 21:59:43.10 -5", "yes sir"]}, expect_calls=0)


def test_many_scalars_only_pyyaml_can_write_send_the_rest_to_it():
    # each such scalar costs two small PyYAML dumps; past a budget the whole value goes to
    # PyYAML at once instead of ~50 µs a scalar
    doc = [{"pod": f"p-{i}", "reason": f"#{i} refused"} for i in range(3000)]
    counting = Counting()
    fast = yamltext.dumper(counting)
    assert fast(doc) == pyyaml(doc)
    assert yamltext._MISSES_ALLOWED < counting.calls <= 2 * yamltext._MISSES_ALLOWED + 1
    # and so does every later value given to the same dumper (a stream's next items)
    before = counting.calls
    assert fast([{"pod": "p-0"}]) == pyyaml([{"pod": "p-0"}]) and counting.calls == before + 1
