"""Readable at any size: why-pending -A groups pods of one owner with the same answer into one report
with a count, and default tables fit the width (COLUMNS, else the terminal, else 120 columns) by
wrapping long cells, while -o wide stays unbounded."""

from __future__ import annotations

import io
import json
import shutil

import pytest

from apiobjects import as_list, node_obj, pod_obj, spread_obj
from kubectl_tspread.cli.terminal import DEFAULT_WIDTH, fit_width
from kubectl_tspread.render.console import fit_rows
from test_blockers import _run


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _many_pending(tmp_path, replicas=5):
    nodes = [node_obj("a0", zone="a"), node_obj("b0", zone="b"), node_obj("c0", zone="c", unschedulable=True)]
    web = {"app": "web"}
    pods = [pod_obj("web-a", node="a0", labels=web, spread=[spread_obj()]),
            pod_obj("web-b", node="b0", labels=web, spread=[spread_obj()])]
    pods += [pod_obj(f"web-7d-{i}", labels=web, spread=[spread_obj()], owner=("ReplicaSet", "web-7d"))
             for i in range(replicas)]
    odd = pod_obj("web-7d-big", labels=web, spread=[spread_obj()], owner=("ReplicaSet", "web-7d"), cpu="64")
    bare = pod_obj("lonely", labels=web, spread=[spread_obj()])
    path = tmp_path / "many.json"
    path.write_text(json.dumps(as_list(nodes + pods + [odd, bare])))
    return str(path)


def test_pods_of_one_owner_with_the_same_answer_are_one_report_with_a_count(capsys, tmp_path):
    code, out, err = _run(capsys, "why-pending", "-A", "--from-file", _many_pending(tmp_path))
    assert (code, err) == (0, "")
    headers = [line for line in out.splitlines() if line.startswith("Pod ")]
    # the five alike, the one asking for 64 cpus (another answer), the pod without an owner
    assert [h.split(" · ")[0] for h in headers] == ["Pod default/lonely", "Pod default/web-7d-0",
                                                    "Pod default/web-7d-big"]
    assert ("Same answer for 4 more pods of ReplicaSet/web-7d (5 in all): web-7d-1, web-7d-2, web-7d-3 "
            "and web-7d-4") in out
    assert out.count("Fixes (") == 3


def test_json_keeps_every_pod_and_adds_the_groups(capsys, tmp_path):
    code, out, err = _run(capsys, "why-pending", "-A", "--from-file", _many_pending(tmp_path), "-o", "json")
    doc = json.loads(out)
    assert len(doc["pods"]) == 7
    groups = {g["pods"][0]: g for g in doc["groups"]}
    assert groups["web-7d-0"]["count"] == 5 and groups["web-7d-0"]["owner"] == {"kind": "ReplicaSet",
                                                                                   "name": "web-7d"}
    assert groups["web-7d-big"]["count"] == 1 and groups["lonely"]["owner"] is None


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("columns, limit", [(None, DEFAULT_WIDTH), ("100", 100), ("120", 120)],
                         ids=["piped: 120 columns", "COLUMNS=100", "COLUMNS=120"])
def test_default_distribution_views_fit_the_width(capsys, monkeypatch, columns, limit):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    for args in (["distribution", "--demo"], ["distribution", "-A", "--demo"],
                 ["distribution", "deploy/cart", "--demo", "--timeline"]):
        code, out, err = _run(capsys, *args)
        tables = [line for line in out.splitlines() if "  " in line and not line.startswith("  ")]
        assert code == 0 and max(map(len, tables)) <= limit, args
    # wrapped, not lost: every domain of the summary is still there
    code, out, _ = _run(capsys, "distribution", "--demo")
    assert "us-east-2c=1(cordoned)" in out and "deployment/recommendations" in out or limit < 120


def test_wide_output_is_unbounded(capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, err = _run(capsys, "distribution", "--demo", "-o", "wide")
    assert _widest(out) > DEFAULT_WIDTH


def test_why_pending_domain_table_wraps_long_reasons(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = _run(capsys, "why-pending", "pod/notifications-hbwg8j56n9-mbkxz", "--demo")
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("DOMAIN ")))
    table = lines[start:start + 5]
    assert max(map(len, table)) <= 80
    assert any(line.strip().startswith("taint(s)") or "untolerated" in line for line in table)


def test_fit_width_honours_columns_then_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "77")
    assert fit_width(io.StringIO()) == 77
    monkeypatch.delenv("COLUMNS")
    assert fit_width(io.StringIO()) == DEFAULT_WIDTH
    assert fit_width(Terminal()) == shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def test_fit_rows_wraps_at_spaces_and_cuts_only_words_too_long():
    rows = [("web", "topology.kubernetes.io/zone maxSkew=1 DoNotSchedule")]
    (row,) = fit_rows(["NAME", "CONSTRAINT"], rows, 40, shrink=(1,))
    assert row == ("web", "topology.kubernetes.io/zone\nmaxSkew=1 DoNotSchedule")
    (row,) = fit_rows(["NAME", "CONSTRAINT"], rows, 22, shrink=(1,))  # 22 - NAME - 3 spaces = 15
    assert row[1].split("\n")[0] == "topology.kuber…" and all(len(x) <= 15 for x in row[1].split("\n"))
    assert fit_rows(["NAME", "CONSTRAINT"], rows, 200, shrink=(1,)) == rows


def test_fit_rows_measures_wide_characters_in_cells_not_characters():
    # "区域 区域区域" is 7 characters but 13 cells: measured by len, 4 + 3 + 7 would fit in 18 cells unwrapped
    rows = [("web", "区域 区域区域"), ("api", "zone-a")]
    assert fit_rows(["NAME", "ZONE"], rows, 18, shrink=(1,)) == [("web", "区域\n区域区域"), ("api", "zone-a")]
    assert fit_rows(["NAME", "ZONE"], rows, 20, shrink=(1,)) == rows  # 4 + 3 + 13: fits as it is
    ascii_rows = [("web", "abcd efghij"), ("api", "zone-a")]  # an ASCII column of 11 cells
    assert fit_rows(["NAME", "ZONE"], ascii_rows, 17, shrink=(1,)) == [("web", "abcd\nefghij"), ("api", "zone-a")]
    assert fit_rows(["NAME", "ZONE"], ascii_rows, 18, shrink=(1,)) == ascii_rows
