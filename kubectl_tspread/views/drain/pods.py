"""Which pods a drain evicts, skips or refuses: kubectl drain's rules and flags.

kubectl (k8s.io/kubectl/pkg/drain/filters.go) runs each pod of the node through its filters in this order and stops at
the first that does not let it be deleted:
1. DaemonSet-managed and not finished: refused unless `--ignore-daemonsets`, and then left in place (the DaemonSet
   controller ignores cordons and would recreate it at once).
2. Mirror pod (annotation kubernetes.io/config.mirror): skipped silently; the API cannot delete a static pod.
3. emptyDir volume and not finished: refused unless `--delete-emptydir-data`.
4. No controller and not finished: refused unless `--force`; such a pod is deleted for good (nothing recreates it).

Finished pods pass every filter; kubectl deletes them, but the scheduler no longer sees them, so steps leave them out.
Pods with a deletionTimestamp are an interrupted run's evictions: already evicted. --force deletes a DaemonSet pod whose
DaemonSet is gone; a snapshot cannot tell a deleted DaemonSet from one not dumped, so the planner assumes it exists."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable

from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import Pod
from kubectl_tspread.model.plan import DrainFlags

EVICT = "Evict"
SKIP = "Skip"
REFUSE = "Refuse"
ALREADY_EVICTED = "AlreadyEvicted"

# codes (also the finding codes of a refusal)
DAEMONSET_POD = "DaemonSetPod"
MIRROR_POD = "MirrorPod"
LOCAL_STORAGE = "LocalStorage"
UNMANAGED_POD = "UnmanagedPod"
TERMINATING = "Terminating"

# kubectl's messages, verbatim (filters.go): the fatal ones are what `kubectl drain` prints
DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"

FLAG_FOR = {DAEMONSET_POD: "--ignore-daemonsets", LOCAL_STORAGE: "--delete-emptydir-data", UNMANAGED_POD: "--force"}


@dataclass(frozen=True, slots=True)
class PodDecision:
    """What a drain does with one pod of a target node."""

    pod: Pod
    action: str  # EVICT | SKIP | REFUSE | ALREADY_EVICTED
    code: str | None = None  # the rule that decided; None for a plain eviction
    message: str = ""  # kubectl's text for it
    replaced: bool = False  # whether a controller recreates the pod


def classify(pod: Pod, flags: DrainFlags) -> PodDecision | None:
    """kubectl's verdict, None for a finished pod. A DaemonSet pod, no flags: Refuse, DaemonSetPod, DAEMONSET_FATAL."""
    if pod.finished:
        return None
    if pod.terminating:
        return PodDecision(pod, ALREADY_EVICTED, TERMINATING, "already being deleted",
                           replaced=pod.owner is not None and pod.owner.kind != "DaemonSet")
    controller = pod.owner
    if controller is not None and controller.kind == "DaemonSet":
        if not flags.ignore_daemonsets:
            return PodDecision(pod, REFUSE, DAEMONSET_POD, DAEMONSET_FATAL)
        return PodDecision(pod, SKIP, DAEMONSET_POD, DAEMONSET_WARNING)
    if pod.mirror:
        return PodDecision(pod, SKIP, MIRROR_POD, "mirror pod: the API cannot delete static pods")
    code, message = None, ""
    if any(v.empty_dir for v in pod.volumes):
        if not flags.delete_emptydir_data:
            return PodDecision(pod, REFUSE, LOCAL_STORAGE, LOCAL_STORAGE_FATAL)
        code, message = LOCAL_STORAGE, LOCAL_STORAGE_WARNING
    if controller is None:
        if not flags.force:
            return PodDecision(pod, REFUSE, UNMANAGED_POD, UNMANAGED_FATAL)
        # kubectl keeps only the last filter's warning
        return PodDecision(pod, EVICT, UNMANAGED_POD, UNMANAGED_WARNING, replaced=False)
    return PodDecision(pod, EVICT, code, message, replaced=True)


def classify_all(pods: Iterable[Pod], flags: DrainFlags) -> list[PodDecision]:
    return [d for d in (classify(p, flags) for p in pods) if d is not None]


def kubectl_errors(decisions: Iterable[PodDecision]) -> list[str]:
    """`kubectl drain`'s refusal errors, grouped by message as in filters.go; sorted, as Go's map order is random."""
    by_msg: dict[str, list[str]] = defaultdict(list)
    for d in decisions:
        if d.action == REFUSE:
            by_msg[d.message].append(d.pod.key)
    return sorted(f"{refusal_head(msg)}: {', '.join(pods)}" for msg, pods in by_msg.items())


def refusal_head(message: str) -> str:
    """`cannot delete <message>`, but once: kubectl's unmanaged-pod message already starts with it."""
    return message if message.lower().startswith("cannot delete") else f"cannot delete {message}"


def kubectl_warnings(decisions: Iterable[PodDecision]) -> list[str]:
    by_msg: dict[str, list[str]] = defaultdict(list)
    for d in decisions:
        if d.message and d.action in (EVICT, SKIP) and d.code != MIRROR_POD:
            by_msg[d.message].append(d.pod.key)
    return sorted(f"{msg}: {', '.join(pods)}" for msg, pods in by_msg.items())


def probe_pod(pod: Pod) -> Pod:
    """An unbound copy standing for the workload's next pod (it never counts itself)."""
    return replace(pod, name=f"{pod.name}-probe", uid=f"probe-{pod.uid}", node_name="", phase="Pending",
                   terminating=False, conditions=(), ready=False, nominated_node="")


def workload_ref(index: ClusterIndex, pod: Pod) -> str | None:
    """The workload a pod is planned and reported under: its top controller's Kind/name, else its owner's, else None."""
    w = index.top_controller(pod)
    if w is not None:
        return w.ref
    return f"{pod.owner.kind}/{pod.owner.name}" if pod.owner is not None else None
