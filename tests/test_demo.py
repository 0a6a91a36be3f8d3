"""The built-in demo cluster: its shape, the story each workload tells, and the scheduler's words.

Per-zone counts are asserted here by reading the records; the engine's verdicts on them
(OK / DRIFTED / VIOLATED / AT LIMIT) belong to the engine's own tests.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kubectl_tspread.model import (
    HOSTNAME_KEY, NO_EXECUTE, NO_SCHEDULE, SCHEDULE_ANYWAY, UNSCHEDULABLE_TAINT_KEY, ZONE_KEY, Pod, Snapshot,
    Taint,
)
from kubectl_tspread.snapshot.demo import DEMO_NAMESPACE, load_demo

ROOT = Path(__file__).resolve().parent.parent
ZONES = ("us-east-2a", "us-east-2b", "us-east-2c")


@pytest.fixture(scope="module")
def demo() -> Snapshot:
    return load_demo()


def app_pods(snap: Snapshot, app: str) -> list[Pod]:
    return [p for p in snap.pods if p.labels.get("app") == app]


def per_zone(snap: Snapshot, pods: list[Pod]) -> dict[str, int]:
    zone = {n.name: n.labels[ZONE_KEY] for n in snap.nodes}
    counts = Counter(zone[p.node_name] for p in pods if p.node_name)
    return {z: counts.get(z, 0) for z in ZONES}


def test_committed_json_is_what_gen_demo_writes():
    """The JSON is generated, deterministically; a hand edit or a stale copy fails here."""
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen-demo"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_nodes_three_zones_labels_and_allocatable(demo):
    assert len(demo.nodes) == 11
    assert sorted({n.labels[ZONE_KEY] for n in demo.nodes}) == list(ZONES)
    for n in demo.nodes:
        assert n.labels[HOSTNAME_KEY] == n.name
        assert n.allocatable["cpu"] >= 3920 and n.allocatable["memory"] > 14 * 2**30 and n.allocatable["pods"] >= 58
    assert demo.node("node-a4").allocatable["cpu"] == 15890  # the big node recommendations piles onto


def test_zone_c_and_only_zone_c_is_cordoned_with_the_taint(demo):
    cordoned = sorted(n.name for n in demo.nodes if n.unschedulable)
    assert cordoned == ["node-c1", "node-c2", "node-c3"]
    assert all(n.labels[ZONE_KEY] == "us-east-2c" for n in demo.nodes if n.name in cordoned)
    assert sum(n.labels[ZONE_KEY] == "us-east-2c" for n in demo.nodes) == 3
    for name in cordoned:
        # the dump carries the taint the node lifecycle controller adds, not only spec.unschedulable
        assert (UNSCHEDULABLE_TAINT_KEY, NO_SCHEDULE) in [(t.key, t.effect) for t in demo.node(name).taints]


def test_gpu_node_is_tainted(demo):
    assert [(t.key, t.value, t.effect) for t in demo.node("node-b4").taints] == [
        ("nvidia.com/gpu", "present", NO_SCHEDULE)]


@pytest.mark.parametrize("namespace, all_namespaces, want", [
    pytest.param(None, False, DEMO_NAMESPACE, id="default: shop, where the story is"),
    pytest.param("monitoring", False, "monitoring", id="-n monitoring"),
    pytest.param(None, True, None, id="-A: every namespace"),
])
def test_namespace(namespace, all_namespaces, want):
    snap = load_demo(namespace=namespace, all_namespaces=all_namespaces)
    assert snap.namespace == want and snap.source == "demo"


def test_small_enough_to_be_instant(demo):
    assert len(demo.pods) <= 120


STORY = [
    pytest.param("checkout", (2, 2, 2), 0, id="(1) checkout balanced 2/2/2"),
    pytest.param("recommendations", (8, 2, 2), 0, id="(2) recommendations ScheduleAnyway drifted 8/2/2"),
    pytest.param("inventory", (4, 1, 1), 0, id="(3) inventory left at 4/1/1 by a scale-down"),
    pytest.param("catalog", (2, 2, 2), 0, id="(4) catalog zone+hostname 2/2/2"),
    pytest.param("search", (3, 2, 3), 2, id="(5) search 3/2/3 with 2 Pending"),
    pytest.param("notifications", (1, 1, 0), 1, id="(6) notifications 1/1/0 with 1 Pending behind the cordon"),
    pytest.param("cart", (3, 2, 2), 0, id="cart mid-rollout 3/2/2 counted together"),
    pytest.param("frontend", (2, 2, 0), 0, id="frontend without constraints"),
]


@pytest.mark.parametrize("app, counts, pending", STORY)
def test_story_workload_counts(demo, app, counts, pending):
    pods = app_pods(demo, app)
    assert per_zone(demo, pods) == dict(zip(ZONES, counts))
    assert sum(p.pending for p in pods) == pending
    assert all(p.namespace == DEMO_NAMESPACE for p in pods)


def constraints(demo, app):
    return {(c.topology_key, c.max_skew, c.when_unsatisfiable, c.match_label_keys)
            for p in app_pods(demo, app) for c in p.spread}


def test_story_constraints(demo):
    zone_hard = {(ZONE_KEY, 1, "DoNotSchedule", ())}
    assert constraints(demo, "checkout") == {(ZONE_KEY, 1, "DoNotSchedule", ("pod-template-hash",))}
    assert constraints(demo, "recommendations") == {(ZONE_KEY, 1, SCHEDULE_ANYWAY, ())}
    for app in ("inventory", "search", "notifications", "cart"):
        assert constraints(demo, app) == zone_hard, app
    assert constraints(demo, "catalog") == zone_hard | {(HOSTNAME_KEY, 1, "DoNotSchedule", ())}
    assert constraints(demo, "frontend") == set()


def test_recommendations_piles_onto_the_big_node(demo):
    on = Counter(p.node_name for p in app_pods(demo, "recommendations"))
    assert on["node-a4"] == 7


def test_catalog_one_pod_per_node(demo):
    on = Counter(p.node_name for p in app_pods(demo, "catalog"))
    assert set(on.values()) == {1} and len(on) == 6


def test_checkout_pods_carry_the_merged_pod_template_hash(demo):
    """Since 1.34 the API server merges matchLabelKeys into the pod's selector at creation."""
    for p in app_pods(demo, "checkout"):
        (c,) = p.spread
        assert c.selector.matches(p.labels)
        assert any(r.key == "pod-template-hash" and r.values == (p.labels["pod-template-hash"],)
                   for r in c.selector.requirements)


def test_cart_is_mid_rollout_without_match_label_keys(demo):
    pods = app_pods(demo, "cart")
    by_hash: dict[str, list[Pod]] = {}
    for p in pods:
        by_hash.setdefault(p.labels["pod-template-hash"], []).append(p)
    assert len(by_hash) == 2
    old, new = sorted(by_hash.values(), key=lambda ps: min(p.created for p in ps))
    assert per_zone(demo, old) == {"us-east-2a": 0, "us-east-2b": 1, "us-east-2c": 2}
    assert per_zone(demo, new) == {"us-east-2a": 3, "us-east-2b": 1, "us-east-2c": 0}
    assert sum(not p.ready for p in new) == 1  # the newest is still starting: the rollout is mid-way
    assert all(not c.match_label_keys for p in pods for c in p.spread)
    rs = {w.name for w in demo.workloads if w.kind == "ReplicaSet" and w.name.startswith("cart-")}
    assert rs == {f"cart-{h}" for h in by_hash}


def test_implicit_defaults_have_a_service_and_a_controller(demo):
    (svc,) = [s for s in demo.services if s.name == "frontend"]
    assert svc.selector == {"app": "frontend"}
    assert all(p.owner is not None and p.owner.kind == "ReplicaSet" for p in app_pods(demo, "frontend"))
    assert {p.owner.kind for p in app_pods(demo, "orders-db")} == {"StatefulSet"}


def test_daemonset_pod_on_every_node(demo):
    snap = load_demo(all_namespaces=True)
    ds = [p for p in snap.pods if p.owner is not None and p.owner.kind == "DaemonSet"]
    assert sorted(p.node_name for p in ds) == sorted(n.name for n in snap.nodes)
    assert all(p.namespace == "monitoring" for p in ds)
    # the DaemonSet controller pins each pod with matchFields metadata.name
    for p in ds:
        (term,) = p.node_affinity
        assert [(r.key, r.values) for r in term.match_fields] == [("metadata.name", (p.node_name,))]


def test_pdbs(demo):
    pdbs = {p.name: p for p in demo.pdbs}
    assert {"checkout", "catalog", "search"} <= set(pdbs)
    assert pdbs["checkout"].max_unavailable == 1 and pdbs["checkout"].disruptions_allowed == 1
    # two of search's ten pods are Pending, so its budget (minAvailable 8) allows nothing
    assert (pdbs["search"].min_available, pdbs["search"].current_healthy, pdbs["search"].disruptions_allowed) == (8, 8, 0)
    for pdb in pdbs.values():
        assert pdb.expected_pods == len(app_pods(demo, pdb.name))


def test_inventory_timeline_shows_skew_climbing_past_max_skew(demo):
    """DoNotSchedule held at each placement of the original 12; the 6 survivors replayed in
    creation order still show the skew the scale-down left."""
    zone = {n.name: n.labels[ZONE_KEY] for n in demo.nodes}
    counts, skews = Counter({z: 0 for z in ZONES}), []
    for p in sorted(app_pods(demo, "inventory"), key=lambda p: p.created):
        counts[zone[p.node_name]] += 1
        skews.append(max(counts.values()) - min(counts.values()))
    assert skews == [1, 1, 0, 1, 2, 3]


def test_timestamps_tell_a_believable_order(demo):
    created = {n.name: n.created for n in demo.nodes}
    cordon = "2026-03-02T09:15:00Z"
    for p in load_demo(all_namespaces=True).pods:
        if p.node_name:
            assert p.created > created[p.node_name], p.name
    rs_created = {w.name: w.created for w in demo.workloads if w.kind == "ReplicaSet"}
    for p in demo.pods:
        if p.owner is not None and p.owner.kind == "ReplicaSet":
            assert p.created > rs_created[p.owner.name], p.name
    # nothing created after the cordon landed in zone c
    assert all(not p.node_name.startswith("node-c") for p in demo.pods if p.created > cordon)
    assert all(p.created > cordon for p in demo.pods if p.pending)


def test_pending_pods_carry_the_message_in_condition_and_event(demo):
    pending = [p for p in demo.pods if p.pending]
    assert sorted(p.labels["app"] for p in pending) == ["notifications", "search", "search"]
    for p in pending:
        cond = p.condition("PodScheduled")
        assert (cond.status, cond.reason) == ("False", "Unschedulable")
        (ev,) = [e for e in demo.events if e.object_name == p.name]
        assert (ev.reason, ev.object_kind, ev.message) == ("FailedScheduling", "Pod", cond.message)


# --- the scheduler's message, re-derived from the records ------------------------------------
# A deliberately small, independent model of the filters the demo exercises (it is not the
# engine): it proves the hand-written messages in scripts/gen-demo match the demo's own state.

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def tolerated(pod: Pod, taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in pod.tolerations)


def first_failure(snap: Snapshot, pod: Pod, node) -> tuple[list[str], bool]:
    """(reasons of the first failing filter, whether preemption could help) for one node."""
    if node.unschedulable and not tolerated(pod, Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)):
        return ["node(s) were unschedulable"], False
    if any(t.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerated(pod, t) for t in node.taints):
        return ["node(s) had untolerated taint(s)"], False
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return ["node(s) didn't match Pod's node affinity/selector"], False
    used: Counter[str] = Counter()
    for p in snap.pods:
        if p.node_name == node.name:
            used.update(p.requests)
    short = [f"Insufficient {r}" for r, q in sorted(pod.requests.items()) if used[r] + q > node.allocatable.get(r, 0)]
    if short:
        return short, True
    for c in pod.spread:
        if not c.hard:
            continue
        counts = Counter({n.labels[c.topology_key]: 0 for n in snap.nodes if c.topology_key in n.labels})
        for p in snap.pods:
            if p.node_name and p.namespace == pod.namespace and c.selector.matches(p.labels):
                counts[snap.node(p.node_name).labels[c.topology_key]] += 1
        self_match = 1 if c.selector.matches(pod.labels) else 0
        if counts[node.labels[c.topology_key]] + self_match - min(counts.values()) > c.max_skew:
            return ["node(s) didn't match pod topology spread constraints"], True
    return [], True


def histogram(total: int, reasons: Counter) -> str:
    return f"0/{total} nodes are available: " + ", ".join(sorted(f"{n} {r}" for r, n in reasons.items())) + "."


@pytest.mark.parametrize("app", ["search", "notifications"])
def test_scheduler_message_matches_the_state(demo, app):
    everything = load_demo(all_namespaces=True)
    # no pod has a lower priority than the pending ones, so preemption finds no victim anywhere
    assert {p.priority for p in everything.pods} == {0}
    for pod in (p for p in app_pods(demo, app) if p.pending):
        reasons: Counter[str] = Counter()
        preemption: Counter[str] = Counter()
        for node in everything.nodes:
            failed, resolvable = first_failure(everything, pod, node)
            assert failed, f"{pod.name} would fit on {node.name}"
            reasons.update(failed)
            preemption[NO_VICTIMS if resolvable else NOT_HELPFUL] += 1
        n = len(everything.nodes)
        want = (histogram(n, reasons) + " no new claims to deallocate, preemption: "
                + histogram(n, preemption))
        assert pod.condition("PodScheduled").message == want


def test_search_is_blocked_by_cpu_in_the_only_zone_spread_allows(demo):
    """The two halves of story (5): zone b is the only zone spread allows, and it is full."""
    everything = load_demo(all_namespaces=True)
    pod = next(p for p in app_pods(demo, "search") if p.pending)
    verdicts = {n.name: first_failure(everything, pod, n)[0] for n in everything.nodes}
    assert {k for k, v in verdicts.items() if v == ["Insufficient cpu"]} == {"node-b1", "node-b2", "node-b3"}
    assert {k for k, v in verdicts.items() if v == ["node(s) didn't match pod topology spread constraints"]} == {
        "node-a1", "node-a2", "node-a3", "node-a4"}
