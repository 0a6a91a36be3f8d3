"""Block YAML written directly, the same text as PyYAML's C dumper gives for the documents
of -o yaml (`yaml.dump(value, Dumper=CSafeDumper, sort_keys=False,
default_flow_style=False, allow_unicode=True)`), at a fraction of its cost.

Why: PyYAML turns every value into a node object and asks its resolver about every scalar
twice before libyaml writes a byte, which makes a big document (a whole zone's drain plan,
almost all of it keys and small integers) far slower as YAML than as JSON.

How it stays the same text:
- the layout is libyaml's block style: two spaces per mapping level, a sequence under a
  mapping key not indented, a collection in a sequence item starting on the item's line,
  empty collections as `[]` and `{}`;
- integers, booleans and null are written as SafeRepresenter writes them;
- a string made only of letters, digits and `_ / . : -` (not starting with `.`, `:` or
  `-`, not ending with `:`) is written plain, or in single quotes when YAML 1.1 would read
  it as something else (`true`, `1:20`, `2026-11-27`): the resolver's own table decides;
  so are such words joined by single spaces, without `: `, when they end before the
  column where libyaml would fold them (`AT LIMIT`), and as keys (never folded);
- any other string, and every float, is written by PyYAML itself, in a one-branch copy of
  its place in the document (the same chain of mappings and sequences, the same keys),
  and cut out of that text; the answer is kept per place and value. That costs two small
  dumps, so a dumper that has made more than _MISSES_ALLOWED of them, and more than one
  per _LINES_PER_MISS lines written, hands every later value to PyYAML whole: never much
  slower than PyYAML alone;
- what this module cannot vouch for makes the whole value go through PyYAML: a
  collection met twice (PyYAML writes an anchor and an alias), a key that is not a string
  or that PyYAML writes as a complex key (`? …`), a type other than dict, list, str, int,
  float, bool and None, a top-level scalar.
tests/test_yamltext.py compares it with PyYAML on the commands' documents and on random
ones.
"""

from __future__ import annotations

import re
from typing import Any, Callable

# letters, digits and `_ / . : -`; a plain scalar may not start with an indicator (`-`, `:`,
# `.` as in `...`), and a `:` at its end would read as a mapping key
_SAFE = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./:-]*\Z")
# the same words joined by single spaces (`AT LIMIT`, `ignoring DaemonSet-managed Pods`): plain
# too, unless a `: ` makes a key of them, and libyaml folds such a value at a space only past
# column WIDTH, so one that ends before it is written on its line as it is
_SPACED = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./:-]*(?: [A-Za-z0-9_./:-]+)+\Z")
WIDTH = 80
# keys longer than this go through PyYAML, which writes those past libyaml's limit as `? key`
_LONGEST_FAST_KEY = 100
# per place and value, PyYAML's text of a scalar this module does not write itself
_CACHE_LIMIT = 1 << 16
# a scalar PyYAML writes costs two small dumps; past this many of them, and more than
# one per LINES_PER_MISS lines written, every later value goes through PyYAML whole
_MISSES_ALLOWED = 256
_LINES_PER_MISS = 50


class _Unsure(Exception):
    """Something only PyYAML should write: the whole value goes through it."""


def dumper(pyyaml_dump: Callable[[Any], str]) -> Callable[[Any], str]:
    """A function giving `pyyaml_dump(value)`'s text for a dict or list; `pyyaml_dump` must be
    the C dumper call of the module docstring (it is what this module falls back to and cuts
    scalars from)."""
    from yaml.resolver import Resolver

    # the resolver's regexps by a string's first character, those for any first one after
    # them (Resolver.resolve reads both)
    anywhere = tuple(Resolver.yaml_implicit_resolvers.get(None, ()))
    resolvers = {first: tuple(rs) + anywhere for first, rs in Resolver.yaml_implicit_resolvers.items()}
    scalars: dict[tuple, str] = {}  # (place, value) -> PyYAML's text of the value there
    # a string this module writes -> its text (plain, or quoted): words without spaces, and
    # apart from them (their text holds only where there is room) words joined by spaces
    words: dict[str, str] = {}
    phrases: dict[str, str] = {}

    def word(s: str) -> str | None:
        """The text of a string without spaces this module writes itself, None for the others."""
        text = words.get(s)
        if text is not None:
            return text
        if not _SAFE.match(s) or s[-1] == ":":
            return None
        return remember(s, words)

    def spaced(s: str, room: int) -> str | None:
        """The text of a string with spaces, written where `room` columns are left before
        WIDTH (any room for a key, which is never folded), None when PyYAML must write it."""
        if len(s) + 2 > room or not _SPACED.match(s) or s[-1] == ":" or ": " in s:
            return None
        text = phrases.get(s)
        return remember(s, phrases) if text is None else text

    def remember(s: str, cache: dict[str, str]) -> str:
        text = s
        for _tag, regexp in resolvers.get(s[0], anywhere):
            if regexp.match(s):  # read back it would not be a string: libyaml quotes it
                text = f"'{s}'"
                break
        return _keep(cache, s, text)

    def cut(real: Any, known: Any, tail: str) -> str:
        """PyYAML's text of `real` past what it shares with `known`, a document of the same
        shape whose text ends in `tail` where the two differ."""
        nonlocal misses, off
        misses += 1
        if misses > _MISSES_ALLOWED and misses * _LINES_PER_MISS > lines + len(current):
            off = True
            raise _Unsure
        a, b = pyyaml_dump(real), pyyaml_dump(known)
        if not b.endswith(tail):
            raise _Unsure
        lead = b[: len(b) - len(tail)]
        if not a.startswith(lead):
            raise _Unsure
        return a[len(lead):]

    def plain(value: Any) -> str | None:
        """The text of a scalar this module writes itself, None for one PyYAML must write."""
        kind = type(value)
        if kind is str:
            return word(value)
        if kind is int:
            return str(value)
        if kind is bool:
            return "true" if value else "false"
        if value is None:
            return "null"
        if kind is not float:
            raise _Unsure
        return None

    def scalar(value: Any, place: tuple) -> str:
        """PyYAML's text of a string or float written as the value at `place` (its key's
        or its item's)."""
        # repr: 0.0 and -0.0 are equal keys of a dict, and differ in YAML
        memo = (place, type(value), repr(value) if type(value) is float else value)
        hit = scalars.get(memo)
        if hit is None:
            text = cut(_branch(place, value), _branch(place, "x"), "x\n")
            if not text.endswith("\n"):
                raise _Unsure
            hit = _keep(scalars, memo, text[:-1])
        return hit

    def key(k: Any, parent: tuple) -> str:
        if type(k) is not str:
            raise _Unsure
        if len(k) <= _LONGEST_FAST_KEY:
            text = word(k)
            if text is None and " " in k:
                text = spaced(k, _LONGEST_FAST_KEY + 2)
            if text is not None:
                return text
        hit = scalars.get((parent, "key", k))
        if hit is None:
            # beside a key written plain ("k"), in a one-branch document; a key PyYAML writes
            # otherwise than `text: value` on one line is beyond this module
            text = cut(_branch(parent + (("m", k),), "x"), _branch(parent + (("m", "k"),), "x"), "k: x\n")
            if not text.endswith(": x\n"):
                raise _Unsure
            hit = text[: len(text) - len(": x\n")]
            if "\n" in hit or hit.startswith("?"):
                raise _Unsure
            _keep(scalars, (parent, "key", k), hit)
        return hit

    def value(v: Any, room: int, place: tuple, step: tuple) -> str:
        """The text of scalar `v` written at `place` + `step` (its key's or its item's),
        `room` columns before WIDTH."""
        text = plain(v)
        if text is None and type(v) is str and " " in v:
            text = spaced(v, room)
        return scalar(v, place + (step,)) if text is None else text

    def mapping(d: dict, indent: int, place: tuple, lead: str, acc: list, seen: set) -> None:
        """A non-empty mapping whose first line starts with `lead` (its indentation, or a
        sequence item's dash), its keys at column `indent`."""
        pad = " " * indent
        for k, v in d.items():
            text = f"{lead}{key(k, place)}:"
            lead = pad
            kind = type(v)
            if kind is int:
                acc.append(f"{text} {v}\n")
            elif kind is dict or kind is list:
                if id(v) in seen:  # PyYAML anchors any collection met twice, empty ones too
                    raise _Unsure
                seen.add(id(v))
                if not v:
                    acc.append(text + (" {}\n" if kind is dict else " []\n"))
                    continue
                acc.append(text + "\n")
                where = place + (("m", k),)
                if kind is dict:
                    mapping(v, indent + 2, where, pad + "  ", acc, seen)
                else:
                    sequence(v, indent, where, pad, acc, seen)
            else:
                acc.append(f"{text} {value(v, WIDTH - len(text) - 1, place, ('m', k))}\n")

    def sequence(items: list, indent: int, place: tuple, lead: str, acc: list, seen: set) -> None:
        """A non-empty sequence whose first dash comes after `lead`, the others at column `indent`."""
        pad = " " * indent
        where = place + (("s",),)  # a collection item's place
        for v in items:
            dash = lead + "- "
            lead = pad
            kind = type(v)
            if kind is dict or kind is list:
                if id(v) in seen:
                    raise _Unsure
                seen.add(id(v))
                if not v:
                    acc.append(dash + ("{}\n" if kind is dict else "[]\n"))
                    continue
                if kind is dict:
                    mapping(v, indent + 2, where, dash, acc, seen)
                else:
                    sequence(v, indent + 2, where, dash, acc, seen)
            else:
                acc.append(f"{dash}{value(v, WIDTH - len(dash), place, ('s',))}\n")

    # scalars handed to PyYAML, lines written before the value being written (`current`),
    # and whether PyYAML now writes every value
    misses, lines, current, off = 0, 0, [], False

    def dump(doc: Any) -> str:
        nonlocal lines, current
        kind = type(doc)
        if (kind is not dict and kind is not list) or not doc or off:
            return pyyaml_dump(doc)
        out: list[str] = []
        current = out
        try:
            if kind is dict:
                mapping(doc, 0, (), "", out, {id(doc)})
            else:
                sequence(doc, 0, (), "", out, {id(doc)})
        except _Unsure:
            return pyyaml_dump(doc)
        finally:
            lines += len(out)
            current = []
        return "".join(out)

    return dump


def _keep(cache: dict, key: Any, text: str) -> str:
    """`cache[key] = text`, emptying the cache first when it is full; returns `text`."""
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = text
    return text


def _branch(place: tuple, leaf: Any) -> Any:
    """The document holding only `leaf`, at `place` (a chain of ("m", key) and ("s",) steps)."""
    for step in reversed(place):
        leaf = {step[1]: leaf} if step[0] == "m" else [leaf]
    return leaf
