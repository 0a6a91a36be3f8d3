"""scripts/bench: generate the clusters, serve them, measure every case with its floor, report.

    scripts/bench                         # small, large and trap, writes docs/PERFORMANCE.md
    scripts/bench --sizes small           # about two minutes
    scripts/bench --only distribution-A,help --runs 3

Runs of a case and of its floor alternate, so both see the same machine load (other
processes share these cores). A command missing from the tree is reported as "not
available"; a command that fails is reported with its error; neither stops the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field

from bench import generate, report
from bench.cases import REPO, VENV_BIN, Case, fixed_cases, sized_cases, tool, trap_cases
from bench.measure import Stats, run
from bench.server import write_kubeconfig

CACHE_DIR = os.path.join(REPO, "bench-out")
DOC = os.path.join(REPO, "docs", "PERFORMANCE.md")
CASE_NAMES = ("distribution-A", "why-pending-one", "why-pending-A", "drain-one", "drain-10pct", "drain-zone",
              "drain-trap-zone",
              "typed-client", "kubectl-get", "from-file", "json-load", "help", "kubectl-ref", "demo")


@dataclass
class Result:
    case: Case
    size: str  # "" for cases that read no generated cluster
    stats: Stats = field(default_factory=Stats)
    floor: Stats = field(default_factory=Stats)
    note: str = ""  # "not available" / "failed: …": the case has no numbers

    @property
    def ok(self) -> bool:
        return not self.note and self.stats.runs > 0


class Served:
    """bench.server in a child process (its CPU is not the measured command's)."""

    def __init__(self, directory: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.server", directory], cwd=REPO,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening "):
            self.proc.kill()
            raise RuntimeError(f"the benchmark server for {directory} did not start: {line!r}")
        self.url = line.split(" ", 1)[1]

    def take_log(self) -> list[str]:
        with urllib.request.urlopen(self.url + "/_bench/log", timeout=30) as resp:
            return json.load(resp)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def command_env(kubeconfig: str | None) -> dict:
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""), NO_COLOR="1",
               COLUMNS="200", PYTHONPATH=REPO)
    if kubeconfig:
        env["KUBECONFIG"] = kubeconfig
    return env


_VERBS: dict[str, bool] = {}


def verb_available(verb: str) -> bool:
    if verb not in _VERBS:
        _VERBS[verb] = run(tool() + [verb, "--help"], env=command_env(None), timeout=60).rc == 0
    return _VERBS[verb]


def _progress(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _failure(sample) -> str:
    if sample.timed_out:
        return f"failed: timed out after {sample.wall:.0f} s"
    lines = [ln for ln in sample.stderr.strip().splitlines() if ln.strip()]
    return f"failed: exit {sample.rc}: {lines[-1][:200] if lines else 'no message'}"


def measure_case(case: Case, size: str, env: dict, served: Served | None, work_dir: str) -> Result:
    res = Result(case, size if case.sized else "")
    if case.verb and not verb_available(case.verb):
        res.note = "not available (not in this tree yet)"
        return res
    targets_file = os.path.join(work_dir, f"requests-{size}-{case.name}.json")
    have_targets = False
    if case.warmup:
        if served:
            served.take_log()
        warm = run(case.argv, env=env, cwd=REPO, timeout=case.timeout)
        have_targets = _save_targets(served, case, targets_file)
        if warm.rc not in case.ok_codes:
            return _failed(res, warm, served, targets_file if have_targets else None, env)
    runs = _runs_for(case.runs, warm.wall if case.warmup else 0.0)
    for i in range(runs):
        if served and not have_targets:
            served.take_log()
        s = run(case.argv, env=env, cwd=REPO, timeout=case.timeout)
        if s.rc not in case.ok_codes:
            have_targets = have_targets or _save_targets(served, case, targets_file)
            return _failed(res, s, served, targets_file if have_targets else None, env)
        res.stats.samples.append(s)
        have_targets = have_targets or _save_targets(served, case, targets_file)
        if case.floor and served:
            res.floor.samples.append(run([sys.executable, "-m", "bench.floor", served.url, targets_file],
                                         env=env, cwd=REPO))
        _progress(f"{size or '-'} {case.name} run {i + 1}/{runs}: {s.wall:.2f} s, {s.rss_mb:.0f} MB"
                  + (f" (floor {res.floor.samples[-1].wall:.2f} s)" if res.floor.samples else ""))
    return res


def _runs_for(asked: int, warmup_wall: float) -> int:
    """Fewer runs of a command that takes over half a minute (the harness must fit its time
    budget), but still three: a median needs them (on a shared machine the wall time of a
    long case moves between runs of the same code)."""
    if warmup_wall > 30:
        return min(asked, 3)
    return asked


def _failed(res: Result, sample, served: Served | None, targets_file: str | None, env: dict) -> Result:
    """A failed or timed-out case: say why; for a timeout, also how its floor compares."""
    res.note = _failure(sample)
    if sample.timed_out and served and targets_file:
        floor = run([sys.executable, "-m", "bench.floor", served.url, targets_file], env=env, cwd=REPO)
        res.floor.samples.append(floor)
        res.note = (f"timed out after {sample.wall:.0f} s (> {sample.wall / floor.wall:.0f} × its floor of "
                    f"{floor.wall:.2f} s)")
    _progress(f"{res.size or '-'} {res.case.name}: {res.note}")
    return res


def _save_targets(served: Served | None, case: Case, path: str) -> bool:
    if not (served and case.floor):
        return False
    with open(path, "w") as f:
        json.dump(served.take_log(), f)
    return True


def run_size(size_name: str, args, selected) -> list[Result]:
    size = generate.SIZES[size_name]
    _progress(f"{size_name}: generating (cached in {args.cache_dir}) ...")
    cluster = generate.ensure(size, args.cache_dir)
    large = size.pods >= 100_000
    dump = generate.ensure_dump(cluster) if selected("from-file") or selected("json-load") else None
    served = Served(cluster)
    try:
        kubeconfig = write_kubeconfig(os.path.join(cluster, "kubeconfig"), served.url)
        env = command_env(kubeconfig)
        results = []
        cases = trap_cases(kubeconfig, args.runs) if size.modes else \
            sized_cases(cluster, kubeconfig, dump, large, args.runs, args.cache_dir)
        for case in cases:
            if selected(case.name):
                _progress(f"{size_name}: {case.label}")
                results.append(measure_case(case, size_name, env, served, cluster))
        return results
    finally:
        served.close()


def parse_args(argv: list[str] | None):
    ap = argparse.ArgumentParser(prog="scripts/bench", description="Benchmark kubectl-tspread against the "
                                 "floor and the baselines on synthetic clusters served from 127.0.0.1.")
    ap.add_argument("--sizes", default="small,large,trap", help="comma list of: " + ", ".join(generate.SIZES))
    ap.add_argument("--runs", type=int, default=None, help="runs per case (default: 3 at large, 5 otherwise; "
                    "at most 3 of a command whose warm-up took over 30 s; the baselines 1 at large)")
    ap.add_argument("--only", default="", help="comma list of case names: " + ", ".join(CASE_NAMES))
    ap.add_argument("--cache-dir", default=CACHE_DIR, help="where generated clusters are kept (default: bench-out/)")
    ap.add_argument("--write", action="store_true", help="write docs/PERFORMANCE.md even with --only")
    ap.add_argument("--no-write", action="store_true", help="only print the table")
    args = ap.parse_args(argv)
    os.makedirs(args.cache_dir, exist_ok=True)
    sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in sizes if s not in generate.SIZES]
    if unknown:
        ap.error(f"unknown size {unknown[0]!r}; pick from {', '.join(generate.SIZES)}")
    return args, sizes


def main(argv: list[str] | None = None) -> int:
    args, sizes = parse_args(argv)
    only = {n for n in args.only.split(",") if n}
    selected = (lambda name: not only or name in only)  # noqa: E731
    started, load_before = time.time(), os.getloadavg()
    results: list[Result] = []
    for case in fixed_cases(args.runs):
        if selected(case.name):
            results.append(measure_case(case, "", command_env(None), None, args.cache_dir))
    for size in sorted(sizes, key=lambda s: generate.SIZES[s].pods):
        results.extend(run_size(size, args, selected))
    meta = report.Meta(sizes=[generate.SIZES[s] for s in sizes], cache_dir=args.cache_dir,
                       seconds=time.time() - started, load=(load_before, os.getloadavg()))
    text = report.render(results, meta)
    print(report.console_table(results, meta))
    if not args.no_write and (args.write or not only):
        os.makedirs(os.path.dirname(DOC), exist_ok=True)
        with open(DOC, "w") as f:
            f.write(text)
        print(f"wrote {os.path.relpath(DOC, REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
