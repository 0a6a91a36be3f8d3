"""decode.pod's fast path gives exactly the records the API objects mean.

The pod decoder shares records between pods through memos keyed on sub-trees and builds
records with model.positional_constructor; these tests pin every field of varied pods to
values written out by hand, check that a warm memo never hands one pod another pod's
sub-tree, and that the fast constructor's instances are ordinary ones.
"""

from __future__ import annotations

import copy
import dataclasses

import orjson
import pytest

from kubectl_tspread.model.plan import ConstraintAfter, Eviction, Stranded
from kubectl_tspread.views.drain.core.placement import Placement
from kubectl_tspread.engine.partition import Domain
from kubectl_tspread.model.labels import Requirement, Selector
from kubectl_tspread.model import (
    ContainerResize, HostPort, NodeSelectorTerm, OwnerRef, Pod, PodAffinityTerm, PodCondition, PodResize,
    SpreadConstraint, Toleration, Volume, positional_constructor,
)
from kubectl_tspread.snapshot import decode, sharing, wire
from kubectl_tspread.snapshot.fields import FieldError

MI = 1024 * 1024
T0, T1 = "2026-03-01T10:00:00Z", "2026-03-01T10:00:07Z"
WEB = Selector.from_api({"matchLabels": {"app": "web"}})


def forget() -> None:
    """Cold memos, as at the start of a process."""
    for table in (decode._SHAPES, decode._VOLUMES, decode._LABEL_TEXTS, decode._OWNER_TEXTS, decode._RESIZE,
                  sharing.MEMO, sharing.UNITS, sharing._LABELS, sharing._OWNERS):
        table.clear()


def as_read(obj: dict, source: str) -> dict:
    """The pod as decode.pod gets it: parsed whole ("dict", a file or the ordinary parse), or by
    wire.py's typed parse of a PodList page ("wire": template sub-trees as JSON text)."""
    if source == "dict":
        return copy.deepcopy(obj)
    return wire.decode_pod_page(orjson.dumps({"kind": "PodList", "items": [obj]}))[0][0]


SOURCES = pytest.mark.parametrize("source", ["dict", "wire"])


def cond(type_: str, status: str, when: str = T0, **kw: str) -> dict:
    return {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": when, **kw}


def api_pod(name: str = "web-1", **parts: dict) -> dict:
    obj = {"metadata": {"name": name, "namespace": "prod", "uid": f"u-{name}", "creationTimestamp": T0,
                        "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "app", "image": "web:1",
                                    "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}}]},
           "status": {}}
    for part, fields in parts.items():
        obj[part].update(fields)
    return obj


# (scenario id, the API pod, the Pod fields that differ from BASE below)
BASE = dict(namespace="prod", name="web-1", uid="u-web-1", labels={"app": "web"}, node_name="", phase="Pending",
            terminating=False, created=T0, owner=None, spread=(), node_selector={}, node_affinity=None,
            pod_affinity=(), pod_anti_affinity=(), tolerations=(), requests={"cpu": 250, "memory": 128 * MI},
            host_ports=(), volumes=(), scheduler_name="default-scheduler", nominated_node="", priority=0,
            conditions=(), mirror=False, ready=False)
MSG = "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
CASES = [
    ("pending, PodScheduled False with reason and message, nominated node",
     api_pod(status={"phase": "Pending", "nominatedNodeName": "n-b",
                     "conditions": [cond("PodScheduled", "False", reason="Unschedulable", message=MSG)]}),
     dict(nominated_node="n-b",
          conditions=(PodCondition("PodScheduled", "False", "Unschedulable", MSG, T0),))),
    ("running and ready: four conditions, Ready read, none kept (a True PodScheduled is read by nothing)",
     api_pod(spec={"nodeName": "n-a"},
             status={"phase": "Running", "conditions": [
                 cond("Initialized", "True"), cond("Ready", "True", T1), cond("ContainersReady", "True", T1),
                 cond("PodScheduled", "True")]}),
     dict(node_name="n-a", phase="Running", ready=True, conditions=())),
    ("running, Ready False with a reason: not ready",
     api_pod(spec={"nodeName": "n-a"},
             status={"phase": "Running", "conditions": [
                 cond("Ready", "False", reason="ContainersNotReady", message="containers with unready status: [app]"),
                 cond("PodScheduled", "True")]}),
     dict(node_name="n-a", phase="Running", conditions=())),
    ("DisruptionTarget, a condition without a time, terminating",
     api_pod(metadata={"deletionTimestamp": T1}, spec={"nodeName": "n-a"},
             status={"phase": "Running", "conditions": [
                 {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
                 cond("Ready", "True")]}),
     dict(node_name="n-a", phase="Running", terminating=True, ready=True, conditions=(
         PodCondition("DisruptionTarget", "True", "PreemptionByScheduler", "", ""),))),
    ("init containers, a sidecar and overhead: max(init + earlier sidecars, sum) + overhead",
     api_pod(spec={"overhead": {"cpu": "10m"}, "initContainers": [
         {"name": "mesh", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
         {"name": "migrate", "resources": {"requests": {"cpu": "2", "memory": "64Mi"}}}]}),
     # cpu: max(2000 + 100, 250 + 100) + 10; memory: max(64 + 64, 128 + 64) Mi
     dict(requests={"cpu": 2110, "memory": 192 * MI})),
    ("host ports in app and init containers, protocol and host IP defaults",
     api_pod(spec={"containers": [{"name": "app", "ports": [{"containerPort": 80, "hostPort": 8080},
                                                            {"containerPort": 9090}]}],
                   "initContainers": [{"name": "dns", "ports": [
                       {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}]}]}),
     dict(requests={}, host_ports=(HostPort(8080, "TCP", ""), HostPort(53, "UDP", "10.0.0.1")))),
    ("volumes: a claim, an emptyDir and a projected token",
     api_pod(spec={"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                               {"name": "scratch", "emptyDir": {}},
                               {"name": "kube-api-access-x7k2p", "projected": {"sources": []}}]}),
     dict(volumes=(Volume("data", "data-web-1", False), Volume("scratch", None, True),
                   Volume("kube-api-access-x7k2p", None, False)))),
    ("required node affinity and pod anti-affinity; a preferred term with its weight",
     api_pod(spec={"affinity": {
         "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a", "b"]}],
              "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n-a"]}]}]},
             "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]},
         "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
             {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
              "namespaces": ["prod"]}]}}}),
     dict(node_affinity=(NodeSelectorTerm((Requirement("pool", "In", ("a", "b")),),
                                          (Requirement("metadata.name", "In", ("n-a",)),)),),
          pod_anti_affinity=(PodAffinityTerm(WEB, "kubernetes.io/hostname", ("prod",)),),
          preferred_node_affinity=((1, NodeSelectorTerm()),))),
    ("tolerations with defaults, spread with defaults and with every field, node selector",
     api_pod(spec={"nodeSelector": {"pool": "a"},
                   "tolerations": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                                   {"operator": "Exists", "tolerationSeconds": 300}],
                   "topologySpreadConstraints": [
                       {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}},
                       {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 3,
                        "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
                        "matchLabelKeys": ["pod-template-hash"]}]}),
     dict(node_selector={"pool": "a"},
          tolerations=(Toleration("dedicated", "Equal", "web", "NoSchedule"), Toleration("", "Exists", "", "")),
          spread=(SpreadConstraint(1, "topology.kubernetes.io/zone", "DoNotSchedule", WEB),
                  SpreadConstraint(2, "kubernetes.io/hostname", "ScheduleAnyway", WEB, 3, "Ignore", "Honor",
                                   ("pod-template-hash",))))),
    ("static pod mirror, controller owner among other references, priority and scheduler",
     api_pod(metadata={"annotations": {"kubernetes.io/config.mirror": "abc", "note": "x"},
                       "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n-a", "uid": "n1"},
                                           {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                            "uid": "rs1", "controller": True}]},
             spec={"priority": 1000, "schedulerName": "batch"}),
     dict(mirror=True, owner=OwnerRef("ReplicaSet", "web-abc", "rs1", "apps/v1"), priority=1000,
          scheduler_name="batch")),
    ("running mid-resize: status resources apart from the spec, PodResizePending Infeasible",
     api_pod(spec={"nodeName": "n-a",
                   "initContainers": [{"name": "side", "restartPolicy": "Always",
                                       "resources": {"requests": {"cpu": "100m"}}}]},
             status={"phase": "Running",
                     "conditions": [cond("PodResizePending", "True", reason="Infeasible"),
                                    cond("PodResizePending", "True", reason="Deferred")],
                     "containerStatuses": [{"name": "app", "image": "web:1", "ready": True, "restartCount": 0,
                                            "allocatedResources": {"cpu": "500m"},
                                            "resources": {"requests": {"cpu": "400m", "memory": "128Mi"}}}],
                     "initContainerStatuses": [{"name": "side", "resources": {}}],
                     "resources": {"requests": {"cpu": "1"}}}),
     dict(node_name="n-a", phase="Running", requests={"cpu": 350, "memory": 128 * MI},
          score_requests=(350, 128 * MI + 200 * MI),
          resize=PodResize((ContainerResize({"cpu": 250, "memory": 128 * MI}, {"cpu": 500},
                                            {"cpu": 400, "memory": 128 * MI}, True, "container"),
                            ContainerResize({"cpu": 100}, None, None, True, "sidecar")),
                           actual={"cpu": 1000}, status_resources=True, infeasible=True))),
    ("running, status resources equal to the spec: nothing to size by status",
     api_pod(spec={"nodeName": "n-a"},
             status={"phase": "Running",
                     "containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "250m", "memory": "128Mi"},
                                            "resources": {"requests": {"cpu": "250m", "memory": "128Mi"},
                                                          "limits": {"cpu": "1"}}}]}),
     dict(node_name="n-a", phase="Running")),
    ("node features: a RestartAllContainers rule, a bind mount with options, host network without host users",
     api_pod(spec={"hostNetwork": True, "hostUsers": False,
                   "containers": [{"name": "app", "restartPolicyRules": [{"action": "RestartAllContainers"}],
                                   "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                                   "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}}],
                   "initContainers": [{"name": "i", "volumeMounts": [{"name": "v", "mountPath": "/v",
                                                                       "bindMountOptions": ["ro"]}]}]}),
     dict(features_used=frozenset({"RestartAllContainersOnContainerExits", "VolumeBindMountOptions",
                                   "UserNamespacesHostNetworkSupport"}))),
    ("host network with host users, a Restart rule: no node feature",
     api_pod(spec={"hostNetwork": True, "hostUsers": True,
                   "containers": [{"name": "app", "restartPolicyRules": [{"action": "Restart"}],
                                   "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}}}]}),
     dict()),
    ("no namespace, labels, spec or status: the defaults",
     {"metadata": {"name": "bare"}},
     dict(namespace="default", name="bare", uid="", labels={}, created="", requests={})),
    ("JSON nulls where maps and lists go",
     {"metadata": {"name": "nulls", "namespace": None, "labels": None, "annotations": None, "ownerReferences": None},
      "spec": {"containers": None, "initContainers": None, "tolerations": None, "affinity": None, "volumes": None,
               "nodeSelector": None, "topologySpreadConstraints": None, "overhead": None, "priority": None},
      "status": {"conditions": None, "phase": None}},
     dict(namespace="default", name="nulls", uid="", labels={}, created="", requests={})),
]


@pytest.mark.parametrize("obj, changes", [pytest.param(o, c, id=i) for i, o, c in CASES])
@pytest.mark.parametrize("memo", ["cold", "warm"])
@SOURCES
def test_every_field_is_what_the_api_object_says(obj, changes, memo, source):
    forget()
    if memo == "warm":  # every other case decoded first, both ways: no shared record may leak into this one
        for _, other, _ in CASES:
            decode.pod(as_read(other, "dict"))
            decode.pod(as_read(other, "wire"))
    got = decode.pod(as_read(obj, source))
    want = {**BASE, **changes}
    # the scoring requests: their cases are tests/test_scores.py's
    want.setdefault("score_requests", decode.nonzero_requests(obj.get("spec") or {}))
    # the images ImageLocality looks up: their cases are tests/test_image_locality.py's
    spec = obj.get("spec") or {}
    images = [c.get("image") or "" for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
    want.setdefault("images", tuple(images))
    assert type(got) is Pod
    for name in want:  # one field at a time, so a failure names it
        assert getattr(got, name) == want[name], name
    # equal, and each field of the same type (a repr would also compare a set's iteration order,
    # which hash randomisation makes differ between two equal sets built in another order)
    expected = Pod(**want)
    assert got == expected
    assert [type(getattr(got, f)) for f in want] == [type(getattr(expected, f)) for f in want]


def _variants() -> list:
    """A base pod and pods that each differ from it in one sub-tree a memo key must cover."""
    base = api_pod(spec={"nodeName": "n-a", "tolerations": [{"operator": "Exists"}],
                         "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}}],
                         "volumes": [{"name": "v", "emptyDir": {}}]})
    edits = {
        "container requests": lambda s: s["containers"][0]["resources"]["requests"].update(cpu="300m"),
        "container host port": lambda s: s["containers"][0].update(ports=[{"containerPort": 1, "hostPort": 1}]),
        "init container becomes a sidecar": lambda s: s["initContainers"][0].update(restartPolicy="Always"),
        "overhead": lambda s: s.update(overhead={"cpu": "5m"}),
        "tolerations": lambda s: s.update(tolerations=[{"operator": "Exists", "effect": "NoSchedule"}]),
        "spread": lambda s: s.update(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone"}]),
        "node selector": lambda s: s.update(nodeSelector={"pool": "b"}),
        "affinity": lambda s: s.update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n-b"]}]}]}}}),
        "volume is no longer an emptyDir": lambda s: s["volumes"][0].pop("emptyDir"),
        "volume claim": lambda s: s["volumes"][0].update(persistentVolumeClaim={"claimName": "c"}),
    }
    out = [pytest.param(base, id="base")]
    for what, edit in edits.items():
        obj = copy.deepcopy(base)
        edit(obj["spec"])
        out.append(pytest.param(obj, id=what))
    return out


VARIANTS = _variants()


@pytest.mark.parametrize("obj", VARIANTS)
@SOURCES
def test_warm_memos_decode_like_cold_ones(obj, source):
    forget()
    cold = decode.pod(as_read(obj, "dict"))
    forget()
    for other in VARIANTS:
        decode.pod(as_read(other.values[0], "dict"))
        decode.pod(as_read(other.values[0], "wire"))
    warm = decode.pod(as_read(obj, source))
    assert warm == cold and repr(warm) == repr(cold)


@SOURCES
def test_pods_of_one_template_share_their_records(source):
    """Sharing is what keeps 150k pods small, and engine caches key on the requests dict's identity."""
    forget()
    obj = CASES[8][1]
    a, b = decode.pod(as_read(obj, source)), decode.pod(as_read(obj, source))
    for name in ("labels", "requests", "spread", "tolerations", "node_selector", "volumes", "host_ports"):
        assert getattr(a, name) is getattr(b, name), name


def test_unkeyable_sub_trees_are_decoded_as_is():
    """A YAML dump may hold non-string keys: no shared key, same record as the API would mean."""
    forget()
    obj = api_pod(spec={"nodeSelector": {"pool": "a"}, "tolerations": [{"key": 1, "operator": "Exists"}]})
    obj["spec"]["containers"][0]["resources"]["requests"][2] = "x"  # non-string key: not JSON
    with pytest.raises(Exception):  # the quantity parser refuses the bogus resource, as before
        decode.pod(obj)
    obj["spec"]["containers"][0]["resources"]["requests"].pop(2)
    obj["spec"]["nodeSelector"] = {1: "a"}
    with pytest.raises(FieldError, match=r"spec\.tolerations\[0\]\.key: expected a string, got 1"):
        decode.pod(obj)  # a number where the API has a string is named, not kept
    obj["spec"]["tolerations"][0]["key"] = "1"
    with pytest.raises(FieldError, match=r"spec\.nodeSelector: expected a map with string keys, got 1"):
        decode.pod(obj)  # the API's label keys are strings: YAML's 1 is refused, not read as "1"
    obj["spec"]["nodeSelector"] = {"1": "a"}
    p = decode.pod(obj)
    assert p.node_selector == {"1": "a"} and p.tolerations == (Toleration("1", "Exists", "", ""),)


@pytest.mark.parametrize("cls, values", [
    pytest.param(PodCondition, ("Ready", "True", "r", "m", T0), id="PodCondition"),
    pytest.param(Pod, tuple(BASE.values()) + ((250, 128 * MI), (), (), (), (300, 128 * MI), None,
                                                frozenset({"VolumeBindMountOptions"}), ("web:1",)),
                 id="Pod, every field"),
    # the drain planner's records (views/drain/core/steps.py, counts.py, placement.py)
    pytest.param(ConstraintAfter, ("Deployment/web", "prod", "topology.kubernetes.io/zone", 1, "DoNotSchedule",
                                   {"a": 2, "b": 1}, 1, 1, 1, "AT LIMIT"), id="ConstraintAfter"),
    pytest.param(Eviction, ("prod", "web-1", "n1", "Deployment/web", True, "n2", {"zone": ("a",)}, ("prod/pdb",), "",
                            ("n2", "n3")),
                 id="Eviction"),
    pytest.param(Stranded, ("prod", "web-1", "Deployment/web", 3, "SpreadRefusesEveryFitNode", {"node": "n1"}),
                 id="Stranded"),
    pytest.param(Placement, ("pod", "n2", ("n2", "n3"), {"zone": ("b",)}, (), {}, {}, ()), id="Placement"),
    pytest.param(Domain, ("a", 2, ("n1", "n2")), id="Domain"),
])
def test_positional_constructor_makes_ordinary_instances(cls, values):
    make = positional_constructor(cls)
    got, want = make(*values), cls(*values)
    assert type(got) is cls and got == want and repr(got) == repr(want)
    if cls in (PodCondition, Domain):
        assert hash(got) == hash(want)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(got, dataclasses.fields(cls)[0].name, "x")  # still frozen
    assert dataclasses.replace(got) == want
    with pytest.raises(TypeError):
        make(*values[:-1])  # every field is required, in order


def test_positional_constructor_of_a_post_init_class_takes_the_derived_fields_from_its_caller():
    """drain/counts.new_spread_state: SpreadState's __post_init__ picks `hard`; the shifts pass
    it instead (all constraints, some, none), and get what the ordinary constructor gives."""
    from kubectl_tspread.views.drain.core.counts import new_spread_state
    from kubectl_tspread.engine import spread

    hard = SpreadConstraint(1, "topology.kubernetes.io/zone", "DoNotSchedule", WEB)
    soft = dataclasses.replace(hard, topology_key="kubernetes.io/hostname", when_unsatisfiable="ScheduleAnyway")
    pod = decode.pod(copy.deepcopy(CASES[0][1]))
    for cons in ((hard,), (hard, soft), (soft, hard), (soft,), ()):
        states = tuple(spread.ConstraintState(c, WEB, "ns", 1, {}, {}, (), 0, False, 0, "OK") for c in cons)
        want = spread.SpreadState(pod, states, False)
        got = new_spread_state(pod, states, False, tuple(s for s in states if s.constraint.hard))
        assert type(got) is spread.SpreadState and got == want and repr(got) == repr(want)
        assert got.hard == want.hard and got.soft == want.soft
        with pytest.raises(dataclasses.FrozenInstanceError):
            got.hard = ()
    with pytest.raises(TypeError):
        positional_constructor(spread.SpreadState)  # __post_init__ would not run: the caller must say so


def test_positional_constructor_refuses_classes_it_cannot_mirror():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (NoSlots, PostInit):
        with pytest.raises(TypeError):
            positional_constructor(cls)
