"""The placer remembers a template's no-node verdict for one simulated state only
(SimCluster.stamp): a pod like it on the same state gets the same verdict, and any
mutation that can change a placement makes it look again."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.drain.pdb import Budgets
from kubectl_tspread.drain.placement import Placer, template_of
from kubectl_tspread.drain.steps import World, retry_pending
from kubectl_tspread.drain.simulate import SimCluster
from kubectl_tspread.model import HOSTNAME_KEY


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
    ours = [(r.name, node) for _, r, node in retry_pending(None, world)]
    assert ours == _reference_retry(ref)
    assert [r.name for r, _ in world.pending] == [r.name for r, _ in ref.pending]
    assert world.first_pending == {template_of(r): min(i for i, (q, _) in enumerate(world.pending)
                                                          if template_of(q) == template_of(r))
                                   for r, _ in world.pending}
