"""`drain-safe --execute`: the only code that changes a cluster.

    execute(snapshot, targets, plan_options, out, source=…, yes=…, dry_run=…, timeout=…, log_file=…)

Shows the plan and asks (``--yes`` skips it; no terminal and no --yes refuses). Then,
per step: re-read the cluster, re-plan what is left (views/drain/plan.py), stop if that plan is
no longer safe, cordon the step's nodes, evict its pods through policy/v1 Eviction (up to
--max-parallel at once; 429s back off until the step's --timeout), and wait until the
evicted pods are gone, their replacements are Ready and the workloads' DoNotSchedule
constraints are within their limits (views/drain/waiting.py). A Pending replacement that no
node can take stops the run with the why-pending explanation.

``--dry-run=server`` plays the plan as computed (nothing changes, so there is nothing to
re-read or wait for) with every write marked dryRun=All: the API server checks the PDBs.

Any stop after a change prints the run's state and the exact commands to resume or undo
(cli/resume.py). Ctrl-C and SIGTERM abandon backoff waits at once, let in-flight HTTP
calls finish, and report; the same command continues later.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Callable, Iterator, Sequence

from kubectl_tspread.cli import progress as P
from kubectl_tspread.model.plan import DRAIN_KINDS, DrainPlan, PlanOptions, Step
from kubectl_tspread.cli.gcpause import plan_quietly
from kubectl_tspread.cli.workers import forks
from kubectl_tspread.views.drain.plan import plan_drain
from kubectl_tspread.cli.progress import Progress
from kubectl_tspread.cli.resume import INTERRUPTED_AGAIN, UNREACHABLE, RunState, resume_command, state_lines
from kubectl_tspread.views.drain.waiting import WaitTarget, budget_held, controller_of, evaluate, stuck, \
    target_for_leftovers, target_for_step
from kubectl_tspread.snapshot.drainwriter import BackoffPolicy, Cancelled, ConnectionLost, EvictionBlocked, \
    EvictionRefused, Writer
from kubectl_tspread.model.errors import EXIT_ERROR, EXIT_FOUND, EXIT_OK, TspreadError
from kubectl_tspread.model import Pod, Snapshot

EXIT_INTERRUPTED = 130


@dataclass
class ExecuteSettings:
    """Knobs the command line does not expose; tests make them small."""

    poll_interval: float = 2.0
    backoff_base: float = 1.0
    max_backoff: float = 30.0
    connection_attempts: int = 4
    read_retry: object = None  # snapshot.live.RetryPolicy for the re-reads; None = its default
    listeners: tuple = ()  # progress listeners (each gets every record as a dict)
    interactive: bool | None = None  # progress bars; None = when stderr is a terminal
    stdin: IO[str] | None = None
    stderr: IO[str] | None = None


SETTINGS = ExecuteSettings()


class DrainStopped(TspreadError):
    """The run stopped on purpose (unsafe re-plan, timeout, stuck replacement, refused eviction)."""


class Interrupted(TspreadError):
    exit_code = EXIT_INTERRUPTED


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C."""


# ---- entry point (called by cli_drain) -------------------------------------------------

def execute(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, out, *, source, yes: bool,
            dry_run: str, timeout: float | None, log_file: str | None,
            settings: ExecuteSettings | None = None, plan: DrainPlan | None = None) -> int:
    """Show the plan (`plan` when already made of `snapshot`), ask, then carry it out."""
    s = settings or SETTINGS
    stderr = s.stderr or sys.stderr
    if plan is None:
        plan = plan_quietly(plan_drain, snapshot, targets, options, workers=forks())
    held = budget_held(snapshot, plan)
    if held is not None:
        snapshot, plan = _settle_first(snapshot, targets, options, out, held, source=source, timeout=timeout,
                                       log_file=log_file, settings=s)
    show_plan(plan, out)
    if not plan.safe:
        raise TspreadError("the plan is not safe, so nothing was changed; apply a remedy listed above "
                           "and rerun", EXIT_FOUND)
    server_dry = dry_run == "server"
    if not server_dry:  # a server dry run changes nothing: no reason to ask
        confirm(plan, yes, s.stdin or sys.stdin, stderr)
    from kubectl_tspread.snapshot.live import connect

    kube = kube_options(source)
    cluster = connect(kube, retry=s.read_retry)
    policy = BackoffPolicy(base=s.backoff_base, max_backoff=s.max_backoff, connection_attempts=s.connection_attempts)
    writer = Writer(cluster, dry_run=server_dry, policy=policy)
    def resume(nodes: Sequence[str]) -> str:
        return resume_command(nodes, options, source, timeout, log_file)

    with Progress(stderr, s.interactive, log_file, s.listeners, color=out.color) as progress, sigterm_as_interrupt():
        ex = Executor(live_reader(kube, cluster, source), tuple(targets), options, writer,
                      progress, timeout, s.poll_interval, resume, color=out.color)
        return ex.dry_run(plan) if server_dry else ex.run()


def _settle_first(snapshot: Snapshot, targets: Sequence[str], options: PlanOptions, out, held: WaitTarget, *,
                  source, timeout: float | None, log_file: str | None,
                  settings: ExecuteSettings) -> tuple[Snapshot, DrainPlan]:
    """Wait (up to --timeout) for the pods `held` names to be Ready, then read and plan again.
    Nothing is changed meanwhile, so a stop here needs no state block."""
    from kubectl_tspread.snapshot.live import connect

    kube = kube_options(source)
    cluster = connect(kube, retry=settings.read_retry)
    stderr = settings.stderr or sys.stderr
    names = ", ".join(f"{c[1]}/{c[2]}" for c in held.expect_ready)
    with Progress(stderr, settings.interactive, log_file, settings.listeners, color=out.color) as progress, \
            sigterm_as_interrupt():
        progress.say(f"Pods of {names} are not Ready yet (an earlier run's replacements, most likely): their "
                     "evictions still hold the PodDisruptionBudget, so the plan is judged once they are Ready.")
        ex = Executor(live_reader(kube, cluster, source), tuple(targets), options,
                      Writer(cluster), progress, timeout, settings.poll_interval, "", color=out.color)
        try:
            ex._wait(held, ex._deadline(), 0)
        except DrainStopped as e:
            raise DrainStopped(f"{e} (nothing was changed by this run)", EXIT_FOUND) from None
        snapshot = ex._read()
    return snapshot, plan_quietly(plan_drain, snapshot, targets, options, workers=forks())


def show_plan(plan: DrainPlan, out) -> None:
    """The plan, whole or not at all (cli_output.whole_answer), before anything is asked or done."""
    from kubectl_tspread.cli.output import whole_answer
    from kubectl_tspread.cli.terminal import Screen
    from kubectl_tspread.render import structured
    from kubectl_tspread.render.drain import drain_plan_view, plan_text

    with whole_answer():
        if out.structured:
            for piece in structured.pieces(drain_plan_view(plan), out.output):
                sys.stdout.write(piece)
        else:
            screen = Screen(out, sys.stdout)
            sys.stdout.write(plan_text(plan, wide=out.wide, no_headers=out.no_headers, fit=screen.fit,
                                       color=screen.color))
    sys.stdout.flush()


def confirm(plan: DrainPlan, yes: bool, stdin: IO[str], stderr: IO[str]) -> None:
    """Ask on the terminal; refuse without one unless --yes."""
    if yes:
        return
    try:
        tty = stdin.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        raise TspreadError("refusing to drain without confirmation: there is no terminal to ask on; review "
                           "the plan above and rerun with --yes")
    pods = sum(len(s.evictions) for s in plan.steps)
    stderr.write(f"Drain {', '.join(plan.nodes)} in {len(plan.steps)} step(s), evicting {pods} pod(s)? [y/N] ")
    stderr.flush()
    if stdin.readline().strip().lower() not in ("y", "yes"):
        raise TspreadError("drain cancelled; nothing was changed")


def live_reader(kube, cluster, source) -> Callable[[], Snapshot]:
    """The re-reads of live state before each step, under the same --kube-version as the plan
    they continue (without it, the server's own minor)."""
    from kubectl_tspread.snapshot import with_kube_version
    from kubectl_tspread.snapshot.live import load_live

    return lambda: with_kube_version(load_live(kube, DRAIN_KINDS, cluster=cluster), source.kube_version)


def kube_options(source):
    """The KubeOptions of the snapshot's source flags (every namespace: a node holds them all)."""
    return source.kube_options(all_namespaces=True)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises Terminated in the main thread, so it takes Ctrl-C's clean path."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


# ---- the run -----------------------------------------------------------------------------

class Executor:
    def __init__(self, read: Callable[[], Snapshot], targets: tuple[str, ...], options: PlanOptions,
                 writer: Writer, progress: Progress, timeout: float | None, poll_interval: float,
                 resume: "str | Callable[[Sequence[str]], str]",
                 color: str = "auto", clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.read, self.targets, self.options, self.writer = read, targets, options, writer
        self.progress, self.timeout, self.poll, self.resume = progress, timeout, poll_interval, resume
        self.color, self.clock, self.sleep = color, clock, sleep
        self.state = RunState(targets)
        self.last: Snapshot | None = None

    def run(self) -> int:
        """Execute step by step; every way out after a change reports the state."""
        try:
            return self._loop()
        except KeyboardInterrupt as e:
            self.writer.policy.cancel.set()
            what = "terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted"
            self._report(P.INTERRUPT, f"drain {what}", fresh=True)
            flight = (f"{len(self.state.in_flight)} eviction(s) sent with no answer yet (outcome unknown)"
                      if self.state.in_flight else "nothing is in flight")
            raise Interrupted(f"drain {what}; {flight}; rerun the same command to resume, or undo "
                              "the cordons (commands above)") from None
        except Cancelled:
            self._report(P.INTERRUPT, "drain interrupted", fresh=True)
            raise Interrupted("drain interrupted; rerun the same command to resume (commands above)") from None
        except ConnectionLost as e:
            self._report(P.INTERRUPT, "lost the connection to the API server", fresh=False, message=str(e))
            raise Interrupted(f"{e}; once it is back, rerun the same command to resume (commands above)",
                              EXIT_ERROR) from None
        except TspreadError as e:
            self._report(P.STOP, "drain stopped", fresh=True, message=str(e))
            raise
        except Exception as e:
            # a fault of ours or an answer nobody foresaw: the cluster is still mid-drain, so the
            # user gets the state, the resume and uncordon commands and the stop record anyway
            self.writer.policy.cancel.set()
            self._report(P.STOP, "drain stopped by an unexpected error", fresh=True,
                         message=f"{type(e).__name__}: {e}")
            raise

    def _loop(self) -> int:
        while True:
            snap = self._read()
            plan = plan_quietly(plan_drain, snap, self.targets, self.options, workers=forks())
            todo = [s for s in plan.steps if s.cordon or s.evictions]
            done = self.state.steps_done
            self.progress.steps(done, done + len(todo), todo[0].nodes if todo else ())
            if plan.already_evicted or plan.settled:
                if self._leftovers(snap, plan):
                    continue
            held = budget_held(snap, plan)
            if held is not None:
                self.progress.record(P.WAIT, "", "pods of a PodDisruptionBudget the plan needs are not Ready yet; "
                                     "waiting for them first")
                self._wait(held, self._deadline(), self.state.steps_done + 1)
                continue
            if not plan.safe:
                self._explain_unsafe(plan)
                raise DrainStopped("the drain is no longer safe on the live cluster (the cluster changed since "
                                   "the plan); stopped before the next step", EXIT_FOUND)
            if not todo:
                break
            self.progress.record(P.REPLAN, "", f"{len(todo)} step(s) left, still safe", step=done + 1)
            self._step(todo[0], snap, done + 1)
            self.state.steps_done += 1
        self.progress.steps(self.state.steps_done, self.state.steps_done)
        self.progress.record(P.DONE, "", f"drained {', '.join(self.targets)}", steps=self.state.steps_done,
                             evicted=len(self.state.evicted))
        self.progress.say(f"Drained {', '.join(self.targets)}: {len(self.state.evicted)} pod(s) evicted in "
                          f"{self.state.steps_done} step(s). The nodes stay cordoned; when they are back in "
                          f"service: kubectl uncordon {' '.join(self.targets)}")
        return EXIT_OK

    def _read(self) -> Snapshot:
        self.last = self.read()
        return self.last

    def _deadline(self) -> float:
        return float("inf") if self.timeout is None else self.clock() + self.timeout

    def _label(self, result: str) -> str:
        return f"{result} (server dry run)" if self.writer.dry_run else result

    def _on_retry(self, obj: str, seconds: float, why: str) -> None:
        self.progress.record(P.RETRY, obj, f"retrying in {seconds:.1f}s", message=why)

    # ---- one step ------------------------------------------------------------------------

    def _step(self, step: Step, snap: Snapshot, number: int) -> None:
        self.progress.record(P.STEP, f"nodes {','.join(step.nodes)}", "started", step=number)
        deadline = self._deadline()
        for node in step.cordon:
            self.writer.cordon(node, deadline, self._on_retry)
            self.state.cordoned.append(node)
            self.progress.record(P.CORDON, f"node/{node}", self._label("cordoned"), step=number)
        pods = {p.key: p for p in snap.pods}
        todo = [pods[f"{e.namespace}/{e.name}"] for e in step.evictions if f"{e.namespace}/{e.name}" in pods]
        evicted = self._evict_all(todo, deadline, number)
        self._wait(target_for_step(snap, evicted), deadline, number)
        self.progress.record(P.STEP, f"nodes {','.join(step.nodes)}", "done", step=number)

    def _evict_all(self, todo: list[Pod], deadline: float, number: int) -> list[Pod]:
        """Evict `todo`, at most --max-parallel calls in flight; in-flight calls finish on any stop."""
        done: list[Pod] = []
        self.progress.evictions(0, len(todo))
        workers = min(max(1, self.options.max_parallel), len(todo))
        if workers <= 1:
            for p in todo:
                self._evicted(p, self._send(p, deadline), number, done)
                self.progress.evictions(len(done), len(todo))
            return done
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evict")
        futures = {pool.submit(self._send, p, deadline): p for p in todo}
        try:
            for fut in as_completed(futures):
                self._evicted(futures[fut], fut.result(), number, done)
                self.progress.evictions(len(done), len(todo))
        except BaseException:
            self.writer.policy.cancel.set()  # workers waiting to retry give up; calls in flight finish
            pool.shutdown(wait=True, cancel_futures=True)
            for fut, p in futures.items():
                if fut.done() and not fut.cancelled() and fut.exception() is None and p not in done:
                    self._evicted(p, fut.result(), number, done)
            raise
        pool.shutdown(wait=True)
        return done

    def _send(self, pod: Pod, deadline: float) -> str:
        """writer.evict, with the pod kept in state.in_flight until an answer is known: an
        interruption (or a lost connection) while the call is out leaves its outcome unknown,
        and the server may still accept it after the run stops."""
        self.state.in_flight.append(pod.key)
        try:
            result = self.writer.evict(pod.namespace, pod.name, deadline, self._on_retry, uid=pod.uid)
        except (EvictionBlocked, EvictionRefused, Cancelled):
            self.state.in_flight.remove(pod.key)  # answered (refused), or given up between answers
            raise
        self.state.in_flight.remove(pod.key)
        return result

    def _evicted(self, pod: Pod, result: str, number: int, done: list[Pod]) -> None:
        done.append(pod)
        self.state.evicted.append(pod.key)
        c = controller_of(pod)
        if c is not None:
            self.state.evicted_owners.add(c)
        self.progress.record(P.EVICT, f"pod/{pod.key}", self._label(result), step=number)

    # ---- waiting -------------------------------------------------------------------------

    def _wait(self, target: WaitTarget, deadline: float, number: int) -> None:
        """Poll until the step is over; stop on a stuck replacement, a skew over its limit, or the timeout."""
        if target.empty:
            return
        self.progress.record(P.WAIT, "", f"waiting for {len(target.gone)} evicted pod(s) to go and their "
                             "replacements to be Ready", step=number)
        while True:
            snap = self._read()
            st = evaluate(snap, target)
            total = sum(target.expect_ready.values())
            self.progress.replacements(total - sum(w - h for h, w in st.not_ready.values()), total)
            if st.done:
                self.progress.record(P.WAIT, "", "replacements Ready, constraints within their limits", step=number)
                return
            if st.over_limit:
                raise DrainStopped(f"after step {number}, {st.over_limit[0]}; running pods are never rebalanced, "
                                   "so the drain stopped before the next step")
            blocked = stuck(snap, st)
            if blocked:
                self._explain_pending(snap, blocked)
                raise DrainStopped(f"replacement {blocked[0].key} cannot be scheduled (explained above); "
                                   "stopped before the next step")
            if self.clock() >= deadline:
                self._timed_out(snap, st, number)
            self.sleep(max(0.0, min(self.poll, deadline - self.clock())))

    def _timed_out(self, snap: Snapshot, st, number: int) -> None:
        if st.pending:
            self._explain_pending(snap, st.pending)
        missing = [f"{k} still exists" for k in st.remaining_gone]
        missing += [f"{c[1]}/{c[2]} has {h}/{w} pods Ready" for c, (h, w) in st.not_ready.items()]
        raise DrainStopped(f"step {number} did not finish within --timeout {self.timeout:g}s: "
                           f"{'; '.join(missing)}; check the pods, then rerun the same command or raise --timeout")

    def _leftovers(self, snap: Snapshot, plan: DrainPlan) -> bool:
        """An earlier run left pods terminating or replacements Pending: let them settle first."""
        target = target_for_leftovers(snap, plan.already_evicted, [f"{e.namespace}/{e.name}" for e in plan.settled])
        if target.empty or evaluate(snap, target).done:
            return False
        self.progress.record(P.WAIT, "", "an earlier run left pods terminating or replacements pending; "
                             "waiting for them first")
        self._wait(target, self._deadline(), self.state.steps_done + 1)
        return True

    # ---- explanations ----------------------------------------------------------------------

    def _explain_unsafe(self, plan: DrainPlan) -> None:
        from kubectl_tspread.render.drain import finding_label, finding_message, verdict_line

        self.progress.stop_bars()
        self.progress.say("Re-planned from the live cluster: " + verdict_line(plan))
        for f in plan.findings:
            if f.severity == "error":
                self.progress.say(f"  {finding_label(f)}: {finding_message(f)}")

    def _explain_pending(self, snap: Snapshot, pods: Sequence[Pod]) -> None:
        """why-pending's explanation of each stuck replacement (at most three)."""
        from kubectl_tspread.engine.index import ClusterIndex
        from kubectl_tspread.views.pending import explain_pending
        from kubectl_tspread.cli.terminal import line_width, use_color
        from kubectl_tspread.render.pending import report_text

        self.progress.stop_bars()
        index = ClusterIndex(snap)
        stream = self.progress.stream
        color, width = use_color(self.color, stream), line_width(self.color, stream)
        for p in list(pods)[:3]:
            self.progress.record(P.WAIT, f"pod/{p.key}", "Pending")
            stream.write(report_text(explain_pending(index, p, with_fixes=True), color=color, width=width))
            stream.flush()

    def _report(self, action: str, result: str, fresh: bool, message: str | None = None) -> None:
        """The state block after a stop: what is cordoned, evicted, pending; how to resume or undo."""
        self.progress.stop_bars()
        snap, is_fresh, stale = self.last, False, UNREACHABLE
        if fresh:
            try:
                snap, is_fresh = self.read(), True
            except KeyboardInterrupt:  # a second Ctrl-C: the server may be fine
                stale = INTERRUPTED_AGAIN
            except TspreadError:
                pass
        unknown = list(self.state.in_flight)
        for key in unknown:
            self.progress.record(P.EVICT, f"pod/{key}", self._label("sent, outcome unknown"),
                                 step=self.state.steps_done + 1)
        self.progress.record(action, "", result, message=message, cordoned=list(self.state.cordoned),
                             evicted=list(self.state.evicted), unknown=unknown)
        for line in state_lines(self.state, snap, self._resume_line(snap, is_fresh), is_fresh, stale):
            self.progress.say(line)

    def _resume_line(self, snap: Snapshot | None, fresh: bool) -> str:
        """The resume command, without the target nodes a fresh read no longer shows ("" when
        none is left)."""
        if isinstance(self.resume, str):
            return self.resume
        nodes = [t for t in self.targets if not fresh or snap is None or snap.node(t) is not None]
        return self.resume(nodes) if nodes else ""

    # ---- server dry run --------------------------------------------------------------------

    def dry_run(self, plan: DrainPlan) -> int:
        """Send every write of the plan with dryRun=All; report what the API server would refuse."""
        refused = []
        total = len(plan.steps)
        for i, step in enumerate(plan.steps):
            self.progress.steps(i, total, step.nodes)
            for node in step.cordon:
                self.writer.cordon(node, self.clock())
                self.progress.record(P.CORDON, f"node/{node}", self._label("cordoned"), step=i + 1)
            for e in step.evictions:
                obj = f"pod/{e.namespace}/{e.name}"
                try:
                    result = self.writer.evict(e.namespace, e.name, self.clock())
                except (EvictionBlocked, EvictionRefused) as err:
                    refused.append(obj)
                    self.progress.record(P.EVICT, obj, self._label("refused"), step=i + 1,
                                         message=getattr(err, "server_message", "") or str(err))
                    continue
                self.progress.record(P.EVICT, obj, self._label(result), step=i + 1)
        self.progress.steps(total, total)
        verdict = f"{len(refused)} eviction(s) would be refused now" if refused else "every eviction would be accepted"
        self.progress.record(P.DONE, "", f"server dry run: {verdict}; nothing was changed")
        return EXIT_FOUND if refused else EXIT_OK
