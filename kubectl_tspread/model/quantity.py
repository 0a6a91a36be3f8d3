"""Kubernetes resource quantities -> integers the scheduler compares.

cpu is kept in millicores (the scheduler's MilliCPU); every other resource in whole
units rounded up (memory and ephemeral-storage in bytes, extended resources as counts).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, ROUND_CEILING

_SUFFIX = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}


def parse_quantity(text: str | int | float) -> Decimal:
    """'500m' -> 0.5, '1Gi' -> 1073741824, '1e3' -> 1000. Raises ValueError."""
    if isinstance(text, (int, float)):
        return Decimal(str(text))
    s = str(text).strip()
    if not s:
        raise ValueError("empty quantity")
    for suf in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"):
        if s.endswith(suf):
            return _num(s[: -2], s) * _SUFFIX[suf]
    last = s[-1]
    # '1e3' ends in a digit and goes to Decimal whole; a trailing letter is a suffix
    if last in "numkMGTPE":
        return _num(s[:-1], s) * _SUFFIX[last]
    return _num(s, s, exponent=True)


# the API's number: ASCII digits, one optional point, an exponent only without a suffix (`1e3`,
# never `1e3m`). Decimal alone would also take `1_000`, `١٠٠` (other scripts' digits), `Infinity`.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_EXPONENT = re.compile(r"[eE][+-]?[0-9]+")


def _num(part: str, whole: str, exponent: bool = False) -> Decimal:
    number = _NUMBER.match(part)
    rest = part[number.end():] if number else part
    if number is None or (rest and not (exponent and _EXPONENT.fullmatch(rest))):
        raise ValueError(f"invalid quantity {whole!r}")
    try:
        d = Decimal(part)
    except InvalidOperation:
        raise ValueError(f"invalid quantity {whole!r}") from None
    if not d.is_finite():
        raise ValueError(f"invalid quantity {whole!r}")
    return d


def to_scheduler_units(resource: str, text: str | int | float) -> int:
    """The integer the scheduler uses for `resource`: millicores for cpu, else the value rounded up."""
    q = parse_quantity(text)
    if resource == "cpu":
        q = q * 1000
    return int(q.to_integral_value(rounding=ROUND_CEILING))


def format_quantity(resource: str, value: int) -> str:
    """Inverse for display: 1500 cpu -> '1500m', 2 cpu cores -> '2', memory -> 'Mi'/'Gi' when exact."""
    if resource == "cpu":
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suf, mult in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if value and value % mult == 0:
                return f"{value // mult}{suf}"
    return str(value)
