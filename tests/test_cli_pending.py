"""`kubectl tspread why-pending` end to end through main(): dumps, the demo, the live path over
HTTP; stdout and stderr checked apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from apiobjects import as_list, node_obj, pod_obj, spread_obj

CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
from fakeapi import FakeApiServer, token_user, write_kubeconfig
from kubectl_tspread.cli import main

DATA = Path(__file__).parent / "data" / "pending"
MESSAGE = ("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match pod topology "
           "spread constraints.")


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def cordoned_zone_objects(event_message: str = MESSAGE) -> list[dict]:
    """Zones a, b hold one web pod each, zone c's only node is cordoned: web-new waits."""
    # c0 as a live cluster holds a cordon: spec.unschedulable and the node controller's taint
    nodes = [node_obj("a0", zone="a"), node_obj("b0", zone="b"),
             node_obj("c0", zone="c", unschedulable=True, taints=[CORDON_TAINT])]
    web = {"app": "web"}
    pods = [pod_obj("web-a", node="a0", labels=web, spread=[spread_obj()]),
            pod_obj("web-b", node="b0", labels=web, spread=[spread_obj()]),
            pod_obj("web-new", labels=web, spread=[spread_obj()], created="2026-01-01T00:05:00Z")]
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web-new.1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "web-new", "namespace": "default", "uid": "uid-web-new"},
             "reason": "FailedScheduling", "message": event_message, "count": 3,
             "lastTimestamp": "2026-01-01T00:06:00Z"}
    return nodes + pods + [event]


def test_checked_in_dump_is_the_built_cluster():
    """tests/data/pending/cordoned-zone.json is what cordoned_zone_objects() builds (kept in sync)."""
    assert json.loads((DATA / "cordoned-zone.json").read_text()) == as_list(cordoned_zone_objects())


def test_report_from_dump(capsys):
    code, out, err = run(capsys, "why-pending", "--from-file", str(DATA / "cordoned-zone.json"))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Pod default/web-new · Pending · fits none of 3 nodes"
    # the answer first, from the most decisive blocker (spread here), then every blocker
    assert lines[1].startswith("Answer: Spread allows only zone c (a=1 b=1 c=0, maxSkew 1)")
    assert lines[2] == ("Blocked by: PodTopologySpread (node(s) didn't match pod topology spread constraints) "
                        "on 2 nodes; NodeUnschedulable (node(s) were unschedulable) on 1 node")
    assert lines[3].startswith("Scheduler message (rebuilt): " + MESSAGE)
    assert lines[4].startswith("Live message (FailedScheduling event, 2026-01-01T00:06:00Z): same verdicts")
    assert ("→ Spread allows only zone c (a=1 b=1 c=0, maxSkew 1); zone c's 1 node is cordoned "
            "(node(s) were unschedulable)") in out
    assert "trap CordonedDomain:" in out
    assert "1. uncordon node c0 (kubectl uncordon c0) → fits on c0 [verified: the pod then fits]" in out
    assert "FIRST-FAILURE" not in out  # the per-node table is -o wide only


def test_wide_adds_the_per_node_table(capsys):
    code, out, err = run(capsys, "why-pending", "pod/web-new", "-o", "wide", "--from-file",
                         str(DATA / "cordoned-zone.json"))
    assert (code, err) == (0, "")
    table = out[out.index("NODE "):].splitlines()
    assert table[0].split() == ["NODE", "STATUS", "FIRST-FAILURE", "ALSO-FAILS"]
    assert table[3].split()[:3] == ["c0", "UnschedulableAndUnresolvable", "NodeUnschedulable:"]


def test_json_follows_the_pending_report_schema(capsys):
    code, out, err = run(capsys, "why-pending", "web-new", "-o", "json", "--from-file",
                         str(DATA / "cordoned-zone.json"))
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert (doc["apiVersion"], doc["kind"]) == ("tspread/v1alpha1", "PendingReport")
    pod = doc["pods"][0]
    assert (pod["namespace"], pod["name"], pod["schedulable"]) == ("default", "web-new", False)
    assert pod["message"].startswith(MESSAGE) and pod["schedulerMessage"] == MESSAGE
    assert pod["messagesAgree"] is True and pod["messagesMatchExactly"] is False
    c0 = next(n for n in pod["nodes"] if n["name"] == "c0")
    assert c0["status"] == "UnschedulableAndUnresolvable"
    assert c0["firstFailure"] == {"plugin": "NodeUnschedulable", "status": "UnschedulableAndUnresolvable",
                                  "reason": "node(s) were unschedulable"}
    constraint = pod["constraints"][0]
    assert (constraint["topologyKey"], constraint["maxSkew"], constraint["globalMin"]) == (
        "topology.kubernetes.io/zone", 1, 0)
    assert [(d["value"], d["pods"], d["nodes"], d["skewIfPlaced"], d["allowed"]) for d in constraint["domains"]] \
        == [("a", 1, 1, 2, False), ("b", 1, 1, 2, False), ("c", 0, 1, 1, True)]
    assert "whenUnsatisfiable" in constraint and "excludedNodes" in constraint  # DistributionReport fields
    assert {s["action"] for s in pod["suggestions"]} >= {"Uncordon", "DeleteNodes", "SetNodeTaintsPolicyHonor"}
    assert all(s["verified"] and s["text"] for s in pod["suggestions"])
    yaml_doc = yaml.safe_load(run(capsys, "why-pending", "web-new", "-o", "yaml", "--from-file",
                                  str(DATA / "cordoned-zone.json"))[1])
    assert yaml_doc == doc


def test_exit_code_3_only_when_asked_and_some_pod_fits_nowhere(capsys, tmp_path):
    dump = str(DATA / "cordoned-zone.json")
    assert run(capsys, "why-pending", "--from-file", dump)[0] == 0
    assert run(capsys, "why-pending", "--exit-code", "--from-file", dump)[0] == 3
    fits = [o for o in cordoned_zone_objects() if o["metadata"]["name"] != "web-b"]
    path = tmp_path / "fits.json"
    path.write_text(json.dumps(as_list(fits)))
    code, out, err = run(capsys, "why-pending", "--exit-code", "--from-file", str(path))
    assert (code, err) == (0, "") and "fits 1 of 3 nodes" in out


def test_running_pod_gets_one_line(capsys):
    code, out, err = run(capsys, "why-pending", "pod/web-a", "--from-file", str(DATA / "cordoned-zone.json"))
    assert (code, out, err) == (0, "pod web-a is Running on node a0; nothing to explain\n", "")


def test_unknown_pod_is_an_error_on_stderr(capsys):
    code, out, err = run(capsys, "why-pending", "pod/nope", "--from-file", str(DATA / "cordoned-zone.json"))
    assert (code, out) == (1, "")
    assert err.startswith('error: pod "nope" not found in namespace "default"') and err.count("\n") == 1


def test_selector_picks_pending_pods_only(capsys):
    dump = str(DATA / "cordoned-zone.json")
    code, out, err = run(capsys, "why-pending", "-l", "app=web", "-o", "json", "--from-file", dump)
    assert (code, err) == (0, "")
    assert [p["name"] for p in json.loads(out)["pods"]] == ["web-new"]
    code, out, err = run(capsys, "why-pending", "-l", "app=db", "--from-file", dump)
    assert (code, out, err) == (0, 'No Pending pods in namespace "default": nothing is waiting for the scheduler.\n', "")


def test_target_and_selector_together_is_a_usage_error(capsys):
    code, out, err = run(capsys, "why-pending", "web-new", "-l", "app=web", "--demo")
    assert (code, out) == (2, "") and err.startswith("error: give either pod/NAME or -l/--selector")


def test_demo_explains_both_stories(capsys):
    code, out, err = run(capsys, "why-pending", "--demo", "-o", "json")
    assert (code, err) == (0, "")
    pods = {p["name"].split("-")[0]: p for p in json.loads(out)["pods"]}
    assert set(pods) == {"notifications", "search"}
    assert all(p["messagesAgree"] for p in pods.values())
    search = pods["search"]["constraints"][0]["summary"]["message"]
    assert search.startswith("Spread allows only zone us-east-2b")
    assert {"AddNode", "RaiseMaxSkew"} <= {s["action"] for s in pods["search"]["suggestions"]}
    notif = pods["notifications"]["constraints"][0]
    assert [t["code"] for t in notif["traps"]] == ["CordonedDomain"]


def test_help_has_description_and_examples(capsys):
    code, out, err = run(capsys, "why-pending", "--help")
    assert (code, err) == (0, "")
    assert "Why a Pending pod is not scheduled" in out and "Examples:" in out
    assert out.count("kubectl tspread why-pending") >= 3


def test_live_path_reads_events_over_http(capsys, tmp_path, env):
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*cordoned_zone_objects(event_message="0/4 nodes are available: 4 Insufficient cpu."))
        config = write_kubeconfig(str(tmp_path / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                                  {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")
        code, out, err = run(capsys, "why-pending", "--kubeconfig", config, "-o", "json")
        assert any("/events" in r.path for r in api.logged("GET"))
    assert (code, err) == (0, "")
    pod = json.loads(out)["pods"][0]
    assert pod["schedulerMessage"] == "0/4 nodes are available: 4 Insufficient cpu."
    assert pod["messagesAgree"] is False and pod["schedulerMessageSource"] == "event"
    assert [c["code"] for c in pod["mismatchCauses"]] == ["StaleMessage"]  # written when the cluster had 4 nodes


def test_a_kind_the_rbac_hides_is_one_warning_line(capsys, tmp_path, env):
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*cordoned_zone_objects())
        api.fail("*/storageclasses", 403, times=None)
        config = write_kubeconfig(str(tmp_path / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                                  {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")
        code, out, err = run(capsys, "why-pending", "--kubeconfig", config, "-o", "json")
    assert code == 0 and json.loads(out)["kind"] == "PendingReport"
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: skipped storageclasses.storage.k8s.io: ")


def _cross_namespace_cluster():
    from apiobjects import node_obj, pod_obj
    return [node_obj("n1", zone="a", cpu="1"),
            pod_obj("batch-1", node="n1", namespace="other", cpu="900m"),
            pod_obj("web-1", namespace="default", cpu="500m")]


def _live_config(api, tmp_path):
    return write_kubeconfig(str(tmp_path / "config"), {"fake": api.url}, {"alice": token_user("tok")},
                            {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")


def test_live_path_sees_other_namespaces_pods_on_the_nodes(capsys, tmp_path, env):
    """Only spread counting is namespaced: a pod of another namespace still uses the node's cpu."""
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*_cross_namespace_cluster())
        code, out, err = run(capsys, "why-pending", "pod/web-1", "--kubeconfig", _live_config(api, tmp_path),
                             "-o", "json")
        assert any(r.path == "/api/v1/pods" for r in api.logged("GET"))
    assert (code, err) == (0, "")
    pod = json.loads(out)["pods"][0]
    assert pod["namespace"] == "default"
    assert pod["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_live_path_falls_back_to_the_namespace_when_rbac_stops_there(capsys, tmp_path, env):
    with FakeApiServer(user_for_token={"tok": "alice"}) as api:
        api.add(*_cross_namespace_cluster())
        api.fail("/api/v1/pods", 403, times=None)
        code, out, err = run(capsys, "why-pending", "pod/web-1", "--kubeconfig", _live_config(api, tmp_path),
                             "-o", "json")
    assert code == 0
    assert err.startswith("warning: read namespace default only") and err.count("\n") == 1
    # without the other namespace's pod the node looks free: the warning says verdicts may be optimistic
    assert json.loads(out)["pods"][0]["schedulable"] is True


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_structured_output_is_written_pod_by_pod_as_the_whole_document(capsys, fmt):
    """-o json|yaml writes each pod's view as it makes it (structured.pieces): the same bytes as
    the whole document dumped at once. On the demo two pods' suggestions name the same template's
    requests, which YAML wrote as an anchor in one pod and an alias in the other while the
    details shared the object; a document written pod by pod cannot, so details are copies."""
    from kubectl_tspread.cli.pending import select_pods
    from kubectl_tspread.engine.index import ClusterIndex
    from kubectl_tspread.views.pending import explain_pods
    from kubectl_tspread.render import structured
    from kubectl_tspread.render.pending import pending_view
    from kubectl_tspread.snapshot.demo import load_demo

    code, out, err = run(capsys, "why-pending", "--demo", "-A", "-o", fmt)
    index = ClusterIndex(load_demo(all_namespaces=True))
    reports = explain_pods(index, select_pods(index, None, None, None), with_fixes=True, namespace=None)
    doc = pending_view(reports)
    assert isinstance(doc["pods"], structured.Stream) and len(list(doc["pods"])) >= 2
    assert (code, err) == (0, "")
    assert out == structured.dump(doc, fmt)
    if fmt == "yaml":
        assert "&id" not in out
