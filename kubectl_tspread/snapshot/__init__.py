"""Where a Snapshot comes from: the built-in demo, dump files, or the live API.

Each source is imported only when used: the live path pulls in `kubernetes`, which
`--help`, `--demo` and `--from-file` never need.
"""

from __future__ import annotations

import sys
from typing import IO, Iterable

from kubectl_tspread.errors import UsageError
from kubectl_tspread.model import Snapshot

# what `distribution` needs; why-pending and drain-safe ask for more
DISTRIBUTION_KINDS = ("Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
                      "ReplicationController", "Service")


def load_snapshot(source, kinds: Iterable[str] = DISTRIBUTION_KINDS, warn: IO[str] | None = None) -> Snapshot:
    """`source` is an options.SourceOptions. What a source could not read (an optional kind the
    user's RBAC hides) is said on stderr as `warning: …`, like kubectl, and the command goes on."""
    snap = _load(source, kinds)
    stream = sys.stderr if warn is None else warn
    for w in snap.warnings:
        stream.write(f"warning: {w}\n")
    return snap


def _load(source, kinds: Iterable[str]) -> Snapshot:
    if source.demo and source.from_file:
        raise UsageError("--demo and --from-file cannot be used together; pick one source")
    if source.demo:
        from kubectl_tspread.snapshot.demo import load_demo

        return load_demo(namespace=source.namespace, all_namespaces=source.all_namespaces)
    if source.from_file:
        from kubectl_tspread.snapshot.files import load_files

        return load_files(list(source.from_file), namespace=source.namespace,
                          all_namespaces=source.all_namespaces)
    from kubectl_tspread.snapshot.live import RetryPolicy, load_live

    return load_live(source.kube_options(), kinds, retry=RetryPolicy(attempts=1) if source.fail_fast else None)
