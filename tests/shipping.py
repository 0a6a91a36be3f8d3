"""Helpers for the tests of what ships (test_packaging, test_krew): clean environments,
interpreters, and a small live cluster served by tests/fakeapi.py."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from apiobjects import ZONE, node_obj, pod_obj, spread_obj, workload_obj
from fakeapi import FakeApiServer, token_user, write_kubeconfig

ROOT = Path(__file__).resolve().parent.parent
KUBECTL = shutil.which("kubectl") or ("/usr/bin/kubectl" if os.access("/usr/bin/kubectl", os.X_OK) else None)
NO_KUBECTL = "kubectl is not installed on this machine; the plugin-discovery check needs the real binary"
TOKEN = "t0k-shipping"


def clean_env(tmp: Path, path_dirs: list[str | Path], **extra: str) -> dict[str, str]:
    """An environment a new user might have: no venv, no kubeconfig, HOME of their own."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.pathsep.join(map(str, path_dirs)), "HOME": str(home), "LANG": "C.UTF-8",
           "KUBECONFIG": str(home / "no-such-kubeconfig"), "NO_COLOR": "1"}
    env.update(extra)
    return env


def run(cmd: list[str | Path], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def base_python() -> str:
    """The interpreter behind the test venv: same version, none of the venv's packages."""
    real = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(real)


def python_of_minor(minor: int) -> str | None:
    """A working python3.<minor>, from PATH or pyenv; None when this machine has none."""
    candidates = [shutil.which(f"python3.{minor}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3.{minor}")))
    candidates += [f"/usr/bin/python3.{minor}", f"/usr/local/bin/python3.{minor}"]
    for c in filter(None, candidates):
        try:
            out = subprocess.run([c, "-c", "import sys, ssl; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip() == f"3.{minor}":
            return c
    return None


def supported_minors() -> list[int]:
    """Python minor versions the package declares (setup.cfg classifiers)."""
    text = (ROOT / "setup.cfg").read_text()
    return sorted(int(m) for m in re.findall(r"Programming Language :: Python :: 3\.(\d+)", text))


@contextlib.contextmanager
def live_cluster(tmp: Path) -> Iterator[str]:
    """A fake API server holding Deployment web (3 pods over zones a, b, b; maxSkew 1);
    yields the path of a kubeconfig whose current context points at it."""
    with FakeApiServer(user_for_token={TOKEN: "alice"}) as api:
        api.add(*[node_obj(f"node-{z}", zone=f"zone-{z}") for z in "abc"])
        api.add(workload_obj("Deployment", "web", {"app": "web"}),
                workload_obj("ReplicaSet", "web-5d8f", {"app": "web"}, owner=("Deployment", "web")))
        spread = [spread_obj(ZONE, 1, "DoNotSchedule", {"app": "web"})]
        for i, zone in enumerate("abb"):
            api.add(pod_obj(f"web-5d8f-{i}", node=f"node-{zone}", labels={"app": "web"}, spread=spread,
                            owner=("ReplicaSet", "web-5d8f")))
        config = write_kubeconfig(str(tmp / "kubeconfig"), {"fake": api.url}, {"alice": token_user(TOKEN)},
                                  {"fake": {"cluster": "fake", "user": "alice", "namespace": "default"}}, "fake")
        yield config


# The built-in demo, as every install path must run it: a whole-zone drain that strands pods
# (an UNSAFE plan takes the planner's numpy paths), a Pending pod and the distribution.
UNSAFE_DRAIN = ("drain-safe", "--demo", "--domain", "topology.kubernetes.io/zone=us-east-2c", "--ignore-daemonsets")
PENDING_POD = "pod/notifications-hbwg8j56n9-mbkxz"


def assert_runs_the_demo(command: list[str | Path], env: dict[str, str]) -> None:
    """`command` (an installed kubectl-tspread, however it was installed) plans an UNSAFE
    drain, explains a Pending pod and shows the distribution of the demo cluster."""
    drain = run([*command, *UNSAFE_DRAIN], env)
    assert (drain.returncode, drain.stderr) == (3, ""), drain.stderr
    first = drain.stdout.splitlines()[0]
    assert first.startswith("UNSAFE: ") and "would be stranded" in first, drain.stdout
    assert "CordonedDomainTrap" in drain.stdout
    doc = run([*command, *UNSAFE_DRAIN, "-o", "json"], env)
    assert (doc.returncode, doc.stderr) == (3, ""), doc.stderr
    plan = json.loads(doc.stdout)
    assert (plan["kind"], plan["safe"]) == ("DrainPlan", False)
    assert plan["stranded"] and "CordonedDomainTrap" in {f["code"] for f in plan["findings"]}

    pending = run([*command, "why-pending", PENDING_POD, "--demo"], env)
    assert (pending.returncode, pending.stderr) == (0, ""), pending.stderr
    lines = pending.stdout.splitlines()
    assert lines[0] == "Pod shop/notifications-hbwg8j56n9-mbkxz · Pending · fits none of 11 nodes", lines[0]
    assert any(line.startswith("  trap CordonedDomain: ") for line in lines), pending.stdout
    assert "[verified: the pod then fits]" in pending.stdout

    dist = run([*command, "distribution", "--demo"], env)
    assert (dist.returncode, dist.stderr) == (0, ""), dist.stderr
    rows = dist.stdout.splitlines()
    assert rows[0].split()[:3] == ["NAMESPACE", "WORKLOAD", "PODS"]
    assert any(r.split()[1:2] == ["deployment/inventory"] and r.split()[-1] == "VIOLATED" for r in rows), dist.stdout
