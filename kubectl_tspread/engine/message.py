"""The scheduler's FailedScheduling message, rebuilt from node verdicts, and read back.

Built like kube-scheduler's FitError.Error() (pkg/scheduler/framework/types.go):

    0/<N> nodes are available: <c1> <reason1>, <c2> <reason2>. <PostFilter message>

- each node contributes every reason of its FIRST failing plugin (NodeResourcesFit
  lists each short resource, so counts may add up to more than N);
- "<count> <reason>" strings are sorted as plain strings ("10 …" before "2 …"), joined
  with ", ", ended with ".";
- a PreFilter rejection replaces the histogram with its own message, without counts (and
  from 1.34 the PostFilter part is then the error "not found": engine/versions.py);
- the PostFilter plugins' messages follow after one space, joined with ", ":
  DynamicResources ("no new claims to deallocate" for a pod without resource claims,
  on 1.34 to 1.36: engine/versions.py) then DefaultPreemption ("preemption: " + a
  second FitError over the nodes preemption looked at). When preemption finds a
  victim set the PostFilter succeeds and the message has no suffix at all.

Preemption is simulated honestly but not completely: nodes whose verdict is
UnschedulableAndUnresolvable are "Preemption is not helpful for scheduling"; on the
others the lower-priority pods are removed and the filters re-run. Not modelled:
preemptionPolicy: Never (not in the snapshot model), nominated pods of other
preemptors, PDB-driven victim choice (it changes which victims, not whether any),
and scheduler extenders.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from kubectl_tspread.engine import preemption, versions
from kubectl_tspread.engine.filters import PREFILTER, REASON_TAINT, NodeVerdict
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.spread import UNSCHEDULABLE
from kubectl_tspread.model import Pod

NO_NODES = "no nodes available to schedule pods"
NO_CLAIMS = "no new claims to deallocate"
# DynamicResources' PostFilter reading the state its PreFilter never wrote (versions.py, 1.34)
DRA_STATE_NOT_FOUND = "not found"
PREEMPTION_NOT_HELPFUL = preemption.PREEMPTION_NOT_HELPFUL
NO_VICTIMS = preemption.NO_VICTIMS
TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."

# counts of at most 9 ASCII digits: no cluster has more nodes, and int() refuses a string of over 4,300
# digits (a ValueError from an Event's message: "0/999…9 nodes are available")
_HEAD = re.compile(r"0/([0-9]{1,9}) nodes are available: ")
_ITEM = re.compile(r"([0-9]{1,9}) (.+)")
_TOO_MANY = re.compile(r"[0-9]{10,} ")
# the spellings of TaintToleration's reason over the releases, newest last
_TAINT_SPELLINGS = (
    re.compile(r"node\(s\) had taints that the pod didn't tolerate"),
    re.compile(r"node\(s\) had taint \{.*\}, that the pod didn't tolerate"),
    re.compile(r"node\(s\) had untolerated taint \{.*\}"),
)


def fit_error(total: int, reasons: Iterable[str]) -> str:
    """'0/N nodes are available: <sorted "count reason" list>.' from one reason per
    (node, reason) occurrence.

    >>> fit_error(12, ["Insufficient cpu"] * 10 + ["node(s) were unschedulable"] * 2)
    '0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable.'
    """
    items = sorted(f"{count} {reason}" for reason, count in Counter(reasons).items())
    return f"0/{total} nodes are available: {', '.join(items)}."


def _prefilter_rejected(verdicts: Sequence[NodeVerdict]) -> bool:
    return any(v.stage == PREFILTER and v.first is not None for v in verdicts)


def filter_message(verdicts: Sequence[NodeVerdict]) -> str:
    """The part before the PostFilter message."""
    rejected = next((v for v in verdicts if v.stage == PREFILTER and v.first is not None), None)
    if rejected is not None:
        return f"0/{len(verdicts)} nodes are available: {rejected.first.reason}."  # type: ignore[union-attr]
    return fit_error(len(verdicts), (f.reason for v in verdicts for f in v.first_failures))


def _terminating_by_preemption(p: Pod) -> bool:
    if not p.terminating:
        return False
    cond = p.condition("DisruptionTarget")
    return cond is not None and cond.status == "True" and cond.reason == "PreemptionByScheduler"


def _ineligible(verdicts: Sequence[NodeVerdict], pod: Pod, index: ClusterIndex) -> bool:
    """A pod whose earlier preemption is still evicting victims on its nominated node waits."""
    nominated = next((v for v in verdicts if v.node == pod.nominated_node), None)
    if nominated is None or nominated.status != UNSCHEDULABLE:
        return False
    return any(p.priority < pod.priority and _terminating_by_preemption(p)
               for p in index.pods_by_node.get(pod.nominated_node, ()))


def _preemption(verdicts: Sequence[NodeVerdict], pod: Pod | None, index: ClusterIndex | None,
                pick: bool) -> preemption.Preemption:
    if pod is None or index is None:
        return preemption.Preemption(None, reasons=tuple(
            NO_VICTIMS if v.status == UNSCHEDULABLE else PREEMPTION_NOT_HELPFUL for v in verdicts))
    if _ineligible(verdicts, pod, index):
        return preemption.Preemption(None, reasons=(TERMINATING_ON_NOMINATED,))
    return preemption.simulate(verdicts, pod, index, pick=pick)


def _post_filter(verdicts: Sequence[NodeVerdict], outcome: preemption.Preemption, rules: versions.Rules) -> str:
    """The PostFilter part (after the filter part and one space), "" when there is none."""
    if rules.dra_enabled and _prefilter_rejected(verdicts):
        return DRA_STATE_NOT_FOUND
    if outcome.node is not None:
        if not rules.preemption_names_node:
            return ""  # a successful PostFilter said nothing before 1.37
        return f"preemption: found a potential placement for pod on node {outcome.node}, preempting {outcome.victims} victims"
    if outcome.reasons == (TERMINATING_ON_NOMINATED,):
        tail = TERMINATING_ON_NOMINATED
    else:
        tail = fit_error(len(verdicts), outcome.reasons)
    return f"{NO_CLAIMS}, preemption: {tail}" if rules.dra_message else f"preemption: {tail}"


def scheduler_message(verdicts: Sequence[NodeVerdict], pod: Pod | None = None,
                      index: ClusterIndex | None = None, rules: versions.Rules = versions.NEWEST_RULES) -> str:
    """The PodScheduled condition / FailedScheduling event text for these verdicts, as the
    scheduler of `rules`' minor writes it. "" when some node passes (the pod would be scheduled).

    The PostFilter part differs by minor (engine/versions.py): DynamicResources' "no new
    claims to deallocate" on 1.34 to 1.36, and from 1.37 a successful preemption names its
    node and victim count (before, it added nothing).
    """
    return _format(verdicts, pod, index, (rules,))[0]


def scheduler_messages(verdicts: Sequence[NodeVerdict], pod: Pod | None = None,
                       index: ClusterIndex | None = None) -> dict[str, str]:
    """`scheduler_message` as each supported minor writes it ("1.33" -> text), from one
    preemption simulation (why-pending accepts a live message equal to any of them: a dump
    may not say its version)."""
    labels = versions.SUPPORTED
    return dict(zip(labels, _format(verdicts, pod, index, tuple(versions.rules_for(v) for v in labels))))


def _format(verdicts: Sequence[NodeVerdict], pod: Pod | None, index: ClusterIndex | None,
            rules: tuple[versions.Rules, ...]) -> list[str]:
    if not verdicts:
        return [NO_NODES] * len(rules)
    if any(v.passes for v in verdicts):
        return [""] * len(rules)
    head = filter_message(verdicts)
    outcome = _preemption(verdicts, pod, index, pick=any(r.preemption_names_node for r in rules))
    out = []
    for r in rules:
        post = _post_filter(verdicts, outcome, r)
        out.append(f"{head} {post}" if post else head)
    return out


def split_scheduler_message(msg: str) -> tuple[int | None, str, str]:
    """(N, the filter part, the PostFilter part) of a scheduler message; (None, "", "")
    when `msg` is not one. The filter part has no trailing period.

    >>> split_scheduler_message("0/3 nodes are available: 3 Insufficient cpu. preemption: x.")
    (3, '3 Insufficient cpu', 'preemption: x.')
    """
    m = _HEAD.match(msg.strip())
    if m is None:
        return None, "", ""
    body = msg.strip()[m.end():]
    cut = body.find(". ")
    if cut < 0:
        return int(m.group(1)), body.rstrip("."), ""
    return int(m.group(1)), body[:cut], body[cut + 2:]


def normalise_reason(reason: str) -> str:
    """Map the older TaintToleration spellings (with or without the taint) to today's."""
    if any(p.fullmatch(reason) for p in _TAINT_SPELLINGS):
        return REASON_TAINT
    return reason


def _histogram(total: int, part: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in re.split(r", (?=[0-9]+ )", part):
        m = _ITEM.fullmatch(item)
        if m is None and _TOO_MANY.match(item):
            return {}  # a count no scheduler writes: not its message
        if m is None:  # a PreFilter message: it stands for every node
            return {item: total} if item else {}
        reason = normalise_reason(m.group(2))
        out[reason] = out.get(reason, 0) + int(m.group(1))
    return out


def parse_scheduler_message(msg: str) -> dict[str, int]:
    """reason -> node count of the filter part; every taint spelling counts as
    "node(s) had untolerated taint(s)". {} when `msg` is not a scheduler message.

    >>> parse_scheduler_message("0/3 nodes are available: 1 node(s) had untolerated taint {a: }, "
    ...                         "2 node(s) had taints that the pod didn't tolerate.")
    {'node(s) had untolerated taint(s)': 3}
    """
    total, part, _ = split_scheduler_message(msg)
    return {} if total is None else _histogram(total, part)


def parse_preemption_message(msg: str) -> dict[str, int]:
    """reason -> node count of the "preemption: 0/N nodes are available: …" part, if any."""
    _, _, post = split_scheduler_message(msg)
    at = post.find("preemption: ")
    if at < 0:
        return {}
    total, part, _ = split_scheduler_message(post[at + len("preemption: "):])
    return {} if total is None else _histogram(total, part)
