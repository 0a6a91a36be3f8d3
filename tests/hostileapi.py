"""A misbehaving API server on 127.0.0.1, scripted answer by answer, for the live path's bounds.

Where `fakeapi.FakeApiServer` is a small honest cluster, this one says whatever a scenario
tells it to: every request gets the next answer of the scenario's list (the last one
repeats), and an answer may be wrong in any way a broken or hostile server can be:

    {"status": 429, "headers": {"Retry-After": "inf"}}            # absurd Retry-After
    {"status": 200, "list": {"items": 5}}                            # a List whose items is a number
    {"status": 200, "list": {"continue": "same"}}                    # the same continue token forever
    {"status": 200, "list": {"continue": "new"}}                     # a new token each time, no items
    {"status": 200, "raw": "{not json"}                              # broken JSON
    {"status": 200, "list": {}, "trickle": 0.5}                      # headers at once, a byte every 0.5 s
    {"status": 200, "list": {}, "stall": 5}                          # nothing for 5 s
    {"status": 503, "status_details": {"retryAfterSeconds": "soon"}}  # a Status body with a hint
    {"status": 500, "message": "two\nlines"}                         # a Status message to tame
    {"status": 200, "list": {}, "truncate": 40}                      # 40 bytes of the body, then close
    {"status": 302, "headers": {"Location": "http://elsewhere/"}}    # a redirect

/version answers as any API server's does, unless the scenario gives its body ("version").

A scenario is plain JSON, so a failing one is kept as a file (tests/data/hostile-live/) and
replayed. `run_cli` runs the real program in this process against it and reports what a
user would see. The server stops every trickle when it is closed.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakeapi import write_kubeconfig

_KIND_OF = {"nodes": "NodeList", "pods": "PodList", "services": "ServiceList", "deployments": "DeploymentList",
            "replicasets": "ReplicaSetList", "statefulsets": "StatefulSetList", "daemonsets": "DaemonSetList"}


class HostileApiServer:
    """`with HostileApiServer(answers) as api:`; `api.url`, `api.requests` (paths asked for)."""

    def __init__(self, answers: list[dict], version: dict | None = None):
        if not answers:
            raise ValueError("a scenario needs at least one answer")
        self.answers = answers
        self.version = version if version is not None else {"major": "1", "minor": "37", "gitVersion": "v1.37.2"}
        self.requests: list[str] = []
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self) -> "HostileApiServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closed.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def next_answer(self, path: str) -> dict:
        with self._lock:
            self.requests.append(path)
            return self.answers[min(len(self.requests), len(self.answers)) - 1]

    def body_of(self, answer: dict, path: str) -> bytes:
        if "raw" in answer:
            return str(answer["raw"]).encode("utf-8", "surrogatepass")
        if "list" in answer:
            spec = answer["list"] or {}
            meta: dict = {"resourceVersion": "1"}
            token = spec.get("continue")
            if token == "new":
                meta["continue"] = f"t{next(self._tokens)}"
            elif token is not None:
                meta["continue"] = token
            plural = path.rstrip("/").rsplit("/", 1)[-1]
            return json.dumps({"kind": _KIND_OF.get(plural, "List"), "apiVersion": "v1", "metadata": meta,
                               "items": spec.get("items", [])}).encode()
        if "status_details" in answer or answer.get("status", 200) >= 400:
            return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                               "message": answer.get("message", "injected"),
                               "code": answer.get("status", 500),
                               "details": answer.get("status_details", {})}).encode()
        return json.dumps(answer.get("body", {})).encode()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up mid-answer is what these tests make happen


def _handler(server: HostileApiServer) -> type:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:  # a write's body, read off the connection so the next request on it parses
                self.rfile.read(length)
            if self.path.split("?", 1)[0] == "/version":
                data = json.dumps(server.version).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            answer = server.next_answer(self.path.split("?", 1)[0])
            if answer.get("stall"):
                server.closed.wait(float(answer["stall"]))
            data = server.body_of(answer, self.path.split("?", 1)[0])
            try:
                self.send_response(int(answer.get("status", 200)))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (answer.get("headers") or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                trickle = answer.get("trickle")
                if "truncate" in answer:  # Content-Length promised the whole body
                    self.wfile.write(data[:int(answer["truncate"])])
                    self.close_connection = True
                    return
                if not trickle:
                    self.wfile.write(data)
                    return
                self.wfile.flush()
                for i in range(len(data)):
                    if server.closed.wait(float(trickle)):
                        break
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
            except (ConnectionError, OSError):
                self.close_connection = True  # the client gave up: what a bound is for

        do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return H


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    requests: int = 0

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]


def run_cli(scenario: dict, directory: str) -> Outcome:
    """Run `kubectl tspread <scenario args>` in this process against the scenario's server."""
    from kubectl_tspread.cli import main

    args = scenario.get("args") or ["distribution", "-A"]
    with HostileApiServer(scenario["answers"], scenario.get("version")) as api:
        kubeconfig = write_kubeconfig(os.path.join(directory, "hostile-config"), {"h": api.url}, {"u": {}},
                                      {"h": {"cluster": "h", "user": "u"}}, "h")
        timeout = scenario.get("request_timeout", "2s")
        argv = [*args, "--kubeconfig", kubeconfig, *(["--request-timeout", timeout] if timeout else [])]
        out, err = io.StringIO(), io.StringIO()
        start = time.monotonic()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
        seconds = time.monotonic() - start
        requests = len(api.requests)
    sys.stdout.flush()
    return Outcome(code, out.getvalue(), err.getvalue(), seconds, requests)
