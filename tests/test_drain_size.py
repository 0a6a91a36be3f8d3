"""The drain planner stays small enough to be read whole (issue 59): its modules (views/drain/
and the cordon/evict writer, snapshot/drainwriter.py) hold at most 4,500 physical lines, and
none of their functions is over 80 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kubectl_tspread"
LINE_BUDGET = 4500
FUNCTION_LINES = 80


def planner_files() -> list[Path]:
    return sorted((PACKAGE / "views" / "drain").rglob("*.py")) + [PACKAGE / "snapshot" / "drainwriter.py"]


def long_functions(path: Path, limit: int = FUNCTION_LINES) -> list[str]:
    """`name (lines)` of each function in `path` longer than `limit` lines, decorators included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            length = node.end_lineno - first + 1
            if length > limit:
                out.append(f"{path.name}:{node.name} ({length})")
    return out


def test_the_planner_fits_its_line_budget():
    files = planner_files()
    assert len(files) > 10, "the planner's modules were not found"
    counts = {p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    total = sum(counts.values())
    assert total <= LINE_BUDGET, (total, sorted(counts.items(), key=lambda kv: -kv[1]))


def test_no_planner_function_is_over_80_lines():
    assert [f for p in planner_files() for f in long_functions(p)] == []


def test_a_long_function_is_named(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def short():\n    return 1\n\n\n@staticmethod\ndef long():\n"
                       + "    x = 1\n" * 80 + "    return x\n")
    assert long_functions(planted) == ["planted.py:long (83)"]
