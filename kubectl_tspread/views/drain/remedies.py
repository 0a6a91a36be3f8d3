"""Remedies, verified: each candidate edits a copy of the snapshot (or the plan options) and the whole plan is made
again. A remedy is kept only when the re-plan lacks the finding (same code and workload); the problem may move
elsewhere, and `makes_safe` says whether the re-planned drain is safe.

Candidates, in trial order: for spread findings, delete the drained Node objects once empty; stage the cordons (under
nodeTaintsPolicy Honor a node cordoned early takes its running pods out of the counts); nodeTaintsPolicy: Honor; the
least maxSkew raise of 1..3 that works; for these and NoCapacity, add a node in a domain. PdbBlocks: let the PDB allow
one disruption; MultiplePdbs: remove one of them; a refusal: the kubectl flag that lifts it.

A re-plan costs as much as the plan, so a drain of T targets judges at most `replan_allowance(T)` distinct candidates,
in the order of the findings; one naming no workload serves every finding it clears. None is offered unverified.
Re-plans do not backtrack (REMEDY_SEARCH_BUDGET 0): a remedy is judged by the heuristic's order, the one its plan would
use. DeleteDrainedNodes is judged without one when forced.py proves every spread finding's constraint broken in every
order with the drained nodes deleted too (`judged_by_proof`): it clears none of them."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any, Callable, Iterator, Sequence

from kubectl_tspread.model.plan import (
    CORDONED_DOMAIN_TRAP, DAEMONSET_POD, HOSTNAME_SPREAD_FULL, INFO, LOCAL_STORAGE, MULTIPLE_PDBS,
    PDB_BLOCKS, SKEW_EXCEEDED, SPREAD_BLOCKED, UNMANAGED_POD, DrainPlan, Finding, PlanOptions, Remedy, Verdict,
)
from kubectl_tspread.views.drain.workers import Handle
from kubectl_tspread.views.drain.remedy_effects import finding_namespace, side_effects, then_finding, verifies
from kubectl_tspread.views.drain.pdb import pdb_key
from kubectl_tspread.views.drain.pods import workload_ref
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import terms_match
from kubectl_tspread.model import (
    ADD_NODE, HONOR, HOSTNAME_KEY, RAISE_MAX_SKEW, SET_NODE_TAINTS_POLICY_HONOR, STAGE_CORDONS, ZONE_KEY, Node,
    Snapshot, new_node_like,
)

_SPREAD_CODES = (CORDONED_DOMAIN_TRAP, HOSTNAME_SPREAD_FULL, SPREAD_BLOCKED, SKEW_EXCEEDED)
_FLAG_FIELD = {UNMANAGED_POD: ("force", "--force"), LOCAL_STORAGE: ("delete_emptydir_data", "--delete-emptydir-data"),
               DAEMONSET_POD: ("ignore_daemonsets", "--ignore-daemonsets")}
MAX_SKEW_TRIES = 3
MAX_DOMAINS_TRIED = 3
REMEDY_SEARCH_BUDGET = 0
REMEDY_REPLANS = 8
MIN_REMEDY_REPLANS = 2
REMEDY_STEPS = 400

Candidate = tuple[str, dict[str, Any], Callable[[], Snapshot], PlanOptions]
Keyed = tuple[str, str, dict, Callable[[], Snapshot], PlanOptions]  # cache key, then a Candidate with re-plan options
Wanted = tuple[str, str, Callable[[], Snapshot], PlanOptions]  # (cache key, action, snapshot edit, re-plan options)


def attach_remedies(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, plan: DrainPlan,
                    findings: list[Finding], replan: Callable[[Snapshot, PlanOptions], Any],
                    ready: dict[str, Handle] | None = None,
                    on_replan: Callable[[int], None] | None = None) -> list[Finding]:
    """Each finding with the candidates that clear it. `replan(snapshot, options)` is plan.py's re-plan without
    remedies (this module does not import plan.py, which imports it); its findings may omit the info-only order
    finding, which no remedy is judged by. `ready`: re-plans under way on plan_drain's workers, by candidate key."""
    cache: dict[str, Any] = {}
    allowance = replan_allowance(len(targets))
    proven = judged_by_proof(snapshot, targets, options, plan.deletion_fails, findings)
    workloads = _Lookups(snapshot)
    if ready and any(f.code in _SPREAD_CODES for f in findings):  # while the re-plans run: side effects read it
        workloads.index_all()
    out = []
    for f in findings:
        if f.severity == INFO:
            out.append(f)
            continue
        kept: list[Remedy] = []
        unchecked: list[Remedy] = []
        failed = 0
        tried_actions: set[str] = set()
        for key, action, params, snap, opts in _keyed(snapshot, targets, options, plan, f, workloads):
            if action in tried_actions and action in (RAISE_MAX_SKEW, ADD_NODE):
                continue  # the smallest working raise / the first working domain is enough
            replanned = cache.get(key)
            if replanned is None:
                if len(cache) >= allowance:
                    # never offered as a fix, never folded into "no remedy": reported as not checked
                    if not (action in (RAISE_MAX_SKEW, ADD_NODE) and any(u.action == action for u in unchecked)):
                        unchecked.append(Remedy(action, params, False, False, "",
                                                side_effects(action, params, f, plan, workloads)))
                    continue
                child = ready.pop(key, None) if ready else None
                replanned = proven.get(key) or (child.result() if child is not None else None)
                if replanned is None:
                    replanned = replan(snap(), opts)
                cache[key] = replanned
                if on_replan is not None:
                    on_replan(len(cache.keys() - proven.keys()))
            cleared = not any(g.code == f.code and g.workload == f.workload
                              for g in replanned.findings if g.severity != INFO)
            if cleared and (action != STAGE_CORDONS or replanned.safe):  # staged cordons move pods twice
                kept.append(Remedy(action, params, True, replanned.safe, verifies(f, replanned),
                                   side_effects(action, params, f, plan, workloads, replanned),
                                   then_finding(replanned)))
                tried_actions.add(action)
            else:
                failed += 1
        # running pods untouched first, then template edits, then destructive actions; plan-safe first within each
        out.append(replace(f, remedies=tuple(sorted(kept, key=lambda r: (r.tier, not r.makes_safe))),
                           unchecked=tuple(unchecked), failed=failed))
    return out


def first_replans(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, plan: DrainPlan | None,
                  findings: Sequence[Finding], forced: bool = False, fails: frozenset = frozenset()) -> list[Wanted]:
    """attach_remedies' first re-plans: its first `replan_allowance` distinct candidates, of which it may skip some,
    less those judged_by_proof. `forced`: forced.py proved no order safe, `fails` as DrainPlan.deletion_fails (`plan`
    says both when given)."""
    workloads, out = _Lookups(snapshot), {}  # a candidate judged by proof takes its place in the allowance too
    for key, action, _, snap, opts in (k for f in findings if f.severity != INFO
                                       for k in _keyed(snapshot, targets, options, plan, f, workloads, forced)):
        if len(out) >= replan_allowance(len(targets)):
            break
        out.setdefault(key, (key, action, snap, opts))
    proven = judged_by_proof(snapshot, targets, options, plan.deletion_fails if plan is not None else fails, findings)
    return [w for key, w in out.items() if key not in proven]


def judged_by_proof(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, fails: frozenset,
                    findings: Sequence[Finding]) -> dict[str, Verdict]:
    """The DeleteDrainedNodes candidate's verdict when forced.py proved the constraint of every spread finding broken
    even with the drained nodes deleted (`fails`: DrainPlan.deletion_fails): each finding stays. Else {}."""
    spread = [f for f in findings if f.code in _SPREAD_CODES and f.severity != INFO]
    if options.delete_drained_nodes or not spread or \
            any((finding_namespace(f), f.workload, f.params.get("topologyKey")) not in fails for f in spread):
        return {}
    return {_keyed_one(options, _delete_drained(snapshot, targets, options))[0]: Verdict(False, tuple(spread))}


def deleting_replans(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions) -> list[Wanted]:
    """attach_remedies' first re-plan in a trap forced.py proves, whose strandings lead the findings: a spread finding's
    first candidate deletes the drained nodes. plan.py starts it once the proof comes, unless the proof shows deleting
    them keeps every trap (judged_by_proof)."""
    if options.delete_drained_nodes:
        return []
    key, action, _, snap, opts = _keyed_one(options, _delete_drained(snapshot, targets, options))
    return [(key, action, snap, opts)]


def _delete_drained(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions) -> Candidate:
    return ("DeleteDrainedNodes", {"nodes": list(targets)}, lambda: snapshot,
            replace(options, delete_drained_nodes=True))


def _keyed(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, plan: DrainPlan | None,
           f: Finding, workloads: "_Lookups", forced: bool = False) -> Iterator[Keyed]:
    for candidate in candidates(snapshot, targets, options, plan, f, workloads, forced):
        yield _keyed_one(options, candidate)


def _keyed_one(options: PlanOptions, candidate: Candidate) -> Keyed:
    action, params, snap, opts = candidate
    return (repr((action, sorted(params.items()))), action, params, snap,
            replace(opts, verify_remedies=False, search_budget=min(options.search_budget, REMEDY_SEARCH_BUDGET)))


def replan_allowance(targets: int) -> int:
    """Distinct re-plans to verify a drain's remedies: about REMEDY_STEPS simulated steps in all (a re-plan simulates
    one or more per target; a zone drain has dozens of findings of up to eight candidates), at least MIN_REMEDY_REPLANS.

    >>> replan_allowance(1), replan_allowance(50), replan_allowance(167), replan_allowance(1667)
    (8, 8, 2, 2)
    """
    return max(MIN_REMEDY_REPLANS, min(REMEDY_REPLANS, REMEDY_STEPS // max(1, targets)))


def candidates(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, plan: DrainPlan | None,
               f: Finding, workloads: "_Lookups", forced: bool = False) -> Iterator[Candidate]:
    """Each candidate, copying the snapshot only when called: a zone drain verifies few of its hundreds of findings."""
    if f.code in _FLAG_FIELD:
        field_name, flag = _FLAG_FIELD[f.code]
        yield ("Flag", {"flag": flag}, lambda: snapshot,
               replace(options, flags=replace(options.flags, **{field_name: True})))
        return
    if f.code == PDB_BLOCKS and not f.params.get("budgetLost"):
        for key in f.params.get("pdbs", ()):
            yield ("RaisePdbBudget", {"pdb": key, "disruptionsAllowed": 1},
                   lambda key=key: _with_pdb_budget(snapshot, key), options)
        return
    if f.code == MULTIPLE_PDBS:
        for key in f.params.get("pdbs", ()):
            yield ("RemovePdb", {"pdb": key}, lambda key=key: replace(
                snapshot, pdbs=tuple(b for b in snapshot.pdbs if pdb_key(b) != key)), options)
        return
    key, namespace = f.params.get("topologyKey"), finding_namespace(f)
    if f.code in _SPREAD_CODES and key:
        if not options.delete_drained_nodes:
            yield _delete_drained(snapshot, targets, options)
        # staging needs several targets (one is cordoned at its step anyway) and no forced.py trap, which it keeps
        if not options.stage_cordons and len(targets) > 1 and not (plan.no_safe_order if plan is not None else forced):
            yield STAGE_CORDONS, {"nodes": list(targets)}, lambda: snapshot, replace(options, stage_cordons=True)

        def edited(**changes) -> Callable[[], Snapshot]:
            return lambda: _edit_constraint(snapshot, workloads.keys(namespace, f.workload), key, **changes)

        yield (SET_NODE_TAINTS_POLICY_HONOR, {"workload": f.workload, "topologyKey": key},
               edited(node_taints_policy=HONOR), options)
        base = int(f.params.get("maxSkew", 1))
        for s in range(base + 1, base + 1 + MAX_SKEW_TRIES):
            yield (RAISE_MAX_SKEW, {"workload": f.workload, "topologyKey": key, "old": base, "maxSkew": s},
                   edited(max_skew=s), options)
    for domain_key, value, like in _node_domains(snapshot, targets, f, workloads):
        node = workloads.new_node(like)
        yield (ADD_NODE, {"topologyKey": domain_key, "domain": value, "like": like.name, "name": node.name},
               lambda node=node: replace(snapshot, nodes=snapshot.nodes + (node,)), options)


class _Lookups:
    """Snapshot lookups, once per attach_remedies: pod keys per (namespace, workload), through an index without pods,
    and the node to copy into each domain (a zone drain's hundreds of findings try the same few zones)."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.index = ClusterIndex(replace(snapshot, pods=()))
        self.memo: dict[tuple[str, str | None], set[str]] = {}  # pod keys per (namespace, workload)
        self.pods_in: dict[str, list] | None = None  # the pods of each namespace not yet in `memo`
        self.like: dict[tuple[str, str], Node | None] = {}
        self.pinned: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.added: dict[str, Node] = {}
        self.left: dict[tuple[str, ...], tuple[DrainPlan, tuple[str, ...]]] = {}

    def keys(self, namespace: str, workload: str | None) -> frozenset[str]:
        if self.pods_in is None:  # grouped once, then each namespace's by workload: a zone drain asks for hundreds
            self.pods_in = {}
            for p in self.snapshot.pods:
                self.pods_in.setdefault(p.namespace, []).append(p)
        for p in self.pods_in.pop(namespace, ()):
            self.memo.setdefault((namespace, workload_ref(self.index, p)), set()).add(p.key)
        return frozenset(self.memo.get((namespace, workload), ()))

    def index_all(self) -> None:
        """What keys() reads, for every namespace at once."""
        for namespace in {p.namespace for p in self.snapshot.pods}:
            self.keys(namespace, None)

    def left_on(self, plan: DrainPlan | None, nodes: Sequence[str]) -> tuple[str, ...]:
        """Pods the plan leaves on `nodes` (PDB-blocked, refused) that deleting those Nodes loses for good; those that
        go with their node (model.Pod.goes_with_node) are not counted, as in why-pending's DeleteNodes."""
        got = self.left.get(key := tuple(nodes)) if plan is not None else (plan, ())
        if got is None or got[0] is not plan:
            on = set(nodes)
            left = dict.fromkeys(f"{k.namespace}/{k.name}" for s in plan.steps for k in s.skipped if k.node in on)
            owned = {p.key for p in self.snapshot.pods if p.node_name in on and p.goes_with_node} if left else ()
            got = self.left[key] = (plan, tuple(k for k in left if k not in owned))
        return got[1]

    def pinned_volumes(self, nodes: Sequence[str]) -> tuple[str, ...]:
        """Volumes only `nodes` satisfy (local ones), left with their pods without a node when those Nodes go."""
        key = tuple(nodes)
        got = self.pinned.get(key)
        if got is None:
            on = set(nodes)
            by_host: dict[str, list[Node]] = {}
            for n in self.snapshot.nodes:
                by_host.setdefault(n.labels.get(HOSTNAME_KEY, n.name), []).append(n)
            memo: dict = {}  # per node affinity: volumes share them
            out = []
            for pv in self.snapshot.pvs:
                if not pv.node_affinity:
                    continue
                pinned = memo.get(pv.node_affinity)
                if pinned is None:
                    named = _named_hosts(pv.node_affinity)
                    candidates = self.snapshot.nodes if named is None else \
                        [n for h in named for n in by_host.get(h, ())]
                    matching = [n.name for n in candidates if terms_match(pv.node_affinity, n)]
                    pinned = memo[pv.node_affinity] = bool(matching) and all(m in on for m in matching)
                if pinned:
                    out.append(f"{pv.name} (claim {pv.claim})" if pv.claim else pv.name)
            got = self.pinned[key] = tuple(out)
        return got

    def new_node(self, like: Node) -> Node:
        """The node an AddNode candidate adds like `like` (model.new_node_like), one per template."""
        got = self.added.get(like.name)
        if got is None:
            got = self.added[like.name] = new_node_like(like, self.index.nodes.keys())
        return got

    def template_node(self, targets: Sequence[str], key: str, value: str) -> Node | None:
        """_template_node, once per (key, value): the targets are the same for every finding."""
        if (key, value) not in self.like:
            self.like[(key, value)] = _template_node(self.snapshot, targets, key, value)
        return self.like[(key, value)]


def _edit_constraint(snapshot: Snapshot, mine: frozenset[str], key: str, **changes) -> Snapshot:
    return replace(snapshot, pods=tuple(
        replace(p, spread=tuple(replace(c, **changes) if c.topology_key == key else c for c in p.spread))
        if p.key in mine else p for p in snapshot.pods))


def _with_pdb_budget(snapshot: Snapshot, key: str) -> Snapshot:
    return replace(snapshot, pdbs=tuple(
        replace(b, disruptions_allowed=max(1, b.disruptions_allowed), max_unavailable=1, min_available=None)
        if pdb_key(b) == key else b for b in snapshot.pdbs))


def _node_domains(snapshot: Snapshot, targets: Sequence[str], f: Finding,
                  lookups: _Lookups) -> Iterator[tuple[str, str, Node]]:
    """(key, domain, node to copy) to try adding a node in, at most MAX_DOMAINS_TRIED."""
    key, dist = f.params.get("topologyKey") or ZONE_KEY, f.params.get("distribution") or {}
    trapped = list(f.params.get("cordonedDomains") or ())
    if key == HOSTNAME_KEY:
        key, dist, trapped = ZONE_KEY, {}, []  # each new node is its own hostname domain: try the zones that exist
    values = trapped + sorted((v for v in dist if v not in trapped), key=lambda v: (dist[v], v))
    if not values:
        values = sorted({n.labels[key] for n in snapshot.nodes if key in n.labels})
    found = ((key, v, like) for v in values if (like := lookups.template_node(targets, key, v)) is not None)
    yield from itertools.islice(found, MAX_DOMAINS_TRIED)


def _template_node(snapshot: Snapshot, targets: Sequence[str], key: str, value: str) -> Node | None:
    drained = set(targets)  # a tuple would be walked once per node
    return min((n for n in snapshot.nodes if n.labels.get(key) == value), default=None,
               key=lambda n: (n.name in drained, -n.allocatable.get("cpu", 0), n.name))


def _named_hosts(terms) -> set[str] | None:
    """The hostnames a node affinity allows when every term requires `kubernetes.io/hostname In (…)`, else None."""
    out: set[str] = set()
    for t in terms:
        hosts = [r.values for r in t.match_expressions if r.key == HOSTNAME_KEY and r.op == "In"]
        if not hosts:
            return None
        out.update(hosts[0])
    return out

