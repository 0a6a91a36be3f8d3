"""drain-safe's status line while it reads the cluster and plans (cli/progress.py PlanStatus):
what plan_drain reports through `on_progress`, what the line shows on a terminal, and that it
shows nothing, and changes nothing, anywhere else."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import threading
from dataclasses import replace

import pytest

from conftest import make_constraint, make_node, make_snapshot, make_workload
from drain_builders import nodes_in, web
from kubectl_tspread.cli import workers
from kubectl_tspread.model.plan import CHECK_ORDER, SIMULATE, VERIFY, PlanOptions, Verdict
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.cli.progress import READING, PlanStatus
from kubectl_tspread.views.drain.remedies import attach_remedies, first_replans
from kubectl_tspread.model import IGNORE

RS = make_workload("ReplicaSet", "web-1", {"app": "web"})
ZONE_A = ["a1", "a2"]


def trapped_zone():
    """zone a of a/b/c drained under Ignore: the cordoned-domain trap, with verified remedies."""
    return make_snapshot(nodes_in({"a": 2, "b": 2, "c": 2}),
                         web({"a1": 1, "a2": 1, "b1": 1, "b2": 1, "c1": 1, "c2": 1},
                             [make_constraint(node_taints_policy=IGNORE)]), workloads=[RS])


def order_matters():
    """zones a=1 b=3 c=1 pods of maxSkew 2: the given order (c2 first) puts the skew at 3, the
    plan's (b1 first) is safe (the scenario of test_drain_plan's minimum-domain-last test, which
    cordon-first changed: the order c2 a1 b2 of the one before is safe now)."""
    caps = {"a1": 1, "a2": 1, "b1": 3, "b2": 1, "b3": 2, "c1": 3, "c2": 1}
    nodes = [make_node(n, zone=n[0], allocatable={"cpu": 4000, "memory": 16 * 1024 ** 3, "pods": cap})
             for n, cap in caps.items()]
    return make_snapshot(nodes, web({"a1": 1, "b1": 1, "b3": 2, "c2": 1}, [make_constraint(max_skew=2)]),
                         workloads=[RS])


def planned(snap, targets, options=PlanOptions(), **kw):
    calls = []
    plan = plan_drain(snap, targets, options, lambda *call: calls.append(call), **kw)
    return plan, calls


@pytest.mark.parametrize("fork", [True, False], ids=["re-plans forked", "in-process"])
def test_a_trapped_zone_reports_each_node_played_then_each_remedy_replan(fork, forks):
    snap = trapped_zone()
    plan, calls = planned(snap, ZONE_A, workers=forks if fork else None)
    assert bool(forks.started) is fork
    assert not plan.safe and any(r.verified for f in plan.findings for r in f.remedies)
    assert plan == plan_drain(snap, ZONE_A)  # watching changes nothing
    simulated = [c for c in calls if c[0] == SIMULATE]
    assert simulated[0] == (SIMULATE, 0, 2) and simulated[-1] == (SIMULATE, 2, 2)
    assert [d for _, d, _ in simulated] == sorted(d for _, d, _ in simulated)
    verified = calls[calls.index(simulated[-1]) + 1:]
    assert verified and {c[0] for c in verified} == {VERIFY}
    # the count: the re-plans attach_remedies makes, of those first_replans says it starts with
    bare = plan_drain(snap, ZONE_A, PlanOptions(verify_remedies=False))
    made = []

    def replan(s, o):
        made.append(o)
        return plan_drain(s, ZONE_A, o)

    attach_remedies(snap, ZONE_A, PlanOptions(), replace(bare, findings=()), list(bare.findings), replan)
    wanted = len(first_replans(snap, ZONE_A, PlanOptions(), bare, list(bare.findings)))
    assert len(made) >= 2
    assert verified == [(VERIFY, i, wanted) for i in range(len(made) + 1)]


def test_a_safe_plan_in_another_order_says_it_checks_the_order_given():
    plan, calls = planned(order_matters(), ["c2", "b1", "a1"])
    assert plan.safe and [f.code for f in plan.findings] == ["OrderMatters"]
    assert calls[0] == (SIMULATE, 0, 3) and calls[-2:] == [(SIMULATE, 3, 3), (CHECK_ORDER, None, None)]
    assert VERIFY not in {c[0] for c in calls}


def test_without_remedies_only_the_simulation_is_reported():
    _, calls = planned(trapped_zone(), ZONE_A, PlanOptions(verify_remedies=False))
    assert calls == [(SIMULATE, 0, 2), (SIMULATE, 1, 2), (SIMULATE, 2, 2)]


def test_with_no_one_watching_no_remedy_list_is_made_for_it(monkeypatch):
    """first_replans runs for the display only when something displays (or to fork: no
    workers here)."""
    asked = []
    real = first_replans

    def counting(*a, **kw):
        asked.append(1)
        return real(*a, **kw)

    monkeypatch.setattr("kubectl_tspread.views.drain.remedies.first_replans", counting)
    plan_drain(trapped_zone(), ZONE_A)
    assert asked == []
    planned(trapped_zone(), ZONE_A)
    assert asked == [1]


def screen(text: str) -> str:
    """What is left of `text` once its control sequences are dropped (rough, for assertions)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_on_a_terminal_each_phase_is_drawn_with_its_count():
    buf = io.StringIO()
    with PlanStatus(buf, interactive=True, color="never") as status:
        status.show(READING)
        status(SIMULATE, 0, 1667)
        status(SIMULATE, 911, 1667)
        status(VERIFY, 1, 2)
        status(CHECK_ORDER, None, None)
    shown = screen(buf.getvalue())
    for text in ("reading the cluster", "simulating the drain", "0/1667 nodes", "verifying remedies",
                 "1/2 re-plans", "checking the order given"):
        assert text in shown
    assert "\x1b[" in buf.getvalue()


def test_the_line_is_gone_once_closed_and_closing_again_is_harmless():
    buf = io.StringIO()
    status = PlanStatus(buf, interactive=True, color="never")
    with status:
        status(SIMULATE, 1, 2)
        status.close()
        drawn = buf.getvalue()
        status(SIMULATE, 2, 2)  # after close: nothing more is drawn
    assert buf.getvalue() == drawn
    # the last thing written erases the line: what the terminal shows after it is empty
    last = drawn.rsplit("simulating the drain", 1)[1]
    assert "\x1b[2K" in last


def test_off_a_terminal_nothing_is_written():
    buf = io.StringIO()
    with PlanStatus(buf) as status:  # a StringIO is no terminal
        assert not status.interactive
        status.show(READING)
        status(SIMULATE, 0, 2)
        status(VERIFY, 1, 2)
    assert buf.getvalue() == ""


def test_term_dumb_is_not_a_terminal_to_draw_on(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("TERM", "dumb")
    assert not PlanStatus(Tty()).interactive
    monkeypatch.setenv("TERM", "xterm")
    assert PlanStatus(Tty()).interactive


DEMO_ZONE = ["drain-safe", "--demo", "--domain", "topology.kubernetes.io/zone=us-east-2a", "--ignore-daemonsets"]


def _run(args, stderr_on_pty: bool, env_extra=None):
    """The CLI in a child process, stdout on a pipe; stderr on a pseudo-terminal or a pipe.
    Returns (exit code, stdout, stderr)."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120", **(env_extra or {})}
    env.pop("NO_COLOR", None)
    if not stderr_on_pty:
        done = subprocess.run([sys.executable, "-m", "kubectl_tspread", *args], capture_output=True, text=True,
                              env=env, timeout=120)
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    try:
        child = subprocess.Popen([sys.executable, "-m", "kubectl_tspread", *args], stdout=subprocess.PIPE,
                                 stderr=slave, stdin=subprocess.DEVNULL, env=env)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        out = child.stdout.read().decode()
        code = child.wait(60)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    return code, out, b"".join(chunks).decode(errors="replace")


def test_through_the_cli_the_line_shows_on_a_terminal_and_stdout_is_unchanged():
    code, out, err = _run(DEMO_ZONE, stderr_on_pty=True)
    plain_code, plain_out, plain_err = _run(DEMO_ZONE, stderr_on_pty=False)
    assert (code, out) == (plain_code, plain_out) and plain_err == ""
    assert code == 3 and "CordonedDomainTrap" in out
    shown = screen(err)
    for text in ("reading the cluster", "simulating the drain", "verifying remedies"):
        assert text in shown
    # after the last phase drawn: the cursor is given back, and the line erased
    tail = err.rsplit("re-plans", 1)[1]
    assert "\x1b[?25h" in tail and tail.endswith("\x1b[2K")


def test_through_the_cli_term_dumb_draws_nothing():
    code, out, err = _run(DEMO_ZONE, stderr_on_pty=True, env_extra={"TERM": "dumb"})
    assert code == 3 and out and err == ""


def test_while_the_line_is_shown_a_fork_waits_for_its_redraw_and_the_child_gets_it_free():
    """The refresh thread writes to the terminal while a plan forks re-plans; a child keeps only
    the forking thread, so a lock held half-way through a write would stay taken in it. Each
    fork takes the redraw lock first (workers.FORK_LOCKS) and lets go of it on both sides."""
    with PlanStatus(io.StringIO(), interactive=True, color="never") as status:
        status(SIMULATE, 1, 2)
        lock = status._bars.live._lock
        assert workers.FORK_LOCKS == [lock]
        redrawing = threading.Event()
        done = threading.Event()

        def redraw():  # a redraw that lasts until told to end
            with lock:
                redrawing.set()
                done.wait(10)

        t = threading.Thread(target=redraw)
        t.start()
        redrawing.wait(10)
        made = []
        forking = threading.Thread(target=lambda: made.append(workers.Child(
            lambda: Verdict(repr(lock).startswith("<unlocked"), ()))))
        forking.start()
        forking.join(0.3)
        assert forking.is_alive() and not made  # waits for the redraw
        done.set()
        t.join()
        forking.join(10)
        assert made[0].result() == Verdict(True, ())  # the child's copy is free
        assert _other_thread_acquires(lock)  # and the parent's
    assert workers.FORK_LOCKS == []  # closed: later forks wait for nothing


def _other_thread_acquires(lock) -> bool:
    got = []

    def take():
        ok = lock.acquire(timeout=5)
        got.append(ok)
        if ok:
            lock.release()

    t = threading.Thread(target=take)
    t.start()
    t.join()
    return got[0]


class _Interrupted:
    """A fork lock whose wait is cut short by Ctrl-C."""

    def acquire(self):
        raise KeyboardInterrupt

    def release(self):  # pragma: no cover - never held
        raise AssertionError("released without being held")


def test_ctrl_c_while_a_fork_waits_stops_without_a_child_or_a_leaked_pipe(monkeypatch):
    free = threading.Lock()
    monkeypatch.setattr(workers, "FORK_LOCKS", [free, _Interrupted()])

    def fork():  # pragma: no cover - reached only if the interrupt is not honoured
        raise AssertionError("forked after Ctrl-C")

    monkeypatch.setattr(workers.os, "fork", fork)
    fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(KeyboardInterrupt):
        workers.Child(lambda: Verdict(True, ()))
    assert len(os.listdir("/proc/self/fd")) == fds
    assert not free.locked()  # what was taken is given back
