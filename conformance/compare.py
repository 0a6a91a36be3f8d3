"""Our answers for one case, set beside the scheduler oracle's, aspect by aspect.

Aspects (each a case agrees on or not):
- filter: every node's verdict of every Filter plugin, each evaluated on its own (codes and
  reasons; the oracle's Skip is a pass). Not judged when the PreFilter rejected the pod,
  since the scheduler then runs no Filter at all.
- first: every node's first failing plugin with its code and reasons, and schedulability.
- message: the PodScheduled condition's text, byte for byte ("" when schedulable).
- counts: per hard spread constraint, the per-domain counts and the global minimum.
- placement: for a schedulable pod, the drain planner's predicted node is among the oracle's
  top-scored nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from kubectl_tspread.views.drain.core.placement import Placer
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.engine import podrequests, preemption
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.views.pending import explain_pending
from kubectl_tspread.snapshot.files import decode_objects

from conformance.generate import Case

ASPECTS = ("filter", "first", "message", "counts", "placement")
SUCCESS = "Success"
PASSING = (SUCCESS, "Skip")


@dataclass
class Ours:
    nodes: dict[str, dict[str, tuple[str, tuple[str, ...]]]]  # node -> plugin -> (code, reasons) of failures
    first: dict[str, tuple[str, str, tuple[str, ...]] | None]
    schedulable: bool
    message: str
    counts: list[tuple[str, dict[str, int], int]]  # per hard constraint: key, counts, globalMin
    placed: str | None
    # the nodes a successful preemption may name: equal on every criterion, the scheduler
    # picks one of them in map order (at random)
    preemption_tied: tuple[str, ...] = ()


@dataclass
class Outcome:
    case: str
    agree: dict[str, bool | None] = field(default_factory=dict)  # None: not judged for this case
    diffs: list[str] = field(default_factory=list)


def ours(case: Case, minor: int) -> Ours:
    # as load_snapshot does once the minor is known: pods mid-resize sized by its rule
    snap = podrequests.for_version(replace(decode_objects(case.objects, None, True, case.id),
                                           kube_version=f"1.{minor}"))
    index = ClusterIndex(snap)
    pod = next(p for p in snap.pods if p.namespace == case.namespace and p.name == case.name)
    report = explain_pending(index, pod, with_fixes=False)
    nodes: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {}
    first: dict[str, tuple[str, str, tuple[str, ...]] | None] = {}
    for v in report.verdicts:
        per: dict[str, tuple[str, tuple[str, ...]]] = {}
        for f in v.failures:
            code, reasons = per.get(f.plugin, (f.status, ()))
            per[f.plugin] = (code, reasons + (f.reason,))
        nodes[v.node] = per
        ff = v.first_failures
        first[v.node] = None if not ff else (ff[0].plugin, ff[0].status, tuple(f.reason for f in ff))
    counts = [(cs.constraint.topology_key, {d: dom.pods for d, dom in cs.domains.items()}, cs.global_min)
              for cs in (c.state for c in report.constraints)]
    placed = None
    if report.schedulable:
        placed = Placer().place(SimCluster(snap), pod).node
    message = report.message
    tied: tuple[str, ...] = ()
    if _PREEMPTS.search(message):
        tied = preemption.simulate(report.verdicts, pod, index).tied
    return Ours(nodes, first, report.schedulable, message, counts, placed, tied)


_PREEMPTS = re.compile(r"found a potential placement for pod on node (\S+), ")


def _same_message(theirs: str, mine: Ours) -> bool:
    """Byte for byte, except that a preemption may name any node of a tie."""
    if theirs == mine.message:
        return True
    m = _PREEMPTS.search(theirs)
    if m is None or m.group(1) not in mine.preemption_tied:
        return False
    return _PREEMPTS.sub("", theirs) == _PREEMPTS.sub("", mine.message)


_LEFT_OUT = re.compile(r"node\(s\) didn't satisfy plugin\(s\) \[(\w+)\]")


def _oracle_first(node: dict[str, Any]) -> tuple[str, str, tuple[str, ...]] | None:
    f = node.get("first")
    if not f:
        return None
    plugin = f["plugin"]
    left_out = _LEFT_OUT.fullmatch(f["reasons"][0]) if f["reasons"] else None
    if not plugin and left_out:
        # a node outside a PreFilter's node set has a status without a plugin; its reason names
        # the plugin, which is the one our verdict names
        plugin = left_out.group(1)
    return plugin, f["code"], tuple(f["reasons"])


def compare(case: Case, oracle: dict[str, Any], mine: Ours) -> Outcome:
    out = Outcome(case.id)
    on = {n["name"]: n for n in oracle.get("nodes") or []}
    prefilter_ok = (oracle.get("preFilter") or {}).get("code", SUCCESS) == SUCCESS

    # filter: every plugin of every node
    if prefilter_ok:
        ok = True
        for name, node in on.items():
            theirs = {f["plugin"]: (f["code"], tuple(f["reasons"])) for f in node["filters"]
                      if f["code"] not in PASSING}
            if theirs != mine.nodes.get(name, {}):
                ok = False
                out.diffs.append(f"filter {name}: oracle {theirs} ours {mine.nodes.get(name, {})}")
        out.agree["filter"] = ok
    else:
        out.agree["filter"] = None

    ok = oracle["schedulable"] == mine.schedulable
    if not ok:
        out.diffs.append(f"schedulable: oracle {oracle['schedulable']} ours {mine.schedulable}")
    for name, node in on.items():
        theirs = _oracle_first(node)
        if theirs != mine.first.get(name):
            ok = False
            out.diffs.append(f"first {name}: oracle {theirs} ours {mine.first.get(name)}")
    out.agree["first"] = ok

    out.agree["message"] = _same_message(oracle["message"], mine)
    if not out.agree["message"]:
        out.diffs.append(f"message:\n  oracle {oracle['message']!r}\n  ours   {mine.message!r}")

    spread = oracle.get("spread")
    if spread is None:
        out.agree["counts"] = None
    else:
        theirs_c = [(c["topologyKey"], c["counts"], c["globalMin"]) for c in spread]
        out.agree["counts"] = theirs_c == mine.counts
        if not out.agree["counts"]:
            out.diffs.append(f"counts: oracle {theirs_c} ours {mine.counts}")

    top = oracle.get("top") or []
    if oracle["schedulable"] and mine.schedulable and top:
        out.agree["placement"] = mine.placed in top
        if not out.agree["placement"]:
            scores = {s["name"]: s for s in oracle.get("scores") or []}
            out.diffs.append(f"placement: ours {mine.placed} ({scores.get(mine.placed)}) oracle top {top} "
                             f"({[scores.get(t) for t in top]})")
    else:
        out.agree["placement"] = None
    return out
