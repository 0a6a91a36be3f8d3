"""Shell completion: the scripts, kubectl's plugin protocol, and names from the cluster."""

from __future__ import annotations

import io
import socket
import time
from contextlib import redirect_stdout

import pytest
from click.testing import CliRunner

from kubectl_tspread.cli import cli
from kubectl_tspread.cli.completion import kubectl_complete


def complete(*words: str) -> list[str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert kubectl_complete(cli, list(words)) == 0
    lines = buf.getvalue().splitlines()
    assert lines[-1] == ":4", "Cobra directive 4 (no file completion) must close the answer"
    return lines[:-1]


@pytest.mark.parametrize("shell, marker", [
    ("bash", "_KUBECTL_TSPREAD_COMPLETE=bash_complete"),
    ("zsh", "_KUBECTL_TSPREAD_COMPLETE=zsh_complete"),
    ("fish", "_KUBECTL_TSPREAD_COMPLETE=fish_complete"),
])
def test_completion_scripts(shell, marker):
    r = CliRunner().invoke(cli, ["completion", shell], prog_name="kubectl tspread")
    assert r.exit_code == 0 and marker in r.output and "kubectl-tspread" in r.output


def test_completion_rejects_unknown_shell():
    r = CliRunner().invoke(cli, ["completion", "tcsh"], prog_name="kubectl tspread")
    assert r.exit_code == 2


def test_subcommands_and_flags():
    assert complete("") == sorted(complete(""))  # click lists commands in order
    assert set(complete("")) >= {"distribution", "why-pending", "drain-safe", "completion"}
    assert complete("dr") == ["drain-safe"]
    assert complete("distribution", "--ti") == ["--timeline"]
    assert "--ignore-daemonsets" in complete("drain-safe", "--ig")


def test_target_kinds_then_names_from_the_demo():
    assert complete("distribution", "de") == ["deployment/"]
    names = complete("distribution", "--demo", "deploy/in")
    assert names == ["deploy/inventory"]
    assert "sts/orders-db" in complete("distribution", "--demo", "sts/")


def test_pods_and_nodes_from_the_demo():
    pods = complete("why-pending", "--demo", "notifications-")
    assert pods and all(p.startswith("notifications-") for p in pods)
    assert complete("drain-safe", "--demo", "node-c") == ["node-c1", "node-c2", "node-c3"]


def test_names_from_a_dump(tmp_path):
    import json
    from apiobjects import as_list, node_obj
    dump = tmp_path / "nodes.json"
    dump.write_text(json.dumps(as_list([node_obj("alpha"), node_obj("beta")])))
    assert complete("drain-safe", "--from-file", str(dump), "") == ["alpha", "beta"]


def test_unreachable_cluster_completes_nothing_quietly(tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    start = time.monotonic()
    assert complete("drain-safe", "--kubeconfig", str(kubeconfig), "") == []
    assert time.monotonic() - start < 3  # one attempt, no retry backoff
    assert capsys.readouterr().err == ""
