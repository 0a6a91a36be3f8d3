"""Memos keyed by object identity (`ObjectMemo`), for the drain planner's immutable states."""

from __future__ import annotations

import itertools
import sys
from typing import Any

_refs = getattr(sys, "getrefcount", lambda obj: 3)  # references to an object (CPython); elsewhere all look held


class ObjectMemo:
    """Values remembered per object by identity: a simulation replaces a state whenever it changes, so the same object
    means the same value. Each entry keeps its object alive, so its id is not reused while the entry lives. Past `limit`
    entries it drops those whose object nothing else holds (no caller can ask again), then the oldest to 3/4 of it."""

    __slots__ = ("_entries", "limit")

    def __init__(self, limit: int = 4096):
        self._entries: dict[int, tuple[Any, Any]] = {}
        self.limit = limit

    def get(self, obj: Any) -> Any:
        hit = self._entries.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: Any, value: Any) -> Any:
        entries = self._entries
        if len(entries) >= self.limit:
            entries = self._entries = {k: h for k, h in entries.items() if _refs(h[0]) > 2}  # held elsewhere too
            for key in list(itertools.islice(entries, max(0, len(entries) - (self.limit - self.limit // 4)))):
                del entries[key]
        entries[id(obj)] = (obj, value)
        return value
