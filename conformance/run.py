"""Random clusters checked against kube-scheduler's own code, one oracle per minor.

    python -m conformance.run --oracle 1.37=/path/to/oracle [--cases N] [--drains D] [--seed S] [--show K]

Prints each mismatch (at most --show cases in full per version) and one line per version:

    conformance 1.37: filter a/N, first b/N, message c/N, counts d/N, placement e/N;
    drains D: drain placement f/P, drain ties g/T, drain skew s/J, drain clusters h/C

where each N counts the cases that aspect was judged on. The drains part (drains.py) drains
D of the same clusters and checks each of their P placements on the cluster it met (T of
them placed, not stranded) and each of their steps' J judgements of a workload's constraints
on the cluster after it; "drain clusters" counts the C rebuilt clusters whose every
single-pod aspect agrees too. Exit 0 only when every judged
aspect of every case agrees; 1 when something disagrees; 2 when the oracle failed.
`--known-gap ASPECT` still prints and counts that aspect's mismatches but does not fail on
them, and the summary line says so: for a difference that is tracked as open work.
`scripts/conformance` builds the oracles and calls this.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from conformance.compare import ASPECTS, Outcome, compare, ours
from conformance.drains import DRAIN_ASPECTS, drain_cases, judge
from conformance.generate import Case, cases


def run_oracle(binary: str, batch: list[Case]) -> list[dict[str, Any]]:
    payload = "".join(json.dumps(c.oracle_input(), separators=(",", ":")) + "\n" for c in batch)
    try:
        proc = subprocess.run([binary], input=payload, capture_output=True, text=True, check=False)
    except OSError as e:
        raise RuntimeError(f"cannot run the oracle {binary}: {e}") from None
    if proc.returncode != 0:
        raise RuntimeError(f"oracle {binary} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if [r.get("id") for r in lines] != [c.id for c in batch]:
        raise RuntimeError(f"oracle {binary} answered {len(lines)} of {len(batch)} cases, or out of order")
    return lines


def _transient(answer: dict[str, Any]) -> bool:
    """An Error status: the fake clientset's informers can hand the scheduler an object a moment
    after the cache it reads was synced (1.33's volume assume cache), which the scheduler reports
    as an Error; the generated clusters never cause one otherwise."""
    statuses = [answer.get("preFilter") or {}] + [n.get("first") or {} for n in answer.get("nodes") or ()]
    return any(s.get("code") == "Error" for s in statuses)


# VolumeBinding's reason for a claim whose PV it cannot find
_PV_MISSING = "pvc(s) bound to non-existent pv(s)"


def _lagging(case: Case, answer: dict[str, Any]) -> bool:
    """VolumeBinding reads PVs through its own assume cache, which an informer event handler
    fills a moment after the informer itself synced (on a loaded machine, after the cycle
    began): a claim bound to a PV that the case holds then reads as bound to a missing one.
    The generated claims only name PVs of their case, so that answer is the lag's."""
    if _PV_MISSING not in json.dumps(answer):
        return False
    pvs = {o["metadata"]["name"] for o in case.objects if o.get("kind") == "PersistentVolume"}
    wanted = {(o.get("spec") or {}).get("volumeName") for o in case.objects if o.get("kind") == "PersistentVolumeClaim"}
    return (wanted - {None, ""}) <= pvs


def _stale_snapshot(answer: dict[str, Any]) -> bool:
    """The per-node Filter pass ran on a snapshot taken while the scheduler's cache still lacked
    pods (its informer delivered them a moment later, on a loaded machine): a node passes every
    filter there, yet the real scheduling cycle, which takes its own snapshot, found no node.
    Asking again costs nothing when the answer was right: it comes back the same. (The oracle
    now takes its snapshot again once its counts are met, waitReady; this stays as a guard.)"""
    return answer.get("schedulable") is False and any(
        not n.get("first") for n in answer.get("nodes") or ())


def answers_for(binary: str, batch: list[Case], out=sys.stdout) -> list[dict[str, Any]]:
    """The oracle's answers, a case with a transient Error, a lagging volume cache or a stale
    snapshot asked again (up to 3 times, said)."""
    answers = run_oracle(binary, batch)
    again = 0
    for i, case in enumerate(batch):
        for _ in range(3):
            if not _transient(answers[i]) and not _lagging(case, answers[i]) and not _stale_snapshot(answers[i]):
                break
            again += 1
            answers[i] = run_oracle(binary, [case])[0]
    if again:
        print(f"oracle: {again} case run(s) repeated after a transient Error status, a lagging volume cache "
              "or a stale snapshot", file=out)
    return answers


def check(minor_label: str, binary: str, seed: int, count: int, only: str | None, show: int,
          known: tuple[str, ...] = (), out=sys.stdout, drains: int = 0) -> bool:
    minor = int(minor_label.split(".")[1])
    batch = [c for c in cases(seed, count, minor) if only is None or c.id == only]
    answered, clean = _answered(minor_label, batch, answers_for(binary, batch, out), out)
    tally = {a: [0, 0] for a in ASPECTS}
    shown = 0
    for case, answer in answered:
        outcome: Outcome = compare(case, answer, ours(case, minor))
        _count(tally, outcome.agree)
        if outcome.diffs:
            bad = ",".join(a for a, v in outcome.agree.items() if v is False)
            if any(a not in known for a, v in outcome.agree.items() if v is False):
                clean = False
            if shown < show:
                print(f"--- {minor_label} {case.id} ({bad})", file=out)
                for d in outcome.diffs[:6]:
                    print(f"  {d}", file=out)
                if len(outcome.diffs) > 6:
                    print(f"  … {len(outcome.diffs) - 6} more", file=out)
            else:
                print(f"--- {minor_label} {case.id} ({bad})", file=out)
            shown += 1
    summary = ", ".join(f"{a} {ok}/{n}" + (" (known gap)" if a in known and ok < n else "")
                        for a, (ok, n) in tally.items())
    if drains:
        drained, drains_clean = check_drains(minor, binary, seed, drains, only, show - min(shown, show), out)
        clean = clean and drains_clean
        summary += f"; drains {drains}: " + ", ".join(f"{a} {ok}/{n}" for a, (ok, n) in drained.items())
    print(f"conformance {minor_label}: {summary}", file=out)
    return clean


def check_drains(minor: int, binary: str, seed: int, count: int, only: str | None, show: int,
                 out=sys.stdout) -> tuple[dict[str, list[int]], bool]:
    """Drains of the first `count` clusters, each placement against the oracle (drains.py):
    the tally of the drain aspects, and whether everything agreed."""
    batch = [p for p in drain_cases(seed, count, minor) if only is None or p.case.id.startswith(f"{only}-")]
    cases_of = [p.case for p in batch]
    answered, clean = _answered(f"1.{minor}", cases_of, answers_for(binary, cases_of, out), out)
    by_case = {id(p.case): p for p in batch}
    tally = {a: [0, 0] for a in (*DRAIN_ASPECTS, "drain clusters")}
    for case, answer in answered:
        placement = by_case[id(case)]
        agree, diffs = judge(placement, answer)
        outcome = compare(case, answer, ours(case, minor))
        agree["drain clusters"] = all(v is not False for v in outcome.agree.values())
        _count(tally, agree)
        diffs += outcome.diffs
        if diffs:
            clean = False
            bad = ",".join(a for a, v in {**agree, **outcome.agree}.items() if v is False)
            print(f"--- 1.{minor} {placement.case.id} ({bad})", file=out)
            if show > 0:
                show -= 1
                for d in diffs[:6]:
                    print(f"  {d}", file=out)
    return tally, clean


def _answered(label: str, batch: list[Case], answers: list[dict[str, Any]], out) -> tuple[list, bool]:
    """(case, answer) of the cases the oracle answered, and False when it failed on one (each
    failure printed)."""
    answered, clean = [], True
    for case, answer in zip(batch, answers):
        if answer.get("error"):
            clean = False
            print(f"{label} {case.id}: oracle error: {answer['error']}", file=out)
        else:
            answered.append((case, answer))
    return answered, clean


def _count(tally: dict[str, list[int]], agree: dict[str, bool | None]) -> None:
    """Add one case's judged aspects (None: not judged) to `tally`: [agreed, judged] per aspect."""
    for aspect, agreed in agree.items():
        if agreed is not None:
            tally[aspect][1] += 1
            tally[aspect][0] += int(agreed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="conformance", description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", action="append", required=True, metavar="MINOR=PATH",
                    help="a scheduler oracle binary and its minor, e.g. 1.37=/path/oracle (repeatable)")
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--drains", type=int, default=0, metavar="D",
                    help="also drain the first D clusters and check every placement of their plans")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=20, help="mismatching cases shown in full per version")
    ap.add_argument("--only", help="one case id to run (for debugging)")
    ap.add_argument("--known-gap", action="append", default=[], choices=ASPECTS, metavar="ASPECT",
                    help="report this aspect's mismatches without failing on them (repeatable)")
    args = ap.parse_args(argv)
    ok = True
    for spec in args.oracle:
        minor_label, _, binary = spec.partition("=")
        try:
            ok = check(minor_label, binary, args.seed, args.cases, args.only, args.show, tuple(args.known_gap),
                       drains=args.drains) and ok
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
