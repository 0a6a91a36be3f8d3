"""A real Kubernetes control plane on 127.0.0.1 for the end-to-end tests.

`scripts/controlplane-build` builds conformance/cluster (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and a kubelet stand-in in one Go program; cached
outside the clone); the `control_plane` fixture starts it once per test session in a temp
dir, waits for its ready line, and stops it at the end. Tests use it through the real
`kubernetes` client and the tool's own CLI with `--kubeconfig`.

Without Go the tests that need it skip with one line; with CI=true or TSPREAD_REQUIRE_GO=1
a missing Go fails them instead, so CI always runs them. TSPREAD_CLUSTER_BIN=PATH uses a
binary built elsewhere; TSPREAD_KUBECONFIG=PATH uses a control plane already running (as
`scripts/e2e` starts it), and the fixture then neither builds nor stops anything.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "scripts" / "controlplane-build"
NODES = 12
ZONES = ("zone-a", "zone-b", "zone-c")
BUILD_TIMEOUT = float(os.environ.get("TSPREAD_BUILD_TIMEOUT", 3 * 3600))  # a cold build on 2 busy cores
READY_TIMEOUT = 180.0


def go_required() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("TSPREAD_REQUIRE_GO") == "1"


class GoMissing(Exception):
    pass


def build_binary(show_progress: bool = False) -> str:
    """The tspread-cluster binary's path (built or taken from the cache); GoMissing without Go."""
    given = os.environ.get("TSPREAD_CLUSTER_BIN")
    if given:
        return given
    proc = subprocess.run(["bash", str(BUILD)], stdout=subprocess.PIPE,
                          stderr=None if show_progress else subprocess.PIPE, text=True, timeout=BUILD_TIMEOUT)
    if proc.returncode == 3:
        raise GoMissing("go not found on PATH")
    if proc.returncode != 0:
        tail = (proc.stderr or "")[-4000:]
        raise RuntimeError(f"scripts/controlplane-build failed (exit {proc.returncode}):\n{tail}")
    return proc.stdout.strip().splitlines()[-1]


@dataclass
class ControlPlane:
    """A running tspread-cluster: where its kubeconfig is, and clients made from it."""

    kubeconfig: str
    server: str
    version: str
    data_dir: str
    process: subprocess.Popen | None = None
    log_path: str | None = None
    etcd: str = ""  # the embedded etcd's client URL (empty when attached to one started elsewhere)
    _api: Any = field(default=None, repr=False)

    # ---- clients ---------------------------------------------------------------------------

    @property
    def api(self):
        """A kubernetes.client.ApiClient as the cluster's admin (system:masters)."""
        if self._api is None:
            from kubernetes import config

            self._api = config.new_client_from_config(config_file=self.kubeconfig)
        return self._api

    def core(self):
        from kubernetes import client

        return client.CoreV1Api(self.api)

    def apps(self):
        from kubernetes import client

        return client.AppsV1Api(self.api)

    def api_policy(self):
        from kubernetes import client

        return client.PolicyV1Api(self.api)

    def create(self, *objects: dict, namespace: str | None = None) -> None:
        """Create API objects given as dicts (any kind kubernetes.utils knows)."""
        from kubernetes import utils

        for obj in objects:
            utils.create_from_dict(self.api, obj, namespace=namespace or obj.get("metadata", {}).get("namespace"))

    def namespace(self, prefix: str = "e2e") -> str:
        """A fresh namespace (deleted by nobody: each test's names are its own)."""
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name

    def delete_namespace(self, name: str, timeout: float = 120.0) -> None:
        """Delete a namespace and wait until it is gone: pods still terminating in it would be
        drained by the next test (and an eviction there is refused with a 403 of its own)."""
        from kubernetes.client.exceptions import ApiException

        def gone() -> bool:
            try:
                self.core().read_namespace(name)
            except ApiException as e:
                if e.status == 404:
                    return True
                raise
            return False

        try:
            self.core().delete_namespace(name)
        except ApiException as e:
            if e.status != 404:
                raise
        self.wait(f"namespace {name} deleted", gone, timeout=timeout, interval=0.5)

    def pods(self, namespace: str, selector: str = "") -> list:
        return self.core().list_namespaced_pod(namespace, label_selector=selector).items

    def wait(self, what: str, check: Callable[[], Any], timeout: float = 120.0, interval: float = 0.25) -> Any:
        """Poll `check` until it returns something truthy; fail the test naming `what` otherwise."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = check()
            if last:
                return last
            time.sleep(interval)
        pytest.fail(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode("utf-8", "replace")

    # ---- life --------------------------------------------------------------------------------

    def stop(self, timeout: float = 30.0) -> None:
        proc = self.process
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def start(binary: str, data_dir: str, nodes: int = NODES, zones: Iterable[str] = ZONES,
          extra: Iterable[str] = (), timeout: float = READY_TIMEOUT) -> ControlPlane:
    """Start tspread-cluster in `data_dir` and return once its ready line is read. It picks
    free ports before its components listen on them, so another process can take one in
    between ("address already in use"): a start that fails so is tried once more, afresh."""
    try:
        return _start(binary, data_dir, nodes, zones, extra, timeout)
    except RuntimeError as e:
        if "address already in use" not in str(e):
            raise
        shutil.rmtree(data_dir, ignore_errors=True)
        return _start(binary, data_dir, nodes, zones, extra, timeout)


def _start(binary: str, data_dir: str, nodes: int, zones: Iterable[str], extra: Iterable[str],
           timeout: float) -> ControlPlane:
    os.makedirs(data_dir, exist_ok=True)
    log_path = os.path.join(data_dir, "cluster.log")
    args = [binary, f"--data-dir={data_dir}", f"--nodes={nodes}", f"--zones={','.join(zones)}",
            f"--ready-timeout={int(timeout)}s", "--exit-with-parent", *extra]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout + 10)
    if not line or not line[0].strip():
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        with open(log_path, "rb") as f:
            tail = b"".join(f.readlines()[-30:]).decode("utf-8", "replace")
        raise RuntimeError(f"tspread-cluster did not become ready (exit {proc.returncode}); log {log_path}:\n{tail}")
    ready = json.loads(line[0])
    return ControlPlane(ready["kubeconfig"], ready["server"], ready["version"], data_dir, proc, log_path,
                        etcd=ready.get("etcd", ""))


def attach(kubeconfig: str) -> ControlPlane:
    """A control plane someone else started (scripts/e2e): its kubeconfig, server and version."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    version = client.VersionApi(api).get_code().git_version
    return ControlPlane(kubeconfig, api.configuration.host, version, os.path.dirname(kubeconfig), _api=api)


# lines for the end of the test run (placement agreement, timings): pytest_terminal_summary
NOTES: list[str] = []


def pytest_terminal_summary(terminalreporter) -> None:
    if NOTES:
        terminalreporter.section("end-to-end notes")
        for line in NOTES:
            terminalreporter.write_line(line)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "e2e: runs against the real control plane of tests/controlplane.py "
                            "(skips without Go; fails without it under CI=true or TSPREAD_REQUIRE_GO=1)")


@pytest.fixture
def namespace(control_plane, request) -> str:
    """A fresh namespace named after the test, deleted (with everything in it) afterwards."""
    prefix = request.node.name.removeprefix("test_")[:40].rstrip("_-").replace("_", "-")
    name = control_plane.namespace(prefix)
    yield name
    control_plane.delete_namespace(name)


def binary_or_skip() -> str:
    """build_binary() for a fixture: without Go the test skips with one line, or fails when Go
    is required (CI)."""
    try:
        return build_binary()
    except GoMissing as e:
        if go_required():
            pytest.fail(f"{e}: the end-to-end tests need Go 1.26+ to build their control plane, and CI=true or "
                        "TSPREAD_REQUIRE_GO=1 makes them required", pytrace=False)
        pytest.skip(f"{e}: the end-to-end tests need Go 1.26+ to build their Kubernetes control plane")


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory) -> ControlPlane:
    """The session's control plane: 12 Ready nodes in zones zone-a, zone-b, zone-c (4 cpu,
    16Gi, 110 pods each), named node-01 … node-12 round-robin over the zones."""
    given = os.environ.get("TSPREAD_KUBECONFIG")
    if given:
        yield attach(given)
        return
    cp = start(binary_or_skip(), str(tmp_path_factory.mktemp("cluster")))
    try:
        yield cp
    finally:
        cp.stop()


# ---- running the tool and building objects -----------------------------------------------

def tspread(cp: ControlPlane, *args: str) -> tuple[int, str, str]:
    """Run `kubectl tspread ARGS --kubeconfig …` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from kubectl_tspread.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([*args, "--kubeconfig", cp.kubeconfig, "--color", "never"])
        except SystemExit as e:
            code = e.code
    return (0 if code is None else code), out.getvalue(), err.getvalue()


def tspread_json(cp: ControlPlane, *args: str, codes: tuple[int, ...] = (0,)) -> dict:
    code, out, err = tspread(cp, *args, "-o", "json")
    assert code in codes, f"exit {code}: {err}"
    return json.loads(out)


def container(cpu: str = "100m", memory: str = "64Mi") -> dict:
    return {"name": "app", "image": "registry.invalid/app:1",
            "resources": {"requests": {"cpu": cpu, "memory": memory}}}


def zone_spread(labels: dict, max_skew: int = 1, key: str = "topology.kubernetes.io/zone",
                when: str = "DoNotSchedule", **extra: Any) -> dict:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": dict(labels)}, **extra}


def pod_template(labels: dict, spread: Iterable[dict] = (), cpu: str = "100m", **spec: Any) -> dict:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [container(cpu)], "topologySpreadConstraints": list(spread),
                     "terminationGracePeriodSeconds": 1, **spec}}


def deployment(name: str, replicas: int, spread: Iterable[dict] = (), cpu: str = "100m", **spec: Any) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": pod_template(labels, spread, cpu, **spec)}}


def statefulset(name: str, replicas: int, spread: Iterable[dict] = (), cpu: str = "100m") -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": labels}, "template": pod_template(labels, spread, cpu)}}


def pdb(name: str, app: str, max_unavailable: int = 1) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": app}}}}


def bare_pod(name: str, labels: dict | None = None, spread: Iterable[dict] = (), cpu: str = "100m",
             **spec: Any) -> dict:
    tmpl = pod_template(labels or {"app": name}, spread, cpu, **spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **tmpl["metadata"]}, "spec": tmpl["spec"]}


def ready_count(pods: list) -> int:
    return sum(1 for p in pods if p.metadata.deletion_timestamp is None and p.status.phase == "Running"
               and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or ()))


def scheduled_condition(pod) -> Any:
    for c in pod.status.conditions or ():
        if c.type == "PodScheduled":
            return c
    return None


def cordon(cp: ControlPlane, *nodes: str, on: bool = True) -> None:
    for n in nodes:
        cp.core().patch_node(n, {"spec": {"unschedulable": on or None}})


def nodes_in(cp: ControlPlane, zone: str) -> list[str]:
    nodes = cp.core().list_node(label_selector=f"topology.kubernetes.io/zone={zone}").items
    return sorted(n.metadata.name for n in nodes)


# ---- scripts/e2e ------------------------------------------------------------------------------

def e2e_main(args: list[str]) -> int:
    """Build, start, run pytest on tests/test_e2e_*.py with ARGS, stop: pytest's exit code."""
    tests = sorted(str(p) for p in (REPO / "tests").glob("test_e2e_*.py"))
    pytest_cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsx", *tests, *args]
    t0 = time.monotonic()
    try:
        binary = build_binary(show_progress=True)
    except GoMissing:
        return subprocess.call(pytest_cmd, cwd=REPO)  # the fixture says it in one line: skip, or fail under CI
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    built = time.monotonic()
    work = tempfile.mkdtemp(prefix="tspread-e2e-")
    try:
        cp = start(binary, os.path.join(work, "cluster"))
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    started = time.monotonic()
    print(f"e2e: Kubernetes {cp.version} at {cp.server} (binary ready in {built - t0:.0f}s, control plane in "
          f"{started - built:.1f}s)", file=sys.stderr)
    rc = 1
    try:
        rc = subprocess.call(pytest_cmd, cwd=REPO, env=dict(os.environ, TSPREAD_KUBECONFIG=cp.kubeconfig))
    finally:
        cp.stop()
        if rc != 0 or os.environ.get("TSPREAD_KEEP") == "1":
            print(f"e2e: the control plane's log is {cp.log_path}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"e2e: pytest exit {rc}; tests {time.monotonic() - started:.0f}s, whole run {time.monotonic() - t0:.0f}s",
          file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(e2e_main(sys.argv[1:]))
