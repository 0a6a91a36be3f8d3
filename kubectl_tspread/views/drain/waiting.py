"""When a drain step is over. Pure: live snapshots in, verdicts out (the executor reads and sleeps).

A step is over when
1. every pod it evicted is gone (no pod with its uid is left, terminating or not);
2. every controller it touched has at least as many Ready, bound, non-terminating pods as it had Ready before the step
   (which is also when a PodDisruptionBudget gives its budget back);
3. every DoNotSchedule constraint of those workloads is within maxSkew, or within the skew before the step when that was
   higher (a drain is not to blame for an old violation, but must not make it worse).
It is stuck when a replacement is Pending as "Unschedulable" and the engine agrees that no node passes every filter:
nothing the drain does next can help, and waiting out the timeout would only hide the reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from kubectl_tspread.views.drain.pods import probe_pod
from kubectl_tspread.engine import filters, spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import Pod, Snapshot

Controller = tuple[str, str, str]  # namespace, kind, name


def controller_of(pod: Pod) -> Controller | None:
    return (pod.namespace, pod.owner.kind, pod.owner.name) if pod.owner is not None else None


def live(pod: Pod) -> bool:
    return not pod.terminating and not pod.finished


def serving(pod: Pod) -> bool:
    return live(pod) and bool(pod.node_name) and pod.ready


@dataclass
class WaitTarget:
    """What one step (or the leftovers of an interrupted run) waits for."""

    gone: dict[str, str] = field(default_factory=dict)  # uid -> "ns/name" of pods that must disappear
    expect_ready: dict[Controller, int] = field(default_factory=dict)
    skew_limits: dict[tuple[Controller, str], int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.gone and not self.expect_ready


@dataclass
class WaitStatus:
    remaining_gone: list[str]
    not_ready: dict[Controller, tuple[int, int]]  # controller -> (Ready now, expected)
    pending: list[Pod]  # replacements not bound to a node
    over_limit: list[str]  # sentences: constraints above their limit once everything is Ready

    @property
    def done(self) -> bool:
        return not self.remaining_gone and not self.not_ready and not self.over_limit


def hard_skews(index: ClusterIndex, pods: Iterable[Pod]) -> dict[str, tuple[int, int, dict[str, int]]]:
    """topologyKey -> (skew, maxSkew, distribution) of the hard constraints, seen by an unbound probe pod."""
    sample = next((p for p in pods if live(p)), None)
    if sample is None or not any(c.hard for c in sample.spread):
        return {}
    probe = probe_pod(sample)
    return {cs.constraint.topology_key: (cs.skew, cs.constraint.max_skew, {v: d.pods for v, d in cs.domains.items()})
            for cs in spread.compute(index, probe).hard}


def target_for_step(before: Snapshot, evicted: Iterable[Pod]) -> WaitTarget:
    evicted = list(evicted)
    return _expect(WaitTarget(gone={p.uid: p.key for p in evicted}), before, evicted, serving)


def target_for_leftovers(snap: Snapshot, terminating: Iterable[str], pending: Iterable[str]) -> WaitTarget:
    """After an interrupted run: its terminating pods must go; their workloads and the Pending pods' must be Ready."""
    by_key = {p.key: p for p in snap.pods}
    gone = {by_key[k].uid: k for k in terminating if k in by_key}
    touched = [by_key[k] for k in list(terminating) + list(pending) if k in by_key]
    return _expect(WaitTarget(gone=gone), snap, touched, live)


def _expect(target: WaitTarget, snap: Snapshot, touched: list[Pod], ready: Callable[[Pod], bool]) -> WaitTarget:
    """`target`, expecting as many `ready` pods per workload of `touched` as on `snap`, within rule 3's skew limits."""
    index = ClusterIndex(snap)
    for c in {controller_of(p) for p in touched} - {None}:
        pods = _pods_of(snap.pods, c)
        target.expect_ready[c] = sum(1 for p in pods if ready(p))
        for key, (skew, max_skew, _) in hard_skews(index, pods).items():
            target.skew_limits[(c, key)] = max(max_skew, skew)
    return target


def budget_held(snapshot: Snapshot, plan) -> WaitTarget | None:
    """What to wait for before judging a resumed drain that is unsafe because a PDB allows no disruption while pods of
    the blocked workloads are not Ready: likely the last run's replacements, whose evictions still hold the budget."""
    if plan.safe or not (plan.already_cordoned or plan.already_evicted or plan.settled):
        return None
    blocked = {k for f in plan.findings if f.code == "PdbBlocks" for k in f.pods}
    if not blocked:
        return None
    target = WaitTarget()
    for c in {controller_of(p) for p in snapshot.pods if p.key in blocked} - {None}:
        mine = [p for p in snapshot.pods if controller_of(p) == c and live(p)]
        if any(not serving(p) for p in mine):
            target.expect_ready[c] = len(mine)
    return None if target.empty else target


def _pods_of(pods: Iterable[Pod], c: Controller) -> list[Pod]:
    return [p for p in pods if controller_of(p) == c]


def evaluate(snap: Snapshot, target: WaitTarget) -> WaitStatus:
    uids = {p.uid for p in snap.pods}
    remaining = [key for uid, key in target.gone.items() if uid in uids]
    not_ready, pending = {}, []
    for c, want in target.expect_ready.items():
        pods = _pods_of(snap.pods, c)
        have = sum(1 for p in pods if serving(p))
        if have < want:
            not_ready[c] = (have, want)
        pending += [p for p in pods if p.pending]
    over = over_limit(snap, target) if not remaining and not not_ready else []
    return WaitStatus(remaining, not_ready, sorted(pending, key=lambda p: p.key), over)


def over_limit(snap: Snapshot, target: WaitTarget) -> list[str]:
    index, out = ClusterIndex(snap), []
    for c in target.expect_ready:
        for key, (skew, max_skew, dist) in hard_skews(index, _pods_of(snap.pods, c)).items():
            limit = target.skew_limits.get((c, key), max_skew)
            if skew > limit:
                counts = ", ".join(f"{v}={n}" for v, n in dist.items())
                out.append(f"{c[1]}/{c[2]} in {c[0]}: {key} skew {skew} is above "
                           f"{'maxSkew' if limit == max_skew else 'its skew before the step'} {limit} ({counts})")
    return out


def stuck(snap: Snapshot, status: WaitStatus) -> list[Pod]:
    """The stuck replacements, once the evicted pods are gone (until then their resources may be what is missing)."""
    if status.remaining_gone:
        return []
    out, index = [], None
    for p in status.pending:
        cond = p.condition("PodScheduled")
        if cond is not None and cond.status == "False" and cond.reason == "Unschedulable":
            index = index or ClusterIndex(snap)
            if not any(v.passes for v in filters.evaluate(index, p)):
                out.append(p)
    return out
