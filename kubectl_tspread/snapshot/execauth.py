"""Client-go credential (exec) plugins, run with a time limit.

The `kubernetes` package's ExecProvider waits for a plugin without end and, off a terminal,
shows its stderr only when it exits non-zero: a plugin that hangs (a login waiting on a
browser nobody opens) hung tspread with it. Here a plugin gets `EXEC_TIMEOUT` seconds
(`INTERACTIVE_EXEC_TIMEOUT` when it may prompt someone on this terminal), is killed with its
children when that runs out, and what it printed on stderr is part of the error. The
protocol (KUBERNETES_EXEC_INFO in, an ExecCredential on stdout) is client-go's:
https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from kubectl_tspread.model.errors import ClusterError
from kubectl_tspread.snapshot import jsonscan

EXEC_TIMEOUT = 20.0
INTERACTIVE_EXEC_TIMEOUT = 120.0
MAX_OUTPUT = 16 << 20  # an ExecCredential is a few KB (a client certificate and key included)
_STDERR_TAIL = 64 << 10


def run_exec_plugin(config: Any, cwd: str | None, cluster: Any, user: str | None,
                    timeout: float | None = None) -> dict:
    """The `status` of the ExecCredential that `config` (a kubeconfig user's `exec` mapping)
    prints; ClusterError naming the plugin, the user and what went wrong otherwise."""
    command = config.get("command")
    fail = _Failure(command, user)
    interactive = _interactive(config)
    limit = timeout or (INTERACTIVE_EXEC_TIMEOUT if interactive else EXEC_TIMEOUT)
    env = dict(os.environ)
    for item in config.get("env") or ():
        env[str(item["name"])] = str(item["value"])
    info: dict = {"apiVersion": config.get("apiVersion"), "kind": "ExecCredential",
                  "spec": {"interactive": interactive}}
    if config.get("provideClusterInfo") and cluster is not None:
        info["spec"]["cluster"] = dict(cluster)
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info, default=str)
    try:
        # a session of its own (off a terminal): killing it at the deadline kills what it started
        proc = subprocess.Popen([command, *(config.get("args") or ())], cwd=cwd or None, env=env,
                                stdout=subprocess.PIPE, stderr=None if interactive else subprocess.PIPE,
                                stdin=sys.stdin if interactive else subprocess.DEVNULL,
                                start_new_session=not interactive)
    except OSError as e:
        raise fail(f"cannot run it: {e.strerror or e}") from None
    try:
        out, err, ended = _collect(proc, limit)
    except BaseException:  # Ctrl-C, SIGTERM: the plugin does not outlive us
        _kill(proc, interactive)
        raise
    if ended != "exited":
        _kill(proc, interactive)
        if ended == "too long":
            raise fail(f"it printed more than {MAX_OUTPUT >> 20} MiB on stdout; no ExecCredential is that long", err)
        raise fail(f"it did not finish within {limit:g}s", err)
    if proc.returncode != 0:
        raise fail(f"the process returned {proc.returncode}", err)
    try:
        jsonscan.check(out)
    except jsonscan.TooDeep:
        raise fail(f"its output is JSON nested deeper than {jsonscan.MAX_DEPTH} levels, not an ExecCredential",
                   err) from None
    try:
        cred = json.loads(out)
    except ValueError:
        raise fail("its output is not an ExecCredential (not JSON)", err) from None
    status = cred.get("status") if isinstance(cred, dict) else None
    if not isinstance(status, dict):
        raise fail("its ExecCredential has no status", err)
    if cred.get("apiVersion") != config.get("apiVersion"):
        raise fail(f"it answered apiVersion {cred.get('apiVersion')!r}, not {config.get('apiVersion')!r}", err)
    return status


def _interactive(config: Any) -> bool:
    if config.get("interactiveMode") == "Never":
        return False
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _kill(proc: subprocess.Popen, interactive: bool) -> None:
    try:
        if interactive:
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _collect(proc: subprocess.Popen, limit: float) -> tuple[bytes, bytes, str]:
    """(stdout, the tail of stderr, how it ended: "exited", "too long" or "late"), read within
    `limit` seconds and MAX_OUTPUT bytes: communicate() kept all a plugin printed, so one that
    printed without end (`yes`) ran the run out of memory before its time limit."""
    deadline = time.monotonic() + limit
    out, err = bytearray(), bytearray()
    too_long = threading.Event()

    def pump(stream: Any, sink: bytearray, cap: int, tail: bool) -> None:
        try:
            while True:
                chunk = stream.read1(1 << 16)
                if not chunk:
                    return
                sink.extend(chunk)
                if len(sink) > cap:
                    if not tail:
                        too_long.set()
                        return
                    del sink[:len(sink) - cap]  # the last lines are the ones an error shows
        except (OSError, ValueError):
            return

    threads = [threading.Thread(target=pump, args=(proc.stdout, out, MAX_OUTPUT, False), daemon=True)]
    if proc.stderr is not None:
        threads.append(threading.Thread(target=pump, args=(proc.stderr, err, _STDERR_TAIL, True), daemon=True))
    for thread in threads:
        thread.start()
    while not too_long.is_set() and time.monotonic() < deadline:
        alive = [t for t in threads if t.is_alive()]
        if not alive:
            break
        alive[0].join(0.05)
    if too_long.is_set():
        return bytes(out), bytes(err), "too long"
    if any(t.is_alive() for t in threads):
        return bytes(out), bytes(err), "late"
    try:
        proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:  # it closed its output and went on running
        return bytes(out), bytes(err), "late"
    return bytes(out), bytes(err), "exited"


class _Failure:
    def __init__(self, command: Any, user: str | None):
        self.command, self.user = command, user

    def __call__(self, what: str, stderr: bytes | None = None) -> ClusterError:
        said = _last_lines(stderr)
        return ClusterError(f'the auth exec plugin "{self.command}" of user "{self.user}" failed ({what}'
                            + (f"; it said: {said}" if said else "") + "); run it by hand to see why, or log in again")


def _last_lines(stderr: bytes | None, limit: int = 300) -> str:
    """A plugin's stderr on one line (an error is one line): its last lines, trimmed."""
    if not stderr:
        return ""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    text = " / ".join(lines[-3:])
    return text if len(text) <= limit else "…" + text[-limit:]


def run_bounded(what: str, fetch: Callable[[], Any], timeout: float | None = None) -> Any:
    """`fetch()` (a credential that may ask a server: an oidc token refresh, a few requests
    each with its own time limit) within EXEC_TIMEOUT in all; a ClusterError naming `what`
    when it fails or does not end. A fetch still running is left behind in a daemon thread."""
    limit = timeout or EXEC_TIMEOUT
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fetch()
        except Exception as e:  # noqa: BLE001 - anything it raises is the credential's failure
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True, name="tspread-credential")
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        raise ClusterError(f"{what} did not get a token within {limit:g}s (its issuer does not answer); "
                           "check the issuer URL and your network, or log in again")
    error = box.get("error")
    if isinstance(error, ClusterError):
        raise error
    if error is not None:
        said = " ".join(str(error).split())[:200] or type(error).__name__
        raise ClusterError(f"{what} failed ({type(error).__name__}: {said}); log in again, or check its "
                           "settings in the kubeconfig")
    return box.get("value")
