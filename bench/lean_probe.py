"""What a simulation on flat arrays would cost: the whole-zone drain plan's steps replayed on
per-node and per-domain arrays changed in place, every placement checked against the
planner's, timed in two parts: the harmless prefix (the steps before the first stranded
replacement) and the rest.

The planner keeps immutable spread states (count overlays, histograms, records rebuilt at
each move) so that the search can copy a world cheaply; that is what bench/ANALYSIS.md
calls the route of "a leaner simulation core". This probe measures that route's premise on
the same placements: the planner plans the zone (timed per batch), then its steps are played
again here, in the planner's order, with

- resources free per node (fit) and nonzero requests (LeastAllocated) as int64 arrays;
- per spread constraint of each template: a domain id per node, the matching pods per
  domain and per node, and how many domains hold each count (the global minimum);
- PodTopologySpread's Filter, NodeResourcesFit and the other filters (one boolean per node
  per pod shape, from the planner's own filter code on the cluster before the drain, the
  cordons applied as a mask), judged over a window of nodes first as the planner does, the
  scheduler's walk from the rotating start, and Score (spread and LeastAllocated, ties to
  the smallest name);
- a replacement that finds no node waits, and is retried as each later step begins, by the
  planner's rules (steps.retry_pending: the first of each template until one binds; one
  that found no node is not tried again while no room was made and its hard constraints'
  counts did not move); the planner's retries are recorded, and compared.

The plan probed stages its cordons (--stage-cordons): planned with every target cordoned at
step 1, a zone's trap strands replacements from the first step, and there is no harmless
prefix to time.

With --delete-drained-nodes the plan is the remedy re-plan that deletes each drained Node
object once it is empty (remedies.py: the re-plan that sets a zone's time through the CLI),
and the replay deletes them where that plan did: the node leaves the scheduler's walk (whose
order, round robin over the zones, is made again), the number of nodes it looks for shrinks
with the cluster, and its hostname domain leaves every constraint's counts.

It covers what a zone's plan meets: no pod (anti-)affinity, nodeTaintsPolicy Ignore
(checked, and the probe refuses otherwise). The batches played are the planner's; its order
heuristic (search.Search.order: which targets to drain first) is made again on the arrays as
each batch begins (`Heuristic`), checked against the planner's order at every level and
timed on its own. The judge is a minimum and skew per constraint a step moved, not the
planner's report objects. Past the prefix, the planner simulates candidate batches it does
not keep (the greedy fallback tries three a level, on copies of the level's world): the probe
plays each of them too, from the level's state, checks it against the planner's, and rolls it
back through an undo log of its changes (FlatCluster.mark and rollback) before the kept one.
The planner's times include its world copies and the worlds it rebuilds by playing batches
again; the probe needs neither. Exit 1 when a placement or an order differs.

    .venv/bin/python -m bench.lean_probe [--size tiny|small|large] [--cache-dir bench-out]
                                         [--delete-drained-nodes]

(from the repository, in the venv scripts/bench and scripts/test set up; the clusters are
generated into the cache directory as scripts/bench does, once).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import threading
import time
from dataclasses import replace

from bench import generate
from bench.server import make_server, write_kubeconfig
from kubectl_tspread.views.drain.core import lean, search, steps
from kubectl_tspread.model.plan import DRAIN_KINDS, PlanOptions
from kubectl_tspread.views.drain.core.placement import Placer
from kubectl_tspread.views.drain import plan as plan_module
from kubectl_tspread.views.drain.plan import build_context, resolve_targets
from kubectl_tspread.views.drain.pods import DrainFlags
from kubectl_tspread.views.drain.remedies import deleting_replans
from kubectl_tspread.model import ZONE_KEY

ZONE = "zone-b"
DIFFERENCES: list[tuple] = []  # the first placements replay() found to differ: (step, pod, here, planner's)
# id(Step) -> (that Step, {(namespace, name) of an evicted pod: the node its stranded replacement
# was bound to by the retry as the step began}): what plan_timed saw the planner's retries do
RETRIED: dict[int, tuple] = {}
# the number of targets drained -> the planner's order of the rest at that level (Search.order)
ORDERS: dict[int, list[str]] = {}
ORDER_SECONDS = [0.0]  # the planner's, in Search.order
# every batch the planner simulated: (targets drained before it, its nodes, the steps it played)
CALLS: list[tuple[int, tuple, tuple]] = []
REJECTED = [0, 0]  # replay(rejected=True): candidates played and rolled back, changes undone


def load(size: str, cache_dir: str):
    """The generated cluster of `size`, read through the tool's live path from bench/server.py."""
    from kubectl_tspread.cli.options import SourceOptions
    from kubectl_tspread.snapshot import load_snapshot

    directory = generate.ensure(generate.SIZES[size], cache_dir)
    server = make_server(directory)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = write_kubeconfig(os.path.join(tmp, "kubeconfig"), f"http://127.0.0.1:{server.server_address[1]}")
            return load_snapshot(SourceOptions(kubeconfig=kubeconfig, all_namespaces=True), DRAIN_KINDS)
    finally:
        server.shutdown()
        server.server_close()


def planner_plan(snapshot, targets, options):
    """plan_drain's plan made by the planner alone (steps.py, search.py), the proven traps' too,
    which plan.py otherwise gives the lean search: what the lean search is compared with."""
    was, plan_module.LEAN_PLANS = plan_module.LEAN_PLANS, False
    try:
        return plan_module.plan_drain(snapshot, targets, options)
    finally:
        plan_module.LEAN_PLANS = was


def plan_options(snapshot, targets, delete_drained_nodes: bool = False) -> PlanOptions:
    """The options of the plan (the CLI's defaults, remedies not verified) or those remedies.py
    gives its re-plan that deletes the drained nodes."""
    options = PlanOptions(DrainFlags(True, False, True), verify_remedies=False)
    if delete_drained_nodes:
        ((_, _, options),) = deleting_replans(snapshot, targets, options)
    return options


def probe_options(snapshot, targets, delete_drained_nodes: bool = False) -> PlanOptions:
    """plan_options with staged cordons: the plan the probe replays (see the module's docstring)."""
    return replace(plan_options(snapshot, targets, delete_drained_nodes), stage_cordons=True)


def plan_timed(snapshot, targets, delete_drained_nodes: bool = False):
    """(the plan, [(start, end, steps of the world played after it, seconds in Placer.place
    before it, and after it) of each simulated batch], the plan's start and end times). With
    `delete_drained_nodes`, the plan is the remedy re-plan that deletes the drained nodes,
    with the options remedies.py gives it; the cordons are staged (probe_options)."""
    stamps: list[tuple[float, float, int, float, float]] = []
    placing = [0.0]
    run_batch, place, retry_pending = search.run_batch, Placer.place, steps.retry_pending
    retries: dict[int, dict] = {}  # step number -> what its retry bound, in the batch played now
    RETRIED.clear()
    CALLS.clear()

    def timed(ctx, world, batch):
        began, before, level, played = time.perf_counter(), placing[0], len(world.done), len(world.steps)
        retries.clear()
        ok = run_batch(ctx, world, batch)
        CALLS.append((level, tuple(batch), tuple(world.steps[played:])))
        stamps.append((began, time.perf_counter(), len(world.steps), before, placing[0]))
        for number, bound in retries.items():
            step = world.steps[number - 1]
            RETRIED[id(step)] = (step, bound)
        return ok

    def recorded(ctx, world, batch=()):
        placed = retry_pending(ctx, world, batch)
        if placed:
            retries[len(world.steps) + 1] = {(e.namespace, e.name): node for e, _, node in placed}
        return placed

    def timed_place(self, sim, pod, diagnose=True):
        began = time.perf_counter()
        try:
            return place(self, sim, pod, diagnose)
        finally:
            placing[0] += time.perf_counter() - began

    order = search.Search.order
    ORDERS.clear()
    ORDER_SECONDS[0] = 0.0

    def recorded_order(self, world, remaining):
        began = time.perf_counter()
        out = order(self, world, remaining)
        ORDER_SECONDS[0] += time.perf_counter() - began
        ORDERS[len(world.done)] = out
        return out

    search.run_batch, Placer.place, steps.retry_pending = timed, timed_place, recorded
    search.Search.order = recorded_order
    try:
        start = time.perf_counter()
        plan = planner_plan(snapshot, targets, probe_options(snapshot, targets, delete_drained_nodes))
        end = time.perf_counter()
    finally:
        search.run_batch, Placer.place, steps.retry_pending = run_batch, place, retry_pending
        search.Search.order = order
    return plan, stamps, start, end


def harmless_prefix(plan) -> list:
    """The plan's steps before the first one that strands a replacement."""
    out = []
    for step in plan.steps:
        if any(e.replaced and e.predicted_node is None for e in step.evictions):
            break
        out.append(step)
    return out


class FlatCluster(lean.FlatCluster):
    """lean.FlatCluster with the replacements it bound kept by (namespace, name stem, node) too:
    the replay evicts the one like the planner's record, whose name is the planner's own."""

    def __init__(self, snapshot):
        super().__init__(snapshot)
        self.on_node: dict[tuple[str, str, str], list] = {}
        self.moved: dict[int, lean.Constraint] = {}  # the constraints a step moved (end_step)

    def move(self, pod, i: int, delta: int) -> None:
        super().move(pod, i, delta)
        for c in self._counting_constraints(pod):
            self.moved[id(c)] = c

    def end_step(self) -> list[tuple[int, int]]:
        """Terminating pods are gone; (minimum, skew) of each constraint the step moved: the
        probe's stand-in for the planner's judge."""
        self.settle()
        out = []
        for c in self.moved.values():
            low = c.minimum()
            out.append((low, max(c.histogram, default=0) - low))
        self.moved.clear()
        return out

    def bind(self, pod, i: int) -> None:
        super().bind(pod, i)
        key = (pod.namespace, pod.name.rsplit("-", 1)[0], self.order[i])
        self.on_node.setdefault(key, []).append(pod)
        self.log_on(self._take_last, key)

    def take_on(self, namespace: str, name: str, node: str):
        """A replacement of the replay's on `node` like the planner's `name`, to evict."""
        key = (namespace, name.rsplit("-", 1)[0], node)
        pod = self.on_node[key].pop()
        self.log_on(self._put_back, key, pod)
        self.unbind_replacement(pod)
        return pod

    def _take_last(self, key) -> None:
        self.on_node[key].pop()

    def _put_back(self, key, pod) -> None:
        self.on_node[key].append(pod)


class Heuristic(lean.Heuristic):
    """lean.Heuristic, its order checked against the planner's at every level (ORDERS)."""

    def __init__(self, flat: FlatCluster, tracked: list, targets: list[str]):
        super().__init__(flat, tracked, targets)
        self.levels = self.differ = 0  # orders made, and those not the planner's
        self.seconds = 0.0
        self.first_difference: tuple | None = None  # (targets drained, here, the planner's)

    def check(self, done: set[str]) -> None:
        """Order the targets not in `done` and compare with the planner's order at that level."""
        remaining = [name for name in self.names if name not in done]
        began = time.perf_counter()
        mine = self.order(remaining)
        self.seconds += time.perf_counter() - began
        self.levels += 1
        planner = ORDERS.get(len(done))
        if mine != planner:
            self.differ += 1
            if self.first_difference is None:
                self.first_difference = (len(done), mine[:5], (planner or [])[:5])


def replay(flat: FlatCluster, plan, prefix: list, delete_drained_nodes: bool = False,
           marks: list | None = None, heuristic: Heuristic | None = None,
           rejected: bool = False) -> tuple[int, int, float, float]:
    """Play `prefix` (the plan's first steps) on `flat`: (placements that differ from the
    planner's, replacements placed, seconds in all, seconds placing). A replacement placed
    elsewhere is counted and bound where the planner bound it, so that the rest is still
    played on the planner's states. A replacement that finds no node waits, and is retried
    as each later step begins, as the planner does; a retry that binds where the planner's
    did not (RETRIED, from plan_timed), or fails where it bound, is counted likewise.
    With `delete_drained_nodes` (the plan deleted them), each step's evicted pods are gone
    and its emptied nodes deleted before its replacements are placed, as in that plan.
    `marks` is given (step number, seconds so far, seconds placing so far) after each step.
    With a `heuristic`, its order of the targets left is made and checked as each batch
    begins (outside the seconds returned: Heuristic.seconds). With `rejected`, the batches
    the planner simulated at each level and did not keep (CALLS, from plan_timed) are played
    there too, each checked against the planner's and then rolled back (FlatCluster.mark);
    REJECTED counts them and the changes undone."""
    pods = flat.pods
    for step in prefix:  # the per-template reads, outside the timing (the planner's memos)
        for e in step.evictions:
            p = pods.get(f"{e.namespace}/{e.name}")
            if p is not None and e.replaced:
                flat.prepare(flat.sim.replacement_for(p))
    for e in plan.settled:
        flat.prepare(pods[f"{e.namespace}/{e.name}"])
    counted = [0, 0, 0.0]  # placements and retries that differ, replacements placed, seconds placing
    DIFFERENCES.clear()
    REJECTED[:] = [0, 0]
    for e in plan.settled:  # before the first step (plan._settle): outside the timing, as the planner's
        p = pods[f"{e.namespace}/{e.name}"]
        i = flat.place(p)
        counted[0] += (flat.order[i] if i is not None else None) != e.predicted_node
        if e.predicted_node is not None:
            i = flat.position[e.predicted_node]
            flat.move(p, i, +1)
            flat.node_of[p.key] = i

    def differs(step, what: str, here, planner) -> None:
        counted[0] += 1
        if len(DIFFERENCES) < 5:
            DIFFERENCES.append((step.number, what, here, planner))

    def play(step) -> None:
        """One step of the planner's (its evictions, deletions and placements) on `flat`."""
        for name in step.cordon:
            flat.cordon(name)
        if flat.pending:
            bound = RETRIED.get(id(step), (None, {}))[1]

            def decide(pod, e, i):
                """The planner's outcome of a retry (checked against this one's)."""
                got = flat.order[i] if i is not None else None
                want = bound.get((e.namespace, e.name))
                if got != want:
                    differs(step, f"{pod.key} (retried)", got, want)
                return flat.position[want] if want is not None else None

            t = time.perf_counter()
            flat.retry_pending(decide)
            counted[2] += time.perf_counter() - t
        evicted = []
        for e in step.evictions:
            p = pods.get(f"{e.namespace}/{e.name}")
            if p is None or p.key not in flat.node_of:
                # a replacement placed earlier (a StatefulSet's keeps its pod's name): any of its
                # template on that node
                p, i = flat.take_on(e.namespace, e.name, e.node), flat.position[e.node]
            else:
                i = flat.unbind(p)
            flat.move(p, i, -1)
            evicted.append((p, e))
        if delete_drained_nodes:
            flat.settle()
            for name in step.deleted_nodes:
                flat.delete_node(name)
        # the scheduling queue: higher priority first, then the order they were evicted in
        new = sorted(((flat.sim.replacement_for(p), e) for p, e in evicted if e.replaced), key=lambda x: -x[0].priority)
        for r, e in new:
            t = time.perf_counter()
            i = flat.place(r)
            counted[2] += time.perf_counter() - t
            node = flat.order[i] if i is not None else None
            counted[1] += 1
            if node != e.predicted_node:  # counted, and bound where the planner did, to go on in step
                differs(step, r.key, node, e.predicted_node)
                node = e.predicted_node
            if node is None:
                flat.strand(r, e)
            else:
                flat.bind(r, flat.position[node])
        flat.end_step()

    at_level: dict[int, list] = {}
    if rejected:
        for level, batch, played in CALLS:
            at_level.setdefault(level, []).append((batch, played))
    done: set[str] = set()
    batch: tuple = ()
    ordering = 0.0
    start = time.perf_counter()
    for step in prefix:
        if step.nodes != batch:
            for other, played in at_level.get(len(done), ()):
                if other != step.nodes:  # a candidate the planner did not keep (or a rebuild)
                    saved = flat.mark()
                    for s in played:
                        play(s)
                    REJECTED[0] += 1
                    REJECTED[1] += flat.rollback(saved)
            if heuristic is not None:
                was = heuristic.seconds
                heuristic.check(done)
                ordering += heuristic.seconds - was
            batch = step.nodes
            done.update(batch)
        play(step)
        if marks is not None:
            marks.append((step.number, time.perf_counter() - start - ordering, counted[2]))
    return counted[0], counted[1], time.perf_counter() - start - ordering, counted[2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="small", choices=sorted(generate.SIZES))
    ap.add_argument("--cache-dir", default="bench-out")
    ap.add_argument("--delete-drained-nodes", action="store_true",
                    help="probe the remedy re-plan that deletes each drained node once it is empty")
    args = ap.parse_args(argv)
    snapshot = load(args.size, args.cache_dir)
    gc.collect()
    gc.disable()  # as the tool plans (gcpause)
    try:
        return _probe(args.size, snapshot, args.delete_drained_nodes)
    finally:
        gc.enable()


def _probe(size: str, snapshot, delete_drained_nodes: bool = False) -> int:
    targets = resolve_targets(snapshot, (), None, (ZONE_KEY, ZONE))
    plan, stamps, started, ended = plan_timed(snapshot, targets, delete_drained_nodes)
    prefix = harmless_prefix(plan)
    if not prefix:
        print("error: the plan has no step before its first stranded replacement", file=sys.stderr)
        return 1
    first, placing_before = stamps[0][0], stamps[0][3]  # as the first batch starts
    last, placing_after = next((end, after) for _, end, steps, _, after in stamps if steps >= len(prefix))
    batches = sum(1 for stamp in stamps if stamp[1] <= last)
    planner_placing = placing_after - placing_before
    flat = FlatCluster(snapshot)
    options = probe_options(snapshot, targets, delete_drained_nodes)
    heuristic = Heuristic(flat, build_context(flat.sim, targets, options).tracked, list(targets))
    marks: list[tuple[int, float, float]] = []
    differ, placed, took, placing = replay(flat, plan, list(plan.steps), delete_drained_nodes, marks, heuristic,
                                           rejected=True)
    _, prefix_took, prefix_placing = marks[len(prefix) - 1]
    prefix_placed = sum(e.replaced for s in prefix for e in s.evictions)
    us = 1e6 / max(prefix_placed, 1)
    deleted = sum(len(s.deleted_nodes) for s in prefix)
    what = "the re-plan that deletes the drained nodes" if delete_drained_nodes else "the plan"
    print(f"{size} cluster, {ZONE} of {len(targets)} nodes: {what} took {ended - started:.2f} s; "
          f"its harmless prefix is {len(prefix)} steps ({batches} simulated batches), {prefix_placed} replacements"
          + (f", {deleted} nodes deleted" if delete_drained_nodes else ""))
    print(f"planner, from its first step to the prefix's end: {last - first:.2f} s, {(last - first) * us:.0f} us "
          f"a replacement ({planner_placing:.2f} s placing, {planner_placing * us:.0f} us each; order heuristic, "
          f"judge and report objects included)")
    print(f"flat arrays: {prefix_took:.2f} s, {prefix_took * us:.0f} us a replacement ({prefix_placing:.2f} s placing, "
          f"{prefix_placing * us:.0f} us each)")
    tail = plan.steps[len(prefix):]
    if tail:
        simulated = sum(1 for stamp in stamps if stamp[0] >= last)
        kept = len({s.nodes for s in tail})
        planner_tail, flat_tail = ended - last, took - prefix_took
        print(f"from there to the end: {len(tail)} steps in {kept} batches; the planner simulated {simulated} batches "
              f"(with the candidates it did not keep, and the worlds it rebuilt)")
        print(f"planner: {planner_tail:.2f} s, {planner_tail / max(simulated, 1) * 1e3:.1f} ms a simulated batch")
        print(f"flat arrays: {flat_tail:.2f} s, {flat_tail / (kept + REJECTED[0]) * 1e3:.1f} ms a batch, for the kept "
              f"batches and {REJECTED[0]} that the planner did not keep, played and rolled back ({REJECTED[1]} changes "
              f"undone; {took - prefix_took - (placing - prefix_placing):.2f} s besides placing)")
    print(f"order heuristic: the planner's {ORDER_SECONDS[0]:.2f} s over {len(ORDERS)} levels (in its figures above), "
          f"flat arrays {heuristic.seconds:.2f} s over {heuristic.levels} (not in theirs); orders that differ: "
          f"{heuristic.differ}")
    print(f"from the first step to the end: flat arrays {took + heuristic.seconds:.1f} s with the order heuristic, "
          f"the planner {ended - first:.1f} s")
    if heuristic.first_difference is not None:
        level, mine, planner = heuristic.first_difference
        print(f"after {level} targets: {mine} here, the planner's {planner}")
    print(f"placements that differ: {differ} of {placed} (retries included)")
    for step, pod, here, planned in DIFFERENCES:
        print(f"step {step}: {pod} placed on {here}, the planner's {planned}")
    return 1 if differ or heuristic.differ else 0


if __name__ == "__main__":
    sys.exit(main())
