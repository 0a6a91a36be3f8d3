"""Read a live cluster: paged raw-JSON lists, retried GETs, errors that say what to do.

Lists never go through the client's model classes (deserializing a 10k-pod list that way
costs seconds); each page is read as bytes, JSON-decoded, turned into records by
`decode.DECODERS`, and dropped, so memory follows the records kept; the next page is
asked for while one is decoded. The `kubernetes`
package is used for what it is good at — kubeconfig, auth plugins, TLS — and imported
lazily: `kubectl tspread --help` must not pay for it.
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Protocol
from urllib.parse import quote, urlencode

from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.engine import podrequests, versions
from kubectl_tspread.model import Snapshot
from kubectl_tspread.snapshot import jsonscan
from kubectl_tspread.snapshot.decode import DECODERS, from_server
from kubectl_tspread.snapshot.fields import MalformedObject, printable
from kubectl_tspread.snapshot.kubeconfig import KubeOptions, ResolvedConfig, resolve
from kubectl_tspread.snapshot.kubeconfig_check import header_safe
from kubectl_tspread.snapshot.kinds import (NAMESPACE_ALL, RBAC_HINT, RESOURCES, WRITE_RBAC_HINT, Resource,
                                                describe_request, is_namespaced)
from kubectl_tspread.snapshot.transport import (DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_LIMIT, RETRY_AFTER_CAP,
                                                Exchange, Paging, json_loads, json_type, retry_after_of,
                                                retry_after_seconds, server_text, status_retry_after,
                                                status_summary)
from kubectl_tspread.snapshot.wire import decode_pod_page

__all__ = ["KubeOptions", "LiveCluster", "RetryPolicy", "ApiStatusError", "Answer", "Unreachable", "RESOURCES",
           "NAMESPACE_ALL", "Resource", "describe_request", "connect", "load_live", "RETRY_AFTER_CAP",
           "retry_after_seconds", "server_text", "status_retry_after"]

PAGE_SIZE = 500


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff for idempotent GETs; `sleep` is injectable for tests."""

    attempts: int = 5
    base: float = 0.25  # seconds before the 2nd attempt; doubles each time
    max_backoff: float = 8.0
    retry_after_cap: float = 10.0  # a server asking for longer is not waited on for longer
    budget: float = 15.0  # seconds of waiting between attempts, all told (without --request-timeout)
    sleep: Callable[[float], None] = time.sleep

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """attempt 1 failed -> base, 2 -> 2*base, …; Retry-After (capped) wins when given."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.retry_after_cap))
        return min(self.max_backoff, self.base * (2 ** (attempt - 1)))


class ApiStatusError(ClusterError):
    """The API server answered with a non-2xx status; callers may branch on `status`."""

    def __init__(self, message: str, status: int, reason: str = "", body: dict | None = None):
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.body = body or {}


class UnreadableVersion(ApiStatusError):
    """/version answered, but its gitVersion is no Kubernetes version: callers treat it as they
    treat a 403 or 404 there (a warning, the newest rules), not as an error of the run."""


class Unreachable(ClusterError):
    """The connection to the API server failed or was lost during a write."""


@dataclass(frozen=True)
class Answer:
    """What the API server said to one `LiveCluster.exchange`: status, decoded JSON body (a
    Status for errors), the Retry-After header in seconds when given, and the raw bytes."""

    method: str
    path: str
    status: int
    body: dict
    retry_after: float | None
    raw: bytes = b""
    http_status: int = 0  # as sent; `status` differs for a 2xx that carried a failed Status (failed_status)
    location: str | None = None  # a redirect's Location header

    def __post_init__(self) -> None:
        if not self.http_status:
            object.__setattr__(self, "http_status", self.status)

    @property
    def ok(self) -> bool:
        return 200 <= self.status <= 299


# what a failed Status of a 2xx stands for when its code does not say (client-go's reason checks)
_REASON_CODES = {"NotFound": 404, "TooManyRequests": 429, "Forbidden": 403, "Unauthorized": 401,
                 "Conflict": 409, "Invalid": 422}


def failed_status(status: int, body: dict) -> int:
    """The status a write's answer stands for. A 2xx whose body is a Status that is no Success is
    the error it carries, as client-go reads it (transformResponse: errors.FromObject): its code
    when that is an error's, else its reason's, else 0 (an error of no known kind). An eviction
    answered `200 {"kind":"Status","status":"Failure","code":429}` by a proxy was taken for done,
    and a cordon the same way for applied."""
    said = body.get("status")
    if not (200 <= status <= 299 and body.get("kind") == "Status" and type(said) is str and said
            and said != "Success"):
        return status
    code = body.get("code")
    if type(code) is int and 400 <= code <= 599:
        return code
    reason = body.get("reason")
    return _REASON_CODES.get(reason, 0) if type(reason) is str else 0


class _Transient(Exception):
    """A 429/5xx or connection failure worth retrying; carries what the final error message needs."""

    def __init__(self, status: int, body: bytes, retry_after: float | None, cause: BaseException | None = None):
        super().__init__(status)
        self.status, self.body, self.retry_after, self.cause = status, body, retry_after, cause


# a list's continue token, in its metadata: before "items" in every API server's answer
_CONTINUE = re.compile(rb'"continue"\s*:\s*"([^"\\]+)"')
_HEAD = 4096


def peek_continue(data: bytes) -> str | None:
    """The continue token of a list page, read from the page's head without parsing it; None
    when it has none there or it is not plainly written (the page is then read first). The
    page's parsed token decides what is read next: a wrong guess only costs a request."""
    head = data[:_HEAD]
    end = head.find(b'"items"')
    if end < 0:
        return None
    found = _CONTINUE.search(head, 0, end)
    return found.group(1).decode("ascii", "replace") if found else None


class _Ahead:
    """One GET under way in a thread of its own (the next page of a list): `result()` gives its
    bytes, or raises what the GET raised, as if it were made then. A page never asked for
    (an error first, or another token) is left to finish: the thread is a daemon."""

    def __init__(self, get: Callable[[str, dict], bytes], path: str, query: dict, token: str):
        self.token = token
        self._data: bytes | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(get, path, query), daemon=True,
                                        name="tspread-next-page")
        self._thread.start()

    def _run(self, get: Callable[[str, dict], bytes], path: str, query: dict) -> None:
        try:
            self._data = get(path, query)
        except BaseException as e:  # handed to the reader
            self._error = e

    def result(self) -> bytes:
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        data, self._data = self._data, None
        return data  # type: ignore[return-value]


class PageHelper(Protocol):
    """Pod pages decoded in another process while this one decodes the others (cli/workers.py
    forks it: a process policy, which the commands choose)."""

    def idle(self) -> bool:
        """Whether a page sent now is the next one it starts: else this process decodes it."""

    def send(self, data: bytes, token: str) -> bool:
        """Decode this page with the function the helper was started with, `token` its expected
        continue token; never waits for the decoding. False: the helper is gone."""

    def results(self) -> list[list] | None:
        """The records of each page sent, in order; None if any page was refused or the helper
        failed (the list is then read again without it)."""

    def cancel(self) -> None:
        """Stop it if it still runs; harmless twice."""


# start a helper that decodes each page sent with fn(data, token) -> records, raising to refuse it
PageHelpers = Callable[[Callable[[bytes, str], list]], PageHelper]
HELPED_PAGE_BYTES = 16384  # smaller pages are not worth the trip: an empty one is ~150 bytes


class _Lazy:
    """A PageHelper started at the first page it is sent: a list of one page forks none."""

    def __init__(self, start: Callable[[], PageHelper]):
        self._start, self._helper = start, None

    def idle(self) -> bool:
        return self._helper is None or self._helper.idle()

    def send(self, data: bytes, token: str) -> bool:
        if self._helper is None:
            self._helper = self._start()
        return self._helper.send(data, token)

    def results(self) -> list[list] | None:
        return self._helper.results() if self._helper is not None else []

    def cancel(self) -> None:
        if self._helper is not None:
            self._helper.cancel()


def _helped_page(data: bytes, token: str, decode: Callable) -> list:
    """A page's records, in the helper: only a page read as _pages reads it, with items and the
    continue token _pages went on with. Anything else raises: the list is then read again whole."""
    fast = decode_pod_page(data)
    if fast is None or not fast[0] or fast[1] != token:
        raise ValueError("the page is not one the helper decodes")
    return list(map(decode, fast[0]))


class LiveCluster:
    """One API server, reached with the client configuration `resolve` built."""

    def __init__(self, resolved: ResolvedConfig, all_namespaces: bool = False,
                 request_timeout: float | None = None, retry: RetryPolicy | None = None,
                 page_size: int = PAGE_SIZE, page_helpers: PageHelpers | None = None):
        from kubernetes.client.rest import RESTClientObject

        self.resolved = resolved
        self._base = resolved.server  # what requests go to; `server`, what errors and sources name
        self.server: str = _without_password(resolved.server) or resolved.server
        self.namespace: str = resolved.namespace
        self.all_namespaces = all_namespaces
        self.retry = retry or RetryPolicy()
        self.page_size = page_size
        self.page_helpers = page_helpers
        # a limit beyond years is no limit, and would overflow a thread's wait
        self.request_timeout = min(request_timeout, 1e8) if request_timeout else None
        # the REST client's pool manager carries TLS, client certificates and proxy settings
        self._pool = RESTClientObject(resolved.configuration).pool_manager
        self.insecure = self.server.lower().startswith("https:") and not resolved.configuration.verify_ssl
        if self.insecure:
            # urllib3 warns on every request (two lines, with its source path); the run says it
            # once instead (`insecure_warning`, among the snapshot's warnings)
            import warnings

            from urllib3.exceptions import InsecureRequestWarning

            warnings.filterwarnings("ignore", category=InsecureRequestWarning)
        self._loads = json_loads()

    @property
    def insecure_warning(self) -> str | None:
        if not self.insecure:
            return None
        ctx = f' of context "{self.resolved.context}"' if self.resolved.context else ""
        return (f"insecure-skip-tls-verify is set for {self.server}{ctx}: the server's certificate is not "
                "checked, so anyone on the path can read and change this traffic; set certificate-authority "
                "in the kubeconfig instead")

    # ---- reading -------------------------------------------------------------------------

    def collection_path(self, kind: str, namespace: str | None = None) -> str:
        """The list URL path of `kind`; namespace None = the -n/-A scope, NAMESPACE_ALL = all."""
        res = self._resource(kind)
        namespace = self._scope(res, namespace)
        if namespace is None:
            return f"{res.prefix}/{res.plural}"
        return f"{res.prefix}/namespaces/{quote(namespace, safe='')}/{res.plural}"

    def _scope(self, res: Resource, namespace: str | None) -> str | None:
        """The one namespace a list of `res` is of (see collection_path), None for all of them
        or a cluster-scoped kind."""
        if not res.namespaced:
            return None
        if namespace is None:
            namespace = NAMESPACE_ALL if self.all_namespaces else self.namespace
        return None if namespace == NAMESPACE_ALL else namespace

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> Iterator[Any]:
        """Every object of `kind` as a model record, read in pages of `page_size`."""
        res = self._resource(kind)
        decode = from_server(kind, res.namespaced, self._scope(res, namespace))
        params = {}
        fields = ",".join(f for f in (res.field_selector, field_selector) if f)
        if fields:
            params["fieldSelector"] = fields
        if label_selector:
            params["labelSelector"] = label_selector
        return iter(self._list_records(self.collection_path(kind, namespace), params, kind, decode))

    def _list_records(self, path: str, params: dict, kind: str, decode: Callable, whole: bool = False,
                      helped: bool = True) -> list:
        """Page through one list; on 410 Gone restart it once from the top, dropping what was read.

        Records (not pages) are kept until the list is complete, because a restart must
        not leave half a list behind. `whole`: every field of each object is kept (no wire
        parse of pods), for `list_raw`. Pods are decoded by the page helper too, when the
        command gave one (`helped`) and it comes through; otherwise here.
        """
        helper = self._page_helper(kind, whole, decode) if helped else None
        try:
            for restart in (False, True):
                try:
                    records = self._pages(path, params, kind, decode, whole, helper)
                except ApiStatusError as e:
                    if e.status != 410:
                        raise
                    if restart:
                        raise ApiStatusError(
                            f"listing {path} on {self.server} kept failing with 410 Gone (the list changed "
                            "faster than it could be paged, even after a restart); try again, or narrow "
                            "it with -n or -l", 410, e.reason, e.body) from None
                    if helper is not None:  # a restarted list is decoded here alone
                        helper.cancel()
                        helper = None
                    continue
                if records is None:
                    # the helper refused a page or failed: the list is read again here alone, where
                    # a malformed item gets its error with its place in the list
                    return self._list_records(path, params, kind, decode, whole, helped=False)
                if not whole:
                    self._check_unique(path, kind, records)
                return records
        finally:
            if helper is not None:
                helper.cancel()
        raise AssertionError("unreachable")

    def _page_helper(self, kind: str, whole: bool, decode: Callable) -> PageHelper | None:
        if self.page_helpers is None or kind != "Pod" or whole:
            return None
        start = self.page_helpers
        return _Lazy(lambda: start(lambda data, token: _helped_page(data, token, decode)))

    def _pages(self, path: str, params: dict, kind: str, decode: Callable, whole: bool,
               helper: PageHelper | None) -> list | None:
        """The records of one pass over a list's pages; None when `helper` let it down."""
        pages: list[list | None] = []  # per page: its records, or None for the helper's
        token = None
        ahead: _Ahead | None = None
        paging = Paging(self.server, filtered="fieldSelector" in params or "labelSelector" in params,
                        limit=self.page_size)
        listed = 0  # items on the pages decoded here and before them
        while True:
            if ahead is not None and ahead.token == token:
                data = ahead.result()
            else:
                data = self._get_bytes(path, self._page_query(params, token))
            # the next page is asked for now, while this one is decoded (its token is in
            # the list's metadata, ahead of the items): the server makes it meanwhile
            peeked = peek_continue(data)
            helping = helper is not None and peeked and paging.filtered and len(data) >= HELPED_PAGE_BYTES \
                and helper.idle()
            if helping and not helper.send(data, peeked):  # sent (forked at the first) before a thread starts
                return None
            ahead = _Ahead(self._get_bytes, path, self._page_query(params, peeked), peeked) \
                if peeked else None
            if helping:
                # the helper checks that the page holds items under this very token: a filtered
                # list's paging bounds read no more of its count (transport.Paging)
                del data
                paging.check(path, peeked, 1)
                pages.append(None)
                token = peeked
                continue
            # pods, the bulk of a cluster: parse only the fields the decoder reads (wire.py).
            # Not walked for nesting first (the walk is a pass over every byte, and pod
            # pages are most of them): the typed parse skips unread fields without
            # building them and stops at Python's recursion limit by itself (a page it
            # cannot read goes the ordinary way, walk included); what it builds is scalars
            # where the decoder reads scalars and JSON text the memos parse, within that limit
            fast = decode_pod_page(data) if kind == "Pod" and not whole else None
            if fast is not None:
                items, token = fast
                if token is not None and not isinstance(token, str):
                    raise self._shape_error(path, "metadata.continue", "a string", token)
            else:
                items, token = self._page_items(path, self._decode(path, data), kind)
                for item in items:
                    # list items carry no kind; workload decoding needs it (one that names
                    # another is refused by decode.from_server)
                    item.setdefault("kind", kind)
            del data
            try:
                pages.append(list(map(decode, items)))
            except MalformedObject:
                if None in pages:  # the item's place in the list counts the helper's pages before it
                    theirs = helper.results()
                    if theirs is None:
                        return None  # one of them is malformed: its error comes first
                    listed += sum(map(len, theirs))
                raise self._item_error(path, kind, items, decode, listed) from None
            listed += len(items)
            paging.check(path, token, len(items))
            del items
            if not token:
                break
        theirs = helper.results() if helper is not None else []
        if theirs is None or len(theirs) != pages.count(None):
            return None
        out: list = []
        mine = iter(theirs)
        for page in pages:
            out.extend(next(mine) if page is None else page)
        return out

    def _page_items(self, path: str, page: dict, kind: str) -> tuple[list, str | None]:
        """A list page's items and continue token, each checked for its shape: a server whose
        answer is not a list of objects gets an error naming the field, not a crash later."""
        self._check_list_kind(path, page, kind)
        items = page.get("items")
        meta = page.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise self._shape_error(path, "metadata", "an object", meta)
        token = (meta or {}).get("continue")
        if token is not None and not isinstance(token, str):
            raise self._shape_error(path, "metadata.continue", "a string", token)
        # not read, but of the API's types (ListMeta), as client-go decodes them: a number for the
        # resourceVersion is no list's, whichever kind it is (wire.py sends such a pod page here)
        version = (meta or {}).get("resourceVersion")
        if version is not None and not isinstance(version, str):
            raise self._shape_error(path, "metadata.resourceVersion", "a string", version)
        remaining = (meta or {}).get("remainingItemCount")
        if remaining is not None and not (type(remaining) is int and -(1 << 63) <= remaining < 1 << 63):
            raise self._shape_error(path, "metadata.remainingItemCount", "a 64-bit integer", remaining)
        if items is None:
            return [], token
        if not isinstance(items, list):
            raise self._shape_error(path, "items", "a list of objects", items)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise self._shape_error(path, f"items[{i}]", "an object", item)
            # an object's resourceVersion, as the list's: a string on every page of every kind
            meta = item.get("metadata")
            version = meta.get("resourceVersion") if isinstance(meta, dict) else None
            if version is not None and not isinstance(version, str):
                raise self._shape_error(path, f"items[{i}].metadata.resourceVersion", "a string", version)
        return items, token

    def _check_list_kind(self, path: str, page: dict, kind: str) -> None:
        """A page says it is a list of `kind` (`PodList`), or a plain `List`, or leaves its kind
        out (some proxies strip it; client-go then reads it as what was asked for). Anything else
        (a Status with a 200, another kind's list, one object) would be read as an empty or
        wrong list: it is an error naming what came back."""
        got = page.get("kind")
        if got is None or got == "" or got == "List" or got == f"{kind}List":
            return
        if got == "Status":
            # client-go reads it as the error it carries (errors.FromObject): its code decides,
            # as a real 403 or 404 would (an optional kind is then skipped with a warning)
            code = page.get("code")
            reason = page.get("reason")
            raise ApiStatusError(f"the API server at {self.server} answered GET {path} ({self._listing(path)}) with "
                                 f"200 and {status_summary(page)}, not a {kind}List: the request failed though "
                                 "its HTTP status says it did not; check any proxy between you and the API server, "
                                 "or try again", code if type(code) is int and 400 <= code <= 599 else 0,
                                 reason if type(reason) is str else "", page)
        what = f"a {server_text(got, 60)}" if type(got) is str else f"kind that is {json_type(got)}"
        raise ClusterError(f"the API server at {self.server} answered GET {path} ({self._listing(path)}) with {what}, "
                           f"not a {kind}List; check that the kubeconfig's server URL is a Kubernetes API "
                           f"(kubectl get --raw '{path}' shows what it sends)")

    @staticmethod
    def _listing(path: str) -> str:
        return f"a list of {describe_request('GET', path)[1]}"

    def _item_error(self, path: str, kind: str, items: list, decode: Callable, before: int) -> ClusterError:
        """The error of the first item of a page `decode` refuses, with its place in the list
        (`before` items came on earlier pages): an object without a name has nothing else
        that tells it apart."""
        for i, item in enumerate(items):
            try:
                decode(item)
            except MalformedObject as e:
                # worded as for a dump (decode._named), with where the API server sent it
                where = f"item {before + i} of the {kind}List from GET {path} on {self.server}"
                return ClusterError(f"cannot read {e.located(where, always=True)}: {e.detail}; fix that field in "
                                    "the cluster, or check that the kubeconfig's server URL is a Kubernetes API")
        raise AssertionError("a page's items decoded once failed and then did not")  # pragma: no cover

    def _check_unique(self, path: str, kind: str, records: list) -> None:
        """One object is in one list once: counted twice, a pod would stand for two in every
        domain (a dump keeps the later copy, an API server never sends one twice). Events have
        no name in their records, and may repeat."""
        if not records or getattr(records[0], "name", None) is None:
            return
        keys = [(getattr(r, "namespace", ""), r.name) for r in records]
        if len(set(keys)) == len(keys):
            return
        first: dict = {}
        for i, key in enumerate(keys):
            if key in first:
                who = "/".join(printable(k) for k in key if k)
                raise ClusterError(f"the API server at {self.server} sent {kind} {who} twice in its answer to GET "
                                   f"{path} (items {first[key]} and {i} of the {kind}List); an API server lists "
                                   "an object once: check that the kubeconfig's server URL is a Kubernetes API, or "
                                   "try again")
            first[key] = i

    def _shape_error(self, path: str, field: str, expected: str, got: Any) -> ClusterError:
        return ClusterError(f"the API server at {self.server} answered {path} with {field} that is "
                            f"{json_type(got)}, not {expected}; check that the kubeconfig's server URL is a "
                            "Kubernetes API (kubectl get --raw '" + path + "' shows what it sends)")

    def list_raw(self, kind: str) -> list[dict]:
        """Every object of `kind` in the -n/-A scope as the API returned it (kind and apiVersion
        filled in, as `kubectl get -o json` prints them), paged with the same bounds as `list`:
        for `dump`."""
        from kubectl_tspread.snapshot.kinds import api_version

        res = self._resource(kind)
        params = {"fieldSelector": res.field_selector} if res.field_selector else {}
        version = api_version(kind)
        return self._list_records(self.collection_path(kind), params, kind,
                                  lambda item: {"apiVersion": version, **item, "kind": kind}, whole=True)


    def _page_query(self, params: dict, token: str | None) -> dict:
        query = dict(params, limit=str(self.page_size))
        if token:
            query["continue"] = token
        return query

    def get_raw(self, path: str, params: dict | None = None) -> dict:
        """GET one API path and return the decoded JSON (retried like lists)."""
        return self._get_json(path, params or {})

    def get(self, kind: str, name: str, namespace: str | None = None) -> Any:
        """One object of `kind` as a model record; ApiStatusError(status=404) when absent."""
        res = self._resource(kind)
        ns = namespace if namespace is not None else self.namespace
        path = self.collection_path(kind, ns if res.namespaced else None) + "/" + quote(name, safe="")
        obj = self._get_json(path, {})
        got = obj.setdefault("kind", kind)
        if got != kind:  # a Status with a 200, or another kind's object: not the one asked for
            what = status_summary(obj) if got == "Status" else f"a {server_text(got, 60)}"
            raise ClusterError(f"the API server at {self.server} answered GET {path} with {what}, not a {kind}; "
                               f"check what `kubectl get --raw '{path}'` shows")
        return DECODERS[kind][0](obj)

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> dict:
        """A write (POST/PATCH/PUT/DELETE): sent once, never retried — it may not be idempotent."""
        import json

        from urllib3 import exceptions as ux

        payload = None if body is None else json.dumps(body).encode()
        try:
            status, data, _ = self._send(method, path, {}, payload, content_type)
        except ux.HTTPError as e:
            raise ClusterError(self._unreachable_message(e)) from None
        if not 200 <= status <= 299:
            raise self._status_error(method, path, status, data)
        return self._loads(data) if data else {}

    def exchange(self, method: str, path: str, body: Any = None, params: dict | None = None,
                 content_type: str = "application/json") -> "Answer":
        """One write exchange that returns any status instead of raising, for callers that branch on
        it (the drain executor: 429 backs off, 404 means gone). Sent once. A connection that fails
        or drops raises `Unreachable` (the write may or may not have been applied); `error(answer)`
        is the ApiStatusError a user reads for a non-2xx answer."""
        import json

        from urllib3 import exceptions as ux

        payload = None if body is None else json.dumps(body).encode()
        try:
            status, data, headers = self._send(method, path, params or {}, payload, content_type)
        except ux.HTTPError as e:
            raise Unreachable(self._unreachable_message(e)) from None
        try:
            decoded = self._loads(data) if data else {}
        except ValueError:
            decoded = {}
        body = decoded if isinstance(decoded, dict) else {}
        return Answer(method, path, failed_status(status, body), body,
                      retry_after_seconds(headers.get("Retry-After"), RETRY_AFTER_CAP), data, status,
                      headers.get("Location"))

    def error(self, answer: "Answer") -> ApiStatusError:
        """The actionable error for a non-2xx `Answer` (same wording as reads and `request`); for a
        2xx that carried a failed Status, that one, said to have come with a success."""
        if 300 <= answer.status <= 399:
            err = self._redirect_error(answer.method, answer.path, answer.status, {"Location": answer.location})
            return ApiStatusError(str(err), answer.status)
        if answer.http_status == answer.status:
            return self._status_error(answer.method, answer.path, answer.status, answer.raw)
        said = (f"the API server at {self.server} answered {answer.method} {answer.path} with {answer.http_status} "
                f"and {status_summary(answer.body)}: the request failed though its HTTP status says it did not")
        if answer.status:
            err = self._status_error(answer.method, answer.path, answer.status, answer.raw)
            return ApiStatusError(f"{err} ({said})", err.status, err.reason, err.body)
        return ApiStatusError(f"{said}; check any proxy between you and the API server, or try again", 0,
                              answer.body.get("reason") if type(answer.body.get("reason")) is str else "",
                              answer.body)

    # ---- transport -----------------------------------------------------------------------

    def _resource(self, kind: str) -> Resource:
        try:
            return RESOURCES[kind]
        except KeyError:
            raise ValueError(f"no API resource known for kind {kind!r}") from None

    def _headers(self, content_type: str | None) -> Any:
        try:
            from urllib3 import HTTPHeaderDict
        except ImportError:  # urllib3 < 2
            from urllib3._collections import HTTPHeaderDict

        cfg = self.resolved.configuration
        headers = HTTPHeaderDict({"Accept": "application/json", "User-Agent": "kubectl-tspread"})
        if content_type:
            headers["Content-Type"] = content_type
        # get_api_key_with_prefix runs the refresh hook: an expired exec credential is renewed here
        token = cfg.get_api_key_with_prefix("BearerToken")
        if token:
            # a tokenFile written with `echo` ends in a newline: client-go trims it, so do we
            headers["Authorization"] = token.strip() if isinstance(token, str) else token
        if self.resolved.impersonate_user:
            headers["Impersonate-User"] = self.resolved.impersonate_user
        for group in self.resolved.impersonate_groups:
            headers.add("Impersonate-Group", group)  # one header per group, as kubectl sends them
        for name, value in headers.items():
            if not isinstance(value, str) or not header_safe(value):
                raise self._header_error(name)
        return headers

    def _header_error(self, name: str) -> ClusterError:
        """A value http.client would refuse mid-request (a line break, a character beyond Latin-1)."""
        if name == "Authorization":
            who = f'user "{self.resolved.user}"' if self.resolved.user else "the current user"
            return ClusterError(f"the bearer token of {who} holds a line break or a character that cannot be "
                                "sent in an HTTP header (only Latin-1 text is); fix the token in the kubeconfig "
                                "(or its tokenFile, or what its exec plugin prints), or log in again")
        return ClusterError(f"the {name} header (from --as/--as-group or the kubeconfig's as/as-groups) holds a "
                            "line break or a character beyond Latin-1; fix the name")

    def _send(self, method: str, path: str, params: dict, body: bytes | None,
              content_type: str | None, deadline: float | None = None) -> tuple[int, bytes, Any]:
        """One HTTP exchange -> (status, body bytes, headers), over by `deadline` (time.monotonic)
        or the request timeout, body included: a server that sends its headers at once and then
        trickles a byte at a time defeats a per-read socket timeout, so the exchange runs in a
        thread of its own and is given up (its socket shut) when the time is over."""
        url = self._base + path + ("?" + urlencode(params) if params else "")
        headers = self._headers(content_type)  # in this thread: an exec plugin's refresh runs here
        limit = self.request_timeout or DEFAULT_REQUEST_LIMIT
        if deadline is not None:
            limit = min(limit, deadline - time.monotonic())
        if limit <= 0:
            raise ClusterError(self._timeout_message(method, path))
        exchange = Exchange(self, method, path, url, body, headers, limit)
        return exchange.run(lambda: ClusterError(self._timeout_message(method, path)))

    def _exchange_now(self, exchange: "Exchange") -> tuple[int, bytes, Any]:
        """The exchange itself (in Exchange's thread); transport errors become ClusterError."""
        from urllib3 import Timeout
        from urllib3 import exceptions as ux

        limit = exchange.limit
        timeout = Timeout(connect=min(limit, DEFAULT_CONNECT_TIMEOUT), read=limit)
        try:
            resp = self._pool.request(exchange.method, exchange.url, body=exchange.body, headers=exchange.headers,
                                      timeout=timeout, retries=False, preload_content=False, redirect=False)
            exchange.response = resp
            try:
                return resp.status, exchange.read_body(resp), resp.headers
            finally:
                resp.release_conn()
        except ux.ReadTimeoutError:
            raise ClusterError(self._timeout_message(exchange.method, exchange.path)) from None
        except ux.SSLError as e:
            raise ClusterError(self._tls_message(e)) from None

    def _tls_message(self, err: BaseException) -> str:
        """What failed in TLS, pointed at the kubeconfig setting to fix: the client's own certificate
        and key (loaded at the first connection), the name the server's certificate is for, else the CA."""
        said = _first_line(err)
        head = f"TLS with the API server at {self.server} failed ({said}); "
        if self.resolved.configuration.cert_file and ("PEM lib" in said or "KEY_VALUES_MISMATCH" in said):
            who = f'user "{self.resolved.user}"' if self.resolved.user else "the user"
            return head + (f"the client certificate or key of {who} cannot be used: fix client-certificate(-data) "
                           "and client-key(-data) in the kubeconfig (or what its exec plugin prints)")
        if "Hostname mismatch" in said or "IP address mismatch" in said:
            return head + ("the server's certificate is not for the name in the server URL: use the name it was "
                           "issued for, or set the cluster's tls-server-name in the kubeconfig")
        return head + "check the cluster's certificate-authority in your kubeconfig"

    def version(self) -> str:
        """The server's gitVersion from /version (readable by every user through
        system:public-info-viewer). An answer without one (`{}`, a Status with a 200, a number) is
        UnreadableVersion, as one that names no Kubernetes version is: the run then says it follows
        the newest minor's rules, where it said nothing before."""
        body = self._get_json("/version", {})
        v = body.get("gitVersion")
        if body.get("kind") == "Status":
            raise UnreadableVersion(f"its /version answered 200 and {status_summary(body)}", 200)
        if not isinstance(v, str):
            what = "no gitVersion" if v is None else f"a gitVersion that is {json_type(v)}"
            raise UnreadableVersion(f"its /version has {what}", 200)
        try:
            versions.parse(v)
        except versions.UnknownVersion:
            # refused here, where the server is known, not where the rules are chosen
            raise UnreadableVersion(f"its /version says gitVersion {server_text(v, 60)!r}, which is no "
                                    "Kubernetes version", 200) from None
        return v

    def _get_json(self, path: str, params: dict) -> dict:
        """GET with retries (see _get_bytes), the answer parsed as a JSON object."""
        return self._decode(path, self._get_bytes(path, params))

    def _get_bytes(self, path: str, params: dict) -> bytes:
        """GET with retries (tenacity) on 429, 5xx and connection errors; never on other 4xx.
        Attempts and the waits between them all end by one deadline: --request-timeout when
        given (kubectl's "time to wait for a server request", retries included), else
        `policy.budget` of waiting; a wait the deadline leaves no room for is not begun."""
        import tenacity

        policy = self.retry
        start = time.monotonic()
        deadline = start + self.request_timeout if self.request_timeout else None
        wait_until = deadline if deadline is not None else start + policy.budget

        def wait(state: tenacity.RetryCallState) -> float:
            return policy.backoff(state.attempt_number, state.outcome.exception().retry_after)

        def stop(state: tenacity.RetryCallState) -> bool:
            return (state.attempt_number >= policy.attempts
                    or time.monotonic() + (state.upcoming_sleep or 0.0) >= wait_until)

        retrying = tenacity.Retrying(stop=stop, wait=wait, retry=tenacity.retry_if_exception_type(_Transient),
                                     sleep=policy.sleep, reraise=True)
        tries = [0]

        def attempt() -> bytes:
            tries[0] += 1
            return self._get_once(path, params, deadline)

        try:
            data = retrying(attempt)
        except _Transient as last:
            if last.cause is not None:
                raise ClusterError(self._unreachable_message(last.cause, "GET", path)) from None
            err = self._status_error("GET", path, last.status, last.body)
            attempts = f"{tries[0]} attempt{'s' if tries[0] > 1 else ''}"
            raise ApiStatusError(f"{err} (still failing after {attempts}; try again later)",
                                 err.status, err.reason, err.body) from None
        return data

    def _get_once(self, path: str, params: dict, deadline: float | None = None) -> bytes:
        """One GET attempt: the body of a 2xx, _Transient for what is worth retrying, else an error."""
        from urllib3 import exceptions as ux

        try:
            status, data, headers = self._send("GET", path, params, None, None, deadline)
        except (ux.ConnectTimeoutError, ux.ProtocolError, ux.ProxyError) as e:
            raise _Transient(0, b"", None, cause=e) from None  # refused, reset, or timed out connecting
        except ux.DecodeError:
            # it answered: the body is what is wrong, not the network
            raise ClusterError(f"the API server at {self.server} answered GET {path} with a body its "
                               "Content-Encoding header says is compressed, and it is not; check any proxy "
                               "between you and the API server") from None
        except ux.LocationValueError as e:
            raise ClusterError(self._unreachable_message(e, "GET", path)) from None
        except ux.HTTPError as e:
            # after it connected: headers no HTTP client can take (two Content-Lengths, …)
            raise ClusterError(f"the API server at {self.server} answered GET {path} with what is not valid HTTP "
                               f"({_first_line(e)}); check any proxy or load balancer in front of it") from None
        if 300 <= status <= 399:
            raise self._redirect_error("GET", path, status, headers)
        if 200 <= status <= 299:
            return data
        if status == 429 or status >= 500:
            raise _Transient(status, data, retry_after_of(headers, data, self.retry.retry_after_cap))
        raise self._status_error("GET", path, status, data)

    def _too_deep(self, path: str) -> ClusterError:
        return ClusterError(f"the API server at {self.server} answered {path} with JSON nested deeper than "
                            f"{jsonscan.MAX_DEPTH} levels; no Kubernetes object is that deep: check that the "
                            "kubeconfig's server URL is a Kubernetes API")

    def _decode(self, path: str, data: bytes) -> dict:
        try:
            obj = self._loads(data)
        except jsonscan.TooDeep:
            raise self._too_deep(path) from None
        except ValueError as e:
            # orjson refuses a number past a double's range (a 400-digit resourceVersion): JSON, but
            # no Kubernetes field holds one, and "not JSON" would send the user looking elsewhere
            if "number is infinity" in str(e):
                where = f" at line {e.lineno}, column {e.colno}" if hasattr(e, "lineno") else ""
                raise ClusterError(f"the API server at {self.server} answered {path} with a number too large to "
                                   f"read{where}; no Kubernetes field holds one: check that the kubeconfig's server "
                                   "URL is a Kubernetes API") from None
            raise ClusterError(f"the API server at {self.server} answered {path} with something that is "
                               "not JSON; check that the kubeconfig's server URL is a Kubernetes API") from None
        if not isinstance(obj, dict):
            # worded without "unexpected": that word is the catch-all's, kept for our own bugs
            raise ClusterError(f"the API server at {self.server} answered {path} with {json_type(obj)}, not a JSON "
                               "object; check that the kubeconfig's server URL is a Kubernetes API")
        return obj

    # ---- error messages ------------------------------------------------------------------

    def _status_error(self, method: str, path: str, status: int, data: bytes) -> ApiStatusError:
        try:
            body = self._loads(data) if data else {}
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) and body.get("kind") == "Status" else {}
        reason = body.get("reason", "")
        verb, resource, ns = describe_request(method, path)
        where = f'in namespace "{ns}"' if ns else ("in all namespaces" if is_namespaced(resource) else
                                                   "(cluster-scoped)")
        server_says = server_text(body.get("message") or f"HTTP {status}")
        if status == 401:
            who = f'user "{self.resolved.user}"' if self.resolved.user else "no user"
            msg = (f"the API server at {self.server} rejected the credentials of {who} (401 Unauthorized): "
                   "they are missing, expired or invalid; log in again or pick another --context/--user")
        elif status == 403:
            fix = RBAC_HINT if verb in ("get", "list") else WRITE_RBAC_HINT
            msg = f"cannot {verb} {resource} {where}: your RBAC lacks {verb} on {resource}; {fix}"
            if ns is None and is_namespaced(resource):
                msg += ", or drop -A to read one namespace"
        elif status == 404 and verb == "list":
            msg = (f"the API server at {self.server} does not serve {resource} (404); the cluster may be "
                   "older than this tool supports or the API group is disabled")
        elif status == 404:
            msg = f"{server_says} {where} (404 on {self.server})"
        elif status == 429:
            msg = f"the API server at {self.server} is throttling requests (429 TooManyRequests) to {verb} {resource}"
        elif status == 407:
            proxy = _without_password(self.resolved.configuration.proxy) or "a proxy"
            msg = (f"the proxy {proxy} between you and the API server at {self.server} asks for credentials "
                   f"(407 Proxy Authentication Required) to {verb} {resource}; put user:password in its URL "
                   "(HTTPS_PROXY, HTTP_PROXY or the kubeconfig's proxy-url)")
        else:
            msg = f"the API server at {self.server} failed to {verb} {resource} {where} ({status}: {server_says})"
        return ApiStatusError(msg, status, reason, body)

    def _unreachable_message(self, err: BaseException | None, method: str = "", path: str = "") -> str:
        from urllib3 import exceptions as ux

        ctx = f' (context "{self.resolved.context}")' if self.resolved.context else ""
        if isinstance(err, ux.ProxyError):
            proxy = _without_password(self.resolved.configuration.proxy)
            return (f"cannot reach the API server at {self.server}{ctx} through the proxy {proxy}: "
                    f"{_first_line(err)}; check the proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY or the "
                    "kubeconfig's proxy-url)")
        if isinstance(err, ux.ProtocolError) and path:
            # connected: the server dropped the connection, or broke off or garbled its answer
            return (f"the API server at {self.server}{ctx} broke off its answer to {method} {path.split('?')[0]} "
                    f"({_first_line(err)}); check the cluster's health and any proxy or load balancer in "
                    "front of it, then try again")
        return (f"cannot reach the API server at {self.server}{ctx}: {_first_line(err)}; "
                "check --context, your VPN or network, and that the cluster is up")

    def _redirect_error(self, method: str, path: str, status: int, headers: Any) -> ClusterError:
        """A 3xx: client-go would follow it (taking the credentials along); tspread does not."""
        location = headers.get("Location") if headers is not None else None
        where = f" to {server_text(location, 120)}" if location else ""
        return ClusterError(f"the API server at {self.server} answered {method} {path} with a redirect ({status}"
                            f"{where}), which tspread does not follow; put the URL of the API server itself in "
                            "the kubeconfig's server (kubectl cluster-info shows it)")

    def _timeout_message(self, method: str, path: str) -> str:
        verb, resource, _ = describe_request(method, path)
        limit = f"{self.request_timeout:g}s" if self.request_timeout else "the default limit"
        what = f"a {verb} of {resource}" if resource else f"{method} {path.split('?')[0]}"  # /version
        return (f"the API server at {self.server} did not answer {what} within {limit}; "
                "raise --request-timeout or check the cluster's health")


def _without_password(proxy: str | None) -> str | None:
    """A proxy's or server's URL fit for an error line: its password (http://me:secret@…) left out."""
    from urllib.parse import urlsplit

    if not proxy:
        return proxy
    url = urlsplit(proxy)
    if url.password is None:
        return proxy
    return url._replace(netloc=f"{url.username}:***@{url.netloc.rsplit('@', 1)[1]}").geturl()


def _first_line(err: BaseException | None) -> str:
    if err is None:
        return "unknown error"
    reason = getattr(err, "reason", None)  # MaxRetryError wraps the real cause
    args = getattr(err, "args", ())
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], BaseException):
        # urllib3's ProtocolError/ProxyError: ('Connection aborted.', RemoteDisconnected('…')), said plainly
        inner = args[1]
        if isinstance(inner, http.client.BadStatusLine):
            said = f"a status line that is not HTTP's: {inner.line.strip()[:60]!r}"
        else:
            said = _first_line(inner)
        text = args[0] if said in args[0] else f"{args[0].rstrip('.')}: {said}"
    elif len(args) == 2 and isinstance(args[1], str) and not isinstance(args[0], str):
        text = args[1]  # urllib3's (connection object, message) of a connect timeout
    else:
        text = str(reason if isinstance(reason, BaseException) else err)
    # urllib3 prefixes "<urllib3.connection.HTTPConnection object at 0x…>: " — noise for a user
    if ">: " in text:
        text = text.split(">: ", 1)[1]
    first = server_text(text.splitlines()[0], 200) if text.strip() else ""
    return first or type(err).__name__


def connect(opts: KubeOptions, *, retry: RetryPolicy | None = None, environ: dict | None = None,
            service_account_dir: str | None = None, page_helpers: PageHelpers | None = None) -> LiveCluster:
    """Resolve configuration like kubectl and return a LiveCluster (no request is made yet)."""
    kw: dict = {"environ": environ}
    if service_account_dir:
        kw["service_account_dir"] = service_account_dir
    resolved = resolve(opts, **kw)
    return LiveCluster(resolved, all_namespaces=opts.all_namespaces,
                       request_timeout=opts.request_timeout, retry=retry, page_helpers=page_helpers)


def load_live(opts: KubeOptions, kinds: Iterable[str], *, retry: RetryPolicy | None = None,
              cluster: LiveCluster | None = None, page_helpers: PageHelpers | None = None) -> Snapshot:
    """Read `kinds` (keys of decode.DECODERS) into one Snapshot.

    An optional kind (events, PVs, storage classes) the user may not read is skipped and
    named in `Snapshot.warnings`; every other failure is an error.
    """
    live = cluster or connect(opts, retry=retry, page_helpers=page_helpers)
    fields: dict[str, list] = {}
    warnings: list[str] = [live.insecure_warning] if live.insecure else []
    try:
        kube_version = live.version()
    except ApiStatusError as e:
        # the answers then follow the newest supported minor; said, not silent
        kube_version = ""
        warnings.append(f"could not read the server's version ({e}); answers follow the newest supported "
                        "scheduler; pass --kube-version X.Y to choose")
    listed: set[str] = set()
    for kind in dict.fromkeys(kinds):
        target = fields.setdefault(DECODERS[kind][1], [])
        try:
            target.extend(live.list(kind))
        except ApiStatusError as e:
            if not (RESOURCES[kind].optional and e.status in (403, 404)):
                raise
            warnings.append(f"skipped {RESOURCES[kind].group_resource}: {e}")
            continue
        listed.add(kind)  # listed, even when empty: none of it exists
    # pods mid-resize sized by the server's minor: drain-safe --execute reads the cluster again
    # through here, without load_snapshot
    return podrequests.for_version(Snapshot(
        **{k: tuple(v) for k, v in fields.items()}, namespace=None if live.all_namespaces else live.namespace,
        source=f"cluster {live.server}", warnings=tuple(warnings), kube_version=kube_version,
        kinds_read=frozenset(listed)))
