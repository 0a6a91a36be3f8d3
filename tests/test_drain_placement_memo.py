"""The placer remembers a template's no-node verdict for one simulated state only
(SimCluster.stamp): a pod like it on the same state gets the same verdict, and any
mutation that can change a placement makes it look again."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views.drain.pdb import Budgets
from kubectl_tspread.views.drain.core.placement import Placer, template_of
from kubectl_tspread.views.drain.core.steps import World, retry_pending
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.model import HOSTNAME_KEY, Toleration


def _full_cluster():
    """hostname maxSkew 1, one web pod on a1 and a2, a3 cordoned (an empty domain under
    nodeTaintsPolicy Ignore, so the global minimum is 0): a new web pod fits nowhere."""
    c = make_constraint(HOSTNAME_KEY)
    nodes = [make_node(f"a{i}", zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110},
                       unschedulable=i == 3) for i in (1, 2, 3)]
    pods = [make_pod(f"web-{i}", node=f"a{i}", labels={"app": "web"}, spread=[c], owner="ReplicaSet/web-1")
            for i in (1, 2)]
    return SimCluster(make_snapshot(nodes, pods))


def test_a_failed_template_is_remembered_until_the_state_changes():
    sim, placer = _full_cluster(), Placer()
    first, second = (sim.replacement_for(sim.pods["default/web-1"]) for _ in range(2))
    calls = []
    real = placer._place
    placer._place = lambda s, p, diagnose=True: calls.append(p.name) or real(s, p, diagnose)
    assert placer.place(sim, first).node is None
    again = placer.place(sim, second)
    assert again.node is None and again.pod is second and calls == [first.name]
    # a pod gone changes the counts: the next try looks again, and now fits
    sim.evict(sim.pods["default/web-2"])
    sim.settle()
    assert placer.place(sim, second).node == "a2" and calls == [first.name, second.name]


def test_a_fork_keeps_the_verdict_until_it_changes():
    sim, placer = _full_cluster(), Placer()
    pod = sim.replacement_for(sim.pods["default/web-1"])
    assert placer.place(sim, pod).node is None
    fork = sim.copy()
    assert fork.stamp == sim.stamp
    fork.cordon(["a1"])
    assert fork.stamp != sim.stamp


def test_a_retry_without_diagnosis_never_stands_in_for_a_diagnosis():
    """diagnose=False (a stranded pod's retry) skips the walk over every node; its verdict
    serves later retries on the same state, never a call that needs the diagnosis."""
    sim, placer = _full_cluster(), Placer()
    first, second = (sim.replacement_for(sim.pods["default/web-1"]) for _ in range(2))
    bare = placer.place(sim, first, diagnose=False)
    assert bare.node is None and not bare.fit_nodes and not bare.reasons
    assert placer.failed_now(sim, second)
    full = placer.place(sim, second)
    assert full.node is None and (full.fit_nodes or full.reasons)
    # and a diagnosed verdict serves a retry as it is
    assert placer.place(sim, first, diagnose=False) == replace(full, pod=first)


def _reference_retry(world) -> list[tuple[str, str]]:
    """Every pending pod tried in order, on a placer with no memory."""
    placer, placed, still = Placer(), [], []
    for repl, evicted in world.pending:
        pl = placer.place(world.sim, repl, diagnose=False)
        if pl.node is None:
            still.append((repl, evicted))
        else:
            world.sim.bind(repl, pl.node)
            placed.append((repl.name, pl.node))
    world.pending = still
    return placed


@pytest.mark.parametrize("seed", range(12))
def test_retrying_the_first_pod_of_each_template_places_what_trying_every_pod_does(seed):
    """Pending pods of interleaved templates (sizes, with and without a zone constraint)
    on nodes with little room: the shortcut of retry_pending binds the same pods on the
    same nodes and leaves the same pods pending, in the same order."""
    rng = random.Random(seed)
    nodes = [make_node(f"{z}{i}", zone=z, allocatable={"cpu": 3000, "memory": 16 * GI, "pods": 110})
             for z in "abc" for i in (1, 2)]
    sizes = [200, 900, 1600, 2600]
    bound = [make_pod(f"old-{k}", node=rng.choice(nodes).name, requests={"cpu": rng.choice(sizes)})
             for k in range(rng.randint(0, 6))]
    world = World(SimCluster(make_snapshot(nodes, bound)), Budgets.from_pdbs(()), {}, Placer())
    for k in range(14):
        spread = [make_constraint(selector={"app": "z"})] if rng.random() < 0.4 else []
        p = make_pod(f"new-{k}", labels={"app": "z"}, spread=spread, requests={"cpu": rng.choice(sizes)})
        world.sim.add_pending(p)
        world.add_pending(p, p)
    ref = world.copy()
    ours = [(r.name, node) for _, r, node in retry_pending(world)]
    assert ours == _reference_retry(ref)
    assert [r.name for r, _ in world.pending] == [r.name for r, _ in ref.pending]
    assert world.first_pending == {template_of(r): min(i for i, (q, _) in enumerate(world.pending)
                                                          if template_of(q) == template_of(r))
                                   for r, _ in world.pending}


def _stuck_world(sim):
    return World(sim, Budgets.from_pdbs(()), {}, Placer())


def test_a_stuck_template_is_retried_once_room_is_made_or_its_counts_move():
    sim = _full_cluster()
    world, web = _stuck_world(sim), sim.replacement_for(sim.pods["default/web-1"])
    assert Placer().place(sim, web).node is None
    world.note_stuck(web)
    other = make_pod("other", requests={"cpu": 100})
    sim.add_pending(other)
    sim.bind(other, "a1")  # a bind only takes room away
    sim.cordon(["a2"])
    assert world.still_stuck(web) and world.copy().still_stuck(web)
    world.sim = sim = _full_cluster()
    world.note_stuck(web)
    sim.evict(sim.pods["default/web-2"])  # a matching pod gone: the counts moved
    assert not world.still_stuck(web)
    world.sim = sim = _full_cluster()
    world.note_stuck(web)
    sim.evict(sim.pods["default/web-1"])
    sim.put_node(make_node("a4", zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110}))
    assert not world.still_stuck(web)  # a node added: room made


def test_a_pod_that_tolerates_the_cordon_is_never_noted():
    sim = _full_cluster()
    world = _stuck_world(sim)
    web = replace(sim.replacement_for(sim.pods["default/web-1"]),
                  tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),))
    world.note_stuck(web)
    assert not world.stuck and not world.still_stuck(web)


def test_whatever_happens_a_template_said_stuck_finds_no_node():
    """Random cordons, binds, evictions (from cordoned and schedulable nodes), settles,
    node additions and copies: whenever still_stuck says a template finds no node, a
    placer with no memory agrees."""
    said = sum(_random_stuck_checks(seed) for seed in range(10))
    assert said >= 30  # the memo did speak (else this checks nothing)


def _random_stuck_checks(seed: int) -> int:
    rng = random.Random(seed)
    c = make_constraint(max_skew=1, selector={"app": "web"})
    nodes = [make_node(f"{z}{i}", zone=z, allocatable={"cpu": 2000, "memory": 16 * GI, "pods": 110})
             for z in "abc" for i in (1, 2)]
    pods = [make_pod(f"web-{k}", node=rng.choice(nodes).name, labels={"app": "web"}, spread=[c],
                     requests={"cpu": rng.choice((300, 700))}) for k in range(9)]
    # pods the constraint does not count: evicting one makes room without moving the counts
    pods += [make_pod(f"filler-{k}", node=rng.choice(nodes).name, labels={"app": "filler"},
                      requests={"cpu": rng.choice((600, 900))}) for k in range(6)]
    world = _stuck_world(SimCluster(make_snapshot(nodes, pods)))
    # one template the spread constraint holds back, one only the room on the nodes
    templates = [make_pod("t-web", labels={"app": "web"}, spread=[c], requests={"cpu": 300}),
                 make_pod("t-big", labels={"app": "big"}, requests={"cpu": 1500})]
    said = 0
    for k in range(80):
        sim, r = world.sim, rng.random()
        pod = replace(rng.choice(templates), name=f"x-{k}", uid=f"x-{k}")
        if r < 0.35:
            if Placer().place(sim, pod).node is None:
                world.note_stuck(pod)
            elif rng.random() < 0.7:
                sim.add_pending(pod)
                sim.bind(pod, Placer().place(sim, pod).node)
        elif r < 0.5:
            sim.cordon([rng.choice(sorted(sim.nodes))])
        elif r < 0.75:
            bound = sorted(p.key for p in sim.pods.values() if p.node_name and not p.terminating)
            if bound:
                sim.evict(sim.pods[rng.choice(bound)])
                if rng.random() < 0.5:
                    sim.settle()
        elif r < 0.8:
            sim.put_node(make_node(f"new-{k}", zone=rng.choice("abc"),
                                   allocatable={"cpu": 2000, "memory": 16 * GI, "pods": 110}))
        elif r < 0.9:
            world = world.copy()
        for t in templates:
            if world.still_stuck(t):
                said += 1
                assert Placer().place(world.sim, t).node is None, (seed, k, t.name)
    return said
