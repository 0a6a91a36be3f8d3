"""`--from-file`: a Snapshot from what `kubectl get … -o json` or `-o yaml` printed.

Accepted, in any mix and across several paths (they merge):
- a `List` whose items carry their `kind`;
- typed lists (`PodList`, `NodeList`, …) whose items have no `kind`: it comes from the list kind;
- single objects, multi-document YAML (`---`), and JSON documents one after another
  (`kubectl get … -o json >> dump.json`);
- a bare JSON array of objects (what `jq .items` prints);
- `-` for stdin, and a directory for every `.json`, `.yaml` and `.yml` file directly in it
  (sorted by name, not recursive, hidden files skipped).

JSON or YAML is told from the content, not the file name. Objects of kinds the engine does
not use (Namespace, ConfigMap, …) are skipped. When the same object (kind, namespace, name)
appears twice, the later one wins, so a newer dump can be passed after an older one.

Pods in phase Succeeded or Failed are left out: the scheduler never sees them, and the live
path filters them out server-side, so a dump and the live cluster give the same numbers.

Nothing is written anywhere; every problem is an InputError with one line saying what to do.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections import Counter
from typing import IO, Any, Iterable, Iterator, Mapping, Sequence

import yaml

from kubectl_tspread.errors import InputError
from kubectl_tspread.model import Snapshot
from kubectl_tspread.snapshot.decode import DECODERS
from kubectl_tspread.snapshot.wire import decode_pod_item

try:  # orjson parses large dumps several times faster; plain json is the fallback
    import orjson

    def _json_loads(text: str | bytes) -> Any:
        return orjson.loads(text)

    _JSON_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError, json.JSONDecodeError)
except ImportError:  # pragma: no cover - depends on the environment
    def _json_loads(text: str | bytes) -> Any:
        return json.loads(text)

    _JSON_ERRORS = (json.JSONDecodeError,)

try:  # msgspec splits a List into its items' bytes without building the items (see _split_list)
    import msgspec

    class _ListShell(msgspec.Struct):
        """A List document with each item left as its raw JSON bytes."""

        kind: str = ""
        apiVersion: str = ""
        items: "list[msgspec.Raw] | None" = None

    _SHELL_DECODER: Any = msgspec.json.Decoder(_ListShell)
    _ITEM_DECODER: Any = msgspec.json.Decoder()  # as fast as orjson, and it reads Raw directly
    _SHELL_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, msgspec.ValidationError)
except ImportError:  # pragma: no cover - depends on the environment (the krew archive has no msgspec)
    _SHELL_DECODER = _ITEM_DECODER = None
    _SHELL_ERRORS = ()

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader (libyaml when available) that keeps timestamps as the strings the API sends.

    Hand-written YAML often leaves `creationTimestamp: 2026-03-01T10:00:00Z` unquoted; the
    stock resolver would turn it into a datetime and every record expects RFC 3339 text.
    """


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}

log = logging.getLogger(__name__)

DUMP_SUFFIXES = (".json", ".yaml", ".yml")
_FINISHED = ("Succeeded", "Failed")
# what decoders raise on a malformed field (int("abc"), a bad quantity, a string where a map belongs)
_DECODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, ArithmeticError)


def load_files(paths: Sequence[str], namespace: str | None = None, all_namespaces: bool = False,
               stdin: IO[str] | None = None) -> Snapshot:
    """Read every path (file, directory or `-`) and merge what they hold into one Snapshot.

    Namespace the Snapshot is about: None with `all_namespaces`; else `namespace` when given;
    else, when every Pod in the dumps lives in one namespace, that one (so a dump of
    `kubectl get pods -n prod -o json` just works); else "default", as kubectl would.
    """
    if not paths:
        raise InputError("no dump file given; pass --from-file PATH (a file, a directory, or - for stdin)")
    collector = _Collector()
    for label, data in _inputs(paths, stdin):
        docs = _parse(label, data)
        del data  # the file's bytes are not needed once parsed: keep the peak at bytes-or-tree
        for doc_no in range(len(docs)):
            collector.add_document(docs[doc_no], label, doc_no + 1)
            docs[doc_no] = None  # each document's tree goes as soon as its records exist
    return collector.snapshot(namespace, all_namespaces, _describe(paths))


def raw_objects(paths: Sequence[str], stdin: IO[str] | None = None) -> Iterator[dict]:
    """Every object in the dumps, as parsed, with its kind (and its list's apiVersion when the
    item lacks one): what `dump --from-file` writes out again."""
    for label, data in _inputs(paths, stdin):
        for doc_no, doc in enumerate(_parse(label, data), start=1):
            if doc is None:
                continue
            items, list_kind, version = None, "", ""
            if isinstance(doc, list):
                items = doc
            elif isinstance(doc, Mapping) and str(doc.get("kind", "")).endswith("List") \
                    and isinstance(doc.get("items"), list):
                items, list_kind, version = doc["items"], str(doc["kind"])[:-len("List")], str(doc.get("apiVersion", ""))
            if items is None:
                if not isinstance(doc, Mapping) or not doc.get("kind"):
                    raise InputError(f"{label}: document {doc_no} is not a Kubernetes object (no kind/apiVersion); "
                                     "give what `kubectl get … -o json` or `-o yaml` prints")
                yield dict(doc)
                continue
            raw = isinstance(items, RawItems)
            for item in items:
                obj = _ITEM_DECODER.decode(item) if raw else item
                if not isinstance(obj, Mapping) or not (obj.get("kind") or list_kind):
                    raise InputError(f"{label}: an item of document {doc_no} is not a Kubernetes object; "
                                     "give what `kubectl get … -o json` or `-o yaml` prints")
                obj = dict(obj)
                obj.setdefault("kind", list_kind)
                if version and list_kind:
                    obj.setdefault("apiVersion", version)
                yield obj


def decode_objects(objs: Iterable[Any], namespace: str | None, all_namespaces: bool,
                   source: str) -> Snapshot:
    """Raw API objects (single objects, `List`s or typed lists, as JSON-decoded) -> Snapshot.

    Shared by the dump files, the demo cluster and anything else holding raw dicts. The
    namespace rule is the one of `load_files`. `source` names the input in errors.
    """
    collector = _Collector()
    for doc_no, doc in enumerate(objs, start=1):
        collector.add_document(doc, source, doc_no)
    return collector.snapshot(namespace, all_namespaces, source)


class _Collector:
    """Decodes objects one at a time into records, keyed so that a repeated object replaces the first."""

    def __init__(self) -> None:
        self.records: dict[str, dict[tuple[str, str, str], Any]] = {}
        self.pod_namespaces: set[str] = set()
        # kinds the engine has no use for, logged at debug level to explain a surprising dump
        self.ignored: Counter[str] = Counter()
        self.kinds: set[str] = set()  # every kind with an object, used or not (Snapshot.kinds_read)

    def add_document(self, doc: Any, where: str, doc_no: int) -> None:
        if doc is None:  # an empty YAML document (a stray `---`)
            return
        if isinstance(doc, list):  # a bare array, as `jq .items` prints
            for i, item in enumerate(doc):
                self._add_item(item, "", where, f"document {doc_no}, item {i}")
            return
        if not isinstance(doc, Mapping) or not doc.get("kind") or not doc.get("apiVersion"):
            raise InputError(
                f"{where}: document {doc_no} is not a Kubernetes object (no kind/apiVersion); "
                "give what `kubectl get … -o json` or `-o yaml` prints"
            )
        kind = str(doc["kind"])
        items = doc.get("items")
        if kind.endswith("List") and (items is None or isinstance(items, list)):
            # typed lists (PodList) drop the items' kind; a plain `List` keeps it
            item_kind = kind[: -len("List")]
            raw = isinstance(items, RawItems)
            for i in range(len(items or ())):
                item = _item_tree(items[i], item_kind) if raw else items[i]  # type: ignore[index]
                self._add_item(item, item_kind, where, f"item {i} of the {kind}")
                items[i] = None  # free each object's JSON once decoded: memory follows the records
            return
        self._add(doc, kind, where)

    def _add_item(self, item: Any, default_kind: str, where: str, what: str) -> None:
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: {what} is not a Kubernetes object; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        kind = item.get("kind") or default_kind
        if not kind:
            raise InputError(f"{where}: {what} has no kind; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        if not item.get("kind"):
            item = {**item, "kind": kind}
        self._add(item, str(kind), where)

    def _add(self, obj: Mapping, kind: str, where: str) -> None:
        self.kinds.add(kind)
        entry = DECODERS.get(kind)
        if entry is None:
            self.ignored[kind] += 1
            return
        decoder, field = entry
        try:
            record = decoder(obj)
        except _DECODE_ERRORS as e:
            raise InputError(f"{where}: cannot read {_name(obj, kind)}: {_reason(e)}; "
                             "fix that field or leave the object out") from e
        if kind == "Pod":
            self.pod_namespaces.add(record.namespace)
            if record.phase in _FINISHED:
                return
        recs = self.records.setdefault(field, {})
        name = getattr(record, "name", None)
        # Events have no name in the record and never replace one another
        key = (kind, getattr(record, "namespace", ""), name if name is not None else f"#{len(recs)}")
        recs[key] = record

    def snapshot(self, namespace: str | None, all_namespaces: bool, source: str) -> Snapshot:
        fields = {f: tuple(recs.values()) for f, recs in self.records.items()}
        if self.ignored:
            log.debug("%s: skipped objects of kinds tspread does not use: %s", source,
                      ", ".join(f"{n} {k}" for k, n in sorted(self.ignored.items())))
        if not fields.get("nodes"):
            raise InputError(f"{source} holds no Nodes; dump them too: "
                             "kubectl get nodes -o json > nodes.json, and pass that file as well")
        return Snapshot(**fields, namespace=_namespace(namespace, all_namespaces, self.pod_namespaces),
                        source=source, kinds_read=frozenset(self.kinds))


def _namespace(namespace: str | None, all_namespaces: bool, pod_namespaces: set[str]) -> str | None:
    if all_namespaces:
        return None
    if namespace:
        return namespace
    if len(pod_namespaces) == 1:
        return next(iter(pod_namespaces))
    return "default"


def _name(obj: Mapping, kind: str) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return f"a {kind} without usable metadata"
    name = meta.get("name") or "<unnamed>"
    ns = meta.get("namespace")
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _reason(e: Exception) -> str:
    text = str(e)
    if isinstance(e, ValueError) and text.startswith("invalid literal for int()"):
        # int("abc") on maxSkew, minDomains, a port, …: say it in the user's terms
        return f"{text.rsplit(': ', 1)[-1]} is not an integer"
    if isinstance(e, KeyError):
        return f"missing field {e.args[0]!r}" if e.args else "missing field"
    if isinstance(e, (AttributeError, TypeError)):
        # e.g. 'str' object has no attribute 'get': a scalar where the API puts a map or list
        return f"a field has the wrong type ({e})"
    return text or type(e).__name__


def _inputs(paths: Sequence[str], stdin: IO[str] | None) -> Iterator[tuple[str, bytes]]:
    """(label, raw bytes) for every file the paths name, in order."""
    for path in paths:
        if path == "-":
            stream = stdin if stdin is not None else sys.stdin
            text = stream.read()
            yield "stdin", text.encode("utf-8") if isinstance(text, str) else text
        elif os.path.isdir(path):
            files = sorted(f for f in os.listdir(path)
                           if f.lower().endswith(DUMP_SUFFIXES) and not f.startswith("."))
            if not files:
                raise InputError(f"directory {path} has no .json, .yaml or .yml files; "
                                 "point --from-file at the dumps themselves")
            for f in files:
                full = os.path.join(path, f)
                if os.path.isfile(full):
                    yield full, _read(full)
        else:
            yield path, _read(path)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError(f"file not found: {path}; check the path given to --from-file") from None
    except PermissionError:
        raise InputError(f"cannot read {path}: permission denied; check the file's permissions") from None
    except IsADirectoryError:  # pragma: no cover - isdir is checked first; a race at most
        raise InputError(f"{path} is a directory that vanished while reading; retry") from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}; check the path given to --from-file") from None


def _parse(label: str, data: bytes) -> list[Any]:
    """The documents in `data`: JSON when it starts like JSON, else (multi-document) YAML."""
    if data[:4096].lstrip()[:1] in (b"{", b"["):  # a prefix: lstrip of it all would copy it all
        shell = _split_list(data)
        if shell is not None:
            return [shell]
        try:  # straight from the bytes: no decoded copy of a dump that may be gigabytes
            return [_json_loads(data)]
        except _JSON_ERRORS:
            pass  # a BOM, concatenated documents, YAML flow style or a real error: see below
    try:
        text = data.decode("utf-8-sig")  # -sig: tolerate the BOM Windows editors write
    except UnicodeDecodeError:
        raise InputError(f"{label} is not UTF-8 text; give what `kubectl get … -o json` prints") from None
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "{[":
        try:
            return [_json_loads(text)]
        except _JSON_ERRORS as json_error:
            # `kubectl get … -o json >> dump.json` concatenates documents; `{a: 1}` is YAML flow
            # style. Only when neither reading works is the first JSON error the one to show.
            try:
                return _json_stream(text)
            except json.JSONDecodeError:
                pass
            try:
                return _load_yaml(text)
            except yaml.YAMLError:
                raise InputError(f"{label} is neither JSON nor YAML: {_json_position(json_error)}; "
                                 "give what `kubectl get … -o json` or `-o yaml` prints") from None
    try:
        return _load_yaml(text)
    except yaml.YAMLError as e:
        raise InputError(f"{label} is neither JSON nor YAML: {_yaml_position(e)}; "
                         "give what `kubectl get … -o json` or `-o yaml` prints") from None


class RawItems(list):
    """A List's items as raw JSON bytes, each parsed only when the collector reaches it."""


def _split_list(data: bytes) -> dict | None:
    """A JSON List document as {kind, apiVersion, items: RawItems}, or None to parse it whole.

    Memory: `json.load` of a 150k-pod dump builds a tree of about 5.6 × the file's size
    before anything can be decoded; split first, the peak is the file's bytes plus the
    records (each item's tree lives only while it is decoded). Anything that is not one
    well-formed List object (a single object, several documents, a syntax error) goes
    the whole-parse way, which also words the errors.
    """
    if _SHELL_DECODER is None:
        return None
    try:
        shell = _SHELL_DECODER.decode(data)
    except _SHELL_ERRORS:
        return None
    if not shell.kind.endswith("List") or shell.items is None:
        return None
    return {"kind": shell.kind, "apiVersion": shell.apiVersion, "items": RawItems(shell.items)}


def _item_tree(raw: Any, list_kind: str) -> Any:
    """One item of RawItems as a JSON tree (the shell's decode already checked its syntax): a
    pod's with only the fields the pod decoder reads (wire.py, as for the live path's pages:
    the bulk of a dump, mostly managedFields and container specs the decoder skips), any
    other object's whole."""
    pod = decode_pod_item(raw, list_kind)
    return pod if pod is not None else _ITEM_DECODER.decode(raw)


def _json_stream(text: str) -> list[Any]:
    """Several JSON documents one after another."""
    decoder, pos, end, out = json.JSONDecoder(), 0, len(text), []
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos == end:
            return out
        doc, pos = decoder.raw_decode(text, pos)
        out.append(doc)


def _load_yaml(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=_Loader))


def _json_position(e: Exception) -> str:
    msg = getattr(e, "msg", None) or str(e).split(":", 1)[0]
    line, col = getattr(e, "lineno", None), getattr(e, "colno", None)
    return f"{msg} at line {line}, column {col}" if line else str(msg)


def _yaml_position(e: yaml.YAMLError) -> str:
    problem = getattr(e, "problem", None) or getattr(e, "context", None) or "invalid syntax"
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if mark is None:
        return str(problem)
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def _describe(paths: Sequence[str]) -> str:
    names = ["stdin" if p == "-" else p for p in paths]
    if len(names) == 1:
        return names[0] if names[0] == "stdin" else f"file {names[0]}"
    shown = ", ".join(names[:3])
    more = f" (+{len(names) - 3} more)" if len(names) > 3 else ""
    return f"files {shown}{more}"
