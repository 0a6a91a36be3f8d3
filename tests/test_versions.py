"""The scheduler rules that differ between supported minors (engine/versions.py), and how a
command learns the cluster's minor: /version on the live path, --kube-version anywhere.

Each rule is also checked against the real scheduler of 1.33 and 1.37 by
tests/test_conformance.py; these tests pin the plumbing and the exact strings."""

from __future__ import annotations

import json

import pytest

from apiobjects import as_list, node_obj, pod_obj
from conftest import make_node, make_pod, make_snapshot
from fakeapi import FakeApiServer, token_user, write_kubeconfig
from kubectl_tspread.cli import main
from kubectl_tspread.engine import filters, versions
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.views.pending import explain_pending

UU = "UnschedulableAndUnresolvable"


@pytest.mark.parametrize("text, minor, clamped", [
    ("1.33", 33, ""), ("v1.34.2", 34, ""), ("v1.35.0-eks-4096722", 35, ""), ("1.36+", 36, ""),
    ("v1.37.2", 37, ""), ("", 37, ""), ("v1.31.4", 33, "1.31"), ("1.40", 37, "1.40"),
])
def test_version_strings_pick_a_supported_minor(text, minor, clamped):
    rules = versions.rules_for(text)
    assert (rules.minor, rules.clamped) == (minor, clamped)


def test_unsupported_minor_is_said():
    assert versions.clamp_warning(versions.rules_for("v1.37.0")) is None
    assert versions.clamp_warning(versions.rules_for("v1.31.4")) == (
        "Kubernetes 1.31 is older than the oldest supported minor 1.33; answers follow the 1.33 scheduler "
        "(supported: 1.33 to 1.37)")


@pytest.mark.parametrize("text", ["latest", "1", "one.two", "v1.", "1." + "9" * 5000, "\x00v1.37"])
def test_a_version_that_is_not_one_is_refused(text):
    with pytest.raises(versions.UnknownVersion):
        versions.parse(text)


def _verdict(minor: str, node, pod):
    index = ClusterIndex(make_snapshot([node], kube_version=minor))
    return filters.evaluate(index, pod)[0]


@pytest.mark.parametrize("minor, reason", [
    ("1.33", "node(s) had untolerated taint {dedicated: gpu}"),
    ("1.34", "node(s) had untolerated taint(s)"),
    ("1.37", "node(s) had untolerated taint(s)"),
])
def test_taint_reason_by_minor(minor, reason):
    node = make_node("n", taints=["other=x:PreferNoSchedule", "dedicated=gpu:NoSchedule", "b=c:NoExecute"])
    v = _verdict(minor, node, make_pod("p"))
    assert [(f.plugin, f.status, f.reason) for f in v.failures] == [("TaintToleration", UU, reason)]


@pytest.mark.parametrize("minor, status", [("1.33", "Unschedulable"), ("1.34", UU), ("1.37", UU)])
def test_request_above_allocatable_is_unresolvable_from_134(minor, status):
    node = make_node("n", allocatable={"cpu": 1000, "memory": 1 << 30, "pods": 110})
    v = _verdict(minor, node, make_pod("p", requests={"cpu": 2000}))
    assert [(f.reason, f.status) for f in v.failures] == [("Insufficient cpu", status)]


@pytest.mark.parametrize("minor, first", [("1.36", "NodeUnschedulable"), ("1.37", "NodeName")])
def test_node_name_runs_first_from_137(minor, first):
    node = make_node("n", unschedulable=True)
    v = _verdict(minor, node, make_pod("p", node="elsewhere"))
    assert v.first.plugin == first


@pytest.mark.parametrize("minor, tail", [
    ("1.33", " preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ("1.34", " no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not "
             "helpful for scheduling."),
    ("1.36", " no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not "
             "helpful for scheduling."),
    ("1.37", " preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
])
def test_message_has_the_dra_part_on_134_to_136(minor, tail):
    node = make_node("n", unschedulable=True)
    index = ClusterIndex(make_snapshot([node], kube_version=minor))
    report = explain_pending(index, make_pod("p"), with_fixes=False)
    assert report.message == "0/1 nodes are available: 1 node(s) were unschedulable." + tail


def _cluster_objects():
    return [node_obj("a0", zone="a", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
            pod_obj("web-new", labels={"app": "web"})]


def _message(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["why-pending", "pod/web-new", "-o", "json", *args])
    out, err = capsys.readouterr()
    return exc.value.code, (json.loads(out)["pods"][0]["message"] if out else ""), err


def test_dump_follows_kube_version_flag(capsys, tmp_path):
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(as_list(_cluster_objects())))
    code, msg, err = _message(capsys, "--from-file", str(dump))
    assert (code, err) == (0, "") and msg.startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")
    with pytest.raises(SystemExit):
        main(["why-pending", "pod/web-new", "-o", "json", "--from-file", str(dump), "--kube-version", "v1.33.2"])
    assert json.loads(capsys.readouterr().out)["schedulerVersion"] == "1.33"
    code, msg, err = _message(capsys, "--from-file", str(dump), "--kube-version", "1.33")
    assert (code, err) == (0, "")
    assert msg == ("0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 "
                   "nodes are available: 1 Preemption is not helpful for scheduling.")
    code, _, err = _message(capsys, "--from-file", str(dump), "--kube-version", "1.30")
    assert code == 0 and err == ("warning: Kubernetes 1.30 is older than the oldest supported minor 1.33; answers "
                                 "follow the 1.33 scheduler (supported: 1.33 to 1.37)\n")


def test_bad_kube_version_is_a_usage_error(capsys, tmp_path):
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(as_list(_cluster_objects())))
    code, out, err = _message(capsys, "--from-file", str(dump), "--kube-version", "latest")
    assert code == 2 and out == ""
    assert err.startswith("error: --kube-version: 'latest' is not a Kubernetes version") and err.count("\n") == 1


def test_live_cluster_version_comes_from_the_server(capsys, tmp_path, env):
    with FakeApiServer(user_for_token={"tok": "alice"}) as server:
        server.add(*_cluster_objects())
        server.git_version = "v1.33.9"
        kubeconfig = write_kubeconfig(str(tmp_path / "config"), {"fake": server.url}, {"alice": token_user("tok")},
                                      {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")
        code, msg, err = _message(capsys, "--kubeconfig", str(kubeconfig))
        assert (code, err) == (0, "")
        assert msg.startswith("0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}.")
        assert "no new claims" not in msg
        # the flag wins over the server's answer
        code, msg, err = _message(capsys, "--kubeconfig", str(kubeconfig), "--kube-version", "1.36")
        assert (code, err) == (0, "") and "no new claims to deallocate" in msg


@pytest.mark.parametrize("minor, tail", [
    ("1.33", " preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
    # DynamicResources' PreFilter never ran, so its PostFilter fails reading its state and the
    # framework stops at that error (as kube-scheduler 1.37 writes it: tests/test_conformance.py)
    ("1.34", " not found"),
    ("1.37", " not found"),
])
def test_a_prefilter_rejection_ends_in_the_dra_state_error_from_134(minor, tail):
    from kubectl_tspread.model import PersistentVolumeClaim, Volume

    pod = make_pod("p", volumes=(Volume("v", pvc="data"),))
    index = ClusterIndex(make_snapshot([make_node("a"), make_node("b")], [pod], kube_version=minor,
                                       pvcs=(PersistentVolumeClaim("default", "other"),)))
    report = explain_pending(index, pod, with_fixes=False)
    assert report.message == '0/2 nodes are available: persistentvolumeclaim "data" not found.' + tail
