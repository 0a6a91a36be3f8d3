"""Decoded records shared between the many API objects that repeat the same sub-tree.

Speed and memory at 150k pods: the pods of one workload repeat the same labels, constraints,
tolerations, affinity, requests and owner, so each distinct sub-tree is decoded once and the
(immutable, read-only) record is shared. A sub-tree is keyed by its canonical JSON bytes where
it is nested (equal bytes mean equal JSON, so the shared record is exactly what decoding it
again would give), by a tuple of its values where it is flat. Every memo is bounded: past its
limit it starts over, which costs speed, never correctness.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping  # typing.Mapping's isinstance goes through Python
from typing import Any, Callable

from msgspec import DecodeError
from msgspec import Raw as TEXT  # JSON text a typed parse left unparsed (snapshot/wire.py)
from msgspec.json import decode as _decode_text
from orjson import dumps as json_key

from kubectl_tspread.model import OwnerRef
from kubectl_tspread.model.labels import label_text
from kubectl_tspread.snapshot.fields import UNITS_MAX, FieldError, flag, label_map, mapping, maps, name
from kubectl_tspread.model.quantity import to_scheduler_units

_intern = sys.intern
_MISSING = object()
MEMO: dict[Any, Any] = {}
MEMO_LIMIT = 200_000  # distinct sub-trees kept; past it the memo starts over (bounded memory)
UNITS: dict[tuple[str, Any], int] = {}
_LABELS: dict[tuple, dict[str, str]] = {}
_LABELS_LIMIT = 50_000  # a StatefulSet's pods each carry a label of their own name
_OWNERS: dict[tuple, OwnerRef] = {}


def memo(tag: str, raw: Any, build: Callable[[Any], Any], table: dict = MEMO, limit: int = MEMO_LIMIT) -> Any:
    """build(raw), shared between equal `raw` sub-trees (in `table`, bounded by `limit`); `raw`
    that cannot be keyed is decoded as is. JSON text (msgspec.Raw, from wire.py) is keyed as it
    came and parsed on a miss only: equal text is equal JSON, so its record is the one the
    parsed sub-tree's key would find."""
    text = type(raw) is TEXT
    try:
        key = (tag, bytes(raw) if text else json_key(raw))  # bytes: a Raw holds on to its whole page
    except (TypeError, ValueError):  # e.g. a YAML dump's datetime or non-string keys
        return build(raw)
    hit = table.get(key, _MISSING)
    if hit is _MISSING:  # None may be a record (no controller reference)
        hit = keep(table, key, build(parse_text(raw) if text else raw), limit)
    return hit


def parse_text(raw: Any) -> Any:
    """JSON text wire.py left unparsed, as a tree. What msgspec refuses but JSON allows (a
    number past a double, 1e400) is read as the json module reads the rest of a dump, so the
    decoder names the field holding it rather than msgspec's position in the text."""
    try:
        return _decode_text(raw)
    except DecodeError:
        try:
            return json.loads(bytes(raw), parse_int=json_int)
        except HugeNumber as e:  # said after the object's name (decode._named)
            raise HugeNumber(f"it {e}") from None


class HugeNumber(ValueError):
    """A JSON integer past Python's bound on parsing one (4,300 digits), where the json module
    would raise a plain ValueError: no Kubernetes field holds such a number."""


def json_int(digits: str) -> int:
    """The json module's parse_int for every JSON the tool reads with it (dumps, and text the
    typed parse left): HugeNumber past Python's bound, worded to follow what holds it."""
    try:
        return int(digits)
    except ValueError:
        raise HugeNumber(f"holds a number of {len(digits):,} digits; no Kubernetes field holds one, "
                         "correct it") from None


def keep(table: dict, key: Any, value: Any, limit: int = MEMO_LIMIT) -> Any:
    """table[key] = value, starting the table over when it is full (bounded memory)."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


def units(k: str, v: Any) -> int:
    """to_scheduler_units, remembered: a cluster uses a few dozen distinct quantities. A
    quantity that is not one, negative or past UNITS_MAX is a ValueError."""
    if v is True or v is False:  # equal to 1 and 0 as keys: it would find their quantities
        raise ValueError("not a quantity")
    try:
        return UNITS[(k, v)]
    except KeyError:
        out = UNITS[(k, v)] = _units(k, v)
        return out
    except TypeError:  # an unhashable value: a list or a map
        raise ValueError("not a quantity") from None


def _units(k: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError("not a quantity")
    out = to_scheduler_units(k, v)
    if not 0 <= out <= UNITS_MAX:
        raise ValueError("out of range")
    return out


def resources(d: Mapping | None, path: str = "resources") -> dict[str, int]:
    if not d:
        if d is not None:  # 0, "" or false where a map belongs is no empty map
            _check_resources(d, path)
        return {}
    try:
        return {_intern(k): units(k, v) for k, v in d.items()}
    except (ValueError, TypeError, AttributeError, ArithmeticError):
        _check_resources(d, path)
        raise


def _check_resources(d: Any, path: str) -> None:
    """Raises FieldError naming the quantity of `d` that resources() could not read."""
    if not isinstance(d, Mapping):
        raise FieldError(path, "a map of resource names to quantities", d)
    for k, v in d.items():
        if type(k) is not str:
            raise FieldError(path, "a map with string keys", k)
        try:
            units(k, v)
        except (ValueError, TypeError, ArithmeticError):
            unit = "millicores" if k == "cpu" else "units"
            raise FieldError(f"{path}.{k}", f"a quantity such as 500m or 2Gi, from 0 to {UNITS_MAX:,} {unit}",
                             v) from None


def labels(d: Mapping | None, path: str = "metadata.labels") -> dict[str, str]:
    """A label map with interned keys and values: 150k pods share a few hundred distinct strings."""
    if not d:
        mapping(d, path)  # 0, "" or false where a map belongs is no empty map
        return {}
    label_map(d, path)
    return {_intern(label_text(k)): _intern(label_text(v)) for k, v in d.items()}


def shared_labels(d: Mapping | None, path: str = "metadata.labels") -> dict[str, str]:
    """labels() for maps many objects repeat (a workload's labels, nodeSelector): one dict per distinct map."""
    if not d:
        mapping(d, path)  # 0, "" or false where a map belongs is no empty map
        return {}
    try:
        key = tuple(d.items())
    except AttributeError:
        raise FieldError(path, "a map", d) from None
    try:
        hit = _LABELS.get(key)
    except TypeError:  # an unhashable value: labels() names it
        return labels(d, path)
    if hit is None:
        hit = keep(_LABELS, key, labels(d, path), _LABELS_LIMIT)
    return hit


def owner(meta: Mapping) -> OwnerRef | None:
    """The controller ownerReference of `meta`, one record per distinct reference."""
    refs = meta.get("ownerReferences")
    if refs is not None and type(refs) is not list:  # 0, "" or a map: no list of references
        maps(refs, "metadata.ownerReferences")
    found = None
    for i, o in enumerate(refs or ()):
        if not isinstance(o, Mapping):
            raise FieldError(f"metadata.ownerReferences[{i}]", "a map", o)
        if flag(o.get("controller"), f"metadata.ownerReferences[{i}].controller"):
            if found is not None:  # the API allows one; the first would have been read as the controller
                raise FieldError(f"metadata.ownerReferences[{i}].controller",
                                 "true on one reference only (an object has one controller)", True)
            key = (o.get("kind"), o.get("name"), o.get("uid"), o.get("apiVersion"))
            if not all(type(part) is str and part for part in key):  # each required, as the API has it
                for field in ("kind", "name", "uid", "apiVersion"):
                    name(o.get(field), f"metadata.ownerReferences[{i}].{field}")
            found = _OWNERS.get(key)
            if found is None:
                found = keep(_OWNERS, key, OwnerRef(_intern(key[0]), *key[1:]))
    return found
