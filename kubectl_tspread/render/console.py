"""Consoles and kubectl-style tables. Consoles are made inside commands, never at import time."""

from __future__ import annotations

import os
import sys
from typing import IO, Iterable, Sequence

# kubectl never wraps a table: when stdout is not a terminal we let rows run as long as they need
_UNBOUNDED_WIDTH = 100_000


def use_color(mode: str, stream: IO[str]) -> bool:
    """--color auto|always|never; auto = a terminal and NO_COLOR unset (https://no-color.org)."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def make_console(color: str = "auto", stream: IO[str] | None = None, width: int | None = None):
    from rich.console import Console

    stream = stream if stream is not None else sys.stdout
    colored = use_color(color, stream)
    isatty = bool(getattr(stream, "isatty", None) and stream.isatty())
    if width is None and not isatty:
        width = _UNBOUNDED_WIDTH
    return Console(
        file=stream, width=width, color_system="standard" if colored else None,
        force_terminal=colored, no_color=not colored, highlight=False, soft_wrap=False,
        emoji=False, markup=False,
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], no_headers: bool = False,
          styles: Sequence[str | None] | None = None):
    """A kubectl table: uppercase headers, three spaces between columns, no borders, no wrapping."""
    from rich.table import Table

    t = Table(box=None, pad_edge=False, padding=(0, 3, 0, 0), show_edge=False, show_header=not no_headers,
              header_style=None)
    for i, h in enumerate(headers):
        t.add_column(h.upper(), no_wrap=True, overflow="ignore",
                     style=(styles[i] if styles else None) or None)
    for r in rows:
        t.add_row(*r)
    return t


def print_block(console, renderable) -> None:
    """Print a table at its natural width and without the trailing padding rich leaves on each
    line (golden files, `| grep`).

    On a terminal rich would shrink the columns to the window and crop each line, dropping whole
    columns; kubectl never does that: it prints full rows and lets the terminal wrap them.
    """
    terminal_width = console.width
    console.width = _UNBOUNDED_WIDTH
    try:
        with console.capture() as cap:
            console.print(renderable)
    finally:
        console.width = terminal_width
    text = cap.get()
    console.file.write("\n".join(line.rstrip() for line in text.split("\n")))
