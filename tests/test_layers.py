"""The package's layers and the arrows between them, read from the source with `ast`: every
`import` and `from … import` of every module, at module level, inside functions and under
TYPE_CHECKING alike (docs/ARCHITECTURE.md draws them).

    cli/  →  render/  →  views/  →  engine/  →  model/
    cli/  →  snapshot/  →  model/          (snapshot/ → engine/: podrequests and versions only)

A module may import its own layer and the layers down its line (ALLOWED); nothing points up,
and no set of modules imports itself round (a cycle, whatever the import kind)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kubectl_tspread"
ROOT = "kubectl_tspread"

LAYERS = ("cli", "render", "views", "engine", "snapshot", "model")
# layer -> the layers it may import (its own included)
ALLOWED = {
    "cli": {"cli", "render", "views", "engine", "snapshot", "model"},
    "render": {"render", "views", "engine", "model"},
    "views": {"views", "engine", "model"},
    "engine": {"engine", "model"},
    # decode applies the scheduler's own aggregation of a pod's requests, and a snapshot carries
    # the rules of its minor: the two engine modules snapshot/ needs, and no others
    "snapshot": {"snapshot", "model"},
    "model": {"model"},
}
SNAPSHOT_ENGINE = {"kubectl_tspread.engine.podrequests", "kubectl_tspread.engine.versions"}
# layers that never reach for the terminal, the command line or the API client
PURE_LAYERS = ("engine", "views", "model")
HEAVY = ("kubernetes", "click", "rich", "urllib3")


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def layer_of(module: str) -> str:
    """cli, render, views, engine, snapshot or model; the package root (its __version__) and
    data/ (package data) are no layer; __main__ is the command line's."""
    parts = module.split(".")
    if module == f"{ROOT}.__main__":
        return "cli"
    if len(parts) == 1 or parts[1] == "data":
        return "root"
    if parts[1] not in LAYERS:
        raise AssertionError(f"{module} lies in no layer: put it in one of {', '.join(LAYERS)}")
    return parts[1]


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module imported) for every import of the package in `path`, relative ones
    resolved; `from pkg import name` names the submodule when `name` is one."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            if name != ROOT and not name.startswith(ROOT + "."):
                continue
            while name not in known and "." in name:
                name = name.rsplit(".", 1)[0]
            if name != module:
                out.append((node.lineno, name))
    return out


def third_party_of(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
    return out


def graph(package: Path = PACKAGE) -> tuple[dict[str, Path], dict[str, list[tuple[int, str]]]]:
    known = modules(package)
    return known, {m: imports_of(m, p, known) for m, p in known.items()}


def _where(module: str, known: dict[str, Path]) -> str:
    """kubectl_tspread.views.drain.plan -> views/drain/plan.py"""
    path = known[module]
    parts = path.parts[len(path.parts) - len(module.split(".")) + 1 - (path.name == "__init__.py"):]
    return "/".join(parts)


def arrow_violations(package: Path = PACKAGE) -> list[str]:
    known, edges = graph(package)
    out = []
    for module, imported in edges.items():
        mine = layer_of(module)
        for line, target in imported:
            theirs = layer_of(target)
            if theirs == "root" and target == ROOT:
                continue  # the version string
            ok = mine == "root" and theirs == "root" or mine != "root" and theirs in ALLOWED[mine] \
                or mine == "snapshot" and target in SNAPSHOT_ENGINE
            if not ok:
                out.append(f"{_where(module, known)}:{line} imports {_where(target, known)} "
                           f"({mine}/ may import {', '.join(sorted(ALLOWED.get(mine, ())))})")
    return out


def cycles(package: Path = PACKAGE) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    known, edges = graph(package)
    succ = {m: sorted({t for _, t in imported}) for m, imported in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, iter(succ[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(succ[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(_where(m, known) for m in component))
    return found


def test_every_module_lies_in_a_layer():
    for module in modules():
        layer_of(module)


def test_imports_point_down_only():
    bad = arrow_violations()
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_import_cycle():
    found = cycles()
    assert not found, "import cycles:\n" + "\n".join(" ↔ ".join(c) for c in found)


@pytest.mark.parametrize("layer", PURE_LAYERS)
def test_pure_layers_never_import_the_terminal_or_the_api(layer):
    bad = [f"{p.relative_to(PACKAGE).as_posix()}:{line} imports {name}"
           for p in sorted((PACKAGE / layer).rglob("*.py"))
           for line, name in third_party_of(p) if name.split(".")[0] in HEAVY]
    assert not bad, "\n".join(bad)


def writes_of(path: Path) -> list[str]:
    """The builtin print/input/open called, sys.stdin/stdout/stderr named, in `path`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input", "open"):
            out.append(f"{path.name}:{node.lineno} calls {node.func.id}()")
        if isinstance(node, ast.Attribute) and node.attr in ("stdin", "stdout", "stderr") \
                and isinstance(node.value, ast.Name) and node.value.id == "sys":
            out.append(f"{path.name}:{node.lineno} names sys.{node.attr}")
    return out


def test_render_never_prints_nor_picks_a_stream():
    """render/ reads no stream and picks none to write to."""
    bad = [w for p in sorted((PACKAGE / "render").rglob("*.py")) for w in writes_of(p)]
    assert not bad, "\n".join(bad)


# render returns text: it writes to nothing, so it calls no write/print/flush on any object and
# takes no stream or console to write into
STREAM_METHODS = ("write", "print", "flush")
STREAM_PARAMETERS = ("out", "stream", "console", "file")
# the one place rich lays text out: it prints into a console render made itself, inside rich's
# capture, and returns what was captured
CAPTURING = {("console.py", "_rendered")}


def stream_uses_of(path: Path) -> list[str]:
    """Every call of .write(), .print() or .flush() on anything, and every function parameter
    named out, stream, console or file (lambdas' too), in `path`."""
    out = []
    tree = ast.parse(path.read_text(), str(path))
    captured = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and (path.name, f.name) in CAPTURING
                for n in ast.walk(f) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) in captured:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STREAM_METHODS:
            out.append(f"{path.name}:{node.lineno} calls .{node.func.attr}()")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p is not None]
            name = getattr(node, "name", "lambda")
            out += [f"{path.name}:{node.lineno} {name}() takes a parameter named {p.arg}"
                    for p in params if p.arg in STREAM_PARAMETERS]
    return out


def test_render_returns_text_and_writes_nothing():
    bad = [w for p in sorted((PACKAGE / "render").rglob("*.py")) for w in stream_uses_of(p)]
    assert not bad, "render/ returns text; the command writes it:\n" + "\n".join(bad)


# only cli/ starts processes and sets signals (cli/workers.py forks the drain's re-plans): the
# process's own policy, chosen by the command; views/ hands work to the workers it is passed
PROCESS_MODULES = ("multiprocessing", "subprocess")
PROCESS_CALLS = {"os": ("fork", "forkpty", "_exit"), "signal": ("signal",)}
# snapshot/ runs a kubeconfig's exec credential plugin (its I/O): that import, and nothing else
PROCESS_EXEMPT = {"snapshot/execauth.py": {"subprocess"}}


def process_uses_of(path: Path) -> list[str]:
    """Every import of multiprocessing or subprocess, every os.fork / os.forkpty / os._exit /
    signal.signal named (called or not) or imported by name, and every `prctl` named, in `path`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [f"{path.name}:{node.lineno} imports {a.name.split('.')[0]}" for a in node.names
                    if a.name.split(".")[0] in PROCESS_MODULES]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            top = node.module.split(".")[0]
            if top in PROCESS_MODULES:
                out.append(f"{path.name}:{node.lineno} imports {top}")
            out += [f"{path.name}:{node.lineno} imports {node.module}.{a.name}" for a in node.names
                    if a.name in PROCESS_CALLS.get(node.module, ()) or a.name == "prctl"]
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.attr in PROCESS_CALLS.get(node.value.id, ()):
                out.append(f"{path.name}:{node.lineno} names {node.value.id}.{node.attr}")
            elif node.attr == "prctl":
                out.append(f"{path.name}:{node.lineno} names prctl")
        elif isinstance(node, ast.Name) and node.id == "prctl":
            out.append(f"{path.name}:{node.lineno} names prctl")
    return out


def process_violations(package: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where.split("/")[0] == "cli" or where == "__main__.py":
            continue
        allowed = PROCESS_EXEMPT.get(where, set())
        out += [f"{where}:{use.split(':', 1)[1]}" for use in process_uses_of(path)
                if use.rsplit(" ", 1)[1] not in allowed]
    return out


def test_only_cli_starts_processes_or_sets_signals():
    bad = process_violations()
    assert not bad, "processes and signals belong to cli/:\n" + "\n".join(bad)


def test_the_process_check_sees_the_fork_in_cli_and_the_plugin_run_in_snapshot():
    """What the check passes it passes on purpose: it does see cli/workers.py's fork and
    signals and execauth.py's subprocess (exempted by layer and by name, not unseen)."""
    seen = " ".join(process_uses_of(PACKAGE / "cli" / "workers.py"))
    for what in ("names os.fork", "names os._exit", "names signal.signal", "names prctl"):
        assert what in seen
    assert process_uses_of(PACKAGE / "snapshot" / "execauth.py") == [
        f"execauth.py:{n} imports subprocess" for n in _lines_importing(PACKAGE / "snapshot" / "execauth.py")]


def _lines_importing(path: Path) -> list[int]:
    return [i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("import subprocess")]


# -- the checks catch what they are meant to catch ---------------------------------------------

def _copy(tmp_path: Path) -> Path:
    import shutil

    dest = tmp_path / ROOT
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_a_planted_upward_import_is_named(tmp_path):
    package = _copy(tmp_path)
    plan = package / "views" / "drain" / "plan.py"
    plan.write_text(plan.read_text() + "\n\ndef _planted():\n    from kubectl_tspread.cli.output import whole_answer\n")
    bad = arrow_violations(package)
    assert len(bad) == 1 and bad[0].startswith("views/drain/plan.py:") and "imports cli/output.py" in bad[0]


def test_a_planted_relative_import_and_its_cycle_are_found(tmp_path):
    package = _copy(tmp_path)
    labels = package / "model" / "labels.py"
    labels.write_text(labels.read_text() + "\n\nif False:\n    from . import plan\n")
    plan = package / "model" / "plan.py"
    plan.write_text(plan.read_text() + "\n\ndef _planted():\n    from .labels import Selector\n")
    assert any({"model/labels.py", "model/plan.py"} <= set(c) for c in cycles(package))
    assert not any("model/labels.py" in c for c in cycles())


def test_a_planted_print_in_render_is_named(tmp_path):
    package = _copy(tmp_path)
    text = package / "render" / "text.py"
    text.write_text(text.read_text() + "\n\ndef _planted():\n    print('x')\n")
    assert [w for w in writes_of(text)] == [f"text.py:{len(text.read_text().splitlines())} calls print()"]


@pytest.mark.parametrize("planted, found", [
    ("def _planted(page):\n    page.file.write('x')\n", "calls .write()"),
    ("def _planted(c):\n    c.print('x')\n", "calls .print()"),
    ("def _planted():\n    import sys\n    getattr(sys, 'stdout').flush()\n", "calls .flush()"),
    ("def _planted(text, console=None):\n    return text\n", "_planted() takes a parameter named console"),
    ("def _planted(text, *, out):\n    return text\n", "_planted() takes a parameter named out"),
    ("_planted = lambda stream: stream\n", "lambda() takes a parameter named stream"),
    ("class _Planted:\n    def m(self, file):\n        return file\n", "m() takes a parameter named file"),
], ids=["write", "print", "flush", "console", "keyword-only out", "lambda", "method"])
def test_a_planted_write_or_stream_parameter_in_render_is_named(tmp_path, planted, found):
    package = _copy(tmp_path)
    text = package / "render" / "text.py"
    lines = len(text.read_text().splitlines())
    text.write_text(text.read_text() + "\n\n" + planted)
    (where, what), = [w.split(" ", 1) for w in stream_uses_of(text)]
    assert what == found and int(where.split(":")[1]) > lines  # the planted line, nothing before it


@pytest.mark.parametrize("where, planted, found", [
    ("views/drain/plan.py", "import os\n\ndef _planted():\n    os.fork()\n", "names os.fork"),
    ("views/drain/plan.py", "import os\n\ndef _planted():\n    os._exit(0)\n", "names os._exit"),
    ("views/drain/plan.py", "from os import fork as _f\n", "imports os.fork"),
    ("engine/spread.py", "import signal\n\ndef _planted():\n    signal.signal(signal.SIGINT, signal.SIG_DFL)\n",
     "names signal.signal"),
    ("views/drain/remedies.py", "def _planted(libc):\n    libc.prctl(1, 9, 0, 0, 0)\n", "names prctl"),
    ("model/plan.py", "def _planted():\n    import multiprocessing.pool\n", "imports multiprocessing"),
    ("render/text.py", "from subprocess import run as _run\n", "imports subprocess"),
    ("snapshot/live.py", "import subprocess\n", "imports subprocess"),
    ("snapshot/execauth.py", "import os\n\ndef _planted():\n    os.fork()\n", "names os.fork"),
], ids=["fork in views", "_exit in views", "fork imported by name", "signal in engine", "prctl in views",
        "multiprocessing in model, in a function", "subprocess in render", "subprocess in another snapshot module",
        "execauth may run its plugin, not fork"])
def test_a_planted_process_or_signal_outside_cli_is_named(tmp_path, where, planted, found):
    package = _copy(tmp_path)
    path = package / where
    lines = len(path.read_text().splitlines())
    path.write_text(path.read_text() + "\n\n" + planted)
    (bad,) = process_violations(package)
    at, what = bad.split(" ", 1)
    assert at.startswith(where + ":") and int(at.split(":")[1]) > lines and what == found
