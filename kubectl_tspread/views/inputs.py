"""What each command's answer rests on, and which of it the input lacked.

Pure domain code (no I/O, no click or rich). `missing_kinds(snapshot, command)` lists the
kinds the command's answer depends on for this cluster that the source did not read
(`Snapshot.kinds_read`: listed on a live cluster, present in a dump). A kind that was listed
and came back empty is not missing: none exist. A dump without PodDisruptionBudgets is:
the plan would otherwise treat budgets as absent without a word.

Depends on, per command (conditional ones only when some pod needs them):
- every command: Service (the default constraints' selectors, for controller-owned pods without
  their own constraints), ReplicaSet / StatefulSet / ReplicationController (the controller selector of
  the default constraints, for pods without their own constraints that a controller of that kind
  owns; for drain-safe, for every pod such a controller owns);
- why-pending and drain-safe: PersistentVolumeClaim and PersistentVolume (StorageClass for
  unbound claims) when a pod mounts a claim;
- drain-safe: PodDisruptionBudget, always (budgets decide which evictions are allowed);
- Namespace when a pod's (anti-)affinity selects namespaces by label: tspread judges such a
  selector by the namespace's name label alone, so it is always named.

Words for the warning are render/text.py `missing_kinds_message`; the JSON entry is
render/structured.py `warnings_view`; cli/inputs.py prints the stderr line.

    dump of nodes, pods, rs, deploy; drain-safe → ["PodDisruptionBudget", "Service", "StatefulSet"]
"""

from __future__ import annotations

from typing import Iterable

from kubectl_tspread.model import Pod, Snapshot

DISTRIBUTION, WHY_PENDING, DRAIN_SAFE = "distribution", "why-pending", "drain-safe"
COMMANDS = (DISTRIBUTION, WHY_PENDING, DRAIN_SAFE)

MISSING_KINDS = "MissingKinds"  # the warning code in every JSON/YAML document

_CONTROLLERS = ("ReplicaSet", "StatefulSet", "ReplicationController")


def _needs_namespaces(pods: Iterable[Pod]) -> bool:
    for p in pods:
        for term in (*p.pod_affinity, *p.pod_anti_affinity):
            if term.namespace_selector is not None:
                return True
    return False


def needed_kinds(snapshot: Snapshot, command: str) -> list[str]:
    """The kinds `command`'s answer depends on for this snapshot's pods, sorted."""
    if command not in COMMANDS:
        raise ValueError(f"unknown command {command!r}")
    pods = snapshot.pods
    need: set[str] = set()
    # default constraints apply to pods without their own; their selector merges the Services
    # that select the pod with its controller's (a pod without a controller is left alone here:
    # a test dump of bare pods needs no Services)
    if any(not p.spread and p.owner is not None and p.owner.kind in _CONTROLLERS for p in pods):
        need.add("Service")
    # a controller's selector makes the default constraints of its pods that carry none; the
    # drain plan also groups every pod it moves by its controller
    owned = pods if command == DRAIN_SAFE else [p for p in pods if not p.spread]
    need.update(k for k in _CONTROLLERS if any(p.owner is not None and p.owner.kind == k for p in owned))
    if command in (WHY_PENDING, DRAIN_SAFE):
        claims = [p for p in pods if any(v.pvc for v in p.volumes)]
        if claims:
            need.update(("PersistentVolumeClaim", "PersistentVolume"))
            bound = {c.name for c in snapshot.pvcs if c.volume_name}
            if any(v.pvc not in bound for p in claims for v in p.volumes if v.pvc):
                need.add("StorageClass")
    if command == DRAIN_SAFE:
        need.add("PodDisruptionBudget")
    if _needs_namespaces(pods):
        need.add("Namespace")
    return sorted(need)


def missing_kinds(snapshot: Snapshot, command: str) -> list[str]:
    """The kinds the answer depends on that the input did not read; [] when the source read
    everything (`kinds_read` None). Namespaces are never read, so a namespace selector is
    always named."""
    need = needed_kinds(snapshot, command)
    read = snapshot.kinds_read
    if read is None:
        return [k for k in need if k == "Namespace"]
    return [k for k in need if k not in read or k == "Namespace"]
