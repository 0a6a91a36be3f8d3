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
