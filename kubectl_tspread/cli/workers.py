"""The drain planner's workers (views/drain/workers.py): remedy re-plans, and the given
order's check, computed in forked processes, so they use the machine's other cores. A process
policy, so the commands choose it (cli/), and pass `forks()` to plan_drain.

A child process made with fork() inherits the planner's untouched simulation as it is,
computes the re-plan or the check and sends back its Verdict (safe, and the findings),
pickled through a pipe. The planner uses the verdict exactly where it would have computed it
itself; a child that fails for any reason reads as None, and the planner computes it
in-process instead, so the answer never depends on whether the fork worked.

The loader's page helper (snapshot/live.py's PageHelper, `page_helpers()`) is the other use:
a child decoding part of a live pod list while the loader decodes the rest; one that fails
has the list read again in the loader alone.

Only on Linux (fork is the only start method that shares the simulation without
pickling it, and macOS's fork is unsafe with system frameworks) and with more than one
CPU; TSPREAD_NO_FORK=1 turns it off.
"""

from __future__ import annotations

import mmap
import os
import pickle
import queue
import signal
import struct
import sys
import threading
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


def _fork(*fds: int) -> int:
    """fork() with FORK_LOCKS held; `fds` are closed if it fails."""
    held: list = []
    try:
        for lock in list(FORK_LOCKS):
            lock.acquire()  # Ctrl-C while waiting: nothing is forked, the command stops as usual
            held.append(lock)
        return os.fork()
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    finally:  # in the parent and in the child alike
        for lock in reversed(held):
            lock.release()


def _as_child(parent: int) -> None:
    """What a forked child does first: Ctrl-C as the default action, death with its parent."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _die_with(parent)


def _reap(pid: int) -> None:
    """Kill the child if it still runs, and reap it."""
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass


class _Forked:
    """A forked child sending one pickled answer back through the pipe read at `_fd`."""

    pid: int
    _fd: int
    _done: bool

    def _answer(self, kind: type):
        """Wait for the answer: None if the child failed, or sent no `kind`, or was read before."""
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
        self._fd, self._done = -1, True
        try:
            _, status = os.waitpid(self.pid, 0)
            got = pickle.loads(data) if status == 0 and data else None
        except (OSError, EOFError, pickle.PickleError):
            return None
        return got if isinstance(got, kind) else None

    def cancel(self) -> None:
        """Kill the child if it still runs, and reap it."""
        if self._done:
            return
        self._done = True
        _reap(self.pid)
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass


def _child_main(parent: int, write: int, compute: Callable[[], object], niced: bool) -> None:
    """The forked child's whole life: compute, send the answer pickled down `write`, exit (1 on any failure)."""
    code = 0
    try:
        _as_child(parent)
        if niced:
            _lower_priority()
        data = pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as out:
            out.write(data)
    except BaseException:
        code = 1
    os._exit(code)


class Child(_Forked):
    """`fn()` computed in a forked process; `result()` waits for it (None if the child failed)."""

    def __init__(self, fn: Callable[[], Verdict]):
        read, write = os.pipe()
        parent = os.getpid()
        pid = _fork(read, write)
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            global _KEPT
            os.close(read)
            _KEPT = []
            _child_main(parent, write, fn, niced=True)  # on failure the parent computes it itself
        os.close(write)
        self.pid, self._fd, self._done = pid, read, False

    def result(self) -> Verdict | None:
        return self._answer(Verdict)


class Forks:
    """views/drain/workers.Workers: each computation in a Child."""

    limit = MAX_CHILDREN

    def start(self, fn: Callable[[], Verdict]) -> Child:
        return Child(fn)

    def outlive(self, *objs: object) -> None:
        outlive(*objs)


FORKS = Forks()


def page_helpers() -> Callable[[Callable[[bytes, str], list]], PageChild] | None:
    """snapshot.live.PageHelpers for the commands' loading: a PageChild each, when available()."""
    return PageChild if available() else None


_FRAME = struct.Struct("<QI")  # a page's length, its token's
_DONE = struct.Struct("<Q")  # the pages a PageChild decoded so far


class PageChild(_Forked):
    """snapshot.live.PageHelper: a forked process decoding pages with `decode(data, token)` while
    the loader decodes the others. The pages go down a pipe, written by a thread, so the loader
    never waits on the child; the records come back pickled, all at once, when the list is read:
    one pickle, so what the child's records share they still share here. The child runs at the
    loader's priority: the loader waits for it. It counts the pages it decoded in memory shared
    with the loader, and is `idle()` while it has none but the one it decodes: the loader then
    sends the next page, else decodes it itself, so neither waits for the other and few pages
    queue, however the two processes' speeds compare."""

    def __init__(self, decode: Callable[[bytes, str], list]):
        down_read, down_write = os.pipe()
        try:
            up_read, up_write = os.pipe()
        except OSError:
            os.close(down_read)
            os.close(down_write)
            raise
        parent = os.getpid()
        done = mmap.mmap(-1, _DONE.size)  # shared with the child, which counts its pages decoded there
        pid = _fork(down_read, down_write, up_read, up_write)
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            os.close(down_write)
            os.close(up_read)
            # at the loader's priority: the loader waits for it; on failure it reads the list alone
            _child_main(parent, up_write, lambda: _decode_pages(down_read, decode, done), niced=False)
        os.close(down_read)
        os.close(up_write)
        _widen(down_write)
        self.pid, self._fd, self._done, self._gone = pid, up_read, False, False
        self._sent, self._done_pages = 0, done
        self._pages: queue.SimpleQueue = queue.SimpleQueue()
        self._feeder = threading.Thread(target=self._feed, args=(down_write,), daemon=True,
                                        name="tspread-page-helper")
        self._feeder.start()

    def idle(self) -> bool:
        # the child decodes the last page sent at most: a page sent now is the next it starts
        return self._sent - _DONE.unpack_from(self._done_pages)[0] <= 1

    def send(self, data: bytes, token: str) -> bool:
        if self._gone:
            return False
        self._sent += 1
        self._pages.put((data, token))
        return True

    def _feed(self, fd: int) -> None:
        """Write each page sent down the pipe; a child gone ends it (results() says so)."""
        try:
            while True:
                got = self._pages.get()
                if got is None:
                    break
                data, token = got
                raw = token.encode()
                _write_all(fd, _FRAME.pack(len(data), len(raw)) + raw)
                _write_all(fd, data)
                del data, got
        except OSError:  # the child is gone: refused a page, or killed
            self._gone = True
        finally:
            os.close(fd)

    def results(self) -> list[list] | None:
        """The records of each page sent, in order; None if the child failed."""
        self._pages.put(None)
        return self._answer(list)

    def cancel(self) -> None:
        self._pages.put(None)
        super().cancel()


def _widen(fd: int) -> None:
    """A pipe as large as allowed: a page goes down in a few writes, not dozens, each of which
    wakes the feeder thread and takes the loader's GIL."""
    try:
        import fcntl

        with open("/proc/sys/fs/pipe-max-size") as f:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, int(f.read()))
    except (OSError, ValueError, AttributeError, ImportError):
        pass  # the default size works, more slowly


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _decode_pages(fd: int, decode: Callable[[bytes, str], list],  # pragma: no cover - in the child
                  done: mmap.mmap) -> list[list]:
    out = []
    with os.fdopen(fd, "rb") as src:
        while True:
            head = src.read(_FRAME.size)
            if not head:
                return out
            size, token_size = _FRAME.unpack(head)
            token = src.read(token_size).decode()
            data = src.read(size)
            if len(data) != size:
                raise EOFError("a page was cut short")
            out.append(decode(data, token))
            _DONE.pack_into(done, 0, len(out))
            del data
