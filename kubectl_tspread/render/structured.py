"""Versioned view-models for -o json|yaml. Public API: change only additively.

Built from the domain reports, never from internal dataclasses directly, so internals can
move without breaking scripts that parse our output.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

API_VERSION = "tspread/v1alpha1"
# CPython 3.11 hands a write larger than its buffer to the OS in one call, Linux moves at most
# 2,147,479,552 bytes per write, and the rest is dropped without an error: why-pending -A as JSON
# on 1,000 pending pods × 5,000 nodes came out cut there, with exit 0. `pieces` hands text over in
# pieces of at most PIECE characters (64 MiB of UTF-8 at most).
PIECE = 1 << 24


def selector_view(selector) -> str | None:
    """kubectl syntax; null for a nil selector (which selects nothing)."""
    return None if selector.is_nothing else str(selector)


def camel_keys(params: Mapping[str, Any]) -> dict[str, Any]:
    """Details dicts use camelCase keys like the rest of the document (`max_skew` -> `maxSkew`).
    The values are copies: two pods' or workloads' details that share an object (one template's
    requests) would make YAML write an anchor in one item of a Stream and an alias in another,
    which a document written item by item cannot do."""
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): copy.deepcopy(v) for k, v in params.items()}


def constraint_view(cs, uncounted: Sequence = (), traps: Sequence = (), trap_text=None) -> dict[str, Any]:
    """One constraint as DistributionReport (and PendingReport) print it."""
    c = cs.constraint
    return {
        "topologyKey": c.topology_key,
        "maxSkew": c.max_skew,
        "whenUnsatisfiable": c.when_unsatisfiable,
        "minDomains": c.min_domains,
        "nodeAffinityPolicy": c.node_affinity_policy,
        "nodeTaintsPolicy": c.node_taints_policy,
        "matchLabelKeys": list(c.match_label_keys),
        "selector": selector_view(cs.selector),
        "implicit": c.implicit,
        "domains": [
            {"value": d.value, "pods": d.pods, "nodes": len(d.nodes), "headroom": cs.headroom(d.value)}
            for d in cs.domains.values()
        ],
        "globalMin": cs.global_min,
        "globalMinForcedToZero": cs.min_forced_zero,
        "selfMatch": cs.self_match,
        "skew": cs.skew,
        "status": cs.status,
        "excludedNodes": [{"name": e.name, "reason": e.reason} for e in cs.excluded_nodes],
        "uncountedPods": [{"namespace": u.namespace, "name": u.name, "reason": u.reason} for u in uncounted],
        "traps": [{"code": t.code, "message": trap_text(t) if trap_text else t.code, "details": camel_keys(t.params)}
                  for t in traps],
    }


def warnings_view(missing: Sequence[str]) -> list[dict[str, Any]]:
    """`warnings` of every document: [{code: MissingKinds, kinds, message}] when the input lacked
    kinds the answer depends on (inputs.missing_kinds), else []."""
    from kubectl_tspread.views.inputs import MISSING_KINDS
    from kubectl_tspread.render.text import missing_kinds_message

    if not missing:
        return []
    return [{"code": MISSING_KINDS, "kinds": list(missing), "message": missing_kinds_message(missing)}]


def distribution_view(report, missing: Sequence[str] = ()) -> dict[str, Any]:
    """The DistributionReport document. Its workloads are a Stream: `pieces` makes each one's view
    as it is written (so memory holds one workload's view and text at a time, not a big
    cluster's every workload), `dump` makes them a list. `missing`: kinds the input lacked
    (`warnings`)."""
    from kubectl_tspread.render.text import trap_message

    return {"apiVersion": API_VERSION, "kind": "DistributionReport",
            "workloads": Stream(lambda: (_workload_view(w, trap_message) for w in report.workloads)),
            "warnings": warnings_view(missing)}


def _workload_view(w, trap_message) -> dict[str, Any]:
    item: dict[str, Any] = {
        "kind": w.kind, "namespace": w.namespace, "name": w.name, "pods": w.pods,
        "incomingPod": w.incoming.name,
        "constraintSet": w.constraint_set, "constraintSets": w.constraint_sets,
        "constraints": [_distribution_constraint(c, trap_message) for c in w.constraints],
        "pending": w.pending, "running": w.running,
    }
    if w.timeline is not None:
        from kubectl_tspread.render.text import TIMELINE_NOTE, replay_gap_text

        item["timeline"] = [
            {"pod": r.pod, "created": r.created, "node": r.node or None, "domains": r.domains,
             "counts": r.counts, "skew": r.skew, "overMaxSkew": r.over,
             "schedulerPlacement": r.replay_gap is None,
             "replayGap": None if r.replay_gap is None else {
                 "code": r.replay_gap.code, "topologyKeys": list(r.replay_gap.keys),
                 "domains": list(r.replay_gap.domains), "message": replay_gap_text(r.replay_gap)}}
            for r in w.timeline
        ]
        item["timelineNote"] = TIMELINE_NOTE.format(n=len(w.timeline))
    return item


def _distribution_constraint(c, trap_message) -> dict[str, Any]:
    """constraint_view plus what distribution knows: each domain's acceptsNow (0 when cordons or
    untolerated taints keep every node of it from taking a pod now; headroom stays spread's own)
    and why (`state`: cordoned | tainted | null); `status` NO DOMAINS when no node makes a domain."""
    doc = constraint_view(c.state, c.uncounted, c.traps, trap_message)
    for d in doc["domains"]:
        a = c.accepts_now(d["value"])
        d["acceptsNow"] = a.accepts_now
        d["state"] = a.state
    doc["status"] = c.status
    return doc


class Stream:
    """A list of a document made one item at a time as it is written (`pieces`): a whole
    zone's drain plan at 150,000 pods has thousands of steps, and their views held at once,
    with the encoded text, would grow memory with the whole plan. `dump` makes it a list."""

    def __init__(self, make: Callable[[], Iterable[Any]]):
        self._make = make

    def __iter__(self) -> Iterator[Any]:
        return iter(self._make())


def pieces(doc: dict[str, Any], fmt: str) -> Iterator[str]:
    """`dump(doc, fmt)`, the same text, in pieces none longer than PIECE characters, for the
    command to write as they come: each item of a top-level Stream is made and encoded when the
    piece before it has been taken."""
    whole = not any(isinstance(v, Stream) for v in doc.values())
    parts = iter((dump(doc, fmt),)) if whole else _json_pieces(doc) if fmt == "json" else _yaml_pieces(doc)
    for text in parts:
        for start in range(0, len(text), PIECE):
            yield text[start:start + PIECE]


def _json_pieces(doc: dict[str, Any]) -> Iterator[str]:
    # a piece encoded on its own is the same text as inside the whole, its lines indented by
    # its depth (JSON strings hold no raw newline)
    enc = _json_text
    yield "{"
    for i, (key, value) in enumerate(doc.items()):
        yield ("," if i else "") + "\n  " + enc(key) + ": "
        if not isinstance(value, Stream):
            yield enc(value).replace("\n", "\n  ")
            continue
        empty = True
        for item in value:
            yield ("[" if empty else ",") + "\n    " + enc(item).replace("\n", "\n    ")
            empty = False
        yield "[]" if empty else "\n  ]"
    yield "\n}\n"


def _yaml_pieces(doc: dict[str, Any]) -> Iterator[str]:
    # the keys between streams are dumped together, so their anchors and aliases (a stranded
    # pod's details share objects) come out as in the whole document; a stream's items share
    # nothing, and a top-level sequence under a key is not indented
    run: dict[str, Any] = {}
    for key, value in doc.items():
        if not isinstance(value, Stream):
            run[key] = value
            continue
        if run:
            yield _yaml_text(run)
            run = {}
        empty = True
        for item in value:
            yield (f"{key}:\n" if empty else "") + _yaml_text([item])
            empty = False
        if empty:
            yield _yaml_text({key: []})
    if run:
        yield _yaml_text(run)


def _json_text(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:  # a lone surrogate in a name, an integer past 64 bits
        return _stdlib_json_text(value)


def _stdlib_json_text(value: Any) -> str:
    """The same JSON from the json module, which takes any str and int; a lone surrogate
    (\\ud800, as a JSON dump may spell a name) comes out as that escape again, valid JSON."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _yaml_text(value: Any) -> str:
    try:
        return _yaml_writer()(value)
    except UnicodeEncodeError:  # libyaml's emitter takes no lone surrogate (\\ud800 in a JSON dump's name)
        import yaml

        # PyYAML's own emitter writes one double-quoted, as the escape \\uD800: valid YAML
        return yaml.dump(value, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True)


@functools.cache
def _yaml_writer() -> Callable[[Any], str]:
    """PyYAML's block YAML; with its C dumper (PyYAML's wheels have it) the same text is
    written by render/yamltext.py, which spares most values PyYAML's node objects and
    resolver calls."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", None)

    def pyyaml(value: Any) -> str:
        return yaml.dump(value, Dumper=dumper or yaml.SafeDumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True)

    if dumper is None:
        return pyyaml
    from kubectl_tspread.render import yamltext

    return yamltext.dumper(pyyaml)


def dump(doc: dict[str, Any], fmt: str) -> str:
    """JSON with a two-space indent (orjson: the json module's indenting encoder is pure
    Python, too slow for a why-pending -A report of a big cluster); YAML from the same dict,
    keys in schema order."""
    doc = listed(doc)
    return _json_text(doc) + "\n" if fmt == "json" else _yaml_text(doc)


def listed(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with each top-level Stream made a list: the whole document as `dump` encodes it."""
    return {k: list(v) if isinstance(v, Stream) else v for k, v in doc.items()}
