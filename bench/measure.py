"""Run a command as a child process and measure it whole: wall time, CPU time, peak RSS.

`os.wait4` returns the child's own resource usage, so the numbers are the process's
(user + system CPU, ru_maxrss), not the runner's, and nothing but the child is counted.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Sample:
    wall: float  # seconds
    cpu: float  # user + system seconds
    rss_mb: float  # peak resident set size, MiB
    rc: int
    stderr: str = ""
    timed_out: bool = False


@dataclass
class Stats:
    samples: list[Sample] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.samples)

    def _median(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)

    @property
    def wall(self) -> float:
        return self._median("wall")

    @property
    def cpu(self) -> float:
        return self._median("cpu")

    @property
    def rss_mb(self) -> float:
        return self._median("rss_mb")


def run(argv: list[str], env: dict | None = None, cwd: str | None = None, timeout: float = 900.0,
        stdout_path: str | None = None) -> Sample:
    """One run of `argv`; stdout goes to `stdout_path` (or nowhere), stderr is kept for errors."""
    with tempfile.TemporaryFile() as err, open(stdout_path or os.devnull, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        killed = threading.Event()

        def _kill() -> None:
            killed.set()
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, _kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        err.seek(0)
        text = err.read().decode(errors="replace")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, proc.returncode,
                  text[-2000:], killed.is_set())
