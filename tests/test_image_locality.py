"""ImageLocality from the API objects to the drain's predicted node: the images nodes report
(status.images) and pods name (containers, init containers, image volumes) are read from dumps
and live pages alike, malformed ones are named, and the planner's placement weighs them as the
default profile does. The formula's cases are tests/test_scores.py's; the real scheduler's
answers on random clusters with images are the conformance run's (conformance/generate.py)."""

from __future__ import annotations

import json

import orjson
import pytest

from conftest import GI, make_node, make_pod, make_snapshot, make_workload
from test_hostile_input import assert_one_error, run
from kubectl_tspread.model import Volume, new_node_like
from kubectl_tspread.model.plan import PlanOptions
from kubectl_tspread.engine import scores
from kubectl_tspread.snapshot import decode, wire
from kubectl_tspread.snapshot.fields import FieldError
from kubectl_tspread.views.drain.plan import plan_drain

MI = 1 << 20


def _node(name: str, images: list | None) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}, "images": images}}


def _pod(spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"}, "spec": spec}


def test_a_node_maps_every_name_of_every_image_to_its_size():
    n = decode.node(_node("n", [{"names": ["nginx:1.27", "docker.io/library/nginx@sha256:ab"], "sizeBytes": 70 * MI},
                                {"names": ["pause:3.10"]}, {"names": None, "sizeBytes": 5},
                                {"names": ["nginx:1.27"], "sizeBytes": 1}]))
    # no size is 0; an image without names adds none; a name listed again keeps its first size
    assert n.images == {"nginx:1.27": 70 * MI, "docker.io/library/nginx@sha256:ab": 70 * MI, "pause:3.10": 0}
    assert decode.node(_node("m", None)).images == {}
    # every image with names and a size (the decoder's short path): the same rules
    n = decode.node(_node("k", [{"names": ["a:1", "a@sha256:ab"], "sizeBytes": 7}, {"names": [], "sizeBytes": 1},
                                {"names": ["a:1"], "sizeBytes": 9}]))
    assert n.images == {"a:1": 7, "a@sha256:ab": 7}


def test_a_node_added_like_another_holds_no_image_yet():
    template = make_node("a1", zone="a", images={"nginx:latest": 500 * MI})
    assert new_node_like(template, {"a1"}).images == {}


SPEC = {"initContainers": [{"name": "i", "image": "busybox"}],
        "containers": [{"name": "a", "image": "registry.example:5000/app"}, {"name": "b", "image": "nginx:1.27"},
                       {"name": "c"}],
        "volumes": [{"name": "m", "image": {"reference": "models.example/llm"}}, {"name": "e", "image": {}},
                    {"name": "s", "emptyDir": {}}]}


@pytest.mark.parametrize("source", ["dict", "wire"])
def test_a_pod_keeps_its_images_as_imagelocality_looks_them_up(source):
    obj = _pod(SPEC)
    if source == "wire":
        obj = wire.decode_pod_page(orjson.dumps({"kind": "PodList", "items": [obj]}))[0][0]
    p = decode.pod(obj)
    # as written, init containers first; "" for a container or image volume without one
    assert p.images == ("busybox", "registry.example:5000/app", "nginx:1.27", "")
    assert p.volumes == (Volume("m", image="models.example/llm"), Volume("e", image=""), Volume("s", empty_dir=True))
    # as ImageLocality looks them up: a container without an image as ":latest", as upstream
    assert scores.pod_images(p, volumes=True) == ("busybox:latest", "registry.example:5000/app:latest", "nginx:1.27",
                                                  ":latest", "models.example/llm:latest", ":latest")


def test_pods_that_differ_only_in_their_image_keep_their_own():
    """The template memo is keyed on what the records hold: the image is part of it."""
    a = decode.pod(_pod({"containers": [{"name": "a", "image": "web:1"}]}))
    b = decode.pod(_pod({"containers": [{"name": "a", "image": "web:2"}]}))
    assert (a.images, b.images) == (("web:1",), ("web:2",))


@pytest.mark.parametrize("obj,field", [
    (_node("n", [{"names": "nginx", "sizeBytes": 1}]), "status.images[0].names"),
    (_node("n", [{"names": ["nginx"], "sizeBytes": "big"}]), "status.images[0].sizeBytes"),
    (_node("n", [{"names": ["nginx"], "sizeBytes": -1}]), "status.images[0].sizeBytes"),
    (_node("n", {"nginx": 1}), "status.images"),
    (_pod({"containers": [{"name": "a", "image": 7}]}), "spec.containers[0].image"),
    (_pod({"volumes": [{"name": "m", "image": {"reference": ["x"]}}]}), "spec.volumes[0].image.reference"),
    (_pod({"volumes": [{"name": "m", "image": "x"}]}), "spec.volumes[0].image"),
    (_pod({"volumes": [{"name": "m", "image": {"reference": 0}}]}), "spec.volumes[0].image.reference"),
])
def test_malformed_image_fields_are_named(obj, field):
    decoder = decode.node if obj["kind"] == "Node" else decode.pod
    with pytest.raises(FieldError) as exc:
        decoder(obj)
    assert exc.value.path == field


def test_a_dump_with_a_malformed_image_list_is_one_error_line(capsys, tmp_path):
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [_node("n1", [{"names": ["a"], "sizeBytes": "big"}])]}))
    code, out, err = run(capsys, "distribution", "-A", "--from-file", str(path))
    assert_one_error(code, out, err, "Node n1", "status.images[0].sizeBytes")


# --- the drain's placement --------------------------------------------------------------------

RS = make_workload("ReplicaSet", "web-1", {"app": "web"})


def _drain(images_on_b: dict, pod_images=("app:v2",), affinity: bool = False):
    """Drain t; b and c are alike but for the images b holds. With `affinity` a pod on each with
    an anti-affinity term makes the cluster affinity-sensitive: placement walks the nodes with the
    scalar scores instead of the arrays."""
    nodes = [make_node(n, zone="a", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110},
                       images=images_on_b if n == "b" else {}) for n in ("t", "b", "c")]
    pods = [make_pod("web-1", node="t", labels={"app": "web"}, owner="ReplicaSet/web-1", images=pod_images)]
    if affinity:
        from kubectl_tspread.model import PodAffinityTerm
        from kubectl_tspread.model.labels import Selector
        anti = (PodAffinityTerm(Selector.from_match_labels({"app": "other"}), "kubernetes.io/hostname"),)
        pods += [make_pod(f"db-{n}", node=n, labels={"app": "db"}, pod_anti_affinity=anti) for n in ("b", "c")]
    plan = plan_drain(make_snapshot(nodes, pods, workloads=[RS]), ["t"], PlanOptions(verify_remedies=False))
    (e,) = [e for s in plan.steps for e in s.evictions]
    return e


@pytest.mark.parametrize("affinity", [False, True], ids=["arrays", "walk"])
def test_the_node_holding_the_image_wins(affinity):
    # 800 MiB held by 1 of 3 nodes: 266 MiB scaled → ImageLocality 24 on b, 0 on c
    e = _drain({"app:v2": 800 * MI}, affinity=affinity)
    assert (e.predicted_node, e.tied_nodes) == ("b", ())


@pytest.mark.parametrize("affinity", [False, True], ids=["arrays", "walk"])
@pytest.mark.parametrize("images_on_b,pod_images", [
    ({}, ("app:v2",)),  # nobody holds it
    ({"app:v2": 40 * MI}, ("app:v2",)),  # 13 MiB scaled: under the 23 MiB floor
    ({"app:v1": 800 * MI}, ("app:v2",)),  # another tag
    ({"app:v2": 800 * MI}, ("app",)),  # the pod's untagged name is looked up as app:latest
])
def test_images_that_score_nothing_leave_a_tie(images_on_b, pod_images, affinity):
    e = _drain(images_on_b, pod_images, affinity)
    assert e.tied_nodes == ("b", "c")


def test_the_simulation_counts_the_nodes_left_and_keeps_counts_across_a_cordon():
    from kubectl_tspread.views.drain.core.simulate import SimCluster
    nodes = [make_node(n, images={"app:v2": 900 * MI} if n != "c" else {}) for n in ("a", "b", "c")]
    pod = make_pod("p", images=("app:v2",))
    sim = SimCluster(make_snapshot(nodes, [pod]))
    states, names, count = sim.images_for(pod)
    assert (states.holders["app:v2"], states.nodes, names, count) == (2, 3, ("app:v2",), 1)
    sim.cordon(["a"])
    assert sim.images_for(pod)[0] is states  # a cordon changes no image
    sim.delete_node("a")
    states, _, _ = sim.images_for(pod)
    assert (states.holders["app:v2"], states.nodes) == (1, 2)
    sim.delete_node("b")
    assert sim.images_for(pod) is None  # no node holds it: every node scores 0


@pytest.mark.parametrize("seed", range(8))
def test_image_states_moved_with_a_deleted_node_are_those_of_the_nodes_left(seed):
    """scores.image_states_without, as the drain's simulation moves ImageLocality's view at
    each node deletion: the sizes, holders and node count image_states makes from the nodes
    left, for random nodes whose images are shared, unique, or reported with different sizes
    (the first holder by name deleted among them); a revert puts the states before back."""
    import random

    from kubectl_tspread.views.drain.core.simulate import SimCluster
    rng = random.Random(seed)
    names = [f"img{i}:v1" for i in range(8)]
    nodes = [make_node(f"n{k:02d}", images={name: rng.choice((100, 100, 300)) * MI
                                             for name in rng.sample(names, rng.randint(0, 5))})
             for k in range(12)]
    pod = make_pod("p", images=tuple(names))
    sim = SimCluster(make_snapshot(nodes, [pod]))
    mixed = 0
    for name in rng.sample([n.name for n in nodes], 11):
        before = (sim.images_for(pod) or (None,))[0]  # None: no node left holds one of them
        mixed += bool(before is not None and before.mixed)
        sim.fork()
        sim.delete_node(name)
        moved, fresh = sim.images_for(pod), scores.image_states(sim.nodes.values())
        if moved is None:
            assert not fresh.sizes
        else:
            assert (moved[0].sizes, moved[0].holders, moved[0].nodes) == (fresh.sizes, fresh.holders, fresh.nodes)
        sim.revert()
        assert (sim.images_for(pod) or (None,))[0] is before
        sim.delete_node(name)
    assert mixed  # some image's holders disagreed on its size


@pytest.mark.parametrize("seed", range(6))
def test_the_arrays_image_scores_are_the_scalar_ones_on_every_node_set_a_drain_leaves(seed):
    """vector.NodeTable.image_scores on the node sets that deletions leave (tables derived from the
    first one, whose image masks and kept scores they read by the first one's rows), asked three
    times, and after a deletion that is reverted: scores.image_priority of scores.image_sum's on
    every node, in any order of rows."""
    import random

    import numpy as np

    from kubectl_tspread.views.drain.core import vector
    from kubectl_tspread.views.drain.core.simulate import SimCluster
    rng = random.Random(seed)
    names = [f"img{i}:v1" for i in range(6)]
    nodes = [make_node(f"n{k:02d}", images={name: rng.choice((100, 300, 900)) * MI
                                             for name in rng.sample(names, rng.randint(0, 4))})
             for k in range(10)]
    pods = [make_pod(f"p{j}", images=tuple(rng.sample(names, rng.randint(1, 3)))) for j in range(4)]
    sim = SimCluster(make_snapshot(nodes, pods))
    tables: dict = {}
    compared = 0

    def compare() -> None:
        nonlocal compared
        for _ in range(3):  # the second time with the masks made, the third from the scores kept per row
            table = vector.tables_for(sim, tables)
            for pod in pods:
                got = sim.images_for(pod)
                if got is None:
                    continue
                states, counted, count = got
                found = np.array(rng.sample(range(table.size), rng.randint(1, table.size)), dtype=np.int64)
                want = [scores.image_priority(scores.image_sum(counted, sim.nodes[table.order[i]], states), count)
                        for i in found.tolist()]
                assert table.image_scores(states, counted, count, found).tolist() == want
                compared += 1

    for name in rng.sample([n.name for n in nodes], 8):
        compare()
        sim.fork()
        sim.delete_node(name)
        compare()
        sim.revert()
        compare()
        sim.delete_node(name)
    assert compared > 40
