"""Checks of the raw fields the decoders read: a malformed field is named, never a crash.

A decoder that meets a value of the wrong type, out of range or unparsable raises
FieldError with the field's path (`spec.topologySpreadConstraints[0].maxSkew`) and what the
API allows there; decode.DECODERS turns it into one InputError naming the object too. The
checks sit where values are decoded, which for the sub-trees many pods repeat is once per
distinct sub-tree (sharing.py), so a valid cluster pays almost nothing for them.
"""

from __future__ import annotations

import math
import re
from calendar import isleap
from collections.abc import Mapping  # typing.Mapping's isinstance goes through Python
from typing import Any

from kubectl_tspread.model.errors import InputError
from kubectl_tspread.model.labels import int64

INT32_MAX = 2**31 - 1
# a scheduler quantity (millicores, bytes, counts) beyond this is no real node or pod (8 PiB of
# memory, 9 billion cores) and would overflow the drain's 64-bit sums of them
UNITS_MAX = 2**53


class FieldError(ValueError):
    """`path` holds `got` where the API has `expected`."""

    def __init__(self, path: str, expected: str, got: Any = None):
        self.path, self.expected, self.got = path, expected, got
        super().__init__(f"{path}: expected {expected}, got {shown(got)}")


class MalformedObject(InputError):
    """An API object with a malformed field; `what` names the object, `detail` the field.
    `named`: `what` names it by its name; when False (no usable name or metadata), the caller
    adds where the object sits (`item 3 of the PodList`), since nothing else tells it apart."""

    def __init__(self, what: str, detail: str, named: bool = True):
        self.what, self.detail, self.named = what, detail, named
        super().__init__(f"cannot read {what}: {detail}; fix that field")

    def located(self, position: str, always: bool = False) -> str:
        """`what`, with `position` when it is needed to find the object (or `always`)."""
        return f"{self.what} ({position})" if always or not self.named else self.what


def shown(value: Any) -> str:
    """A short, printable description of a bad value."""
    if isinstance(value, Mapping):
        return "a map"
    if isinstance(value, (list, tuple)):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 40 else f"a number of {len(text)} digits"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return ascii(text) if not text.isprintable() else repr(text)
    return f"a {type(value).__name__}"


def printable(value: str) -> str:
    """A name as one line of an error: control characters (a newline would start a second
    `error:` line, an escape sequence would color the terminal) and lone surrogates escaped."""
    if value.isprintable():
        return value
    return value.encode("unicode_escape", "backslashreplace").decode("ascii")


def text(value: Any, path: str) -> str:
    """A string field: missing or null is ""."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise FieldError(path, "a string", value)


def name(value: Any, path: str) -> str:
    """A name every object has (metadata.name, a live object's metadata.namespace): a non-empty
    string. Missing, null or "" is refused: a list of empty objects is no list of objects."""
    if type(value) is str and value:
        return value
    raise FieldError(path, "a non-empty string", value)


def flag(value: Any, path: str) -> bool:
    """A boolean field: missing or null is false. The text "false" is no boolean (bool() of it
    would read true), nor is 0, "" or a map."""
    if value is None:
        return False
    if type(value) is not bool:
        raise FieldError(path, "true or false", value)
    return value


def mapping(value: Any, path: str) -> Mapping:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FieldError(path, "a map", value)
    return value


def sequence(value: Any, path: str) -> list | tuple:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise FieldError(path, "a list", value)
    return value


def maps(value: Any, path: str) -> list | tuple:
    """A list of maps (containers, tolerations, terms, …)."""
    items = sequence(value, path)
    for i, item in enumerate(items):
        # a parsed map is a dict: the ABC's isinstance runs Python code, for every pod's lists
        if type(item) is not dict and not isinstance(item, Mapping):
            raise FieldError(f"{path}[{i}]", "a map", item)
    return items


def strings(value: Any, path: str) -> tuple[str, ...]:
    items = sequence(value, path)
    for i, item in enumerate(items):
        if type(item) is not str:
            raise FieldError(f"{path}[{i}]", "a string", item)
    return tuple(items)


def integer(value: Any, path: str, low: int = -INT32_MAX - 1, high: int = INT32_MAX,
            what: str = "an integer") -> int:
    """An integer field (int32 unless told), also from its decimal text as YAML may give it."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise FieldError(path, what, value)
    if isinstance(value, str):
        # int() would also take " 3 ", "1_0" and other scripts' digits ("\uff12"), which no
        # decimal text the API writes holds: read as 3, 10 and 2 before
        if _DECIMAL.fullmatch(value) is None:
            raise FieldError(path, what, value)
        try:
            value = int(value)
        except ValueError:  # past Python's bound on parsing one (4,300 digits)
            raise FieldError(path, what, value) from None
    if not low <= value <= high:
        raise FieldError(path, f"{what} from {low} to {high}", value)
    return value


_DECIMAL = re.compile(r"[+-]?[0-9]+")
# RFC 3339 as Go's time.Parse(time.RFC3339) reads it (metav1.Time): the API writes `…:05Z`, a
# microsecond time `…:05.000000Z`; an offset `+02:00` is read too
_RFC3339 = re.compile(r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:"
                      r"[0-5][0-9](?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])")


_DAYS = (0, 31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # by month; February's is worked out


def timestamp(value: Any, path: str) -> str:
    """A metav1.Time field (creationTimestamp, deletionTimestamp): missing or null is "", else an
    RFC 3339 time. The API server refuses any other text, and "" too; read as a time it would
    mean one (a deletionTimestamp of "yesterday": terminating) or sort among times as text."""
    if value is None:
        return ""
    if type(value) is not str:
        raise FieldError(path, "an RFC 3339 time such as 2026-01-01T00:00:00Z", value)
    if value in TIMES:
        return value
    if _RFC3339.fullmatch(value) is not None:
        month = int(value[5:7])
        if int(value[8:10]) <= ((29 if isleap(int(value[:4])) else 28) if month == 2 else _DAYS[month]):
            if len(TIMES) >= 100_000:
                TIMES.clear()
            TIMES.add(value)
            return value
    raise FieldError(path, "an RFC 3339 time such as 2026-01-01T00:00:00Z", value)


# times already checked: the pods of a rollout share their creation second, so most pods'
# check is this lookup (decode.pod makes it inline); bounded, started over when full
TIMES: set[str] = set()


_QUOTE = "a string (quote what YAML reads as a number or true/false)"


def label_map(value: Any, path: str) -> Mapping:
    """A map of label keys to string values (null is "", as Go reads it into a map of strings).
    A number or a bool is refused, as the API server refuses it: unquoted YAML made it from
    text it no longer knows (`1.10` is 1.1, `012` is 10, `yes` is true), so its text would be
    another label than the one written."""
    d = mapping(value, path)
    for k, v in d.items():
        if type(k) is not str:
            raise FieldError(path, "a map with string keys", k)
        if type(v) is not str and v is not None:
            raise FieldError(f"{path}.{k}", _wanted(v), v)
    return d


def _wanted(v: Any) -> str:
    """What a label value should have been: a scalar's hint says to quote it."""
    return "a string" if isinstance(v, (Mapping, list, tuple)) else _QUOTE


def selector(value: Any, path: str) -> Any:
    """A metav1.LabelSelector, checked so that Selector.from_api reads it without surprises."""
    if value is None:
        return None
    d = mapping(value, path)
    for k in label_map(d.get("matchLabels"), f"{path}.matchLabels"):
        if k == "":
            raise FieldError(f"{path}.matchLabels", "label keys that are not empty", k)
    for i, e in enumerate(maps(d.get("matchExpressions"), f"{path}.matchExpressions")):
        where = f"{path}.matchExpressions[{i}]"
        name(e.get("key"), f"{where}.key")
        if e.get("operator") not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise FieldError(f"{where}.operator", "In, NotIn, Exists or DoesNotExist", e.get("operator"))
        operands(e, where)
    return d


def operands(e: Mapping, where: str) -> None:
    """The values of a requirement (`e`, at `where`) as the API validates them for its operator:
    In and NotIn need some, Exists and DoesNotExist none, Gt and Lt (node selectors) one
    integer. `In` of no values would match nothing, `Exists` with some ignore them."""
    values = e.get("values")
    scalars(values, f"{where}.values")
    op = e.get("operator")
    if op in ("In", "NotIn"):
        if not values:
            raise FieldError(f"{where}.values", f"one value or more for {op}", values)
    elif op in ("Exists", "DoesNotExist"):
        if values:
            raise FieldError(f"{where}.values", f"no values for {op}", values)
    elif op in ("Gt", "Lt"):
        if len(values or ()) != 1 or type(values[0]) is not str or int64(values[0]) is None:
            raise FieldError(f"{where}.values", f"one integer for {op}", values)


def scalars(value: Any, path: str) -> None:
    """A requirement's values: strings, as label_map's (a number YAML made is refused)."""
    for i, item in enumerate(sequence(value, path)):
        if type(item) is not str:
            raise FieldError(f"{path}[{i}]", _wanted(item), item)


def one_of(value: Any, path: str, choices: tuple[str, ...], default: str) -> str:
    if value is None or value == "":
        return default
    if value not in choices or type(value) is not str:
        raise FieldError(path, " or ".join(choices), value)
    return value
