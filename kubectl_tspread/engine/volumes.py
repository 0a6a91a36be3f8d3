"""VolumeBinding and VolumeZone, as far as the snapshot holds PVCs, PVs and StorageClasses.

Follows kube-scheduler's plugins/volumebinding (PreFilter + Filter) and plugins/volumezone.
What a snapshot cannot show is skipped rather than guessed:
- a snapshot without any PVC object cannot tell a missing claim from an unread one, so
  the volume filters pass; likewise bound-PV checks need at least one PV, and
  WaitForFirstConsumer checks need the claim's StorageClass;
- PV capacity, access modes and CSI storage capacity are not modelled: an available
  PV of the right class whose node affinity matches counts as bindable, and dynamic
  provisioning succeeds wherever the class's allowedTopologies allow.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.nodematch import term_matches, terms_match
from kubectl_tspread.engine.spread import UNRESOLVABLE, FilterFailure, shared_failure
from kubectl_tspread.model import Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass

VOLUME_BINDING = "VolumeBinding"
VOLUME_ZONE = "VolumeZone"
# its PreFilter looks every claim up (for ReadWriteOncePod) and runs before VolumeBinding's,
# so a missing claim is its rejection
VOLUME_RESTRICTIONS = "VolumeRestrictions"

REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
REASON_ZONE_CONFLICT = "node(s) had no available volume zone"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
NO_PROVISIONER = "kubernetes.io/no-provisioner"

# VolumeZone's labels, each with the GA label a node may carry instead of the beta one
_ZONE_LABELS = {
    "topology.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region": "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}


def claim_not_found(name: str) -> str:
    """The lister's NotFound text that the PreFilter passes through verbatim."""
    return f'persistentvolumeclaim "{name}" not found'


@dataclass(frozen=True, slots=True)
class VolumeState:
    """The pod's claims resolved once per scheduling cycle."""

    prefilter: FilterFailure | None = None  # rejects the pod before any node is looked at
    bound: tuple[tuple[PersistentVolumeClaim, PersistentVolume | None], ...] = ()
    delayed: tuple[tuple[PersistentVolumeClaim, StorageClass], ...] = ()  # unbound, WaitForFirstConsumer
    pvs: tuple[PersistentVolume, ...] = ()


def prepare(index: ClusterIndex, pod: Pod) -> VolumeState:
    """The volume PreFilters: VolumeRestrictions rejects a pod whose claim does not exist,
    then VolumeBinding sorts the claims into bound / delayed."""
    names = [v.pvc for v in pod.volumes if v.pvc]
    if not names:  # before reading the snapshot: a what-if view makes its copy on first read
        return VolumeState()
    snap = index.snapshot
    if not snap.pvcs:
        return VolumeState()
    claims = {(c.namespace, c.name): c for c in snap.pvcs}
    pvs = {pv.name: pv for pv in snap.pvs}
    classes = {sc.name: sc for sc in snap.storage_classes}
    bound: list[tuple[PersistentVolumeClaim, PersistentVolume | None]] = []
    delayed: list[tuple[PersistentVolumeClaim, StorageClass]] = []
    for name in names:
        claim = claims.get((pod.namespace, name))
        if claim is None:
            return VolumeState(FilterFailure(VOLUME_RESTRICTIONS, UNRESOLVABLE, claim_not_found(name)))
        if claim.volume_name and not claim.bind_completed:
            # pre-bound, not yet bound: VolumeBinding treats it as unbound immediate
            return VolumeState(FilterFailure(VOLUME_BINDING, UNRESOLVABLE, REASON_UNBOUND_IMMEDIATE))
        if claim.volume_name:
            if pvs:
                bound.append((claim, pvs.get(claim.volume_name)))
            continue
        sc = classes.get(claim.storage_class)
        if sc is None and claim.storage_class and not classes:
            continue  # StorageClasses were not read: the binding mode is unknown
        if sc is None or sc.binding_mode != WAIT_FOR_FIRST_CONSUMER:
            return VolumeState(FilterFailure(VOLUME_BINDING, UNRESOLVABLE, REASON_UNBOUND_IMMEDIATE))
        delayed.append((claim, sc))
    return VolumeState(None, tuple(bound), tuple(delayed), tuple(snap.pvs))


def _can_bind(claim: PersistentVolumeClaim, sc: StorageClass, node: Node,
              pvs: tuple[PersistentVolume, ...]) -> bool:
    """An available PV of the claim's class reachable from `node`, else dynamic provisioning."""
    ref = f"{claim.namespace}/{claim.name}"
    for pv in pvs:
        if pv.storage_class == sc.name and pv.claim in ("", ref) and terms_match(pv.node_affinity, node):
            return True
    if sc.provisioner == NO_PROVISIONER:
        return False
    if not sc.allowed_topologies:
        return True
    return any(term_matches(t, node) for t in sc.allowed_topologies)


def binding_failures(state: VolumeState, node: Node) -> tuple[FilterFailure, ...]:
    """VolumeBinding Filter: every conflict reason of the node, UnschedulableAndUnresolvable.

    >>> # a bound PV pinned to zone a, node in zone b -> (volume node affinity conflict,)
    """
    if not state.bound and not state.delayed:  # most pods: no claims to bind
        return ()
    bound_ok, pvs_found = True, True
    for _claim, pv in state.bound:
        # the binder stops at the first bad bound claim; a missing PV fails both checks
        if pv is None:
            bound_ok, pvs_found = False, False
            break
        if not terms_match(pv.node_affinity, node):
            bound_ok = False
            break
    unbound_ok = all(_can_bind(c, sc, node, state.pvs) for c, sc in state.delayed)
    reasons = [r for r, bad in ((REASON_NODE_CONFLICT, not bound_ok), (REASON_BIND_CONFLICT, not unbound_ok),
                                (REASON_PV_NOT_EXIST, not pvs_found)) if bad]
    return tuple(shared_failure(VOLUME_BINDING, UNRESOLVABLE, r) for r in reasons)


def zone_failure(state: VolumeState, node: Node) -> FilterFailure | None:
    """VolumeZone: a bound PV's legacy zone/region labels must include the node's value.

    A node carrying none of those labels passes; "a__b" on the PV means zones a and b.
    """
    if not state.bound:
        return None
    if not any(k in node.labels for k in _ZONE_LABELS):
        return None
    for _claim, pv in state.bound:
        if pv is None:
            continue
        for key, ga in _ZONE_LABELS.items():
            if key not in pv.labels:
                continue
            value = node.labels.get(key, node.labels.get(ga))
            if value is None or value not in pv.labels[key].split("__"):
                return shared_failure(VOLUME_ZONE, UNRESOLVABLE, REASON_ZONE_CONFLICT)
    return None
