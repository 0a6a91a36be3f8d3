"""What the drain planner asks of whoever computes its re-plans elsewhere: plan_drain's
`workers` (cli/workers.py forks them onto the machine's other cores; None: every re-plan is
computed in this process, when and where it is needed).

Verifying a remedy is a whole re-plan of the drain on the edited cluster, as costly as the
plan itself, and a safe plan whose order differs from the given one simulates the given
order too (findings.order_finding). Each is a pure function of the snapshot and the
untouched simulation: the planner hands it to `start` as soon as it knows it will want it,
and reads the Verdict where it would have computed it itself. A handle whose result is None
(its worker failed, for any reason) is computed in-process there instead, so the answer
never depends on the workers: only how soon it comes.
"""

from __future__ import annotations

from typing import Callable, Protocol

from kubectl_tspread.model.plan import Verdict


class Handle(Protocol):
    """One started computation."""

    def result(self) -> Verdict | None:
        """Wait for its Verdict; None when it failed (or was read or cancelled before)."""

    def cancel(self) -> None:
        """Stop it if it still runs (it was guessed wrong, or the plan is over); harmless twice."""


class Workers(Protocol):
    # at most this many computations under way at once, so guessed ones do not crowd out the
    # ones certainly needed
    limit: int

    def start(self, fn: Callable[[], Verdict]) -> Handle:
        """Have `fn()` computed elsewhere, from the state this process has now."""

    def outlive(self, *objs: object) -> None:
        """Called by `fn` with what it made: a worker that exits once its verdict is sent may
        keep them rather than free them one by one (the caller's process frees them as usual)."""
