"""Compact, immutable records of the cluster objects tspread reasons about.

Every layer above the snapshot works on these, never on raw API dicts: the decoder
(`snapshot/decode.py`) parses each object once, applies field defaults once, and
drops the rest of the JSON. Dicts inside records are treated as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, Callable, Collection, Mapping

from kubectl_tspread.model.labels import Requirement, Selector

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"

ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE


@dataclass(frozen=True, slots=True)
class Toleration:
    """operator is 'Equal' (default) or 'Exists'; empty key with Exists tolerates every taint;
    empty effect matches every effect."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        # Equal (an empty key with Equal is invalid in the API; it tolerates nothing here)
        return bool(self.key) and self.value == taint.value


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One term of required node affinity; expressions and fields are ANDed.
    `match_fields` only ever names `metadata.name`."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    selector: Selector
    topology_key: str
    namespaces: tuple[str, ...] = ()
    # None = not set (use `namespaces`, or the pod's own namespace when that is empty too);
    # an empty Selector() = every namespace
    namespace_selector: Selector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One topologySpreadConstraint with field defaults applied.

    `selector` is the labelSelector as written (matchLabelKeys NOT yet merged: the merge
    depends on the incoming pod, see engine.spread). `implicit` marks the cluster-default
    constraints the scheduler applies to pods without their own (scoring only).
    """

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    match_label_keys: tuple[str, ...] = ()
    implicit: bool = False

    @property
    def hard(self) -> bool:
        return self.when_unsatisfiable == DO_NOT_SCHEDULE


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    uid: str = ""
    api_version: str = ""


@dataclass(frozen=True, slots=True)
class HostPort:
    port: int
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(frozen=True, slots=True)
class Volume:
    """What the scheduler and drain care about in a pod volume."""

    name: str
    pvc: str | None = None  # claimName of a persistentVolumeClaim volume
    empty_dir: bool = False
    image: str | None = None  # image.reference of an image volume ("" without one); None: another kind


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Mapping[str, int] = field(default_factory=dict)  # cpu in millicores, "pods" a count
    ready: bool = True
    created: str = ""
    # status.declaredFeatures: what the node's kubelet says it supports (NodeDeclaredFeatures)
    declared_features: frozenset[str] = frozenset()
    # status.images: every name of every image the node holds -> that image's sizeBytes
    # (ImageLocality); a node added like another (new_node_like) holds none yet
    images: Mapping[str, int] = field(default_factory=dict)

    def cordoned(self) -> "Node":
        """The node after a simulated cordon: spec.unschedulable set and the
        node.kubernetes.io/unschedulable:NoSchedule taint that the node lifecycle controller
        adds within seconds. A node read from the API or a dump is taken as it is: the
        scheduler reads only spec.taints, so a cordoned node without the taint passes
        TaintToleration and nodeTaintsPolicy Honor (NodeUnschedulable still rejects it)."""
        if any(t.key == UNSCHEDULABLE_TAINT_KEY and t.effect == NO_SCHEDULE for t in self.taints):
            return replace(self, unschedulable=True)
        return replace(self, unschedulable=True, taints=self.taints + (Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE),))

    def uncordoned(self) -> "Node":
        """kubectl uncordon: spec.unschedulable false; the lifecycle controller drops the taint."""
        return replace(self, unschedulable=False,
                       taints=tuple(t for t in self.taints if t.key != UNSCHEDULABLE_TAINT_KEY))


def new_node_like(template: Node, taken: Collection[str]) -> Node:
    """The node a what-if change adds "like" `template` (why-pending's AddNode fixes and
    drain-safe's AddNode remedy alike): its labels (hostname replaced), taints and allocatable,
    no cordon, no pods, no images pulled yet, named `<template>-new` (then -new2, -new3 …) so
    no name in `taken` is reused.

    template c0 (zone c, hostname c0, cordoned), taken {c0, c0-new} → c0-new2, zone c, hostname
    c0-new2, schedulable"""
    name, i = f"{template.name}-new", 2
    while name in taken:
        name, i = f"{template.name}-new{i}", i + 1
    labels = dict(template.labels)
    if HOSTNAME_KEY in labels:
        labels[HOSTNAME_KEY] = name
    return replace(template.uncordoned(), name=name, labels=labels, created="", images={})


@dataclass(frozen=True, slots=True)
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition: str = ""


@dataclass(frozen=True, slots=True)
class ContainerResize:
    """One container's requests as its spec states them and as the kubelet reports them in
    the pod's status (in-place resize): `allocated` is the status's allocatedResources,
    `actual` its resources.requests (None when the status does not have them);
    `status_resources` says the status has `resources` at all (1.33 to 1.36 read the status
    of a container only then). `kind` is CONTAINER, INIT or SIDECAR (a restartable init
    container)."""

    spec: Mapping[str, int]
    allocated: Mapping[str, int] | None = None
    actual: Mapping[str, int] | None = None
    status_resources: bool = False
    kind: str = "container"


@dataclass(frozen=True, slots=True)
class PodResize:
    """What kube-scheduler reads to size a pod whose status reports resources (in-place
    resize): every container in spec order (containers, then init containers), the pod-level
    spec requests, the overhead, the pod-level status (allocatedResources, resources.requests,
    whether status.resources is there at all) and whether the PodResizePending condition says
    Infeasible. engine/podrequests.py turns it into requests by the rule of each minor."""

    containers: tuple[ContainerResize, ...]
    pod_level: Mapping[str, int] = field(default_factory=dict)
    overhead: Mapping[str, int] = field(default_factory=dict)
    allocated: Mapping[str, int] | None = None
    actual: Mapping[str, int] | None = None
    status_resources: bool = False
    infeasible: bool = False


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    node_name: str = ""  # spec.nodeName: bound (or, for an unscheduled pod, requested) node
    phase: str = "Pending"
    terminating: bool = False  # metadata.deletionTimestamp set
    created: str = ""  # metadata.creationTimestamp, RFC 3339
    owner: OwnerRef | None = None  # the controller ownerReference only
    spread: tuple[SpreadConstraint, ...] = ()  # spec.topologySpreadConstraints, defaults applied
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None  # required terms, ORed; None = unset
    pod_affinity: tuple[PodAffinityTerm, ...] = ()  # required only
    pod_anti_affinity: tuple[PodAffinityTerm, ...] = ()  # required only
    tolerations: tuple[Toleration, ...] = ()
    requests: Mapping[str, int] = field(default_factory=dict)  # effective: max(init, sum) + overhead
    host_ports: tuple[HostPort, ...] = ()
    volumes: tuple[Volume, ...] = ()
    scheduler_name: str = "default-scheduler"
    nominated_node: str = ""
    priority: int = 0
    # status.conditions of the types the engine reads (decode.READ_CONDITIONS); whether Ready
    # is True is `ready`
    conditions: tuple[PodCondition, ...] = ()
    mirror: bool = False  # static pod mirror (annotation kubernetes.io/config.mirror)
    ready: bool = False
    # the (cpu, memory) the scoring plugins charge: like `requests`, but a container that
    # requests no cpu (memory) counts 100m (200Mi); an explicit "0" stays 0. None: made
    # without containers (a test's record), read from `requests` as one container
    score_requests: tuple[int, int] | None = None
    # preferred terms as (weight, term): NodeAffinity's and InterPodAffinity's scores
    preferred_node_affinity: tuple[tuple[int, NodeSelectorTerm], ...] = ()
    preferred_pod_affinity: tuple[tuple[int, PodAffinityTerm], ...] = ()
    preferred_pod_anti_affinity: tuple[tuple[int, PodAffinityTerm], ...] = ()
    # what NodeResourcesFit's score charges this pod when it is the one placed, where that
    # differs from score_requests: its pod-level requests left out (scores.placed_requests)
    placed_score_requests: tuple[int, int] | None = None
    # set when the pod's status reports container resources that can change what it holds
    # (in-place resize); `requests` and `score_requests` are then the minor's answer
    # (engine/podrequests.py `for_version`), from the spec until the minor is known
    resize: PodResize | None = None
    # the node-declared features the spec uses, by upstream name (engine/filters.py `required_features`);
    # which of them a minor's scheduler requires is engine/versions.py's word
    features_used: frozenset[str] = frozenset()
    # spec.initContainers' then spec.containers' images as written ("" for none); an image
    # volume's reference is its Volume's `image` (ImageLocality: engine/scores.py `pod_images`)
    images: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def finished(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def goes_with_node(self) -> bool:
        """A DaemonSet or mirror (static) pod belongs to its node: deleting the Node object takes
        it away with the node, and from no workload that runs elsewhere."""
        return self.mirror or (self.owner is not None and self.owner.kind == "DaemonSet")

    @property
    def pending(self) -> bool:
        """Waiting for the scheduler: not bound, not finished, not being deleted."""
        return not self.node_name and not self.finished and not self.terminating

    def condition(self, type_: str) -> PodCondition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None


@dataclass(frozen=True, slots=True)
class Workload:
    """A pod controller: Deployment, ReplicaSet, StatefulSet, DaemonSet, ReplicationController, Job."""

    kind: str
    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    selector: Selector = field(default_factory=Selector.nothing)
    owner: OwnerRef | None = None  # e.g. a ReplicaSet's Deployment
    replicas: int | None = None
    ready_replicas: int = 0
    created: str = ""

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True, slots=True)
class Service:
    namespace: str
    name: str
    selector: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Pdb:
    namespace: str
    name: str
    selector: Selector
    min_available: int | str | None = None  # int or "50%"
    max_unavailable: int | str | None = None
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None  # required terms
    storage_class: str = ""
    claim: str = ""  # "namespace/name" of the bound claim
    labels: Mapping[str, str] = field(default_factory=dict)  # legacy zone labels for VolumeZone


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    volume_name: str = ""
    storage_class: str = ""
    phase: str = "Pending"
    # the PV controller's pv.kubernetes.io/bind-completed annotation: without it a claim that
    # names a volume is only pre-bound, and the scheduler treats it as unbound immediate
    bind_completed: bool = True


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    binding_mode: str = "Immediate"  # or WaitForFirstConsumer
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()
    provisioner: str = ""


@dataclass(frozen=True, slots=True)
class Event:
    namespace: str
    object_kind: str
    object_name: str
    reason: str
    message: str
    last_seen: str = ""  # lastTimestamp, else eventTime, else creationTimestamp
    count: int = 1
    object_uid: str = ""


# what applying a fix or remedy does besides what it is for (SideEffect.code)
DELETES_PODS = "DeletesPods"  # objects: pod keys the change deletes (pod GC of a deleted node)
EVICTS_PODS = "EvictsPods"  # objects: pod keys evicted
STRANDS_VOLUMES = "StrandsVolumes"  # objects: PVs only the removed nodes could use
REDUCES_AVAILABILITY = "ReducesAvailability"  # objects: workloads that lose running pods
ROLLS_WORKLOAD = "RollsWorkload"  # objects: the workload; params pods: how many it replaces
RECREATES_POD = "RecreatesPod"  # objects: a pod without a controller, deleted and created again
WEAKENS_SPREAD = "WeakensSpread"  # objects: the workload whose guarantee becomes looser
ADDS_NODE = "AddsNode"  # objects: the node to create (it costs money until removed)
DELETES_NODES = "DeletesNodes"  # objects: the Node objects deleted
LOSES_DATA = "LosesData"  # objects: pods whose emptyDir contents are lost
# objects: none; params pods: how many evictions in the re-plan are of pods an earlier step of
# it placed on a node drained later (drain-safe's StageCordons remedy). Not destructive and no
# template edit: those pods are replacements a controller made, evicted again from a node being
# drained and made again by it, as the drain does to every pod it evicts; nothing is deleted or lost
MOVES_PODS_TWICE = "MovesPodsTwice"
# the side effects that change or remove running pods, or lose what they hold: a fix or remedy
# carrying one ranks last (TIER_DESTRUCTIVE)
DESTRUCTIVE_EFFECTS = frozenset({DELETES_PODS, EVICTS_PODS, STRANDS_VOLUMES, LOSES_DATA})
# the side effects of a pod template edit: its controller replaces every pod (TIER_TEMPLATE)
TEMPLATE_EFFECTS = frozenset({ROLLS_WORKLOAD, RECREATES_POD})

# what a verified fix or remedy was checked to achieve (`verifies`)
VERIFIES_POD_FITS = "PodFits"  # the Pending pod then passes every filter on some node
VERIFIES_EVICTION_ALLOWED = "EvictionAllowed"  # the blocked eviction is then allowed
VERIFIES_PLAN_SAFE = "PlanSafe"  # the whole drain then plans SAFE
VERIFIES_CONSTRAINT_HOLDS = "ConstraintHolds"  # the remedied constraint then stays within maxSkew


@dataclass(frozen=True, slots=True)
class SideEffect:
    """One consequence of applying a fix or a drain remedy, as data: a code above, the objects
    it touches (pod keys, node, PV or workload names), and its numbers (`pods` for
    RollsWorkload). render/text.py `side_effect_text` words it; why-pending's fixes and
    drain-safe's remedies share it."""

    code: str
    objects: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def destructive(self) -> bool:
        return self.code in DESTRUCTIVE_EFFECTS


# the actions of what-if changes: why-pending's fixes and drain-safe's remedies name the same
# change alike, with the same parameter names (README "What-if vocabulary"; render/changes.py
# keeps the names they replaced readable in JSON)
UNCORDON = "Uncordon"
LABEL_NODES = "LabelNodes"
DELETE_NODES = "DeleteNodes"  # Node objects deleted now
DELETE_DRAINED_NODES = "DeleteDrainedNodes"  # each drained Node object deleted once the drain empties it
SET_NODE_TAINTS_POLICY_HONOR = "SetNodeTaintsPolicyHonor"
LOWER_MIN_DOMAINS = "LowerMinDomains"
RAISE_MAX_SKEW = "RaiseMaxSkew"
SCHEDULE_ANYWAY_ACTION = "ScheduleAnyway"
EVICT_LOWER_PRIORITY = "EvictLowerPriority"
ADD_NODE = "AddNode"
ADD_NODE_WITH_LABELS = "AddNodeWithLabels"
ADD_LARGER_NODE = "AddLargerNode"
LOWER_REQUEST = "LowerRequest"
RAISE_PDB_BUDGET = "RaisePdbBudget"
REMOVE_PDB = "RemovePdb"
FLAG = "Flag"
ORDER = "Order"
# drain-safe: cordon each step's nodes just before its evictions (--stage-cordons) instead of
# every target at step 1
STAGE_CORDONS = "StageCordons"

# each action's parameters (the keys of ProposedChange.params, as JSON `details` writes them):
# a constraint edit names the constraint by topologyKey (and its position in the Pending pod's
# list, or the workload whose pods a remedy edits); the field it sets carries the value it sets
# (maxSkew, minDomains) and `old` the value before; a node added is `like` an existing one
ACTION_PARAMETERS: dict[str, tuple[str, ...]] = {
    UNCORDON: ("node",),
    LABEL_NODES: ("nodes", "labels", "guessed"),
    DELETE_NODES: ("topologyKey", "domains", "nodes", "autoscalers"),
    DELETE_DRAINED_NODES: ("nodes",),
    SET_NODE_TAINTS_POLICY_HONOR: ("topologyKey", "position", "workload"),
    LOWER_MIN_DOMAINS: ("topologyKey", "position", "old", "minDomains"),
    RAISE_MAX_SKEW: ("topologyKey", "position", "workload", "old", "maxSkew"),
    SCHEDULE_ANYWAY_ACTION: ("topologyKey", "position", "maxSkew"),
    EVICT_LOWER_PRIORITY: ("node", "pods", "podKeys", "priorities", "priority"),
    ADD_NODE: ("topologyKey", "domain", "like", "name", "requests", "matchedBy", "rerunNodes"),
    ADD_NODE_WITH_LABELS: ("like", "name", "labels", "dropped"),
    ADD_LARGER_NODE: ("topologyKey", "domain", "like", "name", "allocatable", "largest"),
    LOWER_REQUEST: ("old", "new"),
    RAISE_PDB_BUDGET: ("pdb", "disruptionsAllowed"),
    REMOVE_PDB: ("pdb",),
    FLAG: ("flag",),
    ORDER: ("order",),
    STAGE_CORDONS: ("nodes",),
}

# the order advice is offered in: what a change does to running pods (its side effects)
TIER_NO_POD_CHANGE, TIER_TEMPLATE, TIER_DESTRUCTIVE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class ProposedChange:
    """One what-if change offered as advice, applied to a copy of the cluster and checked there:
    why-pending's fixes (fixes.Suggestion) and drain-safe's remedies (drain.model.Remedy) are
    this record. `action` and the keys of `params` are the vocabulary above; `verifies` is what
    the check showed (VERIFIES_*, "" when the change was not checked, `verified` False).

    What the check found besides, per command: `nodes`, where the Pending pod then fits
    (why-pending); `makes_safe`, whether the re-planned drain is then safe, and `then`, the
    re-plan's first remaining finding when it is not (drain-safe)."""

    action: str
    params: Mapping[str, Any]
    verified: bool = True
    makes_safe: bool = False
    verifies: str = ""
    side_effects: tuple[SideEffect, ...] = ()
    then: Any = None
    nodes: tuple[str, ...] = ()

    @property
    def tier(self) -> int:
        """TIER_NO_POD_CHANGE, TIER_TEMPLATE (a template edit rolls a workload) or
        TIER_DESTRUCTIVE, from the side effects: advice is offered in this order."""
        codes = {e.code for e in self.side_effects}
        if codes & DESTRUCTIVE_EFFECTS:
            return TIER_DESTRUCTIVE
        return TIER_TEMPLATE if codes & TEMPLATE_EFFECTS else TIER_NO_POD_CHANGE


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a command knows about the cluster, read once.

    `namespace` is the namespace the user asked about (context default or -n), None with -A.
    """

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    workloads: tuple[Workload, ...] = ()
    services: tuple[Service, ...] = ()
    pdbs: tuple[Pdb, ...] = ()
    pvs: tuple[PersistentVolume, ...] = ()
    pvcs: tuple[PersistentVolumeClaim, ...] = ()
    storage_classes: tuple[StorageClass, ...] = ()
    events: tuple[Event, ...] = ()
    namespace: str | None = "default"
    source: str = ""  # "demo", "file a.json", "cluster https://…": said in errors and reports
    warnings: tuple[str, ...] = ()  # what the source could not read (e.g. events forbidden by RBAC)
    # the cluster's Kubernetes version ("v1.33.4", "1.37"): which minor's scheduler rules apply
    # (engine/versions.py); "" for the newest supported minor
    kube_version: str = ""
    # the kinds the source read: listed on a live cluster (an empty list counts, a 403 does
    # not), present with at least one object in a dump; None = everything (records built
    # in code, the built-in demo)
    kinds_read: frozenset[str] | None = None
    # node()'s map, made on the first ask: a zone drain looks thousands of names up among thousands of nodes
    _node_by_name: dict[str, Node] | None = field(default=None, init=False, repr=False, compare=False)

    def node(self, name: str) -> Node | None:
        """The first node named `name`, or None."""
        by_name = self._node_by_name
        if by_name is None:
            by_name = {}
            for n in self.nodes:
                by_name.setdefault(n.name, n)
            object.__setattr__(self, "_node_by_name", by_name)
        return by_name.get(name)


def positional_constructor(cls: type, derived_by_caller: bool = False) -> Callable[..., Any]:
    """A constructor for the frozen slots dataclass `cls` taking every field positionally, in
    declaration order, with no defaults; the instance is the same as `cls(*args)` would give.
    A class with a __post_init__ is refused unless `derived_by_caller`: the caller then passes
    the fields that __post_init__ derives too (init=False ones included, in declaration
    order), which is never run.

    Why: a frozen dataclass's __init__ stores each field with object.__setattr__, a call per
    field, and the decoder makes one record per pod of a big cluster. This builds the
    instance as an unfrozen twin class with the same slots (plain, specialised slot stores)
    and then retypes it to `cls`, which CPython allows between classes of identical slot
    layout. Only for hot paths (the decoder's pods, the drain planner's records by the
    hundred thousand); everything else uses the normal constructor.
    """
    if not hasattr(cls, "__slots__") or (hasattr(cls, "__post_init__") and not derived_by_caller):
        raise TypeError(f"{cls.__name__}: positional_constructor needs a slots dataclass without __post_init__")
    names = [f.name for f in fields(cls)]
    if tuple(cls.__slots__) != tuple(names):
        raise TypeError(f"{cls.__name__}: slots {cls.__slots__} do not match fields {names}")
    twin = type(f"_{cls.__name__}Unfrozen", (), {"__slots__": tuple(names)})
    args = ", ".join(names)
    body = "".join(f"    obj.{n} = {n}\n" for n in names)
    src = f"def make({args}):\n    obj = new(twin)\n{body}    obj.__class__ = cls\n    return obj\n"
    scope: dict[str, Any] = {"new": object.__new__, "twin": twin, "cls": cls}
    exec(src, scope)  # like dataclasses' own generated __init__: one function per class, made once
    make = scope["make"]
    make.__name__ = make.__qualname__ = f"new_{cls.__name__}"
    make.__doc__ = f"{cls.__name__}({args}) without the frozen per-field setattr"
    return make


def _pickled_by_fields(cls: type, name: str) -> Callable[..., Any]:
    """`positional_constructor(cls)`, bound to `name` in this module by the caller, and the way
    `cls` pickles: as that constructor and its field values. A frozen slots dataclass otherwise
    pickles through dataclasses' __getstate__/__setstate__, which walk its fields in Python per
    instance: pods decoded in a helper process (cli/workers.PageChild) come back by the ten
    thousand."""
    make = positional_constructor(cls)
    make.__module__, make.__name__, make.__qualname__ = __name__, name, name  # found again by pickle
    get = attrgetter(*(f.name for f in fields(cls)))
    cls.__reduce__ = lambda self: (make, get(self))
    return make


# the decoder's and the drain simulation's constructors of these records, and their pickling
new_pod = _pickled_by_fields(Pod, "new_pod")
new_pod_condition = _pickled_by_fields(PodCondition, "new_pod_condition")
