"""Memos keyed by an object's identity, for the drain planner's immutable states.

A simulation replaces a state by a new object whenever it changes, so "the same object
again" means "the same value": a memo can key on id() as long as each entry keeps its
object alive (an id is reused only once its object is freed). What such a memo must do
besides is let go of the entries whose object nothing else holds any more: the states a
search's losing branches and a step's moves left behind (`ObjectMemo`).
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

# how many references an object has (CPython); where that is unknown, every entry looks held
_refs = getattr(sys, "getrefcount", lambda obj: 3)


class ObjectMemo:
    """Values remembered per object, by identity (a state, a node list, a judge's answer: the
    same object again means the same value): each entry keeps its object alive, so its id is
    never another's while the entry lives. Past `limit` entries the memo lets go of those whose
    object nothing else holds: no caller can ask for it again (the simulation has moved on from
    that state, that list). Kept until the memo starts over, they would be most of a zone
    plan's growth: the order heuristic's target node sets of states long replaced. Of the
    rest, the oldest go while more than three quarters of `limit` are left."""

    __slots__ = ("_entries", "limit")

    def __init__(self, limit: int = 4096):
        self._entries: dict[int, tuple[Any, Any]] = {}
        self.limit = limit

    def get(self, obj: Any) -> Any:
        """The value kept for `obj`, or None."""
        hit = self._entries.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else None

    def put(self, obj: Any, value: Any) -> Any:
        """Keep `value` for `obj`; returns it."""
        entries = self._entries
        if len(entries) >= self.limit:
            # those whose object nothing but the entry holds, then the oldest
            for key in [key for key, hit in entries.items() if _refs(hit[0]) <= 2]:  # the entry's and the call's
                del entries[key]
            short = len(entries) - (self.limit - self.limit // 4)
            if short > 0:
                for key in list(itertools.islice(entries, short)):
                    del entries[key]
        entries[id(obj)] = (obj, value)
        return value
