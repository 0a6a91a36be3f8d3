"""The live scheduler message of a pending pod, and why it may differ from the rebuilt one.

Where it comes from: the PodScheduled=False condition, else the latest FailedScheduling
event. When the two texts disagree beyond the known spellings, the likely causes are
codes (render/pending.py words them), most telling first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from kubectl_tspread.engine import message as msgmod
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import Event, Pod

DEFAULT_SCHEDULER = "default-scheduler"
FAILED_SCHEDULING = "FailedScheduling"

# likely causes when the live message differs from the rebuilt one
CAUSE_OTHER_SCHEDULER = "OtherScheduler"
CAUSE_NOMINATED_NODE = "NominatedNode"
CAUSE_STALE_MESSAGE = "StaleMessage"
CAUSE_UNSEEN_PROFILE = "UnseenProfile"


@dataclass(frozen=True, slots=True)
class LiveMessage:
    text: str
    source: str  # "condition" (PodScheduled) or "event" (FailedScheduling)
    time: str


def live_message(index: ClusterIndex, pod: Pod, events: Sequence[Event] | None = None) -> LiveMessage | None:
    """The PodScheduled=False condition's message, else the latest FailedScheduling event
    (from `events` when the caller has them, else from the snapshot's)."""
    cond = pod.condition("PodScheduled")
    if cond is not None and cond.status == "False" and cond.message:
        return LiveMessage(cond.message, "condition", cond.last_transition)
    events = [
        e for e in (index.snapshot.events if events is None else events)
        if e.reason == FAILED_SCHEDULING and e.object_kind == "Pod" and e.namespace == pod.namespace
        and e.object_name == pod.name and (not e.object_uid or not pod.uid or e.object_uid == pod.uid)
    ]
    if not events:
        return None
    latest = max(events, key=lambda e: e.last_seen)
    return LiveMessage(latest.message, "event", latest.last_seen)


def same_verdicts(rebuilt: str, live: str) -> bool:
    """The same node count and the same filter counts once the historical taint spellings
    are normalised; the PostFilter (preemption) text may differ by release."""
    total_a, _, _ = msgmod.split_scheduler_message(rebuilt)
    total_b, _, _ = msgmod.split_scheduler_message(live)
    if total_a is None or total_a != total_b:
        return False
    return msgmod.parse_scheduler_message(rebuilt) == msgmod.parse_scheduler_message(live)


def mismatch_causes(index: ClusterIndex, pod: Pod, live: LiveMessage, rebuilt: str,
                    newest: Callable[[], str] | None = None) -> list[str]:
    """Why the live message may say something else, most telling first. `newest` gives
    `newest_object(index)` when the caller keeps it."""
    causes = []
    if pod.scheduler_name != DEFAULT_SCHEDULER:
        causes.append(CAUSE_OTHER_SCHEDULER)
    if pod.nominated_node:
        causes.append(CAUSE_NOMINATED_NODE)
    if _stale(live, rebuilt, newest or (lambda: newest_object(index))):
        causes.append(CAUSE_STALE_MESSAGE)
    if not causes:
        causes.append(CAUSE_UNSEEN_PROFILE)
    return causes


def _stale(live: LiveMessage, rebuilt: str, newest: Callable[[], str]) -> bool:
    """The live message counts another number of nodes, or objects changed after it was written."""
    total_live, _, _ = msgmod.split_scheduler_message(live.text)
    total_now, _, _ = msgmod.split_scheduler_message(rebuilt)
    if total_live is not None and total_now is not None and total_live != total_now:
        return True
    if not live.time:
        return False
    # RFC 3339 UTC timestamps as the API writes them compare correctly as strings
    return newest() > live.time


def newest_object(index: ClusterIndex) -> str:
    """The latest creation timestamp of a node or a bound pod ("" when none has one)."""
    snap = index.snapshot
    return max([n.created for n in snap.nodes] + [p.created for p in snap.pods if p.node_name], default="")
