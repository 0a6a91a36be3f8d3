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
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from kubectl_tspread.views.blockers import SPREAD as SPREAD_BLOCKER, Blocker, blocked_by
from kubectl_tspread.engine import filters, message as msgmod, spread, traps as trapmod, versions, volumes
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.views.fixes import Suggestion, propose_fixes
from kubectl_tspread.model import Event, Pod
from kubectl_tspread.views.pending_live import (  # noqa: F401  (CAUSE_* stay importable from here)
    CAUSE_NOMINATED_NODE, CAUSE_OTHER_SCHEDULER, CAUSE_STALE_MESSAGE, CAUSE_UNSEEN_PROFILE, FAILED_SCHEDULING,
    LiveMessage, live_message, mismatch_causes, newest_object, same_verdicts,
)

# what a constraint's intersection says (render/pending.py words each)
SPREAD_NOT_BLOCKING = "NotBlocking"  # some allowed domain has a node that passes every other filter
ALLOWED_DOMAINS_BLOCKED = "AllowedDomainsBlocked"  # spread allows domains whose nodes all fail elsewhere
NO_DOMAIN_ALLOWED = "NoDomainAllowed"  # spread forbids every domain
NO_DOMAINS = "NoDomains"  # no node makes a domain (node affinity, taints, missing key): spread is not the cause

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


@dataclass(slots=True)
class PendingReport:
    pod: Pod
    verdicts: list[filters.NodeVerdict]
    message: str  # the scheduler's message rebuilt
    live: LiveMessage | None
    agree: bool | None  # None when the snapshot has no live message
    exact: bool | None  # byte for byte (as any supported minor writes it)
    causes: list[str]  # CAUSE_* when they disagree, most likely first
    constraints: list[ConstraintExplanation]
    fit_nodes: list[str]  # nodes that pass every filter
    suggestions: list[Suggestion]
    tried: list[str]  # every fix action that was tried (verified or not)
    blockers: list[Blocker] = field(default_factory=list)  # what refuses the nodes, most decisive first
    # reports of pods judged by one shared evaluation carry the same number (grouping only: two
    # reports are equal by what they say, not by how they were computed)
    evaluation: int = field(default=0, compare=False)

    @property
    def schedulable(self) -> bool:
        return bool(self.fit_nodes)

    @property
    def deciding_constraint(self) -> "ConstraintExplanation | None":
        """The first hard constraint that spread-blocks the pod, when spread is the main blocker."""
        if not self.blockers or self.blockers[0].code != SPREAD_BLOCKER:
            return None
        return next((c for c in self.constraints if c.summary.code not in (SPREAD_NOT_BLOCKING, NO_DOMAINS)),
                    None)


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
    scheduler_version: str = versions.NEWEST_RULES.label  # whose rules the messages follow

    @property
    def any_unschedulable(self) -> bool:
        """Drives --exit-code: some examined pod fits no node."""
        return any(not r.schedulable for r in self.reports)

    def groups(self) -> list[list[PendingReport]]:
        """Reports of pods of one owner with the same answer (one shared evaluation, and the same
        comparison with their live messages), in first-seen order: `-A` on a big cluster finds a
        Deployment's replicas Pending by the hundred, and one report with a count says it all.
        A pod without an owner is its own group."""
        out: dict[tuple, list[PendingReport]] = {}
        for r in self.reports:
            owner = r.pod.owner
            key = (r.pod.key,) if owner is None else (
                r.pod.namespace, owner.kind, owner.name, r.evaluation, r.agree, r.exact, tuple(r.causes))
            out.setdefault(key, []).append(r)
        return list(out.values())


def other_failures(v: filters.NodeVerdict) -> list[spread.FilterFailure]:
    """The node's failures from every filter except PodTopologySpread, PreFilter outcomes included."""
    found = list(v.failures)
    if v.prefilter is not None and v.prefilter not in found:
        found.insert(0, v.prefilter)
    return [f for f in found if f.plugin != spread.PLUGIN]


def explain_pods(index: ClusterIndex, pods: Sequence[Pod], with_fixes: bool = True,
                 namespace: str | None = None) -> PendingReports:
    """A report per pending pod; pods already bound or finished are listed as NotPending.

    Pending pods that differ only in name, uid, creation time and conditions (the replicas
    of one template, as `-A` finds them by the hundred) are judged once: every filter,
    the spread arithmetic and the fixes read nothing else of an unbound pod. Each pod
    still gets its own live message and comparison.
    """
    out = PendingReports(namespace=namespace, source=index.snapshot.source,
                         scheduler_version=versions.rules_for(index.snapshot.kube_version).label)
    ctx = _Context(index)
    for p in pods:
        if p.pending:
            out.reports.append(_report(ctx, p, ctx.evaluation(p, with_fixes)))
        else:
            out.not_pending.append(NotPending(p))
    return out


def explain_pending(index: ClusterIndex, pod: Pod, with_fixes: bool = True) -> PendingReport:
    """Every node through every filter, the message, the spread arithmetic and verified fixes."""
    ctx = _Context(index)
    return _report(ctx, pod, ctx.evaluation(pod, with_fixes))


@dataclass(frozen=True, slots=True)
class _Evaluation:
    """What a report says that depends on the pod's spec, not on its identity."""

    verdicts: list[filters.NodeVerdict]
    message: str
    message_forms: tuple[str, ...]  # the message as every supported minor writes it
    constraints: list[ConstraintExplanation]
    fit_nodes: list[str]
    suggestions: list[Suggestion]
    tried: list[str]
    blockers: list[Blocker]


def _evaluate(index: ClusterIndex, pod: Pod, with_fixes: bool,
              partitions: dict[tuple, spread.Partition] | None = None) -> _Evaluation:
    state = spread.compute(index, pod, partitions=partitions)
    verdicts = list(filters.evaluate(index, pod, spread_state=state))
    # every minor's form: the cluster's minor says which one its scheduler writes, and the live
    # message is compared with all (a dump may not say its version)
    forms = msgmod.scheduler_messages(verdicts, pod, index)
    rebuilt = forms[versions.rules_for(index.snapshot.kube_version).label]
    explanations = explain_constraints(index, pod, state, verdicts)
    fit = [v.node for v in verdicts if v.passes]
    blockers = blocked_by(index, pod, verdicts)
    suggestions: list[Suggestion] = []
    tried: list[str] = []
    if with_fixes and not fit:
        suggestions, tried = propose_fixes(index, pod, verdicts, state, partitions, blockers)
    return _Evaluation(verdicts, rebuilt, tuple(dict.fromkeys(forms.values())), explanations, fit, suggestions,
                       tried, blockers)


def _report(ctx: "_Context", pod: Pod, ev: _Evaluation) -> PendingReport:
    live = ctx.live_message(pod)
    exact = agree = None
    causes: list[str] = []
    if live is not None:
        exact = live.text in ev.message_forms
        agree = exact or same_verdicts(ev.message, live.text)
        if not agree:
            causes = mismatch_causes(ctx.index, pod, live, ev.message, ctx.newest)
    # lists are the report's own; the records in them are immutable and shared
    return PendingReport(pod, list(ev.verdicts), ev.message, live, agree, exact, causes,
                         list(ev.constraints), list(ev.fit_nodes), list(ev.suggestions), list(ev.tried),
                         list(ev.blockers), id(ev))


def _scheduling_view(pod: Pod) -> Pod:
    """The pod without what identifies it: equal views mean equal verdicts, messages and fixes."""
    return replace(pod, name="", uid="", created="", conditions=())


class _Context:
    """What explaining several pods of one index shares: evaluations of pods equal up to
    identity, FailedScheduling events by pod, and the newest object timestamp."""

    def __init__(self, index: ClusterIndex):
        self.index = index
        self._evaluations: dict[tuple, list[tuple[Pod, _Evaluation]]] = {}
        self._events: dict[tuple[str, str], list[Event]] | None = None
        self._newest: str | None = None
        self.partitions: dict[tuple, spread.Partition] = {}  # the index's nodes never change here

    def evaluation(self, pod: Pod, with_fixes: bool) -> _Evaluation:
        if not pod.pending:  # a bound pod's own key matters (its node's usage leaves it out)
            return _evaluate(self.index, pod, with_fixes, self.partitions)
        view = _scheduling_view(pod)
        bucket = self._evaluations.setdefault(
            (pod.namespace, pod.owner, tuple(sorted(pod.labels.items())), with_fixes), [])
        for other, ev in bucket:
            if other == view:
                return ev
        ev = _evaluate(self.index, pod, with_fixes, self.partitions)
        bucket.append((view, ev))
        return ev

    def live_message(self, pod: Pod) -> LiveMessage | None:
        if self._events is None:
            self._events = {}
            for e in self.index.snapshot.events:
                if e.reason == FAILED_SCHEDULING and e.object_kind == "Pod":
                    self._events.setdefault((e.namespace, e.object_name), []).append(e)
        return live_message(self.index, pod, self._events.get((pod.namespace, pod.name), []))

    def newest(self) -> str:
        if self._newest is None:
            self._newest = newest_object(self.index)
        return self._newest


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
    if not doms:
        return SpreadSummary(NO_DOMAINS, base)
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
