"""Pausing Python's cyclic garbage collector around allocation-heavy work: a process policy,
so the commands apply it (cli/), around the snapshot's loading and the drain's planning;
snapshot/ and views/ know nothing of it.

Loading a big cluster and planning a drain each allocate millions of small objects and
make no reference cycles worth collecting; refcounting frees their garbage. With the
collector on, each allocation burst triggers a collection that walks every tracked
object made so far (the figures are in docs/PERFORMANCE.md's git history).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

from kubectl_tspread.model import Snapshot


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The collector off for the block, back as it was afterwards (on error too)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_quietly(load, *args, **kwargs) -> Snapshot:
    """`load(*args, **kwargs)` (snapshot.load_snapshot) with no cyclic collection while its
    records are built, then the records frozen: moved out of the collector's sight for the
    rest of the command (refcounting still frees them). Each allocation burst otherwise set
    off a collection that walked every record made so far, which made loading a big cluster
    markedly slower."""
    with no_cyclic_gc():
        snap = load(*args, **kwargs)
        # frozen before the collector is back: the first collection after it would otherwise
        # walk every record made while it was off
        gc.freeze()
    return snap


def plan_quietly(plan, *args, **kwargs):
    """`plan(*args, **kwargs)` (views.drain.plan.plan_drain) with the collector off: with the
    snapshot frozen after loading, the simulation's objects are the whole tracked heap, and
    every collection would walk them all, again and again as the plan makes more."""
    with no_cyclic_gc():
        return plan(*args, **kwargs)
