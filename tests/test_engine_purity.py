"""The engine and the domain verbs never import kubernetes, click or rich."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

CANDIDATES = [
    "kubectl_tspread.engine.index", "kubectl_tspread.engine.nodematch", "kubectl_tspread.engine.defaults",
    "kubectl_tspread.engine.spread", "kubectl_tspread.engine.traps", "kubectl_tspread.engine.filters",
    "kubectl_tspread.distribution", "kubectl_tspread.pending", "kubectl_tspread.drain.plan",
]
FORBIDDEN = ("kubernetes", "click", "rich")


def existing_modules():
    return [m for m in CANDIDATES if importlib.util.find_spec(m) is not None]


def test_engine_imports_stay_pure():
    modules = existing_modules()
    assert "kubectl_tspread.engine.spread" in modules
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted(k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_the_check_detects_a_heavy_import():
    code = f"import json, sys, click; print(json.dumps([k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r}]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "click" in json.loads(out.stdout)
