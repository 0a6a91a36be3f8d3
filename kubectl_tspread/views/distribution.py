"""compute_distribution: per workload and constraint, the scheduler's domains, counts, minimum and skew.

Pure domain verb: ClusterIndex in, DistributionReport out. The numbers come from
engine.spread for an *incoming pod* that stands for the workload: a real pod of it (a
template lacks `pod-template-hash`, so matchLabelKeys could not be merged from it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from kubectl_tspread.engine import filters, spread, traps as trapmod
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import Pod, SpreadConstraint
from kubectl_tspread.views.targets import PodGroup

# no node makes a domain (node affinity, taints under Honor, a missing key): the workload's
# pods have nowhere to go under this constraint, whatever the skew says
STATUS_NO_DOMAINS = "NO DOMAINS"
STATUS_RANK = {"VIOLATED": 0, STATUS_NO_DOMAINS: 1, "DRIFTED": 2, "AT LIMIT": 3, "OK": 4}

# why a domain accepts nothing now although spread would allow it (DomainAcceptance.state)
DOMAIN_CORDONED = "cordoned"  # every node of the domain is cordoned
DOMAIN_TAINTED = "tainted"  # every node is cordoned or carries a taint the pod does not tolerate


@dataclass(frozen=True, slots=True)
class DomainAcceptance:
    """What a domain accepts now: spread's headroom, or 0 when no node of it takes the pod
    (cordoned, or tainted against it); `state` says why."""

    accepts_now: int
    state: str | None = None


@dataclass(slots=True)
class ConstraintReport:
    state: spread.ConstraintState
    uncounted: list[spread.UncountedPod]
    traps: list[trapmod.Trap]
    acceptance: dict[str, DomainAcceptance] = field(default_factory=dict)  # by domain value

    @property
    def constraint(self) -> SpreadConstraint:
        return self.state.constraint

    @property
    def status(self) -> str:
        """The engine's status, or NO DOMAINS when no node makes a domain at all."""
        return STATUS_NO_DOMAINS if not self.state.domains else self.state.status

    def accepts_now(self, value: str) -> DomainAcceptance:
        return self.acceptance.get(value) or DomainAcceptance(self.state.headroom(value))

    @property
    def rank(self) -> tuple:
        """Worst first: status, then DoNotSchedule before ScheduleAnyway, then the larger excess."""
        cs = self.state
        return STATUS_RANK[self.status], 0 if self.constraint.hard else 1, -(cs.skew - self.constraint.max_skew)


@dataclass(slots=True)
class TimelineRow:
    pod: str
    created: str
    node: str
    domains: dict[str, str | None]  # topologyKey -> the pod's domain (None: unbound or no label)
    counts: dict[str, dict[str, int]]  # topologyKey -> every domain's running count
    skew: dict[str, int]
    over: bool  # this pod was counted and left some constraint above its maxSkew
    # when `over` on a DoNotSchedule constraint: the scheduler never made such a placement
    # against these pods (it would have refused it), so the replay lacks something; why, as
    # a code (REPLAY_*) and its numbers
    replay_gap: "ReplayGap | None" = None


# why a replayed row is over maxSkew under DoNotSchedule (the scheduler refuses such placements)
REPLAY_DOMAINS_JOINED_LATER = "DomainsJoinedLater"  # a domain's nodes joined after this pod
REPLAY_PODS_GONE = "PodsGoneOrChanged"  # pods deleted since, or pod / node labels changed


@dataclass(frozen=True, slots=True)
class ReplayGap:
    code: str
    keys: tuple[str, ...]  # the DoNotSchedule constraints' topology keys over maxSkew
    domains: tuple[str, ...] = ()  # DomainsJoinedLater: the domains that did not exist yet


@dataclass(slots=True)
class WorkloadReport:
    kind: str
    namespace: str
    name: str
    pods: int  # pods of the workload in this constraint set (finished ones are not in the snapshot)
    incoming: Pod  # the pod whose view the numbers are
    constraints: list[ConstraintReport]
    constraint_set: int = 1  # 1-based, when the workload's pods carry several constraint sets
    constraint_sets: int = 1
    timeline: list[TimelineRow] | None = None
    pending: int = 0  # of `pods`, waiting for the scheduler (not bound, not terminating)
    running: int = 0  # of `pods`, bound to a node and not terminating

    @property
    def worst(self) -> tuple:
        if not self.constraints:
            return (9, 0, 0)
        return min(c.rank for c in self.constraints)


@dataclass(slots=True)
class DistributionReport:
    workloads: list[WorkloadReport] = field(default_factory=list)
    namespace: str | None = None
    source: str = ""

    @property
    def violated(self) -> bool:
        """True when some DoNotSchedule constraint is above its maxSkew (drives --exit-code)."""
        return any(c.status == "VIOLATED" for w in self.workloads for c in w.constraints)


def _representative(pods: Sequence[Pod]) -> Pod:
    """The newest pod: it carries the current revision's labels (pod-template-hash)."""
    return max(pods, key=lambda p: (p.created, p.name))


def _constraint_sets(index: ClusterIndex,
                     pods: Sequence[Pod]) -> list[tuple[tuple[SpreadConstraint, ...], list[Pod], Pod]]:
    """Partition pods by the constraints they carry; mid-rollout a workload may have two sets.
    Each set comes with its `_representative`, newest set first."""
    sets: dict[tuple[SpreadConstraint, ...], list[Pod]] = {}
    # pods decoded from one template mostly share one tuple object: hash each object once
    by_id: dict[int, list[Pod]] = {}
    for p in pods:
        members = by_id.get(id(p.spread))
        if members is None:
            members = by_id[id(p.spread)] = sets.setdefault(p.spread, [])
        members.append(p)
    out = []
    for own, members in sets.items():
        newest = _representative(members)
        constraints = own if own else spread.constraints_for(index, newest)
        if constraints:
            out.append((tuple(constraints), members, newest))
    out.sort(key=lambda s: s[2].created, reverse=True)
    return out


class Accepting:
    """The nodes that take a pod now as far as cordons and taints go (NodeUnschedulable and
    TaintToleration pass), remembered per tolerations: the workloads of a report share a
    handful of them, and a hostname constraint has a domain per node."""

    def __init__(self, index: ClusterIndex):
        self.index = index
        self._memo: dict[tuple, frozenset[str]] = {}
        # (id of a partition's node -> domain map, id of `nodes`' answer) -> (both, the
        # refusing domains): the answer reads only which nodes make which domain, which the
        # constraints of one partition share (hundreds of hostname spreads, 5,000 domains each)
        self._refusing: dict[tuple[int, int], tuple[object, frozenset[str], dict]] = {}

    def refusing(self, cs: spread.ConstraintState, takes: frozenset[str],
                 cordoned: frozenset[str]) -> dict[str, "DomainAcceptance"]:
        """domain_acceptance(cs, takes, cordoned), shared by the constraints whose domains come
        from one partition (`cordoned` is the report's: the index does not change meanwhile).
        Read-only: every report holding it shares it."""
        key = (id(cs.node_domain), id(takes))
        hit = self._refusing.get(key)
        if hit is None or hit[0] is not cs.node_domain or hit[1] is not takes:
            hit = self._refusing[key] = (cs.node_domain, takes, domain_acceptance(cs, takes, cordoned))
        return hit[2]

    def nodes(self, pod: Pod) -> frozenset[str]:
        key = pod.tolerations
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = frozenset(
                name for name, node in self.index.nodes.items()
                if filters.unschedulable_failure(pod, node) is None and filters.taint_failure(pod, node) is None)
        return found


def domain_acceptance(cs: spread.ConstraintState, takes: frozenset[str],
                      cordoned: frozenset[str]) -> dict[str, DomainAcceptance]:
    """Per domain whose nodes all refuse the pod now: accepts 0, and why (cordoned when every
    node is cordoned). zones a=4 b=1 c=0 (c cordoned), maxSkew 1 → c: headroom 2, accepts 0."""
    out = {}
    for d in cs.domains.values():
        # isdisjoint in C: a hostname constraint has a domain per node, and every workload asks
        if not d.nodes or not takes.isdisjoint(d.nodes):
            continue
        state = DOMAIN_CORDONED if cordoned.issuperset(d.nodes) else DOMAIN_TAINTED
        out[d.value] = DomainAcceptance(0, state)
    return out


def analyse_group(index: ClusterIndex, group: PodGroup, with_timeline: bool = False,
                  partitions: dict | None = None, cordoned: frozenset[str] | None = None,
                  accepting: Accepting | None = None, marked: dict | None = None) -> list[WorkloadReport]:
    """`partitions` shares which nodes make which domains between the workloads of one
    report, `cordoned` the names of the cordoned nodes (`traps.cordoned_nodes`), `marked` the
    nodes an autoscaler tainted (`traps.autoscaler_marked`) and `accepting` the nodes that
    take a pod now: the index does not change while a report is built."""
    sets = _constraint_sets(index, group.pods)
    if cordoned is None:
        cordoned = trapmod.cordoned_nodes(index)
    if accepting is None:
        accepting = Accepting(index)
    reports = []
    for i, (constraints, members, incoming) in enumerate(sets, start=1):
        state = spread.compute(index, incoming, constraints, partitions=partitions)
        # why each pod is or is not counted: the traps and the report both need it
        reasons = [cs.uncounted_reasons(group.pods) for cs in state.constraints]
        counted = [spread.counted_pods(group.pods, r) for r in reasons]
        found = trapmod.detect_traps(index, state, group.pods, counted, cordoned, marked)
        takes = accepting.nodes(incoming)
        constraint_reports = [
            ConstraintReport(cs, spread.uncounted_pods(group.pods, reasons[pos]), found.get(pos, []),
                             accepting.refusing(cs, takes, cordoned))
            for pos, cs in enumerate(state.constraints)
        ]
        wr = WorkloadReport(group.kind, group.namespace, group.name, len(members), incoming,
                            constraint_reports, i, len(sets),
                            pending=sum(1 for p in members if p.pending),
                            running=sum(1 for p in members if p.node_name and not p.terminating))
        if with_timeline:
            wr.timeline = build_timeline(group.pods, constraint_reports, index)
        reports.append(wr)
    return reports


def compute_distribution(index: ClusterIndex, groups: Sequence[PodGroup], with_timeline: bool = False,
                         namespace: str | None = None) -> DistributionReport:
    """One WorkloadReport per group and constraint set; groups without constraints are left out."""
    workloads: list[WorkloadReport] = []
    # hundreds of workloads share a handful of (topologyKey, node rules) shapes: the walk
    # over every node happens once per shape, not once per constraint
    partitions: dict = {}
    cordoned = trapmod.cordoned_nodes(index)
    accepting = Accepting(index)
    marked = trapmod.autoscaler_marked(index)
    for g in groups:
        workloads.extend(analyse_group(index, g, with_timeline, partitions, cordoned, accepting, marked))
    return DistributionReport(workloads, namespace, index.snapshot.source)


def build_timeline(pods: Sequence[Pod], constraints: Sequence[ConstraintReport],
                   index: ClusterIndex) -> list[TimelineRow]:
    """Replay the workload's pods in creation order, counting each where the scheduler counts it.

    Example: zones a, b, c; pods created on a, a, b → skews after each: 1, 2, 1 (maxSkew 1:
    the second row stands out). Every domain the constraint has appears in `counts`, zeros included.
    """
    running = [{d: 0 for d in c.state.domains} for c in constraints]
    uncounted = [{(u.namespace, u.name) for u in c.uncounted} for c in constraints]
    rows = []
    for p in sorted(pods, key=lambda p: (p.created, p.name)):
        node = index.node(p.node_name) if p.node_name else None
        domains: dict[str, str | None] = {}
        counts: dict[str, dict[str, int]] = {}
        skew: dict[str, int] = {}
        over = False
        hard_over: list[str] = []
        late: set[str] = set()
        for c, run, skip in zip(constraints, running, uncounted):
            key = c.constraint.topology_key
            dom = c.state.node_domain.get(p.node_name) if p.node_name else None
            counted = dom is not None and (p.namespace, p.name) not in skip
            if counted:
                run[dom] += 1
            domains[key] = dom if dom is not None else (node.labels.get(key) if node else None)
            counts[key] = dict(run)
            s = _skew(run, c.constraint.min_domains)
            skew[key] = s
            # only a pod that was counted can be the placement that pushed skew over
            if counted and s > c.constraint.max_skew:
                over = True
                if c.constraint.hard:
                    hard_over.append(key)
                    late.update(_joined_later(c, p, index, run))
        gap = None
        if hard_over:
            gap = (ReplayGap(REPLAY_DOMAINS_JOINED_LATER, tuple(hard_over), tuple(sorted(late))) if late
                   else ReplayGap(REPLAY_PODS_GONE, tuple(hard_over)))
        rows.append(TimelineRow(p.name, p.created, p.node_name, domains, counts, skew, over, gap))
    return rows


def _joined_later(c: ConstraintReport, pod: Pod, index: ClusterIndex, run: dict[str, int]) -> list[str]:
    """The domains whose every node was created after `pod`, when leaving them out brings the
    replayed skew back within maxSkew: they did not exist when the scheduler placed the pod."""
    if not pod.created:
        return []
    later = [v for v, d in c.state.domains.items()
             if d.nodes and all(index.nodes[n].created > pod.created for n in d.nodes if n in index.nodes)]
    if not later:
        return []
    then = {v: n for v, n in run.items() if v not in later}
    return later if _skew(then, c.constraint.min_domains) <= c.constraint.max_skew else []


def _skew(counts: dict[str, int], min_domains: int) -> int:
    """The skew of the domain counts `counts` (spread.minimum's globalMin, with minDomains)."""
    global_min, _ = spread.minimum(counts.values(), len(counts), min_domains)
    return spread.skew_of(counts.values(), global_min)
