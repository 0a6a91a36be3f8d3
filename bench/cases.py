"""What the benchmark measures, and the targets it checks them against (issues 5 and 59).

A Case is one command line; its floor (when it has one) is the replay of the very
requests the command made (bench.floor). Targets are evaluated on the largest size run.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.join(REPO, ".venv", "bin")


@dataclass
class Case:
    name: str  # the id --only takes
    label: str  # the row in the table
    argv: list[str]
    runs: int
    floor: bool = False  # measure the replay of its requests alongside it
    warmup: bool = True  # one unmeasured run first (costly baselines skip it)
    ok_codes: tuple[int, ...] = (0,)
    verb: str | None = None  # the tspread subcommand it needs; missing -> "not available"
    sized: bool = True  # False: the same at every size, measured once
    timeout: float = 900.0  # seconds; a run past it is killed and the case reported as timed out


def tool() -> list[str]:
    exe = os.path.join(VENV_BIN, "kubectl-tspread")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "kubectl_tspread"]


def first_pending_pod(cluster_dir: str) -> tuple[str, str]:
    with open(os.path.join(cluster_dir, "Pod.meta"), "rb") as f:
        for line in f:
            ns, name, _, fields = json.loads(line)
            if not fields.get("spec.nodeName") and fields.get("status.phase") == "Pending":
                return ns, name
    raise RuntimeError(f"the cluster in {cluster_dir} has no pending pod")


def first_general_node(cluster_dir: str) -> str:
    with open(os.path.join(cluster_dir, "Node.meta"), "rb") as f:
        for line in f:
            _, name, labels, _ = json.loads(line)
            if labels.get("pool") == "general":
                return name
    raise RuntimeError(f"the cluster in {cluster_dir} has no general-pool node")


def trap_cases(kubeconfig: str, runs: int | None) -> list[Case]:
    """The cases of the "trap" cluster (bench/generate.py): a whole-zone drain that traps every
    workload, so the planner must find that out for each and work out its remedies."""
    drain = ["--ignore-daemonsets", "--delete-emptydir-data"]
    return [Case("drain-trap-zone", "drain-safe a whole zone that traps every workload",
                 tool() + ["drain-safe", "--domain", "topology.kubernetes.io/zone=zone-b"] + drain
                 + ["--kubeconfig", kubeconfig], runs or 5, floor=True, ok_codes=(0, 3), verb="drain-safe",
                 timeout=300.0)]


def sized_cases(cluster_dir: str, kubeconfig: str, dump: str | None, large: bool, runs: int | None,
                cache_dir: str) -> list[Case]:
    """The cases that read a generated cluster (through the server, or its dump)."""
    n = runs or (3 if large else 5)
    # the typed client and kubectl take minutes per run at 150k, tens of seconds at 15k
    base = n if runs is not None else 1 if large else 3
    t, kc = tool(), ["--kubeconfig", kubeconfig]
    ns, pending = first_pending_pod(cluster_dir)
    node = first_general_node(cluster_dir)
    drain = ["--ignore-daemonsets", "--delete-emptydir-data"]
    # the planners' cost is not bounded by the data read: cap them so a large run stays under ~25 min
    heavy = 90.0 if large else 60.0
    cases = [
        Case("distribution-A", "distribution -A", t + ["distribution", "-A"] + kc, n, floor=True),
        Case("why-pending-one", "why-pending one pod", t + ["why-pending", f"pod/{pending}", "-n", ns] + kc, n,
             floor=True, verb="why-pending", timeout=2 * heavy),
        Case("why-pending-A", "why-pending -A", t + ["why-pending", "-A"] + kc, n, floor=True, verb="why-pending", timeout=heavy),
        Case("drain-one", "drain-safe one node", t + ["drain-safe", node] + drain + kc, n, floor=True,
             ok_codes=(0, 3), verb="drain-safe", timeout=heavy),
        Case("drain-10pct", "drain-safe 10 % of nodes",
             t + ["drain-safe", "-l", "bench.tspread/group=g3"] + drain + kc, n, floor=True, ok_codes=(0, 3),
             verb="drain-safe", timeout=heavy),
        Case("drain-zone", "drain-safe a whole zone",
             t + ["drain-safe", "--domain", "topology.kubernetes.io/zone=zone-b"] + drain + kc, n, floor=True,
             # it may run for minutes at large (the one planner makes its remedies' re-plans
             # too): a tighter cap there would report a timeout instead of its figures
             ok_codes=(0, 3), verb="drain-safe", timeout=900.0 if large else 2 * heavy),
        Case("typed-client", "baseline: kubernetes client list_pod_for_all_namespaces",
             [sys.executable, "-m", "bench.baseline_client", kubeconfig], base, floor=True, warmup=False),
        Case("kubectl-get", "baseline: kubectl get pods -A -o json",
             ["kubectl", "--cache-dir", os.path.join(cache_dir, "kube-cache"), "get", "pods", "-A", "-o", "json"]
             + kc, base, floor=True, warmup=False),
    ]
    if dump:
        cases += [
            Case("from-file", "distribution -A --from-file (dump)", t + ["distribution", "-A", "--from-file", dump],
                 n),
            # with the cyclic collector off, as the floor (bench/floor.py) and the tool's loading:
            # on, it walks the freshly parsed objects again and again, which neither pays
            Case("json-load", "reference: json.load of the dump (collector off)",
                 [sys.executable, "-c", "import gc, json, sys; gc.disable(); json.load(open(sys.argv[1]))", dump], n),
        ]
    return cases


def fixed_cases(runs: int | None) -> list[Case]:
    """Cases that read no generated cluster: start-up and the built-in demo."""
    n = runs or 5
    return [
        Case("help", "kubectl tspread --help", ["kubectl", "tspread", "--help"], n, sized=False),
        Case("kubectl-ref", "reference: kubectl version --client", ["kubectl", "version", "--client"], n,
             sized=False),
        Case("demo", "distribution --demo", tool() + ["distribution", "--demo"], n, sized=False),
    ]


@dataclass
class Target:
    case: str
    text: str
    floor_ratio: float | None = None  # wall time / the case's floor
    seconds: float | None = None  # absolute median wall time
    rss_mb: float | None = None


TARGETS = [
    Target("distribution-A", "≤ 1.5 × floor, RSS ≤ 500 MB", floor_ratio=1.5, rss_mb=500),
    Target("why-pending-one", "≤ 1.5 × floor", floor_ratio=1.5),
    Target("why-pending-A", "≤ 3 × floor", floor_ratio=3),
    # issue 59's targets for drain-safe
    Target("drain-one", "≤ 1.5 × floor", floor_ratio=1.5),
    Target("drain-10pct", "≤ 3 × floor", floor_ratio=3),
    Target("drain-zone", "≤ 4 × floor, RSS ≤ 1 GB", floor_ratio=4, rss_mb=1000),
    Target("drain-trap-zone", "≤ 4 × floor", floor_ratio=4),
    Target("help", "≤ 0.2 s", seconds=0.2),
    Target("demo", "≤ 0.6 s", seconds=0.6),
]
# growth (distribution -A, small -> large: time and memory × ≤ 12) and --from-file (≤ 1.3 × json.load in
# time and RSS) compare two measurements; the runner evaluates them by name
GROWTH_LIMIT = 12.0
FROM_FILE_LIMIT = 1.3
