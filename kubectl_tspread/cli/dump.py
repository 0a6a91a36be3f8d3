"""The `dump` command: one List of every kind the other commands read, for --from-file."""

from __future__ import annotations

import click

from kubectl_tspread.model.errors import EXIT_OK
from kubectl_tspread.cli.options import debug_option, source_options

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EPILOG = """\b
Examples:
  # Every namespace, for any command offline
  kubectl tspread dump -A > cluster.json
  kubectl tspread distribution -A --from-file cluster.json
  kubectl tspread why-pending -A --from-file cluster.json
  kubectl tspread drain-safe node-a3 --from-file cluster.json
  # One namespace as YAML
  kubectl tspread dump -n shop -o yaml > shop.yaml
"""


@click.command("dump", context_settings=CONTEXT, epilog=EPILOG)
@click.option("-o", "--output", type=click.Choice(("json", "yaml")), default="json", show_default=True,
              help="Output format.")
@source_options
@debug_option
def dump(output, source):
    """Write one v1 List with every object the commands read, for --from-file.

    The kinds are exactly those distribution, why-pending and drain-safe read: Nodes, Pods
    (not finished ones), Deployments, ReplicaSets, StatefulSets, DaemonSets,
    ReplicationControllers, Jobs, Services, PodDisruptionBudgets, PersistentVolumes,
    PersistentVolumeClaims, StorageClasses and Pod Events. A kind your RBAC hides (events,
    PVs, storage classes) is skipped with a warning on stderr; the commands then say what
    they could not check. Reads like every command: the live cluster, --from-file or --demo,
    -n or -A (Nodes, PVs and StorageClasses are cluster-wide).
    """
    from kubectl_tspread.render.structured import _json_text, _yaml_text
    from kubectl_tspread.snapshot.dump import dump_objects

    doc, warnings = dump_objects(source)
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    from kubectl_tspread.cli.output import whole_answer

    text = _json_text(doc) + "\n" if output == "json" else _yaml_text(doc)
    with whole_answer():  # text stdout cannot encode is escaped, as for every document
        click.echo(text, nl=False)
    return EXIT_OK


def register(cli) -> None:
    cli.add_command(dump)
