"""A running pod's requests under in-place resize, by minor (engine/podrequests.py).

The expected numbers are worked out by hand from k8s.io/component-helpers resource.PodRequests
of each minor: `determineContainerReqs` (v0.33) / `determineEffectiveRequests` (v0.35, v0.36)
per container for 1.33-1.36, `AggregateContainerRequests` with `aggregateContainerResourcesByFn`
(max of the spec, actuated and allocated sums) for 1.37, and `PodRequests`'
`effectivePodLevelResources` for pod-level requests; NodeInfo's Non0CPU/Non0Mem from
pkg/scheduler/framework/types.go `getNonMissingContainerRequests`.
"""

from __future__ import annotations

import json

import pytest

from apiobjects import as_dump, node_obj, pod_obj
from conftest import make_node, make_pod, make_snapshot
from kubectl_tspread.engine import filters, podrequests, versions
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.podrequests import CONTAINER, INIT, SIDECAR, held_requests, held_score_requests
from kubectl_tspread.model import ContainerResize as C, PodResize
from test_blockers import _run

MI = 1024 * 1024
GI = 1024 * MI
MINORS = ("1.33", "1.34", "1.35", "1.36", "1.37")


def rules(v: str) -> versions.Rules:
    return versions.rules_for(v)


# c0 shrinks (spec 500m, allocated 300m, running at 200m), c1 grows (spec 100m, allocated 400m,
# running at 450m): directions opposite across containers
OPPOSITE = (C({"cpu": 500}, {"cpu": 300}, {"cpu": 200}, True), C({"cpu": 100}, {"cpu": 400}, {"cpu": 450}, True))

CASES = [
    # 1.33-1.36: max(500, 200, 300) + max(100, 450, 400) = 950; 1.37: max(spec 600, actuated 650,
    # allocated 700) = 700
    ("opposite directions", PodResize(OPPOSITE), {"1.33": 950, "1.36": 950, "1.37": 700}),
    # Infeasible leaves the spec out: max(200, 300) + max(450, 400) = 750; 1.37 max(650, 700) = 700
    ("opposite directions, Infeasible", PodResize(OPPOSITE, infeasible=True), {"1.33": 750, "1.36": 750,
                                                                               "1.37": 700}),
    # a container without status: its spec on 1.33-1.36 (500 + max(450, 400) = 950); on 1.37 an
    # Infeasible pod's container reporting nothing adds nothing (allocated 400, actuated 450 → 450)
    ("a container without status, Infeasible",
     PodResize((C({"cpu": 500}), OPPOSITE[1]), infeasible=True), {"1.33": 950, "1.36": 950, "1.37": 450}),
    # status `resources` present without requests: 1.33 max(spec 100, allocated 400) = 400 for c1;
    # 1.37's actuated falls back to allocated: max(600, 300+400, 300+400) = 700
    ("resources without requests",
     PodResize((C({"cpu": 500}, {"cpu": 300}, None, True), C({"cpu": 100}, {"cpu": 400}, None, True))),
     {"1.33": 900, "1.36": 900, "1.37": 700}),
    # allocatedResources without status `resources`: 1.33-1.36 read the status only when
    # `resources` is there (500 + 100 = 600); 1.37 reads allocatedResources (max(600, 700, 700))
    ("allocatedResources only",
     PodResize((C({"cpu": 500}, {"cpu": 300}), C({"cpu": 100}, {"cpu": 400}))),
     {"1.33": 600, "1.36": 600, "1.37": 700}),
    # a plain init container's status counts only on 1.37: 1.33 max(500, init 1000) = 1000;
    # 1.37 allocated max(500, 2000) = 2000
    ("plain init container with status",
     PodResize((C({"cpu": 500}), C({"cpu": 1000}, {"cpu": 2000}, None, True, INIT))),
     {"1.33": 1000, "1.36": 1000, "1.37": 2000}),
    # a sidecar's status counts everywhere: 1.33 container 500 + sidecar max(100, 300) = 800
    ("sidecar with status",
     PodResize((C({"cpu": 500}), C({"cpu": 100}, {"cpu": 300}, {"cpu": 300}, True, SIDECAR))),
     {"1.33": 800, "1.36": 800, "1.37": 800}),
]


@pytest.mark.parametrize("resize, want", [pytest.param(r, w, id=i) for i, r, w in CASES])
@pytest.mark.parametrize("minor", MINORS)
def test_cpu_held_by_minor(resize, want, minor):
    expected = want.get(minor, want["1.36"] if minor > "1.33" else want["1.33"])
    assert held_requests(resize, rules(minor))["cpu"] == expected


def test_pod_level_requests_read_the_pod_status_from_1_36():
    """spec.resources.requests cpu 1; status.resources.requests cpu 1.5 and memory 2Gi,
    status.allocatedResources cpu 1.2; one container of 300m / 1Gi without status.
    1.33-1.35: the spec's pod-level cpu 1000, memory from the container 1Gi. 1.36: the spec's
    names only, max(1000, 1500, 1200) = 1500, memory 1Gi. 1.37: the pod status maps stand for
    the sums (max(1Gi, 2Gi) = 2Gi memory) and pod-level requests take every name of
    max(spec, actual, allocated): cpu 1500, memory 2Gi; overhead 100m added everywhere."""
    r = PodResize((C({"cpu": 300, "memory": GI}),), pod_level={"cpu": 1000}, overhead={"cpu": 100},
                  allocated={"cpu": 1200}, actual={"cpu": 1500, "memory": 2 * GI}, status_resources=True)
    got = {m: held_requests(r, rules(m)) for m in MINORS}
    assert got["1.33"] == got["1.35"] == {"cpu": 1100, "memory": GI}
    assert got["1.36"] == {"cpu": 1600, "memory": GI}
    assert got["1.37"] == {"cpu": 1600, "memory": 2 * GI}


def test_pod_level_requests_when_infeasible():
    """Infeasible: 1.36 sets each spec name from max(actual, allocated), zero when neither has it;
    1.37 sets only the names that max has."""
    r = PodResize((C({"cpu": 300, "memory": GI}),), pod_level={"cpu": 1000, "memory": 3 * GI},
                  actual={"cpu": 800}, status_resources=True, infeasible=True)
    assert held_requests(r, rules("1.36")) == {"cpu": 800, "memory": 0}
    # 1.37: the pod's maps are not both there, so the containers' sums, and a container that
    # reports nothing adds nothing when Infeasible: {}; pod level then sets cpu 800 only
    assert held_requests(r, rules("1.37")) == {"cpu": 800}


def test_score_requests_default_what_no_list_names():
    """Non0CPU/Non0Mem: a container naming no cpu counts 100m in each list it lacks it from.
    c0 has no cpu in its spec but 300m allocated and running; c1 states nothing anywhere.
    1.33: c0 max({}, 300) = 300, c1 100 → 400. 1.37: spec sum 100 + 100 = 200, allocated and
    actuated 300 + 100 = 400 → 400. Memory: every list defaults 200Mi per container → 400Mi."""
    r = PodResize((C({}, {"cpu": 300}, {"cpu": 300}, True), C({})))
    for m in MINORS:
        requests = held_requests(r, rules(m))
        assert requests == {"cpu": 300}
        assert held_score_requests(r, rules(m), requests) == (400, 400 * MI)


def test_aggregate_matches_the_sidecar_rule():
    """AggregateContainerRequests: init i2 runs beside sidecar s1 (started before it) only."""
    parts = [({"cpu": 200, "memory": 100}, CONTAINER), ({"cpu": 300}, INIT), ({"cpu": 50}, SIDECAR),
             ({"cpu": 400, "memory": 500}, INIT)]
    # containers+sidecars 250; inits: max(300, 400 + 50) = 450 → cpu 450; memory max(100, 500)
    assert podrequests.aggregate(parts) == {"cpu": 450, "memory": 500}


def _resized_pod(**kw):
    return make_pod("web-r", node="n1", requests={"cpu": 600}, score_requests=(600, 400 * MI),
                    resize=PodResize(OPPOSITE), **kw)


@pytest.mark.parametrize("minor, cpu", [("1.33", 950), ("1.36", 950), ("1.37", 700)])
def test_for_version_sizes_resized_pods_by_the_snapshot_minor(minor, cpu):
    plain = make_pod("plain", node="n1", requests={"cpu": 100})
    snap = make_snapshot([make_node("n1", zone="a")], [plain, _resized_pod()], kube_version=minor)
    sized = podrequests.for_version(snap)
    assert sized.pods[0] is plain  # a pod without status resources is the same record
    assert sized.pods[1].requests == {"cpu": cpu}
    # idempotent, and another minor's sizes come from the record, not from the sized requests
    assert podrequests.for_version(sized).pods[1].requests == {"cpu": cpu}
    other = podrequests.for_version(make_snapshot(sized.nodes, sized.pods, kube_version="1.37"))
    assert other.pods[1].requests == {"cpu": 700}


def _resize_dump(tmp_path):
    """Node n1 of 1 cpu holding a pod whose containers shrink and grow (1.36 counts 950m, 1.37
    700m of it); a pending pod of 200m fits only where 1.37 sizes it."""
    node = node_obj("n1", zone="a", cpu="1")
    running = pod_obj("resized", node="n1", cpu="500m")
    running["spec"]["containers"].append({"name": "d", "image": "nginx",
                                          "resources": {"requests": {"cpu": "100m"}}})
    running["status"]["containerStatuses"] = [
        {"name": "c", "allocatedResources": {"cpu": "300m"}, "resources": {"requests": {"cpu": "200m"}}},
        {"name": "d", "allocatedResources": {"cpu": "400m"}, "resources": {"requests": {"cpu": "450m"}}}]
    pending = pod_obj("web-1", cpu="200m")
    path = tmp_path / "resize.json"
    path.write_text(json.dumps(as_dump([node, running, pending])))
    return str(path)


@pytest.mark.parametrize("minor, fits", [("1.36", False), ("1.37", True)])
def test_why_pending_counts_a_resized_pod_by_the_cluster_minor(capsys, tmp_path, minor, fits):
    code, out, err = _run(capsys, "why-pending", "web-1", "--from-file", _resize_dump(tmp_path),
                          "--kube-version", minor, "-o", "json")
    assert (code, err) == (0, "")
    pod = json.loads(out)["pods"][0]
    assert pod["schedulable"] is fits
    if not fits:
        assert pod["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_the_engine_fit_filter_reads_the_sized_pod():
    snap = podrequests.for_version(make_snapshot([make_node("n1", zone="a", allocatable={"cpu": 1000, "pods": 10})],
                                                 [_resized_pod()], kube_version="1.33"))
    index = ClusterIndex(snap)
    incoming = make_pod("in", requests={"cpu": 100})
    (verdict,) = filters.evaluate(index, incoming)
    assert [f.reason for f in verdict.failures] == ["Insufficient cpu"]  # 950 + 100 > 1000
    snap37 = podrequests.for_version(make_snapshot(snap.nodes, snap.pods, kube_version="1.37"))
    assert filters.evaluate(ClusterIndex(snap37), incoming)[0].passes  # 700 + 100 <= 1000


def test_a_drain_replacement_comes_back_at_its_spec_size():
    """The controller's new pod reports no status resources: spec 500m + 100m, whatever the
    evicted pod held (950m on 1.36)."""
    from kubectl_tspread.views.drain.core.simulate import SimCluster

    r = PodResize((C({"cpu": 500}, {"cpu": 300}, {"cpu": 200}, True, CONTAINER),
                   C({"cpu": 100}, {"cpu": 400}, {"cpu": 450}, True, CONTAINER)))
    pod = make_pod("web-r", node="n1", requests={"cpu": 600}, resize=r)
    snap = podrequests.for_version(make_snapshot([make_node("n1", zone="a")], [pod], kube_version="1.36"))
    assert snap.pods[0].requests == {"cpu": 950}
    new = SimCluster(snap).replacement_for(snap.pods[0])
    assert (new.requests, new.score_requests, new.resize) == ({"cpu": 600}, (600, 400 * MI), None)


@pytest.mark.parametrize("git_version, fits", [("v1.36.3", False), ("v1.37.2", True)])
def test_live_path_sizes_a_resized_pod_by_the_server_minor(capsys, tmp_path, env, git_version, fits):
    """Through the kubernetes client over HTTP (the wire parse of PodList pages): the server's
    /version picks the rule, in the CLI and in load_live alone (drain-safe --execute's re-reads)."""
    from fakeapi import FakeApiServer, token_user, write_kubeconfig
    from kubectl_tspread.snapshot.kubeconfig import KubeOptions
    from kubectl_tspread.snapshot.live import load_live

    objs = json.loads(open(_resize_dump(tmp_path)).read())["items"]
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*objs)
        api.git_version = git_version
        config = write_kubeconfig(str(tmp_path / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                                  {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")
        code, out, err = _run(capsys, "why-pending", "web-1", "--kubeconfig", config, "-o", "json")
        assert (code, err) == (0, "")
        assert json.loads(out)["pods"][0]["schedulable"] is fits
        snap = load_live(KubeOptions(kubeconfig=config), ("Node", "Pod"))
    held = next(p for p in snap.pods if p.name == "resized")
    assert held.requests == {"cpu": 700 if fits else 950}


@pytest.mark.parametrize("source", ["dict", "wire"])
def test_the_resize_memo_tells_container_names_apart(source):
    """Two pods alike but for a container's name: the status of "app" is the first pod's
    container's, and matches no container of the second (which then has nothing to resize)."""
    from test_decode_perf_equiv import as_read, forget
    from kubectl_tspread.snapshot import decode

    def pod(container: str) -> dict:
        return {"metadata": {"name": f"p-{container}", "namespace": "default"},
                "spec": {"nodeName": "n1", "containers": [{"name": container, "resources": {"requests": {"cpu": "100m"}}}]},
                "status": {"phase": "Running",
                           "containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "900m"},
                                                  "resources": {"requests": {"cpu": "900m"}}}]}}

    forget()
    first = decode.pod(as_read(pod("app"), source))
    second = decode.pod(as_read(pod("web"), source))
    assert first.resize == PodResize((C({"cpu": 100}, {"cpu": 900}, {"cpu": 900}, True),))
    assert second.resize is None
