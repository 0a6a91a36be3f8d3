"""Acceptance rehearsal for `why-pending` (issue 3, "Done when"), on `--from-file` dumps only.

1. kube-scheduler's own Filter tables (filtering_test.go TestSingleConstraint and
   TestMultipleConstraints), one dump per upstream case: per node, the PodTopologySpread entry
   of `failures` exists exactly where upstream's Filter fails, with its status code and reason.
   Upstream runs the plugin alone; the CLI runs every filter, so a node that upstream notes
   "in real case, it's false" also carries a NodeAffinity or TaintToleration failure here, but
   its PodTopologySpread verdict must still be upstream's.
2. The rebuilt message on clusters where several filters refuse different nodes, checked
   against strings written by hand from FitError.Error() (pkg/scheduler/framework/types.go)
   and the DefaultPreemption PostFilter rules; none is produced by our code.
3. Every suggestion marked verified is applied to the raw dump, from its JSON `action` and
   `details` alone, and the edited dump is run again: the pod must then fit some node.
4. Random clusters (hypothesis) against PreFilter + Filter re-written here from filtering.go,
   node by node, with every suggestion applied to the dump as in 3.
"""

from __future__ import annotations

import copy
import glob
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acceptance_dumps as ad
from apiobjects import node_obj, pod_obj
from kubectl_tspread.cli import main
from kubectl_tspread.model.quantity import format_quantity, to_scheduler_units

PTS = "PodTopologySpread"
CODES = {"U": "Unschedulable", "X": "UnschedulableAndUnresolvable"}
REASONS = {"U": "node(s) didn't match pod topology spread constraints",
           "X": "node(s) didn't match pod topology spread constraints (missing required label)"}


def run_json(capsys, *args: str) -> dict:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    assert (exc.value.code, err) == (0, ""), err
    return json.loads(out)


def pending_pods(capsys, path: str) -> list[dict]:
    # the live messages in these dumps were written by a 1.34-1.36 scheduler (with the
    # DynamicResources text), so the answers are asked of that minor's rules
    return run_json(capsys, "why-pending", "-A", "-o", "json", "--kube-version", "1.36", "--from-file", path)["pods"]


def test_dumps_on_disk_are_the_generated_ones():
    files = ad.files()
    assert len(files) == len(ad.upstream_cases()) + len(ad.MESSAGE) + len(ad.FIXES) + len(ad.DRAIN)
    for rel, text in files.items():
        with open(ad.path(rel), encoding="utf-8") as fh:
            assert fh.read() == text, f"{rel} is stale: run python tests/acceptance_dumps.py"


# ---- 1. kube-scheduler's tables -------------------------------------------------------------------

# PodTopologySpread's Filter code per node as upstream's wantStatusCode states it:
# U Unschedulable, X UnschedulableAndUnresolvable, - Success.
UPSTREAM_VERDICTS = {
    "TestSingleConstraint/no existing pods": "a- b- x- y-",
    "TestSingleConstraint/no existing pods, incoming pod doesn't match itself": "a- b- x- y-",
    "TestSingleConstraint/existing pods in a different namespace do not count": "a- b- xU yU",
    "TestSingleConstraint/existing pods do not match null selector": "a- b- x- y-",
    "TestSingleConstraint/pods spread across zones as 3/3, all nodes fit": "a- b- x- y-",
    "TestSingleConstraint/pods spread across zones as 1/2 due to absence of label 'zone' on node-b": "a- bX xU yU",
    "TestSingleConstraint/pod cannot be scheduled as all nodes don't have label 'rack'": "aX xX",
    "TestSingleConstraint/pods spread across nodes as 2/1/0/3, only node-x fits": "aU bU x- yU",
    "TestSingleConstraint/pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit": "aU b- x- yU",
    "TestSingleConstraint/pods spread across nodes as 2/1/0/3, but pod doesn't match itself": "aU b- x- yU",
    "TestSingleConstraint/incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits": "a- b- x- yU",
    "TestSingleConstraint/terminating Pods should be excluded": "a- bU",
    "TestSingleConstraint/incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits": "a- b- xU yU",
    "TestSingleConstraint/pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
    "then the third node fits": "aU bU c-",
    "TestSingleConstraint/pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
    "then the all nodes fit": "a- b- c-",
    "TestSingleConstraint/pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
    "then the third and fourth nodes fit": "aU bU x- y-",
    "TestSingleConstraint/pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
    "then the all nodes fit": "a- b- x- y-",
    "TestSingleConstraint/NodeAffinityPolicy honored with labelSelectors": "aU bU x- y-",
    "TestSingleConstraint/NodeAffinityPolicy ignored with labelSelectors": "aU bU x- yU",
    "TestSingleConstraint/NodeAffinityPolicy honored with nodeAffinity": "aU bU x- y-",
    "TestSingleConstraint/NodeAffinityPolicy ignored with labelSelectors#01": "aU bU x- yU",
    "TestSingleConstraint/NodeTaintsPolicy honored": "aU bU x- y-",
    "TestSingleConstraint/NodeTaintsPolicy ignored": "aU bU x- yU",
    "TestMultipleConstraints/two Constraints on zone and node, spreads = [3/3, 2/1/0/3]": "aU bU x- yU",
    "TestMultipleConstraints/two Constraints on zone and node, spreads = [3/4, 2/1/0/4]": "aU bU xU yU",
    "TestMultipleConstraints/Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]": "aU bU x- yU",
    "TestMultipleConstraints/Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]": "aU bU xU yU",
    "TestMultipleConstraints/Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]": "aU b- xU yU",
    "TestMultipleConstraints/Constraints hold different labelSelectors but pod doesn't match itself on 'zone' "
    "constraint": "a- b- xU yU",
    "TestMultipleConstraints/two Constraints on zone and node, absence of label 'node' on node-x, "
    "spreads = [1/1, 1/0/0/1]": "aU b- xX yU",
    "TestMultipleConstraints/two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore": "aU bU x- yU",
    "TestMultipleConstraints/two node inclusion Constraints, zone: honor/honor, node: honor/ignore": "aU bU x- yU",
    "TestMultipleConstraints/two node inclusion Constraints, zone: honor/ignore, node: honor/ignore": "aU b- x- yU",
    "TestMultipleConstraints/two node inclusion Constraints, zone: honor/honor, node: ignore/ignore": "aU bU x- yU",
    "TestMultipleConstraints/two Constraints on zone, spreads = [3/3, 2/1]": "aU bU x- y-",
    "TestMultipleConstraints/two Constraints on zone, spreads = [3/4, 2/1]": "aU bU xU yU",
    "Filter order/a node failing the first constraint's skew is Unschedulable though it lacks the second key":
        "aU b- xU yU",
}


# TestPreFilterState rows (dumps of tests/scenario_dumps.py): upstream states the counts and
# the critical paths, not Filter codes; these follow from them by Filter's rule, worked by hand.
PREFILTER_VERDICTS = {
    # zone1=1 zone2=1 (only foo AND bar=a pods), min 1, the pod matches: 1+1-1 fits both
    "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty": "a- b- x- y-",
    # {} AND foo=a: zone1=3 zone2=2, min 2: zone1 3+1-2 = 2 > 1
    "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty": "aU bU x- y-",
    # a nil selector stays nil: nothing counts, nothing matches
    "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled": "a- b- x- y-",
    # bar selector, the pod lacks bar (selfMatch 0): node-a=1 node-b=2, min 1, node-c (tainted, left out) counts 0
    "NodeTaintsPolicy honored": "a- b- c-",
    # zone1=2 zone2=1 allows zone2 only; bar: zone1=1 zone2=3 allows zone1 only
    "two spreadConstraints with the same topologyKey": "aU bU xU yU",
    # zone1=3 zone2=4 allows zone1; bar per node a=1 b=0 y=2, min 0, allows node-b
    "different labelSelectors - complex pods": "aU b- yU",
    # node affinity NotIn node-x leaves node-x out of the counts: zone1=3 zone2=4 allows zone1,
    # node-a=2 node-b=1 node-y=4 (min 1) allows node-b; node-x also fails NodeAffinity, yet spread
    # judges it by its zone2 (4+1-3 = 2 > 1)
    "two spreadConstraints, and with podAffinity": "aU b- xU yU",
}


@pytest.mark.parametrize("case", sorted(PREFILTER_VERDICTS), ids=sorted(PREFILTER_VERDICTS))
def test_prefilter_state_rows_give_the_filter_verdicts(capsys, case):
    scenarios = os.path.join(os.path.dirname(ad.DATA_DIR), "scenarios", "upstream")
    (pod,) = run_json(capsys, "why-pending", "pod/p", "-o", "json", "--from-file",
                      os.path.join(scenarios, ad.slug(case) + ".json"))["pods"]
    _check_spread_verdicts(pod, _expected(PREFILTER_VERDICTS[case]))


def test_every_upstream_dump_has_expected_verdicts():
    assert sorted(UPSTREAM_VERDICTS) == sorted(ad.upstream_cases())
    slugs = {ad.slug(name) for name in UPSTREAM_VERDICTS}
    assert len(slugs) == len(UPSTREAM_VERDICTS)  # no two cases share a file


def _expected(spec: str) -> dict[str, str]:
    """'aU b- xX' -> {'node-a': 'U', 'node-b': '-', 'node-x': 'X'}"""
    return {f"node-{item[0]}": item[1] for item in spec.split()}


@pytest.mark.parametrize("case", sorted(UPSTREAM_VERDICTS), ids=sorted(UPSTREAM_VERDICTS))
def test_upstream_filter_verdicts_per_node(capsys, case):
    path = ad.path(f"pending/upstream/{ad.slug(case)}.json")
    (pod,) = run_json(capsys, "why-pending", "pod/p", "-o", "json", "--from-file", path)["pods"]
    _check_spread_verdicts(pod, _expected(UPSTREAM_VERDICTS[case]))


def _check_spread_verdicts(pod: dict, want: dict[str, str]) -> None:
    assert sorted(n["name"] for n in pod["nodes"]) == sorted(want)
    for node in pod["nodes"]:
        spread = [f for f in node["failures"] if f["plugin"] == PTS]
        code = want[node["name"]]
        if code == "-":
            assert spread == [], node
            continue
        assert spread == [{"plugin": PTS, "status": CODES[code], "reason": REASONS[code]}], node
        if not [f for f in node["failures"] if f["plugin"] != PTS]:
            # spread is the node's only failure: it is also what the scheduler reports for it
            assert node["firstFailure"] == spread[0] and node["status"] == CODES[code]
    assert pod["schedulable"] is any(not n["failures"] for n in pod["nodes"])


# ---- 2. the rebuilt message -----------------------------------------------------------------------

# Written by hand from the rules: "0/N nodes are available: " + the "<count> <reason>" strings of
# each node's first failing plugin (NodeResourcesFit lists every short resource) sorted as plain
# strings and joined with ", " + "."; then, when preemption cannot help, the PostFilter
# messages joined with ", ": DynamicResources' "no new claims to deallocate" and
# "preemption: " + a second FitError where UnschedulableAndUnresolvable nodes read "Preemption
# is not helpful for scheduling" and nodes without lower-priority pods "No preemption victims
# found for incoming pod". When preemption finds victims, there is no PostFilter text at all.
PREEMPTION_18 = ("preemption: 0/18 nodes are available: 11 No preemption victims found for incoming pod, "
                 "7 Preemption is not helpful for scheduling.")
SIX_REASONS_18 = (
    "0/18 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 10 node(s) didn't match pod "
    "topology spread constraints, 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) were "
    "unschedulable, 3 node(s) had untolerated taint(s). no new claims to deallocate, " + PREEMPTION_18)
UNRESOLVABLE_12 = (
    "0/12 nodes are available: 10 node(s) didn't match pod topology spread constraints (missing required "
    "label), 2 Insufficient cpu. no new claims to deallocate, preemption: 0/12 nodes are available: "
    "12 Preemption is not helpful for scheduling.")
MESSAGES = {
    "six reasons over 18 nodes": (SIX_REASONS_18, None),
    "eleven short of cpu, three of memory, one at its pod limit, two refused by spread": (
        "0/14 nodes are available: 1 Too many pods, 11 Insufficient cpu, 2 node(s) didn't match pod topology "
        "spread constraints, 3 Insufficient memory. no new claims to deallocate, preemption: 0/14 nodes are "
        "available: 14 No preemption victims found for incoming pod.", None),
    "only unresolvable reasons: missing zone label and a pod larger than the node": (UNRESOLVABLE_12, None),
    "lower-priority pods would make room: preemption succeeds": ("0/12 nodes are available: 12 Insufficient cpu.",
                                                                  None),
    # (messagesAgree, messagesMatchExactly, mismatchCauses) when the dump carries a live message
    "live message written by the scheduler agrees": (UNRESOLVABLE_12, (True, True, [])),
    "live message from before a node joined": (SIX_REASONS_18, (False, False, ["StaleMessage"])),
}


def test_every_message_dump_has_an_expected_message():
    assert sorted(MESSAGES) == sorted(ad.MESSAGE)


@pytest.mark.parametrize("case", sorted(MESSAGES), ids=sorted(MESSAGES))
def test_rebuilt_message_is_the_schedulers(capsys, case):
    (pod,) = pending_pods(capsys, ad.path(f"pending/message/{ad.slug(case)}.json"))
    want, live = MESSAGES[case]
    assert pod["message"] == want
    assert pod["schedulable"] is False
    if live is None:
        assert (pod["schedulerMessage"], pod["messagesAgree"]) == (None, None)
    else:
        agree, exact, causes = live
        assert (pod["messagesAgree"], pod["messagesMatchExactly"]) == (agree, exact)
        assert [c["code"] for c in pod["mismatchCauses"]] == causes


# ---- 3. every verified suggestion really schedules the pod --------------------------------------

CORDON_KEY = "node.kubernetes.io/unschedulable"
HOSTNAME = "kubernetes.io/hostname"


def _items(doc: dict, kind: str) -> list[dict]:
    return [o for o in doc["items"] if o["kind"] == kind]


def _node(doc: dict, name: str) -> dict:
    return next(n for n in _items(doc, "Node") if n["metadata"]["name"] == name)


def _uncordon(node: dict) -> None:
    node["spec"].pop("unschedulable", None)
    node["spec"]["taints"] = [t for t in node["spec"].get("taints", []) if t["key"] != CORDON_KEY]


def _constraint(doc: dict, ns: str, pod: str, position: int) -> dict:
    obj = next(p for p in _items(doc, "Pod")
               if (p["metadata"].get("namespace", "default"), p["metadata"]["name"]) == (ns, pod))
    return obj["spec"]["topologySpreadConstraints"][position]


def apply_suggestion(doc: dict, ns: str, pod: str, s: dict) -> dict:
    """The edit a user would make for suggestion `s`, done on a copy of the raw dump from the
    suggestion's JSON alone. Raises KeyError when `details` lacks what the edit needs."""
    doc = copy.deepcopy(doc)
    d, action = s["details"], s["action"]
    if action == "Uncordon":
        _uncordon(_node(doc, d["node"]))
    elif action == "LabelNodes":
        for name, labels in d["labels"].items():
            _node(doc, name)["metadata"]["labels"].update(labels)
    elif action == "DeleteNodes":
        gone = set(d["nodes"])  # the pod garbage collector removes the pods bound to them
        doc["items"] = [o for o in doc["items"] if not (o["kind"] == "Node" and o["metadata"]["name"] in gone)
                        and not (o["kind"] == "Pod" and o["spec"].get("nodeName") in gone)]
    elif action == "SetNodeTaintsPolicyHonor":
        _constraint(doc, ns, pod, d["position"])["nodeTaintsPolicy"] = "Honor"
    elif action == "LowerMinDomains":
        _constraint(doc, ns, pod, d["position"])["minDomains"] = d["minDomains"]
    elif action == "RaiseMaxSkew":
        _constraint(doc, ns, pod, d["position"])["maxSkew"] = d["maxSkew"]
    elif action == "ScheduleAnyway":
        _constraint(doc, ns, pod, d["position"])["whenUnsatisfiable"] = "ScheduleAnyway"
    elif action == "EvictLowerPriority":
        victims = set(d["podKeys"])
        doc["items"] = [o for o in doc["items"] if not (
            o["kind"] == "Pod" and f'{o["metadata"].get("namespace", "default")}/{o["metadata"]["name"]}' in victims)]
    elif action == "AddNode":
        new = copy.deepcopy(_node(doc, d["like"]))
        new["metadata"]["name"] = d["name"]
        if HOSTNAME in new["metadata"]["labels"]:
            new["metadata"]["labels"][HOSTNAME] = d["name"]
        _uncordon(new)
        if d["topologyKey"] is not None:
            assert new["metadata"]["labels"][d["topologyKey"]] == d["domain"]
        doc["items"].append(new)
    elif action in ("AddNodeWithLabels", "AddLargerNode"):
        new = copy.deepcopy(_node(doc, d["like"]))
        new["metadata"]["name"] = d["name"]
        labels = new["metadata"]["labels"]
        if HOSTNAME in labels:
            labels[HOSTNAME] = d["name"]
        for key in d.get("dropped", []):
            labels.pop(key, None)
        labels.update(d.get("labels", {}))
        for r, v in d.get("allocatable", {}).items():
            new["status"]["allocatable"][r] = format_quantity(r, v)
        _uncordon(new)
        doc["items"].append(new)
    elif action == "LowerRequest":
        target = next(o for o in _items(doc, "Pod")
                      if o["metadata"]["name"] == pod and o["metadata"].get("namespace", "default") == ns)
        first = target["spec"]["containers"][0].setdefault("resources", {}).setdefault("requests", {})
        for r, v in d["new"].items():  # the effective request drops by old - new
            have = to_scheduler_units(r, first.get(r, 0))
            first[r] = format_quantity(r, have - (d["old"][r] - v))
    else:
        raise AssertionError(f"suggestion {action} cannot be applied from its JSON: {s}")
    return doc


def _fix_dumps() -> list[str]:
    here = os.path.join(ad.DATA_DIR, "pending")
    sd_ops = os.path.join(os.path.dirname(ad.DATA_DIR), "scenarios", "ops")
    return sorted(glob.glob(os.path.join(here, "*", "*.json"))) + sorted(glob.glob(os.path.join(sd_ops, "*.json")))


def _rel(path: str) -> str:
    return os.path.relpath(path, os.path.dirname(ad.DATA_DIR))


@pytest.mark.parametrize("path", _fix_dumps(), ids=[_rel(p) for p in _fix_dumps()])
def test_every_verified_suggestion_schedules_the_pod_on_the_edited_dump(capsys, tmp_path, path):
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    for pod in pending_pods(capsys, path):
        if pod["schedulable"]:
            assert pod["suggestions"] == []
            continue
        for k, s in enumerate(pod["suggestions"]):
            assert s["verified"] is True and s["nodes"], s
            edited = tmp_path / f"{pod['name']}-{k}.json"
            edited.write_text(json.dumps(apply_suggestion(doc, pod["namespace"], pod["name"], s)))
            (after,) = run_json(capsys, "why-pending", f"pod/{pod['name']}", "-n", pod["namespace"],
                                "-o", "json", "--from-file", str(edited))["pods"]
            fits = sorted(n["name"] for n in after["nodes"] if n["status"] == "Success")
            assert fits and after["schedulable"], (s, after["message"])
            # the nodes the suggestion promised are the nodes the edit opens
            assert fits == sorted(s["nodes"]), s


def test_every_suggestion_kind_is_produced_by_some_dump(capsys):
    """Each kind of fix the issue names comes out of at least one dump above, so the test
    before this one applies and proves every kind."""
    seen = {s["action"] for path in _fix_dumps() for pod in pending_pods(capsys, path) for s in pod["suggestions"]}
    assert seen >= {"Uncordon", "LabelNodes", "DeleteNodes", "SetNodeTaintsPolicyHonor", "LowerMinDomains",
                    "RaiseMaxSkew", "EvictLowerPriority", "AddNode", "ScheduleAnyway"}


# ---- 4. random clusters against Filter as filtering.go writes it ---------------------------------

KEYS = ("topology.kubernetes.io/zone", HOSTNAME, "rack")


def _match(selector: dict | None, labels: dict) -> bool:
    return selector is not None and all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def _untolerated(node: dict, pod: dict) -> bool:
    tolerated = {t["key"] for t in pod["spec"].get("tolerations", [])}
    return any(t["effect"] in ("NoSchedule", "NoExecute") and t["key"] not in tolerated
               for t in node["spec"].get("taints", []))


def filter_codes(doc: dict, pod: dict) -> dict[str, str]:
    """PodTopologySpread's PreFilter + Filter for `pod`, written from filtering.go: per node
    'U', 'X' or '-'. Nodes missing any hard key count for no constraint; inclusion policies
    per constraint; Filter walks the constraints in order and returns at the first failure."""
    nodes = [o for o in doc["items"] if o["kind"] == "Node"]
    others = [o for o in doc["items"] if o["kind"] == "Pod" and o["spec"].get("nodeName")
              and "deletionTimestamp" not in o["metadata"] and o["metadata"]["namespace"] == pod["metadata"]["namespace"]]
    labels = pod["metadata"]["labels"]
    hard = [c for c in pod["spec"]["topologySpreadConstraints"] if c["whenUnsatisfiable"] == "DoNotSchedule"]
    selectors = []
    for c in hard:
        extra = {k: labels[k] for k in c.get("matchLabelKeys", []) if k in labels}
        selectors.append(None if "labelSelector" not in c else {"matchLabels": {**c["labelSelector"]["matchLabels"], **extra}})
    counts: list[dict[str, int]] = [{} for _ in hard]
    for n in nodes:
        nl = n["metadata"]["labels"]
        if not all(c["topologyKey"] in nl for c in hard):
            continue
        for i, c in enumerate(hard):
            if c.get("nodeAffinityPolicy", "Honor") == "Honor" and not all(
                    nl.get(k) == v for k, v in pod["spec"].get("nodeSelector", {}).items()):
                continue
            if c.get("nodeTaintsPolicy", "Ignore") == "Honor" and _untolerated(n, pod):
                continue
            here = sum(1 for p in others if p["spec"]["nodeName"] == n["metadata"]["name"]
                       and _match(selectors[i], p["metadata"]["labels"]))
            value = nl[c["topologyKey"]]
            counts[i][value] = counts[i].get(value, 0) + here
    out = {}
    for n in nodes:
        nl, code = n["metadata"]["labels"], "-"
        for i, c in enumerate(hard):
            if c["topologyKey"] not in nl:
                code = "X"
                break
            least = 0 if len(counts[i]) < c.get("minDomains", 1) else min(counts[i].values())
            self_match = 1 if _match(selectors[i], labels) else 0
            if counts[i].get(nl[c["topologyKey"]], 0) + self_match - least > c["maxSkew"]:
                code = "U"
                break
        out[n["metadata"]["name"]] = code
    return out


@st.composite
def spread_clusters(draw):
    """2-6 nodes (zone a/b/c or none, maybe a rack, maybe cordoned or tainted, maybe pool=x),
    web pods of two revisions here and in another namespace, some terminating, and a Pending
    pod with 1-2 constraints over zone, hostname or rack with random policies."""
    cordon = {"key": CORDON_KEY, "effect": "NoSchedule"}
    nodes = []
    for i in range(draw(st.integers(2, 6))):
        zone = draw(st.sampled_from(["a", "b", "c", None]))
        extra = {"rack": f"r{draw(st.integers(1, 2))}"} if draw(st.booleans()) else {}
        if draw(st.booleans()):
            extra["pool"] = "x"
        cordoned = draw(st.integers(0, 4)) == 0
        taints = [cordon] if cordoned else []
        if draw(st.integers(0, 4)) == 0:
            taints.append({"key": "dedicated", "value": "infra", "effect": "NoSchedule"})
        nodes.append(node_obj(f"n{i}", zone=zone, labels=extra, unschedulable=cordoned, taints=taints))
    pods = []
    for k in range(draw(st.integers(0, 10))):
        node = draw(st.sampled_from(nodes))["metadata"]["name"]
        obj = pod_obj(f"w{k}", node=node, labels={"app": "web", "rev": draw(st.sampled_from(["1", "2"]))},
                      namespace=draw(st.sampled_from(["default", "default", "other"])))
        if draw(st.integers(0, 5)) == 0:
            obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:05:00Z"
        pods.append(obj)
    constraints = []
    for _ in range(draw(st.integers(1, 2))):
        c = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": draw(st.sampled_from(KEYS)),
             "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"])),
             "labelSelector": {"matchLabels": {"app": "web"}}}
        if draw(st.booleans()):
            c["minDomains"] = draw(st.integers(1, 4))
        for field_, values in (("nodeAffinityPolicy", ["Honor", "Ignore"]), ("nodeTaintsPolicy", ["Honor", "Ignore"])):
            if draw(st.booleans()):
                c[field_] = draw(st.sampled_from(values))
        if draw(st.booleans()):
            c["matchLabelKeys"] = ["rev"]
        constraints.append(c)
    labels = draw(st.sampled_from([{"app": "web", "rev": "2"}, {"app": "web"}, {"app": "other"}]))
    pod = pod_obj("p", labels=labels, spread=constraints)
    if draw(st.booleans()):
        pod["spec"]["nodeSelector"] = {"pool": "x"}
    if draw(st.booleans()):
        pod["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "List", "items": [*nodes, *pods, pod]}, pod


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(spread_clusters())
def test_random_clusters_spread_verdicts_follow_filtering_go_and_fixes_hold(capsys, tmp_path, case):
    doc, pod = case
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    (report,) = run_json(capsys, "why-pending", "pod/p", "-o", "json", "--from-file", str(path))["pods"]
    want = filter_codes(doc, pod) if any(c["whenUnsatisfiable"] == "DoNotSchedule"
                                         for c in pod["spec"]["topologySpreadConstraints"]) else {}
    _check_spread_verdicts(report, {n["name"]: want.get(n["name"], "-") for n in report["nodes"]})
    for k, s in enumerate(report["suggestions"]):
        edited = tmp_path / f"fix-{k}.json"
        edited.write_text(json.dumps(apply_suggestion(doc, "default", "p", s)))
        (after,) = run_json(capsys, "why-pending", "pod/p", "-o", "json", "--from-file", str(edited))["pods"]
        assert sorted(n["name"] for n in after["nodes"] if n["status"] == "Success") == sorted(s["nodes"]), s
