"""The transport under snapshot/live.py: one request bounded in time, Retry-After read once,
the bounds of a list's paging. Kept apart from live.py's reading and error wording; nothing here
imports `kubernetes` (urllib3 comes in with the response objects handed over)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.snapshot import jsonscan

# without --request-timeout: how long one request (connect, headers and the whole body) may take,
# and connecting alone; a dead or trickling server ends in an error, never a hang
DEFAULT_REQUEST_LIMIT = 120.0
DEFAULT_CONNECT_TIMEOUT = 30.0
MAX_RESPONSE_BYTES = 256 << 20  # a 500-item page is tens of MB at most (a gzip bomb stops here)
_CHUNK = 1 << 20
# the longest a server's Retry-After is honoured for, reads and writes alike (each policy may cap lower)
RETRY_AFTER_CAP = 30.0


def json_loads() -> Callable[[bytes], Any]:
    """The JSON decoder of server answers: an answer's nesting is bounded first (jsonscan), so
    one nested past jsonscan.MAX_DEPTH raises TooDeep, a ValueError, before orjson sees it."""
    import orjson

    def bounded(data: bytes) -> Any:
        jsonscan.check(data)
        return orjson.loads(data)

    return bounded


def server_text(value: Any, limit: int = 300) -> str:
    """What a server said (a Status message, a cause), fit for one error line: line breaks and
    control characters as spaces, clipped; an error is one line however the server writes."""
    text = "".join(" " if (c < " " or c == "\x7f") else c for c in str(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def status_summary(body: Any) -> str:
    """A Status object in a few words, for an error that says one came where objects were
    asked for: `a Status (Failure, Forbidden: pods is forbidden: …)`."""
    get = body.get if isinstance(body, dict) else (lambda key: None)
    said = [server_text(v, 60) for v in (get("status"), get("reason")) if isinstance(v, str) and v.strip()]
    message = get("message")
    head = ", ".join(said)
    if isinstance(message, str) and message.strip():
        head = f"{head}: {server_text(message, 200)}" if head else server_text(message, 200)
    return f"a Status ({head})" if head else "a Status"


def retry_after_seconds(value: Any, cap: float) -> float | None:
    """A server's Retry-After (the header's text, or a Status's `details.retryAfterSeconds`) in
    seconds within [0, cap]; None when it says nothing usable. Every spelling a server may send
    is read here, once, for reads and writes alike: `"3"`, `3`, `"1.5"`, an HTTP date; and what
    a broken or hostile one sends is tamed, never raised: `"inf"`, `1e308` and `99999` wait
    `cap`, a negative number or a date in the past waits 0, `"nan"`, `"soon"`, `true` or a map
    say nothing. (float("inf") would overflow a sleep; "soon" would raise ValueError mid-drain.)"""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        seconds = float(max(-1, min(value, 1 << 62)))  # an int too large for a float is just "long"
    elif isinstance(value, float):
        seconds = value
    elif isinstance(value, (str, bytes)):
        text = (value.decode("latin-1") if isinstance(value, bytes) else value).strip()
        if not text or len(text) > 64:
            return None
        try:
            seconds = float(text)
        except ValueError:
            seconds = _http_date_from_now(text)
            if seconds is None:
                return None
    else:
        return None
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, float(cap)))


def status_retry_after(body: Any, cap: float) -> float | None:
    """`details.retryAfterSeconds` of a Status body (0 or absent: no hint), read as above."""
    details = body.get("details") if isinstance(body, dict) else None
    seconds = retry_after_seconds(details.get("retryAfterSeconds"), cap) if isinstance(details, dict) else None
    return seconds or None


def retry_after_of(headers: Any, data: bytes, cap: float) -> float | None:
    """A read's answer: the Retry-After header, else its Status body's hint."""
    header = retry_after_seconds(headers.get("Retry-After"), cap)
    if header is not None:
        return header
    try:
        body = json_loads()(data) if data else None
    except ValueError:
        return None
    return status_retry_after(body, cap)


def _http_date_from_now(text: str) -> float | None:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(text).timestamp() - time.time()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


MAX_PAGES = 2_000  # a million objects of one kind at 500 a page: beyond the largest clusters Kubernetes supports
MAX_EMPTY_PAGES = 100  # in a row, each with a continue token: a server paging nowhere
MAX_SCANT_PAGES = 3  # in a row, of a list nothing filters: see Paging


class Paging:
    """The bounds of one list's paging: a continue token handed out twice would loop forever,
    and so would a server that keeps sending new tokens with nothing in the pages.

    A list no selector filters (`filtered` False: nodes, workloads, …) comes in full pages but
    the last: the API server fills each to the limit asked for when nothing filters it out. A
    page of it with a continue token and next to nothing in it (under 2% of `limit`) is a server
    paging nowhere; three in a row stop the list. Each page is bounded by --request-timeout, but
    2,000 pages of one object, each just inside it, were half an hour. A list a field or label
    selector filters (pods, events) may be sparse for long stretches: the bounds above only."""

    def __init__(self, server: str, filtered: bool = True, limit: int = 0):
        self.server = server
        self.filtered = filtered
        self.scant_below = max(1, limit // 50)
        self.limit = limit
        self.seen: set[str] = set()
        self.pages = self.empty = self.scant = 0

    def check(self, path: str, token: str | None, count: int) -> None:
        self.pages += 1
        self.empty = 0 if count else self.empty + 1
        if not token:
            return
        self.scant = self.scant + 1 if not self.filtered and count < self.scant_below else 0
        if self.scant >= MAX_SCANT_PAGES:
            raise ClusterError(f"the API server at {self.server} was still paging {path} after {self.scant} pages in a "
                               f"row of {count} item{'s' if count != 1 else ''} with a continue token, though "
                               f"{self.limit} were asked for and nothing filters the list; stopped there; try "
                               "again, or check any proxy in front of it")
        if token in self.seen:
            raise ClusterError(f"the API server at {self.server} sent the same continue token twice while "
                               f"listing {path} (after {self.pages} pages): its paging loops; try again, or "
                               "narrow the list with -n or -l")
        self.seen.add(token)
        if self.pages >= MAX_PAGES or self.empty >= MAX_EMPTY_PAGES:
            what = (f"{self.empty} empty pages in a row" if self.empty >= MAX_EMPTY_PAGES
                    else f"{self.pages} pages")
            raise ClusterError(f"the API server at {self.server} was still paging {path} after {what}; "
                               "stopped there; try again, or narrow the list with -n or -l")


def json_type(value: Any) -> str:
    """How a JSON value is named in an error: `a number (5)`, `a string ("x")`, `a list`."""
    if isinstance(value, bool) or value is None:
        return f"{'null' if value is None else str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"a number ({str(value)[:20]})"
    if isinstance(value, str):
        return f"a string ({value[:20]!r})"
    return "a list" if isinstance(value, list) else "an object"


class Exchange:
    """One HTTP exchange in a daemon thread, waited on for at most `limit` seconds. A server
    that never finishes leaves the thread behind (its socket shut down when the answer had
    begun); the caller gets the timeout error at the deadline either way."""

    def __init__(self, cluster: Any, method: str, path: str, url: str, body: bytes | None, headers: Any,
                 limit: float):
        self.cluster, self.method, self.path, self.url = cluster, method, path, url
        self.body, self.headers = body, headers
        self.limit = limit
        self.deadline = time.monotonic() + limit
        self.response: Any = None
        self.abandoned = False
        self._result: tuple[int, bytes, Any] | None = None
        self._error: BaseException | None = None

    def run(self, timed_out: Callable[[], BaseException]) -> tuple[int, bytes, Any]:
        thread = threading.Thread(target=self._run, daemon=True, name="tspread-request")
        thread.start()
        thread.join(max(0.0, self.deadline - time.monotonic()) + 0.05)
        if thread.is_alive():
            self.abandoned = True
            self._shut()
            raise timed_out()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]

    def _run(self) -> None:
        try:
            self._result = self.cluster._exchange_now(self)
        except BaseException as e:  # handed to the caller
            self._error = e

    def read_body(self, resp: Any) -> bytes:
        """The whole body, read in chunks so that the deadline and the size bound are seen
        between them."""
        chunks, size = [], 0
        while True:
            chunk = resp.read1(_CHUNK) if hasattr(resp, "read1") else resp.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if self.abandoned or time.monotonic() > self.deadline:
                raise ClusterError(self.cluster._timeout_message(self.method, self.path))
            if size > MAX_RESPONSE_BYTES:
                raise ClusterError(f"the API server at {self.cluster.server} sent more than "
                                   f"{MAX_RESPONSE_BYTES / 2**20:g} MiB for one request to {self.path}; check "
                                   "that the kubeconfig's server URL is a Kubernetes API")
            chunks.append(chunk)

    def _shut(self) -> None:
        resp = self.response
        if resp is None:
            return
        try:
            resp.shutdown()  # the thread's blocked read returns at once
        except Exception:  # noqa: BLE001 - released already, or a urllib3 without shutdown()
            pass
