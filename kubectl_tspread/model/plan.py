"""The records a drain plan is made of (pure data; render/drain.py turns them into text and JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from kubectl_tspread.model import (  # noqa: F401  (the remedies' side effects: importable from here too)
    ADDS_NODE, DELETES_NODES, DELETES_PODS, LOSES_DATA, MOVES_PODS_TWICE, REDUCES_AVAILABILITY, ROLLS_WORKLOAD,
    STRANDS_VOLUMES,
    VERIFIES_CONSTRAINT_HOLDS, VERIFIES_EVICTION_ALLOWED, VERIFIES_PLAN_SAFE, VERIFIES_POD_FITS, ProposedChange,
    SideEffect,
)


@dataclass(frozen=True, slots=True)
class DrainFlags:
    """kubectl drain's pod flags (views/drain/pods.py applies them)."""

    ignore_daemonsets: bool = False
    force: bool = False
    delete_emptydir_data: bool = False


# stranded / finding codes (the list, plus two for spread refusals without a named trap)
CORDONED_DOMAIN_TRAP = "CordonedDomainTrap"
NO_CAPACITY = "NoCapacity"
PDB_BLOCKS = "PdbBlocks"
MULTIPLE_PDBS = "MultiplePdbs"
HOSTNAME_SPREAD_FULL = "HostnameSpreadFull"
UNMANAGED_POD = "UnmanagedPod"
LOCAL_STORAGE = "LocalStorage"
DAEMONSET_POD = "DaemonSetPod"
SPREAD_BLOCKED = "SpreadBlocked"  # spread refuses every node that fits, no cordoned domain to blame
SKEW_EXCEEDED = "SkewExceeded"  # a DoNotSchedule constraint ends a step above its limit
ORDER_MATTERS = "OrderMatters"  # info: the given order is unsafe, the plan's order is safe

ERROR, INFO = "error", "info"

# what plan_drain tells its `on_progress(phase, done, total)` as it goes, for a person watching
# (a whole zone of a 5,000-node cluster takes minutes to plan); done and total count
SIMULATE = "simulate"  # target nodes the order search has played, of all the targets
VERIFY = "verify"  # remedy re-plans done, of those planned first (it may need fewer)
CHECK_ORDER = "order"  # the order given is simulated too (None, None)
PlanProgress = Callable[[str, "int | None", "int | None"], None]

# what a plan reads: pods of every namespace (a node holds many), their controllers and
# Services (default constraints), PDBs (budgets) and volumes (VolumeBinding/VolumeZone)
DRAIN_KINDS = ("Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController",
               "Job", "Service", "PodDisruptionBudget", "PersistentVolume", "PersistentVolumeClaim",
               "StorageClass")


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """How to plan. `delete_drained_nodes` simulates deleting each target Node object once
    it is empty (a remedy); `search_budget` caps the simulated steps the order search
    may spend beyond one per target (backtracking). `stage_cordons` cordons each step's
    nodes just before its evictions (the StageCordons remedy, `--stage-cordons`) instead of
    every target in step 1, before the first eviction, as `kubectl drain a b c` does."""

    flags: DrainFlags = field(default_factory=DrainFlags)
    max_parallel: int = 1
    search_budget: int = 400
    delete_drained_nodes: bool = False
    verify_remedies: bool = True
    stage_cordons: bool = False


@dataclass(frozen=True, slots=True)
class Eviction:
    namespace: str
    name: str
    node: str
    workload: str | None  # "Deployment/web"; None for a pod without a controller
    replaced: bool
    predicted_node: str | None = None
    accepting_domains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    pdbs: tuple[str, ...] = ()
    warning: str = ""  # kubectl's warning for this pod (local storage, no controller)
    # the nodes that share the best score with predicted_node (it among them): the scheduler
    # picks one of them at random; () when the prediction is one node
    tied_nodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Skipped:
    namespace: str
    name: str
    node: str
    reason: str  # DaemonSetPod | MirrorPod | Refused codes | PdbBlocks | MultiplePdbs
    message: str = ""


@dataclass(frozen=True, slots=True)
class ConstraintAfter:
    workload: str
    namespace: str
    topology_key: str
    max_skew: int
    when_unsatisfiable: str
    distribution: Mapping[str, int]
    global_min: int
    skew: int
    limit: int  # maxSkew, or the skew before the drain when that was already higher
    status: str  # OK | AT LIMIT | VIOLATED | DRIFTED (from the engine), judged against maxSkew

    @property
    def exceeded(self) -> bool:
        return self.when_unsatisfiable == "DoNotSchedule" and self.skew > self.limit

    @property
    def excess(self) -> int:
        """How far the skew is above the limit when exceeded, else 0."""
        return self.skew - self.limit if self.exceeded else 0


@dataclass(frozen=True, slots=True)
class PdbUse:
    namespace: str
    name: str
    disruptions_allowed: int
    evictions: int


@dataclass(frozen=True, slots=True)
class Step:
    number: int
    nodes: tuple[str, ...]  # the nodes whose pods this step evicts
    # the nodes this step cordons (already cordoned ones left out): every target in step 1,
    # none later, unless the cordons are staged (PlanOptions.stage_cordons)
    cordon: tuple[str, ...]
    evictions: tuple[Eviction, ...]
    skipped: tuple[Skipped, ...]
    constraints_after: tuple[ConstraintAfter, ...]
    pdbs: tuple[PdbUse, ...]
    safe: bool
    deleted_nodes: tuple[str, ...] = ()  # remedy simulation only


@dataclass(frozen=True, slots=True)
class Stranded:
    namespace: str
    name: str  # the evicted pod whose replacement strands (or the pod that cannot be evicted)
    workload: str | None
    step: int
    reason: str
    details: Mapping[str, Any] = field(default_factory=dict)


# what a remedy's re-plan showed (Remedy.verifies): the whole plan is then safe; the pods
# kubectl or a PDB refused can then be evicted; the stranded replacements then get a node;
# the constraint then stays within its limit
# what a verified remedy was checked to achieve, and its side effects: model.py's vocabulary,
# shared with why-pending's fixes
PLAN_SAFE, EVICTION_ALLOWED, POD_FITS, CONSTRAINT_HOLDS = (
    VERIFIES_PLAN_SAFE, VERIFIES_EVICTION_ALLOWED, VERIFIES_POD_FITS, VERIFIES_CONSTRAINT_HOLDS)

# a remedy is the change record why-pending's fixes use too (model.ProposedChange): `verified`
# when re-planning with it applied clears its finding, `makes_safe` when the whole plan is then
# safe, `then` the re-plan's first error finding when it is not; remedies rank by `tier` (their
# worst side effect: none to running pods, a template edit, destructive)
Remedy = ProposedChange


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    workload: str | None
    pods: tuple[str, ...]  # namespace/name
    step: int | None
    params: Mapping[str, Any] = field(default_factory=dict)
    remedies: tuple[Remedy, ...] = ()
    severity: str = ERROR
    # candidates never re-planned (the re-plan allowance was spent): not checked, never "no remedy"
    unchecked: tuple[Remedy, ...] = ()
    failed: int = 0  # candidates re-planned that did not clear it


@dataclass(frozen=True)
class Verdict:
    """What remedy verification reads of a re-plan (the given order's check: `safe` only): all
    that a re-plan computed elsewhere (views/drain/workers.py) hands back."""

    safe: bool
    findings: tuple[Finding, ...]
    evicted_again: int = 0  # DrainPlan.evicted_again (the StageCordons remedy names it)


@dataclass(frozen=True, slots=True)
class DrainPlan:
    nodes: tuple[str, ...]  # the targets, as resolved
    safe: bool
    steps: tuple[Step, ...]
    stranded: tuple[Stranded, ...]
    findings: tuple[Finding, ...]
    max_parallel: int = 1
    flags: DrainFlags = field(default_factory=DrainFlags)
    kubectl_errors: tuple[str, ...] = ()  # what `kubectl drain` would refuse with
    kubectl_warnings: tuple[str, ...] = ()
    already_cordoned: tuple[str, ...] = ()
    already_evicted: tuple[str, ...] = ()  # namespace/name of terminating pods on the targets
    settled: tuple[Eviction, ...] = ()  # pending replacements of an earlier run, placed first
    explored: int = 0  # steps simulated by the search
    search_exhausted: bool = False  # the budget ran out before every order was tried
    # kinds the answer depends on that the input lacked (inputs.missing_kinds): a SAFE verdict
    # says what it did not check
    missing_kinds: tuple[str, ...] = ()
    stage_cordons: bool = False  # each step cordons its own nodes (PlanOptions.stage_cordons)
    # evictions of pods an earlier step of this plan placed on a target (a pod moving twice):
    # only staged cordons leave a later target open to replacements
    evicted_again: int = 0
    # forced.py proved that no order is safe: the drained cluster itself traps replacements,
    # however the steps and their cordons are staged
    no_safe_order: bool = False
    # (namespace, workload, topologyKey) of the constraints it proved broken under DeleteDrainedNodes too
    deletion_fails: frozenset = frozenset()
