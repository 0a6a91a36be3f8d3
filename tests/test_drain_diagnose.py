"""views/drain/diagnose.py: which domains a stranded replacement's refusing constraint is trapped by."""

from __future__ import annotations

from conftest import make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views.drain.diagnose import closed_domains, cordoned_min_domains
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.model import HONOR, HOSTNAME_KEY, UNSCHEDULABLE_TAINT_KEY, Toleration


def _sim(zone_pods: dict[str, int], cordoned: set[str], *constraints, tolerations=()):
    """Two nodes per zone (`z`-1, `z`-2), `zone_pods[z]` web pods on `z`-1, the nodes in
    `cordoned` cordoned; the probe's spread is `constraints`, its tolerations `tolerations`."""
    nodes = [make_node(f"{z}-{i}", zone=z, unschedulable=f"{z}-{i}" in cordoned)
             for z in sorted(zone_pods) for i in (1, 2)]
    pods = [make_pod(f"web-{z}-{k}", node=f"{z}-1", labels={"app": "web"}, spread=list(constraints))
            for z, n in sorted(zone_pods.items()) for k in range(n)]
    sim = SimCluster(make_snapshot(nodes=nodes, pods=pods))
    probe = make_pod("probe", labels={"app": "web"}, spread=list(constraints), tolerations=tuple(tolerations))
    return sim, sim.spread_state(probe).constraints


def test_only_fully_cordoned_domains_at_the_global_minimum_trap():
    # zones a and b fully cordoned; a holds the minimum (0), b does not; c is open
    sim, (cs,) = _sim({"a": 0, "b": 3, "c": 1}, {"a-1", "a-2", "b-1", "b-2", "c-1"}, make_constraint())
    assert cs.global_min == 0
    assert [d.value for d in closed_domains(sim, cs)] == ["a", "b"]
    assert cordoned_min_domains(sim, cs) == ["a"]


def test_a_domain_with_an_open_node_is_not_closed():
    sim, (cs,) = _sim({"a": 0, "b": 2}, {"a-1"}, make_constraint())
    assert closed_domains(sim, cs) == [] and cordoned_min_domains(sim, cs) == []


def test_hostname_domains_at_the_minimum_that_are_cordoned():
    # every node its own domain: the cordoned empty ones hold the minimum (0)
    sim, (cs,) = _sim({"a": 1, "b": 0}, {"a-1", "a-2", "b-1"}, make_constraint(HOSTNAME_KEY))
    assert cordoned_min_domains(sim, cs) == ["a-2", "b-1"]  # a-1 is cordoned but holds a pod


def test_under_honor_no_domain_is_closed():
    sim, (cs,) = _sim({"a": 0, "b": 3, "c": 1}, {"a-1", "a-2"}, make_constraint(node_taints_policy=HONOR))
    assert closed_domains(sim, cs) == [] and cordoned_min_domains(sim, cs) == []


def test_under_honor_a_pod_tolerating_the_cordon_is_trapped_nowhere():
    # the cordoned zone stays a domain (the pod tolerates the cordon) and can take the pod
    sim, (cs,) = _sim({"a": 0, "b": 3, "c": 1}, {"a-1", "a-2"}, make_constraint(node_taints_policy=HONOR),
                      tolerations=[Toleration(UNSCHEDULABLE_TAINT_KEY, "Exists")])
    assert "a" in cs.domains and cs.global_min == 0
    assert closed_domains(sim, cs) == [] and cordoned_min_domains(sim, cs) == []


def test_closed_domains_follow_every_node_change_in_each_copy():
    """A domain listing more than a few nodes has its answer remembered per Node objects
    (sim.node_epoch): after each cordon, deletion or Node replaced (an uncordon), in the
    simulation and in copies going their own ways, the answer is the walk's, and zones
    close and open again on the way."""
    import random
    from dataclasses import replace

    from kubectl_tspread.views.drain import diagnose

    assert diagnose._WALKED < 12
    nodes = [make_node(f"{z}-{i:02d}", zone=z) for z in "abc" for i in range(12)]
    con = make_constraint()
    probe = make_pod("probe", labels={"app": "web"}, spread=[con])
    changes = 0
    for seed in range(8):
        rng = random.Random(seed)
        sims = [SimCluster(make_snapshot(nodes=nodes, pods=[]))]
        last: dict[int, list[str]] = {}
        for _ in range(120):
            sim = rng.choice(sims)
            zone = rng.choice("abc")
            names = sorted(n for n in sim.nodes if n.startswith(zone))
            op = rng.random()
            if op < 0.55 and names:
                sim.cordon(rng.sample(names, min(len(names), rng.choice((1, 4)))))
            elif op < 0.7 and len(names) > 1:  # an open node, mostly: the zone may close with it
                sim.delete_node(rng.choice([n for n in names if not sim.nodes[n].unschedulable] or names))
            elif op < 0.9 and names:
                name = rng.choice(names)
                sim.put_node(replace(sim.nodes[name], unschedulable=False))
            else:
                sims.append(sim.copy())
            for i, s in enumerate(sims):
                cs = s.spread_state(probe).constraints[0]
                walked = [d.value for d in cs.domains.values()
                          if all(s.nodes[n].unschedulable for n in d.nodes if n in s.nodes)]
                assert [d.value for d in closed_domains(s, cs)] == walked, seed
                changes += last.get(i, walked) != walked
                last[i] = walked
    assert changes > 10
