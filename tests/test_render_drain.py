"""The drain plan table stays readable on big drains: long accepting-domain lists are
counted, and each step lists the constraints of the workloads it moves (plus any over
its limit) unless -o wide."""

import pytest

from kubectl_tspread.model.plan import ConstraintAfter, DrainPlan, Eviction, Step
from kubectl_tspread.render.drain import plan_text
from kubectl_tspread.render.table import SUMMARY_DOMAINS

HOSTS = tuple(f"node-{i:03d}" for i in range(SUMMARY_DOMAINS + 3))


def _constraint(workload: str, skew: int = 1, when: str = "DoNotSchedule") -> ConstraintAfter:
    return ConstraintAfter(workload, "shop", "topology.kubernetes.io/zone", 1, when, {"a": 2, "b": 1 + (skew == 1)},
                           1, skew, 1, "OK")


def _plan() -> DrainPlan:
    web = Eviction("shop", "web-1", "n1", "Deployment/web", True, "n2",
                   {"topology.kubernetes.io/zone": ("a", "b"), "kubernetes.io/hostname": HOSTS})
    after = (_constraint("Deployment/web"), _constraint("Deployment/api"),
             _constraint("Deployment/db", skew=2), _constraint("Deployment/web", when="ScheduleAnyway"))
    return DrainPlan(("n1",), False, (Step(1, ("n1",), ("n1",), (web,), (), after, (), True),), (), ())


def _render(wide: bool) -> str:
    return plan_text(_plan(), wide=wide)


@pytest.mark.parametrize("wide, accepting", [
    (False, f"zone:a,b hostname:{len(HOSTS)} domains"),
    (True, "zone:a,b hostname:" + ",".join(HOSTS)),
], ids=["default: a hostname key's accepting nodes are counted", "-o wide: every accepting node is listed"])
def test_accepting_domains_past_the_summary_size(wide, accepting):
    row = next(line for line in _render(wide).splitlines() if "shop/web-1" in line)
    assert row.rstrip().endswith(accepting)


@pytest.mark.parametrize("wide", [False, True], ids=["default", "-o wide"])
def test_the_simulations_lazy_accepting_map_prints_like_the_dict(wide):
    """vector.Accepting counts a hostname key's domains without naming them: the same text."""
    from dataclasses import replace

    import numpy as np

    from kubectl_tspread.views.drain.core.vector import Accepting

    hosts = list(HOSTS) + ["node-x"]  # in name order, as NodeTable.by_name gives them
    zone = np.array([0, 1] * (len(HOSTS) // 2) + [0] * (len(HOSTS) % 2) + [2])
    parts = {"topology.kubernetes.io/zone": (zone, 3, np.arange(3), ["a", "b", "c"]),
             "kubernetes.io/hostname": (np.arange(len(hosts)), len(hosts), np.arange(len(hosts)), hosts)}
    feasible = np.arange(len(HOSTS), dtype=np.int32)  # all but node-x, the only node of zone c
    texts = []
    for accepting in (Accepting(parts, feasible), _plan().steps[0].evictions[0].accepting_domains):
        plan = _plan()
        step = plan.steps[0]
        evictions = (replace(step.evictions[0], accepting_domains=accepting),)
        plan = replace(plan, steps=(replace(step, evictions=evictions),))
        texts.append(plan_text(plan, wide=wide))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("wide, shown, hidden", [
    (False, ["Deployment/web", "Deployment/db"], ["Deployment/api"]),
    (True, ["Deployment/web", "Deployment/db", "Deployment/api"], []),
], ids=["default: the moved workload and the one over its limit, not the untouched one",
        "-o wide: every tracked constraint"])
def test_constraints_listed_per_step(wide, shown, hidden):
    text = _render(wide)
    table = text.split("Constraints after each step:", 1)[1].split("\n\n", 1)[0]
    for w in shown:
        assert w in table
    for w in hidden:
        assert w not in table
    # the moved workload's ScheduleAnyway constraint too, in wide
    assert table.count("Deployment/web") == (2 if wide else 1)


def test_a_constraint_shared_by_steps_and_its_successor_each_show_their_own_row():
    """Steps keep a constraint object while its workload does not move: each step still shows
    its own number, and a later object of the same constraint its own counts and status."""
    from dataclasses import replace

    plan = _plan()
    step = plan.steps[0]
    same = _constraint("Deployment/db", skew=2)  # over its limit: shown at every step
    later = replace(same, distribution={"a": 5, "b": 1}, skew=4)
    steps = tuple(replace(step, number=n, constraints_after=(c,)) for n, c in ((1, same), (2, same), (3, later)))
    text = plan_text(replace(plan, steps=steps))
    table = text.split("Constraints after each step:", 1)[1].split("\n\n", 1)[0]
    rows = [line.split() for line in table.strip().splitlines()[1:]]
    assert rows == [["1", "Deployment/db", "zone", "maxSkew=1", "a=2", "b=1", "2", "OVER", "LIMIT"],
                    ["2", "Deployment/db", "zone", "maxSkew=1", "a=2", "b=1", "2", "OVER", "LIMIT"],
                    ["3", "Deployment/db", "zone", "maxSkew=1", "a=5", "b=1", "4", "OVER", "LIMIT"]]
