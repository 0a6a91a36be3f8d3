"""Typed partial parsing of PodList pages (and of the pods of a dump's List): only the fields
the pod decoder reads are built.

A 150k-pod cluster arrives as ~750 MB of JSON, most of it fields no scheduler filter
reads (managedFields, container images, env, probes, securityContext, …). Parsing a
page into dicts builds all of it and the decoder then throws it away; msgspec, given
the shape below (TypedDicts), skips unknown keys inside its C parser without building
them. What it returns are plain dicts holding only the declared keys (a key the page
did not send is absent, a JSON null is None), but for the labels, the ownerReferences
and the spec's template-like sub-trees (containers, affinity, spread constraints,
tolerations, …): those are left as their JSON text (msgspec.Raw), which
`decode.pod` keys its memos on and parses once per distinct text, since a workload's pods
repeat it byte for byte. The records are the same as from a full parse (tests/test_wire.py
and tests/test_decode_perf_equiv.py check that field by field).

Anything msgspec cannot match to this shape (a field of an unexpected type, a page
that is not a PodList, nesting past Python's recursion limit) makes `decode_pod_page`
return None, and the caller parses the page the ordinary way: odd input costs speed, never
correctness. A live pod page is not walked for its nesting first (snapshot/live.py): msgspec
skips unknown fields unbuilt and stops at the recursion limit itself, so the walk would only
bound values the decoder never builds, or reads as scalars and named sub-trees.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional, TypedDict

import msgspec

_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError, msgspec.ValidationError)

# total=False: a key the page does not send stays absent, and JSON null stays None,
# exactly as in a fully parsed dict
class _Meta(TypedDict, total=False):
    name: Any
    namespace: Any
    uid: Any
    labels: msgspec.Raw  # JSON text, as the spec's template sub-trees below
    annotations: Optional[dict[str, Any]]
    ownerReferences: msgspec.Raw
    deletionTimestamp: Any
    creationTimestamp: Any
    resourceVersion: Optional[str]  # not read; typed so that a pod of another goes the ordinary way (live.py)

class _Claim(TypedDict, total=False):
    claimName: Any

class _ImageSource(TypedDict, total=False):
    reference: Any

class _Volume(TypedDict, total=False):  # a volume's source is read only for these three kinds
    name: Any
    persistentVolumeClaim: Optional[_Claim]
    emptyDir: Any
    image: Optional[_ImageSource]

class _Spec(TypedDict, total=False):
    nodeName: Any
    # what the decoder's memos are keyed on (decode._template_of_text): left as the JSON
    # text, parsed only for the first pod of each template
    containers: msgspec.Raw
    initContainers: msgspec.Raw
    overhead: msgspec.Raw
    resources: msgspec.Raw  # pod-level requests (PodLevelResources)
    affinity: msgspec.Raw
    topologySpreadConstraints: msgspec.Raw
    nodeSelector: msgspec.Raw
    tolerations: msgspec.Raw
    volumes: Optional[list[_Volume]]
    schedulerName: Any
    priority: Any
    hostNetwork: Any  # with hostUsers: a node-declared feature (decode._spec_features)
    hostUsers: Any

class _Condition(TypedDict, total=False):  # lastProbeTime is not read
    type: Any
    status: Any
    reason: Any
    message: Any
    lastTransitionTime: Any

class _ContainerStatus(TypedDict, total=False):  # only what in-place resize reads
    name: Any
    # JSON text, compared with the spec's as sent (decode._as_spec): a running pod's
    # status repeats its spec, and building these maps for every pod would cost more than that
    allocatedResources: msgspec.Raw
    resources: msgspec.Raw

class _Status(TypedDict, total=False):
    phase: Any
    conditions: Optional[list[_Condition]]
    nominatedNodeName: Any
    # in-place resize (decode._resize): the resources the kubelet reports, as JSON text
    containerStatuses: Optional[list[_ContainerStatus]]
    initContainerStatuses: Optional[list[_ContainerStatus]]
    allocatedResources: msgspec.Raw
    resources: msgspec.Raw

class _Pod(TypedDict, total=False):
    kind: Any  # list items carry none; one that does must say Pod (decode.from_server)
    metadata: Optional[_Meta]
    spec: Optional[_Spec]
    status: Optional[_Status]

# a keyword: functional form. resourceVersion and remainingItemCount are not read, but typed as
# the API's ListMeta has them: a page where they are of another type goes the ordinary way, where
# live.py refuses it for pods as for every other kind (a 400-digit resourceVersion included)
_Int64 = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
_ListMeta = TypedDict("_ListMeta", {"continue": Any, "resourceVersion": Optional[str],
                                    "remainingItemCount": Optional[_Int64]}, total=False)

class _PodList(TypedDict, total=False):
    kind: Any
    items: Optional[list[_Pod]]
    metadata: Optional[_ListMeta]

_DECODER: Any = msgspec.json.Decoder(_PodList)

class _PodItem(_Pod, total=False):  # an item of a dump's List, which names its kind
    apiVersion: Any

_POD_ITEM_DECODER: Any = msgspec.json.Decoder(_PodItem)


def decode_pod_page(data: bytes) -> tuple[list[Any], str | None] | None:
    """(the page's pods as dict-like objects, its continue token), or None to parse it the ordinary way."""
    try:
        page = _DECODER.decode(data)
    except (*_ERRORS, UnicodeDecodeError):  # msgspec checks UTF-8 in the strings it makes
        return None
    except RecursionError:  # msgspec's own bound on nesting: the ordinary path's walk words it
        return None
    if page.get("kind") not in (None, "PodList"):
        return None  # e.g. a Status object: the ordinary path words the error
    # the token as sent: the caller names one that is no string (false or 0 is not "no more pages")
    token = (page.get("metadata") or {}).get("continue")
    return page.get("items") or [], token


def decode_pod_item(data: bytes, list_kind: str = "") -> dict[str, Any] | None:
    """One item of a List in a dump (`kubectl get … -o json`), parsed to the fields the pod
    decoder reads when it is a pod: its own `kind`, or `list_kind` for the kind-less items of
    a PodList. None for any other kind and for what does not fit the shape: the caller parses
    those in full (the items of a typed list of another kind, a NodeList's, without a try)."""
    if list_kind not in ("", "Pod"):
        return None
    try:
        item = _POD_ITEM_DECODER.decode(data)
    except _ERRORS:
        return None
    return item if (item.get("kind") or list_kind) == "Pod" else None
