"""The drain planner's array fast paths must give exactly the answers of the plain code:

- `Placer._vector` (views/drain/core/vector.py) against the node-by-node walk (`Placer.walk`, the
  engine's filters node by node, which places the pods the arrays do not cover): same node,
  same feasible nodes in walk order, same accepting domains and the same scheduler start
  index afterwards, placement after placement on a changing cluster; a pod the fast path does
  not take (an extended resource) or that fits nowhere gets the walk's answer and diagnosis
  (whole plans are held against the real scheduler by conformance/drains.py);
- shifted spread states (views/drain/core/counts.py `Shifted` overlay and count histogram) and the
  arrays vector.py carries across shifts, against fresh computes;
- `DomainCounts` (views/drain/core/steps.py) against the dict {domain: pods}.
"""

from __future__ import annotations

import collections
import copy
import random
from collections.abc import Mapping

import numpy as np
import pytest

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot, make_workload
from kubectl_tspread.views.drain.core import counts, vector
from kubectl_tspread.views.drain.core.placement import Placement, Placer
from kubectl_tspread.engine import walk
from kubectl_tspread.engine.walk import num_feasible_to_find
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.views.drain.core.steps import DomainCounts
from kubectl_tspread.engine import scores, spread
from kubectl_tspread.engine.partition import Domain
from kubectl_tspread.model.labels import Requirement
from kubectl_tspread.model import (
    DO_NOT_SCHEDULE, HONOR, HOSTNAME_KEY, IGNORE, SCHEDULE_ANYWAY, ZONE_KEY, NodeSelectorTerm, Toleration,
)

MI = 1024**2
GPU = "nvidia.com/gpu"
SIZES = (
    {"cpu": 2000, "memory": 4 * GI, "pods": 110},
    {"cpu": 4000, "memory": 16 * GI, "pods": 3},  # few pod slots: the pods count decides
    {"cpu": 16000, "memory": 64 * GI, "pods": 110, "ephemeral-storage": 100 * GI},
    {"cpu": 8000, "memory": 32 * GI, "pods": 110, "ephemeral-storage": 20 * GI, GPU: 1},
)


def _c(key: str, app: str, mode: str = DO_NOT_SCHEDULE, skew: int = 1, **kw):
    return make_constraint(key, max_skew=skew, mode=mode, selector={"app": app}, **kw)


# template -> make_pod keywords (labels, constraints, requests, selectors, tolerations)
TEMPLATES = {
    "zone DoNotSchedule": dict(labels={"app": "web"}, spread=[_c(ZONE_KEY, "web")],
                               requests={"cpu": 250, "memory": GI}),
    "hostname DoNotSchedule maxSkew 2": dict(labels={"app": "api"}, spread=[_c(HOSTNAME_KEY, "api", skew=2)],
                                             requests={"cpu": 500}),
    "hostname ScheduleAnyway": dict(labels={"app": "cache"}, spread=[_c(HOSTNAME_KEY, "cache", SCHEDULE_ANYWAY)],
                                    requests={"memory": 2 * GI}),
    "zone hard + hostname soft": dict(labels={"app": "queue"},
                                      spread=[_c(ZONE_KEY, "queue"), _c(HOSTNAME_KEY, "queue", SCHEDULE_ANYWAY)],
                                      requests={"cpu": 100, "memory": 256 * MI}),
    "zone soft maxSkew 3 + hostname soft": dict(
        labels={"app": "soft"}, requests={"cpu": 300},
        spread=[_c(ZONE_KEY, "soft", SCHEDULE_ANYWAY, 3), _c(HOSTNAME_KEY, "soft", SCHEDULE_ANYWAY)]),
    "matchLabelKeys hash h1": dict(labels={"app": "roll", "pod-template-hash": "h1"},
                                   spread=[_c(ZONE_KEY, "roll", match_label_keys=["pod-template-hash"])],
                                   requests={"cpu": 200}),
    "matchLabelKeys hash h2": dict(labels={"app": "roll", "pod-template-hash": "h2"},
                                   spread=[_c(ZONE_KEY, "roll", match_label_keys=["pod-template-hash"])],
                                   requests={"cpu": 200}),
    "no constraints, ReplicaSet owner (system defaults)": dict(labels={"app": "batch"}, owner="ReplicaSet/batch-1",
                                                               requests={"cpu": 1500, "memory": 3 * GI}),
    "no constraints, requests nothing": dict(labels={"app": "idle"}),
    "nodeSelector disk=ssd, ephemeral-storage": dict(labels={"app": "db"}, node_selector={"disk": "ssd"},
                                                     spread=[_c(ZONE_KEY, "db")],
                                                     requests={"cpu": 200, "ephemeral-storage": GI}),
    "tolerates dedicated=infra": dict(labels={"app": "tol"},
                                      tolerations=(Toleration("dedicated", "Equal", "infra", "NoSchedule"),),
                                      spread=[_c(HOSTNAME_KEY, "tol", SCHEDULE_ANYWAY)], requests={"cpu": 100}),
    "zone nodeTaintsPolicy Honor": dict(labels={"app": "honor"}, requests={"cpu": 150},
                                        spread=[_c(ZONE_KEY, "honor", node_taints_policy=HONOR)]),
    "zone minDomains 4": dict(labels={"app": "md"}, spread=[_c(ZONE_KEY, "md", min_domains=4)]),
    "rack ScheduleAnyway (a key only some nodes carry)": dict(
        labels={"app": "rack"}, spread=[_c("rack", "rack", SCHEDULE_ANYWAY), _c(HOSTNAME_KEY, "rack", SCHEDULE_ANYWAY)],
        requests={"cpu": 100}),
    "rack DoNotSchedule maxSkew 2": dict(labels={"app": "rackh"}, spread=[_c("rack", "rackh", skew=2)],
                                         requests={"memory": GI}),
    "tolerates every taint (cordons too), zone Honor": dict(
        labels={"app": "any"}, tolerations=(Toleration(operator="Exists"),),
        spread=[_c(ZONE_KEY, "any", node_taints_policy=HONOR)], requests={"cpu": 50}),
    "prefers disk=ssd, tolerates the batch PreferNoSchedule taint": dict(
        labels={"app": "pref"}, requests={"cpu": 400, "memory": 512 * MI},
        tolerations=(Toleration("dedicated", "Equal", "batch", "PreferNoSchedule"),),
        preferred_node_affinity=((30, NodeSelectorTerm((Requirement("disk", "In", ("ssd",)),))),)),
}
NAMES = sorted(TEMPLATES)
ODD_NODES = 5


def _pod(template: str, name: str, node: str | None = None):
    return make_pod(name, node=node, **TEMPLATES[template])


def _snapshot(zones: dict[str, int], seed: int, bound: int = 120):
    """Zoned nodes of mixed sizes (some cordoned, some tainted NoSchedule or PreferNoSchedule,
    some labelled disk=ssd, about half with a rack label), five odd nodes (no zone label, no hostname label, zone
    "", a hostname shared with another node, no cpu), and `bound` pods of the templates
    spread at random."""
    rng = random.Random(seed)
    nodes = []
    for zone, count in zones.items():
        for i in range(count):
            r = rng.random()
            nodes.append(make_node(
                f"{zone}{i:03d}", zone=zone, allocatable=rng.choice(SIZES),
                labels={**({"disk": "ssd"} if rng.random() < 0.3 else {}),
                        **({"rack": f"r{i % 4}"} if rng.random() < 0.5 else {})},
                unschedulable=r < 0.06, taints=["dedicated=infra:NoSchedule"] if 0.06 <= r < 0.14 else
                ["dedicated=batch:PreferNoSchedule"] if 0.14 <= r < 0.2 else ()))
    nodes.append(make_node("nozone", allocatable=SIZES[2]))
    nodes.append(make_node("nohost", zone=next(iter(zones)), hostname="", allocatable=SIZES[2]))
    # a zone label with the empty value: a domain "" (a node lacking the key scores as "" too)
    nodes.append(make_node("emptyzone", labels={ZONE_KEY: ""}, allocatable=SIZES[0]))
    # a node sharing the first node's hostname label (one hostname domain, two nodes)
    nodes.append(make_node("twin", zone=next(iter(zones)), hostname=nodes[0].name, allocatable=SIZES[2]))
    # no cpu at all: only pods requesting no cpu fit, and LeastAllocated's cpu part is 0
    nodes.append(make_node("nocpu", zone=next(iter(zones)), allocatable={"cpu": 0, "memory": 8 * GI, "pods": 110}))
    names = [n.name for n in nodes]
    pods = [_pod(t, f"old-{k}", rng.choice(names)) for k, t in enumerate(rng.choice(NAMES) for _ in range(bound))]
    return make_snapshot(nodes, pods, workloads=[make_workload("ReplicaSet", "batch-1", {"app": "batch"})])


class Pair:
    """The same simulation twice: one placed with the fast path, one by the walk."""

    def __init__(self, snapshot):
        self.fast, self.walk = SimCluster(snapshot), SimCluster(snapshot)
        self.fast_placer, self.walk_placer = Placer(), Placer()
        self.saved: list[tuple[SimCluster, SimCluster]] = []

    def place(self, pod):
        fast = self.fast_placer.place(self.fast, pod)
        walk = self.walk_placer.walk(self.walk, pod)
        return fast, walk

    def both(self, fn):
        """Apply `fn(sim)` to both simulations."""
        fn(self.fast)
        fn(self.walk)

    def fork(self):
        """Continue on copies (sharing the placers, as the planner's search branches do)."""
        self.saved.append((self.fast, self.walk))
        self.fast, self.walk = self.fast.copy(), self.walk.copy()

    def back(self):
        """Return to the simulations the last fork was made from."""
        if self.saved:
            self.fast, self.walk = self.saved.pop()


@pytest.fixture
def fast_calls(monkeypatch):
    """Counts the placements the fast path answered."""
    calls = {"fast": 0, "declined": 0, "window": 0, "past window": 0}
    real, real_window = Placer._vector, walk.walk_window

    def counted(self, *args):
        got = real(self, *args)
        calls["fast" if isinstance(got, Placement) else "declined"] += 1  # None or "no node": the walk
        return got

    def window(*args):
        got = real_window(*args)
        calls["window" if got is not None else "past window"] += 1
        return got

    monkeypatch.setattr(Placer, "_vector", counted)
    monkeypatch.setattr(walk, "walk_window", window)
    return calls


def _same(fast, walk, pair: Pair, context: str) -> None:
    assert (fast.node, fast.feasible, dict(fast.accepting), pair.fast.next_start) == \
        (walk.node, walk.feasible, dict(walk.accepting), pair.walk.next_start), context
    if walk.node is None:
        assert (fast.fit_nodes, dict(fast.spread_refusals)) == (walk.fit_nodes, dict(walk.spread_refusals)), context
        # the arrays leave out the first-failure histogram only where spread refuses every
        # fit node (NoCapacity, which reads it, always walks)
        assert dict(fast.reasons) == dict(walk.reasons) or (not fast.reasons and walk.fit_nodes), context


def _play(pair: Pair, rng: random.Random, moves: int) -> int:
    """Random placements (bound where placed), evictions, settles, cordons, node deletions
    and additions, forks and returns to the parent, the same on both simulations;
    returns how many pods were placed. The accepting domains, which the fast path works
    out only when read, are read again at the end: still those of their own moment."""
    placed = 0
    answers = []
    for k in range(moves):
        r = rng.random()
        if r < 0.7:
            template = rng.choice(NAMES)
            pod = _pod(template, f"new-{k}")
            fast, walk = pair.place(pod)
            unread = copy.copy(fast.accepting)  # _same reads the one of the placement
            _same(fast, walk, pair, f"move {k}: {template}")
            answers.append((k, unread, dict(walk.accepting)))
            if walk.node is not None:
                placed += 1
                pair.both(lambda sim: sim.bind(pod, walk.node))
        elif r < 0.86:
            running = sorted(p.key for p in pair.walk.pods.values() if p.node_name and not p.terminating)
            if not running:
                continue
            key = rng.choice(running)
            pair.both(lambda sim: sim.evict(sim.pods[key]))
            if rng.random() < 0.5:
                pair.both(lambda sim: sim.settle())
        elif r < 0.91:
            node = rng.choice(sorted(pair.walk.nodes))
            pair.both(lambda sim: sim.cordon([node]))
        elif r < 0.93:
            node = rng.choice(sorted(pair.walk.nodes))
            pair.both(lambda sim: sim.delete_node(node))
        elif r < 0.95:
            new = make_node(f"added-{k}", zone=rng.choice("abc"), allocatable=rng.choice(SIZES))
            pair.both(lambda sim: sim.put_node(new))
        elif r < 0.98:
            pair.fork()
        else:
            pair.back()
    assert sum(isinstance(a, vector.Accepting) for _, a, _ in answers) > len(answers) // 2
    for k, unread, then in answers:
        assert dict(unread) == then, f"move {k}, read at the end"
    return placed


@pytest.mark.parametrize("zones, seed", [
    pytest.param({"a": 60, "b": 45, "c": 25}, 0, id="3 zones [60,45,25] + 5 odd nodes: 135 nodes, sampling wants 100"),
    pytest.param({"a": 60, "b": 45, "c": 25}, 1, id="135 nodes, seed 1"),
    pytest.param({"b": 80, "a": 30, "c": 18}, 2, id="3 zones [80,30,18] + 5: 133 nodes, zone b first in the tree"),
    pytest.param({"a": 40, "b": 30, "c": 20}, 3, id="3 zones [40,30,20] + 5: 95 nodes, every node scored"),
    pytest.param({"a": 40, "b": 30, "c": 20}, 4, id="95 nodes, seed 4"),
])
def test_fast_path_places_exactly_like_the_walk(zones, seed, fast_calls):
    total = sum(zones.values()) + ODD_NODES
    assert (num_feasible_to_find(total) < total) == (total >= 100)
    pair = Pair(_snapshot(zones, seed))
    placed = _play(pair, random.Random(seed), moves=220)
    assert placed > 80
    # the fast path answered most placements (otherwise this compares the walk with itself)
    assert fast_calls["fast"] >= placed * 0.8


@pytest.mark.parametrize("seed", [5, 6])
def test_a_placement_judged_on_a_window_of_nodes_is_the_walks(seed, fast_calls, monkeypatch):
    """365 nodes, 40 wanted (as the scheduler wants of a cluster ten times as big: here both
    paths are told so): the fast path first judges the nodes from the start index that the
    template's last walk suggests (unless they wrap past the last node: then every node at
    once), and goes on over every node when fewer than wanted pass there. Either way the
    walk's answer."""
    from kubectl_tspread.views.drain.core import placement

    monkeypatch.setattr(placement, "num_feasible_to_find", lambda total, percentage=0: min(total, 40))
    zones = {"a": 160, "b": 120, "c": 80}
    pair = Pair(_snapshot(zones, seed, bound=600))
    placed = _play(pair, random.Random(seed), moves=160)
    assert placed > 60
    assert fast_calls["window"] >= placed * 0.4 and fast_calls["past window"] > 0


def test_the_walk_index_wraps_the_same_way(fast_calls):
    """Many identical small pods on 130 nodes: the start index goes round several times."""
    pair = Pair(_snapshot({"a": 50, "b": 50, "c": 28}, 7, bound=0))
    starts = []
    for k in range(40):
        pod = _pod("no constraints, requests nothing", f"idle-{k}")
        fast, walk = pair.place(pod)
        _same(fast, walk, pair, f"pod {k}")
        starts.append(pair.walk.next_start)
        pair.both(lambda sim: sim.bind(pod, walk.node))
    assert len(set(starts)) > 5 and fast_calls["fast"] == 40


def _gpu_pod(k: int):
    return make_pod(f"gpu-{k}", labels={"app": "gpu"}, spread=[_c(ZONE_KEY, "gpu", skew=2)],
                    requests={"cpu": 500, GPU: 1})


def test_an_extended_resource_goes_through_the_walk_with_the_same_answers(fast_calls):
    snap = _snapshot({"a": 50, "b": 40, "c": 30}, 5, bound=60)
    gpus = sum(n.allocatable.get(GPU, 0) for n in snap.nodes if not n.unschedulable and not n.taints)
    pair = Pair(snap)
    placed = 0
    for k in range(gpus + 3):  # until the GPUs (or the zone skew) run out, and past that
        pod = _gpu_pod(k)
        fast, walk = pair.place(pod)
        _same(fast, walk, pair, f"gpu pod {k}")
        if walk.node is None:
            break
        placed += 1
        pair.both(lambda sim: sim.bind(pod, walk.node))
    assert placed > 3 and walk.node is None and walk.reasons
    assert fast_calls["fast"] == 0 and fast_calls["declined"] == placed + 1


def _crowded_zone_a():
    """zone DoNotSchedule maxSkew 1 with 2 web pods in zone a and none in b or c."""
    nodes = [make_node(f"{z}{i}", zone=z, labels={"disk": "ssd"} if z == "a" else None,
                       allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110}) for z in "abc" for i in range(4)]
    pods = [_pod("zone DoNotSchedule", f"web-{i}", "a0") for i in range(2)]
    return make_snapshot(nodes, pods)


@pytest.mark.parametrize("snapshot, pod, reason", [
    pytest.param(_snapshot({"a": 60, "b": 45, "c": 25}, 0), make_pod("huge", labels={"app": "web"},
                 spread=[_c(ZONE_KEY, "web")], requests={"cpu": 10**6}), "Insufficient cpu",
                 id="cpu request larger than any node: every node refuses for cpu"),
    pytest.param(_crowded_zone_a(), make_pod("web-x", labels={"app": "web"}, node_selector={"disk": "ssd"},
                 spread=[_c(ZONE_KEY, "web", node_affinity_policy=IGNORE)], requests={"cpu": 100}), None,
                 id="only zone a fits (nodeSelector; affinity policy Ignore keeps b and c as domains at 0) "
                    "and spread refuses it: fit nodes, spread refusals"),
])
def test_a_pod_that_fits_nowhere_gets_the_walks_diagnosis(snapshot, pod, reason, fast_calls):
    pair = Pair(snapshot)
    fast, walk = pair.place(pod)
    _same(fast, walk, pair, pod.name)
    assert walk.node is None and walk.reasons
    if reason is not None:  # NoCapacity: the walk's first-failure histogram
        assert reason in walk.reasons and not walk.fit_nodes and fast_calls["declined"] == 1
    else:  # spread refuses the fit nodes: the arrays' diagnosis
        assert walk.fit_nodes and walk.spread_refusals == {ZONE_KEY: len(walk.fit_nodes)}
        assert fast_calls["fast"] == 1 and len(fast.fit_nodes) == 4


# -- shifted spread states and the arrays carried across shifts -------------------------

def _many_hosts():
    """120 nodes in 3 zones (more hostname domains than Shifted.MERGE_AFTER) plus one
    without a zone (excluded from zone domains), 60 web pods with a hostname and a zone
    constraint."""
    rng = random.Random(3)
    nodes = [make_node(f"{z}{i:02d}", zone=z) for z in "abc" for i in range(40)] + [make_node("nozone")]
    cons = [_c(HOSTNAME_KEY, "web", skew=3), _c(ZONE_KEY, "web", SCHEDULE_ANYWAY, 2)]
    pods = [make_pod(f"web-{k}", node=rng.choice(nodes).name, labels={"app": "web"}, spread=cons,
                     owner="ReplicaSet/web-1") for k in range(60)]
    return SimCluster(make_snapshot(nodes, pods)), cons, rng


def _moved_at_random(sim, cons, rng, moves: int, node_for=None):
    """Yield k after each of `moves` random moves: every third evicts a running pod (then
    settled), the others bind a new web pod to node_for(k) (a random node by default)."""
    for k in range(moves):
        running = sorted(p.key for p in sim.pods.values() if p.node_name and not p.terminating)
        if k % 3 == 2 and running:
            sim.evict(sim.pods[rng.choice(running)])
            sim.settle()
        else:
            pod = make_pod(f"new-{k}", labels={"app": "web"}, spread=cons)
            sim.bind(pod, node_for(k) if node_for is not None else rng.choice(sorted(sim.nodes)))
        yield k


def test_shifted_states_and_carried_arrays_equal_fresh_ones_past_the_merge():
    sim, cons, rng = _many_hosts()
    probe = make_pod("probe", labels={"app": "web"}, spread=cons)
    table = vector.tables_for(sim, {})
    for cs in sim.spread_state(probe).constraints:
        vector.counts_of(table, sim, cs)  # arrays the shifts carry over from now on
    overlay_sizes = []
    for k in _moved_at_random(sim, cons, rng, 3 * counts.Shifted.MERGE_AFTER):
        state, fresh = sim.spread_state(probe), spread.compute(sim.index, probe)
        for cs, want in zip(state.constraints, fresh.constraints):
            key = cs.constraint.topology_key
            assert list(cs.domains.items()) == list(want.domains.items()), (k, key)
            assert (cs.global_min, cs.skew, cs.status) == (want.global_min, want.skew, want.status), (k, key)
            assert cs.count_histogram == want.count_histogram == \
                dict(collections.Counter(d.pods for d in want.domains.values())), (k, key)
            carried = sim.count_arrays.of(cs)
            assert carried is not None, (k, key)  # carried over, not rebuilt
            assert (carried[1] is None) == (key != HOSTNAME_KEY), (k, key)  # per node: hostname only
            built = vector.counts_of(table, sim, want)  # `want` is new: built from its counts
            np.testing.assert_array_equal(carried[1], built[1], err_msg=f"{k} {key} per node")
            np.testing.assert_array_equal(carried[2], built[2], err_msg=f"{k} {key} per value")
        host = state.constraints[0].domains
        assert isinstance(host, counts.Shifted)
        overlay_sizes.append(len(host.changes))
    # the overlay grew past MERGE_AFTER changes' worth of shifts and was merged (restarted)
    assert max(overlay_sizes) <= counts.Shifted.MERGE_AFTER
    assert any(b < a for a, b in zip(overlay_sizes, overlay_sizes[1:]))


def test_states_moved_on_two_branches_after_a_copy_keep_their_own_arrays():
    """SimCluster.copy copies the count arrays: each branch's states have arrays carried
    over, not rebuilt, equal to a fresh computation's, and moving one branch never changes
    the other's."""
    sim, cons, rng = _many_hosts()
    probe = make_pod("probe", labels={"app": "web"}, spread=cons)
    table = vector.tables_for(sim, {})
    for cs in sim.spread_state(probe).constraints:
        vector.counts_of(table, sim, cs)
    branches = [sim, sim.copy()]
    for k in range(12):
        for b, branch in enumerate(list(branches)):
            node = sorted(branch.nodes)[(7 * k + 31 * b) % len(branch.nodes)]
            branch.bind(make_pod(f"new-{k}-{b}", labels={"app": "web"}, spread=cons), node)
        if k in (3, 7):
            branches.append(branches[-1].copy())  # another branch, from the middle
        for branch in branches:
            state, fresh = branch.spread_state(probe), spread.compute(branch.index, probe)
            for cs, want in zip(state.constraints, fresh.constraints):
                carried = branch.count_arrays.of(cs)
                assert carried is not None, k  # carried over, not rebuilt
                built = vector.counts_of(table, branch, want)
                np.testing.assert_array_equal(carried[1], built[1], err_msg=f"{k} per node")
                np.testing.assert_array_equal(carried[2], built[2], err_msg=f"{k} per value")


def _values(arrays):
    """Copies of counts_of answers' count arrays (the simulation changes them in place)."""
    return [(None if per_node is None else per_node.copy(), per_value.copy()) for _, per_node, per_value in arrays]


def _assert_same_counts(got, want, message=""):
    for (a_node, a_value), (b_node, b_value) in zip(got, want):
        np.testing.assert_array_equal(a_value, b_value, err_msg=message)
        if a_node is not None or b_node is not None:
            np.testing.assert_array_equal(a_node, b_node, err_msg=message)


@pytest.mark.parametrize("delete", [False, True])
def test_a_reverted_mark_puts_every_state_back_with_its_arrays(delete):
    """SimCluster.fork / revert / redo and the states' count arrays (vector.CountArrays). The
    moves after a mark take each state's arrays over and change them in place (no copy);
    revert puts the old states back with those very arrays, as they were, and redo puts the
    moved ones back as played. Every array read equals a fresh computation's, the arrays
    belong to the states of the simulation's memo only, and playing the same again ends
    with the arrays the first play had."""
    sim, cons, rng = _many_hosts()
    probe = make_pod("probe", labels={"app": "web"}, spread=cons)
    tables: dict = {}

    def arrays(branch):
        table = vector.tables_for(branch, tables)
        state = branch.spread_state(probe)
        return state, [vector.counts_of(table, branch, cs) for cs in state.constraints]

    def fresh(branch):
        table = vector.tables_for(branch, tables)
        fresh_state = spread.compute(branch.index, probe)
        out = _values([vector.counts_of(table, branch, cs) for cs in fresh_state.constraints])
        branch.count_arrays.drop(fresh_state)  # not the simulation's: built for the comparison only
        return out

    def only_memoised(branch):
        held = {id(cs) for states in branch._spread.values() for st in states.values() for cs in st.constraints}
        assert set(branch.count_arrays.entries) <= held

    kept_state, kept = arrays(sim)
    before = [sim.count_arrays.of(cs) for cs in kept_state.constraints]
    start = _values(kept)
    empty = sorted(set(sim.nodes) - {p.node_name for p in sim.pods.values()})

    def play(branch):
        if delete:
            branch.delete_node(empty[0])
        for k, node in enumerate(sorted(branch.nodes)[2:40:6]):
            branch.bind(make_pod(f"new-{k}", labels={"app": "web"}, spread=cons), node)

    sim.fork()
    play(sim)
    state, got = arrays(sim)
    for old, hit, cs in zip(kept_state.constraints, before, state.constraints):
        assert cs is not old and sim.count_arrays.of(old) is None
        assert sim.count_arrays.of(cs)[2] is hit[2]  # taken over and changed in place
    played = _values(got)
    _assert_same_counts(played, fresh(sim))
    only_memoised(sim)
    redo = sim.revert(redo=True)
    again_state, again = arrays(sim)
    assert again_state is kept_state
    for cs, hit in zip(again_state.constraints, before):
        assert sim.count_arrays.of(cs) == hit  # the very arrays, put back
    _assert_same_counts(_values(again), start)
    _assert_same_counts(_values(again), fresh(sim))
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(start, played))  # the moves changed counts
    only_memoised(sim)
    sim.redo(redo)
    assert sim.spread_state(probe).constraints == state.constraints
    _assert_same_counts(_values(arrays(sim)[1]), played)
    sim.forget_marks()
    other, _, _ = _many_hosts()
    arrays(other)
    play(other)
    _assert_same_counts(_values(arrays(other)[1]), played)


@pytest.mark.parametrize("plays", [("delete", "delete", "bind"), ("delete", "place", "bind"),
                                   ("delete", "place", "delete", "place", "bind"), ("delete", "bind", "delete", "bind")])
def test_states_handed_over_by_a_deletion_take_their_arrays(plays):
    """A node deletion hands each hostname state over with the same counts (the zone state,
    whose domain keeps nodes, is the same object and keeps its arrays): the new state takes
    the old one's very arrays, and a placement carries them to the next node table. On a
    copy of the simulation that deletes and binds, the original's states read what they
    did, and every state's arrays equal a fresh computation's."""
    sim, cons, rng = _many_hosts()
    probe = make_pod("probe", labels={"app": "web"}, spread=cons)
    tables: dict = {}

    def placed_for(branch):  # what a placement reads, on the branch's current table
        table = vector.tables_for(branch, tables)
        return [(cs, vector.counts_of(table, branch, cs)) for cs in branch.spread_state(probe).constraints]

    def check(branch, k):
        fresh = spread.compute(branch.index, probe)
        table = vector.tables_for(branch, tables)
        for (cs, got), want in zip(placed_for(branch), fresh.constraints):
            built = vector.counts_of(table, branch, want)
            np.testing.assert_array_equal(got[1], built[1], err_msg=f"{k} per node")
            np.testing.assert_array_equal(got[2], built[2], err_msg=f"{k} per value")

    placed_for(sim)
    empty = iter(sorted(set(sim.nodes) - {p.node_name for p in sim.pods.values()}))
    child = sim.copy()
    handed = 0
    for k, play in enumerate(plays):
        if play == "delete":
            before = [(cs, child.count_arrays.of(cs)) for cs in child.spread_state(probe).constraints]
            child.delete_node(next(empty))  # holds no web pod: its hostname domain goes, its zone stays
            for (old, hit), cs in zip(before, child.spread_state(probe).constraints):
                now = child.count_arrays.of(cs)
                if cs.constraint.topology_key == ZONE_KEY:  # the zone keeps nodes: the same state
                    assert cs is old and now == hit, k
                    continue
                assert cs is not old and child.count_arrays.of(old) is None, k
                assert now is not None and now[2] is hit[2], k  # taken over, not copied
                handed += 1
        elif play == "place":
            placed_for(child)  # carried to the child's new table
        else:
            child.bind(make_pod(f"new-{k}", labels={"app": "web"}, spread=cons), sorted(child.nodes)[3 + 5 * k])
            check(sim, k)  # the simulation copied from reads its states as they were
            check(child, k)
    assert handed


def test_arrays_built_from_a_shifted_states_base_and_changes_equal_fresh_ones():
    """counts_of builds a state it has no arrays for from its node-count map's base entries
    plus the changes shifted in since (gathered, then added in two array operations): the
    same arrays as a state computed from scratch, with changes on nodes of one domain,
    removed counts (0) and a node outside the zone domains among them."""
    sim, cons, rng = _many_hosts()
    probe = make_pod("probe", labels={"app": "web"}, spread=cons)
    table = vector.tables_for(sim, {})
    rebuilt = 0
    def on(k: int) -> str:  # a node outside the zone domains, or one of a00 and a01 often
        return "nozone" if k % 7 == 0 else rng.choice(["a00", "a01", *sorted(sim.nodes)])

    for k in _moved_at_random(sim, cons, rng, 2 * counts.Shifted.MERGE_AFTER, on):
        state, fresh = sim.spread_state(probe), spread.compute(sim.index, probe)
        for cs, want in zip(state.constraints, fresh.constraints):
            sim.count_arrays.drop(state)  # no arrays to carry: built from base and changes
            built, expected = vector.counts_of(table, sim, cs), vector.counts_of(table, sim, want)
            np.testing.assert_array_equal(built[1], expected[1], err_msg=f"{k} per node")
            np.testing.assert_array_equal(built[2], expected[2], err_msg=f"{k} per value")
            rebuilt += bool(getattr(cs.node_counts, "changes", None))
    assert rebuilt > counts.Shifted.MERGE_AFTER  # most of them had changes to add


@pytest.mark.parametrize("seed", range(5))
def test_a_merged_overlay_is_its_items_in_iteration_order(seed):
    """with_change merges an overlay past MERGE_AFTER changes through merged(): the same
    entries, in the order iterating the overlay gives, for node counts (counts dropping to
    0, nodes new to the map, zeros of the base kept) and domains (a domain GONE with its
    last node)."""
    rng = random.Random(seed)
    base = {f"n{i}": rng.randint(0, 3) for i in range(30)}
    nodes = counts.NodeCounts(base, {})
    for _ in range(40):
        node = f"n{rng.randint(0, 45)}"  # n30.. are new to the map
        nodes = counts.NodeCounts.with_change(nodes, node, max(0, nodes.get(node, 0) + rng.choice((-1, 1))))
        assert nodes.merged() == dict(nodes.items())
        assert list(nodes.merged()) == list(nodes)
    doms = counts.Shifted(_domains([(f"z{i}", rng.randint(0, 5)) for i in range(20)]), {})
    for _ in range(40):
        value = f"z{rng.randint(0, 19)}"
        if value not in doms:
            continue
        change = counts.GONE if rng.random() < 0.2 else Domain(value, rng.randint(0, 5), (f"{value}-node",))
        doms = counts.Shifted.with_change(doms, value, change)
        assert doms.merged() == dict(doms.items())
        assert list(doms.merged()) == list(doms)


@pytest.mark.parametrize("seed", range(5))
def test_a_shifted_overlay_knows_its_length_with_domains_gone(seed):
    """Shifted counts its GONE changes once per overlay: the length (and the keys, values
    and items, which depend on it) must stay those of the merged map, read before and after
    each change, including when a change brings a GONE domain's entry back."""
    rng = random.Random(seed)
    doms = counts.Shifted(_domains([(f"z{i}", rng.randint(0, 5)) for i in range(20)]), {})
    gone = 0
    for _ in range(60):
        value = f"z{rng.randint(0, 19)}"
        change = counts.GONE if rng.random() < 0.4 else Domain(value, rng.randint(0, 5), (f"{value}-node",))
        merged = doms.merged()
        assert len(doms) == len(merged) and list(doms) == list(merged)
        assert doms.values() == list(merged.values()) and doms.items() == list(merged.items())
        doms = counts.Shifted.with_change(doms, value, change)
        gone = max(gone, sum(d is counts.GONE for d in doms.changes.values()))
        assert len(doms) == len(doms.merged()) == len(doms) and list(doms) == list(doms.merged())
    assert gone >= 2, "the walk should have taken several domains away at once"


# -- Accepting ---------------------------------------------------------------------------

def _accepting_parts(rng, values: int, nodes: int):
    """NodeTable.by_name's answer for one key: value ids in first-seen order (not name order),
    id `values` for a node without the key."""
    names = [f"v{n:03d}" for n in rng.sample(range(1000), values)]
    vid = np.array([rng.randrange(values + 1) for _ in range(nodes)], dtype=np.int64)
    by_name = sorted(range(values), key=names.__getitem__)
    rank = np.empty(values, dtype=np.int64)
    rank[by_name] = np.arange(values)
    return (vid, values, rank, [names[j] for j in by_name]), names


@pytest.mark.parametrize("seed", range(8))
def test_accepting_names_and_counts_the_domains_of_the_feasible_nodes(seed):
    """Each key's domains, named or only counted, read in any order, are the sorted set of
    the values the feasible nodes hold (nodes without the key add none)."""
    rng = random.Random(seed)
    nodes = 60
    made = {key: _accepting_parts(rng, values, nodes) for key, values in (("zone", 3), ("host", 50), ("rack", 1))}
    found = sorted(rng.sample(range(nodes), rng.choice((0, 1, 7, 30))))
    vids = {key: parts[0] for key, (parts, _) in made.items()}
    expected = {key: tuple(sorted({names[vids[key][i]] for i in found if vids[key][i] < len(names)}))
                for key, (_, names) in made.items()}
    for order in (["zone", "host", "rack"], ["rack", "zone", "host"]):
        acc = vector.Accepting({key: parts for key, (parts, _) in made.items()}, np.array(found, dtype=np.int32))
        counted = {key: acc.domain_count(key) for key in order[:2]}  # before any name is made
        assert counted == {key: len(expected[key]) for key in order[:2]}
        assert {key: tuple(acc[key]) for key in order} == expected
        assert {key: acc.domain_count(key) for key in order} == {key: len(v) for key, v in expected.items()}
        assert dict(acc) == expected and list(acc) == ["zone", "host", "rack"]


# -- DomainCounts ----------------------------------------------------------------------

def _domains(pairs):
    return {v: Domain(v, n, (f"{v}-node",)) for v, n in pairs}


@pytest.mark.parametrize("domains, expected", [
    pytest.param({}, {}, id="no domains"),
    pytest.param(_domains([("a", 2)]), {"a": 2}, id="one domain"),
    pytest.param(_domains([("c", 0), ("a", 5), ("b", 1)]), {"c": 0, "a": 5, "b": 1},
                 id="three domains, not in name order: the domains' order is kept"),
    pytest.param(counts.Shifted(_domains([("c", 0), ("a", 5), ("b", 1)]), {"a": Domain("a", 4, ("a-node",))}),
                 {"c": 0, "a": 4, "b": 1}, id="a Shifted overlay: the changed count, the base order"),
])
def test_domain_counts_behave_like_the_dict(domains, expected):
    dc = DomainCounts(domains, {})
    assert isinstance(dc, Mapping)
    assert dc == expected and expected == dc
    assert dict(dc) == expected and list(dc) == list(expected)
    assert list(dc.items()) == list(expected.items())
    assert repr(dc) == repr(expected)
    assert len(dc) == len(expected)
    assert dc != {**expected, "zz": 9}


# what a retired table lets go of (NodeTable.retire)
_PER_NODE = ("order", "rank", "alloc", "row_version", "free", "scored", "alloc2", "_sorted", "shapes")


def test_carried_arrays_keep_only_retired_tables_of_deleted_node_sets(fast_calls, monkeypatch):
    """Every node deletion makes a new node set, hence a new table, and past TABLES_KEPT the
    oldest is retired. The count arrays a state carries may still be on a retired table, which
    keeps none of its per-node and per-shape arrays (whole tables kept that way grew a
    whole-zone re-plan that deletes its drained nodes to gigabytes); the entry arrays are on
    live tables only. A state read again after its table was retired moves its arrays to the
    live table (not built again from its counts), and they are what building them gives."""
    monkeypatch.setattr(vector, "_ENTRIES", {})
    sim, cons, rng = _many_hosts()
    placer = Placer()
    db_cons = [_c(HOSTNAME_KEY, "db", skew=2)]

    def db(name: str):
        return make_pod(name, labels={"app": "db"}, spread=db_cons, owner="ReplicaSet/db-1")

    retired, db_node = 0, None
    for k, node in enumerate(sorted(sim.nodes)[:30]):
        pod = make_pod(f"new-{k}", labels={"app": "web"}, spread=cons, owner="ReplicaSet/web-1")
        placed = placer.place(sim, pod)
        if placed.node is not None:
            sim.bind(pod, placed.node)
        if k == 3:  # the db arrays are made on a derived table, whose rows are not the root's
            db_node = placer.place(sim, db("db-0")).node
            sim.bind(db("db-0"), db_node)
        if node != db_node:
            sim.delete_node(node)
        live = {id(t) for t in placer._tables.values()}
        assert {id(v[2]) for v in vector._ENTRIES.values()} <= live, k
        for _, table, *_ in sim.count_arrays.entries.values():
            if id(table) not in live:
                retired += 1
                assert not [name for name in _PER_NODE if hasattr(table, name)], k
                assert table.pos is None or table.root is table
                assert all(vid is None and empty is None for vid, _, _, empty in table._values.values())
    assert retired and fast_calls["fast"] >= 25
    last = max(n for n in sim.nodes if n.startswith("c") and n != db_node)  # a row that moved in every table
    sim.bind(db("db-1"), last)  # shifts the arrays where they are, on the retired table
    cs = sim.spread_state(db("db-2")).hard[0]
    made_on = sim.count_arrays.of(cs)[0]
    assert not hasattr(made_on, "shapes") and made_on.root is not made_on  # a retired derived table
    table = vector.tables_for(sim, placer._tables)
    moved = vector.counts_of(table, sim, cs)
    assert sim.count_arrays.of(cs)[0] is table
    moved = [a.copy() for a in moved]
    del sim.count_arrays.entries[id(cs)]
    built = vector.counts_of(table, sim, cs)
    assert all(np.array_equal(a, b) for a, b in zip(moved, built))
    assert moved[1][table.pos[db_node]] == moved[1][table.pos[last]] == 1 and moved[2].sum() == 2


def test_fast_path_after_node_deletions_places_like_the_walk(fast_calls, monkeypatch):
    """A drain that deletes its drained nodes makes a node set per step: the fast path's
    node table (usage rows, filter verdicts, label values) is carried over from the table
    before the deletion, and each state's count arrays from whichever table of the same
    node set they were made on, two deletions at a time as in a step of two nodes. Every
    placement between them is the walk's."""
    pair = Pair(_snapshot({"a": 50, "b": 40, "c": 30}, 11, bound=300))
    rng = random.Random(11)
    placed = 0
    moved_past = []  # how many deletions each carried count array skipped over
    real_rows = vector.NodeTable.rows_of

    def rows_of(self, other):
        got = real_rows(self, other)
        if got is not None:
            moved_past.append(self.size - other.size)
        return got

    monkeypatch.setattr(vector.NodeTable, "rows_of", rows_of)
    for k in range(24):
        for _ in range(2):
            node = rng.choice(sorted(n for n in pair.walk.nodes if not n.startswith("added")))
            pair.both(lambda sim: sim.cordon([node]))
            for key in sorted(p.key for p in pair.walk.pods_on(node)):
                pair.both(lambda sim: sim.evict(sim.pods[key]))
            pair.both(lambda sim: sim.settle())
            pair.both(lambda sim: sim.delete_node(node))
        for j in range(6):
            template = rng.choice(NAMES)
            pod = _pod(template, f"new-{k}-{j}")
            fast, walk = pair.place(pod)
            _same(fast, walk, pair, f"round {k}, pod {j}: {template}")
            if walk.node is not None:
                placed += 1
                pair.both(lambda sim: sim.bind(pod, walk.node))
    assert placed > 60 and fast_calls["fast"] >= placed * 0.8
    # the tables were derived (not built afresh) after the first deletion, and count arrays
    # made before several deletions were carried over them
    assert any(t.root is not t for t in pair.fast_placer._tables.values())
    assert max(moved_past) >= 2


# -- the small shortcuts of the placement arrays ---------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_stale_rows_are_the_rows_whose_version_differs(seed):
    """`_stale` answers "none" from one `any` and otherwise lists the differing positions
    of the slice, shifted by its start: the same as comparing row by row."""
    rng = np.random.default_rng(seed)
    at = rng.integers(0, 5, 40)
    version = at.copy()
    if seed % 3:
        flip = rng.choice(40, size=seed * 2, replace=False)
        version[flip] += 1
    for rows in (slice(None), slice(0, 40), slice(7, 23), slice(30, 40), slice(5, 5)):
        expected = [i for i in range(40)[rows] if at[i] != version[i]]
        assert vector._stale(at, version, rows) == expected, rows


@pytest.mark.parametrize("seed", range(4))
def test_score_rows_follow_each_nodes_usage(seed):
    """The table's rows that the scores read (what the nodes' pods request, and the non-zero
    requests LeastAllocated charges) against the simulation's usage node by node: nodes with
    nothing (or less than nothing) allocatable, pods without requests (the scheduler's
    non-zero defaults), negative requests from a hand-made dump, and after binds and a node
    deletion (the table derived from the old one). The score formulas themselves are
    engine/scorearrays.py's, held against the scalar ones in tests/test_scores.py."""
    from kubectl_tspread.views.drain.core import placement

    rng = random.Random(seed)
    allocs = [{"cpu": 4000, "memory": 16 * GI, "pods": 110}, {"cpu": 0, "memory": 8 * GI, "pods": 110},
              {"cpu": 2000, "memory": 0, "pods": 110}, {"cpu": -500, "memory": -GI, "pods": 110},
              {"cpu": 150, "memory": 300 * MI, "pods": 110}, {"cpu": 64000, "memory": 512 * GI, "pods": 110}]
    nodes = [make_node(f"n{i:02d}", zone="abc"[i % 3], allocatable=rng.choice(allocs)) for i in range(24)]
    requests = [{}, {"cpu": 250, "memory": GI}, {"cpu": 3900}, {"memory": 20 * GI}, {"cpu": -300, "memory": -GI}]
    pods = [make_pod(f"p{i}", node=rng.choice(nodes).name, requests=rng.choice(requests)) for i in range(60)]
    sim = SimCluster(make_snapshot(nodes, pods))
    tables: dict = {}

    def check() -> None:
        table = vector.tables_for(sim, tables)
        table.refresh_usage(sim, sim.version_array(), placement._nonzero)
        row_of = vector.usage_rows(placement._nonzero)
        for i, name in enumerate(table.order):
            usage = sim.usage_of(name, row_of)
            assert table.alloc["cpu"][i] - table.free["cpu"][i] == usage[0], name
            assert table.alloc["memory"][i] - table.free["memory"][i] == usage[1], name
            assert tuple(table.scored[:4, i].tolist()) == usage[:2] + usage[vector.NONZERO_COLUMNS], name
            alloc = (sim.nodes[name].allocatable.get("cpu", 0), sim.nodes[name].allocatable.get("memory", 0))
            assert table.scored[4, i] == scores.balance(usage[:2], alloc), name

    check()
    for k in range(8):
        sim.bind(make_pod(f"new{k}", requests=rng.choice(requests)), rng.choice(list(sim.nodes)))
    check()
    victim = rng.choice(list(sim.nodes))
    for p in sim.pods_on(victim):
        sim._drop(p)
    sim.delete_node(victim)
    check()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("odd", [True, False])
def test_spread_scores_are_score_nodes_over_any_found_nodes(seed, odd):
    """`vector.spread_scores` against spread.score_nodes for every template, over random sets
    of nodes, on a table of the whole node set and on one derived after node deletions:
    with the odd nodes (without a zone, a hostname or a rack label: the masks for nodes
    lacking a key) and without them (the zone and hostname keys on every node: no masks)."""
    rng = random.Random(seed)
    snap = _snapshot({"a": 12, "b": 12, "c": 10}, seed)
    if not odd:
        kept = tuple(n for n in snap.nodes if n.name[0] in "abc" and n.name[1:].isdigit())
        snap = make_snapshot(kept, [p for p in snap.pods if p.node_name in {n.name for n in kept}],
                             workloads=list(snap.workloads))
    sim = SimCluster(snap)
    tables: dict = {}

    def check(label: str) -> None:
        table = vector.tables_for(sim, tables)
        for template in NAMES:
            state = sim.spread_state(_pod(template, "incoming"))
            for size in (1, 2, 7, table.size):
                found = np.array(sorted(rng.sample(range(table.size), size)), dtype=np.int64)
                nodes = [sim.nodes[table.order[i]] for i in found]
                plain = spread.score_nodes(state, nodes)
                want = [plain.get(n.name, 0) for n in nodes]
                got = vector.spread_scores(table, sim, state, found)  # None: no soft constraint, no score
                assert (got.tolist() if got is not None else [0] * size) == want, (label, template, size)
                assert (got is None) == (not state.soft)

    check("whole")
    complete = vector.tables_for(sim, tables).complete
    assert (HOSTNAME_KEY in complete, ZONE_KEY in complete, "rack" in complete) == (not odd, not odd, False)
    for name in ("nohost", "nozone", "a003", "b007") if odd else ("a003", "b007"):
        for p in sim.pods_on(name):
            sim._drop(p)
        sim.delete_node(name)
    check("derived")


def test_fits_fast_path_answers_for_each_requests_map():
    """What it reads (resources._checked) is remembered per requests object; the answer is
    still the one of that object's resources: a second map with a GPU is not taken for the first."""
    plain = make_pod("a", requests={"cpu": 100, "memory": GI})
    same_map = make_pod("b", requests=plain.requests)
    gpu = make_pod("c", requests={"cpu": 100, GPU: 1})
    storage = make_pod("d", requests={"ephemeral-storage": GI})
    nothing = make_pod("e")
    for _ in range(2):  # asked twice: the remembered answers
        assert [vector.fits_fast_path(p) for p in (plain, same_map, gpu, storage, nothing)] == \
            [True, True, False, True, True]


@pytest.mark.parametrize("seed", range(6))
def test_spread_values_refuse_exactly_the_values_over_max_skew(seed):
    """Each value id's verdict is the engine's for that domain (ConstraintState.allows: the
    arrays hold the domains' counts under the table's value ids), for a pod its constraints
    select and for one they do not; the missing-key slot is always refused. The formula's
    array form itself is held against its scalar form in tests/test_spread.py."""
    rng = random.Random(seed)
    nodes = [make_node(f"{z}{i}", zone=z) for z in "abc" for i in range(4)] + [make_node("nozone")]
    cons = [_c(ZONE_KEY, "web", skew=1 + seed % 2), _c(HOSTNAME_KEY, "web", skew=2)]
    pods = [make_pod(f"web-{k}", node=rng.choice(nodes[:-1]).name, labels={"app": "web"}, spread=cons,
                     owner="ReplicaSet/web-1") for k in range(rng.randrange(8, 30))]
    # every zone gets a pod and zone a more than maxSkew over the others: a zone is refused, the minimum is not 0
    pods += [make_pod(f"web-z{k}", node=node, labels={"app": "web"}, spread=cons, owner="ReplicaSet/web-1")
             for k, node in enumerate(["a0", "b0", "c0"] + ["a1"] * (4 + seed % 2 + max(0, len(pods) - 8)))]
    sim = SimCluster(make_snapshot(nodes, pods))
    table = vector.tables_for(sim, Placer()._tables)
    for labels in ({"app": "web"}, {"app": "other"}):  # selfMatch 1, then 0
        state = sim.spread_state(make_pod("p", labels=labels, spread=cons, owner="ReplicaSet/web-1"))
        values = vector.spread_values(table, sim, state)
        assert len(values) == len(state.hard) == 2
        for cs, (vid, ok) in zip(state.hard, values):
            _, _, names, _ = table.values(sim, cs.constraint.topology_key)
            expected = [cs.allows(v) for v in names] + [False]
            assert ok.tolist() == expected
            if cs.constraint.topology_key == ZONE_KEY:  # a refused zone (a), allowed ones, a minimum above 0
                assert cs.global_min > 0 and expected[0] is False and True in expected[:-1]


@pytest.mark.parametrize("seed", range(8))
def test_fit_nodes_in_walk_order_are_the_walks(seed):
    """A stranded pod's fit nodes (InWalkOrder) are what `walk` over every node lists: the
    same count, and, when named, the same nodes in the same rotated order."""
    rng = np.random.default_rng(seed)
    total = 50
    mask = rng.random(total) < (0.0 if seed == 0 else 0.3)
    start = int(rng.integers(0, total))
    expected, _ = walk.walk(mask, start, total, total)
    got = walk.InWalkOrder(mask, start)
    assert len(got) == len(expected)
    assert got.tolist() == expected.tolist()
    names = [f"n{i}" for i in range(total)]
    assert tuple(vector.Names(names, got)) == tuple(vector.Names(names, expected))
