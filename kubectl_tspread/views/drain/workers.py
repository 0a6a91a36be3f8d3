"""What the drain planner asks of plan_drain's `workers` (cli/workers.py forks them; None: all run in-process). Remedy
re-plans and the order check (findings.order_finding) are pure functions of the snapshot and the untouched simulation,
started once wanted; a None result (its worker failed) is computed in-process, so workers change only the timing."""

from __future__ import annotations

from typing import Callable, Protocol

from kubectl_tspread.model.plan import Verdict


class Handle(Protocol):
    def result(self) -> Verdict | None:
        """Wait for its Verdict; None when it failed (or was read or cancelled before)."""

    def cancel(self) -> None:
        """Stop it if it still runs; harmless twice."""


class Workers(Protocol):
    limit: int  # at most this many under way at once, so guessed ones do not crowd out those certainly needed

    def start(self, fn: Callable[[], Verdict]) -> Handle:
        """Have `fn()` computed elsewhere, from the state this process has now."""

    def outlive(self, *objs: object) -> None:
        """Called by `fn` with what it made: a worker exiting once its verdict is sent may keep it, not free it."""
