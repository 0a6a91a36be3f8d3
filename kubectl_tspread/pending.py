"""explain_pending: why one pod waits, as kube-scheduler would say it, and what would change it.

Pure domain verb: ClusterIndex and a pod in, PendingReport out. Three answers from one
snapshot:

1. every node through every filter (engine.filters.evaluate), each filter on its own,
   and the scheduler's message rebuilt from the first failures, beside the live one;
2. per hard spread constraint, the skew the pod would create in each domain and the
   intersection that decides: domains spread allows × nodes that pass every other
   filter (zones a=5 b=5 c=3, maxSkew 1 → only c is allowed; if c's nodes are all
   short of cpu, nothing is left);
3. fixes from `fixes.propose_fixes`, each verified on a changed copy of the snapshot.

Sentences are not made here: summaries and causes are codes plus numbers, and
render/pending.py words them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from kubectl_tspread.engine import filters, message as msgmod, spread, traps as trapmod, volumes
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.fixes import Suggestion, propose_fixes
from kubectl_tspread.model import Pod

DEFAULT_SCHEDULER = "default-scheduler"
FAILED_SCHEDULING = "FailedScheduling"

# what a constraint's intersection says (render/pending.py words each)
SPREAD_NOT_BLOCKING = "NotBlocking"  # some allowed domain has a node that passes every other filter
ALLOWED_DOMAINS_BLOCKED = "AllowedDomainsBlocked"  # spread allows domains whose nodes all fail elsewhere
NO_DOMAIN_ALLOWED = "NoDomainAllowed"  # spread forbids every domain

# likely causes when the live message differs from the rebuilt one
CAUSE_OTHER_SCHEDULER = "OtherScheduler"
CAUSE_NOMINATED_NODE = "NominatedNode"
CAUSE_STALE_MESSAGE = "StaleMessage"
CAUSE_UNSEEN_PROFILE = "UnseenProfile"

VOLUME_PINNING = "VolumePinning"
_VOLUME_PLUGINS = (volumes.VOLUME_BINDING, volumes.VOLUME_ZONE)


@dataclass(frozen=True, slots=True)
class DomainVerdict:
    """One domain of a hard constraint seen from the pending pod."""

    value: str
    pods: int
    nodes: tuple[str, ...]  # the domain's eligible nodes (those that make it a domain)
    skew_if_placed: int
    allowed: bool
    headroom: int
    fit_nodes: tuple[str, ...]  # nodes with this label value that pass every filter but spread
    blockers: tuple[tuple[str, int], ...]  # other-filter reasons of its nodes, most frequent first


@dataclass(frozen=True, slots=True)
class SpreadSummary:
    """The one-sentence answer for a constraint, as a code and its numbers."""

    code: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ConstraintExplanation:
    state: spread.ConstraintState
    domains: list[DomainVerdict]
    summary: SpreadSummary
    candidates: tuple[str, ...]  # allowed domains × nodes passing every other filter
    traps: list[trapmod.Trap]


@dataclass(frozen=True, slots=True)
class LiveMessage:
    text: str
    source: str  # "condition" (PodScheduled) or "event" (FailedScheduling)
    time: str


@dataclass(slots=True)
class PendingReport:
    pod: Pod
    verdicts: list[filters.NodeVerdict]
    message: str  # the scheduler's message rebuilt
    live: LiveMessage | None
    agree: bool | None  # None when the snapshot has no live message
    exact: bool | None  # byte for byte (with or without the 1.34+ DynamicResources PostFilter text)
    causes: list[str]  # CAUSE_* when they disagree, most likely first
    constraints: list[ConstraintExplanation]
    fit_nodes: list[str]  # nodes that pass every filter
    suggestions: list[Suggestion]
    tried: list[str]  # every fix action that was tried (verified or not)

    @property
    def schedulable(self) -> bool:
        return bool(self.fit_nodes)


@dataclass(frozen=True, slots=True)
class NotPending:
    """A named pod that is not waiting for the scheduler: one line, nothing to explain."""

    pod: Pod


@dataclass(slots=True)
class PendingReports:
    reports: list[PendingReport] = field(default_factory=list)
    not_pending: list[NotPending] = field(default_factory=list)
    namespace: str | None = None
    source: str = ""

    @property
    def any_unschedulable(self) -> bool:
        """Drives --exit-code: some examined pod fits no node."""
        return any(not r.schedulable for r in self.reports)


def other_failures(v: filters.NodeVerdict) -> list[spread.FilterFailure]:
    """The node's failures from every filter except PodTopologySpread, PreFilter outcomes included."""
    found = list(v.failures)
    if v.prefilter is not None and v.prefilter not in found:
        found.insert(0, v.prefilter)
    return [f for f in found if f.plugin != spread.PLUGIN]


def explain_pods(index: ClusterIndex, pods: Sequence[Pod], with_fixes: bool = True,
                 namespace: str | None = None) -> PendingReports:
    """A report per pending pod; pods already bound or finished are listed as NotPending."""
    out = PendingReports(namespace=namespace, source=index.snapshot.source)
    for p in pods:
        if p.pending:
            out.reports.append(explain_pending(index, p, with_fixes))
        else:
            out.not_pending.append(NotPending(p))
    return out


def explain_pending(index: ClusterIndex, pod: Pod, with_fixes: bool = True) -> PendingReport:
    """Every node through every filter, the message, the spread arithmetic and verified fixes."""
    verdicts = list(filters.evaluate(index, pod))
    rebuilt = msgmod.scheduler_message(verdicts, pod, index)
    live = live_message(index, pod)
    exact = None
    if live is not None:
        # clusters before 1.34 write no DynamicResources PostFilter text
        exact = live.text in (rebuilt, msgmod.scheduler_message(verdicts, pod, index, dra=False))
    agree = None if live is None else exact or same_verdicts(rebuilt, live.text)
    causes = [] if live is None or agree else mismatch_causes(index, pod, live, rebuilt)
    state = spread.compute(index, pod)
    explanations = explain_constraints(index, pod, state, verdicts)
    fit = [v.node for v in verdicts if v.passes]
    suggestions: list[Suggestion] = []
    tried: list[str] = []
    if with_fixes and not fit:
        suggestions, tried = propose_fixes(index, pod, verdicts, state)
    return PendingReport(pod, verdicts, rebuilt, live, agree, exact, causes, explanations, fit,
                         suggestions, tried)


def live_message(index: ClusterIndex, pod: Pod) -> LiveMessage | None:
    """The PodScheduled=False condition's message, else the latest FailedScheduling event."""
    cond = pod.condition("PodScheduled")
    if cond is not None and cond.status == "False" and cond.message:
        return LiveMessage(cond.message, "condition", cond.last_transition)
    events = [
        e for e in index.snapshot.events
        if e.reason == FAILED_SCHEDULING and e.object_kind == "Pod" and e.namespace == pod.namespace
        and e.object_name == pod.name and (not e.object_uid or not pod.uid or e.object_uid == pod.uid)
    ]
    if not events:
        return None
    latest = max(events, key=lambda e: e.last_seen)
    return LiveMessage(latest.message, "event", latest.last_seen)


def same_verdicts(rebuilt: str, live: str) -> bool:
    """The same node count and the same filter counts once the historical taint spellings
    are normalised; the PostFilter (preemption) text may differ by release."""
    total_a, _, _ = msgmod.split_scheduler_message(rebuilt)
    total_b, _, _ = msgmod.split_scheduler_message(live)
    if total_a is None or total_a != total_b:
        return False
    return msgmod.parse_scheduler_message(rebuilt) == msgmod.parse_scheduler_message(live)


def mismatch_causes(index: ClusterIndex, pod: Pod, live: LiveMessage, rebuilt: str) -> list[str]:
    """Why the live message may say something else, most telling first."""
    causes = []
    if pod.scheduler_name != DEFAULT_SCHEDULER:
        causes.append(CAUSE_OTHER_SCHEDULER)
    if pod.nominated_node:
        causes.append(CAUSE_NOMINATED_NODE)
    if _stale(index, live, rebuilt):
        causes.append(CAUSE_STALE_MESSAGE)
    if not causes:
        causes.append(CAUSE_UNSEEN_PROFILE)
    return causes


def _stale(index: ClusterIndex, live: LiveMessage, rebuilt: str) -> bool:
    """The live message counts another number of nodes, or objects changed after it was written."""
    total_live, _, _ = msgmod.split_scheduler_message(live.text)
    total_now, _, _ = msgmod.split_scheduler_message(rebuilt)
    if total_live is not None and total_now is not None and total_live != total_now:
        return True
    if not live.time:
        return False
    snap = index.snapshot
    # RFC 3339 UTC timestamps as the API writes them compare correctly as strings
    newest = max([n.created for n in snap.nodes] + [p.created for p in snap.pods if p.node_name],
                 default="")
    return newest > live.time


def explain_constraints(index: ClusterIndex, pod: Pod, state: spread.SpreadState,
                        verdicts: Sequence[filters.NodeVerdict]) -> list[ConstraintExplanation]:
    """One explanation per hard constraint; soft ones never block and are left out."""
    nodes_ok = {v.node for v in verdicts if not other_failures(v)}
    blockers = {v.node: other_failures(v) for v in verdicts}
    workload = _workload_pods(index, pod)
    pinning = volume_pinning(index, pod, verdicts)
    out = []
    for cs in state.hard:
        doms = domain_verdicts(index, cs, nodes_ok, blockers)
        summary = summarize(cs, doms)
        candidates = tuple(n for d in doms if d.allowed for n in d.fit_nodes)
        found: list[trapmod.Trap] = []
        if summary.code != SPREAD_NOT_BLOCKING:
            found = trapmod.constraint_traps(index, cs, workload)
            trap = pinning(cs)
            if trap is not None:
                found.append(trap)
        out.append(ConstraintExplanation(cs, doms, summary, candidates, found))
    return out


def domain_verdicts(index: ClusterIndex, cs: spread.ConstraintState, nodes_ok: set[str],
                    blockers: dict[str, list[spread.FilterFailure]]) -> list[DomainVerdict]:
    """The domain table plus, per domain, which of its nodes pass every other filter.

    Like the Filter, a node is judged by its label value, so nodes that an inclusion
    policy keeps out of the domain still land in it when they carry the value.
    """
    key = cs.constraint.topology_key
    by_value: dict[str, list[str]] = {}
    for name in sorted(index.nodes):
        value = index.nodes[name].labels.get(key)
        if value is not None:
            by_value.setdefault(value, []).append(name)
    out = []
    for d in cs.domains.values():
        members = by_value.get(d.value, [])
        # each node counted once, by its first failing plugin (as the scheduler's message does)
        reasons = Counter(f.reason for n in members if n not in nodes_ok for f in _first_plugin(blockers[n]))
        out.append(DomainVerdict(
            value=d.value, pods=d.pods, nodes=d.nodes, skew_if_placed=cs.skew_if_placed(d.value),
            allowed=cs.allows(d.value), headroom=cs.headroom(d.value),
            fit_nodes=tuple(n for n in members if n in nodes_ok),
            blockers=tuple(sorted(reasons.items(), key=lambda r: (-r[1], r[0]))),
        ))
    return out


def _first_plugin(failures: Sequence[spread.FilterFailure]) -> list[spread.FilterFailure]:
    """Every reason of the first failing plugin (NodeResourcesFit may list several resources)."""
    return [f for f in failures if f.plugin == failures[0].plugin] if failures else []


def summarize(cs: spread.ConstraintState, doms: Sequence[DomainVerdict]) -> SpreadSummary:
    """zones a=5 b=5 c=3, maxSkew 1, c's nodes short of cpu →
    AllowedDomainsBlocked(allowed=[c], blocked_nodes=3, reasons=[(Insufficient cpu, 3)])."""
    c = cs.constraint
    allowed = [d for d in doms if d.allowed]
    base = {
        "key": c.topology_key, "max_skew": c.max_skew, "global_min": cs.global_min,
        "counts": [(d.value, d.pods) for d in doms], "allowed": [d.value for d in allowed],
        "min_domains": c.min_domains, "min_forced_zero": cs.min_forced_zero,
        "fit_elsewhere": sorted({d.value for d in doms if not d.allowed and d.fit_nodes}),
    }
    if not allowed:
        return SpreadSummary(NO_DOMAIN_ALLOWED, base)
    fitting = [d for d in allowed if d.fit_nodes]
    if fitting:
        base["fit_nodes"] = sum(len(d.fit_nodes) for d in fitting)
        base["fit_domains"] = [d.value for d in fitting]
        return SpreadSummary(SPREAD_NOT_BLOCKING, base)
    reasons: Counter[str] = Counter()
    for d in allowed:
        reasons.update(dict(d.blockers))
    base["blocked_nodes"] = sum(len(d.nodes) for d in allowed)
    base["reasons"] = sorted(reasons.items(), key=lambda r: (-r[1], r[0]))
    return SpreadSummary(ALLOWED_DOMAINS_BLOCKED, base)


def _workload_pods(index: ClusterIndex, pod: Pod) -> list[Pod]:
    """The pods of the pending pod's top controller (rolling-update trap), else just the pod."""
    top = index.top_controller(pod)
    if top is None:
        return [pod]
    return [p for p in index.pods_by_namespace.get(pod.namespace, ()) if index.top_controller(p) == top]


def volume_pinning(index: ClusterIndex, pod: Pod, verdicts: Sequence[filters.NodeVerdict]):
    """A function cs -> VolumePinning trap or None.

    The trap: the pod's bound PVs let it run only on some nodes (VolumeBinding /
    VolumeZone pass there) and spread forbids every domain those nodes are in, so the
    pod waits until the skew changes.
    """
    bound = [pv for _claim, pv in volumes.prepare(index, pod).bound if pv is not None]
    pinned = [v.node for v in verdicts if not any(f.plugin in _VOLUME_PLUGINS for f in v.failures)]
    if not bound or len(pinned) == len(verdicts):
        return lambda cs: None

    def trap(cs: spread.ConstraintState) -> trapmod.Trap | None:
        key = cs.constraint.topology_key
        values = sorted({index.nodes[n].labels[key] for n in pinned if key in index.nodes[n].labels})
        if not values or any(cs.allows(v) for v in values):
            return None
        return trapmod.Trap(VOLUME_PINNING, {
            "key": key, "volumes": [pv.name for pv in bound], "pinned": values,
            "allowed": [v for v in cs.domains if cs.allows(v)], "max_skew": cs.constraint.max_skew,
        })

    return trap
