"""The `drain-safe` command: flags → snapshot → plan_drain → render (→ execute with --execute)."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import sys

import click

from kubectl_tspread.cli.completion import complete_node
from kubectl_tspread.model.errors import EXIT_FOUND, EXIT_OK, UsageError
from kubectl_tspread.cli.options import debug_option, output_options, parse_duration, source_options

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EPILOG = """\b
Examples:
  # Plan the drain of two nodes: steps, where each pod goes, skew after each step
  kubectl tspread drain-safe node-a1 node-a2 --ignore-daemonsets
  # Every node of a zone, two nodes per step, as JSON; exit 3 when no safe order exists
  kubectl tspread drain-safe --domain topology.kubernetes.io/zone=us-east-2a --max-parallel 2 -o json
  # Offline, from a dump holding every kind the plan reads
  kubectl tspread dump -A > cluster.json
  kubectl tspread drain-safe -l pool=old --from-file cluster.json
"""


def parse_domain(ctx, param, value):
    if value is None:
        return None
    key, sep, val = value.partition("=")
    if not sep or not key or not val:
        raise click.BadParameter(f"{value!r} is not KEY=VALUE, e.g. topology.kubernetes.io/zone=us-east-2a")
    return key, val


@click.command("drain-safe", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("nodes", nargs=-1, metavar="[NODE]...", shell_complete=complete_node)
@click.option("-l", "--selector", "selector", metavar="SELECTOR", help="Drain the nodes matching this label selector.")
@click.option("--domain", callback=parse_domain, metavar="KEY=VALUE",
              help="Drain every node labelled KEY=VALUE (e.g. a zone).")
@click.option("--ignore-daemonsets", is_flag=True, help="Leave DaemonSet-managed pods in place (kubectl drain's flag).")
@click.option("--force", is_flag=True, help="Also evict pods without a controller (nothing recreates them).")
@click.option("--delete-emptydir-data", is_flag=True, help="Also evict pods with emptyDir volumes (their data is lost).")
@click.option("--max-parallel", type=click.IntRange(min=1), default=1, show_default=True,
              help="At most this many nodes per step.")
@click.option("--stage-cordons", is_flag=True,
              help="Cordon each step's nodes just before its evictions, not every node before the first "
                   "(replacements may then land on nodes drained later and move twice).")
@click.option("--execute", is_flag=True, help="Carry the plan out: cordon, evict through the Eviction API, wait.")
@click.option("--yes", is_flag=True, help="With --execute: do not ask for confirmation.")
@click.option("--dry-run", "dry_run", type=click.Choice(("none", "server")), default="none", show_default=True,
              help="With --execute: server sends evictions with dryRun=All (PDBs checked, nothing changes).")
@click.option("--timeout", callback=parse_duration, default="5m", show_default=True, metavar="DURATION",
              help="With --execute: how long each step may take (evictions and replacements Ready).")
@click.option("--log", "log_file", metavar="FILE", help="With --execute: append every action as a JSON line.")
@source_options
@output_options
@debug_option
def drain_safe(nodes, selector, domain, ignore_daemonsets, force, delete_emptydir_data, max_parallel, stage_cordons,
               execute, yes, dry_run, timeout, log_file, source, out):
    """Plan a drain that never pushes a topology spread constraint past maxSkew.

    Pods follow kubectl drain's rules (DaemonSet pods need --ignore-daemonsets and stay,
    mirror pods are skipped, pods without a controller need --force, emptyDir pods need
    --delete-emptydir-data). Like kubectl drain, step 1 cordons every node to drain before
    the first eviction, so no replacement lands on a node drained later (--stage-cordons
    cordons each step's nodes with it instead). The drain is played step by step on a copy
    of the cluster: evict, place every replacement as the scheduler would; the order and size
    of steps are chosen so that no DoNotSchedule constraint ends a step above maxSkew,
    every replacement has a node and no PDB is asked for more than it allows. When no
    such order exists the traps are named, with remedies verified on the simulation.

    \b
    Verdicts: SAFE (no DoNotSchedule constraint of a moved workload ends a step
    past maxSkew or worse than before the drain; every replacement has a node;
    no PDB asked for more than it allows; a constraint already VIOLATED before
    is named with its skew before and after) or UNSAFE (no such order found).
    STATUS after each step: OK (skew below maxSkew), AT LIMIT (skew equals
    maxSkew), VIOLATED (DoNotSchedule above maxSkew, but no worse than before
    the drain), DRIFTED (ScheduleAnyway above maxSkew: it only scores), OVER
    LIMIT (DoNotSchedule above maxSkew and above its skew before the drain:
    the step is unsafe). TO: the node the replacement goes to, <stranded> (no
    node takes it) or <deleted, not replaced> (no controller recreates it).

    On a terminal, a transient line on stderr shows what is under way while it plans.
    Exit 0 when the plan is safe, 3 when it is not, 1 on error. Read-only unless --execute.
    """
    from kubectl_tspread.model.plan import DRAIN_KINDS, PlanOptions
    from kubectl_tspread.views.drain.plan import plan_drain, resolve_targets
    from kubectl_tspread.views.drain.pods import DrainFlags
    from kubectl_tspread.cli.progress import READING, PlanStatus
    from kubectl_tspread.views.drain.remedy_effects import with_rerun_hints
    from kubectl_tspread.cli.gcpause import load_quietly, no_cyclic_gc, plan_quietly
    from kubectl_tspread.cli.workers import forks, page_helpers
    from kubectl_tspread.model.labels import Selector
    from kubectl_tspread.cli.inputs import warn_missing_kinds
    from kubectl_tspread.snapshot import load_snapshot

    if not execute and (yes or dry_run != "none" or log_file):
        raise UsageError("--yes, --dry-run and --log only apply with --execute")
    if execute and (source.demo or source.from_file):
        # the writes would go to the kubeconfig's cluster after showing a plan made from other data
        raise UsageError("--execute drains the cluster of your kubeconfig, so it plans from that cluster too: "
                         "drop --demo/--from-file (run without --execute to plan offline)")
    sel = Selector.parse(selector) if selector is not None else None
    if not nodes and sel is None and domain is None:
        raise UsageError("name the nodes to drain: NODE..., -l SELECTOR or --domain KEY=VALUE")
    # a node holds pods of every namespace: the plan always reads them all
    src = dataclasses.replace(source, all_namespaces=True)
    options = PlanOptions(DrainFlags(ignore_daemonsets, force, delete_emptydir_data), max_parallel=max_parallel,
                          stage_cordons=stage_cordons)
    # with --execute, SIGTERM is Ctrl-C from the first read on (kill, a CI job's cancel): a clean
    # `error:` exit 130 before any change, the state block once the drain has begun
    if execute:
        from kubectl_tspread.cli.execute import sigterm_as_interrupt
        guard = sigterm_as_interrupt()
    else:
        guard = contextlib.nullcontext()
    # on a terminal, a transient line on stderr says what is under way until the plan is printed
    with guard, PlanStatus(color=out.color) as status:
        status.show(READING)
        watch = status if status.interactive else None  # off a terminal the planner is told nothing
        snap = load_quietly(load_snapshot, src, DRAIN_KINDS, page_helpers=page_helpers())
        missing = tuple(warn_missing_kinds(snap, "drain-safe"))
        targets = resolve_targets(snap, nodes, sel, domain)
        if execute:
            from kubectl_tspread.cli.execute import execute as run_drain

            plan = dataclasses.replace(
                with_rerun_hints(plan_quietly(plan_drain, snap, targets, options, watch, workers=forks()),
                                 snap, sel, domain),
                missing_kinds=missing)
            status.close()
            return run_drain(snap, targets, options, out, source=src, yes=yes, dry_run=dry_run, timeout=timeout,
                             log_file=log_file, plan=plan)
        # the collector stays off through the output too: the plan's millions of objects would
        # otherwise all be walked by the first collection its rendering triggers, and the
        # process ends right after
        with no_cyclic_gc():
            early = _EarlyBody(out)
            plan = dataclasses.replace(
                with_rerun_hints(plan_drain(snap, targets, options, watch, before_remedies=early, workers=forks()),
                                 snap, sel, domain),
                missing_kinds=missing)
            status.close()
            render_plan(plan, out, early.text_for(plan))
            # and frozen before it is back, as the snapshot is once loaded: the collection that
            # turning it on sets off would walk them all anyway
            gc.freeze()
    return EXIT_OK if plan.safe else EXIT_FOUND


def render_plan(plan, out, body: str | None = None) -> None:
    """Write the plan as `out` asks, whole or not at all; `body`: the table's plan_body_text
    for it, made earlier."""
    from kubectl_tspread.cli.output import whole_answer

    with whole_answer():
        _write_plan(plan, out, body)


def _write_plan(plan, out, body: str | None = None) -> None:
    from kubectl_tspread.render import structured
    from kubectl_tspread.render.drain import drain_plan_view, plan_body_text, plan_findings_text

    if out.structured:
        for piece in structured.pieces(drain_plan_view(plan), out.output):
            click.echo(piece, nl=False)
        return
    if body is None:
        body = plan_body_text(plan, wide=out.wide, no_headers=out.no_headers, fit=_fit(out),
                              color=_color(out))
    sys.stdout.write(body)  # apart: a large drain's body joined to its findings is one more copy of it
    sys.stdout.write(plan_findings_text(plan))


def _fit(out) -> int | None:
    """The width default tables fit (COLUMNS, the terminal, else 120); -o wide is unbounded."""
    from kubectl_tspread.cli.terminal import fit_width

    return None if out.wide else fit_width(sys.stdout)


def _color(out) -> bool:
    from kubectl_tspread.cli.terminal import use_color

    return use_color(out.color, sys.stdout)


class _EarlyBody:
    """drain-safe's table up to the findings, rendered while the remedies' re-plans run on the
    other cores: plan_drain hands the plan over before it attaches the remedies, which change
    only the findings. A whole zone's body (its steps, constraints and stranded pods) would
    otherwise be made after the last re-plan came back, the parent's core idle until then.
    Its text, colored or not, depends on nothing but the plan and the options (render
    returns it; no line of it wraps at the terminal's width)."""

    def __init__(self, out):
        self.out, self.plan, self.text = out, None, None

    def __call__(self, plan) -> None:
        from kubectl_tspread.render.drain import plan_body_text

        if self.out.structured:
            return
        self.plan = plan
        self.text = plan_body_text(plan, wide=self.out.wide, no_headers=self.out.no_headers, fit=_fit(self.out),
                                   color=_color(self.out))

    def text_for(self, plan) -> str | None:
        """The body made for `plan`, or None when it was made for another or not at all: for
        `plan` is the plan handed over with other findings, every other field the same object."""
        made = self.plan
        if made is None or any(getattr(made, f.name) is not getattr(plan, f.name)
                               for f in dataclasses.fields(plan) if f.name != "findings"):
            return None
        return self.text


def register(cli) -> None:
    cli.add_command(drain_safe)
