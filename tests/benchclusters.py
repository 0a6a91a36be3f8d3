"""The benchmark's generated clusters (bench/generate.py) for tests that want a big, realistic
one: served by bench/server.py and read through the tool's live path, as scripts/bench reads
them, and the zone-b drain the benchmark plans."""

from __future__ import annotations

import os
import tempfile
import threading

from bench import generate
from bench.server import make_server, write_kubeconfig
from kubectl_tspread.model.plan import DRAIN_KINDS, PlanOptions
from kubectl_tspread.views.drain.plan import resolve_targets
from kubectl_tspread.views.drain.pods import DrainFlags
from kubectl_tspread.views.drain.remedies import deleting_replans
from kubectl_tspread.model import ZONE_KEY, Snapshot

ZONE = "zone-b"


def load(size: str, cache_dir: str) -> Snapshot:
    """The generated cluster of `size` (generated into `cache_dir` when missing)."""
    from kubectl_tspread.cli.options import SourceOptions
    from kubectl_tspread.snapshot import load_snapshot

    directory = generate.ensure(generate.SIZES[size], cache_dir)
    server = make_server(directory)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = write_kubeconfig(os.path.join(tmp, "kubeconfig"),
                                          f"http://127.0.0.1:{server.server_address[1]}")
            return load_snapshot(SourceOptions(kubeconfig=kubeconfig, all_namespaces=True), DRAIN_KINDS)
    finally:
        server.shutdown()
        server.server_close()


def zone_targets(snapshot: Snapshot) -> tuple[str, ...]:
    """The nodes of zone b, as `--domain topology.kubernetes.io/zone=zone-b` names them."""
    return resolve_targets(snapshot, (), None, (ZONE_KEY, ZONE))


def plan_options(snapshot: Snapshot, targets, delete_drained_nodes: bool = False) -> PlanOptions:
    """The CLI's defaults with --ignore-daemonsets and --delete-emptydir-data, remedies not
    verified; or, with `delete_drained_nodes`, the options remedies.py gives its re-plan that
    deletes the drained nodes."""
    options = PlanOptions(DrainFlags(True, False, True), verify_remedies=False)
    if delete_drained_nodes:
        ((_, _, _, options),) = deleting_replans(snapshot, targets, options)
    return options
