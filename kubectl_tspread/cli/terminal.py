"""What the terminal says: whether output is colored, how wide lines may run, the width tables
fit. render/ takes the answers as plain parameters (color, width, fit) and returns text."""

from __future__ import annotations

import os
from typing import IO

DEFAULT_WIDTH = 120  # what default views fit when neither COLUMNS nor a terminal says otherwise


def _isatty(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def use_color(mode: str, stream: IO[str]) -> bool:
    """--color auto|always|never; auto = a terminal and NO_COLOR unset (https://no-color.org)."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    return _isatty(stream)


def line_width(mode: str, stream: IO[str]) -> int | None:
    """The cells a styled line written to `stream` may take before it wraps: a terminal's width
    as rich finds it ($COLUMNS first; 80 on a dumb terminal), None (no limit) when `stream` is
    no terminal. `mode`: --color, which decides whether rich treats `stream` as a terminal."""
    if not _isatty(stream):
        return None
    from rich.console import Console

    colored = use_color(mode, stream)
    return Console(file=stream, color_system="standard" if colored else None, force_terminal=colored,
                   no_color=not colored).width


def fit_width(stream: IO[str]) -> int:
    """The width default views fit: $COLUMNS when set, else the terminal's, else DEFAULT_WIDTH."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    if _isatty(stream):
        import shutil

        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


class Screen:
    """The three answers for one stream, as the render functions take them."""

    __slots__ = ("color", "width", "fit")

    def __init__(self, out, stream: IO[str]):
        """`out`: the OutputOptions (--color, -o wide); -o wide fits nothing (fit None)."""
        self.color = use_color(out.color, stream)
        self.width = line_width(out.color, stream)
        self.fit = None if out.wide else fit_width(stream)
