"""The placer remembers a template's no-node verdict for one simulated state only
(SimCluster.stamp): a pod like it on the same state gets the same verdict, and any
mutation that can change a placement makes it look again."""

from __future__ import annotations

from dataclasses import replace

from conftest import GI, make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.drain.placement import Placer
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
