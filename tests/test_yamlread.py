"""snapshot/yamlread.py against PyYAML's SafeLoader: the same values, and its bounds exact."""

from __future__ import annotations

import datetime
import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_tspread.snapshot import yamlread


def read(data: bytes | str, lists: bool = False) -> list:
    """Every document's value; a List's items (with `lists`) put back in place, a top-level
    sequence's items gathered again (an empty one gives none, so no document)."""
    if isinstance(data, str):
        data = data.encode()
    docs: list = []
    for doc_no, index, value in yamlread.documents(data, lists=lists):
        if isinstance(value, yamlread.StreamedItems):
            items = [item for _, item in value.items()]
            value = {**value.shell(), "items": items}
        if index is None:
            docs.append(value)
        else:  # an item of a top-level sequence
            if index == 0:
                docs.append([])
            docs[-1].append(value)
    return docs


def same(a, b) -> bool:
    """Equal, NaN equal to NaN and types kept (True is not 1)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


# plain scalars whose type YAML 1.1 decides by their text, as the SafeLoader resolves them
SCALARS = ["yes", "No", "on", "OFF", "true", "False", "~", "null", "Null", "", "0o17", "017", "0x1F",
           "0b101", "1_000", "-12", "+7", "1e3", "1.5e-3", "6.8523015e+5", ".nan", ".NaN",
           ".inf", "-.Inf", "1.0", "-0", "0.", "<<x", "y", "n", "1.2.3", "1Gi", "100m", "v1",
           "node-a-00000", "10.0.0.1", "-1-", "0o", "3.", "tru", "nulls"]


@pytest.mark.parametrize("text", SCALARS)
def test_a_plain_scalar_resolves_as_the_safe_loader_resolves_it(text):
    data = f"k: {text}\n{text or '~'}: v\nl: [{text}]\n"
    assert same(read(data), [yaml.safe_load(data)])


@pytest.mark.parametrize("text", ["190:20:30", "1:2", "1:30", "-1:30", "1:30.5", "+190:20:30.15"])
def test_base_60_numbers_stay_text(text):
    """YAML 1.1's sexagesimal numbers are text to kubectl's YAML reader (go-yaml): `cpu: 1:30` is
    no quantity, where the SafeLoader would make it 90 cores."""
    assert read(f"k: {text}\n") == [{"k": text}]
    assert read("k: !!int 1:30\n") == [{"k": 90}]  # asked for by its tag, it is still read


def test_timestamps_stay_text_unless_tagged():
    data = "a: 2026-03-01T10:00:00Z\nb: 2001-12-14\nc: !!timestamp 2001-12-14\nd: '2001-12-14'\n"
    assert read(data) == [{"a": "2026-03-01T10:00:00Z", "b": "2001-12-14", "c": datetime.date(2001, 12, 14),
                           "d": "2001-12-14"}]


def test_quoted_and_tagged_scalars_are_what_they_say():
    data = "a: 'yes'\nb: \"12\"\nc: !!str 12\nd: !!int '7'\ne: ! 12\nf: !!float 1\ng: !!binary aGk=\n"
    assert same(read(data), [yaml.safe_load(data)])


def test_merge_keys_and_anchors_as_pyyaml_builds_them():
    data = ("base: &b {x: 1, y: 2}\nextra: &e {z: 3}\n"
            "one:\n  <<: *b\n  y: 9\nmany:\n  w: 0\n  <<: [*b, *e]\nquoted:\n  '<<': *b\n")
    assert read(data) == [yaml.safe_load(data)]


_scalar = st.one_of(st.sampled_from(SCALARS), st.text(max_size=8), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=True))
_tree = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                     max_leaves=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(_tree, min_size=1, max_size=3), flow=st.booleans())
def test_documents_pyyaml_writes_read_as_pyyaml_reads_them(docs, flow):
    data = yaml.safe_dump_all(docs, default_flow_style=flow)
    assert same(read(data), [d for d in yaml.safe_load_all(data) if d != []])


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.dictionaries(st.sampled_from(["kind", "a", "b"]), _tree, max_size=3), max_size=5),
       before=st.booleans())
def test_a_list_read_item_by_item_is_the_list_read_whole(items, before):
    doc = {"apiVersion": "v1", "items": items, "kind": "List"} if before else \
        {"items": items, "kind": "List", "apiVersion": "v1"}
    data = yaml.safe_dump(doc, sort_keys=False)
    assert same(read(data, lists=True), [yaml.safe_load(data)])


# &a: the sequence, 1, the inner sequence, 2, 3, the mapping, k, v: 8 values
ALIASED = b"a: &a [1, [2, 3], {k: v}]\nb: &b [*a, *a]\nc: *b\n"  # *a twice (16), *b (1 + 16): 33


@pytest.mark.parametrize("budget, refused", [(33, False), (32, True)])
def test_aliases_count_every_value_they_stand_for(monkeypatch, budget, refused):
    monkeypatch.setattr(yamlread, "ALIAS_BUDGET", budget)
    if refused:
        with pytest.raises(yamlread.YamlLimit, match="aliases stand for more than 32 values"):
            read(ALIASED)
    else:
        assert read(ALIASED) == [yaml.safe_load(ALIASED)]


# each item: the mapping, its two keys and `Pod`, the sequence and its three numbers: 8 values
ITEMS = "".join("- {kind: Pod, n: [1, 2, 3]}\n" for _ in range(4))


@pytest.mark.parametrize("form", ["bare sequence", "List"])
@pytest.mark.parametrize("limit, refused", [(8, False), (7, True)])
def test_each_item_of_a_sequence_or_list_is_an_object_of_its_own(monkeypatch, form, limit, refused):
    monkeypatch.setattr(yamlread, "OBJECT_VALUES", limit)
    data = ITEMS if form == "bare sequence" else "kind: List\nitems:\n" + ITEMS
    if refused:
        with pytest.raises(yamlread.YamlLimit, match="holds an object of more than 7 values"):
            read(data, lists=True)
    else:  # 32 values in all, 8 in each item
        assert read(data, lists=True) == [yaml.safe_load(data)]


@pytest.mark.parametrize("data", [
    "kind: Pod\ncontainers:\n" + ITEMS,  # a sequence at the top of an object, not its `items`
    "kind: Pod\nspec:\n  items:\n" + ITEMS.replace("- ", "  - "),  # `items` not at the top: no List
], ids=["containers", "spec.items"])
def test_an_object_is_one_however_many_items_its_sequences_hold(monkeypatch, data):
    monkeypatch.setattr(yamlread, "OBJECT_VALUES", 20)
    with pytest.raises(yamlread.YamlLimit, match="holds an object of more than 20 values"):
        read(data, lists=True)
