"""System default constraints: which pods get them and with which selector (helper.DefaultSelector)."""

from __future__ import annotations

import pytest
from conftest import make_constraint, make_node, make_pod, make_service, make_snapshot, make_workload

from kubectl_tspread.engine import defaults
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import HOSTNAME_KEY, ZONE_KEY, OwnerRef

WEB = {"app": "web", "pod-template-hash": "7d9"}
RS = make_workload("ReplicaSet", "web-7d9", Selector.parse("app=web,pod-template-hash=7d9"))
SS = make_workload("StatefulSet", "db", {"app": "db"})
RC = make_workload("ReplicationController", "legacy", {"app": "web", "tier": "front"})
DS = make_workload("DaemonSet", "agent", {"app": "web"})

# (id, pod, workloads, services, expected selector string or None for no constraints)
CASES = [
    ("ReplicaSet pod gets its RS selector", make_pod("p", labels=WEB, owner="ReplicaSet/web-7d9"), [RS], [],
     "app=web,pod-template-hash=7d9"),
    ("Service selector merged with the RS requirements", make_pod("p", labels=WEB, owner="ReplicaSet/web-7d9"),
     [RS], [make_service("web", {"app": "web"})], "app=web,pod-template-hash=7d9"),
    ("StatefulSet pod", make_pod("p", labels={"app": "db"}, owner="StatefulSet/db"), [SS], [], "app=db"),
    ("ReplicationController map merged into the label set",
     make_pod("p", labels={"app": "web", "tier": "front"}, owner="ReplicationController/legacy"), [RC],
     [make_service("s", {"app": "web"})], "app=web,tier=front"),
    ("bare pod selected by no Service gets none", make_pod("p", labels=WEB), [], [], None),
    ("bare pod selected by a Service gets the Service selector", make_pod("p", labels=WEB), [],
     [make_service("web", {"app": "web"})], "app=web"),
    ("Service in another namespace does not count", make_pod("p", labels=WEB), [],
     [make_service("web", {"app": "web"}, namespace="other")], None),
    ("Service that does not select the pod does not count", make_pod("p", labels=WEB), [],
     [make_service("api", {"app": "api"})], None),
    ("Service without selector adds nothing", make_pod("p", labels=WEB), [], [make_service("ext", None)], None),
    ("DaemonSet pod gets none (unsupported controller)", make_pod("p", labels=WEB, owner="DaemonSet/agent"),
     [DS], [], None),
    ("controller missing from the snapshot adds nothing", make_pod("p", labels=WEB, owner="ReplicaSet/gone"),
     [RS], [], None),
    ("owner with a foreign apiVersion is not the apps/v1 ReplicaSet",
     make_pod("p", labels=WEB, owner=OwnerRef("ReplicaSet", "web-7d9", "x", "extensions/v1beta1")), [RS], [], None),
    ("pod with its own constraints gets no defaults",
     make_pod("p", labels=WEB, owner="ReplicaSet/web-7d9", spread=[make_constraint()]),
     [RS], [], None),
]


@pytest.mark.parametrize("pod,workloads,services,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_default_constraints(pod, workloads, services, want):
    index = ClusterIndex(make_snapshot([make_node("n1", zone="a")], [], workloads=workloads, services=services))
    got = defaults.default_constraints(index, pod)
    if want is None:
        assert got == ()
        return
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable, c.implicit) for c in got] == [
        (HOSTNAME_KEY, 3, "ScheduleAnyway", True), (ZONE_KEY, 5, "ScheduleAnyway", True)]
    assert {str(c.selector) for c in got} == {want}
    assert all(c.selector.matches(pod.labels) for c in got)
