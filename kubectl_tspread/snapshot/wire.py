"""Typed partial parsing of PodList pages: only the fields the pod decoder reads are built.

A 150k-pod cluster arrives as ~750 MB of JSON, most of it fields no scheduler filter
reads (managedFields, container images, env, probes, securityContext, …). Parsing a
page into dicts builds all of it and the decoder then throws it away; msgspec, given
the shape below, skips unknown fields inside its C parser, about 4 × faster than a
full parse of the same page. The objects it returns answer `get`, `[]` and `in` like
the dicts they stand for (a field the page did not send is absent, a JSON null is
None), so `decode.pod` reads them unchanged, and the records are the same as from a
full parse (tests/test_wire.py checks that field by field).

Sub-trees that decode.py memoises by their JSON bytes (affinity, tolerations, spread
constraints, volumes, container resources and ports) stay plain dicts and lists.

Anything msgspec cannot match to this shape (a field of an unexpected type, a page
that is not a PodList) makes `decode_pod_page` return None, and the caller parses the
page the ordinary way: odd input costs speed, never correctness. Without msgspec (the
krew archive runs without compiled extensions) this module is a no-op.
"""

from __future__ import annotations

from typing import Any

try:
    import msgspec
    from msgspec import UNSET, UnsetType
except ImportError:  # pragma: no cover - depends on the environment
    msgspec = None  # type: ignore[assignment]

_ERRORS: tuple[type[Exception], ...] = ()

if msgspec is not None:
    _ERRORS = (msgspec.DecodeError, msgspec.ValidationError)

    class _Obj(msgspec.Struct):
        """A JSON object of which only the declared fields were parsed."""

        def get(self, key: str, default: Any = None) -> Any:
            value = getattr(self, key, UNSET)
            return default if value is UNSET else value

        def __getitem__(self, key: str) -> Any:
            value = getattr(self, key, UNSET)
            if value is UNSET:
                raise KeyError(key)
            return value

        def __contains__(self, key: str) -> bool:
            return getattr(self, key, UNSET) is not UNSET

    class _Meta(_Obj):
        name: Any | UnsetType = UNSET
        namespace: Any | UnsetType = UNSET
        uid: Any | UnsetType = UNSET
        labels: dict[str, Any] | None | UnsetType = UNSET
        annotations: dict[str, Any] | None | UnsetType = UNSET
        ownerReferences: list[dict[str, Any]] | None | UnsetType = UNSET
        deletionTimestamp: Any | UnsetType = UNSET
        creationTimestamp: Any | UnsetType = UNSET

    class _Container(_Obj):
        resources: dict[str, Any] | None | UnsetType = UNSET
        ports: list[dict[str, Any]] | None | UnsetType = UNSET
        restartPolicy: Any | UnsetType = UNSET

    class _Spec(_Obj):
        nodeName: Any | UnsetType = UNSET
        containers: list[_Container] | None | UnsetType = UNSET
        initContainers: list[_Container] | None | UnsetType = UNSET
        overhead: dict[str, Any] | None | UnsetType = UNSET
        affinity: dict[str, Any] | None | UnsetType = UNSET
        topologySpreadConstraints: list[dict[str, Any]] | None | UnsetType = UNSET
        nodeSelector: dict[str, Any] | None | UnsetType = UNSET
        tolerations: list[dict[str, Any]] | None | UnsetType = UNSET
        volumes: list[dict[str, Any]] | None | UnsetType = UNSET
        schedulerName: Any | UnsetType = UNSET
        priority: Any | UnsetType = UNSET

    class _Status(_Obj):
        phase: Any | UnsetType = UNSET
        conditions: list[dict[str, Any]] | None | UnsetType = UNSET
        nominatedNodeName: Any | UnsetType = UNSET

    class _Pod(_Obj):
        metadata: _Meta | None | UnsetType = UNSET
        spec: _Spec | None | UnsetType = UNSET
        status: _Status | None | UnsetType = UNSET

    class _ListMeta(_Obj):
        # named "continue" in JSON, a keyword in Python
        continue_: Any | UnsetType = msgspec.field(default=UNSET, name="continue")

        def get(self, key: str, default: Any = None) -> Any:
            return _Obj.get(self, "continue_" if key == "continue" else key, default)

    class _PodList(_Obj):
        kind: Any | UnsetType = UNSET
        items: list[_Pod] | None | UnsetType = UNSET
        metadata: _ListMeta | None | UnsetType = UNSET

    _DECODER: Any = msgspec.json.Decoder(_PodList)


def decode_pod_page(data: bytes) -> tuple[list[Any], str | None] | None:
    """(the page's pods as dict-like objects, its continue token), or None to parse it the ordinary way."""
    if msgspec is None:
        return None
    try:
        page = _DECODER.decode(data)
    except _ERRORS:
        return None
    if page.kind not in (UNSET, "PodList", None):
        return None  # e.g. a Status object: the ordinary path words the error
    items = page.items if isinstance(page.items, list) else []
    meta = page.metadata if isinstance(page.metadata, _ListMeta) else None
    token = meta.get("continue") if meta is not None else None
    return items, token or None
