"""Where a Snapshot comes from: the built-in demo, dump files, or the live API.

Each source is imported only when used: the live path pulls in `kubernetes`, which
`--help`, `--demo` and `--from-file` never need.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import IO, Iterable

from kubectl_tspread.engine import podrequests, versions
from kubectl_tspread.model.errors import UsageError
from kubectl_tspread.model import Snapshot

# what `distribution` needs; why-pending and drain-safe ask for more
DISTRIBUTION_KINDS = ("Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
                      "ReplicationController", "Service")


def load_snapshot(source, kinds: Iterable[str] = DISTRIBUTION_KINDS, warn: IO[str] | None = None,
                  cluster_wide: bool = False, page_helpers=None) -> Snapshot:
    """`source` is an options.SourceOptions. What a source could not read (an optional kind the
    user's RBAC hides) is said on stderr as `warning: …`, like kubectl, and the command goes on.

    `cluster_wide`: read every namespace even when the user asked about one (Snapshot.namespace
    stays the one asked about). The scheduler's other filters see every pod on a node — its
    requests, host ports, anti-affinity — whatever namespace it lives in; only spread counting
    is namespaced. Dumps and the demo already hold whatever they hold.

    `page_helpers` (live.PageHelpers, cli/workers.py's): a live list of pods is decoded by a
    helper process too; None decodes it all here. The snapshot is the same either way."""
    rules = _rules(getattr(source, "kube_version", None))
    snap = _load(source, kinds, cluster_wide, page_helpers)
    snap = with_kube_version(snap, rules)
    clamped = versions.clamp_warning(versions.rules_for(snap.kube_version))
    if clamped:
        snap = dataclasses.replace(snap, warnings=snap.warnings + (clamped,))
    stream = sys.stderr if warn is None else warn
    for w in snap.warnings:
        stream.write(f"warning: {w}\n")
    return snap


def with_kube_version(snap: Snapshot, flag: str | None) -> Snapshot:
    """The snapshot under the rules of `flag` (--kube-version, already checked) when given,
    else its own minor; pods mid-resize sized by that minor's rule, known only now. Every
    read goes through it, `--execute`'s re-reads of live state included, so a re-plan
    follows the same scheduler as the plan it continues."""
    if flag:
        snap = dataclasses.replace(snap, kube_version=flag)
    return podrequests.for_version(snap)


def _rules(flag: str | None) -> str | None:
    """--kube-version checked before anything is read: a typo is a usage error, not a slow one."""
    if not flag:
        return None
    try:
        versions.parse(flag)
    except versions.UnknownVersion as e:
        raise UsageError(f"--kube-version: {e}") from None
    return flag


def _load(source, kinds: Iterable[str], cluster_wide: bool = False, page_helpers=None) -> Snapshot:
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

    retry = RetryPolicy(attempts=1) if source.fail_fast else None
    if cluster_wide and not source.all_namespaces:
        return _load_cluster_wide(source, kinds, retry, page_helpers)
    return load_live(source.kube_options(), kinds, retry=retry, page_helpers=page_helpers)


def _load_cluster_wide(source, kinds: Iterable[str], retry, page_helpers=None) -> Snapshot:
    """Every namespace, keeping the namespace asked about; a user whose RBAC stops at that
    namespace gets its view and a warning that other namespaces' pods are not seen."""
    import dataclasses

    from kubectl_tspread.snapshot.live import ApiStatusError, connect, load_live

    everywhere = source.kube_options(all_namespaces=True)
    # kept: its namespace is the one the user means
    cluster = connect(everywhere, retry=retry, page_helpers=page_helpers)
    try:
        snap = load_live(everywhere, kinds, retry=retry, cluster=cluster)
    except ApiStatusError as e:
        if e.status != 403:
            raise
        snap = load_live(source.kube_options(), kinds, retry=retry, page_helpers=page_helpers)
        return dataclasses.replace(snap, warnings=snap.warnings + (
            f"read namespace {snap.namespace} only ({e}); pods of other namespaces on the same nodes "
            "are not seen, so cpu, memory, ports and anti-affinity verdicts may be optimistic",))
    return dataclasses.replace(snap, namespace=cluster.namespace)
