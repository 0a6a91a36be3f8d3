"""Thin click commands: parse flags, build a snapshot, call one domain verb, render, map errors.

Heavy modules (rich, kubernetes, the engine) are imported inside commands so that
`kubectl tspread --help` stays as quick as kubectl.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import click

from kubectl_tspread import __version__
from kubectl_tspread.cli.completion import complete_target
from kubectl_tspread.cli.inputs import warn_missing_kinds
from kubectl_tspread.model.errors import EXIT_ERROR, EXIT_FOUND, EXIT_OK, TspreadError, UsageError
from kubectl_tspread.cli.options import debug_option, output_options, source_options
from kubectl_tspread.model.statuses import status_help

PROG = "kubectl tspread"
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


EXIT_ABORTED = 130  # Ctrl-C and SIGTERM alike: 128 + SIGINT, as a shell reports a Ctrl-C


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2: `kubectl tspread` alone


class Aborted(TspreadError):
    """Ctrl-C or SIGTERM at any phase of any command: `error: aborted`, exit 130."""

    exit_code = EXIT_ABORTED


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that it takes Ctrl-C's path (`finally` blocks run,
    forked planners and exec plugins are stopped) instead of ending the process silently."""


class _Group(click.Group):
    def invoke(self, ctx):
        # caught here, not by click: click turns it into Abort after printing an empty line
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Aborted("aborted") from None


@click.group(context_settings=CONTEXT, cls=_Group)
@click.version_option(__version__, "--version", prog_name="kubectl-tspread", message="%(prog)s %(version)s")
def cli():
    """Make topology spread constraints visible and safe to operate.

    Every number is the one kube-scheduler's PodTopologySpread plugin computes on the
    same cluster state: domains (zero-pod ones included), global minimum, skew, headroom.

    \b
    Commands read the cluster through kubeconfig like kubectl, or offline from
    dumps (--from-file; `kubectl tspread dump -A > cluster.json` writes every kind
    they read), or from a built-in demo (--demo). When the input lacks a kind an answer
    depends on, a `warning:` line says what was not checked.
    """


@cli.command(context_settings=CONTEXT, epilog="""\b
Examples:
  # Every workload with spread constraints in the current namespace, worst first
  kubectl tspread distribution
  # One deployment in detail, with the order its pods were placed in
  kubectl tspread distribution deploy/checkout -n shop --timeline
  # All namespaces as JSON; exit 3 when a DoNotSchedule constraint is over maxSkew
  kubectl tspread distribution -A -o json --exit-code
  # Offline, from a dump of every kind the commands read
  kubectl tspread dump -A > cluster.json
  kubectl tspread distribution -A --from-file cluster.json

\b
Status words:
""" + status_help() + "\n")
@click.argument("target", required=False, metavar="[TYPE/NAME]", shell_complete=complete_target)
@click.option("-l", "--selector", "selector", metavar="SELECTOR",
              help="Only pods matching this label selector (kubectl syntax: a=b,c!=d,e in (x,y),!f).")
@click.option("--timeline", is_flag=True,
              help="Also replay the pods that exist now in creation order, with running counts and skew "
                   "per constraint; a DoNotSchedule row over maxSkew is marked as not a scheduler placement.")
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

    PENDING counts each workload's pods waiting for the scheduler. HEADROOM is what a
    domain accepts now: spread's headroom, or 0 when cordons or untolerated taints refuse
    every node of it (marked cordoned / tainted in the summary).

    Status words, worst first in the summary (DoNotSchedule before ScheduleAnyway at
    equal status), are listed below.
    """
    from kubectl_tspread.views.distribution import compute_distribution
    from kubectl_tspread.engine.index import ClusterIndex
    from kubectl_tspread.model.labels import Selector
    from kubectl_tspread.cli.gcpause import load_quietly
    from kubectl_tspread.cli.workers import page_helpers
    from kubectl_tspread.snapshot import load_snapshot
    from kubectl_tspread.views.targets import parse_target, resolve

    tgt = parse_target(target) if target else None
    sel = Selector.parse(selector) if selector is not None else None
    if tgt is not None and sel is not None:
        raise UsageError("give either TYPE/NAME or -l/--selector, not both")
    snap = load_quietly(load_snapshot, source, page_helpers=page_helpers())
    missing = warn_missing_kinds(snap, "distribution")
    index = ClusterIndex(snap)
    namespace = None if source.all_namespaces else snap.namespace
    groups = resolve(index, namespace, tgt, sel)
    report = compute_distribution(index, groups, with_timeline=timeline, namespace=namespace)
    _render_distribution(report, out, detail=tgt is not None or timeline, missing=missing)
    return EXIT_FOUND if exit_code and report.violated else EXIT_OK


def _render_distribution(report, out, detail: bool, missing=()) -> None:
    from kubectl_tspread.cli.output import whole_answer

    with whole_answer():
        _write_distribution(report, out, detail, missing)


def _write_distribution(report, out, detail: bool, missing=()) -> None:
    from kubectl_tspread.render import structured

    if out.structured:
        for piece in structured.pieces(structured.distribution_view(report, missing), out.output):
            click.echo(piece, nl=False)
        return
    from kubectl_tspread.cli.terminal import Screen
    from kubectl_tspread.render import table

    screen = Screen(out, sys.stdout)  # -o wide fits nothing: everything, unbounded
    if detail:
        if not report.workloads:
            click.echo("No topology spread constraints apply to the selected pods.")
            return
        text = table.detail_text(report, wide=out.wide, no_headers=out.no_headers, fit=screen.fit,
                                 color=screen.color, width=screen.width)
    else:
        text = table.summary_text(report, wide=out.wide, no_headers=out.no_headers, fit=screen.fit,
                                  color=screen.color)
    sys.stdout.write(text)


def _register_commands() -> None:
    """why-pending, drain-safe, dump and completion live in their own modules, each with register(cli)."""
    from kubectl_tspread.cli import completion as cli_completion, drain as cli_drain, dump as cli_dump, pending as cli_pending

    for mod in (cli_pending, cli_drain, cli_dump, cli_completion):
        mod.register(cli)


_register_commands()


def _debug_requested(argv) -> bool:
    return any(a in ("-v", "--debug") for a in argv)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one `error:` line on stderr, never a traceback unless -v."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with _sigterm_as_interrupt():
        try:
            rv = cli.main(args=argv, prog_name=PROG, standalone_mode=False)
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("error: aborted", err=True)
            sys.exit(EXIT_ABORTED)
        except _NO_ARGS as e:
            e.show()  # `kubectl tspread` alone: the help, as before
            sys.exit(e.exit_code)
        except click.exceptions.UsageError as e:
            click.echo(f"error: {usage_error_line(e)}", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            click.echo(f"error: {_one_line(e.format_message())}", err=True)
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


def usage_error_line(e: click.exceptions.UsageError) -> str:
    """click's `Usage: …` / `Try …` / `Error: …` as kubectl's one line, pointing at the help:
    `no such option: --bogus (see 'kubectl tspread distribution --help')`."""
    message = _one_line(e.format_message()).rstrip(".")
    message = message[:1].lower() + message[1:]
    path = e.ctx.command_path if e.ctx is not None else PROG
    return f"{message} (see '{path} --help')"


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


class _sigterm_as_interrupt:
    """SIGTERM raises Terminated (a KeyboardInterrupt) in the main thread for the whole run, so
    that every phase — reading, planning, rendering — stops as a Ctrl-C does; the previous
    handler is back afterwards (main() also runs inside tests)."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGTERM, _raise_terminated)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)
        return False


def _raise_terminated(signum, frame):
    raise Terminated()


def console_main() -> None:
    """The `kubectl-tspread` program: `main()`, then leave without tearing down the heap.
    On a big cluster the snapshot and a drain's simulation are millions of objects, and
    freeing them one by one at exit would keep the user waiting after the answer is printed.
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
    from kubectl_tspread.cli.completion import kubectl_complete

    sys.exit(kubectl_complete(cli, list(sys.argv[1:] if argv is None else argv)))
