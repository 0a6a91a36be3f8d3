"""Pausing Python's cyclic garbage collector around allocation-heavy work.

Loading a big cluster and planning a drain each allocate millions of small objects and
make no reference cycles worth collecting; refcounting frees their garbage. With the
collector on, each allocation burst triggers a collection that walks every tracked
object made so far (snapshot/__init__.py and views/drain/plan.py give the figures).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


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
