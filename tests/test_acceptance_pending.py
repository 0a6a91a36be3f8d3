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
"""

from __future__ import annotations

import copy
import glob
import json
import os

import pytest

import acceptance_dumps as ad
from kubectl_tspread.cli import main

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
    return run_json(capsys, "why-pending", "-A", "-o", "json", "--from-file", path)["pods"]


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
    want = _expected(UPSTREAM_VERDICTS[case])
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
        _constraint(doc, ns, pod, d["position"])["minDomains"] = d["new"]
    elif action == "RaiseMaxSkew":
        _constraint(doc, ns, pod, d["position"])["maxSkew"] = d["new"]
    elif action == "ScheduleAnyway":
        _constraint(doc, ns, pod, d["position"])["whenUnsatisfiable"] = "ScheduleAnyway"
    elif action == "EvictLowerPriority":
        victims = {(d["node"], name) for name in d["pods"]}
        doc["items"] = [o for o in doc["items"]
                        if not (o["kind"] == "Pod" and (o["spec"].get("nodeName"), o["metadata"]["name"]) in victims)]
    elif action == "AddNode":
        new = copy.deepcopy(_node(doc, d["template"]))
        new["metadata"]["name"] = d["name"]
        if HOSTNAME in new["metadata"]["labels"]:
            new["metadata"]["labels"][HOSTNAME] = d["name"]
        _uncordon(new)
        if d["key"] is not None:
            assert new["metadata"]["labels"][d["key"]] == d["domain"]
        doc["items"].append(new)
    else:
        raise AssertionError(f"suggestion {action} cannot be applied from its JSON: {s}")
    return doc


def _fix_dumps() -> list[str]:
    here = os.path.join(ad.DATA_DIR, "pending")
    sd_ops = os.path.join(os.path.dirname(ad.DATA_DIR), "scenarios", "ops")
    return sorted(glob.glob(os.path.join(here, "*", "*.json"))) + sorted(glob.glob(os.path.join(sd_ops, "*.json")))


def _rel(path: str) -> str:
    return os.path.relpath(path, os.path.dirname(ad.DATA_DIR))


SEEN_ACTIONS: set[str] = set()


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
            SEEN_ACTIONS.add(s["action"])


def test_every_suggestion_kind_was_exercised():
    """Runs after the parametrized test above (pytest keeps file order): each kind of fix
    the issue names was produced, applied and proven on some dump."""
    assert SEEN_ACTIONS >= {"Uncordon", "LabelNodes", "DeleteNodes", "SetNodeTaintsPolicyHonor", "LowerMinDomains",
                            "RaiseMaxSkew", "EvictLowerPriority", "AddNode", "ScheduleAnyway"}
