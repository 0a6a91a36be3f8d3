"""NodeDeclaredFeatures by minor: off in 1.35, beta and on in 1.36, GA in 1.37.

Upstream: pkg/scheduler/framework/plugins/nodedeclaredfeatures (PreFilter Skips a pod that needs
nothing; Filter is UnschedulableAndUnresolvable "node(s) didn't match Pod's required features"
when the pod's features are not a subset of the node's status.declaredFeatures), the registry
of k8s.io/component-helpers nodedeclaredfeatures/features of each minor, and the default
profile's applyFeatureGates, which appends the plugin after every other (its Filter runs last).
"""

from __future__ import annotations

import json

import pytest

from apiobjects import as_dump, node_obj, pod_obj, spread_obj
from conftest import make_constraint, make_node, make_pod, make_snapshot
from kubectl_tspread.views.drain.core.placement import Placer
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.engine import filters, message, versions
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.engine.spread import UNRESOLVABLE
from kubectl_tspread.snapshot import decode
from test_blockers import _run

HOST_NET = versions.USER_NAMESPACES_HOST_NETWORK
BIND = versions.VOLUME_BIND_MOUNT_OPTIONS
RESTART = versions.RESTART_ALL_CONTAINERS


@pytest.mark.parametrize("feature, refused_on", [
    (HOST_NET, ("1.36", "1.37")),
    (RESTART, ("1.36", "1.37")),
    (BIND, ("1.37",)),  # not in 1.36's registry
])
@pytest.mark.parametrize("minor", ["1.33", "1.34", "1.35", "1.36", "1.37"])
def test_a_node_without_the_feature_refuses_the_pod_from_its_minor(feature, refused_on, minor):
    pod = make_pod("p", features_used=frozenset({feature}))
    bare, declaring = make_node("n1"), make_node("n2", declared_features=frozenset({feature, "Other"}))
    rules = versions.rules_for(minor)
    got = filters.features_failure(pod, bare, rules)
    if minor in refused_on:
        assert (got.plugin, got.status, got.reason) == ("NodeDeclaredFeatures", UNRESOLVABLE,
                                                        "node(s) didn't match Pod's required features")
        assert filters.missing_features(pod, bare, rules) == (feature,)
    else:
        assert got is None
    assert filters.features_failure(pod, declaring, rules) is None


def test_a_pod_that_needs_nothing_passes_every_node():
    assert filters.features_failure(make_pod("p"), make_node("n1"), versions.rules_for("1.37")) is None


def test_the_filter_runs_after_spread_and_the_message_counts_it_first_where_it_is():
    """n1 (zone a) is refused by spread and by the features: spread comes first; n2 only by the
    features."""
    web = {"app": "web"}
    nodes = [make_node("n1", zone="a"), make_node("n2", zone="b"),
             make_node("n3", zone="b", declared_features=frozenset({HOST_NET}))]
    pods = [make_pod(f"w{i}", node="n1", labels=web) for i in range(2)]
    incoming = make_pod("in", labels=web, spread=[make_constraint(max_skew=1)],
                        features_used=frozenset({HOST_NET}))
    index = ClusterIndex(make_snapshot(nodes, pods + [incoming], kube_version="1.37"))
    verdicts = {v.node: v for v in filters.evaluate(index, incoming)}
    assert [f.plugin for f in verdicts["n1"].failures] == ["PodTopologySpread", "NodeDeclaredFeatures"]
    assert verdicts["n1"].first.plugin == "PodTopologySpread"
    assert verdicts["n2"].first.plugin == "NodeDeclaredFeatures"
    assert verdicts["n3"].passes
    assert filters.FILTER_ORDER[-1] == "NodeDeclaredFeatures"


def test_message_of_a_pod_no_node_declares_for():
    nodes = [make_node("n1"), make_node("n2")]
    pod = make_pod("p", features_used=frozenset({RESTART}))
    index = ClusterIndex(make_snapshot(nodes, [pod], kube_version="1.36"))
    verdicts = filters.evaluate(index, pod)
    assert message.scheduler_message(verdicts, pod, index, versions.rules_for("1.36")).startswith(
        "0/2 nodes are available: 2 node(s) didn't match Pod's required features.")


def test_decoded_nodes_keep_their_declared_features():
    obj = node_obj("n1")
    obj["status"]["declaredFeatures"] = [HOST_NET, "SomeFutureFeature"]
    assert decode.node(obj).declared_features == frozenset({HOST_NET, "SomeFutureFeature"})
    assert decode.node(node_obj("n2")).declared_features == frozenset()


def test_drain_places_a_replacement_only_on_a_declaring_node():
    nodes = [make_node("n1", zone="a"), make_node("n2", zone="b", declared_features=frozenset({HOST_NET}))]
    pod = make_pod("r", features_used=frozenset({HOST_NET}))
    snap = make_snapshot(nodes, [pod], kube_version="1.37")
    assert Placer().place(SimCluster(snap), pod).node == "n2"
    assert Placer().place(SimCluster(make_snapshot(nodes, [pod], kube_version="1.35")), pod).node is not None


def _dump(tmp_path, declared_on_b=()):
    a, b = node_obj("a1", zone="a"), node_obj("b1", zone="b")
    if declared_on_b:
        b["status"]["declaredFeatures"] = list(declared_on_b)
    pod = pod_obj("web-1", labels={"app": "web"}, spread=[spread_obj()])
    pod["spec"]["hostNetwork"], pod["spec"]["hostUsers"] = True, False
    path = tmp_path / "features.json"
    path.write_text(json.dumps(as_dump([a, b, pod])))
    return str(path)


def test_why_pending_names_the_missing_feature_and_suggests_nothing_it_cannot_verify(capsys, tmp_path):
    code, out, err = _run(capsys, "why-pending", "web-1", "--from-file", _dump(tmp_path), "-o", "json")
    assert (code, err) == (0, "")
    pod = json.loads(out)["pods"][0]
    blocker = pod["blockedBy"][0]
    assert (blocker["code"], blocker["plugin"], blocker["refusesEveryNode"]) == (
        "MissingNodeFeatures", "NodeDeclaredFeatures", True)
    assert blocker["details"] == {"features": [HOST_NET], "missing": [{"feature": HOST_NET, "nodes": ["a1", "b1"]}],
                                  "declaring": []}
    assert HOST_NET in pod["answer"]["message"] and "no node declares every one" in pod["answer"]["message"]
    assert pod["suggestions"] == []


def test_why_pending_text_names_the_nodes_that_declare_it(capsys, tmp_path):
    code, out, err = _run(capsys, "why-pending", "web-1", "--from-file", _dump(tmp_path, [HOST_NET]),
                          "--kube-version", "1.36")
    assert (code, err) == (0, "")
    assert "fits 1 of 2 nodes" in out
    code, out, err = _run(capsys, "why-pending", "web-1", "--from-file", _dump(tmp_path), "--kube-version", "1.35")
    assert "fits 2 of 2 nodes" in out  # the plugin is off in 1.35
