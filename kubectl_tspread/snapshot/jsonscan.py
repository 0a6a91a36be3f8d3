"""JSON bytes scanned for their nesting, before any decoder sees them.

Every JSON decoder the tool uses (msgspec, orjson, the json module) recurses once per level
of nesting, guarded only by Python's recursion limit or a bound of its own; a dump or a
server answer nested thousands of levels deep would reach them. Here the bytes are walked
once without recursion, strings and their escapes skipped: nesting deeper than MAX_DEPTH
levels is refused before anything is decoded, and the places where the nesting returns to
a given level (where a document, or an item of a List, starts and ends) come out of the
same walk, so a huge dump can be split into its items without a parse of the whole.

The walk works on 64 bytes at a time as bit masks, over numpy arrays (jsonbits.py).
"""

from __future__ import annotations

from typing import Any

from kubectl_tspread.model.errors import InputError
from kubectl_tspread.snapshot.bounds import MAX_DEPTH


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
    found = scan(data, 0, 0, True, -1).too_deep
    if found is not None:
        raise TooDeep(found)
