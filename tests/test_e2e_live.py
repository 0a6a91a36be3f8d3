"""The live read path against a real API server (tests/controlplane.py): paging past one
page, the server-side field selector and label selectors, and `--as` impersonation with
deploy/rbac's ClusterRoles, which must suffice for every command, while a narrower role gets
the one-line 403 naming the verb, the resource and the namespace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controlplane import (ControlPlane, bare_pod, deployment, ready_count, tspread, tspread_json)
from kubectl_tspread.snapshot.live import PAGE_SIZE, KubeOptions, LiveCluster, connect

pytestmark = pytest.mark.e2e

RBAC = Path(__file__).resolve().parent.parent / "deploy" / "rbac"
BULK = PAGE_SIZE + 37  # more pods than one page holds


def live(cp: ControlPlane, namespace: str, page_size: int | None = None, **opts) -> LiveCluster:
    cluster = connect(KubeOptions(kubeconfig=cp.kubeconfig, namespace=namespace, **opts))
    if page_size:
        cluster.page_size = page_size
    return cluster


@pytest.fixture(scope="module")
def bulk(control_plane, tmp_path_factory):
    """A namespace with BULK Running pods of one Deployment, one pod of another app, and one
    finished pod (phase Succeeded), which the tool's field selector leaves out."""
    cp = control_plane
    ns = cp.namespace("live-bulk")
    cp.create(deployment("bulk", BULK, cpu="1m"), deployment("other", 1, cpu="1m"), namespace=ns)
    cp.create(bare_pod("finished", cpu="1m"), namespace=ns)
    cp.wait("the finished pod Running", lambda: ready_count(cp.pods(ns, "app=finished")) == 1)
    cp.core().patch_namespaced_pod_status("finished", ns, {"status": {"phase": "Succeeded"}})
    cp.wait(f"{BULK} bulk pods Ready", lambda: ready_count(cp.pods(ns, "app=bulk")) == BULK, timeout=240, interval=1)
    cp.wait("the other pod Ready", lambda: ready_count(cp.pods(ns, "app=other")) == 1)
    yield ns
    cp.delete_namespace(ns)


def test_pods_are_read_past_the_first_page_by_the_tools_own_page_size(control_plane, bulk):
    cp = control_plane
    want = {p.metadata.name for p in cp.pods(bulk) if p.status.phase != "Succeeded"}
    assert len(want) == BULK + 1
    got = [p.name for p in live(cp, bulk).list("Pod")]
    assert len(got) == len(set(got)) and set(got) == want


def test_small_pages_give_the_same_pods_in_the_same_order(control_plane, bulk):
    cp = control_plane
    whole = [p.name for p in live(cp, bulk).list("Pod")]
    assert [p.name for p in live(cp, bulk, page_size=7).list("Pod")] == whole


def test_the_finished_pod_is_left_out_by_the_servers_field_selector(control_plane, bulk):
    cp = control_plane
    assert "finished" in {p.metadata.name for p in cp.pods(bulk)}
    assert "finished" not in {p.name for p in live(cp, bulk).list("Pod")}
    running = [p.name for p in live(cp, bulk).list("Pod", field_selector="spec.nodeName=node-01")]
    assert running and all(p.spec.node_name == "node-01" for p in cp.pods(bulk) if p.metadata.name in running)


def test_a_label_selector_is_honoured_by_the_server_and_by_distribution(control_plane, bulk):
    cp = control_plane
    assert [p.name for p in live(cp, bulk).list("Pod", label_selector="app=other")] == \
        [p.metadata.name for p in cp.pods(bulk, "app=other")]
    code, out, err = tspread(cp, "distribution", "-n", bulk, "-l", "app=other", "--no-headers")
    assert code == 0, err
    assert "deployment/other" in out and "deployment/bulk" not in out


def test_distribution_counts_every_pod_of_a_workload_bigger_than_a_page(control_plane, bulk):
    [workload] = tspread_json(control_plane, "distribution", "deploy/bulk", "-n", bulk)["workloads"][:1]
    assert workload["pods"] == BULK
    # the scheduler's implicit zone constraint (maxSkew 5): every pod counted in some zone
    zone = [c for c in workload["constraints"] if c["topologyKey"] == "topology.kubernetes.io/zone"]
    assert zone and sum(d["pods"] for d in zone[0]["domains"]) == BULK


# ---- RBAC -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rbac(control_plane):
    """deploy/rbac applied as it ships (groups tspread-readers and tspread-operators), plus a
    narrower role: the read-only ClusterRole bound in one namespace only, nodes cluster-wide."""
    from kubernetes import utils

    cp = control_plane
    for f in sorted(RBAC.glob("*.yaml")):
        try:
            utils.create_from_yaml(cp.api, str(f))
        except utils.FailToCreateError as e:
            if not all(getattr(x, "status", 0) == 409 for x in e.api_exceptions):
                raise
    narrow_ns = cp.namespace("rbac-narrow")
    cp.create(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "e2e-nodes-only"},
         "rules": [{"apiGroups": [""], "resources": ["nodes", "persistentvolumes"], "verbs": ["get", "list"]},
                   {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "e2e-narrow"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "e2e-nodes-only"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "e2e-narrow"}]},
    )
    cp.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "e2e-narrow-readonly", "namespace": narrow_ns},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tspread-readonly"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "e2e-narrow"}]},
              namespace=narrow_ns)
    # the API server's RBAC authorizer reads bindings through an informer: wait until it has them
    for user, group, verb, resource, ns in (("alice", "tspread-readers", "list", "pods", None),
                                            ("bob", "tspread-operators", "patch", "nodes", None),
                                            ("carol", "e2e-narrow", "list", "pods", narrow_ns)):
        cp.wait(f"RBAC allowing {user} to {verb} {resource}", lambda: allowed(cp, user, group, verb, resource, ns))
    return narrow_ns


def allowed(cp: ControlPlane, user: str, group: str, verb: str, resource: str, namespace: str | None) -> bool:
    from kubernetes import client

    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=user, groups=[group, "system:authenticated"],
        resource_attributes=client.V1ResourceAttributes(verb=verb, resource=resource, namespace=namespace)))
    return client.AuthorizationV1Api(cp.api).create_subject_access_review(review).status.allowed


READER = ("--as", "alice", "--as-group", "tspread-readers")
OPERATOR = ("--as", "bob", "--as-group", "tspread-operators")
NARROW = ("--as", "carol", "--as-group", "e2e-narrow")


def assert_no_rbac_error(code: int, err: str, codes=(0,)) -> None:
    assert code in codes and "forbidden" not in err.lower() and "RBAC" not in err, f"exit {code}: {err}"


@pytest.mark.parametrize("args", [
    ("distribution", "-A"),
    ("distribution", "deploy/bulk"),
    ("why-pending", "-A", "--no-fixes"),
    ("why-pending",),
    ("drain-safe", "node-01", "--ignore-daemonsets"),
], ids=lambda a: " ".join(a))
def test_the_readonly_role_suffices_for_every_read(control_plane, rbac, bulk, args):
    code, out, err = tspread(control_plane, *args, "-n", bulk, *READER)
    assert_no_rbac_error(code, err, codes=(0, 3))
    assert out


def test_the_drain_role_suffices_for_a_server_dry_run_of_execute(control_plane, rbac, bulk):
    code, out, err = tspread(control_plane, "drain-safe", "node-02", "--ignore-daemonsets", "--execute", "--yes",
                             "--dry-run=server", "-n", bulk, *OPERATOR)
    assert_no_rbac_error(code, err)
    assert control_plane.core().read_node("node-02").spec.unschedulable in (None, False)


def test_the_readonly_role_cannot_cordon_and_says_so_in_one_line(control_plane, rbac, bulk):
    code, out, err = tspread(control_plane, "drain-safe", "node-02", "--ignore-daemonsets", "--execute", "--yes",
                             "--dry-run=server", "-n", bulk, *READER)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "patch" in lines[0] and "nodes" in lines[0] and "tspread-drain" in lines[0]


def test_a_role_bound_in_one_namespace_gets_a_403_naming_verb_resource_and_namespace(control_plane, rbac, bulk):
    cp = control_plane
    code, out, err = tspread(cp, "distribution", "-n", rbac, *NARROW)
    assert_no_rbac_error(code, err)  # its own namespace: enough
    code, out, err = tspread(cp, "distribution", "-n", bulk, *NARROW)
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    pattern = rf'^error: cannot list (\S+) in namespace "{bulk}": your RBAC lacks list on \1; '
    assert re.match(pattern, lines[0]), lines[0]


def test_a_role_without_cluster_wide_pods_is_told_to_drop_all_namespaces(control_plane, rbac):
    code, out, err = tspread(control_plane, "distribution", "-A", *NARROW)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1, err
    assert re.match(r"^error: cannot list (\S+) in all namespaces: your RBAC lacks list on \1; .*drop -A", lines[0]), \
        lines[0]
