"""JSON bytes scanned for their nesting, before any decoder sees them.

Every JSON decoder the tool uses (msgspec, orjson, the json module) recurses once per level
of nesting, guarded only by Python's recursion limit or a bound of its own; a dump or a
server answer nested thousands of levels deep would reach them. Here the bytes are walked
once without recursion, strings and their escapes skipped: nesting deeper than MAX_DEPTH
levels is refused before anything is decoded, and the places where the nesting returns to
a given level (where a document, or an item of a List, starts and ends) come out of the
same walk, so a huge dump can be split into its items without a parse of the whole.

The walk works on 64 bytes at a time as bit masks, over numpy arrays (jsonbits.py). Without
numpy (the pure-Python krew archive), `depth_py` bounds the nesting with bytes methods.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from kubectl_tspread.errors import InputError

# Kubernetes objects nest a few dozen levels at most (a CRD's schema is the deepest kind);
# 200 leaves room for any of them and keeps every recursive decoder far from its limit
MAX_DEPTH = 200


@functools.lru_cache(maxsize=None)
def available() -> bool:
    """Whether the numpy walk can run (the pure-Python krew archive has no numpy)."""
    try:
        import numpy  # noqa: F401
    except ImportError:  # pragma: no cover - the pure-Python krew archive
        return False
    return True


def too_deep_error(label: str, offset: int) -> InputError:
    """The error line for an input nested past MAX_DEPTH."""
    return InputError(f"{label} holds JSON nested deeper than {MAX_DEPTH} levels (at byte {offset}); "
                      "a Kubernetes object is never that deep: give what `kubectl get … -o json` prints")


class TooDeep(ValueError):
    """Nesting deeper than MAX_DEPTH; `offset` is the byte where it goes past."""

    def __init__(self, offset: int):
        super().__init__(f"JSON nested deeper than {MAX_DEPTH} levels (at byte {offset})")
        self.offset = offset


def scan(buf: Any, start: int = 0, depth: int = 0, final: bool = True, level: int = 0,
         limit: int | None = None) -> Any:
    """Walk buf[start:] (at most `limit` bytes of it) from nesting `depth`: jsonbits.Scanned."""
    from kubectl_tspread.snapshot import jsonbits

    return jsonbits.Scanned(buf, start, depth, final, level, limit)


def check(data: Any) -> None:
    """Raise TooDeep when `data` (bytes of JSON) nests deeper than MAX_DEPTH."""
    found = scan(data, 0, 0, True, -1).too_deep if available() else depth_py(data)
    if found is not None:
        raise TooDeep(found)


_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[{]|[\]}]', re.DOTALL)
_FOLD = bytes.maketrans(b"[]", b"{}")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_SLICE = 1 << 24


def depth_py(data: Any) -> int | None:
    """The first byte past MAX_DEPTH, or None, without numpy (the pure-Python krew archive):
    escapes and then strings are cut out and the brackets left folded to `{` and `}`; taking
    out `{}` pairs again and again empties them within MAX_DEPTH rounds when nothing nests
    deeper. Only otherwise (too deep, or unbalanced) are the bytes walked one token at a time.
    The bytes are taken a slice at a time, each ending at a line break (never inside a string)."""
    data = bytes(data)
    pieces, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start + _SLICE)
        end = len(data) if end < 0 else end + 1
        text = data[start:end].replace(b"\\\\", b"").replace(b'\\"', b"")
        pieces.append(b"".join(text.split(b'"')[0::2]).translate(_FOLD, _NOT_BRACKETS))
        start = end
    brackets = b"".join(pieces)
    for _ in range(MAX_DEPTH):
        if not brackets:
            return None
        shorter = brackets.replace(b"{}", b"")
        if len(shorter) == len(brackets):
            break
        brackets = shorter
    depth = 0
    for m in _TOKENS.finditer(data):
        c = data[m.start()]
        if c == 34:
            continue
        depth += 1 if c in (91, 123) else -1
        if depth > MAX_DEPTH:
            return m.start()
    return None
