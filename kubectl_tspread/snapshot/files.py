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

import codecs
import io
import json
import logging
import os
import re
import stat
import sys
from collections import Counter
from collections.abc import Mapping  # typing.Mapping's isinstance goes through Python, per object
from typing import IO, Any, Callable, Iterable, Iterator, Sequence

import msgspec
import yaml

from kubectl_tspread.model.errors import InputError
from kubectl_tspread.model import Snapshot
from kubectl_tspread.engine import versions
from kubectl_tspread.snapshot import jsonscan, jsonstream, yamlread
from kubectl_tspread.snapshot.decode import DECODERS
from kubectl_tspread.snapshot.fields import FieldError, MalformedObject, mapping, printable, shown, text
from kubectl_tspread.snapshot.kinds import KINDS_READ_ANNOTATION, VERSION_ANNOTATION
from kubectl_tspread.snapshot.sharing import HugeNumber, json_int
from kubectl_tspread.snapshot.jsonscan import MAX_DEPTH
from kubectl_tspread.snapshot.jsonstream import StreamedList
from kubectl_tspread.snapshot.transport import status_summary
from kubectl_tspread.snapshot.yamlread import YamlLimit
from kubectl_tspread.snapshot.wire import decode_pod_item

# msgspec splits a List into its items' bytes without building the items (see _parse_one)


class _ListShell(msgspec.Struct):
    """A List document with each item left as its raw JSON bytes."""

    kind: str = ""
    apiVersion: str = ""
    metadata: Any = None  # small: a dump's annotations (Collector._declared) are read from it
    items: "list[msgspec.Raw] | None" = None


_SHELL_DECODER: Any = msgspec.json.Decoder(_ListShell)
_ARRAY_DECODER: Any = msgspec.json.Decoder(list[msgspec.Raw])  # a bare array, item by item
_ITEM_DECODER: Any = msgspec.json.Decoder()  # as fast as orjson, and it reads Raw directly
_SHELL_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, msgspec.ValidationError)


_RAW: Any = msgspec.Raw

log = logging.getLogger(__name__)

DUMP_SUFFIXES = (".json", ".yaml", ".yml")
# objects the dumps may hold: Kubernetes supports clusters of up to 150,000 pods, and a dump of
# one with its nodes, workloads and an hour of events holds well under this; 30 MB of `{},`
# is ten million objects, each read at a few microseconds
MAX_OBJECTS = 1_000_000
# more Nodes than any cluster has: every answer walks every node (why-pending's, per pod), so
# time grows with them unbounded (PERFORMANCE.md has the figures)
MAX_NODES = 100_000
_FINISHED = ("Succeeded", "Failed")


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
    for label, stream in _inputs(paths, stdin):
        # documents, and the items of bare arrays and long Lists, one at a time as they are
        # read: each one's bytes and tree go as soon as its records exist, so the peak is the
        # records plus a chunk of the input (jsonstream.py)
        for doc_no, index, doc in _documents(label, stream):
            if index is None:
                collector.add_document(doc, label, doc_no)
            else:
                collector.add_array_item(doc, label, doc_no, index)
            del doc
    return collector.snapshot(namespace, all_namespaces, _describe(paths))


def raw_objects(paths: Sequence[str], stdin: IO[str] | None = None) -> Iterator[dict]:
    """Every object in the dumps, whole, with its kind (and its list's apiVersion when the item
    lacks one), read with the same bounds as `load_files`: what `dump --from-file` writes out
    again."""
    for label, stream in _inputs(paths, stdin):
        for doc_no, index, doc in _documents(label, stream):
            if isinstance(doc, _STREAMED):  # its kind may follow its items: they are kept until then
                trees = [_streamed_item(raw, "", label, f"item {i} of the List", whole=True) for i, raw in doc.items()]
                shell = doc.shell()
                kind = shell.get("kind") if isinstance(shell, Mapping) else None
                list_kind = kind[:-len("List")] if type(kind) is str and kind.endswith("List") else ""
                version = str(shell.get("apiVersion", "")) if isinstance(shell, Mapping) else ""
                for i, tree in enumerate(trees):
                    yield _raw_object(tree, list_kind, version, label, f"item {i} of the {kind}")
                continue
            if index is not None:  # an item of a bare array
                what = f"document {doc_no}, item {index}"
                item = _item_tree(doc, "", label, what, whole=True) if type(doc) is _RAW else doc
                yield _raw_object(item, "", "", label, what)
                continue
            if doc is None:
                continue
            kind = doc.get("kind") if isinstance(doc, Mapping) else None
            items = doc.get("items") if isinstance(doc, Mapping) else None
            if type(kind) is str and kind.endswith("List") and isinstance(items, list):
                list_kind, version = kind[:-len("List")], str(doc.get("apiVersion", ""))
                raw = isinstance(items, RawItems)
                for i, item in enumerate(items):
                    what = f"item {i} of the {kind}"
                    obj = _item_tree(item, list_kind, label, what, whole=True) if raw else item
                    yield _raw_object(obj, list_kind, version, label, what)
                continue
            yield _raw_object(doc, "", "", label, f"document {doc_no}")


def _raw_object(obj: Any, list_kind: str, version: str, where: str, what: str) -> dict:
    if not isinstance(obj, Mapping) or not (obj.get("kind") or list_kind):
        raise InputError(f"{where}: {what} is not a Kubernetes object (no kind); "
                         "give what `kubectl get … -o json` or `-o yaml` prints")
    _refuse_unread(obj, obj.get("kind") or list_kind, where, what)
    out = dict(obj)
    out.setdefault("kind", list_kind)
    if version and list_kind:
        out.setdefault("apiVersion", version)
    return out


_LOWER_KINDS = {k.lower(): k for kind in (*DECODERS, "Status") for k in (kind, f"{kind}List")} | {"list": "List"}


def _refuse_unread(obj: Mapping, kind: Any, where: str, what: str) -> None:
    """Refuses an object of a kind that would be skipped as of no use while it stands for
    objects that are: the dump would read as a cluster without them.
    - A Status is what the API server answers when a request fails (`curl …/api/v1/pods >
      x.json` saves it when pods may not be listed): the objects asked for are missing.
    - A List inside a List, items and all (they would be skipped with it).
    - A kind the commands read, in other letters (`pod`): the API has no such kind."""
    if kind == "Status":
        raise InputError(f"{where}: {what} is {status_summary(obj)}, the answer to a request that failed, "
                         "not the objects it asked for; dump them again (kubectl get … -o json) and leave "
                         "the Status out")
    if type(kind) is not str or kind in DECODERS:
        return
    if kind.endswith("List") and isinstance(obj.get("items"), list):  # a custom kind may end in List
        raise InputError(f"{where}: {what} is a {printable(kind)} inside a List, whose items would go unread; "
                         "give its items in the outer List, or the lists one after another")
    known = _LOWER_KINDS.get(kind.lower())
    if known is not None:
        raise InputError(f"{where}: {what} has kind {printable(kind)!r}, which the API does not have; "
                         f"write it {known}")


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
        self.kube_version = ""  # a dump's own word on its cluster's version (VERSION_ANNOTATION)
        self.objects = 0  # objects read so far, of every input (MAX_OBJECTS)

    def _count(self, where: str) -> None:
        """One more object read (or held for later), refused past MAX_OBJECTS: the time and
        memory the inputs take stay bounded however small their objects are."""
        self.objects += 1
        if self.objects > MAX_OBJECTS:
            raise InputError(f"{where}: the dumps hold more than {MAX_OBJECTS:,} objects, more than a cluster of "
                             "any size Kubernetes supports has; leave out what the commands do not read (events "
                             "over a long time, other kinds) or dump one cluster at a time")

    def add_document(self, doc: Any, where: str, doc_no: int) -> None:
        if doc is None:  # an empty YAML document (a stray `---`)
            return
        if isinstance(doc, _STREAMED):
            self._add_streamed(doc, where, doc_no)
            return
        if isinstance(doc, list):  # a bare array, as `jq .items` prints
            for i, item in enumerate(doc):
                self.add_array_item(item, where, doc_no, i)
            return
        kind = self._kind(doc, where, doc_no)
        if kind.endswith("List"):
            item_kind = self._list(doc, kind, where, doc_no)
            items = doc.get("items")
            raw = isinstance(items, RawItems)
            for i in range(len(items or ())):
                what = f"item {i} of the {kind}"
                item = _item_tree(items[i], item_kind, where, what) if raw else items[i]  # type: ignore[index]
                self._add_item(item, item_kind, where, what)
                items[i] = None  # free each object's JSON once decoded: memory follows the records
            return
        self._add(doc, kind, where, f"document {doc_no}")

    def _kind(self, doc: Any, where: str, doc_no: int) -> str:
        """The kind of a document, checked (with a List's items)."""
        if not isinstance(doc, Mapping) or not doc.get("kind") or not doc.get("apiVersion"):
            raise InputError(
                f"{where}: document {doc_no} is not a Kubernetes object (no kind/apiVersion); "
                "give what `kubectl get … -o json` or `-o yaml` prints"
            )
        kind = doc["kind"]
        for field, value in (("kind", kind), ("apiVersion", doc["apiVersion"])):
            if type(value) is not str or not value.isprintable():
                raise InputError(f"{where}: document {doc_no}: {field}: expected a string, got {shown(value)}; "
                                 "give what `kubectl get … -o json` or `-o yaml` prints")
        items = doc.get("items")
        if kind.endswith("List") and items is not None and not isinstance(items, list):
            raise InputError(f"{where}: document {doc_no}: the {kind}'s items: expected a list, got {shown(items)}; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        return kind

    def _list(self, doc: Mapping, kind: str, where: str, doc_no: int) -> str:
        """The kind of a List's items: typed lists (PodList) drop the items' kind, a plain
        `List` keeps it ("")."""
        item_kind = kind[: -len("List")]
        if item_kind:
            self.kinds.add(item_kind)  # `kubectl get pdb -o json` of none still listed them
        else:
            self._declared(doc, where, doc_no)
        return item_kind

    def _add_streamed(self, doc: StreamedList | yamlread.StreamedItems, where: str, doc_no: int) -> None:
        """A List read item by item (jsonstream.py, yamlread.py), whose kind may come after its
        items (kubectl writes `items` before `kind`). Items that carry their own kind are decoded
        as they come; from the first that does not, they wait for the List's kind. An item's
        error is raised once the List itself is known good, worded as for a List read whole."""
        head = doc.head if isinstance(doc.head, Mapping) else {}
        head_kind = head.get("kind")
        known = type(head_kind) is str and head_kind.endswith("List")
        guess = head_kind[: -len("List")] if known else ""
        waiting: list[tuple[int, Any]] = []  # items that wait for the List's kind
        failed: list[tuple[int, Any]] = []  # the first item that could not be read
        for i, raw in doc.items():
            if failed or waiting:
                self._count(where)
                if waiting:
                    waiting.append((i, _kept(raw)))
                continue
            what = f"item {i} of the {head_kind if known else 'List'}"
            try:
                item = _streamed_item(raw, guess, where, what)
                if not known and isinstance(item, Mapping) and not item.get("kind"):
                    self._count(where)
                    waiting.append((i, _kept(raw)))
                    continue
                self._add_item(item, guess, where, what)
            except InputError:
                if known:  # worded as it would be once the List is read: refused before the rest is
                    raise
                failed.append((i, _kept(raw)))
        shell = doc.shell()
        kind = self._kind(shell, where, doc_no)
        if not kind.endswith("List") or (known and kind != head_kind):
            raise InputError(f"{where}: document {doc_no} has items but is a {kind}, not one List; "
                             "give what `kubectl get … -o json` prints")
        item_kind = self._list(shell, kind, where, doc_no)
        for i, raw in failed + waiting:
            what = f"item {i} of the {kind}"
            self._add_item(_streamed_item(raw, item_kind, where, what), item_kind, where, what)
        if failed:  # pragma: no cover - the same item with the same kind fails the same way
            raise AssertionError(f"{where}: item {failed[0][0]} of document {doc_no} failed only once")

    def _declared(self, doc: Mapping, where: str, doc_no: int) -> None:
        """What `kubectl tspread dump` says of the List it wrote: the kinds it listed (listed empty
        is read, not missing) and the cluster's version."""
        try:
            annotations = mapping(mapping(doc.get("metadata"), "metadata").get("annotations"), "metadata.annotations")
            listed = annotations.get(KINDS_READ_ANNOTATION)
            if listed is not None:
                self.kinds.update(k for k in text(listed, f"metadata.annotations[{KINDS_READ_ANNOTATION}]").split(",") if k)
            version = annotations.get(VERSION_ANNOTATION)
            if version is not None:
                self.kube_version = text(version, f"metadata.annotations[{VERSION_ANNOTATION}]")
                if self.kube_version:  # its rules are chosen later, far from the file: checked here
                    versions.parse(self.kube_version)
        except FieldError as e:
            raise InputError(f"{where}: document {doc_no} (List): {e}") from None
        except versions.UnknownVersion as e:
            raise InputError(f"{where}: document {doc_no} (List): metadata.annotations[{VERSION_ANNOTATION}]: "
                             f"{e}; correct it, or remove it and pass --kube-version X.Y") from None

    def add_array_item(self, item: Any, where: str, doc_no: int, index: int) -> None:
        """One item of a bare array (as `jq .items` prints); from JSON, its raw bytes."""
        what = f"document {doc_no}, item {index}"
        if type(item) is _RAW:
            item = _item_tree(item, "", where, what)
        self._add_item(item, "", where, what)

    def _add_item(self, item: Any, default_kind: str, where: str, what: str) -> None:
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: {what} is not a Kubernetes object; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        kind = item.get("kind") or default_kind
        if not kind:
            raise InputError(f"{where}: {what} has no kind; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        if type(kind) is not str or not kind.isprintable():
            raise InputError(f"{where}: {what}: kind: expected a string, got {shown(kind)}; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        if not item.get("kind"):
            item = {**item, "kind": kind}
        elif default_kind and kind != default_kind:  # it would be read as what it says, not what was listed
            raise InputError(f"{where}: {what} has kind {shown(kind)}, not {default_kind}; "
                             "give what `kubectl get … -o json` or `-o yaml` prints")
        self._add(item, kind, where, what)

    def _add(self, obj: Mapping, kind: str, where: str, what: str) -> None:
        self._count(where)
        _refuse_unread(obj, kind, where, what)
        self.kinds.add(kind)
        entry = DECODERS.get(kind)
        if entry is None:
            self.ignored[kind] += 1
            return
        decoder, field = entry
        try:
            record = decoder(obj)
        except MalformedObject as e:
            raise InputError(f"{where}: cannot read {e.located(what)}: {e.detail}; "
                             "fix that field or leave the object out") from None
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
        if len(fields["nodes"]) > MAX_NODES:  # each answer walks every node, why-pending's per pod
            raise InputError(f"{source} holds {len(fields['nodes']):,} Nodes, more than any cluster has "
                             f"(Kubernetes supports 5,000, the largest managed clusters 65,000; read up to "
                             f"{MAX_NODES:,}); is it a dump of several clusters? Pass one cluster's")
        return Snapshot(**fields, namespace=_namespace(namespace, all_namespaces, self.pod_namespaces),
                        source=source, kinds_read=frozenset(self.kinds), kube_version=self.kube_version)


def _namespace(namespace: str | None, all_namespaces: bool, pod_namespaces: set[str]) -> str | None:
    if all_namespaces:
        return None
    if namespace:
        return namespace
    if len(pod_namespaces) == 1:
        return next(iter(pod_namespaces))
    return "default"


def _inputs(paths: Sequence[str], stdin: IO[str] | None) -> Iterator[tuple[str, "_Source"]]:
    """(label, the input to read) for every file the paths name, in order, each closed once
    the caller moves on."""
    for path in paths:
        if path == "-":
            yield "stdin", _stdin(stdin if stdin is not None else sys.stdin)
        elif os.path.isdir(path):
            try:
                names = os.listdir(path)
            except OSError as e:
                raise InputError(f"cannot list directory {path}: {e.strerror or e}; "
                                 "check its permissions or pass the files themselves") from None
            files = sorted(f for f in names if f.lower().endswith(DUMP_SUFFIXES) and not f.startswith("."))
            if not files:
                raise InputError(f"directory {path} has no .json, .yaml or .yml files; "
                                 "point --from-file at the dumps themselves")
            for f in files:
                full = os.path.join(path, f)
                if os.path.isfile(full):
                    with _open(full) as source:
                        yield full, source
        else:
            with _open(path) as source:
                yield path, source


class _Source:
    """One input, read a chunk at a time (`read(n)`, all of the rest with n < 0); a failing
    read is an InputError naming the input."""

    def __init__(self, label: str, stream: Any):
        self.label, self.stream = label, stream

    def read(self, n: int = -1) -> bytes:
        try:
            data = self.stream.read(n)
        except UnicodeDecodeError:  # a text stdin whose layer decodes (tests hand one over)
            raise InputError(f"{self.label} is not UTF-8 text; give what `kubectl get … -o json` prints") from None
        except OSError as e:
            fix = "" if self.label == "stdin" else "; check the path given to --from-file"
            raise InputError(f"cannot read {self.label}: {e.strerror or e}{fix}") from None
        return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data

    def readinto(self, buffer: Any) -> int:
        """read() into `buffer`, without a copy of the bytes from a binary stream."""
        into = getattr(self.stream, "readinto", None)
        if into is None:  # a text stream (tests hand a StringIO over as stdin)
            data = self.read(len(buffer))
            buffer[:len(data)] = data
            return len(data)
        try:
            return into(buffer)
        except OSError as e:
            fix = "" if self.label == "stdin" else "; check the path given to --from-file"
            raise InputError(f"cannot read {self.label}: {e.strerror or e}{fix}") from None

    def __enter__(self) -> "_Source":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stream.close()


def _open(path: str) -> _Source:
    """A regular file, open. Anything else is refused before it is read: a FIFO would block
    on open until a writer comes, a device such as /dev/zero never ends."""
    try:
        # O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(f"file not found: {path}; check the path given to --from-file") from None
    except PermissionError:
        raise InputError(f"cannot read {path}: permission denied; check the file's permissions") from None
    except IsADirectoryError:  # pragma: no cover - isdir is checked first; a race at most
        raise InputError(f"{path} is a directory that vanished while reading; retry") from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}; check the path given to --from-file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path} is {_file_type(mode)}, not a regular file; save the dump to a file "
                             "first (kubectl get … -o json > dump.json), or pipe it in with --from-file -")
        return _Source(path, os.fdopen(fd, "rb"))
    except BaseException:
        os.close(fd)
        raise


def _file_type(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return what
    return "a special file"


def _stdin(stream: Any) -> _Source:
    """stdin, read as bytes (its text layer would fail on the first non-UTF-8 byte, or decode
    with the locale's codec); a device such as /dev/zero is refused as for a path."""
    try:
        fileno = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a StringIO in tests, or a closed stream
        fileno = None
    if fileno is not None:
        try:
            mode = os.fstat(fileno).st_mode
        except OSError:
            mode = 0
        if (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)) and not os.isatty(fileno):
            raise InputError(f"stdin is {_file_type(mode)}, not a dump; pipe or redirect a dump file into it")
    raw = getattr(stream, "buffer", None)
    return _Source("stdin", raw if raw is not None else stream)


_BOM = b"\xef\xbb\xbf"


def _documents(label: str, source: _Source) -> Iterator[tuple[int, int | None, Any]]:
    """(document number, item index or None, value) for each document of the input — the
    items of a bare array, and of a List too long to hold whole, one by one — told JSON when
    it starts like JSON, else (multi-document) YAML."""
    first = source.read(jsonstream.CHUNK)
    if first.startswith(_UTF16_BOMS):  # what Windows PowerShell's `>` writes: kubectl reads it by its BOM
        source = _Source(label, _Utf16Stream(label, source, first))
        first = source.read(jsonstream.CHUNK)
    skip = len(_BOM) if first.startswith(_BOM) else 0  # the BOM Windows editors write
    if first[skip:skip + 4096].lstrip()[:1] in (b"{", b"["):  # a prefix: lstrip of it all would copy it all
        yield from _json_stream(label, source, first[skip:])
        return
    stream = _Utf8Stream(label, source, first[skip:])
    del first  # held by the stream until libyaml has read it
    yield from _yaml_documents(label, stream,
                               lambda e: InputError(f"{label} is neither JSON nor YAML: {e}; "
                                                    "give what `kubectl get … -o json` or `-o yaml` prints"))


def _json_stream(label: str, source: _Source, first: bytes) -> Iterator[tuple[int, int | None, Any]]:
    """JSON documents as jsonstream.JsonReader splits them, each held whole or item by item."""
    reader = jsonstream.JsonReader(label, source, first, lambda data: _shell(label, data))
    for part in reader.documents():
        if isinstance(part, jsonstream.Whole):
            try:
                doc = _parse_one(part.data)
            except (*_SHELL_ERRORS, UnicodeDecodeError):
                # what msgspec refuses but JSON allows (an escaped lone surrogate such as
                # \ud800 in a name, a number past 64 bits): the json module reads the rest
                rest = reader.rest(part.offset)
                yield from _json_rest(label, rest.data, part.doc_no - 1, rest.offset)
                return
            except _ItemsTwice:
                raise _items_twice_error(label, part.doc_no) from None
            if isinstance(doc, RawItems) and doc.bare:
                for i in range(len(doc)):
                    item, doc[i] = doc[i], None
                    yield part.doc_no, i, item
            else:
                yield part.doc_no, None, doc
            del doc
        elif isinstance(part, jsonstream.Items):
            doc_no = part.doc_no
            for index, raw in part.items:
                yield doc_no, index, _RAW(raw)
        elif isinstance(part, StreamedList):
            yield part.doc_no, None, part
        else:  # jsonstream.Rest: not an object or array (a scalar, YAML after JSON documents)
            yield from _json_rest(label, part.data, part.docs, part.offset)


def _json_rest(label: str, data: bytes, docs: int, base: int) -> Iterator[tuple[int, int | None, Any]]:
    """The input from byte `base` on (`data`), `docs` JSON documents having come before it,
    read whole: JSON documents one after another as msgspec or the json module read them, and
    when a document is not JSON, YAML from there on (the whole input when it is the first)."""
    try:
        jsonscan.check(data)
    except jsonscan.TooDeep as e:
        raise jsonscan.too_deep_error(label, base + e.offset) from None
    view = memoryview(data)
    try:
        yield from _json_documents(label, view, docs, base)
        return
    except _NotJson as e:
        json_error = e
    # `{a: 1}` is YAML flow style: only when YAML cannot read it either is the JSON error the one to show
    if json_error.docs:
        not_yaml = InputError(f"{label} is not valid JSON: document {json_error.docs + 1}: {json_error}; "
                              "give what `kubectl get … -o json` prints")
    else:
        not_yaml = InputError(f"{label} is neither JSON nor YAML: {json_error}; "
                              "give what `kubectl get … -o json` or `-o yaml` prints")
    rest = view[json_error.rest:]
    for doc_no, index, doc in _yaml_documents(label, _Utf8Stream(label, io.BytesIO(rest), b""), lambda e: not_yaml):
        yield doc_no + json_error.docs, index, doc


class _NotJson(Exception):
    """A JSON document does not parse: the message is its error and position; `rest`: where
    it starts when documents before it did parse (`docs` of them), else 0."""

    def __init__(self, message: str, rest: int = 0, docs: int = 0):
        super().__init__(message)
        self.rest, self.docs = rest, docs


_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


def _json_documents(label: str, view: memoryview, docs: int = 0, base: int = 0
                    ) -> Iterator[tuple[int, int | None, Any]]:
    """The JSON documents of `view` (input bytes from `base` on, after `docs` documents), one
    after another, each found by the byte offset msgspec reports where a document is followed
    by another. What msgspec refuses but JSON allows (an escaped lone surrogate such as
    \\ud800 in a name, a number past 64 bits) is read from there on by the json module. jsonscan has bounded the nesting of all of `view`."""
    pos, end, doc_no = 0, len(view), docs
    while True:
        while pos < end and view[pos] in _WHITESPACE:
            pos += 1
        if pos == end:
            return
        doc_no += 1
        try:
            doc, used = _one_json(view[pos:])
        except _Fallback:
            yield from _json_text_documents(label, view, pos, doc_no, base)
            return
        except _ItemsTwice:
            raise _items_twice_error(label, doc_no) from None
        if isinstance(doc, RawItems) and doc.bare:
            for i in range(len(doc)):
                item, doc[i] = doc[i], None
                yield doc_no, i, item
        else:
            yield doc_no, None, doc
        del doc
        pos += used


_WHITESPACE = frozenset(b" \t\r\n")


class _Fallback(Exception):
    """msgspec cannot read this document: the json module reads the rest."""


class _ItemsTwice(Exception):
    """A JSON List names its `items` twice (_items_twice)."""


_ITEMS_NAME = re.compile(rb'"items"')


def _items_twice(data: Any) -> bool:
    """Whether the JSON object `data` (bytes or text) has the key `items` twice. Parsers
    differ on such a document: the json module and msgspec keep the last array, a List read
    item by item would have kept the first, and YAML both; so it is refused, in every form,
    as kubectl's strict field validation refuses a duplicate field. Only text naming `items`
    twice anywhere is parsed again, keys and all."""
    found = _ITEMS_NAME.finditer(data) if not isinstance(data, str) else re.finditer('"items"', data)
    if next(found, None) is None or next(found, None) is None:
        return False
    closed: list[bool] = []  # per object as it closes: the document's own closes last

    def pairs(items: list) -> None:
        closed.append(sum(1 for k, _ in items if k == "items") > 1)

    try:
        json.loads(data if isinstance(data, str) else bytes(data), object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # the document's own reading names what is wrong
        return False
    return bool(closed) and closed[-1]


def _items_twice_error(label: str, doc_no: int | None) -> InputError:
    which = f"document {doc_no}" if doc_no is not None else "a List"
    return InputError(f"{label}: {which} {yamlread.ITEMS_TWICE}")


def _one_json(buf: memoryview) -> tuple[Any, int]:
    """(the first JSON document of `buf`, the bytes it takes). A List comes split into its
    items' raw bytes (_parse_one), a bare array too (RawItems with `bare`), anything else as
    a tree. _Fallback when msgspec cannot read it."""
    used = len(buf)
    try:
        return _parse_one(buf), used
    except (*_SHELL_ERRORS, UnicodeDecodeError) as e:
        found = _TRAILING.search(str(e))
        if found is None:  # not JSON, or what msgspec refuses but JSON allows
            raise _Fallback from None
        used = int(found.group(1)) - 1  # msgspec counts from 1: the next document starts there
    try:
        return _parse_one(buf[:used]), used
    except (*_SHELL_ERRORS, UnicodeDecodeError):
        raise _Fallback from None


def _parse_one(buf: memoryview) -> Any:
    """One JSON document (msgspec's errors pass through: the caller reads the offset of a
    trailing document from them)."""
    if buf[_first(buf)] == ord("["):
        return RawItems(_ARRAY_DECODER.decode(buf), bare=True)
    try:
        shell = _SHELL_DECODER.decode(buf)
    except msgspec.ValidationError:  # a kind that is not a string, items that are not a list
        shell = None
    if shell is not None and shell.kind.endswith("List") and shell.items is not None:
        if _items_twice(buf):
            raise _ItemsTwice
        return {"kind": shell.kind, "apiVersion": shell.apiVersion, "metadata": shell.metadata,
                "items": RawItems(shell.items)}
    return _ITEM_DECODER.decode(buf)


def _first(buf: memoryview) -> int:
    i = 0
    while buf[i] in _WHITESPACE:
        i += 1
    return i


def _json_text_documents(label: str, view: memoryview, pos: int, doc_no: int, base: int = 0
                         ) -> Iterator[tuple[int, int | None, Any]]:
    """The documents from byte `pos` of `view` on, numbered from `doc_no`, read by the json
    module from the text decoded once; `base`: where `view` starts in the input."""
    try:
        text = bytes(view[pos:]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{label} is not UTF-8 text (byte {base + pos + e.start}); "
                         "give what `kubectl get … -o json` prints") from None
    decoder, at, end = json.JSONDecoder(parse_int=json_int), 0, len(text)
    while True:
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at == end:
            return
        start_at = at
        try:
            doc, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as e:
            # the byte where the failing document starts: YAML may read the rest (`---`)
            start = pos + len(text[:at].encode("utf-8", "surrogatepass"))
            raise _NotJson(_json_position(e), start, doc_no - 1) if doc_no > 1 else _NotJson(_json_position(e))
        except HugeNumber as e:
            raise InputError(f"{label}: document {doc_no} {e}") from None
        if isinstance(doc, dict) and "items" in doc and _items_twice(text[start_at:at]):
            raise _items_twice_error(label, doc_no)
        yield doc_no, None, doc
        del doc
        doc_no += 1


def _yaml_documents(label: str, stream: "_Utf8Stream", not_yaml: Callable[[str], InputError]
                    ) -> Iterator[tuple[int, int | None, Any]]:
    """The YAML documents of `stream`, a List's items one at a time (yamlread.StreamedItems);
    `not_yaml(position)` is the error for text libyaml cannot parse."""
    def errors(parts: Iterator[Any]) -> Iterator[Any]:  # around the parse, wherever it is driven
        try:
            yield from parts
        except yaml.YAMLError as e:
            if "maximum nesting depth" in str(getattr(e, "problem", "")):
                # libyaml's own bound (1000), reached first when its scanner looks ahead along a
                # flow collection (`[[[…`): past ours too
                raise InputError(f"{label}: {_yaml_position(e)}: YAML nested deeper than {MAX_DEPTH} levels; "
                                 "a Kubernetes object is never that deep") from None
            raise not_yaml(_yaml_position(e)) from None
        except YamlLimit as e:
            raise InputError(f"{label}: {e}") from None

    yield from yamlread.documents(stream, lists=True, wrap=errors)


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class _Utf16Stream:
    """A UTF-16 input with its BOM (`first`, then the rest of `source`) read as UTF-8 bytes, a
    chunk at a time: kubectl's file reader decodes by the BOM, so a dump redirected by Windows
    PowerShell (UTF-16) reads there, and is no "not UTF-8" here."""

    def __init__(self, label: str, source: Any, first: bytes):
        self.label, self.source, self.first = label, source, first
        self.decoder = codecs.getincrementaldecoder("utf-16")()  # the BOM says which byte order
        self.pos = 0  # input bytes decoded so far
        self.out = b""  # decoded bytes not handed over yet: UTF-8 may be longer than the UTF-16 read

    def read(self, n: int = -1) -> bytes:
        """At most `n` bytes of UTF-8 (all of the rest with n < 0), b"" only at the end."""
        if n < 0:
            out, self.out = self.out + self._decoded(-1), b""
            return out
        while not self.out:
            self.out = self._decoded(n)
            if not self.out:
                return b""
        out, self.out = self.out[:n], self.out[n:]
        return out

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _decoded(self, n: int) -> bytes:
        """The next UTF-8 bytes from about `n` input bytes; b"" only at the end of the input."""
        while True:
            if self.first:
                data, self.first = self.first, b""
                if n < 0:  # all of the rest
                    data += self.source.read(-1)
            else:
                data = self.source.read(n)
            try:
                text = self.decoder.decode(data, final=not data or n < 0)
            except UnicodeDecodeError as e:
                raise InputError(f"{self.label} starts as UTF-16 but is not (byte {self.pos + e.start}); "
                                 "give what `kubectl get … -o json` prints, as UTF-8 or UTF-16") from None
            self.pos += len(data)
            if text or not data:  # an empty answer only at the end (a chunk may end mid-character)
                return text.encode("utf-8")


class _Utf8Stream:
    """An input for libyaml, `first` and then the rest of `source`, checked to be UTF-8 as it
    is read: libyaml would read a UTF-16 file by its BOM, and say little about a bad byte."""

    def __init__(self, label: str, source: Any, first: bytes):
        self.label, self.source, self.first = label, source, first
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.pos = 0  # input bytes checked so far

    def read(self, n: int = -1) -> bytes:
        if self.first:
            data, self.first = self.first, b""
        else:
            data = self.source.read(max(n, _YAML_READ))
        try:
            self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:  # passes through libyaml as raised
            raise InputError(f"{self.label} is not UTF-8 text (byte {self.pos + e.start}); "
                             "give what `kubectl get … -o json` prints") from None
        self.pos += len(data)
        return data


_YAML_READ = 1 << 20  # bytes read at a time for libyaml (it asks for less, each ask a call into Python)


class RawItems(list):
    """A List's items as raw JSON bytes, each parsed only when the collector reaches it;
    `bare`: the items of a top-level array rather than of a List."""

    def __init__(self, items: Iterable[Any] = (), bare: bool = False):
        super().__init__(items)
        self.bare = bare


def _item_tree(raw: Any, list_kind: str, where: str = "", what: str = "an item", whole: bool = False) -> Any:
    """One item of RawItems as a JSON tree (the shell's decode already checked its syntax): a
    pod's with only the fields the pod decoder reads (wire.py, as for the live path's pages:
    the bulk of a dump, mostly managedFields and container specs the decoder skips), any
    other object's whole; with `whole`, every object whole (what `dump` writes again)."""
    try:
        pod = None if whole else decode_pod_item(raw, list_kind)
        return pod if pod is not None else _ITEM_DECODER.decode(raw)
    except UnicodeDecodeError:
        raise InputError(f"{where}: {what} is not UTF-8 text; give what `kubectl get … -o json` prints") from None
    except _SHELL_ERRORS:  # what msgspec refuses but JSON allows (a lone surrogate, a huge number)
        try:
            return json.loads(bytes(raw), parse_int=json_int)
        except json.JSONDecodeError as e:  # an item of a List read item by item (jsonstream.py)
            raise InputError(f"{where} is not valid JSON: {what}: {_json_position(e)}; "
                             "give what `kubectl get … -o json` prints") from None
        except HugeNumber as e:
            raise InputError(f"{where}: {what} {e}") from None
        except UnicodeDecodeError:
            raise InputError(f"{where}: {what} is not UTF-8 text; give what `kubectl get … -o json` prints") \
                from None


_STREAMED = (StreamedList, yamlread.StreamedItems)


def _streamed_item(raw: Any, list_kind: str, where: str, what: str, whole: bool = False) -> Any:
    """An item of a List read item by item: from JSON its raw bytes, decoded here; from YAML
    already built."""
    return _item_tree(raw, list_kind, where, what, whole) if isinstance(raw, (bytes, memoryview)) else raw


def _kept(raw: Any) -> Any:
    """An item held until its List's kind is read: JSON's bytes copied out of the read buffer."""
    return bytes(raw) if isinstance(raw, memoryview) else raw


def _shell(label: str, data: bytes) -> Any:
    """A List read item by item, without its items (jsonstream.StreamedList)."""
    if _items_twice(data):  # a second `items` after the streamed one, in what follows it
        raise _items_twice_error(label, None)
    try:
        return _ITEM_DECODER.decode(data)
    except _SHELL_ERRORS:
        pass
    except UnicodeDecodeError:
        raise InputError(f"{label} is not UTF-8 text; give what `kubectl get … -o json` prints") from None
    try:
        return json.loads(data, parse_int=json_int)
    except HugeNumber as e:
        raise InputError(f"{label}: its List without its items {e}") from None
    except UnicodeDecodeError:
        raise InputError(f"{label} is not UTF-8 text; give what `kubectl get … -o json` prints") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{label} is not valid JSON: {_json_position(e)} of its List without its items; "
                         "give what `kubectl get … -o json` prints") from None


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
