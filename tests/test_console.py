"""Tables print like kubectl's on any stream: full rows, never shrunk or cropped to a terminal."""

from __future__ import annotations

import io

import pytest

from kubectl_tspread.render.console import make_console, print_block, table


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


ROWS = [["shop", "deployment/recommendations", "topology.kubernetes.io/zone maxSkew=1 ScheduleAnyway", "DRIFTED"]]
HEADERS = ["NAMESPACE", "WORKLOAD", "CONSTRAINT", "STATUS"]
FULL = [
    "NAMESPACE   WORKLOAD                     CONSTRAINT                                             STATUS",
    "shop        deployment/recommendations   topology.kubernetes.io/zone maxSkew=1 ScheduleAnyway   DRIFTED",
]


@pytest.mark.parametrize("stream,width", [
    (Terminal(), 40),
    (Terminal(), None),
    (io.StringIO(), None),
], ids=["40-column terminal: rows run past the window, no column dropped",
        "terminal of the environment's width", "pipe"])
def test_a_table_keeps_every_column_and_character(stream, width):
    console = make_console("never", stream, width=width)
    print_block(console, table(HEADERS, ROWS))
    assert stream.getvalue().splitlines() == FULL


def test_the_console_keeps_its_width_for_prose_after_a_table():
    stream = Terminal()
    console = make_console("never", stream, width=40)
    print_block(console, table(HEADERS, ROWS))
    assert console.width == 40


def _rich_capture(t, no_headers):
    stream = io.StringIO()
    console = make_console("never", stream)
    print_block(console, _Opaque(t.rich()))
    return stream.getvalue()


class _Opaque:
    """Hands print_block a rich renderable it cannot lay out itself, forcing the rich path."""

    def __init__(self, renderable):
        self.renderable = renderable

    def __rich__(self):
        return self.renderable


def _text(s, style="bold red"):
    from rich.text import Text

    return Text(s, style=style)


# (id, headers, rows, no_headers)
PLAIN_CASES = [
    ("summary row with a styled status", HEADERS, [ROWS[0][:3] + [_text("DRIFTED")]], False),
    ("no headers", HEADERS, ROWS, True),
    ("bars of block characters and an empty header", ["DOMAIN", "PODS", ""],
     [["a", "3", _text("███", "cyan")], ["bb", "0", _text("", "cyan")], ["c", "12", _text("█", "cyan")]], False),
    ("a column that is empty everywhere, in the middle", ["A", "", "C"], [["x", "", "zz"], ["yyy", "", ""]], False),
    ("the last column empty: no trailing spaces", ["A", "B"], [["x", ""], ["y", ""]], False),
    ("wide characters count two cells", ["NAME", "ZONE"], [["节点-1", "a"], ["n", "区域"]], False),
    # plain() measures an ASCII-only column by len() and any other by rich's cell widths
    ("an ASCII column beside non-ASCII ones", ["NODE", "BAR", "ZONE"],
     [["node-1", "██", "a"], ["n", "区域区域", "b"], ["node-222", "é", "c"]], False),
    ("combining accents take no cell: fewer cells than characters", ["NAME", "X"],
     [["cafe\u0301s-e\u0301te\u0301", "1"], ["cafes-ete+", "2"], ["n", "3"]], False),
    ("a single column", ["NODE"], [["n1"], ["node-22"]], False),
    ("cells with inner and leading spaces", ["A", "B"], [["  > maxSkew", "x y"], ["-", "  "]], True),
    ("header only", ["NAMESPACE", "WORKLOAD"], [], False),
    # a cell wrapped to fit the terminal (fit_rows): its row takes several lines, top-aligned
    ("multi-line cells", ["A", "B", "C"], [["two\nlines", "x", _text("p\nqq\nr")], ["y", "", "z"]], False),
]


@pytest.mark.parametrize("headers,rows,no_headers", [c[1:] for c in PLAIN_CASES], ids=[c[0] for c in PLAIN_CASES])
def test_plain_layout_is_byte_identical_to_rich(headers, rows, no_headers):
    stream = Terminal()  # a terminal without colors takes the plain path too
    print_block(make_console("never", stream, width=30), table(headers, rows, no_headers))
    assert table(headers, rows, no_headers).plain() is not None
    assert stream.getvalue() == _rich_capture(table(headers, rows, no_headers), no_headers)


@pytest.mark.parametrize("cell", ["a\ttab"], ids=["tab"])
def test_cells_rich_lays_out_differently_are_left_to_rich(cell):
    t = table(["A", "B"], [[cell, "x"]])
    assert t.plain() is None
    stream = io.StringIO()
    print_block(make_console("never", stream), t)
    assert stream.getvalue() == _rich_capture(t, False)


def test_colored_console_keeps_rich_styles():
    stream = io.StringIO()
    print_block(make_console("always", stream), table(["A"], [[_text("VIOLATED")]]))
    assert "\x1b[" in stream.getvalue() and "VIOLATED" in stream.getvalue()


def test_rows_given_as_lists_tuples_or_iterators_lay_out_alike():
    """table() keeps each row as a tuple (the garbage collector stops tracking a tuple of
    strings; a drain plan's 200,000 row lists made it walk the whole plan in memory)."""
    rows = [["a", "1"], ["bbb", "22"]]
    texts = {table(["A", "B"], shape).plain() for shape in
             (rows, [tuple(r) for r in rows], (iter(r) for r in rows))}
    assert texts == {"A     B\na     1\nbbb   22\n"}
