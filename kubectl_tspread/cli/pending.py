"""The `why-pending` command: thin, like every command (flags → snapshot → explain_pods → render)."""

from __future__ import annotations

import sys

import click

from kubectl_tspread.cli.completion import complete_pod
from kubectl_tspread.cli.inputs import warn_missing_kinds
from kubectl_tspread.model.errors import EXIT_FOUND, EXIT_OK, UsageError
from kubectl_tspread.cli.options import debug_option, output_options, source_options

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# what the filters read: workloads and Services for the default constraints, volumes for
# VolumeBinding/VolumeZone, events for the live message, PDBs for eviction fixes
PENDING_KINDS = ("Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
                 "ReplicationController", "Job", "Service", "PersistentVolume", "PersistentVolumeClaim",
                 "StorageClass", "Event", "PodDisruptionBudget")

EPILOG = """\b
Examples:
  # Every Pending pod in the current namespace: which filter refuses which node, and fixes
  kubectl tspread why-pending
  # One pod, with the per-node table of every failing filter
  kubectl tspread why-pending pod/search-5d8f7-x2x -n shop -o wide
  # All namespaces as JSON; exit 3 when some pod fits no node
  kubectl tspread why-pending -A -o json --exit-code
  # Offline, from a dump of every kind the commands read (events and volumes included)
  kubectl tspread dump -A > cluster.json
  kubectl tspread why-pending -A --from-file cluster.json
"""


@click.command("why-pending", context_settings=CONTEXT, epilog=EPILOG)
@click.argument("target", required=False, metavar="[pod/NAME | NAME]", shell_complete=complete_pod)
@click.option("-l", "--selector", "selector", metavar="SELECTOR",
              help="Only Pending pods matching this label selector (kubectl syntax: a=b,c!=d,e in (x,y),!f).")
@click.option("--exit-code", "exit_code", is_flag=True,
              help="Exit 3 when any examined pod cannot be scheduled on any node.")
@click.option("--no-fixes", "no_fixes", is_flag=True,
              help="Skip the search for fixes (each candidate re-runs every filter on a changed copy).")
@source_options
@output_options
@debug_option
def why_pending(target, selector, exit_code, no_fixes, source, out):
    """Why a Pending pod is not scheduled, as kube-scheduler decides it, and what would fix it.

    Every node goes through the scheduler's filters in the scheduler's order, each filter
    on its own; the first failure per node is what the scheduler reports, and the
    message is rebuilt from them beside the live one (PodScheduled condition, else the
    latest FailedScheduling event). For each DoNotSchedule spread constraint the report
    shows the skew the pod would create in every domain and which allowed domains still
    have nodes that pass every other filter. The answer comes first, from the most
    decisive blocker (one that refuses every node on its own, such as an unmatched node
    affinity term or a request above every node's allocatable, before the others).

    Fixes are listed only when applying them to a copy of the snapshot makes the pod fit
    somewhere (verifies: PodFits): first those that change no running pod, then template
    edits (they roll every pod of the workload), then destructive ones (deleting Node
    objects that still hold pods or volumes, evicting pods), each with its side effects.

    Without a target, every Pending pod not yet bound to a node in the namespace (-A:
    all namespaces). A named pod that is not Pending gets a one-line answer.
    """
    from kubectl_tspread.engine.index import ClusterIndex
    from kubectl_tspread.model.labels import Selector
    from kubectl_tspread.views.pending import explain_pods
    from kubectl_tspread.cli.gcpause import load_quietly
    from kubectl_tspread.cli.workers import page_helpers
    from kubectl_tspread.snapshot import load_snapshot

    if target is not None and selector is not None:
        raise UsageError("give either pod/NAME or -l/--selector, not both")
    sel = Selector.parse(selector) if selector is not None else None
    snap = load_quietly(load_snapshot, source, kinds=PENDING_KINDS, cluster_wide=True, page_helpers=page_helpers())
    missing = warn_missing_kinds(snap, "why-pending")
    index = ClusterIndex(snap)
    namespace = None if source.all_namespaces else snap.namespace
    pods = select_pods(index, namespace, target, sel)
    reports = explain_pods(index, pods, with_fixes=not no_fixes, namespace=namespace)
    _render(reports, out, missing)
    return EXIT_FOUND if exit_code and reports.any_unschedulable else EXIT_OK


def select_pods(index, namespace, target, selector):
    """The named pod (any phase), else the Pending unbound pods in scope, by namespace and name."""
    from kubectl_tspread.views.targets import parse_target, resolve

    if target is not None:
        tgt = parse_target(target, allowed=("Pod",), bare_kind="Pod")
        return resolve(index, namespace, tgt)[0].pods
    scope = (index.snapshot.pods if namespace is None
             else [p for p in index.snapshot.pods if p.namespace == namespace])
    pods = [p for p in scope if p.pending and (selector is None or selector.matches(p.labels))]
    return sorted(pods, key=lambda p: (p.namespace, p.name))


def _render(reports, out, missing=()) -> None:
    from kubectl_tspread.cli.output import whole_answer

    with whole_answer():
        _write(reports, out, missing)


def _write(reports, out, missing=()) -> None:
    from kubectl_tspread.render import pending as view

    if out.structured:
        from kubectl_tspread.render.structured import pieces

        for piece in pieces(view.pending_view(reports, missing), out.output):
            click.echo(piece, nl=False)
        return
    if not reports.reports and not reports.not_pending:
        where = "any namespace" if reports.namespace is None else f'namespace "{reports.namespace}"'
        click.echo(f"No Pending pods in {where}: nothing is waiting for the scheduler.")
        return
    from kubectl_tspread.cli.terminal import Screen

    screen = Screen(out, sys.stdout)
    sys.stdout.write(view.reports_text(reports, wide=out.wide, no_headers=out.no_headers, fit=screen.fit,
                                       color=screen.color, width=screen.width))


def register(cli) -> None:
    cli.add_command(why_pending)
