"""Text built a piece at a time (Page), kubectl-style tables, and fitting them to a width.

Nothing here writes or asks the terminal: a Page is returned as one string, and whether it is
colored and how wide its lines may run are plain parameters that cli/terminal.py answers."""

from __future__ import annotations

import io
from itertools import repeat
from typing import Iterable, Sequence

# kubectl never wraps a table: when stdout is not a terminal we let rows run as long as they need
UNBOUNDED_WIDTH = 100_000


class Rows:
    """A kubectl table not rendered yet (see `table`): `block_text` lays it out as plain text
    when there are no colors, and through rich otherwise."""

    __slots__ = ("headers", "rows", "no_headers", "styles", "_measured")

    def __init__(self, headers: Sequence[str], rows: Iterable[Sequence[object]], no_headers: bool,
                 styles: Sequence[str | None] | None):
        # tuples: the garbage collector stops tracking a tuple of strings, while a big drain plan's
        # row lists would make it walk everything in memory, the plan too, again and again
        self.headers, self.rows = list(headers), [tuple(r) for r in rows]
        self.no_headers, self.styles = no_headers, styles
        self._measured: list[_Column] | None | bool = False  # measured()'s answer; False: not asked yet

    def measured(self) -> list[_Column] | None:
        """A _Column per column of the rows, headers left out, made once: fitting the table and laying it
        out both read it. None when a row is not as long as the headers or a cell is not a string."""
        if self._measured is False:
            n, rows = len(self.headers), self.rows
            try:
                self._measured = [_Column(texts) for texts in zip(*rows)] \
                    if rows and all(map(n.__eq__, map(len, rows))) else None
            except TypeError:  # a rich Text cell
                self._measured = None
        return self._measured

    def rich(self):
        from rich.table import Table

        t = Table(box=None, pad_edge=False, padding=(0, 3, 0, 0), show_edge=False,
                  show_header=not self.no_headers, header_style=None)
        for i, h in enumerate(self.headers):
            t.add_column(h.upper(), no_wrap=True, overflow="ignore",
                         style=(self.styles[i] if self.styles else None) or None)
        for r in self.rows:
            t.add_row(*r)
        return t

    def plain(self) -> str | None:
        """The lines rich prints for this table without colors, each right-stripped; None when
        a cell is something other than one line of text (rich lays those out itself)."""
        n = len(self.headers)
        if not all(map(n.__eq__, map(len, self.rows))):
            return None
        lines = ([tuple(h.upper() for h in self.headers)] if not self.no_headers else []) + self.rows
        if not lines:
            return None
        data = self.measured()
        try:  # a column of strings only, as a big drain's tables are, is joined and measured as it is
            columns = [_Column(texts) for texts in zip(*lines)] if data is None else \
                data if self.no_headers else [c.under(h) for c, h in zip(data, lines[0])]
        except TypeError:  # a rich Text cell (colors): its plain text, row by row
            lines = [r if all(map(isinstance, r, repeat(str))) else _texts(r) for r in lines]
            if any(cells is None for cells in lines):
                return None
            columns = [_Column(texts) for texts in zip(*lines)]
        wrapped = [i for i, c in enumerate(columns) if c.wrapped]
        if wrapped:
            lines = _split_lines(lines, wrapped)  # a wrapped cell: its row takes several lines, top-aligned
            columns = [_Column(texts) for texts in zip(*lines)]
        if not all(c.printable for c in columns):  # tabs, control characters
            return None
        widths = [c.width for c in columns]
        if sum(widths) + 3 * len(widths) > UNBOUNDED_WIDTH:
            return None
        # three spaces after every column but the last; each cell padded to its column's cells
        if all(c.ascii for c in columns):  # one %-format a line: a character is a cell
            line_format = "   ".join([f"%-{w}s" for w in widths[:-1]] + ["%s"])
            out = [(line_format % tuple(line)).rstrip() for line in lines]
        else:
            out = ["   ".join(map(_padded, line, widths)).rstrip() for line in lines]
        return "\n".join(out) + "\n"


def _split_lines(lines: list[Sequence[str]], wrapped: Sequence[int]) -> list[Sequence[str]]:
    """Each line whose cells in the `wrapped` columns hold a newline, as the lines it takes; the others as they are."""
    out: list[Sequence[str]] = []
    for line in lines:
        if not any("\n" in line[i] for i in wrapped):
            out.append(line)
            continue
        parts = [cell.split("\n") for cell in line]
        height = max(map(len, parts))
        out.extend([p[k] if k < len(p) else "" for p in parts] for k in range(height))
    return out


class _Column:
    """One column's cells, judged at once: a drain plan's table has tens of thousands of rows,
    and asking rich for the cell width of each cell would be a large part of printing it. An
    ASCII-only column (node, pod and workload names) is as many cells wide as it has characters."""

    __slots__ = ("printable", "ascii", "width", "wrapped")

    def __init__(self, texts: Sequence[str]):
        joined = "".join(texts)
        self.printable, self.ascii, self.wrapped = joined.isprintable(), joined.isascii(), "\n" in joined
        self.width = _widest(texts, self.ascii)

    def under(self, header: str) -> "_Column":
        """This column with `header` above its cells, as _Column([header, *texts]) would judge it (an ASCII cell that
        is printable is as many cells wide as it has characters, measured either way)."""
        out = _Column.__new__(_Column)
        out.printable, out.ascii = self.printable and header.isprintable(), self.ascii and header.isascii()
        out.wrapped = self.wrapped or "\n" in header
        out.width = max(self.width, _widest((header,), header.isascii()))
        return out


def _texts(row: Sequence[object]) -> list[str] | None:
    """The text of each cell of `row`; None when one is neither text nor a plain rich Text."""
    from rich.text import Text

    out = []
    for cell in row:
        text = cell if isinstance(cell, str) else cell.plain if type(cell) is Text else None
        if text is None:
            return None
        out.append(text)
    return out


def _padded(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal cells (a wide character takes two)."""
    from rich.cells import cell_len

    return text.ljust(width) if text.isascii() else text + " " * (width - cell_len(text))


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], no_headers: bool = False,
          styles: Sequence[str | None] | None = None, fit: int | None = None,
          shrink: Sequence[int] = ()) -> Rows:
    """A kubectl table: uppercase headers, three spaces between columns, no borders, no wrapping.

    With `fit` (a width, see cli/terminal.fit_width) the columns `shrink` (indexes, most willing first
    among equals) are narrowed until the table fits: their cells wrap at spaces onto more lines,
    and a word longer than its column ends in `…`. Nothing else is ever cut."""
    t = Rows(headers, rows, no_headers, styles)
    if fit is not None and shrink:
        fitted = fit_rows(t.headers, t.rows, fit, shrink, t.measured())
        if fitted is not t.rows:  # cells wrapped: measured again when laid out
            t.rows, t._measured = fitted, False
    return t


_MIN_COLUMN = 12
_WORD_FLOOR = 24  # a column of longer words may still be cut when nothing else fits


def _cell_text(cell: object) -> tuple[str, object]:
    """(text, rebuild) of a str or rich Text cell; rebuild(new_text) keeps its style."""
    if isinstance(cell, str):
        return cell, lambda t: t
    from rich.text import Text

    if type(cell) is Text:
        style = cell.style
        return cell.plain, lambda t: Text(t, style=style)
    return "", None


def _wrap(text: str, width: int) -> str:
    """Greedy word wrap at spaces; a word wider than `width` is cut to width - 1 and `…`."""
    from rich.cells import cell_len

    out: list[str] = []
    for para in text.split("\n"):
        line = ""
        for word in para.split(" "):
            if cell_len(word) > width:
                word = word[:max(width - 1, 1)] + "…"
            if line and cell_len(line) + 1 + cell_len(word) > width:
                out.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        out.append(line)
    return "\n".join(out)


def _widest(texts: Sequence[str], ascii: bool) -> int:
    """The most terminal cells any of `texts` takes (0 for none); `ascii`: all of them are, so len is their width."""
    from rich.cells import cell_len

    return max(map(len if ascii else cell_len, texts), default=0)


def _joined_columns(rows: Sequence[Sequence[object]], n: int) -> list[str]:
    """Each of the `n` columns' texts joined by newlines, once: an ASCII one (names, counts) is measured by len, not
    cell by cell through rich."""
    try:  # strings only, in rows as long as the headers: the cells as they are
        columns = ["\n".join(col) for col in zip(*rows)] if all(map(n.__eq__, map(len, rows))) else None
    except TypeError:  # a rich Text cell
        columns = None
    if columns is None or len(columns) < n:
        texts = [[c if type(c) is str else _cell_text(c)[0] for c in r] for r in rows]
        columns = ["\n".join([r[i] for r in texts if i < len(r)]) for i in range(n)]
    return columns


def fit_rows(headers: Sequence[str], rows: Sequence[Sequence[object]], width: int,
             shrink: Sequence[int], measured: Sequence[_Column] | None = None) -> list[tuple]:
    """The rows with the `shrink` columns wrapped so that the table is at most `width` cells wide
    (as far as the columns' minimum of max(header, 12) cells allows). The first column of
    `shrink` gives up its room first. `measured`: Rows.measured() of `rows` (a list of tuples),
    which are then returned as they are when they fit.

    columns NAME(10) CONSTRAINT(50), width 40 → CONSTRAINT wrapped to 27 cells."""
    from rich.cells import cell_len

    n = len(headers)
    columns: list[str] | None = None
    if measured is not None and not any(c.wrapped for c in measured):  # one line a cell: its width is the column's
        widths = [max(cell_len(h), c.width) for h, c in zip(headers, measured)]
    else:
        columns = _joined_columns(rows, n)
        widths = [max(cell_len(h), _widest(columns[i].split("\n"), columns[i].isascii()))
                  for i, h in enumerate(headers)]
    excess = sum(widths) + 3 * (n - 1) - width
    if excess <= 0:  # Rows keeps its rows as a list of tuples; tuple() of a tuple is that tuple
        return rows if columns is None else list(map(tuple, rows))  # type: ignore[return-value]
    if columns is None:
        columns = _joined_columns(rows, n)
    target = list(widths)
    # first, in `shrink` order, each column down to its longest word (no word is cut); then, if
    # that is not enough, the widest ones down to max(header, 12) cells, cutting long words
    for i in shrink:
        longest = _widest(columns[i].replace("\n", " ").split(" "), columns[i].isascii()) if i < n else 0
        floor = max(cell_len(headers[i]), min(longest, _WORD_FLOOR))
        cut = min(excess, max(0, target[i] - floor))
        target[i] -= cut
        excess -= cut
    floors = {i: max(cell_len(headers[i]), _MIN_COLUMN) for i in shrink}
    while excess > 0:
        cands = [i for i in shrink if target[i] > floors[i]]
        if not cands:
            break
        i = max(cands, key=lambda c: (target[c], -list(shrink).index(c)))
        target[i] -= 1
        excess -= 1
    out = []
    done: dict[tuple[int, str], str] = {}  # (column, text) -> the text fitted: a drain's steps repeat most cells
    for r in rows:
        cells = list(r)
        for i in shrink:
            if i >= len(cells) or target[i] >= widths[i]:
                continue
            cell = cells[i]
            if type(cell) is str and (i, cell) in done:
                cells[i] = done[(i, cell)]
                continue
            text, rebuild = _cell_text(cell)
            if rebuild is not None and _widest((text,), text.isascii()) > target[i]:
                cells[i] = rebuild(_wrap(text, target[i]))
            if type(cell) is str:
                done[(i, cell)] = cells[i]
        out.append(tuple(cells))
    return out


def _rich_console(color: bool, width: int):
    """A rich Console that lays text out `width` cells wide and colors it. Its file is a
    StringIO nothing reaches (`_rendered` captures what it lays out): without one rich
    would look at sys.stdout, its encoding and whether it is a terminal."""
    from rich.console import Console

    return Console(
        file=io.StringIO(), width=width, color_system="standard" if color else None,
        force_terminal=color, no_color=not color, highlight=False, soft_wrap=False,
        emoji=False, markup=False,
    )


def _rendered(layout, renderable, **print_options) -> str:
    """What `layout` (a _rich_console) lays `renderable` out as, with Console.print's options,
    taken by rich's own capture: the text only, nothing reaches a stream."""
    with layout.capture() as captured:
        layout.print(renderable, **print_options)
    return captured.get()


class Page:
    """A command's human output, added to a piece at a time and returned whole (`text`).

    `color`: ANSI colors for styled pieces; `width`: the cells a styled line may take before
    rich wraps it (a terminal's width), None for no limit. Plain text is kept as given."""

    __slots__ = ("color", "width", "_parts", "_console")

    def __init__(self, color: bool = False, width: int | None = None):
        self.color, self.width = color, width
        self._parts: list[str] = []
        self._console = None

    def add(self, text: str) -> None:
        self._parts.append(text)

    def line(self, *pieces, soft_wrap: bool = False) -> None:
        """`pieces` (str or rich Text) joined into one line, styled, wrapped to `width` unless
        `soft_wrap` (then the line runs as long as it is)."""
        from rich.text import Text

        if self._console is None:
            self._console = _rich_console(self.color, self.width or UNBOUNDED_WIDTH)
        joined = Text("", end="\n").join(Text(p) if isinstance(p, str) else p for p in pieces)
        if soft_wrap:
            self._parts.append(_rendered(self._console, joined, crop=False, no_wrap=True, overflow="ignore"))
        else:
            self._parts.append(_rendered(self._console, joined))

    def table(self, renderable) -> None:
        self._parts.append(block_text(renderable, self.color))

    def text(self) -> str:
        return "".join(self._parts)


def block_text(renderable, color: bool) -> str:
    """A table at its natural width and without the trailing padding rich leaves on each
    line (golden files, `| grep`).

    On a terminal rich would shrink the columns to the window and crop each line, dropping whole
    columns; kubectl never does that: it prints full rows and lets the terminal wrap them.
    Without colors a `table` is laid out here, to the same bytes: rich is slow on the
    thousands of rows of a large cluster.
    """
    if isinstance(renderable, Rows):
        text = renderable.plain() if not color else None
        if text is not None:
            return text
        renderable = renderable.rich()
    text = _rendered(_rich_console(color, UNBOUNDED_WIDTH), renderable)
    return "\n".join(line.rstrip() for line in text.split("\n"))
