"""kubectl drain's pod rules (k8s.io/kubectl/pkg/drain/filters.go): which pods are evicted,
skipped or refused, with kubectl's messages and precedence."""

from __future__ import annotations

import pytest

from conftest import make_pod
from kubectl_tspread.views.drain.pods import (
    ALREADY_EVICTED, DAEMONSET_FATAL, DAEMONSET_POD, EVICT, LOCAL_STORAGE, LOCAL_STORAGE_FATAL, MIRROR_POD, REFUSE,
    SKIP, UNMANAGED_FATAL, UNMANAGED_POD, DrainFlags, classify, classify_all, kubectl_errors, kubectl_warnings,
)
from kubectl_tspread.model import Volume

EMPTY_DIR = (Volume("scratch", empty_dir=True),)
NO_FLAGS = DrainFlags()
ALL_FLAGS = DrainFlags(ignore_daemonsets=True, force=True, delete_emptydir_data=True)

CASES = [
    # id, pod kwargs, flags, action, code, message, replaced
    ("ReplicaSet pod is evicted and replaced", dict(owner="ReplicaSet/web-1"), NO_FLAGS, EVICT, None, "", True),
    ("StatefulSet pod is evicted and replaced", dict(owner="StatefulSet/db"), NO_FLAGS, EVICT, None, "", True),
    ("DaemonSet pod without --ignore-daemonsets is refused", dict(owner="DaemonSet/ds"), NO_FLAGS, REFUSE,
     DAEMONSET_POD, DAEMONSET_FATAL, False),
    ("DaemonSet pod with --ignore-daemonsets stays", dict(owner="DaemonSet/ds"), ALL_FLAGS, SKIP, DAEMONSET_POD,
     "ignoring DaemonSet-managed Pods", False),
    ("mirror pod is skipped without any flag", dict(owner="Node/n1", mirror=True), NO_FLAGS, SKIP, MIRROR_POD,
     None, False),
    ("bare pod without --force is refused", dict(), NO_FLAGS, REFUSE, UNMANAGED_POD, UNMANAGED_FATAL, False),
    ("bare pod with --force is evicted, not replaced", dict(), DrainFlags(force=True), EVICT, UNMANAGED_POD,
     "deleting Pods that declare no controller", False),
    ("emptyDir pod without --delete-emptydir-data is refused", dict(owner="ReplicaSet/web-1", volumes=EMPTY_DIR),
     NO_FLAGS, REFUSE, LOCAL_STORAGE, LOCAL_STORAGE_FATAL, False),
    ("emptyDir pod with the flag is evicted and replaced", dict(owner="ReplicaSet/web-1", volumes=EMPTY_DIR),
     DrainFlags(delete_emptydir_data=True), EVICT, LOCAL_STORAGE, "deleting Pods with local storage", True),
    ("bare emptyDir pod: local storage is checked before the controller", dict(volumes=EMPTY_DIR), NO_FLAGS,
     REFUSE, LOCAL_STORAGE, LOCAL_STORAGE_FATAL, False),
    ("bare emptyDir pod with only --delete-emptydir-data still needs --force", dict(volumes=EMPTY_DIR),
     DrainFlags(delete_emptydir_data=True), REFUSE, UNMANAGED_POD, UNMANAGED_FATAL, False),
    ("DaemonSet pod with emptyDir: the DaemonSet rule wins", dict(owner="DaemonSet/ds", volumes=EMPTY_DIR), NO_FLAGS,
     REFUSE, DAEMONSET_POD, DAEMONSET_FATAL, False),
    ("terminating pod is an eviction of an earlier run", dict(owner="ReplicaSet/web-1", terminating=True), NO_FLAGS,
     ALREADY_EVICTED, "Terminating", None, True),
]


@pytest.mark.parametrize("kw,flags,action,code,message,replaced", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classify(kw, flags, action, code, message, replaced):
    d = classify(make_pod("p", node="n1", **kw), flags)
    assert d is not None
    assert (d.action, d.code, d.replaced) == (action, code, replaced)
    if message is not None:
        assert d.message == message


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_finished_pods_are_left_out(phase):
    for kw in (dict(), dict(owner="DaemonSet/ds"), dict(volumes=EMPTY_DIR)):
        assert classify(make_pod("done", node="n1", phase=phase, **kw), NO_FLAGS) is None


def test_kubectl_errors_group_pods_per_message_like_kubectl():
    pods = [make_pod("a", node="n1"), make_pod("b", node="n1"), make_pod("ds", node="n1", owner="DaemonSet/x",
                                                                         namespace="kube-system"),
            make_pod("web", node="n1", owner="ReplicaSet/web-1")]
    errs = kubectl_errors(classify_all(pods, NO_FLAGS))
    assert errs == [
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/ds",
        "cannot delete Pods that declare no controller (use --force to override): default/a, default/b",
    ]


def test_kubectl_warnings_name_the_pods_evicted_or_left_by_flags():
    pods = [make_pod("a", node="n1"), make_pod("ds", node="n1", owner="DaemonSet/x")]
    warns = kubectl_warnings(classify_all(pods, ALL_FLAGS))
    assert warns == ["deleting Pods that declare no controller: default/a",
                     "ignoring DaemonSet-managed Pods: default/ds"]
