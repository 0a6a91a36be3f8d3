"""The engine and the domain verbs never import kubernetes, click or rich: what is loaded once they
are imported (tests/test_layers.py reads every import statement, function-level ones included)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

CANDIDATES = [
    "kubectl_tspread.engine.index", "kubectl_tspread.engine.nodematch", "kubectl_tspread.engine.defaults",
    "kubectl_tspread.engine.spread", "kubectl_tspread.engine.traps", "kubectl_tspread.engine.filters",
    "kubectl_tspread.engine.message", "kubectl_tspread.engine.interpod", "kubectl_tspread.engine.resources",
    "kubectl_tspread.engine.volumes", "kubectl_tspread.views.targets", "kubectl_tspread.views.distribution",
    "kubectl_tspread.views.pending", "kubectl_tspread.views.fixes", "kubectl_tspread.views.fixes_nodes", "kubectl_tspread.views.drain.plan",
    # imported lazily by plan.py, so importing plan alone would not load them
    "kubectl_tspread.views.drain.remedies", "kubectl_tspread.views.drain.waiting",
]
FORBIDDEN = ("kubernetes", "click", "rich")
# layers above the domain: the command line, the renderers, the live API path
UPPER_LAYERS = ("kubectl_tspread.cli", "kubectl_tspread.render", "kubectl_tspread.snapshot.live")


def imported_after(modules: list[str]) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_pure_module_exists():
    assert [m for m in CANDIDATES if importlib.util.find_spec(m) is None] == []


def test_engine_imports_stay_pure():
    loaded = imported_after(CANDIDATES)
    assert [k for k in loaded if k.split(".")[0] in FORBIDDEN] == []
    assert [k for k in loaded if k.startswith(UPPER_LAYERS)] == []


def test_renderers_do_not_import_the_command_line():
    loaded = imported_after(["kubectl_tspread.render.table", "kubectl_tspread.render.pending",
                             "kubectl_tspread.render.drain", "kubectl_tspread.render.structured",
                             "kubectl_tspread.render.text"])
    assert [k for k in loaded if k.startswith(("kubectl_tspread.cli", "kubectl_tspread.snapshot"))] == []
    assert "kubernetes" not in {k.split(".")[0] for k in loaded}


def test_the_check_detects_a_heavy_import():
    code = f"import json, sys, click; print(json.dumps([k for k in sys.modules if k.split('.')[0] in {FORBIDDEN!r}]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "click" in json.loads(out.stdout)
