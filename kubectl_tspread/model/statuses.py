"""Every status word a table or JSON document prints, defined once.

README's "Status words", `distribution --help` and docs/JSON.md say the same (a test holds
them to this list); drain-safe's help can print `status_help()` too.
"""

from __future__ import annotations

# worst first, as the distribution summary sorts them
STATUS_WORDS: dict[str, str] = {
    "VIOLATED": "a DoNotSchedule constraint's skew is above maxSkew (possible after scale-down, "
                "evictions or node loss: the scheduler only enforces at placement)",
    "OVER LIMIT": "drain-safe: a DoNotSchedule constraint ends a step above its limit, which is maxSkew, "
                  "or the skew before the drain when that was already higher (the drain made it worse)",
    "NO DOMAINS": "distribution: no node makes a domain for the constraint (node affinity, taints under "
                  "nodeTaintsPolicy Honor, a missing topology key): its pods have nowhere to go",
    "DRIFTED": "a ScheduleAnyway constraint's skew is above maxSkew (a preference, never enforced)",
    "AT LIMIT": "skew equals maxSkew: the domains holding the most matching pods accept no more",
    "OK": "skew below maxSkew",
}


def status_help(indent: str = "  ", width: int = 96) -> str:
    """The definitions as `--help` lines (in a \\b block: click keeps them as they are): each
    word, its meaning beside it wrapped under itself."""
    import textwrap

    col = max(map(len, STATUS_WORDS)) + 2
    lines = []
    for word, text in STATUS_WORDS.items():
        body = textwrap.wrap(text, width - len(indent) - col)
        lines.append(f"{indent}{word.ljust(col)}{body[0]}")
        lines.extend(f"{indent}{' ' * col}{rest}" for rest in body[1:])
    return "\n".join(lines)
