"""Remedy re-plans in forked processes (cli/workers.py, the workers the commands pass to
plan_drain): a child hands back its function's Verdict, any failure reads as None, cancel()
kills it, TSPREAD_NO_FORK=1 turns forking off (forks() is then None); and a plan's findings
and remedies are the same whether the re-plans ran in children, in-process, or in children
that failed."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace

import pytest

from conftest import make_constraint, make_node, make_pod, make_snapshot, make_workload
from drain_builders import nodes_in, web
from forking import gone, no_fork_plan
from kubectl_tspread.cli import workers
from kubectl_tspread.model.plan import CORDONED_DOMAIN_TRAP, Finding, PlanOptions, Remedy, Verdict
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HOSTNAME_KEY, IGNORE, ZONE_KEY, Pdb

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")

FINDING = Finding("PdbBlocks", "ReplicaSet/web-1", ("default/web-1",), 1, {"pdbs": ["default/web"]},
                  (Remedy("RaisePdbBudget", {"pdb": "default/web"}, True, True),))


@pytest.mark.parametrize("verdict", [
    pytest.param(Verdict(True, ()), id="safe, no findings"),
    pytest.param(Verdict(False, (FINDING,)), id="unsafe, a finding with params and a remedy"),
])
def test_a_child_hands_back_its_verdict(verdict):
    child = workers.Child(lambda: verdict)
    assert child.pid != os.getpid()
    assert child.result() == verdict
    assert gone(child.pid)
    assert child.result() is None  # read once


def test_a_child_computes_at_a_lower_priority_than_the_planner():
    # the Verdict's evicted_again carries the child's niceness back (os.nice(0) reads it)
    before = os.nice(0)
    got = workers.Child(lambda: Verdict(True, (), os.nice(0))).result()
    assert got is not None and got.evicted_again == min(before + workers.CHILD_NICENESS, 19)  # 19: the most
    assert os.nice(0) == before  # the planner's own is untouched


def _raise():
    raise ValueError("re-plan failed")


def _exit_without_writing():
    os._exit(3)


@pytest.mark.parametrize("fn", [
    pytest.param(_raise, id="fn raises"),
    pytest.param(lambda: {"safe": True}, id="fn returns something that is not a Verdict"),
    pytest.param(lambda: Verdict(True, (lambda: 0,)), id="the verdict cannot be pickled"),
    pytest.param(_exit_without_writing, id="the child exits with status 3 before writing"),
])
def test_a_failed_child_gives_none(fn):
    child = workers.Child(fn)
    assert child.result() is None
    assert gone(child.pid)


def test_cancel_kills_a_slow_child():
    child = workers.Child(lambda: time.sleep(60) or Verdict(True, ()))
    began = time.monotonic()
    child.cancel()
    assert time.monotonic() - began < 5
    assert gone(child.pid)
    assert child.result() is None
    child.cancel()  # a second cancel is harmless


def test_an_interrupted_wait_kills_and_reaps_the_child(monkeypatch):
    child = workers.Child(lambda: time.sleep(60) or Verdict(True, ()))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(workers.os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt):
        child.result()
    assert gone(child.pid)


def test_cancel_after_result_leaves_the_verdict_alone():
    child = workers.Child(lambda: Verdict(False, ()))
    assert child.result() == Verdict(False, ())
    child.cancel()
    assert gone(child.pid)


@pytest.mark.parametrize("no_fork, platform, cpus, expected", [
    pytest.param("1", "linux", 8, False, id="TSPREAD_NO_FORK=1 on an 8-CPU Linux: off"),
    pytest.param("0", "linux", 8, True, id="TSPREAD_NO_FORK=0: on"),
    pytest.param(None, "linux", 8, True, id="unset on an 8-CPU Linux: on"),
    pytest.param(None, "linux", 1, False, id="one CPU: off"),
    pytest.param(None, "linux", None, False, id="CPU count unknown: off"),
    pytest.param(None, "darwin", 8, False, id="macOS: off (fork is unsafe there)"),
])
def test_available(no_fork, platform, cpus, expected, monkeypatch):
    if no_fork is None:
        monkeypatch.delenv("TSPREAD_NO_FORK", raising=False)
    else:
        monkeypatch.setenv("TSPREAD_NO_FORK", no_fork)
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    assert workers.available() is expected
    assert workers.forks() is (workers.FORKS if expected else None)


# -- plans: the same findings and remedies however the re-plans ran ----------------------

RS = make_workload("ReplicaSet", "web-1", {"app": "web"})


def _pdb(name: str, allowed: int):
    return Pdb("default", name, Selector.from_api({"matchLabels": {"app": "web"}}), disruptions_allowed=allowed)


SCENARIOS = [
    ("PDB allows 0, one web pod on each drained node", make_snapshot(
        nodes_in({"a": 2, "b": 2, "c": 1}), web({"a1": 1, "b1": 1, "b2": 1, "c1": 1}, [make_constraint(max_skew=2)]),
        workloads=[RS], pdbs=[_pdb("web", 0)]), ["a1", "b1"]),
    ("PDB allows 0 and a hostname maxSkew 1 workload that strands", make_snapshot(
        nodes_in({"a": 3, "b": 1}),
        web({"a1": 1, "a2": 1, "a3": 1, "b1": 1}, [make_constraint(HOSTNAME_KEY, node_taints_policy=IGNORE)])
        + [make_pod(f"api-{i}", node=n, labels={"app": "api"}, owner="ReplicaSet/api-1")
           for i, n in enumerate(("a1", "b1"))],
        workloads=[RS, make_workload("ReplicaSet", "api-1", {"app": "api"})],
        pdbs=[Pdb("default", "api", Selector.from_api({"matchLabels": {"app": "api"}}), disruptions_allowed=0)]),
     ["a1"]),
]


@pytest.mark.parametrize("snap, targets", [(s, t) for _, s, t in SCENARIOS], ids=[i for i, _, _ in SCENARIOS])
def test_forked_and_in_process_remedies_are_the_same(snap, targets, forks, monkeypatch):
    used = []
    real = workers.Child.result

    def result(self):
        got = real(self)
        used.append(got is not None)
        return got

    monkeypatch.setattr(workers.Child, "result", result)
    forked = plan_drain(snap, targets, workers=forks)
    assert forks.started and any(used), "no re-plan ran in a child"
    assert all(gone(c.pid) for c in forks.started)  # every child reaped, used or cancelled
    in_process = no_fork_plan(snap, targets)
    assert not forked.safe and any(f.remedies for f in forked.findings)
    assert any(f.code in ("PdbBlocks", "PdbDisruptionsExhausted") for f in forked.findings)
    assert repr(forked.findings) == repr(in_process.findings)
    assert repr(forked.steps) == repr(in_process.steps) and repr(forked.stranded) == repr(in_process.stranded)


@pytest.mark.parametrize("snap, targets", [(s, t) for _, s, t in SCENARIOS], ids=[i for i, _, _ in SCENARIOS])
def test_children_that_fail_are_computed_in_process(snap, targets, forks, monkeypatch):
    real, read = workers.Child.result, []

    def result(self):
        read.append(real(self))  # the child is read (and reaped), then taken as failed
        return None

    monkeypatch.setattr(workers.Child, "result", result)
    failed = plan_drain(snap, targets, workers=forks)
    assert forks.started and any(v is not None for v in read)  # a verdict was there, and was dropped
    assert all(gone(c.pid) for c in forks.started)  # cancelled at the end, none left behind
    in_process = no_fork_plan(snap, targets)
    assert any(f.remedies for f in failed.findings)
    assert repr(failed.findings) == repr(in_process.findings)


def _zone_trap(extra=lambda nodes: (), workloads=()):
    """Zone b (3 of 9 nodes) drained under nodeTaintsPolicy Ignore with maxSkew 1, one web
    pod per node, and the pods `extra(nodes)` makes: forced.py proves that no order is safe."""
    nodes = nodes_in({"a": 3, "b": 3, "c": 3})
    pods = web({n.name: 1 for n in nodes}, [make_constraint(node_taints_policy=IGNORE)])
    return make_snapshot(nodes, pods + list(extra(nodes)), workloads=[RS, *workloads]), ["b1", "b2", "b3"]


def test_a_child_keeps_what_it_is_told_to_outlive_and_the_parent_keeps_nothing():
    """outlive() keeps its objects in a forked child, which exits without freeing them;
    in the parent it keeps nothing (a plan made in-process frees its simulation as usual)."""
    import weakref

    class Thing:
        pass

    def kept_in_child() -> Verdict:
        thing = Thing()
        ref = weakref.ref(thing)
        workers.outlive(thing)
        del thing
        return Verdict(ref() is not None, ())

    assert workers.Child(kept_in_child).result() == Verdict(True, ())
    thing = Thing()
    ref = weakref.ref(thing)
    workers.outlive(thing)
    del thing
    assert ref() is None


def test_a_proven_trap_starts_the_delete_nodes_replan_before_the_first_step(forks, results, monkeypatch):
    """The zone trap: the first remedy re-plan (delete the drained nodes) is started before
    any step is simulated, its verdict is the one used, and the answer is the in-process one."""
    from kubectl_tspread.views.drain.core import search
    snap, targets = _zone_trap()
    before_first_step = []

    def first_step(real):
        def run_batch(*args):
            if not before_first_step:
                before_first_step.append([c for c in forks.started])
            return real(*args)
        return run_batch

    monkeypatch.setattr(search, "run_batch", first_step(search.run_batch))
    forked = plan_drain(snap, targets, workers=forks)
    assert len(before_first_step[0]) == 1  # the trap's first re-plan, and no PDB guess
    first = before_first_step[0][0]
    assert [got is not None for child, got in results if child is first] == [True]
    assert all(gone(c.pid) for c in forks.started)
    assert not forked.safe
    actions = {r.action for f in forked.findings for r in f.remedies}
    assert "DeleteDrainedNodes" in actions or "SetNodeTaintsPolicyHonor" in actions
    in_process = no_fork_plan(snap, targets)
    assert repr(forked.findings) == repr(in_process.findings)


def _started_actions(monkeypatch) -> list[str]:
    """The action of every re-plan plan_drain hands its workers, in order."""
    from kubectl_tspread.views.drain import plan as planmod
    started, real = [], planmod._Planning.start

    def start(self, wanted):
        started.extend(w[1] for w in wanted if w[0] not in self.children)
        return real(self, wanted)

    monkeypatch.setattr(planmod._Planning, "start", start)
    return started


def test_a_trap_node_deletion_keeps_is_judged_by_proof_without_its_replan(forks, results, monkeypatch):
    """The zone trap with a db pod a PDB keeps on b1: deleting the drained nodes leaves b1, so zone b stays closed and
    forced.py proves the trap with the nodes deleted too. No re-plan deletes nodes, on a worker or in process;
    DeleteDrainedNodes counts among the trap finding's failed candidates, and the answer is the in-process one."""
    from kubectl_tspread.views.drain import plan as planmod

    db = [make_workload("ReplicaSet", "db-1", {"app": "db"})]
    snap, targets = _zone_trap(lambda nodes: [make_pod("db-b1", node="b1", labels={"app": "db"},
                                                       owner="ReplicaSet/db-1")], db)
    snap = replace(snap, pdbs=(Pdb("default", "db", Selector.from_api({"matchLabels": {"app": "db"}}),
                                   disruptions_allowed=0),))
    started = _started_actions(monkeypatch)
    deleting, real_plan = [], planmod._plan

    def _plan(snapshot, targets, options, *args, **kwargs):
        deleting.append(options.delete_drained_nodes)
        return real_plan(snapshot, targets, options, *args, **kwargs)

    monkeypatch.setattr(planmod, "_plan", _plan)
    forked = plan_drain(snap, targets, workers=forks)
    assert started and "DeleteDrainedNodes" not in started and all(gone(c.pid) for c in forks.started)
    assert forked.deletion_fails == {("default", "ReplicaSet/web-1", ZONE_KEY)}
    trap = next(f for f in forked.findings if f.workload == "ReplicaSet/web-1")
    assert trap.code == CORDONED_DOMAIN_TRAP and trap.failed >= 1
    assert "DeleteDrainedNodes" not in {r.action for r in trap.remedies}
    deleting.clear()
    in_process = no_fork_plan(snap, targets)
    assert len(deleting) > 1 and not any(deleting)  # the plan and its re-plans, none deleting nodes
    assert repr(forked.findings) == repr(in_process.findings)


def _children_at_context(started: list, monkeypatch) -> list[list]:
    """The children under way each time a plan's context is built (the plan's own first)."""
    from kubectl_tspread.views.drain import plan as planmod
    at_context, real_context = [], planmod.build_context

    def build_context(*args):
        at_context.append(list(started))
        return real_context(*args)

    monkeypatch.setattr(planmod, "build_context", build_context)
    return at_context


def test_the_delete_nodes_replan_starts_at_the_proof_and_is_the_one_used(forks, results, monkeypatch):
    """In a trap the re-plan that deletes the drained nodes outlasts the plan: nothing is started before the plan's
    context, it is the first started once the proof comes (which cannot judge it here: every node of zone b is
    deleted), and its verdict is the one the remedies use."""
    snap, targets = _zone_trap()
    at_context = _children_at_context(forks.started, monkeypatch)
    started = _started_actions(monkeypatch)
    forked = plan_drain(snap, targets, workers=forks)
    assert at_context[0] == [] and started[0] == "DeleteDrainedNodes" and not forked.deletion_fails
    first = forks.started[0]
    assert [got is not None for child, got in results if child is first] == [True]
    # cordon-first: deleting the drained nodes one step at a time no longer clears the trap
    # (zone b's other nodes, cordoned at step 1 and still holding their pods, keep it a closed
    # domain), which is what the child's verdict says: the in-process plan's findings agree
    assert "DeleteDrainedNodes" not in {r.action for f in forked.findings for r in f.remedies}
    assert all(gone(c.pid) for c in forks.started)
    assert repr(forked.findings) == repr(no_fork_plan(snap, targets).findings)


def test_without_a_proof_no_delete_nodes_replan_is_started(forks, results, monkeypatch):
    """No trap proven (the order snapshot: some order is safe): no re-plan at all before the plan's context, and after
    the proof only the given order's check; the plan is the in-process one."""
    snap = _order_snapshot()
    targets = ["c2", "b1", "a1"]
    at_context = _children_at_context(forks.started, monkeypatch)
    started = _started_actions(monkeypatch)
    forked = plan_drain(snap, targets, workers=forks)
    assert at_context[0] == [] and started == []
    assert all(gone(c.pid) for c in forks.started)
    assert forked.safe and len(forks.started) == 1  # the given order's check
    assert repr(forked) == repr(no_fork_plan(snap, targets))


def test_a_proven_trap_starts_the_first_findings_other_replan_at_its_first_stranding(forks, results,
                                                                                      monkeypatch):
    """The zone trap, and a hostname-spread workload with a pod on every node, whose first
    replacement strands at once: once the fallback keeps that step, the stranding is the
    plan's first finding, and its other re-plans (Honor on that constraint, ...) start then,
    while the plan goes on — not after it. Their verdicts are the ones used, and the answer
    is the in-process one."""
    from kubectl_tspread.views.drain.core import search

    def api(nodes):
        # in a namespace of its own: the re-plan started early edits the pods of the finding's namespace
        return [make_pod(f"api-{i}", node=n.name, labels={"app": "api"}, owner="ReplicaSet/api-1", namespace="shop",
                         spread=[make_constraint(HOSTNAME_KEY, node_taints_policy=IGNORE, selector={"app": "api"})])
                for i, n in enumerate(nodes)]

    snap, targets = _zone_trap(api, [make_workload("ReplicaSet", "api-1", {"app": "api"}, namespace="shop")])
    children_at_step, real_batch, plans = [], search.run_batch, {}

    def run_batch(ctx, world, batch):
        plans.setdefault("plan", ctx)  # the plan's own steps, not a re-plan's made in-process
        if ctx is plans["plan"]:
            children_at_step.append((len(world.stranded), len(forks.started)))
        return real_batch(ctx, world, batch)

    monkeypatch.setattr(search, "run_batch", run_batch)
    forked = plan_drain(snap, targets, workers=forks)
    # one child before any stranding; from the first step simulated after one, every child
    # the remedies use (the first finding's candidates fill the allowance: nothing is left
    # to start once the plan is done)
    assert {n for stranded, n in children_at_step if not stranded} == {1}
    assert [n for stranded, n in children_at_step if stranded][:1] == [len(forks.started)]
    assert len(forks.started) > 1
    assert forked.stranded[0].step < forked.steps[-1].number  # so they began mid-plan
    second = forks.started[1]
    assert [got is not None for child, got in results if child is second] == [True]
    assert all(gone(c.pid) for c in forks.started)
    # cordon-first: zone b is closed from step 1, so web's trap strands first (it used to
    # strand at step 3, after api's hostname spread at step 1)
    assert forked.findings[0].workload == "ReplicaSet/web-1"
    assert "SetNodeTaintsPolicyHonor" in {r.action for r in forked.findings[0].remedies}
    in_process = no_fork_plan(snap, targets)
    assert repr(forked.findings) == repr(in_process.findings)


def _dead(pid: int) -> bool:
    """Whether the process no longer runs (gone, or a zombie its new parent has not reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_a_killed_planner():
    """A planner killed outright (a timeout, kill -9) cannot cancel its re-plans: the kernel
    ends them instead of leaving them to compute for minutes."""
    import subprocess
    code = ("import os, sys, time\n"
            "from kubectl_tspread.cli import workers\n"
            "child = workers.Child(lambda: time.sleep(60))\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    planner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        child = int(planner.stdout.readline())
        time.sleep(0.3)
        assert not _dead(child)
        planner.kill()
        planner.wait(10)
        deadline = time.time() + 10
        while not _dead(child) and time.time() < deadline:
            time.sleep(0.05)
        assert _dead(child)
    finally:
        planner.kill()


ORDER_CAPS = {"a1": 1, "a2": 1, "b1": 3, "b2": 1, "b3": 2, "c1": 3, "c2": 1}


def _order_snapshot():
    """zones a=1 b=3 c=1 pods of maxSkew 2: draining c2 first puts the skew at 3, b1 first is
    safe (tests/test_drain_plan.py, test_order_matters_when_the_minimum_domain_must_go_last;
    cordon-first made the case before it, c2 a1 b2, safe in the order given)."""
    nodes = [make_node(n, zone=n[0], allocatable={"cpu": 4000, "memory": 16 * 1024 ** 3, "pods": cap})
             for n, cap in ORDER_CAPS.items()]
    pods = web({"a1": 1, "b1": 1, "b3": 2, "c2": 1}, [make_constraint(max_skew=2)])
    return make_snapshot(nodes, pods, workloads=[RS])


@pytest.mark.parametrize("targets, matters", [
    pytest.param(["c2", "b1", "a1"], True, id="the given order puts the skew over: OrderMatters"),
    pytest.param(["a1", "c2", "b1"], None, id="another given order"),
])
def test_the_given_order_is_checked_in_a_child_with_the_same_answer(targets, matters, forks, monkeypatch):
    """A plan that may be safe starts the given order's check in a child before its first
    step; a safe plan in another order reads it (the same findings as in process)."""
    read = []
    real = workers.Child.result

    def result(self):
        got = real(self)
        read.append(got)
        return got

    monkeypatch.setattr(workers.Child, "result", result)
    snap = _order_snapshot()
    forked = plan_drain(snap, targets, PlanOptions(verify_remedies=False), workers=forks)
    assert forks.started, "no child started for the given order"
    assert all(gone(c.pid) for c in forks.started)
    in_process = no_fork_plan(snap, targets)
    assert repr(forked) == repr(in_process)
    assert forked.safe and [s.nodes for s in forked.steps] == [("b1",), ("a1",), ("c2",)]
    if matters:
        assert read and read[0] is not None and read[0].safe is False
        assert [f.code for f in forked.findings] == ["OrderMatters"]


def test_no_child_checks_the_given_order_when_no_order_is_safe(forks):
    """forked.py's proof (a zone drained under Ignore) says the plan cannot be safe: the
    given order is never asked about, so no child is started for it."""
    snap = make_snapshot(nodes_in({"a": 2, "b": 2, "c": 2}),
                         web({"a1": 1, "a2": 1, "b1": 1, "c1": 1}, [make_constraint(max_skew=1)]), workloads=[RS])
    plan = plan_drain(snap, ["a1", "a2"], PlanOptions(verify_remedies=False), workers=forks)
    assert not plan.safe and not forks.started


def test_no_child_checks_the_given_order_when_a_pod_can_never_be_evicted(forks):
    """A PDB that allows no disruption blocks a pod on a target: the plan cannot be safe,
    so the given order is never asked about and no child is started for it."""
    snap = _order_snapshot()
    snap = make_snapshot(snap.nodes, snap.pods, workloads=[RS], pdbs=[_pdb("web", 0)])
    plan = plan_drain(snap, ["c2", "b1", "a1"], PlanOptions(verify_remedies=False), workers=forks)
    assert not plan.safe and any(s.reason == "PdbBlocks" for s in plan.stranded) and not forks.started
