"""JSON documents one after another, split from a stream a chunk at a time.

files.py hands a `--from-file` input that starts like JSON to `JsonReader`, which reads it
CHUNK bytes at a time and cuts it where jsonscan's walk says documents begin and end: a
document that ends within WHOLE bytes of its start comes out whole (files.py parses it as
ever); a longer one — a `List` or a bare array of a whole cluster — comes out item by item,
each item's bytes handed over as soon as they are read and dropped once decoded, so memory
follows the records kept, not the dump's size, for a file and for stdin alike. Nothing is
decoded before jsonscan has walked its bytes: nesting past jsonscan.MAX_DEPTH is refused
first.

What is not a run of objects and arrays (a scalar document, YAML after JSON documents) ends
the split: the rest of the input goes back to files.py whole (`Rest`), which reads it as it
always did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from kubectl_tspread.model.errors import InputError
from kubectl_tspread.snapshot import jsonscan

CHUNK = 32 << 20  # bytes read at a time
# a document longer than this (from its first byte) is split into its items: a document held
# whole is split by msgspec into one object per item, 10 million of them for 30 MB of `{},`
WHOLE = 4 << 20
# bytes the walk covers at a time (more while no document or item ends in them): the places
# it finds are Python ints, one per document or item, 2 million for a chunk of `{}{}{}…`
WINDOW = 256 << 10
_ITEMS_A_WALK = 1 << 16  # a window that holds fewer items grows (each walk has a cost of its own)
_WIDEST = 8 << 20  # ... up to this: 8 MB of `{},` is 2.7 million items
# the API server stores no object over 1.5 MiB (etcd's bound), about 4 MB as kubectl indents it:
# a longer one is refused as soon as that much of it is read, before its decoding costs time and
# memory in proportion (a Node of 2 million labels is 33 MB); YAML's bound is yamlread.OBJECT_VALUES
OBJECT_BYTES = 8 << 20

_SPACE = re.compile(rb"[ \t\r\n]*")
_SEPARATOR = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*")
_GAP = (_SPACE, re.compile(rb"[ \t\r\n]*(?:,[ \t\r\n]*)?"))  # the start of one, before the first item or after one
_ITEMS_KEY = re.compile(rb'[{,][ \t\r\n]*"items"[ \t\r\n]*:[ \t\r\n]*\Z')
_OPENING = (0x7B, 0x5B)  # { [


@dataclass
class Whole:
    """A document held whole: its bytes `data`, starting at byte `offset` of the input."""
    doc_no: int
    offset: int
    data: memoryview


@dataclass
class Items:
    """A bare array too long to hold whole: `items` gives (index, raw JSON bytes) in turn."""
    doc_no: int
    items: Iterator[tuple[int, memoryview]]


@dataclass
class Rest:
    """Everything from byte `offset` of the input on, `docs` documents having come before it."""
    docs: int
    offset: int
    data: bytes


class StreamedList:
    """A `{…}` document too long to hold whole, with an `items` array: `items()` gives each
    item's raw bytes in turn; once they are all read, `shell()` is the document without its
    items (`"items": []`), parsed. `head`: the document up to its items, parsed when it can
    be (a List written by the API server names its kind there; kubectl writes it after)."""

    def __init__(self, reader: "JsonReader", doc_no: int, head: bytes, parse: Callable[[bytes], Any]):
        self.doc_no, self._reader, self._head, self._parse = doc_no, reader, head, parse
        self._items: Iterator[tuple[int, memoryview]] = iter(())
        self._shell: Any = None
        try:
            self.head = parse(head + b"]}")
        except InputError:
            self.head = None

    def start(self, items: Iterator[tuple[int, memoryview]]) -> None:
        self._items = items

    def item(self, index: int) -> str:
        """Item `index` in an error, as files.py words a List's (before its kind is read, if
        it comes after the items, a List's)."""
        kind = self.head.get("kind") if isinstance(self.head, dict) else None
        return f"item {index} of the {kind if type(kind) is str and kind.endswith('List') else 'List'}"

    def items(self) -> Iterator[tuple[int, memoryview]]:
        yield from self._items

    def shell(self) -> Any:
        if self._shell is None:
            for _ in self._items:  # what the caller left unread (an item it could not use)
                pass
            self._shell = self._parse(self._head + self._reader.tail(self.doc_no))
        return self._shell


class JsonReader:
    """The documents of one input (`stream`: read(n) and readinto(buffer)); `first` is its
    first chunk (a BOM already dropped)."""

    def __init__(self, label: str, stream: Any, first: bytes, parse: Callable[[bytes], Any]):
        self.label, self.stream, self.parse = label, stream, parse
        self.buf, self.base, self.eof = first, 0, not first
        self._tail_from: int | None = None  # where a StreamedList's items end (its `]`)

    # ---- the buffer -----------------------------------------------------------------------

    def _refill(self, keep: int) -> bool:
        """Keep the buffer from input byte `keep` on and read the next chunk after it; False
        when the end of the input was reached before (nothing can change any more)."""
        if self.eof:
            return False
        import numpy as np  # here, not above: --demo and small inputs never load numpy

        cut = keep - self.base
        left = max(0, len(self.buf) - cut)
        # a new buffer each time (the last one's items may still be in use), uninitialised (a
        # bytearray would be zeroed first) and read into directly: each chunk is copied once
        buf = np.empty(left + CHUNK, dtype=np.uint8)
        if left:
            buf[:left] = np.frombuffer(self.buf, dtype=np.uint8, count=left, offset=cut)
        with memoryview(buf) as view, view[left:] as free:
            n = self.stream.readinto(free)
        self.buf, self.base, self.eof = buf[:left + n], keep, n == 0
        return True

    def _scan(self, start: int, depth: int, level: int, limit: int | None = None
              ) -> tuple[Any, list[int], list[int], list[bool]]:
        sc = jsonscan.scan(self.buf, start - self.base, depth, self.eof, level, limit)
        at, after, opening = sc.returns()
        return sc, [a + self.base for a in at], after, opening

    def _byte(self, at: int) -> int:
        return int(self.buf[at - self.base])

    def _slice(self, start: int, stop: int) -> memoryview:
        return memoryview(self.buf)[start - self.base:stop - self.base]

    def _too_deep(self, sc: Any, before: int | None = None) -> None:
        if sc.too_deep is not None and (before is None or sc.too_deep + self.base <= before):
            raise jsonscan.too_deep_error(self.label, sc.too_deep + self.base)

    def _space(self, start: int, stop: int, separator: bool = False) -> bool:
        """Whether input bytes [start, stop) are only whitespace (with `separator`: one comma)."""
        pattern = _SEPARATOR if separator else _SPACE
        return pattern.fullmatch(self.buf, start - self.base, stop - self.base) is not None

    # ---- documents ------------------------------------------------------------------------

    def documents(self) -> Iterator[Whole | Items | StreamedList | Rest]:
        doc_no, pos, window = 0, self.base, WINDOW
        while True:
            pos = _SPACE.match(self.buf, pos - self.base).end() + self.base
            if pos - self.base == len(self.buf):
                if not self._refill(pos):
                    return
                continue
            if self._byte(pos) not in _OPENING:
                yield self._rest(pos, doc_no)
                return
            # at most WHOLE bytes: a document that ends past them is split into its items
            window = min(window, WHOLE)
            limited = window < len(self.buf) - (pos - self.base)
            sc, at, after, opening = self._scan(pos, 0, 0, window)
            # the documents the buffer holds whole: each an opening at depth 0 and its closing
            i = 0
            while i + 1 < len(at) and at[i] == pos and opening[i] and not opening[i + 1] and after[i + 1] == 0:
                end = at[i + 1] + 1
                self._too_deep(sc, end)
                doc_no += 1
                yield Whole(doc_no, pos, self._slice(pos, end))
                i += 2
                pos = _SPACE.match(self.buf, end - self.base).end() + self.base
            if i:
                if i // 2 < _ITEMS_A_WALK:
                    window *= 4
                continue  # whatever follows is looked at afresh from the top
            # a document that does not end in the buffer, or within WHOLE bytes
            self._too_deep(sc)
            if limited and window < WHOLE:
                window *= 4
                continue
            if self.eof and sc.stop == len(self.buf):
                yield self._rest(pos, doc_no)  # it never ends: files.py words what is wrong
                return
            if len(self.buf) - (pos - self.base) < WHOLE:
                self._refill(pos)
                continue
            doc_no += 1
            if self._byte(pos) == 0x5B:
                items = self._items(pos + 1, 1, lambda i, n=doc_no: f"document {n}, item {i}")
                yield Items(doc_no, items)
                for _ in items:  # what the caller left unread
                    pass
                pos = self._after_close
                continue
            found = self._head(pos, doc_no)
            yield found
            if isinstance(found, Whole):
                pos = found.offset + len(found.data)
            else:
                found.shell()  # reads the rest of the document if the caller did not
                pos = self._after_close

    def _rest(self, pos: int, docs: int) -> Rest:
        return Rest(docs, pos, self.rest(pos).data)

    def rest(self, pos: int) -> Rest:
        """The input from byte `pos` (still in the buffer) to its end, whole; the reader is done."""
        data = b"".join((memoryview(self.buf)[pos - self.base:], self.stream.read()))
        self.buf, self.base, self.eof = b"", pos + len(data), True
        return Rest(0, pos, data)

    def _items(self, first: int, depth: int, what: Callable[[int], str]) -> Iterator[tuple[int, memoryview]]:
        """The items of the array whose `[` ends just before input byte `first`, at nesting
        `depth` inside it; sets _after_close past its `]`. `what(i)` names item i in errors."""
        index, pos, window = 0, first, WINDOW
        while True:
            walked_from, counted = pos, index
            limited = window < len(self.buf) - (pos - self.base)  # the walk stops short of the buffer's end
            sc, at, after, opening = self._scan(pos, depth, depth, window)
            start = None
            for x, d, is_open in zip(at, after, opening):
                if start is None and is_open and d == depth + 1:
                    if not self._space(pos, x, separator=index > 0):
                        raise self._not_object(what(index))
                    start = x
                elif start is not None and not is_open and d == depth:
                    self._too_deep(sc, x + 1)
                    yield index, self._slice(start, x + 1)
                    index, pos, start = index + 1, x + 1, None
                elif start is None and not is_open and d == depth - 1:
                    if not self._space(pos, x):
                        raise self._not_object(what(index))
                    self._after_close = x + 1
                    self._tail_from = x
                    return
                elif start is None:  # pragma: no cover - the walk gives nothing else at these depths
                    raise self._not_object(what(index))
            self._too_deep(sc)
            if start is not None and sc.stop + self.base - start > OBJECT_BYTES:
                raise self._too_big(what(index))
            # what lies between items is whitespace and a comma: anything else is refused as
            # soon as it is read, not once the array ends (a huge array of numbers)
            if start is None and _GAP[index > 0].fullmatch(self.buf, pos - self.base, sc.stop) is None:
                raise self._not_object(what(index))
            if limited:  # walk on from `pos`, over more bytes unless the window held many items
                if pos == walked_from:  # no item ended in it: one longer than the window
                    window *= 4
                elif index - counted < _ITEMS_A_WALK:
                    window = min(window * 4, _WIDEST)
                continue
            window = min(window, _WIDEST)
            if not self._refill(pos):
                raise InputError(f"{self.label} is not valid JSON: {what(index)} never ends; "
                                 "give what `kubectl get … -o json` prints")

    def _not_object(self, what: str) -> InputError:
        return InputError(f"{self.label}: {what} is not a Kubernetes object; "
                          "give what `kubectl get … -o json` or `-o yaml` prints")

    def _too_big(self, what: str) -> InputError:
        return InputError(f"{self.label}: {what} is an object of more than {OBJECT_BYTES:,} bytes of JSON; the API "
                          "server stores none over 1.5 MiB: give what `kubectl get … -o json` prints")

    def _head(self, pos: int, doc_no: int) -> Whole | StreamedList:
        """A long `{…}` document: its items streamed when it has an `items` array, else whole."""
        limit = 1 << 16  # the head is small: the walk need not cover the whole buffer
        while True:
            sc, at, after, opening = self._scan(pos, 0, 1, limit)
            for x, d, is_open in zip(at, after, opening):
                if is_open and d == 2 and self._byte(x) == 0x5B and \
                        _ITEMS_KEY.search(self.buf, max(pos, x - 256) - self.base, x - self.base):
                    self._too_deep(sc, x + 1)
                    head = bytes(self._slice(pos, x + 1))
                    streamed = StreamedList(self, doc_no, head, self.parse)
                    streamed.start(self._items(x + 1, 2, streamed.item))
                    return streamed
                if not is_open and d == 0:
                    self._too_deep(sc, x + 1)
                    if x + 1 - pos > OBJECT_BYTES:
                        raise self._too_big(f"document {doc_no}")
                    return Whole(doc_no, pos, self._slice(pos, x + 1))
            self._too_deep(sc)
            if sc.stop + self.base - pos > OBJECT_BYTES:
                raise self._too_big(f"document {doc_no}")
            if limit < len(self.buf) - (pos - self.base):
                limit *= 4
                continue
            if not self._refill(pos):
                raise InputError(f"{self.label} is not valid JSON: document {doc_no} never ends; "
                                 "give what `kubectl get … -o json` prints")

    def tail(self, doc_no: int) -> bytes:
        """The document from its items' `]` to its end (StreamedList.shell)."""
        start = self._tail_from
        limit = 1 << 16
        while True:
            sc, at, after, opening = self._scan(start + 1, 1, 0, limit)
            for x, d, is_open in zip(at, after, opening):
                if not is_open and d == 0:
                    self._too_deep(sc, x + 1)
                    self._after_close = x + 1
                    return bytes(self._slice(start, x + 1))
            self._too_deep(sc)
            if limit < len(self.buf) - (start + 1 - self.base):
                limit *= 4
                continue
            if not self._refill(start):
                raise InputError(f"{self.label} is not valid JSON: document {doc_no} never ends; "
                                 "give what `kubectl get … -o json` prints")

    def _broken(self, doc_no: int, index: int, pos: int) -> InputError:
        return InputError(f"{self.label} is not valid JSON, or holds something else than objects, in "
                          f"document {doc_no} before its item {index} (byte {pos}); "
                          "give what `kubectl get … -o json` prints")
