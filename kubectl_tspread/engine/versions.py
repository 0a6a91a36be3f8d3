"""Which kube-scheduler the answers follow: the rules that differ between supported minors.

The cluster's minor comes from the API server's /version on the live path and from
`--kube-version` for dumps and the demo; without either, the newest supported minor.
Each rule below names the minor it changed in, as the upstream code of that minor has it
(checked by scripts/conformance against each minor's own scheduler):

- 1.34 to 1.36: DynamicResourceAllocation is GA and on, and its PostFilter's status for a pod
  without claims says "no new claims to deallocate", so a FitError's PostFilter part starts
  with it (DynamicResources speaks before DefaultPreemption); 1.37's status has no message;
- 1.34: NodeResourcesFit is UnschedulableAndUnresolvable when a request exceeds the node's
  whole allocatable (before: Unschedulable, and preemption tries the node);
- 1.34: TaintToleration says "node(s) had untolerated taint(s)"; 1.33 names the first
  untolerated taint: "node(s) had untolerated taint {key: value}";
- 1.34: when a PreFilter rejects the pod, DynamicResources' PreFilter (the last to run) never
  wrote its state, so its PostFilter fails reading it with the error "not found", the framework
  stops there, and that error is the whole PostFilter part: "0/N nodes are available:
  <PreFilter message>. not found" (preemption never runs);
- 1.36: NodeResourcesBalancedAllocation scores the change in the node's balance the pod makes
  (before: the balance with the pod);
- 1.37: the default profile runs NodeName before NodeUnschedulable (before: after it);
- 1.37: a preemption that finds victims says so: "preemption: found a potential placement
  for pod on node N, preempting K victims" (before, a successful PostFilter added nothing);
- in-place resize (InPlacePodVerticalScaling, on in every supported minor): a pod whose status
  reports resources holds per container the max of spec, actual and allocated until 1.36; from
  1.37 the max of the aggregated spec, actuated and allocated sums; pod-level requests read
  the pod's status from 1.36 (InPlacePodLevelResourcesVerticalScaling beta, on): see
  engine/podrequests.py;
- NodeDeclaredFeatures (alpha and off in 1.35, beta and on in 1.36, GA in 1.37): the last
  default filter; a pod whose spec uses a feature its minor's registry knows fails on a node
  whose status.declaredFeatures lacks it (engine/filters.py `features_failure`).

    >>> [rules_for(v).dra_message for v in ("v1.33.4-eks-1a2b", "1.34", "1.36", "1.37")]
    [False, True, True, False]
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

OLDEST = (1, 33)
NEWEST = (1, 37)
SUPPORTED = tuple(f"1.{m}" for m in range(OLDEST[1], NEWEST[1] + 1))

# digits bounded: int() of thousands of them (a hostile /version or annotation) raises ValueError
_VERSION = re.compile(r"^v?(\d{1,9})\.(\d{1,9})(?:[.+-].*)?$")


class UnknownVersion(ValueError):
    """A version string that names no Kubernetes minor."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The scheduler rules of one supported minor. `clamped` is set when the cluster's own
    minor is outside the supported range and the nearest supported one is used instead."""

    minor: int
    clamped: str = ""

    @property
    def label(self) -> str:
        return f"1.{self.minor}"

    @property
    def dra_message(self) -> bool:
        return 34 <= self.minor <= 36

    @property
    def fit_unresolvable(self) -> bool:
        return self.minor >= 34

    @property
    def dra_enabled(self) -> bool:
        """DynamicResources is in the default profile (DRA GA and on from 1.34)."""
        return self.minor >= 34

    @property
    def taint_reason_names_taint(self) -> bool:
        return self.minor <= 33

    @property
    def node_name_first(self) -> bool:
        return self.minor >= 37

    @property
    def preemption_names_node(self) -> bool:
        return self.minor >= 37

    @property
    def resize_max_of_sums(self) -> bool:
        """A resized pod holds the max of its spec, actuated and allocated sums (1.37+), not
        the sum of each container's max."""
        return self.minor >= 37

    @property
    def pod_level_resize(self) -> bool:
        """InPlacePodLevelResourcesVerticalScaling is on (beta from 1.36): pod-level requests
        and the pod's own status resources count."""
        return self.minor >= 36

    @property
    def node_features(self) -> frozenset[str]:
        """The features NodeDeclaredFeatures requires of a node when the pod uses them: its
        registry's features that a pod spec can need (none while the plugin is off, 1.35)."""
        return _NODE_FEATURES.get(self.minor, _NODE_FEATURES[max(_NODE_FEATURES)])

    @property
    def balanced_improvement(self) -> bool:
        """BalancedAllocation scores how much the pod improves the node's balance (1.36+), not
        the balance with the pod."""
        return self.minor >= 36

    @property
    def image_volumes_summed(self) -> bool:
        """ImageLocality adds what a node holding an image volume's image scores (1.36+); before,
        it reads only the init containers' and containers' images."""
        return self.minor >= 36

    @property
    def image_volumes_counted(self) -> bool:
        """ImageLocality's ceiling counts the image volumes with the containers (1.37+); on 1.36
        they add to the sum only."""
        return self.minor >= 37


# component-helpers nodedeclaredfeatures/features/registry.go of each minor, the features whose
# InferForScheduling can say yes (the others only matter to pod updates); none of them has a
# MaxVersion. 1.35 registers RestartAllContainersOnContainerExits but leaves the plugin off.
RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
_NODE_FEATURES = {
    33: frozenset(), 34: frozenset(), 35: frozenset(),
    36: frozenset((RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK)),
    37: frozenset((RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK, VOLUME_BIND_MOUNT_OPTIONS)),
}


def parse(text: str) -> tuple[int, int]:
    """'1.33', 'v1.33.4', 'v1.33.4-eks-1a2b', '1.33+' -> (1, 33)."""
    m = _VERSION.match(text.strip())
    if not m:
        raise UnknownVersion(f"{text!r} is not a Kubernetes version (expected X.Y, e.g. {SUPPORTED[-1]})")
    return int(m.group(1)), int(m.group(2))


@functools.lru_cache(maxsize=64)  # the drain planner asks at every placement: the version text is parsed once
def rules_for(text: str | None) -> Rules:
    """The rules for a cluster of version `text`; the newest supported minor for None or "".
    A version outside the supported range gets the nearest supported minor's rules, with
    `clamped` saying so."""
    if not text:
        return NEWEST_RULES
    got = parse(text)
    if got < OLDEST:
        return Rules(OLDEST[1], f"{got[0]}.{got[1]}")
    if got > NEWEST:
        return Rules(NEWEST[1], f"{got[0]}.{got[1]}")
    return _BY_MINOR[got[1]]


def clamp_warning(rules: Rules) -> str | None:
    """The warning to print when the cluster's minor is not supported, else None."""
    if not rules.clamped:
        return None
    side = "older than the oldest" if rules.minor == OLDEST[1] else "newer than the newest"
    return (f"Kubernetes {rules.clamped} is {side} supported minor {rules.label}; answers follow "
            f"the {rules.label} scheduler (supported: {SUPPORTED[0]} to {SUPPORTED[-1]})")


_BY_MINOR = {m: Rules(m) for m in range(OLDEST[1], NEWEST[1] + 1)}
NEWEST_RULES = _BY_MINOR[NEWEST[1]]
