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

from typing import Any, Callable, Iterator

import yaml
from yaml import events as ev

from kubectl_tspread.snapshot import jsonscan
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
    2026-03-01T10:00:00Z` unquoted stays the RFC 3339 text every record expects."""


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}


class YamlLimit(ValueError):
    """Input past one of the bounds above; the message says which (files.py names the file)."""


class _Frame:
    __slots__ = ("value", "is_map", "key", "has_key", "anchor", "size", "root", "merged")

    def __init__(self, value: Any, is_map: bool, anchor: str | None, root: bool):
        self.value, self.is_map, self.anchor, self.root = value, is_map, anchor, root
        self.key, self.has_key, self.size, self.merged = None, False, 1, None


class _Builder:
    def __init__(self) -> None:
        self.resolver = _Resolver()
        self.constructor = SafeConstructor()
        self.cache: dict[str, Any] = {}
        implicit = _Resolver.yaml_implicit_resolvers
        # a resolver for any first character (None) would make every plain scalar worth resolving
        self.first_chars: Any = _EVERY if None in implicit else frozenset(k for k in implicit if k)

    def scalar(self, e: ev.ScalarEvent) -> Any:
        tag = e.tag
        plain = e.implicit[0]
        if tag is None or tag == "!":
            if not plain:
                return e.value  # quoted: a string
            text = e.value
            if text and text[0] not in self.first_chars:  # no implicit type starts so: a string
                return text
            hit = self.cache.get(text, _MISSING)
            if hit is not _MISSING:
                return hit
            value = self._construct(self.resolver.resolve(ScalarNode, text, e.implicit), text)
            if len(self.cache) >= _CACHE_LIMIT:
                self.cache.clear()
            self.cache[text] = value
            return value
        return self._construct(tag, e.value)

    def _construct(self, tag: str, value: str) -> Any:
        if tag == _STR or tag == _MERGE:  # `<<` as a key: documents() tells the merge by its text
            return value
        if tag not in _SCALAR_TAGS:
            raise YamlLimit(f"the YAML tag {tag} is not supported; write the value without it")
        return self.constructor.yaml_constructors[tag](self.constructor, ScalarNode(tag, value))


_MISSING = object()


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
    (_HEAD), one of its items (_LIST_ITEM), then its document without them (_DOC)."""
    parser = (_Parser or yaml.SafeLoader)(data)
    builder = _Builder()
    stack: list[_Frame] = []
    anchors: dict[str, tuple[Any, int]] = {}
    doc_no = 0
    aliased = 0
    values = 0  # values of the current object (since the last object root began)
    item = 0  # the next index of a top-level sequence
    try:
        while True:
            e = parser.get_event()
            if e is None:
                return
            cls = type(e)
            if cls is ev.DocumentStartEvent:
                doc_no += 1
                anchors.clear()
                aliased = values = item = 0
                done: Any = _MISSING
                continue
            if cls is ev.DocumentEndEvent:
                if done is not _MISSING and done is not _HANDED_OVER:
                    yield _DOC, doc_no, None, done
                continue
            if cls is ev.StreamEndEvent:
                return
            if cls is ev.StreamStartEvent:
                continue
            if cls is ev.MappingStartEvent or cls is ev.SequenceStartEvent:
                is_map = cls is ev.MappingStartEvent
                if e.tag not in (None, "!", _MAP if is_map else _SEQ):
                    raise YamlLimit(f"the YAML tag {e.tag} is not supported; write the value without it")
                if len(stack) >= MAX_DEPTH:
                    raise YamlLimit(f"document {doc_no} is nested deeper than {MAX_DEPTH} levels; "
                                    "a Kubernetes object is never that deep")
                root = _is_root(stack)
                if root:
                    values = 0
                values += 1
                # a top-level sequence keeps none of its items: each is handed over when made
                made = {} if is_map else (_HANDED_OVER if not stack else [])
                if lists and not is_map and _list_items(stack) and e.anchor is None:
                    # a List's items, handed over likewise (an anchored one may be aliased: kept)
                    made = _HANDED_OVER
                    yield _HEAD, doc_no, None, dict(stack[0].value)
                stack.append(_Frame(made, is_map, e.anchor, root))
                continue
            if cls is ev.ScalarEvent:
                value, size, anchor = builder.scalar(e), 1, e.anchor
                values += 1
            elif cls is ev.AliasEvent:
                if e.anchor not in anchors:
                    raise YamlLimit(f"document {doc_no} uses the alias *{e.anchor} before its anchor")
                value, size = anchors[e.anchor]
                anchor = None
                aliased += size
                values += size
                if aliased > ALIAS_BUDGET:
                    raise YamlLimit(f"document {doc_no}'s YAML aliases stand for more than {ALIAS_BUDGET:,} "
                                    "values (a \"billion laughs\"?); write the values out instead of aliasing them")
            else:  # MappingEndEvent, SequenceEndEvent
                frame = stack.pop()
                if frame.is_map and frame.has_key:  # pragma: no cover - libyaml pairs keys and values
                    raise YamlLimit(f"document {doc_no} has a key without a value")
                value, size, anchor = frame.value, frame.size, frame.anchor
                if frame.merged:  # keys written in the mapping win; merged ones come first, as PyYAML orders them
                    value = {**frame.merged, **value}
            if values > OBJECT_VALUES:
                raise YamlLimit(f"document {doc_no} holds an object of more than {OBJECT_VALUES:,} values; "
                                "no Kubernetes object is that big")
            if anchor is not None:
                anchors[anchor] = (value, size)
            if not stack:
                done = value
                continue
            parent = stack[-1]
            parent.size += size
            if not parent.is_map:
                if parent.value is _HANDED_OVER:  # an item of a top-level sequence or List: handed over
                    yield (_ITEM if len(stack) == 1 else _LIST_ITEM), doc_no, item, value
                    item += 1
                    continue
                parent.value.append(value)
            elif not parent.has_key:
                if value == "<<" and cls is ev.ScalarEvent and e.implicit[0]:
                    parent.key, parent.has_key = _MERGE, True
                    continue
                try:
                    hash(value)
                except TypeError:
                    raise YamlLimit(f"document {doc_no} has a mapping key that is a list or a map; "
                                    "keys of a Kubernetes object are strings") from None
                parent.key, parent.has_key = value, True
            else:
                if parent.key is _MERGE:
                    _merge(parent, value, doc_no)
                else:
                    # a List's items, handed over, leave `items: []` as a JSON List's shell does
                    parent.value[parent.key] = [] if value is _HANDED_OVER else value
                parent.key, parent.has_key = None, False
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


class _HandedOver(list):
    """The items of a top-level sequence once handed over: appending to it keeps nothing."""

    def append(self, value: Any) -> None:  # pragma: no cover - items go through the yield above
        pass


_HANDED_OVER = _HandedOver()


def _is_root(stack: list[_Frame]) -> bool:
    """Whether a collection starting now is an object of its own: a document, an item of a
    top-level sequence, or an item of a top-level mapping's `items`."""
    depth = len(stack)
    if depth == 0:
        return True
    if depth == 1:
        return not stack[0].is_map
    return depth == 2 and stack[0].is_map and stack[0].key == "items" and not stack[1].is_map


def _list_items(stack: list[_Frame]) -> bool:
    """Whether a sequence starting now is the `items` of a top-level mapping."""
    return len(stack) == 1 and stack[0].is_map and stack[0].has_key and stack[0].key == "items"


def _merge(frame: _Frame, value: Any, doc_no: int) -> None:
    """`<<: *base` or `<<: [*a, *b]`: the keys of the mapping(s), the first one's winning."""
    sources = value if isinstance(value, list) else [value]
    merged = frame.merged if frame.merged is not None else {}
    for src in reversed(sources):  # the first one's keys win, the last one's come first (PyYAML)
        if not isinstance(src, dict):
            raise YamlLimit(f"document {doc_no} merges (<<) something that is not a mapping")
        merged.update(src)
    frame.merged = merged
