"""The lean search (kubectl_tspread/views/drain/core/lean.py) against the planner: the zone plan, its re-plan
that deletes the drained nodes, or its re-plan under nodeTaintsPolicy Honor, made both ways and
compared step by step, stranding by stranding and verdict by verdict, with both times.

bench/lean_probe.py replays the planner's own batches on flat arrays. The lean search decides
on them alone: the order heuristic, the candidate batches, each candidate played with the
planner's rules (PDB budgets in waves, cordons, evictions, the drained nodes deleted,
replacements placed, stranded ones retried at later steps) and judged on the arrays, the
depth-first search without backtracking and the greedy fallback, the candidates not kept rolled
back through an undo log. forced.py's proof is the planner's, made before the timing.

Compared: every step's nodes, cordons, evicted pods, the node each replacement is placed on
(or none), the nodes deleted and whether the step is safe; every stranded pod with its step and
reason (diagnose.py's codes, made on the arrays); the candidates simulated in all (the plan's
`explored`); and the verdict a remedy re-plan answers (whether the plan is safe, and each
finding's code and workload). With --report, also each step's eviction records (accepting
domains included), its judgement of every tracked constraint (distribution included, domains
in order), PDB uses and skipped pods, which the lean search then keeps, and the rest of the
DrainPlan it makes of them (LeanSearch.drain_plan) as the JSON document has it: the stranded
pods with their details, the settled pods, the findings with their messages and the verdict.
Exit 1 when any differs. Without --report the lean search builds none of that, and the
planner's time includes it.

    .venv/bin/python -m bench.lean_search [--size tiny|small|large] [--cache-dir bench-out]
                                          [--delete-drained-nodes | --honor-taints] [--report]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from dataclasses import replace

from bench.lean_probe import ZONE, load, plan_options, planner_plan
from kubectl_tspread.views.drain.core.lean import LeanSearch, Unsupported, forced_proof
from kubectl_tspread.views.drain.findings import plan_findings
from kubectl_tspread.model.plan import INFO, ORDER_MATTERS
from kubectl_tspread.views.drain.plan import resolve_targets
from kubectl_tspread.views.drain.remedies import first_replan_actions
from kubectl_tspread.model import SET_NODE_TAINTS_POLICY_HONOR, ZONE_KEY
from kubectl_tspread.render.drain import drain_plan_view


def lean_for(snapshot, targets, options, report: bool = False) -> LeanSearch:
    """The lean search of `options`' plan, told forced.py's proof as the planner would be."""
    return LeanSearch(snapshot, targets, options, forced=bool(forced_proof(snapshot, targets, options)), report=report)


def honor_replan(snapshot, targets, options):
    """(edited snapshot, options) of the SetNodeTaintsPolicyHonor remedy re-plan remedies.py makes first for
    the plan's findings: the first stranded workload's constraints of the refusing key under
    nodeTaintsPolicy Honor."""
    plan = planner_plan(snapshot, targets, options)
    for _, action, snap, opts in first_replan_actions(snapshot, targets, options, plan, plan.findings):
        if action == SET_NODE_TAINTS_POLICY_HONOR:
            return snap(), opts
    raise SystemExit("error: the plan's findings ask for no SetNodeTaintsPolicyHonor re-plan")


def compare(lean: LeanSearch, plan) -> list[str]:
    """The differences between the lean search's plan and the planner's (the first few)."""
    out: list[str] = []
    if len(lean.steps) != len(plan.steps):
        out.append(f"{len(lean.steps)} steps here, the planner's {len(plan.steps)}")
    for mine, theirs in zip(lean.steps, plan.steps):
        want = tuple((f"{e.namespace}/{e.name}", e.predicted_node if e.replaced else None) for e in theirs.evictions)
        for what, a, b in (("nodes", mine.nodes, theirs.nodes), ("cordons", mine.cordon, theirs.cordon),
                           ("deleted nodes", mine.deleted_nodes, tuple(theirs.deleted_nodes)),
                           ("evictions", mine.evicted, want), ("safe", mine.safe, theirs.safe)):
            if a != b:
                out.append(f"step {mine.number}: {what} {_first_difference(a, b)}")
        if len(out) >= 5:
            return out
    if lean.report:
        out += compare_report(lean, plan)
    blocked = sum(1 for n in lean.targets for d in lean.ctx.decisions[n] if d.pod.key in lean.ctx.blocked)
    theirs = [(f"{s.namespace}/{s.name}", s.step, s.reason) for s in plan.stranded[:len(plan.stranded) - blocked]]
    if lean.stranded != theirs:
        out.append(f"stranded pods {_first_difference(tuple(lean.stranded), tuple(theirs))}")
    if lean.explored != plan.explored:
        out.append(f"{lean.explored} candidates simulated here, the planner's {plan.explored}")
    return out


def compare_report(lean: LeanSearch, plan) -> list[str]:
    """The differences in what a step reports of its evictions (accepting domains included), the
    constraints (each field, and each distribution's domains and counts in order), the PDBs and
    the skipped pods. A judgement neither side made anew since the step before (the same object
    again) is not compared again."""
    out: list[str] = []
    before: tuple = ((), ())
    for mine, theirs in zip(lean.steps, plan.steps):
        a, b = mine.constraints_after, theirs.constraints_after
        if len(a) != len(b):
            out.append(f"step {mine.number}: {len(a)} constraints after it here, the planner's {len(b)}")
        for k, (x, y) in enumerate(zip(a, b)):
            if k < len(before[0]) and x is before[0][k] and y is before[1][k]:
                continue
            if _judgement(x) != _judgement(y):
                out.append(f"step {mine.number}: constraint {k + 1} {_first_difference(_judgement(x), _judgement(y))}")
        before = (a, b)
        for what, x, y in (("eviction records", tuple(map(_eviction, mine.evictions)),
                            tuple(map(_eviction, theirs.evictions))),
                           ("PDB uses", mine.pdbs, theirs.pdbs), ("skipped pods", mine.skipped, theirs.skipped)):
            if x != y:
                out.append(f"step {mine.number}: {what} {_first_difference(x, y)}")
        if len(out) >= 5:
            break
    return out


def compare_plan(lean: LeanSearch, found: bool, plan) -> list[str]:
    """The differences between the DrainPlan the lean search's report makes and the planner's,
    as the JSON document has them (keys and domains in order), besides its steps (compare and
    compare_report look at those): the stranded pods with their details, the settled pods, the
    findings (those made before remedies) with their messages, the verdict line and the rest."""
    mine, refused = lean.drain_plan(found)
    mine = replace(mine, findings=tuple(plan_findings(mine, refused, lean.snapshot)))
    theirs = replace(plan, findings=tuple(f for f in plan.findings if f.code != ORDER_MATTERS))
    a, b = drain_plan_view(mine), drain_plan_view(theirs)
    out = []
    for key in a:
        if key == "steps":
            continue
        x, y = a[key], b[key]
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for k, (u, v) in enumerate(zip(x, y)):
                if json.dumps(u) != json.dumps(v):
                    out.append(f"{key} #{k + 1} of {len(x)}: {_first_difference(_items(u), _items(v))}")
                    break
        elif json.dumps(x) != json.dumps(y):
            out.append(f"{key}: {_first_difference(_items(x), _items(y))}")
    return out


def _items(value):
    """`value` with every dict made a tuple of its items, in order (what JSON keeps of it)."""
    if isinstance(value, dict):
        return tuple((k, _items(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_items(v) for v in value)
    return value


def _eviction(e) -> tuple:
    """An eviction's record as the JSON document has it (accepting domains in order)."""
    return (e.namespace, e.name, e.node, e.workload, e.replaced, e.predicted_node,
            tuple((k, tuple(v)) for k, v in e.accepting_domains.items()), tuple(e.pdbs), e.warning)


def _judgement(c) -> tuple:
    d = c.distribution
    extremes = getattr(d, "extremes", None)  # what a table row shows of a hostname spread
    return (c.workload, c.namespace, c.topology_key, c.max_skew, c.when_unsatisfiable, tuple(d.items()),
            c.global_min, c.skew, c.limit, c.status,
            (extremes() if extremes is not None else (min(d.values()), max(d.values()))) if len(d) else None)


def planner_verdict(plan) -> tuple[bool, set[tuple[str, str | None]]]:
    """The planner's answer to what LeanSearch.verdict answers."""
    return plan.safe, {(f.code, f.workload) for f in plan.findings if f.severity != INFO}


def _first_difference(here, planner) -> str:
    """Where two values first differ, said briefly."""
    if isinstance(here, tuple) and isinstance(planner, tuple):
        for k, (a, b) in enumerate(zip(here, planner)):
            if a != b:
                return f"#{k + 1} of {len(here)}: {a!r} here, the planner's {b!r}"
        if len(here) != len(planner):
            return f"{len(here)} here, the planner's {len(planner)}"
    return f"{here!r} here, the planner's {planner!r}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="small", choices=("tiny", "small", "large"))
    ap.add_argument("--cache-dir", default="bench-out")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--delete-drained-nodes", action="store_true",
                       help="plan the remedy re-plan that deletes each drained node once it is empty")
    ap.add_argument("--report", action="store_true",
                    help="have the lean search keep the whole report (each step's evictions, constraints, PDBs "
                         "and skipped pods, the stranded pods' details, the settled pods) and compare the "
                         "DrainPlan it makes with the planner's (not with --delete-drained-nodes)")
    which.add_argument("--honor-taints", action="store_true",
                       help="plan the remedy re-plan that sets nodeTaintsPolicy Honor on the constraints of the "
                            "plan's first stranded workload (found by planning the zone first, untimed)")
    args = ap.parse_args(argv)
    if args.report and args.delete_drained_nodes:
        ap.error("--report covers plans that keep the drained nodes (the lean search refuses the other)")
    snapshot = load(args.size, args.cache_dir)
    targets = resolve_targets(snapshot, (), None, (ZONE_KEY, ZONE))
    options = plan_options(snapshot, targets, args.delete_drained_nodes)
    if args.honor_taints:
        snapshot, options = honor_replan(snapshot, targets, options)
    gc.collect()
    gc.disable()  # as the tool plans (gcpause)
    try:
        began = time.perf_counter()
        plan = planner_plan(snapshot, targets, options)
        planner = time.perf_counter() - began
        proof = forced_proof(snapshot, targets, options)  # the planner's, before the timing
        began = time.perf_counter()
        try:
            lean = LeanSearch(snapshot, targets, options, forced=bool(proof), report=args.report)
        except Unsupported as e:
            print(f"error: the lean search does not cover this plan: {e}", file=sys.stderr)
            return 1
        built = time.perf_counter() - began
        began = time.perf_counter()
        found = lean.run()
        took = time.perf_counter() - began
    finally:
        gc.enable()
    what = ("the re-plan that deletes the drained nodes" if args.delete_drained_nodes else
            "the re-plan under nodeTaintsPolicy Honor" if args.honor_taints else "the plan")
    print(f"{args.size} cluster, {ZONE} of {len(targets)} nodes, {what}: {len(plan.steps)} steps, "
          f"{plan.explored} candidates simulated, {len(plan.stranded)} stranded")
    print(f"planner: {planner:.2f} s (its context and report objects included); lean search: {built + took:.2f} s, "
          f"{built:.2f} s building its arrays and context and {took:.2f} s searching (safe order found: {found}; "
          f"{len(lean.stranded)} stranded, besides the pods a PDB blocks from the start)")
    differences = compare(lean, plan)
    if args.report:
        differences += compare_plan(lean, found, plan)
    mine, theirs = lean.verdict(found), planner_verdict(plan)
    print(f"verdict: safe {mine[0]}, {len(mine[1])} findings (code and workload) here; safe {theirs[0]}, "
          f"{len(theirs[1])} the planner's" + ("" if mine == theirs else ": they differ"))
    if mine != theirs:
        differences.append(f"findings only here: {sorted(mine[1] - theirs[1], key=str)[:3]}, only the planner's: "
                           f"{sorted(theirs[1] - mine[1], key=str)[:3]}")
    for line in differences:
        print(line)
    print(f"steps that differ: {'none' if not differences else 'see above'}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
