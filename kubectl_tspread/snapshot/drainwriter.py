"""The only writes tspread makes, through the reads' `LiveCluster.exchange`: cordon a node, and evict a pod through
policy/v1 Eviction, the API server's own PDB-checked delete, so no budget is bypassed.

Answers (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go):
- 2xx: evicted (with `dryRun: [All]`: checked, nothing changed). 404: already gone, as the eviction wanted.
- 409, UID precondition failed: the planned pod is gone and another took its name (a StatefulSet's replacement): not
  evicted. Every eviction names the uid the step's re-read saw, so a retry never evicts the successor.
- 429: a PodDisruptionBudget (or API priority and fairness) says "not now": back off (BackoffPolicy) until the deadline.
- 500 "more than one PodDisruptionBudget": the API can never evict this pod; stop. Anything else: stop with its message.
A dropped connection is retried a few times (a repeated eviction meets a terminating pod or a 404, both harmless)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import quote

from kubectl_tspread.model.errors import ClusterError, TspreadError

EVICTED = "evicted"
GONE = "already gone"
MULTIPLE_PDBS_MESSAGE = "more than one PodDisruptionBudget"
UID_PRECONDITION_MESSAGE = "uid in precondition"  # from the 409's "Precondition failed: UID in precondition: …"
DRY_RUN_ALL = ["All"]


class Cancelled(TspreadError):
    """The run was interrupted while this call waited to retry; nothing was sent for it."""


class ConnectionLost(ClusterError):
    """The API server stayed unreachable across retries."""


class EvictionBlocked(ClusterError):
    """429s until the deadline: a PodDisruptionBudget kept refusing. `server_message` is the last 429's."""

    def __init__(self, message: str, server_message: str = ""):
        super().__init__(message)
        self.server_message = server_message


class EvictionRefused(ClusterError):
    """An answer that can never turn into an eviction (multiple PDBs, 403, 422, …)."""

    def __init__(self, message: str, status: int = 0, multiple_pdbs: bool = False):
        super().__init__(message)
        self.status, self.multiple_pdbs = status, multiple_pdbs


@dataclass
class BackoffPolicy:
    """Waits between retries of one write. `sleep` returns early when `cancel` is set."""

    base: float = 1.0  # first wait after a 429; doubles each time
    max_backoff: float = 30.0
    retry_after_cap: float = 30.0  # live.RETRY_AFTER_CAP: the longest a server's Retry-After is waited
    connection_attempts: int = 4  # transport failures tolerated per call
    clock: Callable[[], float] = time.monotonic
    cancel: threading.Event = field(default_factory=threading.Event)

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """A longer Retry-After wins up to retry_after_cap: a 429 asking for hours must not sleep a step's --timeout."""
        backoff = min(self.max_backoff, self.base * (2 ** min(max(0, attempt - 1), 32)))
        return max(backoff, min(retry_after or 0.0, self.retry_after_cap))

    def sleep(self, seconds: float) -> None:
        if self.cancel.wait(max(0.0, seconds)):
            raise Cancelled("interrupted while waiting to retry")


class _Again(Exception):
    """One attempt that is worth repeating: a 429, or a dropped connection."""

    def __init__(self, retry_after: float | None, message: str, transport: bool = False):
        super().__init__(message)
        self.retry_after, self.message, self.transport = retry_after, message, transport


RetryHook = Callable[[str, float, str], None]  # (object, seconds until the next try, why)


class Writer:
    """Cordon and evict on one LiveCluster; `dry_run` sends every write with dryRun=All."""

    def __init__(self, cluster, dry_run: bool = False, policy: BackoffPolicy | None = None):
        self.cluster, self.dry_run, self.policy = cluster, dry_run, policy or BackoffPolicy()

    def cordon(self, node: str, deadline: float, on_retry: RetryHook | None = None) -> None:
        """Set spec.unschedulable (a merge patch is idempotent, so every failure worth it is retried)."""
        path = f"/api/v1/nodes/{quote(node, safe='')}"
        params = {"dryRun": "All"} if self.dry_run else {}

        def attempt() -> str:
            answer = self._exchange("PATCH", path, {"spec": {"unschedulable": True}}, params,
                                    "application/merge-patch+json")
            if answer.ok:
                return "cordoned"
            if answer.status == 429 or answer.status >= 500:
                raise _Again(answer.retry_after, str(self.cluster.error(answer)))
            raise self.cluster.error(answer)

        self._retrying(f"node/{node}", attempt, deadline, on_retry, blocked=ClusterError)

    def evict(self, namespace: str, name: str, deadline: float, on_retry: RetryHook | None = None,
              uid: str = "") -> str:
        """EVICTED or GONE; raises EvictionBlocked, EvictionRefused, ConnectionLost or Cancelled. `uid`: the pod meant
        (a precondition of the delete the eviction makes), "" for any of that name."""
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}/eviction"
        body: dict = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        options: dict = {"preconditions": {"uid": uid}} if uid else {}
        if self.dry_run:
            options["dryRun"] = DRY_RUN_ALL  # as kubectl drain sends it: the eviction client takes no query options
        if options:
            body["deleteOptions"] = options

        def attempt() -> str:
            answer = self._exchange("POST", path, body, {}, "application/json")
            if answer.ok:
                return EVICTED
            if answer.status == 404:
                return GONE
            if answer.status == 429:
                raise _Again(_retry_after(answer), _server_says(answer))
            message = answer.body.get("message") or ""
            if uid and answer.status == 409 and UID_PRECONDITION_MESSAGE in str(message).lower():
                return GONE  # the pod planned is gone; the one of its name now is not ours to evict
            if answer.status == 500 and MULTIPLE_PDBS_MESSAGE in str(message):
                raise EvictionRefused(
                    f"cannot evict pod {namespace}/{name}: the API refuses pods covered by more than one "
                    f"PodDisruptionBudget (500: {message}); make one PDB select it and rerun",
                    500, multiple_pdbs=True)
            raise EvictionRefused(f"cannot evict pod {namespace}/{name}: {self.cluster.error(answer)}", answer.status)

        return self._retrying(f"pod/{namespace}/{name}", attempt, deadline, on_retry, blocked=EvictionBlocked)

    def _exchange(self, method: str, path: str, body, params: dict, content_type: str):
        from kubectl_tspread.snapshot.live import Unreachable

        try:
            return self.cluster.exchange(method, path, body, params, content_type)
        except Unreachable as e:
            raise _Again(None, str(e), transport=True) from None

    def _retrying(self, obj: str, attempt: Callable[[], str], deadline: float, on_retry: RetryHook | None,
                  blocked: type) -> str:
        """Run `attempt` until it answers, backing off on _Again (tenacity) up to `deadline`."""
        import tenacity

        policy = self.policy
        transport_failures = [0]

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception()
            return min(policy.wait(state.attempt_number, exc.retry_after), max(0.0, deadline - policy.clock()))

        def before_sleep(state: tenacity.RetryCallState) -> None:
            if on_retry is not None:
                on_retry(obj, state.upcoming_sleep, state.outcome.exception().message)

        def stop(state: tenacity.RetryCallState) -> bool:
            exc = state.outcome.exception()
            if exc.transport:
                transport_failures[0] += 1
                return transport_failures[0] >= policy.connection_attempts
            return policy.clock() >= deadline

        def before(state: tenacity.RetryCallState) -> None:
            if policy.cancel.is_set():
                raise Cancelled(f"interrupted before {obj} was sent")

        retrying = tenacity.Retrying(retry=tenacity.retry_if_exception_type(_Again), wait=wait, stop=stop,
                                     sleep=policy.sleep, before=before, before_sleep=before_sleep, reraise=True)
        try:
            return retrying(attempt)
        except _Again as last:
            if last.transport:
                raise ConnectionLost(last.message) from None
            message = (f"{obj} still refused when the timeout ran out: {last.message}; wait for the workload's pods to "
                       "be Ready (its PodDisruptionBudget needs them), then rerun the same command, or raise --timeout")
            raise (EvictionBlocked(message, last.message) if blocked is EvictionBlocked else blocked(message)) \
                from None


def _retry_after(answer) -> float | None:
    """Retry-After, else the Status's details.retryAfterSeconds (0: no hint), read by the read path's parser."""
    from kubectl_tspread.snapshot.live import RETRY_AFTER_CAP, status_retry_after

    return answer.retry_after if answer.retry_after is not None else status_retry_after(answer.body, RETRY_AFTER_CAP)


def _server_says(answer) -> str:
    """`429: <message> (<cause messages>)` — the cause names the budget and its healthy pods."""
    from kubectl_tspread.snapshot.live import server_text

    message = server_text(answer.body.get("message") or "Too Many Requests")
    details = answer.body.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    causes = [server_text(c.get("message")) for c in causes if isinstance(c, dict) and c.get("message")] \
        if isinstance(causes, list) else []
    return f"{answer.status}: {message}" + (f" ({'; '.join(causes)})" if causes else "")
