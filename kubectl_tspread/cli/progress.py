"""What `drain-safe --execute` tells the user while it works, three ways at once (and, at the
end, PlanStatus: what any drain-safe shows on a terminal while it plans).

- On an interactive stderr: rich progress bars (steps, evictions, replacements Ready),
  transient, with each action printed above them as it happens.
- Otherwise (a pipe, CI, a log collector): one plain line per action, e.g.
  `step 1/3: node/n1 cordoned`, `step 1/3: pod/default/web-1 evicted`.
- `--log FILE`: every action appended as one JSON line
  `{"time": …, "action": …, "object": …, "result": …}` (plus step/message when known),
  flushed at once so an interrupted run leaves whole lines behind.

Listeners see every record as the JSON dict; tests use one to interrupt a run at an
exact point. Consoles are made here, inside the command, never at import time.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import datetime, timezone
from typing import IO, Any, Callable, Iterable

from kubectl_tspread.cli import workers
from kubectl_tspread.model.plan import CHECK_ORDER, SIMULATE, VERIFY

# actions (the "action" field of a log line)
PLAN = "plan"
REPLAN = "replan"
CORDON = "cordon"
EVICT = "evict"
RETRY = "retry"
WAIT = "wait"
STEP = "step"
STOP = "stop"
INTERRUPT = "interrupt"
DONE = "done"

Listener = Callable[[dict], None]


def is_interactive(stream: IO[str]) -> bool:
    """A terminal a person watches (not a pipe, not TERM=dumb)."""
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Live:
    """What both displays share: rich bars in `_bars` while they are shown, guarded by `_lock`,
    taken away by close() on the way out of the `with` block (errors and Ctrl-C too)."""

    _bars: Any
    _lock: Any

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.stop_bars()

    def _show(self, bars: Any) -> None:
        bars.start()
        self._bars = bars
        # the refresh thread writes to the terminal while a plan forks re-plans: a child keeps
        # only the forking thread, so a lock that thread held half-way through a write (the
        # stream's buffer) would stay taken in the child for good. Forks wait for the redraw
        # (a terminal paused with Ctrl-S holds them until it resumes, as any write to it would)
        workers.FORK_LOCKS.append(bars.live._lock)

    def stop_bars(self) -> None:
        """Take the bars away (before a long explanation or the plan itself: they would redraw
        over it); again is harmless."""
        with self._lock:
            if self._bars is not None:
                workers.FORK_LOCKS.remove(self._bars.live._lock)
                self._bars.stop()
                self._bars = None


class Progress(_Live):
    """Use as a context manager; `record` is the one way actions are reported (thread-safe)."""

    def __init__(self, stream: IO[str] | None = None, interactive: bool | None = None, log_path: str | None = None,
                 listeners: Iterable[Listener] = (), now: Callable[[], str] = utc_now, color: str = "auto"):
        self.stream = stream if stream is not None else sys.stderr
        self.color = color  # --color auto|always|never, for the bars
        self.interactive = is_interactive(self.stream) if interactive is None else interactive
        self.listeners = list(listeners)
        self.now = now
        self.step_label = ""
        self._log_path = log_path
        self._log: IO[str] | None = None
        self._lock = threading.RLock()
        self._bars: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> "Progress":
        if self._log_path:
            try:
                self._log = open(self._log_path, "a", encoding="utf-8")
            except OSError as e:
                from kubectl_tspread.model.errors import UsageError

                raise UsageError(f"cannot open --log file {self._log_path}: {e.strerror}; "
                                 "pick a writable path") from None
        if self.interactive:
            self._start_bars()
        return self

    def close(self) -> None:
        self.stop_bars()
        with self._lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    # ---- records -------------------------------------------------------------------------

    def record(self, action: str, obj: str, result: str, **extra: Any) -> dict:
        """Report one action: a line for the user, a JSON line for --log, a call to each listener."""
        event = {"time": self.now(), "action": action, "object": obj, "result": result}
        event.update({k: v for k, v in extra.items() if v is not None})
        with self._lock:
            self._say(plain_line(event, self.step_label))
            if self._log is not None:
                self._log.write(json.dumps(event, sort_keys=False) + "\n")
                self._log.flush()
        for listener in self.listeners:
            listener(event)
        return event

    def say(self, text: str) -> None:
        """A free line for the user (explanations, summaries); not logged as an action."""
        with self._lock:
            self._say(text)

    def _say(self, text: str) -> None:
        if self._bars is not None:
            self._bars.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    # ---- bars ----------------------------------------------------------------------------

    def steps(self, done: int, total: int, nodes: Iterable[str] = ()) -> None:
        self.step_label = f"step {done + 1}/{total}" if done < total else ""
        self._bar("steps", "steps", done, total, ", ".join(nodes))

    def evictions(self, done: int, total: int) -> None:
        self._bar("evictions", "evictions", done, total)

    def replacements(self, done: int, total: int, detail: str = "") -> None:
        self._bar("wait", "replacements Ready", done, total, detail)

    def _bar(self, key: str, label: str, done: int, total: int, detail: str = "") -> None:
        with self._lock:
            if self._bars is None:
                return
            description = f"{label} {detail}".strip()
            if key not in self._tasks:
                self._tasks[key] = self._bars.add_task(description, total=max(total, 1), completed=done)
            else:
                self._bars.update(self._tasks[key], description=description, total=max(total, 1), completed=done)

    def _start_bars(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bars, SpinnerColumn, TextColumn, \
            TimeElapsedColumn

        self._show(Bars(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=_bar_console(self.stream, self.color), transient=True))


def _bar_console(stream: IO[str], color: str) -> Any:
    from rich.console import Console

    from kubectl_tspread.cli.terminal import use_color

    colored = use_color(color, stream)
    # the bars need a terminal's cursor moves even when --color never / NO_COLOR drop the colors
    return Console(file=stream, stderr=stream is sys.stderr, force_terminal=True,
                   color_system="standard" if colored else None, no_color=not colored)


# what PlanStatus shows for each phase of plan_drain (model/plan.py), and what it counts
READING = "reading the cluster"
_PHASES = {SIMULATE: ("simulating the drain", "nodes"), VERIFY: ("verifying remedies", "re-plans"),
           CHECK_ORDER: ("checking the order given", "")}


class PlanStatus(_Live):
    """What drain-safe shows while it reads the cluster and plans, which takes minutes for a
    whole zone of a big cluster: on an interactive stderr, one transient line for the phase
    under way, e.g. `⠸ simulating the drain ━━━━━━━━━━━━━━━━╸━━━━━━━━━━━━ 911/1667 nodes 0:00:41`;
    nothing at all otherwise (stdout, pipes and logs stay as they were).

    Use as a context manager (the line is gone on the way out, on error too); call it as
    plan_drain's `on_progress`. The line redraws itself four times a second, so the spinner
    and the time move while a phase reports nothing (loading, waiting for re-plans), and it
    is drawn at once whenever the phase changes."""

    def __init__(self, stream: IO[str] | None = None, interactive: bool | None = None, color: str = "auto"):
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = is_interactive(self.stream) if interactive is None else interactive
        self.color = color
        self._bars: Any = None
        self._task: Any = None
        self._label = ""
        self._lock = threading.RLock()

    def __enter__(self) -> "PlanStatus":
        if self.interactive:
            from rich.progress import BarColumn, Progress as Bars, SpinnerColumn, TextColumn, TimeElapsedColumn

            # stdout is the plan's alone: rich must not wrap it (nor stderr) while the line lives
            self._show(Bars(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                            console=_bar_console(self.stream, self.color), transient=True,
                            refresh_per_second=4, redirect_stdout=False, redirect_stderr=False))
        return self

    def __call__(self, phase: str, done: int | None, total: int | None) -> None:
        label, unit = _PHASES.get(phase, (phase, ""))
        self.show(label, done, total, unit)

    def show(self, label: str, done: int | None = None, total: int | None = None, unit: str = "") -> None:
        """The phase `label`, `done` of `total` `unit` when counted (a bar), else a spinner alone."""
        with self._lock:
            if self._bars is None:
                return
            count = f"{done}/{total} {unit}".rstrip() if total is not None and done is not None else ""
            if label != self._label or self._task is None:
                if self._task is not None:
                    self._bars.remove_task(self._task)
                self._task = self._bars.add_task(label, total=total, completed=done or 0, count=count)
                self._label = label
                self._bars.refresh()
            else:
                self._bars.update(self._task, total=total, completed=done or 0, count=count)


def plain_line(event: dict, step_label: str = "") -> str:
    """`step 1/3: node/n1 cordoned`; a message, when the record has one, follows after ': '."""
    head = f"{step_label}: " if step_label and event["action"] not in (PLAN, DONE, INTERRUPT) else ""
    text = f"{event['object']} {event['result']}".strip() if event["object"] else event["result"]
    if event.get("message"):
        text += f": {event['message']}"
    return head + text
