"""Label selectors: the API's LabelSelector and kubectl's `-l` syntax, one type.

Pure code. Mirrors k8s.io/apimachinery/pkg/labels semantics that the scheduler relies on:
- a nil LabelSelector selects nothing (`Selector.nothing()`);
- an empty one (`{}`) has no requirements: it matches every label set, but the
  spread plugin counts zero pods for it (see `Selector.empty`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from kubectl_tspread.model.errors import UsageError

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
_OPS = {IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT}


_INT64 = re.compile(r"[+-]?[0-9]{1,19}")


def int64(text: str) -> int | None:
    """`text` as Go's strconv.ParseInt(text, 10, 64) reads it, None where that fails (what the
    scheduler's Gt/Lt do: a label or value that is no int64 never matches). int() would also take
    "1_000", " 5", other scripts' digits and numbers past int64 — and raise on 4,300 digits."""
    if not _INT64.fullmatch(text):
        return None
    n = int(text)
    return n if -(1 << 63) <= n < 1 << 63 else None


def label_text(value: object) -> str:
    """A label value (or a selector's) as its text, for every label and selector read: a string
    as it is; null as "" (what Go reads a null into a map of strings as). The snapshot's readers
    refuse a number or bool where a label value belongs (snapshot/fields.label_map, scalars);
    a record built otherwise still gets its YAML text (`true`, `1`, `1.5`), where Python's
    str() would give "True" and "None", which no label holds.

    >>> [label_text(v) for v in ("web", True, 3, None)]
    ['web', 'true', '3', '']
    """
    if type(value) is str:
        return value
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `key op values` term. Gt/Lt appear only in node selectors."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == IN:
            return labels.get(self.key) in self.values if self.key in labels else False
        if op == NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GT, LT):
            # the API server guarantees one integer value; a non-integer label never matches
            if self.key not in labels or len(self.values) != 1:
                return False
            have, want = int64(labels[self.key]), int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GT else have < want
        return False

    def __str__(self) -> str:
        if self.op == IN and len(self.values) == 1:
            return f"{self.key}={self.values[0]}"
        if self.op == NOT_IN and len(self.values) == 1:
            return f"{self.key}!={self.values[0]}"
        if self.op == IN:
            return f"{self.key} in ({','.join(self.values)})"
        if self.op == NOT_IN:
            return f"{self.key} notin ({','.join(self.values)})"
        if self.op == EXISTS:
            return self.key
        if self.op == DOES_NOT_EXIST:
            return f"!{self.key}"
        return f"{self.key} {'>' if self.op == GT else '<'} {self.values[0] if self.values else ''}"


@dataclass(frozen=True, slots=True)
class Selector:
    """An AND of requirements; `is_nothing` marks the nil selector that selects nothing."""

    requirements: tuple[Requirement, ...] = ()
    is_nothing: bool = False

    @classmethod
    def nothing(cls) -> "Selector":
        return cls((), True)

    @property
    def empty(self) -> bool:
        """True for `{}`: matches everything, yet the spread plugin counts no pods with it."""
        return not self.is_nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.is_nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def merged(self, extra: Iterable[Requirement]) -> "Selector":
        """AND more requirements in; merging a requirement already present changes nothing."""
        if self.is_nothing:
            return self
        have = list(self.requirements)
        for r in extra:
            if r not in have:
                have.append(r)
        return Selector(tuple(have))

    def __str__(self) -> str:
        if self.is_nothing:
            return "<none>"
        return ",".join(str(r) for r in self.requirements)

    @classmethod
    def from_api(cls, d: Mapping | None) -> "Selector":
        """metav1.LabelSelector dict -> Selector (None -> nothing).

        >>> str(Selector.from_api({"matchLabels": {"app": "web"}}))
        'app=web'
        """
        if d is None:
            return cls.nothing()
        reqs: list[Requirement] = []
        for k, v in sorted((d.get("matchLabels") or {}).items()):
            reqs.append(Requirement(k, IN, (label_text(v),)))
        for e in d.get("matchExpressions") or ():
            op = e.get("operator")
            if op not in (IN, NOT_IN, EXISTS, DOES_NOT_EXIST):
                raise ValueError(f"invalid label selector operator {op!r}")
            reqs.append(Requirement(e["key"], op, tuple(sorted(label_text(x) for x in e.get("values") or ()))))
        return cls(tuple(reqs))

    @classmethod
    def from_match_labels(cls, labels: Mapping[str, str] | None) -> "Selector":
        """A Service/RC style map selector; None or {} selects nothing (as the scheduler treats them)."""
        if not labels:
            return cls.nothing()
        return cls(tuple(Requirement(k, IN, (label_text(v),)) for k, v in sorted(labels.items())))

    @classmethod
    def parse(cls, text: str) -> "Selector":
        """kubectl `-l` syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h` (also `==`).

        Raises UsageError with the offending part on malformed input.
        """
        return cls(tuple(_Parser(text).parse()))


_KEY = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_TOKEN = re.compile(
    rf"\s*(?:(?P<not>!)\s*(?P<nkey>{_KEY})"
    rf"|(?P<key>{_KEY})(?:\s*(?P<eq>==|=|!=)\s*(?P<val>{_VALUE})"
    rf"|\s+(?P<set>in|notin)\s*\((?P<vals>[^()]*)\))?)\s*"
)
_VALUE_RE = re.compile(rf"^{_VALUE}$")


class _Parser:
    def __init__(self, text: str):
        self.text = text

    def fail(self, why: str) -> UsageError:
        return UsageError(
            f"invalid label selector {self.text!r}: {why}; "
            "use kubectl syntax such as 'app=web,tier!=db,zone in (a,b),!canary'"
        )

    def parse(self) -> list[Requirement]:
        text, pos, out = self.text, 0, []
        if not text.strip():
            return out
        while True:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise self.fail(f"cannot parse at {text[pos:]!r}")
            out.append(self._requirement(m))
            pos = m.end()
            if pos == len(text):
                return out
            if text[pos] != ",":
                raise self.fail(f"expected ',' at {text[pos:]!r}")
            pos += 1
            if pos == len(text):
                raise self.fail("trailing ','")

    def _requirement(self, m: re.Match) -> Requirement:
        if m.group("not"):
            return Requirement(m.group("nkey"), DOES_NOT_EXIST)
        key = m.group("key")
        if m.group("eq"):
            op = NOT_IN if m.group("eq") == "!=" else IN
            return Requirement(key, op, (m.group("val"),))
        if m.group("set"):
            vals = tuple(v.strip() for v in m.group("vals").split(","))
            if any(not _VALUE_RE.match(v) for v in vals):
                raise self.fail(f"bad value list ({m.group('vals')})")
            op = IN if m.group("set") == "in" else NOT_IN
            return Requirement(key, op, tuple(sorted(set(vals))))
        return Requirement(key, EXISTS)
