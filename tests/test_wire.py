"""wire.py: a PodList page parsed to the decoder's fields gives exactly the records of a full parse."""

from __future__ import annotations

import json
import re

import msgspec
import orjson
import pytest

from kubectl_tspread.snapshot import decode, wire

FULL_POD = {
    "metadata": {
        "name": "web-1", "generateName": "web-", "namespace": "prod", "uid": "u-1", "resourceVersion": "7",
        "creationTimestamp": "2026-01-01T00:00:00Z", "deletionTimestamp": "2026-01-02T00:00:00Z",
        "labels": {"app": "web", "pod-template-hash": "abc"},
        "annotations": {"kubernetes.io/config.mirror": "x", "note": "y"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "s1"},
                            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "rs1",
                             "controller": True, "blockOwnerDeletion": True}],
        "managedFields": [{"manager": "kube-controller-manager", "fieldsV1": {"f:metadata": {"f:labels": {}}}}],
    },
    "spec": {
        "nodeName": "n-a", "schedulerName": "my-scheduler", "priority": 1000, "priorityClassName": "high",
        "nodeSelector": {"pool": "general"},
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]},
        },
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
                        {"operator": "Exists"}],
        "topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3,
                                       "labelSelector": {"matchLabels": {"app": "web"}},
                                       "matchLabelKeys": ["pod-template-hash"]}],
        "containers": [
            {"name": "app", "image": "web:1", "env": [{"name": "A", "value": "1"}],
             "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}, "limits": {"cpu": "1"}},
             "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]},
            {"name": "log", "image": "log:1", "resources": {"requests": {"cpu": "50m"}}},
        ],
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
             "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}]},
        ],
        "overhead": {"cpu": "10m"},
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                    {"name": "scratch", "emptyDir": {}},
                    {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}],
    },
    "status": {
        "phase": "Pending", "nominatedNodeName": "n-b",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 node(s) didn't match pod topology spread "
                                   "constraints.", "lastTransitionTime": "2026-01-01T00:00:05Z"},
                       {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
        "containerStatuses": [{"name": "app", "ready": False}],
    },
}

PODS = [
    pytest.param(FULL_POD, id="every field the decoder reads, and many it skips"),
    pytest.param({"metadata": {"name": "bare"}}, id="no spec, no status, no namespace: the defaults"),
    pytest.param({"metadata": {"name": "nulls", "namespace": None, "labels": None, "ownerReferences": None},
                  "spec": {"nodeName": None, "containers": None, "tolerations": None, "affinity": None,
                           "priority": None, "volumes": None},
                  "status": None}, id="JSON nulls where objects and lists go"),
    pytest.param({"metadata": {"name": "ready", "namespace": "a"}, "spec": {"nodeName": "n"},
                  "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
                 id="running and ready"),
]


def page(items: list, token: str | None = None) -> bytes:
    meta = {"resourceVersion": "99", **({"continue": token} if token else {})}
    return orjson.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items})


@pytest.mark.parametrize("obj", PODS)
def test_records_equal_a_full_parse(obj):
    items, token = wire.decode_pod_page(page([obj]))
    assert token is None
    assert_same_record(decode.pod(items[0]), decode.pod(json.loads(json.dumps(obj))))


def assert_same_record(got, want) -> None:
    """got == want, field by field first, so that a failure names the field that differs."""
    for field in want.__dataclass_fields__:
        assert getattr(got, field) == getattr(want, field), field
    assert got == want


def test_full_pod_record_values():
    """The rich pod decodes to what the API means, so the equality above is not two equal mistakes."""
    p = decode.pod(wire.decode_pod_page(page([FULL_POD]))[0][0])
    assert (p.namespace, p.name, p.node_name, p.scheduler_name, p.priority) == ("prod", "web-1", "n-a",
                                                                                 "my-scheduler", 1000)
    assert p.owner.kind == "ReplicaSet" and p.owner.name == "web-abc"
    assert p.terminating and p.mirror and p.nominated_node == "n-b"
    # sum(250m, 50m) + sidecar 100m = 400m < init 2 + sidecar 100m = 2100m; + overhead 10m
    assert p.requests["cpu"] == 2110
    assert [h.port for h in p.host_ports] == [8080, 53]
    assert [(v.name, v.pvc, v.empty_dir) for v in p.volumes] == [
        ("data", "data-web-1", False), ("scratch", None, True), ("token", None, False)]
    assert p.condition("PodScheduled").reason == "Unschedulable"
    assert [c.type for c in p.conditions] == ["PodScheduled", "DisruptionTarget"]
    assert p.spread[0].min_domains == 3 and p.spread[0].match_label_keys == ("pod-template-hash",)


def test_continue_token_and_every_item():
    items, token = wire.decode_pod_page(page([PODS[1].values[0], PODS[3].values[0]], token="eyJvIjo1MDB9"))
    assert token == "eyJvIjo1MDB9"
    assert [decode.pod(i).name for i in items] == ["bare", "ready"]


FALLBACKS = [
    pytest.param(b'{"kind":"PodList","items":[{"spec":{"volumes":{"not":"a list"}}}]}',
                 id="a field of an unexpected type"),
    pytest.param(b'{"kind":"PodList","items":[{"spec":{"volumes":[{"name":"v","persistentVolumeClaim":"c"}]}}]}',
                 id="a volume's claim that is not an object"),
    pytest.param(b'{"kind":"PodList","items":[{"status":{"conditions":["Ready"]}}]}',
                 id="a condition that is not an object"),
    pytest.param(b'{"kind":"Status","status":"Failure","message":"forbidden"}', id="a Status, not a list"),
    pytest.param(b'{"kind":"PodList","items":[', id="truncated JSON"),
    pytest.param(b'[]', id="not an object"),
]


@pytest.mark.parametrize("data", FALLBACKS)
def test_odd_pages_fall_back_to_the_ordinary_parse(data):
    assert wire.decode_pod_page(data) is None


def test_plain_dicts_absent_null_and_unknown_keys():
    obj = wire.decode_pod_page(page([{"metadata": {"name": "x", "namespace": None, "managedFields": [{}]},
                                      "apiVersion": "v1"}]))[0][0]
    assert type(obj) is dict and type(obj["metadata"]) is dict
    assert obj["metadata"] == {"name": "x", "namespace": None}  # null kept as None, managedFields skipped
    assert "spec" not in obj and "apiVersion" not in obj  # absent stays absent; undeclared keys are dropped


def test_only_what_the_decoder_reads_of_volumes_and_conditions():
    spec = wire.decode_pod_page(page([FULL_POD]))[0][0]["spec"]
    assert spec["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                               {"name": "scratch", "emptyDir": {}}, {"name": "token"}]
    status = wire.decode_pod_page(page([PODS[3].values[0]]))[0][0]["status"]
    assert status == {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


def test_labels_owners_and_template_sub_trees_stay_json_text():
    """The sub-trees decode.pod keys its memos on arrive unparsed, byte for byte as sent
    (JSON null included), and a missing one stays missing."""
    spec = wire.decode_pod_page(page([FULL_POD]))[0][0]["spec"]
    for name in ("containers", "initContainers", "overhead", "affinity", "topologySpreadConstraints",
                 "nodeSelector", "tolerations"):
        assert type(spec[name]) is msgspec.Raw, name
        assert bytes(spec[name]) == orjson.dumps(FULL_POD["spec"][name]), name
    meta = wire.decode_pod_page(page([FULL_POD]))[0][0]["metadata"]
    for name in ("labels", "ownerReferences"):
        assert bytes(meta[name]) == orjson.dumps(FULL_POD["metadata"][name]), name
    nulls = wire.decode_pod_page(page([PODS[2].values[0]]))[0][0]["spec"]
    assert bytes(nulls["tolerations"]) == b"null" and "initContainers" not in nulls


MALFORMED = [
    pytest.param({"spec": {"containers": [{"resources": {"requests": ["1"]}}]}}, id="requests that are not a map"),
    pytest.param({"spec": {"containers": "app"}}, id="containers that are not a list"),
    pytest.param({"spec": {"tolerations": [{"key": 1}]}}, id="a toleration key that is not a string"),
    pytest.param({"spec": {"affinity": {"nodeAffinity": []}}}, id="node affinity that is not an object"),
    pytest.param({"metadata": {"labels": ["not", "a", "map"]}}, id="labels that are not a map"),
    pytest.param({"metadata": {"labels": {"app": 7}}}, id="a label value that is not a string"),
    pytest.param({"metadata": {"ownerReferences": {"kind": "ReplicaSet"}}}, id="owner references not a list"),
    pytest.param({"metadata": {"ownerReferences": [{"kind": "Job", "name": "j", "controller": "yes"}]}},
                 id="a controller flag that is not a boolean"),
]


@pytest.mark.parametrize("parts", MALFORMED)
def test_odd_json_text_decodes_as_the_ordinary_parse_does(parts):
    """Text is not checked against the shape, so what is odd inside it reaches the decoder:
    the same record, or the same error, as from the ordinary parse."""
    obj = {"metadata": {"name": "odd", "namespace": "a", **parts.get("metadata", {})}, "spec": parts.get("spec", {})}
    text_item = wire.decode_pod_page(page([obj]))[0][0]
    try:
        want = decode.pod(json.loads(json.dumps(obj)))
    except Exception as e:  # noqa: BLE001 - whichever the ordinary path raises
        with pytest.raises(type(e), match=re.escape(str(e))):
            decode.pod(text_item)
    else:
        assert_same_record(decode.pod(text_item), want)


ITEMS = [
    pytest.param({"kind": "Pod", "apiVersion": "v1", **FULL_POD}, "", True, id="a List's item that is a pod"),
    pytest.param(FULL_POD, "Pod", True, id="a PodList's item, whose kind the list names"),
    pytest.param({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"}}, "", False,
                 id="another kind: parsed whole by the caller"),
    pytest.param({"kind": "Pod", "metadata": {"name": "x"}, "spec": {"volumes": "not a list"}}, "", False,
                 id="a pod with a field of an unexpected type: parsed whole"),
    pytest.param(FULL_POD, "", False, id="no kind at all: parsed whole, where the error is worded"),
    pytest.param(FULL_POD, "Node", False, id="an item of a typed list of another kind: parsed whole"),
]


@pytest.mark.parametrize("obj, list_kind, partial", ITEMS)
def test_dump_items(obj, list_kind, partial):
    """decode_pod_item: a dump's pods parsed to the decoder's fields, anything else left to the caller."""
    item = wire.decode_pod_item(orjson.dumps(obj), list_kind)
    assert (item is not None) == partial
    if partial:
        assert "managedFields" not in item["metadata"]
        assert_same_record(decode.pod(item), decode.pod(json.loads(json.dumps(obj))))
