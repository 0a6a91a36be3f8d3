"""Builders for model records, shared by every test module.

They build `kubectl_tspread.model` records directly (no raw API dicts), with the
field defaults the decoder would apply. Keep them additive: other engineers' tests
call them by keyword.

    node = make_node("n1", zone="a")                      # labels zone=a, hostname=n1
    pod = make_pod("web-1", node="n1", labels={"app": "web"},
                   spread=[make_constraint(max_skew=1)])
    snap = make_snapshot([node], [pod])
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import pytest

from kubectl_tspread.model.labels import Selector
from kubectl_tspread.model import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME_KEY,
    IGNORE,
    NO_SCHEDULE,
    Node,
    ZONE_KEY,
    OwnerRef,
    Pod,
    Service,
    Snapshot,
    SpreadConstraint,
    Taint,
    Workload,
)

GI = 1024**3
DEFAULT_ALLOCATABLE = {"cpu": 4000, "memory": 16 * GI, "pods": 110}

# sentinel so that `selector=None` can mean the nil selector
_WEB = object()


def _taint(t: Taint | str) -> Taint:
    """A Taint, or the kubectl shorthand 'key=value:Effect' / 'key:Effect' / 'key'."""
    if isinstance(t, Taint):
        return t
    body, _, effect = t.partition(":")
    key, _, value = body.partition("=")
    return Taint(key, value, effect or NO_SCHEDULE)


def make_node(name: str, zone: str | None = None, hostname: str | None = None,
              labels: Mapping[str, str] | None = None, taints: Iterable[Taint | str] = (),
              unschedulable: bool = False, allocatable: Mapping[str, int] | None = None,
              cordon_taint: bool = True, **kw: Any) -> Node:
    """A Node labelled with kubernetes.io/hostname (default: its name) and, if given, the zone.

    `labels` are applied last, so `labels={ZONE_KEY: ...}` overrides `zone`. Pass
    `hostname=""` to build a node without the hostname label. `unschedulable=True` is a cordon
    as a live cluster holds it, with the node controller's NoSchedule taint; add
    `cordon_taint=False` for the moment before the controller adds it (the scheduler reads
    only spec.taints, so the two differ in TaintToleration and nodeTaintsPolicy Honor).
    """
    lab: dict[str, str] = {}
    host = name if hostname is None else hostname
    if host:
        lab[HOSTNAME_KEY] = host
    if zone is not None:
        lab[ZONE_KEY] = zone
    lab.update(labels or {})
    node = Node(
        name=name,
        labels=lab,
        taints=tuple(_taint(t) for t in taints),
        unschedulable=unschedulable,
        allocatable=dict(DEFAULT_ALLOCATABLE if allocatable is None else allocatable),
        **kw,
    )
    return node.cordoned() if unschedulable and cordon_taint else node


def _owner(owner: OwnerRef | Workload | str | None, namespace: str) -> OwnerRef | None:
    """OwnerRef as is; a Workload -> its controller reference; 'Kind/name' -> a ref with uid 'Kind/ns/name'."""
    if owner is None or isinstance(owner, OwnerRef):
        return owner
    if isinstance(owner, Workload):
        return OwnerRef(owner.kind, owner.name, owner.uid)
    kind, _, name = owner.partition("/")
    return OwnerRef(kind, name, f"{kind}/{namespace}/{name}")


def make_pod(name: str, node: str | None = None, labels: Mapping[str, str] | None = None,
             namespace: str = "default", spread: Iterable[SpreadConstraint] = (),
             phase: str | None = None, terminating: bool = False,
             owner: OwnerRef | Workload | str | None = None,
             requests: Mapping[str, int] | None = None, created: str | None = None,
             **kw: Any) -> Pod:
    """A Pod bound to `node` (phase Running) or unbound (phase Pending).

    `owner` accepts an OwnerRef, a Workload (its uid is used) or 'Kind/name'.
    Any other Pod field can be passed by keyword (tolerations=, node_selector=, ...).
    """
    kw.setdefault("uid", f"uid-{namespace}-{name}")
    return Pod(
        namespace=namespace,
        name=name,
        labels=dict(labels or {}),
        node_name=node or "",
        phase=phase if phase is not None else ("Running" if node else "Pending"),
        terminating=terminating,
        owner=_owner(owner, namespace),
        spread=tuple(spread),
        requests=dict(requests or {}),
        created=created or "",
        **kw,
    )


def make_constraint(key: str = ZONE_KEY, max_skew: int = 1, mode: str = DO_NOT_SCHEDULE,
                    selector: Mapping[str, str] | Selector | None | object = _WEB,
                    min_domains: int = 1, node_affinity_policy: str = HONOR,
                    node_taints_policy: str = IGNORE, match_label_keys: Iterable[str] = (),
                    implicit: bool = False) -> SpreadConstraint:
    """A SpreadConstraint; `selector` dict = matchLabels, None = nil selector, a Selector passes
    through; the default is matchLabels {app: web}."""
    if selector is _WEB:
        sel = Selector.from_api({"matchLabels": {"app": "web"}})
    elif selector is None:
        sel = Selector.nothing()
    elif isinstance(selector, Selector):
        sel = selector
    else:
        sel = Selector.from_api({"matchLabels": dict(selector)})  # type: ignore[arg-type]
    return SpreadConstraint(
        max_skew=max_skew,
        topology_key=key,
        when_unsatisfiable=mode,
        selector=sel,
        min_domains=min_domains,
        node_affinity_policy=node_affinity_policy,
        node_taints_policy=node_taints_policy,
        match_label_keys=tuple(match_label_keys),
        implicit=implicit,
    )


def make_workload(kind: str, name: str, selector: Mapping[str, str] | Selector | None = None,
                  namespace: str = "default", uid: str | None = None, **kw: Any) -> Workload:
    """A Workload; a dict selector is matchLabels. The default uid matches make_pod(owner='Kind/name')."""
    if isinstance(selector, Selector):
        sel = selector
    elif selector is None:
        sel = Selector.nothing()
    else:
        sel = Selector.from_api({"matchLabels": dict(selector)})
    return Workload(kind=kind, namespace=namespace, name=name,
                    uid=f"{kind}/{namespace}/{name}" if uid is None else uid, selector=sel, **kw)


def make_service(name: str, selector: Mapping[str, str] | None = None,
                 namespace: str = "default") -> Service:
    return Service(namespace=namespace, name=name, selector=dict(selector or {}))


def make_snapshot(nodes: Iterable, pods: Iterable = (), **kw: Any) -> Snapshot:
    """A Snapshot; list arguments (workloads=[...], services=[...]) become tuples."""
    fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    return Snapshot(nodes=tuple(nodes), pods=tuple(pods), **fixed)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A clean kube environment: no KUBECONFIG, HOME without ~/.kube, not inside a pod; returns tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


# what the environment says of proxies (Go's ProxyFromEnvironment, and httpoxy's REQUEST_METHOD)
PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY",
              "all_proxy", "REQUEST_METHOD")


@pytest.fixture
def proxyless(monkeypatch, env):
    """env, with no proxy in the environment either; returns tmp_path."""
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    return env


@pytest.fixture
def forks():
    """forking.Counting: the cli's forked workers, for plan_drain(..., workers=forks); the
    children started in forks.started."""
    import forking
    return forking.forks()


@pytest.fixture
def results(monkeypatch):
    """forking.results: (child, verdict) of every Child.result() read."""
    import forking
    return forking.results(monkeypatch)


# the session's real control plane for the end-to-end tests (tests/controlplane.py)
from controlplane import control_plane, namespace, pytest_configure, pytest_terminal_summary  # noqa: E402,F401
