"""Helpers for the tests of forked re-plans (views/drain/parallel.py): a Child that records the
children started, the fixtures that turn forking on and read the verdicts (conftest.py
exposes them), and the plan made with forking off."""

from __future__ import annotations

import os

from kubectl_tspread.views.drain import parallel
from kubectl_tspread.views.drain.plan import plan_drain

AVAILABLE = parallel.available


def gone(pid: int) -> bool:
    """Whether the process is reaped (not running, not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


class Counting(parallel.Child):
    """parallel.Child, recording every child started (a class attribute, reset per test)."""

    started: list = []

    def __init__(self, fn):
        super().__init__(fn)
        Counting.started.append(self)


def counting(monkeypatch) -> list:
    """Forking on, even on a one-CPU runner (the answer must not depend on it either way);
    the children started."""
    monkeypatch.delenv("TSPREAD_NO_FORK", raising=False)
    monkeypatch.setattr(Counting, "started", [])
    monkeypatch.setattr(parallel, "Child", Counting)
    monkeypatch.setattr(parallel, "available", lambda: True)
    return Counting.started


def results(monkeypatch) -> list:
    """(child, verdict) of every Child.result() read, in order."""
    used, real = [], parallel.Child.result

    def result(self):
        got = real(self)
        used.append((self, got))
        return got

    monkeypatch.setattr(parallel.Child, "result", result)
    return used


def no_fork_plan(snap, targets, monkeypatch, *args):
    """plan_drain with TSPREAD_NO_FORK=1: every re-plan computed in-process, from scratch."""
    with monkeypatch.context() as m:
        m.setenv("TSPREAD_NO_FORK", "1")
        m.setattr(parallel, "available", AVAILABLE)  # the real check, which reads the variable
        m.setattr(parallel, "Child", _no_child)
        return plan_drain(snap, targets, *args)


def _no_child(fn):
    raise AssertionError("a child was started with TSPREAD_NO_FORK=1")
