"""`kubectl tspread dump`: the raw objects of every kind the commands read, as one v1 List.

Same sources as every command (live API, --from-file, --demo) and the same -n/-A scope;
only the kinds in kinds.DUMP_KINDS are kept (a Namespace or ConfigMap in a dump is
left out), finished pods too (the live path never lists them), and `managedFields`
is dropped as `kubectl get` does. The List reads back through --from-file unchanged; its
annotations say which kinds were listed (resources.KINDS_READ_ANNOTATION: a kind listed
empty, such as a cluster without PodDisruptionBudgets, is then not "missing") and the
cluster's version (resources.VERSION_ANNOTATION: whose scheduler rules apply).
"""

from __future__ import annotations

from typing import Any, Iterable

from kubectl_tspread.snapshot.kinds import DUMP_KINDS, KINDS_READ_ANNOTATION, RESOURCES, VERSION_ANNOTATION

_FINISHED = ("Succeeded", "Failed")


def _keep(obj: dict, namespace: str | None) -> bool:
    kind = obj.get("kind")
    if kind not in RESOURCES:
        return False
    if kind == "Pod" and (obj.get("status") or {}).get("phase") in _FINISHED:
        return False
    if namespace is None or not RESOURCES[kind].namespaced:
        return True
    return (obj.get("metadata") or {}).get("namespace", "default") == namespace


def _clean(obj: dict) -> dict:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


def _ordered(objs: Iterable[dict]) -> list[dict]:
    """Kinds in DUMP_KINDS order, each kind's objects by namespace and name."""
    rank = {k: i for i, k in enumerate(DUMP_KINDS)}

    def key(o: dict) -> tuple:
        meta = o.get("metadata") or {}
        return rank[o["kind"]], meta.get("namespace", ""), meta.get("name", "")

    return sorted(objs, key=key)


def dump_objects(source) -> tuple[dict[str, Any], list[str]]:
    """(the v1 List, warnings about kinds that could not be read)."""
    warnings: list[str] = []
    if source.demo and source.from_file:
        from kubectl_tspread.model.errors import UsageError

        raise UsageError("--demo and --from-file cannot be used together; pick one source")
    if source.demo:
        from kubectl_tspread.snapshot.demo import DEMO_NAMESPACE, _raw

        scope = None if source.all_namespaces else (source.namespace or DEMO_NAMESPACE)
        objs = [o for o in _raw()["items"] if _keep(o, scope)]
        listed, version = set(DUMP_KINDS), ""
    elif source.from_file:
        from kubectl_tspread.snapshot.files import raw_objects

        scope = None if source.all_namespaces else source.namespace
        seen: dict[tuple, dict] = {}
        for o in raw_objects(list(source.from_file)):
            if _keep(o, scope):  # a later copy of an object wins, as --from-file reads it
                meta = o.get("metadata") or {}
                seen[(o["kind"], meta.get("namespace", ""), meta.get("name", ""), len(seen) if o["kind"] == "Event" else 0)] = o
        objs = list(seen.values())
        # only the kinds the files show: a file cannot say it listed a kind that held nothing
        listed, version = {o["kind"] for o in objs}, ""
    else:
        objs, listed, version = _live(source, warnings)
    items = [_clean(o) for o in _ordered(objs)]
    annotations = {KINDS_READ_ANNOTATION: ",".join(k for k in DUMP_KINDS if k in listed)}
    version = source.kube_version or version
    if version:
        annotations[VERSION_ANNOTATION] = version
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "", "annotations": annotations},
            "items": items}, warnings


def _live(source, warnings: list[str]) -> tuple[list[dict], set[str], str]:
    """The objects, the kinds listed (a 403 is not listed) and the server's version."""
    from kubectl_tspread.snapshot.live import ApiStatusError, connect

    cluster = connect(source.kube_options())
    try:
        version = cluster.version()
    except ApiStatusError as e:
        version = ""
        warnings.append(f"could not read the server's version ({e}); the dump does not say it")
    out: list[dict] = []
    listed: set[str] = set()
    for kind in DUMP_KINDS:
        try:
            out.extend(cluster.list_raw(kind))
            listed.add(kind)
        except ApiStatusError as e:
            if not (RESOURCES[kind].optional and e.status in (403, 404)):
                raise
            warnings.append(f"skipped {RESOURCES[kind].group_resource}: {e}")
    return out, listed, version
