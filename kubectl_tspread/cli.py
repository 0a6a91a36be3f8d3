"""Thin click commands: parse flags, build a snapshot, call one domain verb, render, map errors.

Heavy modules (rich, kubernetes, the engine) are imported inside commands so that
`kubectl tspread --help` stays as quick as kubectl.
"""

from __future__ import annotations

import os
import sys

import click

from kubectl_tspread import __version__
from kubectl_tspread.cli_completion import complete_target
from kubectl_tspread.errors import EXIT_ERROR, EXIT_FOUND, EXIT_OK, TspreadError, UsageError
from kubectl_tspread.options import debug_option, output_options, source_options

PROG = "kubectl tspread"
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="kubectl-tspread", message="%(prog)s %(version)s")
def cli():
    """Make topology spread constraints visible and safe to operate.

    Every number is the one kube-scheduler's PodTopologySpread plugin computes on the
    same cluster state: domains (zero-pod ones included), global minimum, skew, headroom.

    \b
    Commands read the cluster through kubeconfig like kubectl, or offline from
    `kubectl get … -o json` dumps (--from-file), or from a built-in demo (--demo).
    """


@cli.command(context_settings=CONTEXT, epilog="""\b
Examples:
  # Every workload with spread constraints in the current namespace, worst first
  kubectl tspread distribution
  # One deployment in detail, with the order its pods were placed in
  kubectl tspread distribution deploy/checkout -n shop --timeline
  # All namespaces as JSON; exit 3 when a DoNotSchedule constraint is over maxSkew
  kubectl tspread distribution -A -o json --exit-code
  # Offline, from dumps
  kubectl get nodes,pods,rs,deploy -A -o json > cluster.json
  kubectl tspread distribution -A --from-file cluster.json
""")
@click.argument("target", required=False, metavar="[TYPE/NAME]", shell_complete=complete_target)
@click.option("-l", "--selector", "selector", metavar="SELECTOR",
              help="Only pods matching this label selector (kubectl syntax: a=b,c!=d,e in (x,y),!f).")
@click.option("--timeline", is_flag=True, help="Also show the pods in creation order with running counts and skew.")
@click.option("--exit-code", "exit_code", is_flag=True,
              help="Exit 3 when any DoNotSchedule constraint is VIOLATED (skew above maxSkew).")
@source_options
@output_options
@debug_option
def distribution(target, selector, timeline, exit_code, source, out):
    """Per-domain pod counts, global minimum, skew and headroom of each spread constraint.

    TYPE/NAME is deployment/NAME, statefulset/NAME, replicaset/NAME, daemonset/NAME or
    pod/NAME (short forms deploy/, sts/, rs/, ds/, po/). Without one, every workload
    in the namespace whose pods carry spread constraints (explicit, or the scheduler's
    implicit defaults) gets one summary row per constraint.

    Verdicts: OK; AT LIMIT (skew equals maxSkew); VIOLATED (DoNotSchedule above maxSkew:
    possible after scale-down or node loss, the scheduler only enforces at placement);
    DRIFTED (ScheduleAnyway above maxSkew).
    """
    from kubectl_tspread.distribution import compute_distribution
    from kubectl_tspread.engine.index import ClusterIndex
    from kubectl_tspread.labels import Selector
    from kubectl_tspread.snapshot import load_snapshot
    from kubectl_tspread.targets import parse_target, resolve

    tgt = parse_target(target) if target else None
    sel = Selector.parse(selector) if selector is not None else None
    if tgt is not None and sel is not None:
        raise UsageError("give either TYPE/NAME or -l/--selector, not both")
    snap = load_snapshot(source)
    index = ClusterIndex(snap)
    namespace = None if source.all_namespaces else snap.namespace
    groups = resolve(index, namespace, tgt, sel)
    report = compute_distribution(index, groups, with_timeline=timeline, namespace=namespace)
    _render_distribution(report, out, detail=tgt is not None or timeline)
    return EXIT_FOUND if exit_code and report.violated else EXIT_OK


def _render_distribution(report, out, detail: bool) -> None:
    from kubectl_tspread.cli_output import whole_answer

    with whole_answer():
        _write_distribution(report, out, detail)


def _write_distribution(report, out, detail: bool) -> None:
    from kubectl_tspread.render import structured
    from kubectl_tspread.render.console import make_console

    if out.structured:
        structured.write(structured.distribution_view(report), out.output, lambda text: click.echo(text, nl=False))
        return
    from kubectl_tspread.render import table

    console = make_console(out.color)
    if detail:
        if not report.workloads:
            click.echo("No topology spread constraints apply to the selected pods.")
            return
        table.print_detail(console, report, wide=out.wide, no_headers=out.no_headers)
    else:
        table.print_summary(console, report, wide=out.wide, no_headers=out.no_headers)


def _register_commands() -> None:
    """why-pending, drain-safe and completion live in their own modules, each with register(cli)."""
    from kubectl_tspread import cli_completion, cli_drain, cli_pending

    for mod in (cli_pending, cli_drain, cli_completion):
        mod.register(cli)


_register_commands()


def _debug_requested(argv) -> bool:
    return any(a in ("-v", "--debug") for a in argv)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one `error:` line on stderr, never a traceback unless -v."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = cli.main(args=argv, prog_name=PROG, standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except TspreadError as e:
        if _debug_requested(argv):
            import traceback

            traceback.print_exc()
        click.echo(f"error: {e.message}", err=True)
        sys.exit(e.exit_code)
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        if _debug_requested(argv):
            import traceback

            traceback.print_exc()
        click.echo(f"error: unexpected {type(e).__name__}: {e} (rerun with -v for the traceback "
                   f"and report it as a bug)", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)


def console_main() -> None:
    """The `kubectl-tspread` program: `main()`, then leave without tearing down the heap.
    On a big cluster the snapshot and a drain's simulation are millions of objects, and
    freeing them one by one at exit costs about a second after the answer is printed.
    Nothing is lost by skipping it: every file is closed and every child reaped inside
    `main`, and the output is flushed here (a failed flush exits 120, as Python does)."""
    try:
        main()
        code: object = EXIT_OK
    except SystemExit as e:
        code = e.code
    if code is None:
        code = EXIT_OK
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = EXIT_ERROR
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = 120
    os._exit(code)


def complete_main(argv: list[str] | None = None) -> None:
    """kubectl ≥ 1.26 runs `kubectl_complete-tspread` for `kubectl tspread <TAB>`."""
    from kubectl_tspread.cli_completion import kubectl_complete

    sys.exit(kubectl_complete(cli, list(sys.argv[1:] if argv is None else argv)))
