"""What the drain planner asks of whoever computes its re-plans elsewhere: plan_drain's `workers` (cli/workers.py forks
them; None: all are computed in-process). Remedy re-plans, each as costly as the plan, and the given order's check
(findings.order_finding) are pure functions of the snapshot and the untouched simulation: the planner starts each when
it knows it will want it and reads it where it would have computed it. A None result (its worker failed) is computed
in-process there instead: the answer never depends on the workers, only how soon it comes."""

from __future__ import annotations

from typing import Callable, Protocol

from kubectl_tspread.model.plan import Verdict


class Handle(Protocol):
    def result(self) -> Verdict | None:
        """Wait for its Verdict; None when it failed (or was read or cancelled before)."""

    def cancel(self) -> None:
        """Stop it if it still runs (guessed wrong, or the plan is over); harmless twice."""


class Workers(Protocol):
    limit: int  # at most this many under way at once, so guessed ones do not crowd out those certainly needed

    def start(self, fn: Callable[[], Verdict]) -> Handle:
        """Have `fn()` computed elsewhere, from the state this process has now."""

    def outlive(self, *objs: object) -> None:
        """Called by `fn` with what it made: a worker exiting once its verdict is sent may keep it, not free it."""
