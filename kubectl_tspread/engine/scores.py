"""The default profile's Score plugins: where the scheduler puts a pod among the feasible nodes.

Each plugin scores a node 0..100 after its NormalizeScore; the total is Σ weight × score with
the default profile's weights (pkg/scheduler/apis/config/v1/default_plugins.go):

    TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2,
    InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1

The scheduler binds the pod to one of the nodes with the highest total, at random among
ties: `Scored.best` returns all of them, and the caller says when there is more than one.
PodTopologySpread's score is spread.score_nodes (with IgnoredNodes and the inclusion
policies, as the scorer applies them). The array forms of these formulas are in
engine/scorearrays.py, tested against these.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from kubectl_tspread.engine import nodematch
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.interpod import resolve
from kubectl_tspread.engine.podrequests import DEFAULT_MEMORY, DEFAULT_MILLI_CPU
from kubectl_tspread.model import Node, Pod

MAX_NODE_SCORE = 100
PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
LEAST_ALLOCATED = "NodeResourcesFit"
SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
IMAGE_LOCALITY = "ImageLocality"
WEIGHTS = {TAINT_TOLERATION: 3, NODE_AFFINITY: 2, LEAST_ALLOCATED: 1, SPREAD: 2, INTER_POD_AFFINITY: 2,
           BALANCED_ALLOCATION: 1, IMAGE_LOCALITY: 1}
# InterPodAffinityArgs.hardPodAffinityWeight's default: an existing pod's required affinity
# term that the incoming pod matches counts this much toward the existing pod's domain
HARD_POD_AFFINITY_WEIGHT = 1


def score_requests(pod: Pod) -> tuple[int, int]:
    """The (cpu, memory) LeastAllocated charges for `pod`: decode's per-container non-zero
    requests; a record made without containers counts as one container (a missing request
    is the default, an explicit 0 stays 0)."""
    if pod.score_requests is not None:
        return pod.score_requests
    req = pod.requests
    return req.get("cpu", DEFAULT_MILLI_CPU), req.get("memory", DEFAULT_MEMORY)


def placed_requests(pod: Pod) -> tuple[int, int]:
    """The (cpu, memory) LeastAllocated charges for the pod being placed: `score_requests`,
    except that its pod-level requests are left out (NodeResourcesFit's scorer never turns
    PodLevelResources on; the pods already on a node are charged with them)."""
    return pod.placed_score_requests if pod.placed_score_requests is not None else score_requests(pod)


def fit_requests(pod: Pod) -> tuple[int, int]:
    """The (cpu, memory) BalancedAllocation charges: the pod's requests as they are."""
    return pod.requests.get("cpu", 0), pod.requests.get("memory", 0)


@dataclass(frozen=True, slots=True)
class Usage:
    """What a node's pods already charge: Σ requests (BalancedAllocation) and Σ score_requests
    (LeastAllocated), each (cpu, memory)."""

    requested: tuple[int, int]
    nonzero: tuple[int, int]


def least_allocated(want: tuple[int, int], used: tuple[int, int], allocatable: tuple[int, int]) -> int:
    """NodeResourcesFit LeastAllocated: per resource with allocatable, (alloc − used − want) ×
    100 // alloc (0 when the requests pass it), averaged over those resources (weight 1 each).

    >>> least_allocated((1000, 0), (1000, 0), (4000, 8))  # cpu (4000-2000)*100/4000 = 50, memory 100
    75
    """
    total = count = 0
    for w, u, a in zip(want, used, allocatable):
        if a <= 0:
            continue  # a resource the node does not have is left out of the average
        count += 1
        requested = w + u
        total += 0 if requested > a else (a - requested) * MAX_NODE_SCORE // a
    return total // count if count else 0


def _fractions(requested: Iterable[int], allocatable: Iterable[int]) -> list[float]:
    return [min(float(r) / float(a), 1.0) for r, a in zip(requested, allocatable) if a > 0]


def _balance(fractions: Sequence[float]) -> int:
    """int((1 − std) × 100) of the resources' fractions (std of two: |f0 − f1| / 2)."""
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * float(MAX_NODE_SCORE))


def balance(requested: Iterable[int], allocatable: Iterable[int]) -> int:
    """A node's balance of cpu and memory at `requested`: BalancedAllocation's score before 1.36, and
    what it subtracts from 1.36 (the balance without the pod)."""
    return _balance(_fractions(requested, allocatable))


def _go_half(x: int) -> int:
    """x / 2 in Go's integer division (truncation toward zero)."""
    return x // 2 if x >= 0 else -((-x) // 2)


def balanced_allocation(want: tuple[int, int], used: tuple[int, int], allocatable: tuple[int, int],
                        improvement: bool = True) -> int:
    """NodeResourcesBalancedAllocation: from 1.36 (`improvement`, versions.Rules.balanced_improvement)
    how much the pod improves the balance of the node's cpu and memory fractions, 50 + (50 +
    balance with the pod − balance without) / 2; before, the balance with the pod.
    A pod requesting nothing is not scored (0 everywhere: the plugin skips).

    >>> balanced_allocation((1000, 1 << 30), (0, 0), (4000, 4 << 30))  # 1/4 and 1/4: balanced
    75
    >>> balanced_allocation((1000, 1 << 30), (0, 0), (4000, 4 << 30), improvement=False)
    100
    """
    if not any(want):
        return 0
    after = balance((u + w for u, w in zip(used, want)), allocatable)
    if not improvement:
        return after
    before = balance(used, allocatable)
    return MAX_NODE_SCORE // 2 + _go_half(MAX_NODE_SCORE // 2 + after - before)


def untolerated_prefer_no_schedule(pod: Pod, node: Node) -> int:
    """TaintToleration's raw score: the node's PreferNoSchedule taints that none of the pod's
    tolerations with effect PreferNoSchedule or empty tolerates."""
    taints = [t for t in node.taints if t.effect == PREFER_NO_SCHEDULE]
    if not taints:
        return 0
    tols = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    return sum(1 for t in taints if not any(tol.tolerates(t) for tol in tols))


# ImageLocality's bounds on the summed scaled sizes of a pod's images held by the node: at or
# below 23 MiB the node scores 0, at 1000 MiB per image the pod counts it scores 100
_MIB = 1024 * 1024
IMAGE_FLOOR = 23 * _MIB
IMAGE_CEILING_EACH = 1000 * _MIB


def image_name(name: str) -> str:
    """The name ImageLocality looks a pod's image up by among a node's image names: `:latest`
    added when the name carries no tag (no ':' after its last '/'; a digest's '@sha256:' has one).

    nginx → nginx:latest, registry.example:5000/app → registry.example:5000/app:latest,
    nginx:1.27 and nginx@sha256:ab… as they are."""
    return name if name.rfind(":") > name.rfind("/") else name + ":latest"


@dataclass(frozen=True, slots=True)
class ImageStates:
    """What ImageLocality knows of the cluster's images: per image name, its size and the
    number of nodes listing it, and the number of nodes. The scheduler's cache keeps, per name,
    the size the first node it learned the name from reports; its informer's first list comes
    in name order, so that is the first node by name listing it (nodes report one image's
    size alike, so this only decides between nodes that disagree)."""

    sizes: Mapping[str, int]
    holders: Mapping[str, int]
    nodes: int
    # the names whose holders do not all report the size kept (image_states_without)
    mixed: frozenset[str] = frozenset()

    def held(self, names: Iterable[str]) -> bool:
        """Whether some node holds one of `names` (else every node scores 0)."""
        return any(n in self.sizes for n in names)


def image_states(nodes: Iterable[Node]) -> ImageStates:
    """ImageStates of the cluster made of `nodes`."""
    sizes: dict[str, int] = {}
    holders: dict[str, int] = defaultdict(int)
    mixed: set[str] = set()
    count = 0
    for node in sorted(nodes, key=lambda n: n.name):
        count += 1
        for name, size in node.images.items():
            if sizes.setdefault(name, size) != size:
                mixed.add(name)
            holders[name] += 1
    return ImageStates(sizes, dict(holders), count, frozenset(mixed))


def image_states_without(states: ImageStates, gone: Node, nodes: Iterable[Node]) -> ImageStates:
    """image_states(nodes) from `states`, when `nodes` are the nodes it was made of less `gone`:
    each image `gone` lists loses a holder, one that no node lists any more is forgotten, and
    one whose holders report different sizes takes its first holder's size again (a drain
    that deletes its drained nodes asks this at every deletion, where a cluster's nodes list
    hundreds of thousands of images).

    nodes a {x: 5}, b {x: 7}, c {x: 7}; without a → x: size 7, 2 holders, 2 nodes."""
    sizes, holders = dict(states.sizes), dict(states.holders)
    again = []
    for name in gone.images:
        left = holders[name] - 1
        if left:
            holders[name] = left
            if name in states.mixed:
                again.append(name)
        else:
            del holders[name], sizes[name]
    if again:
        ordered = sorted(nodes, key=lambda n: n.name)  # once, not per image
        for name in again:
            sizes[name] = next(n.images[name] for n in ordered if name in n.images)
    return ImageStates(sizes, holders, states.nodes - 1, states.mixed)


def pod_images(pod: Pod, volumes: bool) -> tuple[str, ...]:
    """The image names ImageLocality sums for `pod`, each as it looks them up (image_name): its
    init containers' and containers', and with `volumes` (versions.Rules.image_volumes_summed)
    its image volumes' references."""
    names = pod.images
    if volumes:
        names += tuple(v.image for v in pod.volumes if v.image is not None)
    return tuple(map(image_name, names))


def image_count(pod: Pod, volumes: bool) -> int:
    """How many images ImageLocality's ceiling counts for `pod`: its init containers and
    containers, and with `volumes` (versions.Rules.image_volumes_counted) its image volumes."""
    return len(pod.images) + (sum(v.image is not None for v in pod.volumes) if volumes else 0)


def image_query(pod: Pod, states: ImageStates, rules) -> "tuple[ImageStates, tuple[str, ...], int] | None":
    """What ImageLocality scores `pod` with under a minor's `rules` (versions.Rules): the
    cluster's image states, the names it sums, the number of images its ceiling counts; None
    when no node holds one of those names (every node then scores 0)."""
    if not states.sizes:
        return None
    # a workload's pods share their images and volumes tuples: the drain planner asks once per replacement
    key = (id(pod.images), id(pod.volumes), id(states), id(rules))  # ids: hashing the Rules record costs more
    hit = _QUERIES.get(key)
    if hit is not None:  # an entry holds the four objects: no other takes their ids while it lives
        return hit[-1]
    names = pod_images(pod, rules.image_volumes_summed)
    got = (states, names, image_count(pod, rules.image_volumes_counted)) if states.held(names) else None
    if len(_QUERIES) >= 4096:
        _QUERIES.clear()
    _QUERIES[key] = (pod.images, pod.volumes, states, rules, got)
    return got


_QUERIES: dict[tuple, tuple] = {}


def scaled_image_size(states: ImageStates, name: str) -> int:
    """What a node holding image `name` adds to ImageLocality's sum: the image's size scaled by
    the share of the cluster's nodes holding it (float, truncated as Go's int64 conversion)."""
    return int(float(states.sizes[name]) * (states.holders[name] / states.nodes))


def image_sum(names: Sequence[str], node: Node, states: ImageStates) -> int:
    """ImageLocality's raw sum on `node` for a pod counting the images `names` (pod_images)."""
    held = node.images
    return sum(scaled_image_size(states, name) for name in names if name in held)


def image_priority(total: int, count: int) -> int:
    """ImageLocality's score (it has no NormalizeScore) from a raw sum and the number of images
    the pod counts: the sum clamped to [IMAGE_FLOOR, IMAGE_CEILING_EACH × count] and mapped
    linearly onto 0..100.

    one image of 500 MiB held by 2 of 4 nodes: scaled 250 MiB → 100 × 227 / 977

    >>> image_priority(250 * 2**20, 1)
    23
    """
    ceiling = IMAGE_CEILING_EACH * count
    if total < IMAGE_FLOOR:
        total = IMAGE_FLOOR
    elif total > ceiling:
        total = ceiling
    # a pod counting no image: the ceiling is 0, and 0 over a negative span is 0 (Go's too)
    return MAX_NODE_SCORE * (total - IMAGE_FLOOR) // (ceiling - IMAGE_FLOOR)


def image_locality(names: Sequence[str], node: Node, states: ImageStates, count: int | None = None) -> int:
    """ImageLocality's score of `node` for a pod summing the images `names` (pod_images) and
    counting `count` of them (image_count; None: as many as it sums)."""
    return image_priority(image_sum(names, node, states), len(names) if count is None else count)


def preferred_node_affinity(pod: Pod, node: Node) -> int:
    """NodeAffinity's raw score: Σ weight of the preferred terms the node matches (an empty
    term matches nothing)."""
    return sum(w for w, term in pod.preferred_node_affinity if w and nodematch.term_matches(term, node))


def normalize_default(raw: Sequence[int], reverse: bool = False) -> list[int]:
    """helper.DefaultNormalizeScore: 100 × s // max (100 − that when `reverse`); with max 0,
    all 100 when reversed, else unchanged.

    >>> normalize_default([0, 1, 2], reverse=True), normalize_default([0, 3, 6])
    ([100, 50, 0], [0, 50, 100])
    """
    hi = max(raw, default=0)
    if hi <= 0:
        return [MAX_NODE_SCORE] * len(raw) if reverse else list(raw)
    out = [MAX_NODE_SCORE * s // hi for s in raw]
    return [MAX_NODE_SCORE - s for s in out] if reverse else out


def normalize_min_max(raw: Sequence[int]) -> list[int]:
    """InterPodAffinity's NormalizeScore: int(100 × (s − min) / (max − min)), all 0 when equal.

    >>> normalize_min_max([-100, 0, 100])
    [0, 50, 100]
    """
    if not raw:
        return []
    lo, hi = min(raw), max(raw)
    if hi == lo:
        return [0] * len(raw)
    return [int(float(MAX_NODE_SCORE) * (float(s - lo) / float(hi - lo))) for s in raw]


def interpod_has_terms(pod: Pod) -> bool:
    """Whether the pod's own preferred terms make InterPodAffinity read every existing pod."""
    return bool(pod.preferred_pod_affinity or pod.preferred_pod_anti_affinity)


def scores_affinity(pod: Pod) -> bool:
    """Whether an existing pod's terms can give another pod an InterPodAffinity score."""
    return bool(pod.pod_affinity or pod.preferred_pod_affinity or pod.preferred_pod_anti_affinity)


def interpod_topology(index: ClusterIndex, pod: Pod) -> dict[tuple[str, str], int] | None:
    """InterPodAffinity's PreScore: (topologyKey, value) -> Σ weights, from the pod's preferred
    terms over every existing pod, and every existing pod's required (weight 1) and preferred
    terms toward the pod; anti-affinity subtracts. None when nothing scores (the plugin skips)."""
    own = interpod_has_terms(pod)
    mine = [(w, resolve(t, pod), 1) for w, t in pod.preferred_pod_affinity]
    mine += [(w, resolve(t, pod), -1) for w, t in pod.preferred_pod_anti_affinity]
    # a pair met with weights that cancel still makes the plugin score (all equal: 0)
    out: dict[tuple[str, str], int] = defaultdict(int)
    for name, pods in index.pods_by_node.items():
        node = index.nodes.get(name)
        if node is None or not node.labels:
            continue
        for p in pods:
            if p.key == pod.key or not (own or scores_affinity(p)):
                continue
            terms = [(w, t, sign) for w, t, sign in mine if t.matches(p)]
            theirs = [(HARD_POD_AFFINITY_WEIGHT, t, 1) for t in p.pod_affinity]
            theirs += [(w, t, 1) for w, t in p.preferred_pod_affinity]
            theirs += [(w, t, -1) for w, t in p.preferred_pod_anti_affinity]
            terms += [(w, r, sign) for w, t, sign in theirs if (r := resolve(t, p)).matches(pod)]
            for w, t, sign in terms:
                value = node.labels.get(t.topology_key)
                if value is not None:
                    out[(t.topology_key, value)] += w * sign
    return dict(out) if out else None


def interpod_raw(topology: Mapping[tuple[str, str], int], node: Node) -> int:
    """InterPodAffinity's raw score of a node: Σ over the topology pairs it carries."""
    return sum(v for (key, value), v in topology.items() if node.labels.get(key) == value)


@dataclass(frozen=True, slots=True)
class Scored:
    """Every plugin's normalised score per node (unweighted) and the weighted totals."""

    plugins: Mapping[str, Mapping[str, int]]
    total: Mapping[str, int] = field(default_factory=dict)

    def best(self) -> tuple[str, ...]:
        """The nodes with the highest total, by name: more than one is a tie the scheduler
        breaks at random."""
        if not self.total:
            return ()
        hi = max(self.total.values())
        return tuple(sorted(n for n, s in self.total.items() if s == hi))


def score_nodes(pod: Pod, nodes: Sequence[Node], usage: Callable[[str], Usage], spread_scores: Mapping[str, int],
                topology: Mapping[tuple[str, str], int] | None, improvement: bool = True,
                images: tuple[ImageStates, tuple[str, ...], int] | None = None) -> Scored:
    """Every default Score plugin over the feasible `nodes`. `usage` gives each node's charged
    requests, `spread_scores` is spread.score_nodes (normalised; {} when the pod has no soft
    constraint), `topology` interpod_topology (None: InterPodAffinity skips), `images`
    image_query's answer (None: ImageLocality scores 0 everywhere)."""
    names = [n.name for n in nodes]
    want, fit = placed_requests(pod), fit_requests(pod)
    least, balanced = [], []
    for n in nodes:
        u = usage(n.name)
        alloc = (n.allocatable.get("cpu", 0), n.allocatable.get("memory", 0))
        least.append(least_allocated(want, u.nonzero, alloc))
        balanced.append(balanced_allocation(fit, u.requested, alloc, improvement))
    plugins = {
        TAINT_TOLERATION: normalize_default([untolerated_prefer_no_schedule(pod, n) for n in nodes], reverse=True),
        NODE_AFFINITY: normalize_default([preferred_node_affinity(pod, n) for n in nodes])
        if pod.preferred_node_affinity else [0] * len(nodes),
        LEAST_ALLOCATED: least,
        SPREAD: [spread_scores.get(name, 0) for name in names],
        INTER_POD_AFFINITY: normalize_min_max([interpod_raw(topology, n) for n in nodes])
        if topology else [0] * len(nodes),
        BALANCED_ALLOCATION: balanced,
        IMAGE_LOCALITY: [image_locality(images[1], n, images[0], images[2]) for n in nodes]
        if images is not None else [0] * len(nodes),
    }
    total = {name: sum(WEIGHTS[p] * s[i] for p, s in plugins.items()) for i, name in enumerate(names)}
    return Scored({p: dict(zip(names, s)) for p, s in plugins.items()}, total)
