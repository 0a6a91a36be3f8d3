"""The drain planner's workers (views/drain/workers.py): remedy re-plans, and the given
order's check, computed in forked processes, so they use the machine's other cores. A process
policy, so the commands choose it (cli/), and pass `forks()` to plan_drain.

A child process made with fork() inherits the planner's untouched simulation as it is,
computes the re-plan or the check and sends back its Verdict (safe, and the findings),
pickled through a pipe. The planner uses the verdict exactly where it would have computed it
itself; a child that fails for any reason reads as None, and the planner computes it
in-process instead, so the answer never depends on whether the fork worked.

Only on Linux (fork is the only start method that shares the simulation without
pickling it, and macOS's fork is unsafe with system frameworks) and with more than one
CPU; TSPREAD_NO_FORK=1 turns it off.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Callable

from kubectl_tspread.model.plan import Verdict

MAX_CHILDREN = 4
# a child's niceness above the planner's: the plan a user waits for keeps a core to itself, and
# its single-threaded tail (the table's render, the remedies' attachment) overlaps the re-plans
# instead of following them on an idle second core (docs/PERFORMANCE.md)
CHILD_NICENESS = 5
# locks that a fork must not split, taken around each fork() (cli/progress.py adds the redraw
# lock of the bars it shows: no child may start while a line is half-way written)
FORK_LOCKS: list = []
PR_SET_PDEATHSIG = 1  # linux/prctl.h
# in a forked child: what outlive() was handed, kept until os._exit (None in the parent)
_KEPT: list | None = None


def forks() -> Forks | None:
    """The workers the commands plan with: forked children when available(), else None (the
    planner computes everything in-process)."""
    return FORKS if available() else None


def available() -> bool:
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and (os.cpu_count() or 1) > 1
            and os.environ.get("TSPREAD_NO_FORK", "") in ("", "0"))


def outlive(*objs: object) -> None:
    """In a forked child, keep `objs` until it exits, which frees nothing: a re-plan's
    simulation and steps of a big cluster are millions of objects, and freeing them one by
    one once its verdict is made would delay the verdict reaching the parent.
    In the parent (and with forking off) nothing is kept: they are freed as usual."""
    if _KEPT is not None:
        _KEPT.extend(objs)


def _die_with(parent: int) -> None:
    """Have the kernel kill this (forked) process when its parent dies: a planner killed by
    a timeout or `kill` must not leave a re-plan computing for minutes with nobody to read
    it (Ctrl-C reaches the children anyway: they are in its process group).
    PR_SET_PDEATHSIG through libc; a parent already gone ends the child at once."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # no prctl: the parent's cancel() is then the only way out
    if os.getppid() != parent:
        os._exit(1)


def _lower_priority() -> None:
    """Give this (forked) process CHILD_NICENESS more than it had; never fatal."""
    try:
        os.nice(CHILD_NICENESS)
    except OSError:
        pass


class Child:
    """`fn()` computed in a forked process; `result()` waits for it (None if the child failed)."""

    def __init__(self, fn: Callable[[], Verdict]):
        read, write = os.pipe()
        parent = os.getpid()
        held: list = []
        try:
            for lock in list(FORK_LOCKS):
                lock.acquire()  # Ctrl-C while waiting: nothing is forked, the plan stops as usual
                held.append(lock)
            pid = os.fork()
        except BaseException:
            os.close(read)
            os.close(write)
            raise
        finally:  # in the parent and in the child alike
            for lock in reversed(held):
                lock.release()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            global _KEPT
            os.close(read)
            code, _KEPT = 0, []
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                _die_with(parent)
                _lower_priority()
                data = pickle.dumps(fn(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as out:
                    out.write(data)
            except BaseException:  # the parent computes it itself
                code = 1
            os._exit(code)
        os.close(write)
        self.pid, self._fd, self._done = pid, read, False

    def result(self) -> Verdict | None:
        if self._done:
            return None
        try:
            with os.fdopen(self._fd, "rb") as src:
                data = src.read()
        except BaseException as e:  # interrupted (Ctrl-C) or a broken pipe: never leave the child behind
            self._fd = -1
            self.cancel()
            if isinstance(e, OSError):
                return None
            raise
        self._done = True
        try:
            _, status = os.waitpid(self.pid, 0)
            got = pickle.loads(data) if status == 0 and data else None
        except (OSError, EOFError, pickle.PickleError):
            return None
        return got if isinstance(got, Verdict) else None

    def cancel(self) -> None:
        """Kill the child if it still runs, and reap it."""
        if self._done:
            return
        self._done = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass


class Forks:
    """views/drain/workers.Workers: each computation in a Child."""

    limit = MAX_CHILDREN

    def start(self, fn: Callable[[], Verdict]) -> Child:
        return Child(fn)

    def outlive(self, *objs: object) -> None:
        outlive(*objs)


FORKS = Forks()
