"""Helpers for the tests of forked re-plans (cli/workers.py): the cli's workers recording the
children they start, the fixtures that hand them out and read the verdicts (conftest.py
exposes them), and the plan made with no workers."""

from __future__ import annotations

import os

from kubectl_tspread.cli import workers
from kubectl_tspread.views.drain.plan import plan_drain


def gone(pid: int) -> bool:
    """Whether the process is reaped (not running, not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


class Counting(workers.Forks):
    """cli/workers.Forks, recording every child started (in `started`). Forking happens
    whatever available() says, even on a one-CPU runner: the answer must not depend on it
    either way, and a test handed these workers does fork."""

    def __init__(self) -> None:
        self.started: list[workers.Child] = []

    def start(self, fn):
        child = super().start(fn)
        self.started.append(child)
        return child


def forks() -> Counting:
    return Counting()


def results(monkeypatch) -> list:
    """(child, verdict) of every Child.result() read, in order."""
    used, real = [], workers.Child.result

    def result(self):
        got = real(self)
        used.append((self, got))
        return got

    monkeypatch.setattr(workers.Child, "result", result)
    return used


def no_fork_plan(snap, targets, *args):
    """plan_drain with no workers: every re-plan computed in-process, from scratch."""
    return plan_drain(snap, targets, *args)


class CountingPages(workers.PageChild):
    """cli/workers.PageChild, counting the pages it is sent."""

    def __init__(self, decode) -> None:
        super().__init__(decode)
        self.sent = 0

    def send(self, data: bytes, token: str) -> bool:
        took = super().send(data, token)
        self.sent += took
        return took


def page_helpers(made: list, decode=None):
    """snapshot.live.PageHelpers that fork a CountingPages each (into `made`); `decode`, when
    given, replaces the decoding the loader asks of the child."""
    def start(fn):
        child = CountingPages(decode or fn)
        made.append(child)
        return child
    return start
