"""The drain simulator shifts memoised spread counts instead of recomputing them
(views/drain/core/counts.py): after any sequence of evictions, replacements and bindings the
shifted state must equal a fresh `spread.compute` on the same simulated cluster."""

from __future__ import annotations

import random

import pytest

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.engine import spread
from kubectl_tspread.model import HOSTNAME_KEY, SCHEDULE_ANYWAY


def _cluster(constraints, per_zone: int = 3, seed: int = 0):
    rng = random.Random(seed)
    nodes = [make_node(f"{z}{i}", zone=z, allocatable={"cpu": 64000, "memory": 64 * GI, "pods": 110})
             for z in "abc" for i in range(per_zone)]
    # one node without a zone label: excluded from zone domains, still counted per node
    nodes.append(make_node("nozone", allocatable={"cpu": 64000, "memory": 64 * GI, "pods": 110}))
    pods = []
    for k in range(14):
        node = rng.choice(nodes).name
        pods.append(make_pod(f"web-{k}", node=node, labels={"app": "web"}, spread=constraints,
                             owner="ReplicaSet/web-1", requests={"cpu": 100}))
    pods.append(make_pod("db-1", node="a0", labels={"app": "db"}))
    return SimCluster(make_snapshot(nodes, pods)), rng


CASES = [
    ("zone DoNotSchedule maxSkew 1", [make_constraint()]),
    ("hostname DoNotSchedule maxSkew 1", [make_constraint(HOSTNAME_KEY)]),
    ("zone hard + hostname soft maxSkew 2", [make_constraint(),
                                             make_constraint(HOSTNAME_KEY, max_skew=2, mode=SCHEDULE_ANYWAY)]),
    ("zone minDomains 4 (global minimum forced to 0)", [make_constraint(min_domains=4)]),
    ("zone, empty selector counts nothing", [make_constraint(selector={})]),
]


def _same_as_fresh(sim: SimCluster, probe) -> bool:
    """The memoised state equals a fresh compute, its hard constraints too (`hard` is left out
    of the dataclass's equality; the shifts pass it rather than let __post_init__ pick it)."""
    got, fresh = sim.spread_state(probe), spread.compute(sim.index, probe)
    return got == fresh and got.hard == fresh.hard and got.pod is probe


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constraints", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_shifted_counts_equal_a_fresh_compute_after_random_moves(constraints, seed):
    sim, rng = _cluster(constraints, seed=seed)
    probe = sim.replacement_for(sim.pods["default/web-0"])
    assert _same_as_fresh(sim, probe)
    for _ in range(30):
        running = sorted(p.key for p in sim.pods.values() if p.node_name and not p.terminating)
        victim = sim.pods[rng.choice(running)]
        sim.evict(victim)
        assert _same_as_fresh(sim, probe), "after evict"
        repl = sim.replacement_for(victim)
        sim.add_pending(repl)
        sim.bind(repl, rng.choice(sorted(sim.nodes)))
        assert _same_as_fresh(sim, probe), "after bind"
        if rng.random() < 0.5:
            sim.settle()
            assert _same_as_fresh(sim, probe), "after settle"


def test_a_fork_keeps_its_own_counts():
    sim, _ = _cluster([make_constraint(HOSTNAME_KEY)])
    probe = sim.replacement_for(sim.pods["default/web-0"])
    before = sim.spread_state(probe)
    fork = sim.copy()
    fork.evict(fork.pods["default/web-0"])
    fork.settle()
    assert sim.spread_state(probe) == before == spread.compute(sim.index, probe)
    assert fork.spread_state(probe) == spread.compute(fork.index, probe) != before


def test_whether_a_constraint_counts_a_pod_is_remembered_per_selector_and_labels_object():
    """counts.counts_in keeps the selector's verdict per (selector, labels) object pair: asked
    again, with other label objects of the same content, other content, another namespace and
    a selector that counts nothing, it answers what the selector itself says."""
    from kubectl_tspread.views.drain.core import counts

    sim, _ = _cluster([make_constraint(), make_constraint(HOSTNAME_KEY, selector={})])
    state = sim.spread_state(sim.replacement_for(sim.pods["default/web-0"]))
    zone, host = state.constraints
    pods = [make_pod(f"p{i}", node="a0", labels=labels, namespace=ns)
            for i, (labels, ns) in enumerate([({"app": "web"}, "default"), ({"app": "web"}, "default"),
                                               ({"app": "db"}, "default"), ({"app": "web", "x": "1"}, "default"),
                                               ({"app": "web"}, "other"), ({}, "default")])]
    for _ in range(2):  # the second round answers from the memo
        for p in pods:
            for cs in (zone, host):
                want = (cs.namespace == p.namespace and spread._counts_pods(cs.selector)
                        and cs.selector.matches(p.labels))
                assert counts.counts_in(cs, p) == want, (p.name, cs.constraint.topology_key)
    assert [counts.counts_in(zone, p) for p in pods] == [True, True, False, True, False, False]
    assert not any(counts.counts_in(host, p) for p in pods)  # an empty selector counts nothing
