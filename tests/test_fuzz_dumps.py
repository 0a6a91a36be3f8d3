"""Structure-aware fuzzing of dumps: valid dumps mutated as an attacker would (wrong types,
huge numbers, deep nesting, aliases, bad UTF-8, cut files), run through all three commands
in-process. Whatever the input, each run ends with exit 0-3, at most one `error:` line,
never a traceback or the catch-all "unexpected" message (that one is for real bugs), and
nothing on stdout when it fails.

The run is derandomized and bounded (FUZZ_EXAMPLES examples, about a quarter of a minute); set
TSPREAD_FUZZ_EXAMPLES to search longer. Each failure it found, minimised, is a file in
tests/data/hostile/, replayed by test_the_corpus_of_found_failures_stays_fixed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from apiobjects import as_list, node_obj, pod_obj, spread_obj, workload_obj
from kubectl_tspread.cli import main

CORPUS = Path(__file__).parent / "data" / "hostile"
FUZZ_EXAMPLES = int(os.environ.get("TSPREAD_FUZZ_EXAMPLES", "100"))
COMMANDS = (["distribution", "-A", "--timeline"], ["why-pending", "-A"], ["drain-safe", "n0"])
FORMATS = ([], ["-o", "json"], ["-o", "yaml"])


def base_cluster() -> dict:
    nodes = [node_obj(f"n{i}", zone=z, taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}] if i == 2 else ())
             for i, z in enumerate("aab")]
    deploy = workload_obj("Deployment", "web", {"app": "web"})
    rs = workload_obj("ReplicaSet", "web-5d8f", {"app": "web"}, owner=("Deployment", "web"))
    pods = [pod_obj(f"web-5d8f-{i}", node=n, labels={"app": "web", "pod-template-hash": "5d8f"},
                    spread=[spread_obj(), spread_obj(key="kubernetes.io/hostname", mode="ScheduleAnyway",
                                                     nodeTaintsPolicy="Honor", minDomains=2)],
                    owner=("ReplicaSet", "web-5d8f"), created=f"2026-01-01T00:00:0{i}Z")
            for i, n in enumerate(("n0", "n1", "n0"))]
    pending = pod_obj("web-5d8f-p", labels={"app": "web", "pod-template-hash": "5d8f"}, spread=[spread_obj()],
                      owner=("ReplicaSet", "web-5d8f"), created="2026-01-01T00:00:09Z")
    pending["spec"]["tolerations"] = [{"key": "t", "operator": "Exists", "effect": "NoSchedule"}]
    pending["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                                     "values": ["a", "b"]}]}]}}}
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
           "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}
    # images ImageLocality reads: on two nodes, and an image volume on the pending pod
    for node in nodes[:2]:
        node["status"]["images"] = [{"names": ["nginx:latest", "docker.io/library/nginx@sha256:ab"],
                                     "sizeBytes": 300 << 20}, {"names": ["pause:3.10"], "sizeBytes": 700000}]
    pending["spec"]["volumes"] = [{"name": "model", "image": {"reference": "nginx", "pullPolicy": "IfNotPresent"}}]
    return as_list(nodes + [deploy, rs] + pods + [pending, pdb, service])


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


BASE = base_cluster()
PATHS = [p for p in _paths(BASE) if len(p) >= 3]  # inside an item: ("items", i, field, ...)

DEEP = [[[]]]
for _ in range(1500):
    DEEP = [DEEP]

HOSTILE = [
    [], {}, None, True, 0, -1, 2**31, 2**64, -(2**63) - 1, 1e308, 1e18, 0.5, "", "abc", "-1", "1.5.3Gi", "1e18",
    "web-\ud800", "x" * 5000, "a\nb\tc\x1b[31m", ["a", 1, None], {"a": {"b": []}}, [{"key": 1}], "Honor",
    "DoNotSchedule", {"matchLabels": {"app": ["x"]}}, {"matchExpressions": [{"key": "app", "operator": "Gt"}]},
    DEEP,
    # valid but extreme: what the engine itself must take
    2147483647, 1, "0", "ScheduleAnyway", "Ignore", "Exists", "NoSchedule", {"app": "web"}, "kubernetes.io/hostname",
    "999Ei", "0m",
]


@st.composite
def mutated(draw) -> tuple[bytes, str]:
    doc = json.loads(json.dumps(BASE))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(st.sampled_from(HOSTILE))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation replaced a parent of this path
    form = draw(st.sampled_from(["json", "json", "yaml", "concatenated", "bare", "aliased"]))
    items = doc["items"]
    if form == "json":
        data = json.dumps(doc, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    elif form == "concatenated":
        data = b"\n".join(json.dumps(o).encode() for o in items)
    elif form == "bare":
        data = json.dumps(items).encode()
    else:
        try:
            text = yaml.safe_dump(doc if form == "yaml" else items, width=10_000)
        except (yaml.YAMLError, RecursionError):
            text = json.dumps(doc)
        if form == "aliased":  # a bomb in front of the items: refused however it is used
            levels = draw(st.integers(1, 6))
            bomb = ["- x-laughs:", "    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
            bomb += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels + 1)]
            text = "\n".join(bomb) + "\n  kind: ConfigMap\n  apiVersion: v1\n" + text
        data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 5)) == 0:  # a byte that is not UTF-8, or a cut file
        at = draw(st.integers(0, len(data)))
        data = data[:at] + b"\xff" + data[at:] if draw(st.booleans()) else data[:at]
    return data, form


def check_run(capsys, path: str, command: list[str], fmt: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--from-file", path, *fmt])
    out, err = capsys.readouterr()
    code = exc.value.code
    where = f"{' '.join(command + fmt)} on {path}: exit {code}, stderr {err!r}"
    assert code in (0, 1, 2, 3), where
    assert "Traceback" not in err and "unexpected" not in err, where
    assert sum(line.startswith("error:") for line in err.splitlines()) <= 1, where
    if code in (1, 2):
        assert out == "" and err.startswith("error: "), where


@settings(max_examples=FUZZ_EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                 HealthCheck.function_scoped_fixture])
@given(case=mutated(), fmt=st.sampled_from(FORMATS))
def test_mutated_dumps_never_crash_hang_or_half_answer(tmp_path, capsys, case, fmt):
    data, form = case
    path = tmp_path / ("dump.json" if form in ("json", "concatenated", "bare") else "dump.yaml")
    path.write_bytes(data)
    for command in COMMANDS:
        check_run(capsys, str(path), command, fmt)


# each file of the corpus: what stderr says about it (None: read, and answered)
CORPUS_ERRORS = {
    "allocatable-cpu-1e18.json": "cannot read Node n0: status.allocatable.cpu: expected a quantity",
    "bare-array.json": None,
    "billion-laughs-map-labels.yaml": "aliases stand for more than 100,000 values",
    "billion-laughs-tolerations.yaml": "aliases stand for more than 100,000 values",
    "concatenated-lists.json": None,
    "cpu-1.5.3Gi.json": "cannot read Pod default/web-1-a: spec.containers[0].resources.requests.cpu",
    "created-int.json": "cannot read Pod default/web-1-a: metadata.creationTimestamp: expected a string, got 1767",
    "created-yaml-nan.yaml": "metadata.creationTimestamp: expected a string, got nan",
    "created-yaml-timestamp.yaml": "metadata.creationTimestamp: expected a string, got a datetime",
    "json-deeper-than-1000.json": "holds JSON nested deeper than 200 levels (at byte ",
    "json-int-of-5000-digits.json": "item 0 of the List holds a number of 5,000 digits; no Kubernetes field holds one",
    "kube-version-annotation-not-a-version.json": "metadata.annotations[tspread.dev/kube-version]: '\\x00v1.37' is not a "
                                                  "Kubernetes version",
    "maxskew-2-64.json": "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer from 1 to",
    "maxskew-abc.json": "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer, got 'abc'",
    "maxskew-negative.json": "maxSkew: expected a positive integer from 1 to 2147483647, got -1",
    "metadata-string.json": "cannot read a Pod without usable metadata (item 3 of the List): metadata: expected a map",
    "name-list.json": "metadata.name: expected a string, got a list",
    "namespace-map.json": "cannot read Pod web-1-a: metadata.namespace: expected a string, got a map",
    "node-policy-map.json": "nodeAffinityPolicy: expected Honor or Ignore, got a map",
    # every object has a name: one without is no object of a real cluster (a list of 50,000 empty
    # objects read as one pod named "" before)
    "pod-name-and-uid-null.json": "cannot read a Pod without a usable name (item 3 of the List): metadata.name: "
                                  "expected a non-empty string, got null",
    "podlist-of-empty-objects.json": "cannot read a Pod without usable metadata (item 2 of the PodList): "
                                     "metadata.name: expected a non-empty string, got null",
    "deployment-without-a-name.yaml": "cannot read a Deployment without a usable name (document 6): metadata.name",
    # what `curl …/api/v1/pods >> dump.json` appends when pods may not be listed: read as no pods before
    "status-document.json": "document 2 is a Status (Failure, Forbidden: pods is forbidden: User \"dev\" cannot "
                            "list resource \"pods\"), the answer to a request that failed",
    "surrogate-names.json": None,
    "utf8-bad-in-list-item.json": "item 4 of the List is not UTF-8 text",
    "workload-uid-map.json": "cannot read ReplicaSet default/web-1: metadata.uid: expected a string, got a map",
    "yaml-deeper-than-1000.yaml": "YAML nested deeper than 200 levels",
    # a second adversarial round: a value of the wrong type read as a meaning before (a number as
    # a deletionTimestamp: terminating; the text "false" as true; 0, "" or false as an empty map or
    # list), and a constraint without a topologyKey read as one with no domains
    "deletion-timestamp-a-number.json": "cannot read Pod default/web-5d8f-0: metadata.deletionTimestamp: expected a "
                                        "string, got 1767225600",
    "owner-references-an-empty-string.json": "cannot read Pod default/web-5d8f-1: metadata.ownerReferences: expected "
                                             "a list, got ''",
    "owner-controller-the-text-false.json": "metadata.ownerReferences[0].controller: expected true or false, "
                                            "got 'false'",
    "labels-zero.json": "cannot read Pod default/web-5d8f-2: metadata.labels: expected a map, got 0",
    "requests-false.json": "spec.containers[0].resources.requests: expected a map of resource names to quantities, "
                           "got false",
    "node-unschedulable-the-text-false.json": "cannot read Node n3: spec.unschedulable: expected true or false, "
                                              "got 'false'",
    "topology-key-missing.json": "spec.topologySpreadConstraints[0].topologyKey: expected a non-empty string, got null",
    # objects skipped as of no use though they stand for ones that are: read as no pods before
    "list-inside-a-list.json": "item 4 of the List is a List inside a List, whose items would go unread",
    "kind-pod-in-lower-case.json": "item 8 of the List has kind 'pod', which the API does not have; write it Pod",
    "podlist-in-lower-case.json": "document 2 has kind 'podlist', which the API does not have; write it PodList",
    # an item of a typed list that names another kind was read as that kind (its pod went missing)
    "podlist-item-of-kind-service.json": "item 1 of the PodList has kind 'Service', not Pod",
    # Decimal takes 1_000 (and other scripts' digits) where the API takes none: read as 1000 cores before
    "cpu-with-underscores.json": "spec.containers[0].resources.requests.cpu: expected a quantity such as 500m or 2Gi",
    # a PersistentVolume whose required node affinity has no terms: why-pending's sentence for it
    # indexed an empty list of nodes (IndexError at the catch-all)
    "pv-node-affinity-of-no-terms.json": None,
    # involvedObject "" was taken for a missing one (the event then involved nothing)
    # a volume's persistentVolumeClaim false was taken for none (the pod's claim went unchecked)
    "volume-claim-false.json": "cannot read Pod default/web-5d8f-p: spec.volumes[0].persistentVolumeClaim: expected a map, "
                               "got false",
    "event-involved-object-an-empty-string.json": "cannot read Event default/e1: involvedObject: expected a map, "
                                                  "got ''",
    # YAML 1.1's base 60: 1:30 was read as 90 cores; kubectl's YAML reader leaves it text
    "cpu-base-60.yaml": "spec.containers[0].resources.requests.cpu: expected a quantity such as 500m or 2Gi, from 0 to "
                        "9,007,199,254,740,992 millicores, got '1:30'",
    "yaml-flow-sequence-of-scalars.yaml": "document 1, item 0 is not a Kubernetes object",
    "yaml-int-of-5000-digits.yaml": "document 1, line 73: the value '99999",
    "yaml-int-tag-on-a-word.yaml": "document 1, line 73: the value 'abc' is not a valid YAML int; quote it if it is text",
    # a third adversarial round: text the API refuses where it reads a time, read as one (a
    # deletionTimestamp of "yesterday": terminating; a date sorted among times as text)
    "deletion-timestamp-not-a-time.json": "cannot read Pod default/web-5d8f-0: metadata.deletionTimestamp: expected an "
                                          "RFC 3339 time such as 2026-01-01T00:00:00Z, got 'yesterday'",
    "creation-timestamp-a-date.yaml": "cannot read Pod default/web-5d8f-1: metadata.creationTimestamp: expected an RFC "
                                      "3339 time such as 2026-01-01T00:00:00Z, got '2026-01-01'",
    # int() took "1_0" (and " 2 ", other scripts' digits): a maxSkew of 10
    "maxskew-text-with-underscore.json": "spec.topologySpreadConstraints[0].maxSkew: expected a positive integer, "
                                         "got '1_0'",
    # msgspec's own words where a template's text held a number past a double
    "maxskew-1e400.json": "cannot read Pod default/web-5d8f-0: spec.topologySpreadConstraints[0].maxSkew: expected a "
                          "positive integer, got inf",
    # values of an enum or type the API refuses, read as another meaning: a host port of false
    # as none, `tcp` never conflicting with TCP, `always` as a plain init container, `bound` as
    # an unbound claim, a misspelt binding mode as Immediate, a count of false as 1
    "host-port-false.json": "spec.containers[0].ports[0].hostPort: expected a port number, got false",
    "host-port-protocol-lower-case.json": "spec.containers[0].ports[0].protocol: expected TCP or UDP or SCTP, got 'tcp'",
    "init-restart-policy-lower-case.json": "spec.initContainers[0].restartPolicy: expected Always or OnFailure or Never, "
                                           "got 'always'",
    "pvc-phase-lower-case.json": "cannot read PersistentVolumeClaim default/data: status.phase: expected Pending or Bound "
                                 "or Lost, got 'bound'",
    "storage-class-binding-mode-misspelt.json": "cannot read StorageClass local: volumeBindingMode: expected Immediate or "
                                                "WaitForFirstConsumer, got 'waitForFirstConsumer'",
    "event-count-false.json": "cannot read Event default/e1: count: expected a count, got false",
    # requirements the API refuses: In of no values matched nothing, a misspelt or lower-case
    # operator matched no node, Gt of a word no label
    "selector-in-of-no-values.json": "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values: "
                                     "expected one value or more for In",
    "node-affinity-operator-lower-case.json": "nodeSelectorTerms[0].matchExpressions[0].operator: expected In or NotIn or "
                                              "Exists or DoesNotExist or Gt or Lt, got 'in'",
    "node-affinity-gt-not-an-integer.json": "nodeSelectorTerms[0].matchExpressions[0].values: expected one integer for Gt",
    # the first of two controller references was read as the controller; an empty kind as one
    "owner-two-controllers.json": "cannot read Pod default/web-5d8f-1: metadata.ownerReferences[1].controller: expected "
                                  "true on one reference only",
    "owner-kind-empty.json": "metadata.ownerReferences[0].kind: expected a non-empty string, got ''",
    "api-version-a-number.json": "document 1: apiVersion: expected a string, got 1",
    "preferred-affinity-weight-false.json": "preferredDuringSchedulingIgnoredDuringExecution[0].weight: expected a "
                                            "weight, got false",
    # a label YAML made a number was read as the number's text: `1.10` as the label 1.1
    "label-value-a-yaml-float.yaml": "cannot read Pod default/web-5d8f-0: metadata.labels.version: expected a string "
                                     "(quote what YAML reads as a number or true/false), got 1.1",
}


def test_the_corpus_is_all_listed():
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(CORPUS_ERRORS)


@pytest.mark.parametrize("name", sorted(CORPUS_ERRORS))
@pytest.mark.parametrize("fmt", FORMATS, ids=["table", "json", "yaml"])
def test_the_corpus_of_found_failures_stays_fixed(capsys, name, fmt):
    for command in COMMANDS:
        with pytest.raises(SystemExit) as exc:
            main([*command, "--from-file", str(CORPUS / name), *fmt])
        out, err = capsys.readouterr()
        want = CORPUS_ERRORS[name]
        if want is None:
            # the corpus dumps hold no PodDisruptionBudgets, which drain-safe says (MissingKinds)
            warnings = [line for line in err.splitlines() if not line.startswith("warning: the input holds no ")]
            assert exc.value.code in (0, 3) and warnings == [] and out, (command, err)
        else:
            assert (exc.value.code, out) == (1, ""), (command, err)
            assert err.startswith("error: ") and err.count("\n") == 1 and want in err, (command, err)
