"""The results as docs/PERFORMANCE.md (markdown) and as a table on the terminal.

Targets are judged on the largest size a case was run at; an analysis written by hand
(bench/ANALYSIS.md) is appended so that the regenerated document keeps the why.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from dataclasses import dataclass

from bench.cases import FROM_FILE_LIMIT, GROWTH_LIMIT, REPO, TARGETS
from bench.generate import Size

ANALYSIS = os.path.join(REPO, "bench", "ANALYSIS.md")


@dataclass
class Meta:
    sizes: list[Size]
    cache_dir: str
    seconds: float
    load: tuple


def machine() -> list[tuple[str, str]]:
    cpu = next((ln.split(":", 1)[1].strip() for ln in _read("/proc/cpuinfo").splitlines()
                if ln.startswith("model name")), platform.processor() or "unknown")
    mem = next((ln.split()[1] for ln in _read("/proc/meminfo").splitlines() if ln.startswith("MemTotal")), "0")
    try:
        kubectl = subprocess.run(["kubectl", "version", "--client"], capture_output=True, text=True,
                                 timeout=20).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        kubectl = "not found"
    try:
        import orjson

        parser = f"orjson {orjson.__version__}"
    except ImportError:
        parser = "json (stdlib)"
    try:  # the tool's typed partial parse of pod pages and split of dumps (snapshot/wire.py, files.py)
        import msgspec

        parser += f"; msgspec {msgspec.__version__} (tool only; the floor parses with the former)"
    except ImportError:
        pass
    return [("CPU", cpu), ("cores", str(os.cpu_count())), ("RAM", f"{int(mem) / 1024 / 1024:.1f} GiB"),
            ("Python", platform.python_version()), ("kubectl", kubectl), ("JSON parser", parser),
            ("OS", platform.platform())]


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _by_case(results) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for r in results:
        out.setdefault(r.case.name, {})[r.size] = r
    return out


def _largest(per_size: dict, sizes: list[Size]):
    """The result at the largest size: a target is judged there, timed out or not."""
    order = {s.name: s.pods for s in sizes}
    pool = list(per_size.values())
    return max(pool, key=lambda r: order.get(r.size, 0)) if pool else None


def evaluate(results, sizes: list[Size]) -> list[tuple[str, str, str, str, str]]:
    """(measured, target, size, result, verdict) for every target of issue 5."""
    by = _by_case(results)
    rows = []
    for t in TARGETS:
        r = _largest(by.get(t.case, {}), sizes)
        if r is None:
            continue
        label, size = r.case.label, r.size or "-"
        if not r.ok:
            timed_out = r.note.startswith("timed out")
            rows.append((label, t.text, size, r.note or "no runs", "MISSED" if timed_out else "not measured"))
            continue
        parts, met = [], True
        if t.floor_ratio is not None:
            ratio = r.stats.wall / r.floor.wall if r.floor.runs else float("inf")
            parts.append(f"{ratio:.2f} × floor ({r.stats.wall:.2f} s vs {r.floor.wall:.2f} s)")
            met = met and ratio <= t.floor_ratio
        if t.seconds is not None:
            parts.append(f"{r.stats.wall:.3f} s")
            met = met and r.stats.wall <= t.seconds
        if t.rss_mb is not None:
            parts.append(f"RSS {r.stats.rss_mb:.0f} MB")
            met = met and r.stats.rss_mb <= t.rss_mb
        rows.append((label, t.text, size, ", ".join(parts), "met" if met else "MISSED"))
    rows.extend(_growth(by, sizes))
    rows.extend(_from_file(by, sizes))
    return rows


def _growth(by: dict, sizes: list[Size]) -> list[tuple]:
    runs = {k: v for k, v in by.get("distribution-A", {}).items() if v.ok}
    if len(runs) < 2:
        return []
    order = sorted(runs.values(), key=lambda r: next(s.pods for s in sizes if s.name == r.size))
    lo, hi = order[0], order[-1]
    t, m = hi.stats.wall / lo.stats.wall, hi.stats.rss_mb / lo.stats.rss_mb
    ok = t <= GROWTH_LIMIT and m <= GROWTH_LIMIT
    return [(f"growth of distribution -A, {lo.size} → {hi.size}", f"time × ≤ {GROWTH_LIMIT:g}, memory × ≤ "
             f"{GROWTH_LIMIT:g}", f"{lo.size}→{hi.size}", f"time × {t:.2f}, memory × {m:.2f}",
             "met" if ok else "MISSED")]


def _from_file(by: dict, sizes: list[Size]) -> list[tuple]:
    ff, jl = _largest(by.get("from-file", {}), sizes), _largest(by.get("json-load", {}), sizes)
    if ff is None or jl is None:
        return []
    target = f"≤ {FROM_FILE_LIMIT:g} × json.load in time and RSS"
    if not (ff.ok and jl.ok):
        return [(ff.case.label, target, ff.size, ff.note or jl.note, "not measured")]
    t, m = ff.stats.wall / jl.stats.wall, ff.stats.rss_mb / jl.stats.rss_mb
    ok = t <= FROM_FILE_LIMIT and m <= FROM_FILE_LIMIT
    return [(ff.case.label, target, ff.size, f"time × {t:.2f} ({ff.stats.wall:.2f} s vs {jl.stats.wall:.2f} s), "
             f"RSS × {m:.2f} ({ff.stats.rss_mb:.0f} MB vs {jl.stats.rss_mb:.0f} MB)", "met" if ok else "MISSED")]


def measurement_rows(results) -> list[list[str]]:
    rows = []
    for r in results:
        if not r.ok:
            rows.append([r.case.label, r.size or "-", "0", r.note, "", "", "", ""])
            continue
        s, f = r.stats, r.floor
        rows.append([r.case.label, r.size or "-", str(s.runs), f"{s.wall:.3f}", f"{s.cpu:.3f}", f"{s.rss_mb:.0f}",
                     f"{f.wall:.3f}" if f.runs else "", f"{s.wall / f.wall:.2f}" if f.runs else ""])
    return rows


HEAD = ["measured", "size", "runs", "wall s (median)", "CPU s", "peak RSS MB", "floor wall s", "× floor"]


def _md_table(head: list[str], rows: list) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _sizes_rows(sizes: list[Size], cache_dir: str) -> list[list[str]]:
    rows = []
    for s in sizes:
        directory = os.path.join(cache_dir, f"cluster-{s.name}")
        try:
            with open(os.path.join(directory, "summary.json")) as f:
                kinds = json.load(f)["kinds"]
            mb = os.path.getsize(os.path.join(directory, "Pod.items")) / 1e6
        except (OSError, ValueError, KeyError):
            kinds, mb = {}, 0.0
        rows.append([s.name, f"{s.nodes:,}", f"{s.pods:,}", f"{s.pending:,}", str(kinds.get("Deployment", "")),
                     str(kinds.get("PodDisruptionBudget", "")), f"{mb:,.0f} MB ({mb * 1e3 / max(s.pods, 1):.1f} KB/pod)"])
    return rows


def render(results, meta: Meta) -> str:
    verdicts = evaluate(results, meta.sizes)
    missed = [v for v in verdicts if v[4] != "met"]
    out = [
        "# Performance", "",
        "Written by `scripts/bench` (bench/runner.py); rerun it to refresh. Every number below comes from one",
        "run of the harness: the tool, its floor and the baselines were measured together, runs of a command",
        "alternating with runs of its floor. Wall and CPU time and peak RSS are of the whole process",
        "(`os.wait4`), medians over the runs shown.", "",
        "**Floor**: `bench/floor.py` replays the exact HTTP requests the command made (recorded by the server",
        "during a warm-up run) over one keep-alive connection and JSON-parses each answer, keeping nothing,",
        "with the cyclic garbage collector off (the tool pauses it while loading, too). It parses each",
        "answer whole; the tool parses pod pages only in part (`snapshot/wire.py`), so a command that",
        "mostly reads can come in under it.",
        "**Baselines**: the `kubernetes` client's typed `list_pod_for_all_namespaces` (pages of 500) and",
        "`kubectl get pods -A -o json`, against the same server.", "",
        "## Machine", "",
        _md_table(["", ""], machine() + [
            ("load average (1 min) at start / end", f"{meta.load[0][0]:.2f} / {meta.load[1][0]:.2f}"),
            ("date", time.strftime("%Y-%m-%d %H:%M %Z")), ("harness time", f"{meta.seconds / 60:.1f} min")]),
        "", "## Clusters", "",
        "Synthetic and deterministic (`bench/generate.py`, seeded): 3 zones, pods of ~5 KB of JSON with",
        "managedFields, owner references, requests, tolerations and spread constraints; Deployments with",
        "ReplicaSets, Services and PDBs; two DaemonSets; finished Job pods; Pending workloads. Served by",
        "`bench/server.py` on 127.0.0.1 (paging, label and field selectors, discovery).", "",
        _md_table(["size", "nodes", "pods", "pending", "Deployments", "PDBs", "pod JSON"],
                  _sizes_rows(meta.sizes, meta.cache_dir)),
        "", "## Targets (issues 5 and 59)", "",
        _md_table(["measured", "target", "size", "result", "verdict"], verdicts) if verdicts else "(none measured)",
        "", f"{len(verdicts) - len(missed)} of {len(verdicts)} met." if verdicts else "",
        "", "## All measurements", "", _md_table(HEAD, measurement_rows(results)), "",
    ]
    if os.path.exists(ANALYSIS):
        out += [_read(ANALYSIS).strip(), ""]
    return "\n".join(out)


def console_table(results, meta: Meta) -> str:
    rows = [HEAD] + measurement_rows(results)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(HEAD))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    verdicts = evaluate(results, meta.sizes)
    if verdicts:
        lines += ["", "targets:"] + [f"  {v[4]:<12} {v[0]} [{v[2]}]: {v[3]}  (target {v[1]})" for v in verdicts]
    return "\n".join(lines)
