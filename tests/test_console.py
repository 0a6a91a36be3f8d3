"""Tables laid out like kubectl's at any width: full rows, never shrunk or cropped to a terminal.
render returns the text (Page, block_text); nothing here writes."""

from __future__ import annotations

import pytest

from kubectl_tspread.render.console import Page, block_text, table

ROWS = [["shop", "deployment/recommendations", "topology.kubernetes.io/zone maxSkew=1 ScheduleAnyway", "DRIFTED"]]
HEADERS = ["NAMESPACE", "WORKLOAD", "CONSTRAINT", "STATUS"]
FULL = [
    "NAMESPACE   WORKLOAD                     CONSTRAINT                                             STATUS",
    "shop        deployment/recommendations   topology.kubernetes.io/zone maxSkew=1 ScheduleAnyway   DRIFTED",
]


@pytest.mark.parametrize("width,color", [(40, False), (40, True), (None, False), (None, True)],
                         ids=["40-column lines: rows run past them, no column dropped", "the same, colored",
                              "no width", "no width, colored"])
def test_a_table_keeps_every_column_and_character(width, color):
    page = Page(color, width)
    page.table(table(HEADERS, ROWS))
    assert page.text().splitlines() == FULL


def test_a_page_wraps_styled_prose_at_its_width_after_a_table():
    page = Page(False, 40)
    page.table(table(HEADERS, ROWS))
    page.line("word " * 12)
    lines = page.text().splitlines()
    assert lines[:2] == FULL
    assert max(map(len, lines[2:])) <= 40 and len(lines) > 3


def test_soft_wrap_lines_and_no_width_never_wrap():
    for page, kw in ((Page(False, 40), {"soft_wrap": True}), (Page(False, None), {})):
        page.line("word " * 12, **kw)
        assert page.text() == "word " * 12 + "\n"


def _rich_capture(t, no_headers):
    return block_text(_Opaque(t.rich()), False)


class _Opaque:
    """Hands block_text a rich renderable it cannot lay out itself, forcing the rich path."""

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
    # plain() lays an ASCII table out with one %-format a line: cells are its arguments, never its text
    ("percent signs in cells", ["USE", "FORMAT"], [["50%", "%s"], ["%-9s", "%%"]], False),
    ("cells with inner and leading spaces", ["A", "B"], [["  > maxSkew", "x y"], ["-", "  "]], True),
    ("header only", ["NAMESPACE", "WORKLOAD"], [], False),
    # a cell wrapped to fit the terminal (fit_rows): its row takes several lines, top-aligned
    ("multi-line cells", ["A", "B", "C"], [["two\nlines", "x", _text("p\nqq\nr")], ["y", "", "z"]], False),
]


@pytest.mark.parametrize("headers,rows,no_headers", [c[1:] for c in PLAIN_CASES], ids=[c[0] for c in PLAIN_CASES])
def test_plain_layout_is_byte_identical_to_rich(headers, rows, no_headers):
    text = block_text(table(headers, rows, no_headers), False)
    assert table(headers, rows, no_headers).plain() is not None
    assert text == _rich_capture(table(headers, rows, no_headers), no_headers)


@pytest.mark.parametrize("cell", ["a\ttab"], ids=["tab"])
def test_cells_rich_lays_out_differently_are_left_to_rich(cell):
    t = table(["A", "B"], [[cell, "x"]])
    assert t.plain() is None
    assert block_text(t, False) == _rich_capture(t, False)


def test_colored_tables_and_lines_keep_rich_styles():
    page = Page(True)
    page.table(table(["A"], [[_text("VIOLATED")]]))
    page.line(_text("SAFE", "bold green"), ": plain")
    assert page.text() == "A\n\x1b[1;31mVIOLATED\x1b[0m\n\x1b[1;32mSAFE\x1b[0m: plain\n"
    uncolored = Page(False)
    uncolored.line(_text("SAFE", "bold green"), ": plain")
    assert uncolored.text() == "SAFE: plain\n"


def test_rows_given_as_lists_tuples_or_iterators_lay_out_alike():
    """table() keeps each row as a tuple (the garbage collector stops tracking a tuple of
    strings; a drain plan's 200,000 row lists made it walk the whole plan in memory)."""
    rows = [["a", "1"], ["bbb", "22"]]
    texts = {table(["A", "B"], shape).plain() for shape in
             (rows, [tuple(r) for r in rows], (iter(r) for r in rows))}
    assert texts == {"A     B\na     1\nbbb   22\n"}


def test_a_table_measured_once_lays_out_as_one_measured_afresh():
    """table() measures its columns once, for fitting and for the layout (Rows.measured), and fitting
    wraps a repeated cell once: the text is the one each step judging every cell anew gives."""
    import random

    from kubectl_tspread.render.console import Rows, fit_rows

    rng = random.Random(59)
    words = ["a", "zone-b", "区域", "x y z", "a-long-node-name-0042", "", "7", "us-east-2a=7 us-east-2b=6"]
    for _ in range(400):
        n = rng.randint(1, 4)
        headers = [rng.choice(["name", "区", "zone", "distribution"]) for _ in range(n)]
        cells = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
                 + ("\n" + rng.choice(words) if rng.random() < 0.1 else "") for _ in range(2 * n)]
        rows = [tuple(rng.choice(cells) for _ in range(n)) for _ in range(rng.randint(0, 8))]
        no_headers, fit = rng.random() < 0.2, rng.choice([None, 8, 20, 40, 200])
        shrink = tuple(rng.sample(range(n), rng.randint(0, n)))
        afresh = Rows(headers, fit_rows(headers, rows, fit, shrink) if fit is not None and shrink else rows,
                      no_headers, None)
        afresh._measured = None  # no measurement kept: plain() judges every line itself
        assert block_text(table(headers, rows, no_headers, fit=fit, shrink=shrink), False) == \
            block_text(afresh, False)
    # a repeated cell is wrapped at each of its rows
    rows = [("web", "us-east-2a=7 us-east-2b=6 us-east-2c=5")] * 3
    assert block_text(table(["name", "distribution"], rows, fit=30, shrink=(1,)), False).splitlines()[1:] == \
        ["web    us-east-2a=7", "       us-east-2b=6", "       us-east-2c=5"] * 3
