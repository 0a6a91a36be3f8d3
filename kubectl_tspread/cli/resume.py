"""What a stopped or interrupted drain tells the user, so nobody is left guessing.

After any stop that follows a change (Ctrl-C, SIGTERM, a lost connection, a step that
became unsafe, a timeout, a stuck replacement) the user reads which nodes are cordoned,
which pods this run evicted, which replacements are not Ready yet, and two exact
commands: the one that resumes (the same command: the planner treats cordoned targets
and terminating pods as done and places Pending replacements first) and the one that
undoes the cordons. Evictions cannot be undone: their controllers already made new pods.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Sequence

from kubectl_tspread.views.drain.waiting import controller_of, live
from kubectl_tspread.model import Snapshot


DEFAULT_TIMEOUT = 300.0  # drain-safe's --timeout default (5m): left out of the resume command


@dataclass
class RunState:
    """What this run changed, kept as it goes (the report also reads the cluster afresh)."""

    targets: tuple[str, ...]
    cordoned: list[str] = field(default_factory=list)  # nodes this run cordoned
    evicted: list[str] = field(default_factory=list)  # "ns/name" this run evicted
    evicted_owners: set = field(default_factory=set)  # controllers of those pods
    steps_done: int = 0
    # "ns/name" of evictions sent and not answered yet: at an interruption, their outcome is unknown
    in_flight: list[str] = field(default_factory=list)


def resume_command(targets: Sequence[str], options, source, timeout: float | None, log_file: str | None) -> str:
    """The drain-safe command line that continues this drain (explicit node names, same flags)."""
    args = ["kubectl", "tspread", "drain-safe", *targets]
    flags = options.flags
    for on, flag in ((flags.ignore_daemonsets, "--ignore-daemonsets"), (flags.force, "--force"),
                     (flags.delete_emptydir_data, "--delete-emptydir-data")):
        if on:
            args.append(flag)
    if options.max_parallel != 1:
        args += ["--max-parallel", str(options.max_parallel)]
    if options.stage_cordons:
        args.append("--stage-cordons")
    for value, flag in ((source.kubeconfig, "--kubeconfig"), (source.context, "--context"),
                        (source.cluster, "--cluster"), (source.user, "--user"), (source.as_user, "--as")):
        if value:
            args += [flag, value]
    for group in source.as_groups:
        args += ["--as-group", group]
    if source.request_timeout:
        args += ["--request-timeout", f"{source.request_timeout:g}s"]
    args.append("--execute")
    if timeout is None:
        args += ["--timeout", "0"]
    elif timeout != DEFAULT_TIMEOUT:
        args += ["--timeout", f"{timeout:g}s"]
    if log_file:
        args += ["--log", log_file]
    args.append("--yes")
    return shlex.join(args)


UNREACHABLE = "the API server cannot be reached now"
INTERRUPTED_AGAIN = "interrupted again before the cluster was read afresh"


def state_lines(state: RunState, snap: Snapshot | None, resume: str, fresh: bool,
                stale: str = UNREACHABLE) -> list[str]:
    """The state block: cordoned nodes, evicted pods, evictions whose answer never came,
    replacements not Ready, resume and undo. `stale`: why the state is not a fresh read
    (a second Ctrl-C is not an unreachable server). `resume` "" when no target node is left."""
    cordoned = _cordoned(state, snap, fresh)
    lines = [f"State of the drain{'' if fresh else f' (as last read; {stale})'}:"]
    lines.append(f"  cordoned nodes: {', '.join(cordoned) or 'none'}")
    lines.append(f"  pods evicted by this run: {', '.join(state.evicted) or 'none'}")
    if state.in_flight:
        lines.append(f"  evictions sent, outcome unknown (the run stopped before the answer; check with "
                     f"kubectl get pod): {', '.join(state.in_flight)}")
    waiting = _not_ready(state, snap)
    lines.append(f"  replacements not Ready yet: {', '.join(waiting) or 'none'}")
    if not resume:
        lines.append("Nothing to resume: none of the target nodes exists any more.")
        return lines
    lines.append("To resume, rerun the same command (cordoned nodes and evicted pods are recognized and the "
                 "drain continues):")
    lines.append(f"  {resume}")
    if cordoned:
        lines.append("To undo the cordons instead (evicted pods were already replaced by their controllers):")
        lines.append(f"  kubectl uncordon {' '.join(cordoned)}")
    return lines


def _cordoned(state: RunState, snap: Snapshot | None, fresh: bool) -> list[str]:
    """A fresh read is the truth; an old one predates this run's own cordons, so add those."""
    names = {n.name for n in snap.nodes if n.unschedulable} if snap is not None else set()
    if not fresh:
        names |= set(state.cordoned)
    return [t for t in state.targets if t in names]


def _not_ready(state: RunState, snap: Snapshot | None) -> list[str]:
    if snap is None:
        return []
    out = []
    for p in snap.pods:
        if controller_of(p) in state.evicted_owners and live(p) and not (p.node_name and p.ready):
            out.append(f"{p.key} ({'Pending' if not p.node_name else 'not Ready'})")
    return sorted(out)
