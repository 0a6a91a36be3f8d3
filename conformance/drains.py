"""Drain plans played against the scheduler oracle, one replacement at a time.

The single-pod cases (generate.py) check where the planner puts one pod on a cluster as read.
A drain places many, each on a cluster its own plan has changed: targets cordoned (with the
node controller's taint), evicted pods terminating until the step ends (out of the spread
counts, still holding their requests), the step's earlier replacements bound where the plan
predicted them. Here each generated cluster is drained, and the cluster each replacement meets
is rebuilt from the plan's own steps as `kubectl get -o json` objects, so the oracle sees it as
the scheduler would, not through our simulation. Every placement of the plan becomes one
oracle case.

The clusters are generate.py's, with spread constraints given to the running pods of each
workload (the generator gives them to the incoming pod only; drawn from a stream of their
own, the same for every pod of a workload and template): zone, hostname and the `rack` key
some nodes lack, hard and soft, with minDomains, matchLabelKeys and both node policies. Half
the drains take 1-3 random schedulable nodes, half a whole zone; --max-parallel is 1 or 2.

Aspects, besides the single-pod ones (compare.py) on each rebuilt cluster:
- drain placement: the plan's predicted node is among the oracle's top-scored nodes, and a
  replacement the plan strands is one the scheduler finds no node for;
- drain ties: the nodes the plan says tie with it (or none) are exactly the oracle's top ones;
- drain skew: after each step, every DoNotSchedule constraint the plan judges (its per-domain
  counts and global minimum, the numbers the step's table prints) is what the scheduler's
  PodTopologySpread PreFilter computes for the workload's next pod on that cluster.

A plan is followed up to its first stranded replacement: past it the scheduler's retries of
Pending pods make the order of placements the queue's, which one cluster cannot pin down.
"""

from __future__ import annotations

import copy
import datetime
import random
from dataclasses import dataclass, replace
from typing import Any

from kubectl_tspread.engine import podrequests
from kubectl_tspread.model import DO_NOT_SCHEDULE
from kubectl_tspread.model.plan import ConstraintAfter, DrainFlags, DrainPlan, PlanOptions, Step
from kubectl_tspread.snapshot.files import decode_objects
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.views.drain.core.steps import Tracked
from kubectl_tspread.views.drain.plan import build_context, plan_drain

from conformance.generate import APPS, NS, ZONE, Case, _Builder, cases

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
DELETED_AT = "2026-01-01T02:00:00Z"
DRAIN_STARTS = datetime.datetime(2026, 1, 1, 3, 0, 0)
DRAIN_ASPECTS = ("drain placement", "drain ties", "drain skew")


@dataclass
class Placement:
    """One replacement the plan placed: the oracle case (the cluster it met, the replacement
    Pending in it) and what the plan predicted."""

    case: Case
    predicted: str | None  # None: the plan strands it
    tied: tuple[str, ...]
    step: int


@dataclass
class Judged:
    """A step's judgement of one workload's constraints: the oracle case (the cluster after the
    step, the workload's next pod Pending in it) and, per DoNotSchedule constraint the plan
    judged, its place among the pod's hard constraints and the plan's row."""

    case: Case
    step: int
    rows: list[tuple[int, ConstraintAfter]]


def drain_cases(seed: int, count: int, minor: int) -> list[Placement | Judged]:
    """The placements and step judgements of drains of the first `count` clusters of `seed`."""
    out: list[Placement | Judged] = []
    for base in cases(seed, count, minor):
        objects = [o for o in base.objects
                   if not (o["kind"] == "Pod" and o["metadata"]["name"] == base.name
                           and o["metadata"].get("namespace") == base.namespace)]
        rng = random.Random(f"{base.id}/drain")
        _spread_workloads(objects, _Builder(random.Random(f"{base.id}/drain-spread"), base.id, minor))
        targets = _targets(objects, rng)
        if not targets:
            continue
        options = PlanOptions(DrainFlags(ignore_daemonsets=True, force=True, delete_emptydir_data=True),
                              max_parallel=rng.choice((1, 1, 2)), verify_remedies=False)
        snap = podrequests.for_version(replace(decode_objects(objects, None, True, base.id),
                                               kube_version=f"1.{minor}"))
        plan = plan_drain(snap, targets, options)
        # the constraints each step judges, in its rows' order: one probe pod per workload
        tracked = build_context(SimCluster(snap), targets, options).tracked
        out.extend(placements(f"{base.id}-drain", objects, plan, tracked))
    return out


def placements(case_id: str, objects: list[dict[str, Any]], plan: DrainPlan,
               tracked: list[Tracked] = ()) -> list[Placement | Judged]:
    """The plan's placements, each with the cluster it met, and its steps' judgements of the
    `tracked` constraints, each with the cluster after the step: rebuilt from `objects` (the
    cluster before the drain) and the plan's steps."""
    nodes = {o["metadata"]["name"]: copy.deepcopy(o) for o in objects if o["kind"] == "Node"}
    pods = {_key(o): copy.deepcopy(o) for o in objects if o["kind"] == "Pod"}
    originals = {_key(o): o for o in objects if o["kind"] == "Pod"}
    others = [o for o in objects if o["kind"] not in ("Node", "Pod")]
    out: list[Placement | Judged] = []
    made = 0
    for step in plan.steps:
        for name in step.cordon:
            _cordon(nodes[name])
        replacements = []
        for e in step.evictions:
            evicted = pods[(e.namespace, e.name)]
            if e.replaced:
                made += 1
                replacements.append((e, _replacement(evicted, made)))
            evicted["metadata"]["deletionTimestamp"] = DELETED_AT
            evicted["metadata"]["deletionGracePeriodSeconds"] = 30
        # the planner places a step's replacements highest priority first (a stable sort)
        replacements.sort(key=lambda er: -(er[1]["spec"].get("priority") or 0))
        for e, repl in replacements:
            pods[_key(repl)] = repl
            case = Case(f"{case_id}-{len(out)}", [*nodes.values(), *(copy.deepcopy(p) for p in pods.values()),
                                                  *others], repl["metadata"]["namespace"], repl["metadata"]["name"])
            out.append(Placement(case, e.predicted_node, e.tied_nodes, step.number))
            if e.predicted_node is None:
                return out
            repl["spec"]["nodeName"] = e.predicted_node
            repl["status"] = {"phase": "Running", "startTime": repl["metadata"]["creationTimestamp"],
                              "conditions": [{"type": "PodScheduled", "status": "True"}]}
        out.extend(_judgements(f"{case_id}-{len(out)}", step, tracked, originals,
                               [*nodes.values(), *pods.values(), *others]))
        # the step ends once its evicted pods are gone (every terminating pod: the planner's settle)
        pods = {k: p for k, p in pods.items() if not p["metadata"].get("deletionTimestamp")}
    return out


def _judgements(case_id: str, step: Step, tracked: list[Tracked], originals: dict[tuple[str, str], dict[str, Any]],
                state: list[dict[str, Any]]) -> list[Judged]:
    """One oracle case per probe pod of the step's DoNotSchedule rows: the cluster `state` after
    the step, with the workload's next pod Pending in it (the probe the plan judges through)."""
    by_probe: dict[tuple[str, str], list[tuple[int, ConstraintAfter]]] = {}
    for t, row in zip(tracked, step.constraints_after):
        if row.when_unsatisfiable != DO_NOT_SCHEDULE:
            continue
        source = (t.pod.namespace, t.pod.name.removesuffix("-probe"))
        hard_before = sum(c.hard for c in t.pod.spread[:t.position])
        by_probe.setdefault(source, []).append((hard_before, row))
    out = []
    for k, (source, rows) in enumerate(sorted(by_probe.items())):
        probe = _pending_copy(originals[source], f"{source[1]}-probe", "-probe")
        case = Case(f"{case_id}-judge{k}", [*copy.deepcopy(state), probe], source[0], probe["metadata"]["name"])
        out.append(Judged(case, step.number, rows))
    return out


def judge(placement: Placement | Judged, answer: dict[str, Any]) -> tuple[dict[str, bool | None], list[str]]:
    """The drain aspects of one placement, or of one step's judgement, against the oracle's answer."""
    if isinstance(placement, Judged):
        spread = answer.get("spread")
        if spread is None:
            return {"drain skew": False}, [f"drain step {placement.step}: the scheduler computed no spread state "
                                           f"for the workload's next pod: {answer.get('message')!r}"]
        diffs = []
        for at, row in placement.rows:
            theirs = spread[at] if at < len(spread) else None
            if theirs is None or theirs["topologyKey"] != row.topology_key or theirs["counts"] != dict(
                    row.distribution) or theirs["globalMin"] != row.global_min:
                diffs.append(f"drain skew, step {placement.step} {row.workload} {row.topology_key}: ours "
                             f"{dict(row.distribution)} min {row.global_min}, oracle {theirs}")
        return {"drain skew": not diffs}, diffs
    top = answer.get("top") or []
    if placement.predicted is None:
        agreed = not answer.get("schedulable")
        return ({"drain placement": agreed, "drain ties": None},
                [] if agreed else [f"drain step {placement.step}: the plan strands it, the scheduler places it "
                                   f"on one of {top}"])
    if not answer.get("schedulable") or not top:
        return ({"drain placement": False, "drain ties": None},
                [f"drain placement: the plan put it on {placement.predicted}, the scheduler finds no node: "
                 f"{answer.get('message')!r}"])
    agree: dict[str, bool | None] = {"drain placement": placement.predicted in top}
    tied = sorted(placement.tied or (placement.predicted,))
    agree["drain ties"] = tied == sorted(top)
    diffs = []
    if not agree["drain placement"] or not agree["drain ties"]:
        scores = {s["name"]: s for s in answer.get("scores") or []}
        diffs.append(f"drain step {placement.step}: ours {placement.predicted} tied {tied} "
                     f"({scores.get(placement.predicted)}), oracle top {top} ({[scores.get(t) for t in top]})")
    return agree, diffs


def _spread_workloads(objects: list[dict[str, Any]], draw: _Builder) -> None:
    """Give the running pods of each workload (app and pod-template-hash, in the generator's
    namespace) the same 0-2 spread constraints, drawn as the generator draws the incoming pod's."""
    chosen: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for app in APPS:
        for template in ("h1", "h2"):
            labels = {"app": app, "pod-template-hash": template}
            chosen[(app, template)] = [draw.constraint(labels) for _ in range(draw.rng.choice((0, 1, 1, 2)))]
    for o in objects:
        meta = o["metadata"]
        if o["kind"] != "Pod" or meta.get("namespace") != NS or not meta.get("ownerReferences"):
            continue
        constraints = chosen.get((meta["labels"].get("app"), meta["labels"].get("pod-template-hash")))
        if constraints:
            o["spec"]["topologySpreadConstraints"] = copy.deepcopy(constraints)


def _targets(objects: list[dict[str, Any]], rng: random.Random) -> list[str]:
    """The nodes to drain: a whole zone (when another schedulable node stays), else 1-3 random
    schedulable nodes; [] when fewer than two nodes are schedulable."""
    open_nodes = sorted((o["metadata"]["name"], o["metadata"]["labels"].get(ZONE)) for o in objects
                        if o["kind"] == "Node" and not o["spec"].get("unschedulable"))
    if len(open_nodes) < 2:
        return []
    if rng.random() < 0.5:
        zone = rng.choice(sorted({z for _, z in open_nodes if z}) or [None])
        targets = [n for n, z in open_nodes if z == zone and zone is not None]
        if targets and len(targets) < len(open_nodes):
            return targets
    return rng.sample([n for n, _ in open_nodes], rng.randint(1, min(3, len(open_nodes) - 1)))


def _key(pod: dict[str, Any]) -> tuple[str, str]:
    return pod["metadata"].get("namespace") or "default", pod["metadata"]["name"]


def _cordon(node: dict[str, Any]) -> None:
    """kubectl cordon, and the taint the node lifecycle controller adds to a cordoned node."""
    node["spec"]["unschedulable"] = True
    taints = node["spec"].setdefault("taints", [])
    if not any(t.get("key") == UNSCHEDULABLE_TAINT["key"] and t.get("effect") == "NoSchedule" for t in taints):
        taints.append(dict(UNSCHEDULABLE_TAINT))


def _replacement(evicted: dict[str, Any], serial: int) -> dict[str, Any]:
    """The pod the controller makes for `evicted`: its template (labels, owner, spec) under a
    new name, unbound and Pending (the `serial`-th replacement of the plan); a resize in
    progress is not carried over (it comes back at its spec's size)."""
    base = evicted["metadata"]["name"].rsplit("-", 1)[0]
    # named as the plan names it (SimCluster.replacement_for): a later step may evict it again;
    # made during the drain, after every pod of the cluster (preemption orders victims by start)
    made = (DRAIN_STARTS + datetime.timedelta(seconds=serial)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _pending_copy(evicted, f"{base}-new{serial}", f"-new{serial}", creationTimestamp=made)


def _pending_copy(pod: dict[str, Any], name: str, uid_suffix: str, **meta: Any) -> dict[str, Any]:
    """A new pod of `pod`'s template named `name` (its uid `pod`'s with `uid_suffix`), unbound,
    not being deleted, Pending and without status; `meta` overrides more metadata fields."""
    new_meta = {k: copy.deepcopy(v) for k, v in pod["metadata"].items()
                if k not in ("deletionTimestamp", "deletionGracePeriodSeconds")}
    new_meta.update(name=name, uid=pod["metadata"]["uid"] + uid_suffix, **meta)
    spec = {k: copy.deepcopy(v) for k, v in pod["spec"].items() if k != "nodeName"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": new_meta, "spec": spec, "status": {"phase": "Pending"}}
