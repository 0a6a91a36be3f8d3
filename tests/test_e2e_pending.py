"""why-pending against pods the real kube-scheduler left Pending (tests/controlplane.py).

The scheduler writes its verdict into the pod's PodScheduled condition; `why-pending -o json`
rebuilds the message from its own filters (`message`) and reads the live one
(`schedulerMessage`). Both must equal the condition's message byte for byte.
"""

from __future__ import annotations

import pytest

from controlplane import (ControlPlane, bare_pod, cordon, deployment, nodes_in, ready_count, scheduled_condition,
                          tspread_json, zone_spread)

pytestmark = pytest.mark.e2e


def unschedulable_message(cp: ControlPlane, namespace: str, name: str) -> str:
    def check():
        pod = cp.core().read_namespaced_pod(name, namespace)
        cond = scheduled_condition(pod)
        return cond.message if cond is not None and cond.status == "False" and cond.message else None

    return cp.wait(f"the scheduler's verdict on {namespace}/{name}", check, timeout=60)


def rebuilt(cp: ControlPlane, namespace: str, name: str) -> dict:
    report = tspread_json(cp, "why-pending", f"pod/{name}", "-n", namespace, "--no-fixes", codes=(0, 3))
    [pod] = report["pods"]
    return pod


def assert_same_message(cp: ControlPlane, namespace: str, name: str) -> str:
    """The message why-pending rebuilds for the server's minor (read from /version) is the one
    the real scheduler wrote, byte for byte."""
    live = unschedulable_message(cp, namespace, name)
    pod = rebuilt(cp, namespace, name)
    assert pod["schedulerMessage"] == live
    assert pod["schedulable"] is False
    assert pod["message"] == live, f"rebuilt:\n  {pod['message']}\nscheduler:\n  {live}"
    assert pod["messagesAgree"] is True
    return live


def test_a_request_above_every_node_gets_the_schedulers_own_message(control_plane, namespace):
    cp = control_plane
    ns = namespace
    cp.create(bare_pod("big", cpu="5"), namespace=ns)
    live = assert_same_message(cp, ns, "big")
    assert "Insufficient cpu" in live


def test_an_untolerated_taint_and_a_node_selector_give_the_schedulers_message(control_plane, namespace):
    cp = control_plane
    ns = namespace
    names = ["e2e-tainted-1", "e2e-tainted-2"]
    try:
        for name in names:
            cp.create({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "pool": "tainted",
                                                             "topology.kubernetes.io/zone": "zone-a"}},
                       "spec": {"taints": [{"key": "dedicated", "value": "e2e", "effect": "NoSchedule"}]},
                       "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                                  "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
        cp.wait("the tainted nodes Ready", lambda: all(
            any(c.type == "Ready" and c.status == "True" for c in cp.core().read_node(n).status.conditions or ())
            for n in names))
        cp.create(bare_pod("picky", nodeSelector={"pool": "tainted"}), namespace=ns)
        live = assert_same_message(cp, ns, "picky")
        assert "untolerated" in live or "taint" in live
    finally:
        for name in names:
            cp.core().delete_node(name)


def test_a_spread_blocked_pod_after_a_zone_is_cordoned(control_plane, namespace):
    cp = control_plane
    ns = namespace
    labels = {"app": "web"}
    cp.create(deployment("web", 3, [zone_spread(labels)]), namespace=ns)
    cp.wait("3 web pods Ready", lambda: ready_count(cp.pods(ns, "app=web")) == 3)
    zone_c = nodes_in(cp, "zone-c")
    cordon(cp, *zone_c)
    try:
        cp.apps().patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 6}})
        cp.wait("5 web pods Ready", lambda: ready_count(cp.pods(ns, "app=web")) == 5)

        def pending():
            left = [p for p in cp.pods(ns, "app=web") if not p.spec.node_name]
            return left[0].metadata.name if len(left) == 1 else None

        name = cp.wait("one web pod left Pending", pending)
        live = assert_same_message(cp, ns, name)
        assert "didn't match pod topology spread constraints" in live
        assert f"{len(zone_c)} node(s) were unschedulable" in live
    finally:
        cordon(cp, *zone_c, on=False)


def test_a_cordon_without_the_taint_still_counts_under_honor(control_plane, namespace):
    """The issue's first disagreement on a real scheduler: a1 (zone za) cordoned with no taint
    (the node lifecycle controller has not tainted it), b1 (zone zb) holding one app=web pod.
    Under nodeTaintsPolicy Honor the scheduler still counts za (0 pods), so the minimum is 0
    and b1 is refused; the kubelet stand-in leaves both nodes alone (no cordon taint)."""
    cp = control_plane
    ns = namespace
    names = {"e2e-a1": "e2e-za", "e2e-b1": "e2e-zb"}
    try:
        for name, zone in names.items():
            cp.create({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "annotations": {"tspread.dev/kubelet-stand-in": "off"},
                                    "labels": {"kubernetes.io/hostname": name, "pool": "e2e-issue",
                                               "topology.kubernetes.io/zone": zone}},
                       "spec": {"unschedulable": name == "e2e-a1"},
                       "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                                  "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                                  "conditions": [{"type": "Ready", "status": "True"}]}})
            # the API server's TaintNodesByCondition put node.kubernetes.io/not-ready on it
            cp.core().patch_node(name, {"spec": {"taints": None}})
        assert not any(cp.core().read_node(n).spec.taints for n in names)
        cp.create(bare_pod("web-b1", labels={"app": "web"}, nodeName="e2e-b1"), namespace=ns)
        cp.core().patch_namespaced_pod_status("web-b1", ns, {"status": {"phase": "Running"}})
        spread = zone_spread({"app": "web"}, nodeTaintsPolicy="Honor")
        cp.create(bare_pod("p", labels={"app": "web"}, spread=[spread], nodeSelector={"pool": "e2e-issue"}),
                  namespace=ns)
        live = unschedulable_message(cp, ns, "p")
        if "1 node(s) didn't match pod topology spread constraints, 1 node(s) were unschedulable" not in live:
            pytest.fail(f"the scheduler's message is not the issue's: {live}")
        assert_same_message(cp, ns, "p")
    finally:
        # no kubelet runs these nodes: their pods would stay terminating until the pod GC's quarantine
        cp.core().delete_collection_namespaced_pod(ns, grace_period_seconds=0)
        for name in names:
            cp.core().delete_node(name)
