"""drain-safe's planner: pure and read-only, a snapshot in, a DrainPlan out.

Step 1 cordons every target before its first eviction, as `kubectl drain a b c` does, so no replacement lands on a node
a later step drains (PlanOptions.stage_cordons, the StageCordons remedy, cordons each step's nodes with it instead).
`--execute` re-plans from live state with the same call (cli/execute.py): cordoned targets stay cordoned, pods
terminating on the targets count as evicted (their Pending replacements are placed first: `plan.settled`), and only
running pods are planned, so a rerun continues where an interrupted one stopped.

Pipeline: kubectl's pod rules (pods.py) → PDB coverage (pdb.py) → every explicit constraint of each affected workload,
judged through a probe pod → the order search (search.py) over step simulations (steps.py, placement.py, simulate.py) →
findings and verified remedies (findings.py, remedies.py), re-planned on the caller's workers (workers.py) or here."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable, Sequence

from kubectl_tspread.views.drain import remedies
from kubectl_tspread.views.drain import pdb as pdbmod
from kubectl_tspread.views.drain.findings import build_findings, order_finding, plan_findings, stranded_finding
from kubectl_tspread.views.drain.workers import Handle, Workers
from kubectl_tspread.model.plan import CHECK_ORDER, MULTIPLE_PDBS, PDB_BLOCKS, SIMULATE, VERIFY, DrainPlan, \
    Eviction, Finding, PlanOptions, PlanProgress, Step, Stranded, Verdict
from kubectl_tspread.views.drain.core.placement import Placer
from kubectl_tspread.views.drain.pods import ALREADY_EVICTED, EVICT, REFUSE, PodDecision, classify_all, \
    kubectl_errors, kubectl_warnings, probe_pod, workload_ref
from kubectl_tspread.views.drain.core.search import Search
from kubectl_tspread.views.drain.core.simulate import SimCluster, spread_key_of
from kubectl_tspread.views.drain.core.steps import Context, Tracked, World, run_batch
from kubectl_tspread.model.errors import NotFoundError, UsageError
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import Pdb, Snapshot


def _node_not_found(snapshot: Snapshot, name: str) -> NotFoundError:
    return NotFoundError(f'node "{name}" not found ({snapshot.source or "snapshot"}); '
                         f"list the nodes with: kubectl get nodes")


def resolve_targets(snapshot: Snapshot, names: Sequence[str] = (), selector: Selector | None = None,
                    domain: tuple[str, str] | None = None) -> tuple[str, ...]:
    """Node names in the order given, then `-l` and `--domain` matches by name; duplicates dropped."""
    if not names and selector is None and domain is None:
        raise UsageError("name the nodes to drain: NODE..., -l SELECTOR or --domain KEY=VALUE")
    out: list[str] = []
    for name in names:
        if snapshot.node(name) is None:
            raise _node_not_found(snapshot, name)
        out.append(name)
    for what, pred in (("-l " + str(selector), selector.matches if selector is not None else None),
                       (f"--domain {domain[0]}={domain[1]}" if domain else "",
                        (lambda labels: labels.get(domain[0]) == domain[1]) if domain else None)):
        if pred is None:
            continue
        matched = sorted(n.name for n in snapshot.nodes if pred(n.labels))
        if not matched:
            raise NotFoundError(f"no node matches {what} ({snapshot.source or 'snapshot'}); "
                                f"check the labels with: kubectl get nodes --show-labels")
        out.extend(matched)
    return tuple(dict.fromkeys(out))


def _tracked(sim: SimCluster, decisions: Iterable[PodDecision], workload_of: dict) -> list[Tracked]:
    """Each explicit constraint of the replaced pods, once per workload and merged selector (two revisions under
    `matchLabelKeys: [pod-template-hash]` are two), limited to maxSkew, or to the pre-drain skew a hard one exceeds."""
    seen: set[tuple] = set()
    judged: set[tuple] = set()  # (workload, namespace, spread key): pods alike make the same state
    out = []
    for d in decisions:
        if d.action not in (EVICT, ALREADY_EVICTED) or not d.replaced or not d.pod.spread:
            continue
        workload = workload_of.get(d.pod.key) or f"Pod/{d.pod.name}"
        alike = (workload, d.pod.namespace, spread_key_of(d.pod))
        if alike in judged:
            continue
        judged.add(alike)
        probe = probe_pod(d.pod)
        for i, cs in enumerate(sim.spread_state(probe).constraints):
            k = (workload, d.pod.namespace, i, cs.constraint, str(cs.selector))
            if k in seen:
                continue
            seen.add(k)
            limit = max(cs.constraint.max_skew, cs.skew) if cs.constraint.hard else cs.constraint.max_skew
            out.append(Tracked(workload, probe, i, limit))
    return out


def build_context(sim: SimCluster, targets: Sequence[str], options: PlanOptions, verdict_only: bool = False) -> Context:
    index = sim.index
    by_node = index.pods_by_node
    decisions = {n: classify_all(sorted(by_node.get(n, ()), key=lambda p: p.key), options.flags) for n in targets}
    flat = [d for n in targets for d in decisions[n]]
    workload_of = {d.pod.key: workload_ref(index, d.pod) for d in flat}
    pdbs = {pdbmod.pdb_key(b): b for b in sim.base.pdbs}
    pod_pdbs, blocked = _pdb_coverage(pdbs, flat)
    return Context(tuple(targets), decisions, workload_of, pod_pdbs, pdbs, _tracked(sim, flat, workload_of),
                   blocked, options.delete_drained_nodes, options.stage_cordons, verdict_only)


def _pdb_coverage(pdbs: dict, flat: Iterable[PodDecision]) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The PDBs covering each evicted pod, and the pods no order evicts: covered by more than one PDB (the Eviction API
    refuses them), or by one allowing no disruption."""
    pod_pdbs, blocked = {}, {}
    in_namespace: dict[str, list[Pdb]] = {}  # a pod is only ever covered by its namespace's
    for b in pdbs.values():
        in_namespace.setdefault(b.namespace, []).append(b)
    # (namespace, id(labels)) -> (the labels, the PDBs covering them): a workload's pods share one labels map
    seen: dict[tuple[str, int], tuple[object, tuple[str, ...]]] = {}
    for d in flat:
        if d.action != EVICT:
            continue
        pod = d.pod
        hit = seen.get((pod.namespace, id(pod.labels)))
        if hit is not None and hit[0] is pod.labels:
            keys = hit[1]
        else:
            keys = tuple(pdbmod.pdb_key(b) for b in pdbmod.covering(pod, in_namespace.get(pod.namespace, ())))
            seen[(pod.namespace, id(pod.labels))] = (pod.labels, keys)
        pod_pdbs[pod.key] = keys
        if len(keys) > 1:
            blocked[pod.key] = MULTIPLE_PDBS
        elif keys and pdbs[keys[0]].disruptions_allowed <= 0:
            blocked[pod.key] = PDB_BLOCKS
    return pod_pdbs, blocked


def _blocked(ctx: Context) -> Iterable[tuple[str, PodDecision, str]]:
    """(node, decision, why) of each pod no order evicts (Context.blocked), in the targets' order."""
    return ((n, d, ctx.blocked[d.pod.key]) for n in ctx.targets for d in ctx.decisions[n] if d.pod.key in ctx.blocked)


def _blocked_findings(ctx: Context) -> list[Finding]:
    """The PDB-blocked pods' findings, known before the search (the plan lists them after its strandings)."""
    found: dict[tuple[str, str | None], tuple[str, ...]] = {}
    for _, d, code in _blocked(ctx):
        found.setdefault((code, ctx.workload_of.get(d.pod.key)), ctx.pod_pdbs[d.pod.key])
    return [Finding(code, workload, (), None, {"pdbs": list(keys)}) for (code, workload), keys in found.items()]


def _settle(ctx: Context, world: World) -> list[Eviction]:
    """Place the affected workloads' Pending pods (an interrupted run's replacements) first, as the scheduler would."""
    affected = {w for w in ctx.workload_of.values() if w}
    index = world.sim.index
    out = []
    for p in sorted(world.sim.pending(), key=lambda p: (-p.priority, p.key)):
        if workload_ref(index, p) not in affected:
            continue
        pl = world.placer.place(world.sim, p)
        if pl.node is not None:
            world.sim.bind(p, pl.node)
        out.append(Eviction(p.namespace, p.name, "", workload_ref(index, p), True, pl.node, dict(pl.accepting),
                            tied_nodes=pl.tied))
    return out


def _new_world(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, sim: SimCluster | None = None,
               placer: Placer | None = None, ctx: Context | None = None,
               verdict_only: bool = False) -> tuple[Context, World]:
    """The context (`ctx` when already built on `sim`) and the root world of a plan (Context.verdict_only)."""
    sim = SimCluster(snapshot) if sim is None else sim
    ctx = build_context(sim, targets, options, verdict_only) if ctx is None else ctx
    remaining = {n: [d.pod for d in ctx.decisions[n] if d.action == EVICT and d.pod.key not in ctx.blocked]
                 for n in targets}
    return ctx, World(sim, pdbmod.Budgets.from_pdbs(snapshot.pdbs), remaining, placer or Placer())


def _blocked_stranded(ctx: Context, steps: Sequence[Step]) -> list[Stranded]:
    first_step = {n: s.number for s in reversed(steps) for n in s.nodes}  # the earliest step naming the node
    out = []
    for n, d, why in _blocked(ctx):
        keys = list(ctx.pod_pdbs.get(d.pod.key, ()))
        details: dict = {"node": n, "pdbs": keys}
        if why == PDB_BLOCKS:
            details["budgets"] = [pdbmod.budget_state(ctx.pdbs[k]) for k in keys]
        out.append(Stranded(d.pod.namespace, d.pod.name, ctx.workload_of.get(d.pod.key), first_step.get(n, 0), why,
                            details))
    return out


def plan_drain(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions = PlanOptions(),
               on_progress: PlanProgress | None = None, before_remedies: Callable[[DrainPlan], None] | None = None,
               workers: Workers | None = None) -> DrainPlan:
    """Plan the drain of `targets`, as resolve_targets gives them. `before_remedies` gets the plan, findings not yet
    remedied, while their re-plans run. `workers` (cli/workers.py's forks, the cyclic collector off: cli/gcpause.py)
    compute those and the given order's check meanwhile; None computes each here. The plan is the same either way."""
    missing = [t for t in targets if snapshot.node(t) is None]
    if missing:
        raise _node_not_found(snapshot, missing[0])
    planning = _Planning(snapshot, targets, options, on_progress or _silent, workers)
    try:
        return planning.run(before_remedies)
    finally:
        planning.cancel()


def _silent(phase: str, done: int | None, total: int | None) -> None:
    pass


class _Planning:
    """One plan_drain call: the plan, and its remedies' re-plans started on workers once what they need is known."""

    def __init__(self, snapshot: Snapshot, targets: Sequence[str], options: PlanOptions,
                 on_progress: PlanProgress, workers: Workers | None):
        self.snapshot, self.targets, self.options, self.on_progress = snapshot, targets, options, on_progress
        self.workers = workers
        self.sim, self.placer = SimCluster(snapshot), Placer()
        self.pristine: SimCluster | None = None  # remedies re-plan on forks of it, made once the context exists
        self.children: dict[str, Handle] = {}
        self.order_child: list[Handle] = []
        self.ctx: Context | None = None
        self.fails: frozenset = frozenset()  # the proof's DrainPlan.deletion_fails, told before the first step

    def cancel(self) -> None:
        for child in [*self.children.values(), *self.order_child]:
            child.cancel()

    def run(self, before_remedies: Callable[[DrainPlan], None] | None) -> DrainPlan:
        snapshot, targets, options, on_progress = self.snapshot, self.targets, self.options, self.on_progress
        forking = self.workers is not None
        self.ctx = build_context(self.sim, targets, options)
        if options.verify_remedies:  # with the spread states the context made: re-plans start from them
            self.pristine = self.sim.copy()
        on_strand = self.first_strand if options.verify_remedies and forking else None
        total = len(targets)
        on_progress(SIMULATE, 0, total)
        plan, refused = _plan(snapshot, targets, options, self.sim, self.placer, self.ctx,
                              self.proof if forking else None, on_strand,
                              None if on_progress is _silent else lambda done: on_progress(SIMULATE, done, total))
        findings = plan_findings(plan, refused, snapshot)
        if plan.safe:
            findings += order_finding(plan, self.given_safe)
        if options.verify_remedies and not plan.safe:
            findings = self.remedies(plan, findings, before_remedies)
        return replace(plan, findings=tuple(findings))

    def remedies(self, plan: DrainPlan, findings: list[Finding],
                 before_remedies: Callable[[DrainPlan], None] | None) -> list[Finding]:
        snapshot, targets, options, on_progress = self.snapshot, self.targets, self.options, self.on_progress
        forking = self.workers is not None
        wanted = remedies.first_replans(snapshot, targets, options, plan, findings) \
            if forking or on_progress is not _silent else []
        if forking:
            self.start_only(wanted)
        if wanted:
            on_progress(VERIFY, 0, len(wanted))
        if before_remedies is not None:
            before_remedies(replace(plan, findings=tuple(findings)))
        return remedies.attach_remedies(snapshot, targets, options, plan, findings, self.replan, ready=self.children,
                                        on_replan=lambda done: on_progress(VERIFY, done, len(wanted)))

    def start_only(self, wanted: Sequence[remedies.Wanted]) -> None:
        """Cancel the children not among `wanted` (guessed wrong: free their cores), then start the others."""
        keys = {w[0] for w in wanted}
        for key in [k for k in self.children if k not in keys]:
            self.children.pop(key).cancel()
        self.start(wanted)

    def start(self, wanted: Sequence[remedies.Wanted]) -> None:
        """Start each wanted re-plan on a worker (at most workers.limit at once), which edits the snapshot too."""
        for key, _, snap, opts in wanted:
            if key in self.children:
                continue
            if len(self.children) >= self.workers.limit:
                return
            self.children[key] = self.workers.start(lambda s=snap, o=opts: self.replan(s(), o))

    def replan(self, snap: Snapshot, opts: PlanOptions) -> Verdict:
        """A remedy candidate's re-plan, of which attach_remedies reads the verdict only."""
        fork = self.pristine.forked_to(snap) if self.pristine is not None else None
        # the placement cache is only sound on forks of the same simulation
        sim, pl = (fork, self.placer) if fork is not None else (SimCluster(snap), Placer())
        replanned, refused = _plan(snap, self.targets, opts, sim, pl, verdict_only=True)
        if self.workers is not None:
            self.workers.outlive(sim, replanned)  # in a worker, which exits once its verdict is sent
        return Verdict(replanned.safe, tuple(build_findings(replanned, refused)), replanned.evicted_again)

    def proof(self, forced: list, fails: frozenset) -> None:
        """Told before the first step whether no order is safe (`forced`: why; `fails`: DrainPlan.deletion_fails).
        Starts the re-plans the remedies want first: a trap's strandings' (the node deletion's, which outlasts the
        plan, unless the proof judges it), else the PDB-blocked pods' (remedies() cancels a wrong guess); and the given
        order's check (order_finding, as long as the plan) if a safe plan may need it."""
        ctx, snapshot, targets, options = self.ctx, self.snapshot, self.targets, self.options
        self.fails = fails
        if options.verify_remedies and not forced:
            self.start(remedies.first_replans(snapshot, targets, options, None, _blocked_findings(ctx)))
        elif options.verify_remedies and not {(f.namespace, f.workload, f.topology_key) for f in forced} <= fails:
            self.start(remedies.deleting_replans(snapshot, targets, options))  # unless judged_by_proof will judge it
        if not forced and not ctx.blocked and not any(d.action == REFUSE for ds in ctx.decisions.values() for d in ds):
            self.order_child.append(self.workers.start(
                lambda: Verdict(given_order_safe(snapshot, targets, options), ())))

    def given_safe(self) -> bool:
        self.on_progress(CHECK_ORDER, None, None)
        got = self.order_child[0].result() if self.order_child else None
        return got.safe if got is not None else given_order_safe(self.snapshot, self.targets, self.options)

    def first_strand(self, s: Stranded) -> None:
        """Search calls it once forced.py proved no order safe: start the re-plans of the first stranding's finding."""
        self.start(remedies.first_replans(self.snapshot, self.targets, self.options, None, [stranded_finding([s])],
                                          forced=True, fails=self.fails))


def _plan(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, sim: SimCluster, placer: Placer,
          ctx: Context | None = None, on_proof: Callable[[list, frozenset], None] | None = None,
          on_strand: Callable[[Stranded], None] | None = None,
          on_level: Callable[[int], None] | None = None, verdict_only: bool = False
          ) -> tuple[DrainPlan, list[PodDecision]]:
    """The plan without findings, and the pods kubectl refuses; the hooks are Search's, `verdict_only` Context's."""
    ctx, world = _new_world(snapshot, targets, options, sim, placer, ctx, verdict_only)
    settled = _settle(ctx, world)
    search = Search(ctx, options.max_parallel, options.search_budget, on_proof, on_strand, on_level)
    final, found = search.run(world)  # found: a safe order
    steps = final.steps
    stranded = list(final.stranded) + _blocked_stranded(ctx, steps)  # the search's, then the PDB-blocked pods
    # Pending pods that fit nowhere before step 1 are not the drain's doing: `settled` keeps them; `safe` ignores them
    flat = [d for n in targets for d in ctx.decisions[n]]
    refused = [d for d in flat if d.action == REFUSE]
    safe = found and all(s.safe for s in steps) and not stranded and not refused
    cordoned = {n.name for n in snapshot.nodes if n.unschedulable}
    decided = ctx.decided  # any other eviction is of a replacement an earlier step or _settle put on a target
    again = sum((e.node, f"{e.namespace}/{e.name}") not in decided for s in steps for e in s.evictions)
    plan = DrainPlan(
        nodes=tuple(targets), safe=safe, steps=tuple(steps), stranded=tuple(stranded), findings=(),
        max_parallel=options.max_parallel, flags=options.flags,
        kubectl_errors=tuple(kubectl_errors(flat)), kubectl_warnings=tuple(kubectl_warnings(flat)),
        already_cordoned=tuple(n for n in targets if n in cordoned),
        already_evicted=tuple(d.pod.key for d in flat if d.action == ALREADY_EVICTED),
        settled=tuple(settled), explored=search.explored, search_exhausted=search.exhausted,
        stage_cordons=options.stage_cordons, evicted_again=again, no_safe_order=bool(search.forced),
        deletion_fails=search.deletion_fails,
    )
    return plan, refused


def given_order_safe(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions) -> bool:
    """Whether draining in the order given, --max-parallel nodes at a time, is safe."""
    ctx, world = _new_world(snapshot, targets, options, verdict_only=True)
    _settle(ctx, world)
    step = max(1, options.max_parallel)
    for i in range(0, len(targets), step):
        if not run_batch(ctx, world, list(targets[i:i + step])):
            return False
    return world.safe
