"""YAML dumps read event by event, with bounded work for any input.

PyYAML's loaders build a document recursively (libyaml's composer in C: a deep enough
nesting overflows the C stack) and share an anchored value wherever it is aliased, so a
22 KB "billion laughs" becomes a tree whose walk (an orjson key, a repr) never ends. Here
libyaml only parses; the values are built from its events with an explicit stack, and:
- nesting deeper than MAX_DEPTH levels is refused before anything is built that deep;
- every alias counts the values it stands for, and a document whose aliases stand for more
  than ALIAS_BUDGET values is refused (kubectl never writes aliases; a hand-written dump
  that shares a block or two stays far below);
- one object holds at most OBJECT_VALUES values (the API server refuses objects over
  1.5 MiB), so a huge flow sequence inside an object stops early;
- the items of a top-level sequence (a bare array) are handed over one at a time, so a
  sequence of scalars is refused at its first item and a long one is never held whole;
  with `lists`, so are those of a top-level mapping's `items` (a List, as `kubectl get -o
  yaml` writes it: `kind` after `items`), through a StreamedItems, the YAML twin of
  jsonstream.StreamedList.

The input may be a stream (read(n) of bytes): libyaml reads it a piece at a time, so memory
follows the values kept, not the input's size.

Scalars resolve as with the SafeLoader, timestamps left as the strings the API sends
(an explicit `!!timestamp` still makes a datetime, which the decoders then name).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator

import yaml
from yaml import events as ev

from kubectl_tspread.snapshot import jsonscan
from kubectl_tspread.snapshot.fields import shown
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

MAX_DEPTH = jsonscan.MAX_DEPTH  # one bound for JSON and YAML
ALIAS_BUDGET = 100_000
# the API server stores objects of at most 1.5 MiB, each value at least two bytes of JSON
OBJECT_VALUES = 250_000

try:  # libyaml's parser (PyYAML's wheels have it); PyYAML's own is the same, only slower
    from yaml.cyaml import CParser as _Parser
except ImportError:  # pragma: no cover - depends on the environment
    _Parser = None

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_SCALAR_TAGS = frozenset(("tag:yaml.org,2002:" + t for t in
                          ("str", "int", "float", "bool", "null", "timestamp", "binary")))
_CACHE_LIMIT = 100_000  # plain scalars repeat (label values, "True", "0"): resolved once each


class _Resolver(Resolver):
    """The SafeLoader's implicit resolvers, without timestamps: `creationTimestamp:
    2026-03-01T10:00:00Z` unquoted stays the RFC 3339 text every record expects; and without
    YAML 1.1's base-60 numbers: `cpu: 1:30` would be 90 cores, where kubectl's YAML reader
    (go-yaml) leaves it the text it is, which no quantity is."""


def _without_base_60(tag: str, rx: Any) -> Any:
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        return re.compile(r"(?!.*:)" + rx.pattern, rx.flags)
    return rx


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, _without_base_60(tag, rx)) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}


class YamlLimit(ValueError):
    """Input past one of the bounds above; the message says which (files.py names the file)."""


class _BadScalar(YamlLimit):
    """A scalar its tag cannot make (`!!int abc`, `!!bool maybe`, a plain integer of 5,000
    digits, past Python's bound on parsing one); _parts() adds where it stands."""


class _Builder:
    def __init__(self) -> None:
        self.resolver = _Resolver()
        self.constructor = SafeConstructor()
        self.cache: dict[str, Any] = {}
        implicit = _Resolver.yaml_implicit_resolvers
        # a resolver for any first character (None) would make every plain scalar worth resolving
        self.first_chars: Any = _EVERY if None in implicit else frozenset(k for k in implicit if k)

    def resolve(self, text: str, implicit: tuple[bool, bool]) -> Any:
        """A plain scalar's value, as the SafeLoader resolves and constructs it (a cache miss:
        the text is kept for the next time)."""
        value = self.construct(self.resolver.resolve(ScalarNode, text, implicit), text)
        if len(self.cache) >= _CACHE_LIMIT:
            self.cache.clear()
        self.cache[text] = value
        return value

    def construct(self, tag: str, value: str) -> Any:
        if tag == _STR or tag == _MERGE:  # `<<` as a key: _parts() tells the merge by its text
            return value
        if tag not in _SCALAR_TAGS:
            raise YamlLimit(f"the YAML tag {tag} is not supported; write the value without it")
        try:
            return self.constructor.yaml_constructors[tag](self.constructor, ScalarNode(tag, value))
        except (ValueError, KeyError, AttributeError, OverflowError):  # what PyYAML's constructors raise
            kind = tag.rsplit(":", 1)[-1]
            raise _BadScalar(f"the value {shown(value)} is not a valid YAML {kind}; quote it if it is text, "
                             "or correct it") from None


_MISSING = object()
_NO_KEY = object()  # an open mapping waits for a key, not a value
_MERGE_KEY = object()  # an open mapping's key was `<<`: its value is merged
_TOP = object()  # outside any collection: a value made here is the document


class _Every:
    def __contains__(self, item: object) -> bool:
        return True


_EVERY = _Every()


class StreamedItems:
    """A List document whose `items` are handed over one at a time (the interface of
    jsonstream.StreamedList, with each item a built value instead of raw JSON): `head` is
    the mapping up to its items, `items()` gives (index, item) in turn, and once they are
    all read `shell()` is the document with `items: []`."""

    def __init__(self, head: dict, parts: Iterator[tuple[Any, int, int | None, Any]]):
        self.head, self._parts = head, parts
        self._shell: Any = _MISSING

    def items(self) -> Iterator[tuple[int, Any]]:
        while self._shell is _MISSING:
            tag, _, index, value = next(self._parts)
            if tag is _LIST_ITEM:
                yield index, value  # type: ignore[misc]
            else:  # the document's end: what was read of it besides its items
                self._shell = value

    def shell(self) -> Any:
        for _ in self.items():  # what the caller left unread
            pass
        return self._shell


def documents(data: Any, lists: bool = False,
              wrap: Callable[[Iterator[Any]], Iterator[Any]] = lambda parts: parts
              ) -> Iterator[tuple[int, int | None, Any]]:
    """(document number, item index or None, value) for every document of `data` (bytes, or
    a stream of bytes read a piece at a time): a document whose top level is a sequence gives
    its items one by one; with `lists`, a mapping whose `items` is a sequence comes as a
    StreamedItems; any other document whole.

    Raises yaml.YAMLError for a syntax error and YamlLimit past a bound, through `wrap` (a
    generator around the parse, which a StreamedItems' reader runs too)."""
    parts = wrap(_parts(data, lists))
    for tag, doc_no, index, value in parts:
        if tag is _HEAD:
            streamed = StreamedItems(value, parts)
            yield doc_no, None, streamed
            streamed.shell()
        else:
            yield doc_no, index, value


_DOC, _ITEM, _HEAD, _LIST_ITEM = (object() for _ in range(4))


def _parts(data: Any, lists: bool) -> Iterator[tuple[Any, int, int | None, Any]]:
    """(what, document number, item index or None, value): a whole document (_DOC), an item
    of a top-level sequence (_ITEM), the start of a List's items with the List read so far
    (_HEAD), one of its items (_LIST_ITEM), then its document without them (_DOC).

    This loop runs once per libyaml event (several per line of a dump), so the open
    collection is kept in local variables and its parents' on a stack of tuples, a
    collection's size (what an alias to it stands for) is the difference of a running
    count, and the common case (a plain scalar in a mapping) takes the first branches."""
    parser = (_Parser or yaml.SafeLoader)(data)
    get_event = parser.get_event
    builder = _Builder()
    resolve, construct, cache = builder.resolve, builder.construct, builder.cache
    first_chars = builder.first_chars
    scalar_event, alias_event = ev.ScalarEvent, ev.AliasEvent
    mapping_start, sequence_start = ev.MappingStartEvent, ev.SequenceStartEvent
    mapping_end, sequence_end = ev.MappingEndEvent, ev.SequenceEndEvent
    handed_over, no_key, merge_key, missing = _HANDED_OVER, _NO_KEY, _MERGE_KEY, _MISSING
    # the open collection: its value ({}, [] or handed_over; the document itself outside
    # any), whether a mapping, its key waiting for a value (or no_key), its anchor, the
    # running count at its start, and the keys merged into it (<<)
    cur: Any = _TOP
    cur_map = False
    key: Any = no_key
    cur_anchor: str | None = None
    cur_start = 0
    cur_merged: dict | None = None
    stack: list[tuple[Any, bool, Any, str | None, int, dict | None]] = []
    anchors: dict[str, tuple[Any, int]] = {}
    doc_no = 0
    aliased = 0
    count = 0  # values of the document so far: one per scalar and collection, an alias's size
    root_start = 0  # `count` when the current object began (a document, a List item)
    item = 0  # the next index of a top-level sequence
    done: Any = missing
    try:
        while True:
            e = get_event()
            cls = type(e)
            if cls is scalar_event:
                count += 1
                tag = e.tag
                if tag is None or tag == "!":
                    value = e.value
                    implicit = e.implicit
                    # plain, and not a string if a resolver knows its first character (or it is empty: null)
                    if implicit[0] and (not value or value[0] in first_chars):
                        hit = cache.get(value, missing)
                        value = resolve(value, implicit) if hit is missing else hit
                else:
                    value = construct(tag, e.value)
                anchor = e.anchor
                if cur_map and key is no_key:  # a mapping's key
                    if count - root_start > OBJECT_VALUES:
                        raise _too_big(doc_no)
                    if anchor is not None:
                        anchors[anchor] = (value, 1)
                    if value == "<<" and e.implicit[0]:
                        key = merge_key
                    else:
                        key = value  # a scalar: hashable
                    continue
                size = 1
            elif cls is mapping_start or cls is sequence_start:
                is_map = cls is mapping_start
                if e.tag not in (None, "!", _MAP if is_map else _SEQ):
                    raise YamlLimit(f"the YAML tag {e.tag} is not supported; write the value without it")
                depth = len(stack)
                if depth >= MAX_DEPTH:
                    raise YamlLimit(f"document {doc_no} is nested deeper than {MAX_DEPTH} levels; "
                                    "a Kubernetes object is never that deep")
                # an object of its own: a document, an item of a top-level sequence, or an item
                # of a top-level mapping's `items`
                if depth == 0 or (depth == 1 and not cur_map) or \
                        (depth == 2 and not cur_map and stack[1][1] and stack[1][2] == "items"):
                    root_start = count
                count += 1
                # a top-level sequence keeps none of its items: each is handed over when made
                made: Any = {} if is_map else (handed_over if depth == 0 else [])
                if depth == 1 and cur_map and key == "items" and "items" in cur:
                    raise _items_twice(doc_no)  # before its items are handed over after the first's
                if lists and not is_map and depth == 1 and cur_map and key == "items" and e.anchor is None:
                    # a List's items, handed over likewise (an anchored one may be aliased: kept)
                    made = handed_over
                    yield _HEAD, doc_no, None, dict(cur)
                stack.append((cur, cur_map, key, cur_anchor, cur_start, cur_merged))
                cur, cur_map, key, cur_anchor, cur_start, cur_merged = made, is_map, no_key, e.anchor, count - 1, None
                continue
            elif cls is mapping_end or cls is sequence_end:
                if cur_map and key is not no_key:  # pragma: no cover - libyaml pairs keys and values
                    raise YamlLimit(f"document {doc_no} has a key without a value")
                value, anchor, size = cur, cur_anchor, count - cur_start
                if cur_merged:  # keys written in the mapping win; merged ones come first, as PyYAML orders them
                    value = {**cur_merged, **value}
                cur, cur_map, key, cur_anchor, cur_start, cur_merged = stack.pop()
            elif cls is alias_event:
                if e.anchor not in anchors:
                    raise YamlLimit(f"document {doc_no} uses the alias *{e.anchor} before its anchor")
                value, size = anchors[e.anchor]
                anchor = None
                aliased += size
                count += size
                if aliased > ALIAS_BUDGET:
                    raise YamlLimit(f"document {doc_no}'s YAML aliases stand for more than {ALIAS_BUDGET:,} "
                                    "values (a \"billion laughs\"?); write the values out instead of aliasing them")
            elif cls is ev.DocumentStartEvent:
                doc_no += 1
                anchors.clear()
                aliased = count = root_start = item = 0
                done = missing
                continue
            elif cls is ev.DocumentEndEvent:
                if done is not missing and done is not handed_over:
                    yield _DOC, doc_no, None, done
                continue
            elif e is None or cls is ev.StreamEndEvent:
                return
            else:  # StreamStartEvent
                continue
            # a value (scalar, alias, collection) made: into the open collection
            if count - root_start > OBJECT_VALUES:
                raise _too_big(doc_no)
            if anchor is not None:
                anchors[anchor] = (value, size)
            if cur_map:
                if key is no_key:  # a key that is an alias or a collection (a scalar key went above)
                    try:
                        hash(value)
                    except TypeError:
                        raise YamlLimit(f"document {doc_no} has a mapping key that is a list or a map; "
                                        "keys of a Kubernetes object are strings") from None
                    key = value
                    continue
                if key is merge_key:
                    cur_merged = _merge(cur_merged, value, doc_no)
                else:
                    if key == "items" and key in cur and len(stack) == 1:  # a scalar or alias the second time
                        raise _items_twice(doc_no)
                    # a List's items, handed over, leave `items: []` as a JSON List's shell does
                    cur[key] = [] if value is handed_over else value
                key = no_key
            elif cur is handed_over:  # an item of a top-level sequence or List: handed over
                yield (_ITEM if len(stack) == 1 else _LIST_ITEM), doc_no, item, value
                item += 1
            elif cur is _TOP:
                done = value
            else:
                cur.append(value)
    except _BadScalar as bad:
        raise YamlLimit(f"document {doc_no}, line {e.start_mark.line + 1}: {bad}") from None
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


# what a List naming `items` twice is told, YAML or JSON (files._items_twice): which to read is ambiguous
ITEMS_TWICE = "holds the key `items` twice, and readers differ on which to take; keep one items array"


def _items_twice(doc_no: int) -> YamlLimit:
    return YamlLimit(f"document {doc_no} {ITEMS_TWICE}")


def _too_big(doc_no: int) -> YamlLimit:
    return YamlLimit(f"document {doc_no} holds an object of more than {OBJECT_VALUES:,} values; "
                     "no Kubernetes object is that big")


class _HandedOver(list):
    """The items of a top-level sequence once handed over: appending to it keeps nothing."""

    def append(self, value: Any) -> None:  # pragma: no cover - items go through the yield above
        pass


_HANDED_OVER = _HandedOver()


def _merge(merged: dict | None, value: Any, doc_no: int) -> dict:
    """`<<: *base` or `<<: [*a, *b]`: the keys of the mapping(s), the first one's winning."""
    sources = value if isinstance(value, list) else [value]
    merged = merged if merged is not None else {}
    for src in reversed(sources):  # the first one's keys win, the last one's come first (PyYAML)
        if not isinstance(src, dict):
            raise YamlLimit(f"document {doc_no} merges (<<) something that is not a mapping")
        merged.update(src)
    return merged
