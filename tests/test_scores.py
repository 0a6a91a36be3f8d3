"""engine/scores.py per plugin, on worked examples of upstream's *_test.go cases (the facts,
not the code), and engine/scorearrays.py held against it: the only place the scalar and
array forms of the score formulas are compared (spread.py's own formulas, the Filter's and
the spread score's terms: tests/test_spread.py)."""

from __future__ import annotations

import doctest
import math
import random

import numpy as np
import pytest

from conftest import HOSTNAME_KEY, ZONE_KEY, make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.engine import scorearrays, scores, spread, versions
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import Requirement, Selector
from kubectl_tspread.model import NodeSelectorTerm, PodAffinityTerm, Taint, Toleration, Volume
from kubectl_tspread.snapshot.decode import nonzero_requests

SOFT = "ScheduleAnyway"


# -- NodeResourcesFit LeastAllocated (least_allocated_test.go) ------------------------------

@pytest.mark.parametrize("want, used, alloc, expected", [
    # cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 -> 37
    ((3000, 5000), (0, 0), (4000, 10000), 37),
    ((3000, 5000), (0, 0), (6000, 10000), 50),
    # pods scheduled: cpu (10000-6000)*100/10000 = 40, memory (20000-5000)*100/20000 = 75 -> 57
    ((3000, 5000), (3000, 0), (10000, 20000), 57),
    ((3000, 5000), (3000, 5000), (10000, 50000), 60),
    # cpu past the capacity scores 0: (0 + 100) / 2; memory half used: (0 + 50) / 2
    ((3000, 0), (3000, 0), (4000, 10000), 50),
    ((3000, 0), (3000, 5000), (4000, 10000), 25),
    # a node without the resource leaves it out of the average; without any, 0
    ((1000, 0), (0, 0), (0, 10000), 100),
    ((1000, 0), (0, 0), (0, 0), 0),
], ids=["nothing scheduled, small node 37", "nothing scheduled, big node 50", "pods scheduled 57",
        "differently sized nodes 60", "requests past the cpu capacity 50", "and half the memory used 25",
        "no cpu allocatable: memory alone", "nothing allocatable: 0"])
def test_least_allocated(want, used, alloc, expected):
    assert scores.least_allocated(want, used, alloc) == expected


# -- NodeResourcesBalancedAllocation (balanced_allocation_test.go) --------------------------

@pytest.mark.parametrize("want, used, alloc, expected", [
    # cpu 0 -> 3000/4000 (75 %), memory 0 -> 5000/10000 (50 %): balance 100 -> 87, 50 + 37/2 = 68
    ((3000, 5000), (0, 0), (4000, 10000), 68),
    ((3000, 5000), (0, 0), (6000, 10000), 75),
    # cpu 30 % -> 60 %, memory 0 -> 25 %: balance 85 -> 82 -> 73
    ((3000, 5000), (3000, 0), (10000, 20000), 73),
    ((3000, 5000), (3000, 5000), (10000, 20000), 74),
    ((3000, 5000), (3000, 5000), (10000, 50000), 70),
    # to the extremes: 50 -> 100 gives 100, 100 -> 50 gives 50
    ((0, 5000), (3000, 0), (3000, 5000), 100),
    ((0, 5000), (0, 0), (3000, 5000), 50),
    # a pod requesting nothing is skipped
    ((0, 0), (3000, 0), (3000, 5000), 0),
], ids=["nothing scheduled, small node 68", "nothing scheduled, big node 75", "pods scheduled 73",
        "pods scheduled 74", "differently sized nodes 70", "to the maximum 100", "to the minimum 50",
        "nothing requested: skipped"])
def test_balanced_allocation(want, used, alloc, expected):
    assert scores.balanced_allocation(want, used, alloc) == expected


@pytest.mark.parametrize("want, used, alloc, expected", [
    # before 1.36 the score is the balance with the pod: 75 % and 50 % -> std 0.125 -> 87
    ((3000, 5000), (0, 0), (4000, 10000), 87),
    ((3000, 5000), (3000, 0), (10000, 20000), 82),
    ((0, 5000), (3000, 0), (3000, 5000), 100),
    ((0, 0), (3000, 0), (3000, 5000), 0),
], ids=["nothing scheduled 87", "pods scheduled 82", "balanced 100", "nothing requested: skipped"])
def test_balanced_allocation_before_136_scores_the_balance_with_the_pod(want, used, alloc, expected):
    assert scores.balanced_allocation(want, used, alloc, improvement=False) == expected
    got = scorearrays.balanced_allocation(np.array([[alloc[0]], [alloc[1]]]), np.array([[used[0]], [used[1]]]),
                                          want, improvement=False)
    assert got.tolist() == [expected]


def test_balanced_allocation_halves_as_go_does_below_zero():
    """From 1.36 the score is 50 + (50 + after − before) / 2 in Go's integer division, which
    truncates toward zero. Each balance is 50 to 100 for requests an API server accepts; a dump
    may hold negative ones, and then the inner sum can be negative and odd: −51 / 2 is −25 (not
    floor's −26), so the score is 25."""
    want, used, alloc = (-4080, 4000), (0, 0), (4000, 4000)
    assert 50 + scores.balance((-4080, 4000), alloc) - scores.balance(used, alloc) == -51
    assert scores.balanced_allocation(want, used, alloc) == 25
    got = scorearrays.balanced_allocation(np.array([[alloc[0]], [alloc[1]]]), np.array([[used[0]], [used[1]]]), want)
    assert got.tolist() == [25]


# -- the requests the scores charge ---------------------------------------------------------

def _c(requests=None, **kw):
    return {"name": "c", **({"resources": {"requests": requests}} if requests is not None else {}), **kw}


MI = 1024 * 1024


@pytest.mark.parametrize("spec, expected", [
    ({"containers": [_c()]}, (100, 200 * MI)),
    ({"containers": [_c(), _c()]}, (200, 400 * MI)),
    ({"containers": [_c({"cpu": "0", "memory": "0"})]}, (0, 0)),
    ({"containers": [_c({"cpu": "250m"}), _c({"memory": "1Mi"})]}, (350, 201 * MI)),
    ({"containers": [_c({"cpu": "1"})], "initContainers": [_c({"cpu": "2"})]}, (2000, 200 * MI)),
    ({"containers": [_c({"cpu": "1"})], "initContainers": [_c({"cpu": "500m"}, restartPolicy="Always")]},
     (1500, 400 * MI)),
    ({"containers": [_c()], "overhead": {"cpu": "250m", "memory": "120Mi"}}, (350, 320 * MI)),
], ids=["a container without requests: the defaults", "the defaults per container",
        "an explicit 0 stays 0", "a missing resource defaulted per container",
        "an init container larger than the containers", "a sidecar adds to the containers",
        "overhead on top"])
def test_nonzero_requests(spec, expected):
    assert nonzero_requests(spec) == expected


# -- TaintToleration (taint_toleration_test.go) ---------------------------------------------

def _prefer(key, value):
    return Taint(key, value, scores.PREFER_NO_SCHEDULE)


@pytest.mark.parametrize("tolerations, taints, expected", [
    # a tolerated taint scores like no taint, an untolerated one lowest
    ((Toleration("foo", "Equal", "bar", "PreferNoSchedule"),),
     [[_prefer("foo", "bar")], [_prefer("foo", "blah")]], [100, 0]),
    # the more untolerated taints, the lower: 0, 1, 2 of them -> 100, 50, 0
    ((Toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule"),),
     [[], [_prefer("cpu-type", "arm64")] + [_prefer("disk", "hdd")],
      [_prefer("cpu-type", "x86"), _prefer("disk", "hdd")]], [100, 50, 0]),
    # only PreferNoSchedule taints count
    ((), [[Taint("foo", "bar", "NoSchedule")], [_prefer("foo", "bar")]], [100, 0]),
    # a toleration without effect tolerates PreferNoSchedule; one for NoSchedule does not
    ((Toleration("foo", "Exists", "", ""),), [[_prefer("foo", "x")], []], [100, 100]),
    ((Toleration("foo", "Exists", "", "NoSchedule"),), [[_prefer("foo", "x")], []], [0, 100]),
], ids=["tolerated beats untolerated", "more untolerated taints score lower", "only PreferNoSchedule counts",
        "an empty effect tolerates", "a NoSchedule toleration does not"])
def test_taint_toleration(tolerations, taints, expected):
    pod = make_pod("p", tolerations=tolerations)
    nodes = [make_node(f"n{i}", taints=t) for i, t in enumerate(taints)]
    raw = [scores.untolerated_prefer_no_schedule(pod, n) for n in nodes]
    assert scores.normalize_default(raw, reverse=True) == expected


# -- NodeAffinity (node_affinity_test.go) ---------------------------------------------------

def _term(**labels):
    return NodeSelectorTerm(tuple(Requirement(k, "In", (v,)) for k, v in labels.items()))


def test_node_affinity_sums_the_matching_terms_and_scales_to_the_best():
    """Terms foo=bar (2), key=value (4), both (5): a node with both labels matches all three
    (11 -> 100), one with foo=bar only 2 (100 × 2 // 11 = 18), one without 0."""
    pod = make_pod("p", preferred_node_affinity=((2, _term(foo="bar")), (4, _term(key="value")),
                                                 (5, _term(foo="bar", key="value"))))
    nodes = [make_node("n1", labels={"foo": "bar"}), make_node("n2", labels={"foo": "bar", "key": "value"}),
             make_node("n3")]
    raw = [scores.preferred_node_affinity(pod, n) for n in nodes]
    assert raw == [2, 11, 0]
    assert scores.normalize_default(raw) == [18, 100, 0]


def test_node_affinity_without_a_match_anywhere_is_all_zero():
    pod = make_pod("p", preferred_node_affinity=((5, _term(foo="bar")),))
    assert scores.normalize_default([scores.preferred_node_affinity(pod, make_node("n"))]) == [0]


# -- InterPodAffinity (interpodaffinity/scoring_test.go) ------------------------------------

def _pod_term(key=ZONE_KEY, **labels):
    return PodAffinityTerm(Selector.from_match_labels(labels), key)


def _interpod(incoming, existing, nodes):
    index = ClusterIndex(make_snapshot(nodes, existing + [incoming]))
    topology = scores.interpod_topology(index, incoming)
    if topology is None:
        return None
    return scores.normalize_min_max([scores.interpod_raw(topology, n) for n in nodes])


ZONES = [make_node("a1", zone="a"), make_node("a2", zone="a"), make_node("b1", zone="b")]


@pytest.mark.parametrize("incoming, existing, expected", [
    # the pod prefers a zone with a db pod: zone a 100, zone b 0
    (make_pod("in", preferred_pod_affinity=((5, _pod_term(app="db")),)),
     [make_pod("db", node="a1", labels={"app": "db"})], [100, 100, 0]),
    # anti-affinity the other way round
    (make_pod("in", preferred_pod_anti_affinity=((5, _pod_term(app="db")),)),
     [make_pod("db", node="a1", labels={"app": "db"})], [0, 0, 100]),
    # an existing pod's required affinity toward the pod counts (hardPodAffinityWeight 1)
    (make_pod("in", labels={"app": "web"}),
     [make_pod("db", node="b1", labels={"app": "db"}, pod_affinity=(_pod_term(app="web"),))], [0, 0, 100]),
    # an existing pod's preferred anti-affinity toward the pod
    (make_pod("in", labels={"app": "web"}),
     [make_pod("db", node="b1", preferred_pod_anti_affinity=((10, _pod_term(app="web")),))], [100, 100, 0]),
], ids=["preferred affinity", "preferred anti-affinity", "existing pod's required affinity",
        "existing pod's preferred anti-affinity"])
def test_interpod_affinity(incoming, existing, expected):
    assert _interpod(incoming, existing, ZONES) == expected


def test_interpod_affinity_skips_without_terms():
    assert _interpod(make_pod("in"), [make_pod("x", node="a1")], ZONES) is None


def test_min_max_normalisation():
    assert scores.normalize_min_max([-100, 0, 100]) == [0, 50, 100]
    assert scores.normalize_min_max([7, 7]) == [0, 0]


# -- PodTopologySpread: IgnoredNodes --------------------------------------------------------

def test_spread_score_leaves_out_nodes_lacking_a_soft_key():
    """A ScheduleAnyway constraint on `rack`, which n3 lacks: n3 is left out (score 0) and
    the other two are scored among themselves (rack r1 holds a web pod: r2 scores 100)."""
    nodes = [make_node("n1", labels={"rack": "r1"}), make_node("n2", labels={"rack": "r2"}), make_node("n3")]
    web = make_pod("w", node="n1", labels={"app": "web"})
    pod = make_pod("in", labels={"app": "web"}, spread=[make_constraint("rack", mode=SOFT)])
    state = spread.compute(ClusterIndex(make_snapshot(nodes, [web, pod])), pod)
    got = spread.score_nodes(state, nodes)
    assert got["n3"] == 0 and got["n2"] == 100 and got["n1"] < 100


# -- the total and ties ---------------------------------------------------------------------

def test_best_returns_every_node_of_the_highest_total():
    assert scores.Scored({}, {"b": 5, "a": 5, "c": 1}).best() == ("a", "b")
    assert scores.Scored({}, {"b": 5, "a": 4}).best() == ("b",)


def test_weights_are_the_default_profiles():
    assert scores.WEIGHTS == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
                              "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}


# -- scalar and array forms, side by side ---------------------------------------------------

def _random_nodes(rng: random.Random, n: int, usable_only: bool = False):
    allocs = [(4000, 16 << 30), (150, 300 << 20), (64000, 512 << 30), (3500, 6000 << 20)]
    if not usable_only:  # nodes without cpu or memory take the general path of the arrays
        allocs += [(0, 8 << 30), (2000, 0)]
    taints = [(), (_prefer("dedicated", "infra"),), (_prefer("a", "b"), _prefer("c", "d")),
              (Taint("x", "y", "NoSchedule"),)]
    out = []
    for i in range(n):
        cpu, mem = rng.choice(allocs)
        labels = {"pool": "blue"} if rng.random() < 0.4 else {}
        images = {name: size for name, size in _IMAGES.items() if rng.random() < 0.4}
        out.append(make_node(f"n{i:02d}", zone=rng.choice("abc"), labels=labels, taints=rng.choice(taints),
                             allocatable={"cpu": cpu, "memory": mem, "pods": 110}, images=images))
    return out


_MIB = 1 << 20
# sizes below ImageLocality's floor, between floor and ceiling, and past one image's ceiling
_IMAGES = {"nginx:latest": 300 * _MIB, "busybox:latest": 5 * _MIB, "app:v2": 1400 * _MIB, "db:7": 900 * _MIB}


@pytest.mark.parametrize("seed", range(8))
def test_arrays_score_like_the_scalar_forms(seed):
    """Each plugin and the total over random nodes and usages: nodes without cpu or memory
    (seeds 0-3; 4-7 every node has both, the arrays' short path),
    requests past the allocatable, pods requesting nothing, PreferNoSchedule taints, preferred
    node affinity, InterPodAffinity raw scores."""
    rng = random.Random(seed)
    nodes = _random_nodes(rng, 20, usable_only=seed >= 4)
    usage = {n.name: scores.Usage((rng.choice([0, 500, 3000]), rng.choice([0, 1 << 30, 9 << 30])),
                                  (rng.choice([100, 700, 5000]), rng.choice([200 << 20, 3 << 30]))) for n in nodes}
    for requests, tol in [({}, ()), ({"cpu": 250, "memory": 1 << 30}, (Toleration("a", "Exists"),)),
                          ({"cpu": 0, "memory": 0}, ()), ({"cpu": 3900}, ())]:
        pod = make_pod("in", requests=requests, tolerations=tol,
                       preferred_node_affinity=((rng.choice([10, 50]), _term(pool="blue")),) if seed % 2 else (),
                       images=tuple(rng.sample(sorted(_IMAGES) + ["none:1"], rng.randint(0, 3))),
                       volumes=(Volume("model", image="db:7"),) if rng.random() < 0.5 else ())
        states = scores.image_states(nodes)
        # the names summed and the count of the ceiling: 1.37's rule on even seeds, 1.33's on odd
        images = scores.image_query(pod, states, versions.rules_for("1.37" if seed % 2 == 0 else "1.33"))
        counted = images[1] if images else ()
        spread_scores = {n.name: rng.randint(0, 100) for n in nodes} if seed % 3 else {}
        topology = {(ZONE_KEY, "a"): rng.randint(-5, 5), (ZONE_KEY, "b"): 3} if seed % 4 == 1 else None
        scalar = scores.score_nodes(pod, nodes, usage.__getitem__, spread_scores, topology, True, images)
        alloc = np.array([[n.allocatable["cpu"] for n in nodes], [n.allocatable["memory"] for n in nodes]])
        nonzero = np.array([[usage[n.name].nonzero[k] for n in nodes] for k in (0, 1)])
        used = np.array([[usage[n.name].requested[k] for n in nodes] for k in (0, 1)])
        want = scores.score_requests(pod)
        assert scorearrays.least_allocated(alloc, nonzero, want).tolist() == \
            [scalar.plugins[scores.LEAST_ALLOCATED][n.name] for n in nodes]
        assert scorearrays.balanced_allocation(alloc, used, scores.fit_requests(pod)).tolist() == \
            [scalar.plugins[scores.BALANCED_ALLOCATION][n.name] for n in nodes]
        # the balance without the pod, kept per node by a caller (vector.NodeTable), is the array form's own
        before = np.array([scores.balance(usage[n.name].requested, (n.allocatable["cpu"], n.allocatable["memory"]))
                           for n in nodes])
        assert scorearrays.balanced_allocation(alloc, used, scores.fit_requests(pod), True, before).tolist() == \
            [scalar.plugins[scores.BALANCED_ALLOCATION][n.name] for n in nodes]
        soft = np.array([spread_scores[n.name] for n in nodes]) if spread_scores else None
        sums = (np.array([scores.image_sum(counted, n, states) for n in nodes]), images[2]) if images else None
        assert (scorearrays.image_priority(*sums).tolist() if sums else [0] * len(nodes)) == \
            [scalar.plugins[scores.IMAGE_LOCALITY][n.name] for n in nodes]
        totals = scorearrays.total(pod, len(nodes), nodes.__getitem__, alloc, nonzero, used, soft, None, topology,
                                   True, scorearrays.image_priority(*sums) if sums else None)
        assert totals.tolist() == [scalar.total[n.name] for n in nodes]
        by_name = sorted(range(len(nodes)), key=lambda i: nodes[i].name)
        rank = np.empty(len(nodes), dtype=np.int64)
        rank[by_name] = np.arange(len(nodes))
        assert [nodes[i].name for i in scorearrays.best(totals, rank).tolist()] == list(scalar.best())


@pytest.mark.parametrize("seed", range(6))
def test_normalisations_match(seed):
    rng = np.random.default_rng(seed)
    raw = rng.integers(-20 if seed % 2 else 0, 40, 25)
    assert scorearrays.normalize_min_max(raw).tolist() == scores.normalize_min_max(raw.tolist())
    plain = np.abs(raw) if seed % 3 else np.zeros(25, dtype=np.int64)
    for reverse in (False, True):
        assert scorearrays.normalize_default(plain, reverse).tolist() == \
            scores.normalize_default(plain.tolist(), reverse)


@pytest.mark.parametrize("all_keys", [True, False], ids=["explicit", "defaulted"])
@pytest.mark.parametrize("seed", range(6))
def test_spread_scores_over_arrays_are_score_nodes(seed, all_keys):
    """scorearrays.spread_scores against spread.score_nodes on random clusters with a soft zone
    constraint, a soft `rack` one that some nodes lack and a soft hostname one: explicit
    constraints leave a node lacking a key out (IgnoredNodes), defaulted ones only its term."""
    import dataclasses

    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", zone=rng.choice("abc"),
                       labels={"rack": f"r{rng.randint(1, 3)}"} if rng.random() < 0.6 else {}) for i in range(12)]
    pods = [make_pod(f"w{i}", node=rng.choice(nodes).name, labels={"app": "web"}) for i in range(15)]
    pod = make_pod("in", labels={"app": "web"}, spread=[make_constraint(ZONE_KEY, max_skew=2, mode=SOFT),
                                                         make_constraint("rack", max_skew=2, mode=SOFT),
                                                         make_constraint(HOSTNAME_KEY, max_skew=3, mode=SOFT)])
    state = spread.compute(ClusterIndex(make_snapshot(nodes, pods + [pod])), pod)
    state = dataclasses.replace(state, require_all_soft_keys=all_keys)
    want = spread.score_nodes(state, nodes)
    at = lambda kept: nodes if kept is None else [nodes[i] for i in kept]  # noqa: E731

    def lacking(cs):
        key = cs.constraint.topology_key
        return np.array([key not in n.labels for n in nodes])

    def counts(cs, kept):
        key = cs.constraint.topology_key
        return np.array([cs.node_counts.get(n.name, 0) if key == HOSTNAME_KEY else cs.count(n.labels.get(key, ""))
                         for n in at(kept)])

    def distinct(cs, kept):
        assert cs.constraint.topology_key != HOSTNAME_KEY
        return len({n.labels.get(cs.constraint.topology_key, "") for n in at(kept)})

    got = scorearrays.spread_scores(state.soft, all_keys, len(nodes), lacking, counts, distinct)
    assert got.tolist() == [want[n.name] for n in nodes]
    assert len(set(want.values())) > 1


@pytest.mark.parametrize("module", [scores, scorearrays], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_the_worked_examples_hold(module):
    failed, attempted = doctest.testmod(module)
    assert failed == 0 and attempted > 0


@pytest.mark.parametrize("seed", range(8))
def test_spread_normalize_is_the_scalar_rounding_and_normalisation(seed):
    """scorearrays.spread_normalize against score_nodes' rounding and spread._normalize, node
    by node: raw totals that round to all zeros (every node 100), halves (rounded up), some or
    every node left out (IgnoredNodes: 0), one node."""
    rng = np.random.default_rng(seed)
    for n in (1, 2, 9, 30):
        total = rng.choice([0.0, 0.4, 2.5, 3.2, 7.5, 11.9, 40.0], n) if seed % 4 else np.zeros(n)
        for considered in (None, rng.random(n) < 0.6, np.zeros(n, dtype=bool)):
            names = [f"n{i}" for i in range(n)]
            raw = {name: int(math.floor(t + 0.5)) for name, t, keep in
                   zip(names, total.tolist(), [True] * n if considered is None else considered.tolist()) if keep}
            want = spread._normalize(raw, names)
            assert scorearrays.spread_normalize(total, considered).tolist() == [want[name] for name in names]


def test_the_placed_pods_score_leaves_its_pod_level_requests_out():
    """NodeResourcesFit's scorer never turns PodLevelResources on for the pod being placed, while
    a node's pods are charged with theirs (kube-scheduler 1.37's own scores: tests/test_conformance.py)."""
    from kubectl_tspread.snapshot import decode

    spec = {"containers": [_c({"memory": "3Gi"})], "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}
    pod = decode.pod({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})
    assert pod.score_requests == (2000, 512 * 1024 * 1024)  # charged so once it is on a node
    assert scores.placed_requests(pod) == (100, 3 * 1024 ** 3)  # the containers', cpu defaulted
    plain = decode.pod({"metadata": {"name": "q", "namespace": "default"}, "spec": {"containers": [_c()]}})
    assert plain.placed_score_requests is None and scores.placed_requests(plain) == plain.score_requests


# -- ImageLocality ----------------------------------------------------------------------------

@pytest.mark.parametrize("name,looked_up", [
    ("nginx", "nginx:latest"), ("nginx:1.27", "nginx:1.27"),
    ("registry.example:5000/app", "registry.example:5000/app:latest"),
    ("registry.example:5000/app:v1", "registry.example:5000/app:v1"), ("nginx@sha256:ab12", "nginx@sha256:ab12"),
    ("", ":latest"),
])
def test_image_names_are_looked_up_with_a_tag(name, looked_up):
    assert scores.image_name(name) == looked_up


def _imaged(name, **images):
    return make_node(name, images={k.replace("_", ":"): v * _MIB for k, v in images.items()})


@pytest.mark.parametrize("names,expected", [
    # 500 MiB held by 2 of 4 nodes: 250 MiB scaled, 100 × (250 − 23) / (1000 − 23) → 23
    (("nginx:latest",), 23),
    # a second image counted but not held raises the ceiling: 100 × 227 / 1977 → 11
    (("nginx:latest", "none:1"), 11),
    # held by every node at 4000 MiB: past one image's 1000 MiB ceiling → 100
    (("big:1",), 100),
    # 40 MiB held by 1 of 4: 10 MiB scaled, under the 23 MiB floor → 0
    (("small:1",), 0),
    # an image listed twice counts twice, each toward the sum and the ceiling: 500 / 2000 → 100 × 477 / 1977 = 24
    (("nginx:latest", "nginx:latest"), 24),
    ((), 0),
])
def test_image_locality_scales_by_spread_and_clamps(names, expected):
    nodes = [_imaged("a", nginx_latest=500, big_1=4000, small_1=40), _imaged("b", nginx_latest=500, big_1=4000),
             _imaged("c", big_1=4000), _imaged("d", big_1=4000)]
    assert scores.image_locality(names, nodes[0], scores.image_states(nodes)) == expected


def test_image_states_take_a_names_size_from_the_first_node_by_name():
    """Nodes reporting one name with two sizes: the scheduler's cache keeps the first node's it
    learned the name from (its first list is in name order), and counts every node holding it."""
    states = scores.image_states([_imaged("b", app_v1=900), _imaged("a", app_v1=100), _imaged("c")])
    assert states.sizes["app:v1"] == 100 * _MIB and states.holders["app:v1"] == 2 and states.nodes == 3


@pytest.mark.parametrize("minor,expected", [
    (35, 0),  # only the containers' images: the node holds none of them
    (36, 100 * 777 // 977),  # the volume's image adds to the sum; the ceiling counts the one container
    (37, 100 * 777 // 1977),  # and from 1.37 the ceiling counts the volume too
])
def test_image_volumes_add_to_the_sum_from_136_and_to_the_ceiling_from_137(minor, expected):
    from kubectl_tspread.engine.versions import rules_for
    pod = make_pod("p", images=("busybox",), volumes=(Volume("m", image="model:v3"), Volume("e", empty_dir=True)))
    assert scores.pod_images(pod, volumes=False) == ("busybox:latest",)
    assert scores.pod_images(pod, volumes=True) == ("busybox:latest", "model:v3")
    assert (scores.image_count(pod, False), scores.image_count(pod, True)) == (1, 2)
    # the volume's image: 1600 MiB held by 1 of 2 nodes, 800 MiB scaled
    nodes = [_imaged("a", model_v3=1600), _imaged("b")]
    query = scores.image_query(pod, scores.image_states(nodes), rules_for(f"1.{minor}"))
    got = scores.image_locality(query[1], nodes[0], query[0], query[2]) if query else 0
    assert got == expected


def test_image_query_answers_each_minor_for_the_same_pod_and_states():
    """image_query is memoised per images, volumes, image states and rules: asked for one pod
    and one cluster under three minors, each gets its own (a drain planner asks at every
    placement; a memo blind to the minor would answer 1.35's question with 1.37's names)."""
    from kubectl_tspread.engine.versions import rules_for
    pod = make_pod("p", images=("busybox",), volumes=(Volume("m", image="model:v3"),))
    states = scores.image_states([_imaged("a", model_v3=1600), _imaged("b")])
    for _ in range(2):  # the second round from the memo
        assert scores.image_query(pod, states, rules_for("1.35")) is None  # the node holds no container image
        assert scores.image_query(pod, states, rules_for("1.36"))[1:] == (("busybox:latest", "model:v3"), 1)
        assert scores.image_query(pod, states, rules_for("1.37"))[1:] == (("busybox:latest", "model:v3"), 2)


def test_score_nodes_reports_image_locality_per_node():
    nodes = [_imaged("a", nginx_latest=600), make_node("b")]
    pod = make_pod("p", images=("nginx:latest",))
    usage = {n: scores.Usage((0, 0), (0, 0)) for n in "ab"}.__getitem__
    scored = scores.score_nodes(pod, nodes, usage, {}, None, True, (scores.image_states(nodes), pod.images, 1))
    # 600 MiB held by 1 of 2: 300 → 100 × 277 / 977 = 28
    assert scored.plugins[scores.IMAGE_LOCALITY] == {"a": 28, "b": 0}
    assert scored.total["a"] - scored.total["b"] == 28
    assert scores.score_nodes(pod, nodes, usage, {}, None).plugins[scores.IMAGE_LOCALITY] == {"a": 0, "b": 0}
