"""kubectl-like edges: usage errors as one `error:` line pointing at --help (exit 2), one
`warning:` line for insecure-skip-tls-verify, SIGTERM handled like Ctrl-C at every phase
(`error: aborted`, exit 130), and kubectl's refusal wording said once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from apiobjects import as_dump, as_list, node_obj, pod_obj
from fakeapi import FakeApiServer, make_self_signed_cert, raw_node, write_kubeconfig
from hostileapi import HostileApiServer
from kubectl_tspread.cli import EXIT_ABORTED, main


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


# ---- usage errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, line", [
    (["distribution", "--bogus"], "error: no such option '--bogus'"),
    (["distribution", "--request-timeout", "30x"],
     "error: invalid value for '--request-timeout': '30x' is not a duration; use e.g. 30s, 1m or 0 for none"),
    (["distribution", "--request-timeout", "\u0661s"],  # an Arabic-Indic 1: was read as 1s
     "error: invalid value for '--request-timeout': '\u0661s' is not a duration"),
    (["distribution", "-o", "xml"], "error: invalid value for '-o' / '--output': 'xml' is not one of"),
    (["drain-safe", "--max-parallel", "0"], "error: invalid value for '--max-parallel': 0 is not in the range"),
    (["why-pending", "a", "b"], "error: got unexpected extra argument (b)"),
    (["bogus"], "error: no such command 'bogus'"),
], ids=["unknown flag", "bad duration", "a duration in other digits", "bad choice", "out of range", "extra argument", "unknown command"])
def test_a_usage_error_is_one_error_line_with_a_pointer_to_help(capsys, args, line):
    code, out, err = run(capsys, *args)
    command = "kubectl tspread" + (f" {args[0]}" if args[0] != "bogus" else "")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(line), err
    assert err.rstrip("\n").endswith(f"(see '{command} --help')")
    assert "Usage:" not in err and "Try " not in err


def test_help_and_version_are_untouched(capsys):
    code, out, err = run(capsys, "distribution", "--help")
    assert code == 0 and out.startswith("Usage: kubectl tspread distribution") and err == ""


# ---- insecure-skip-tls-verify ---------------------------------------------------------------------

def test_insecure_skip_tls_verify_is_one_warning_line_per_run(tmp_path):
    tls = make_self_signed_cert(str(tmp_path))
    if tls is None:
        pytest.skip("openssl CLI not installed: cannot make a TLS certificate")
    with FakeApiServer(tls=tls) as api:
        api.add(raw_node("n1"))
        cfg = write_kubeconfig(str(tmp_path / "config"), {"c": {"server": api.url, "insecure-skip-tls-verify": True}},
                               {"u": {}}, {"c": {"cluster": "c", "user": "u"}}, "c")
        got = subprocess.run([sys.executable, "-m", "kubectl_tspread", "distribution", "-A", "--kubeconfig", cfg],
                             capture_output=True, text=True, env=_env(), timeout=60)
        assert len(api.logged("GET")) >= 8  # a request per kind: urllib3 warned for each
    assert got.returncode == 0, got.stderr
    lines = got.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: insecure-skip-tls-verify is set for {api.url}")
    assert "InsecureRequestWarning" not in got.stderr


# ---- SIGTERM like Ctrl-C ---------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["distribution"], ["why-pending"], ["drain-safe", "n1"]])
def test_sigterm_while_reading_the_cluster_is_aborted_exit_130(tmp_path, command):
    """Before: SIGTERM ended the process silently with -15 while Ctrl-C said `error: aborted`."""
    with HostileApiServer([{"status": 200, "list": {}, "stall": 30}]) as api:
        cfg = tmp_path / "config"
        cfg.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": api.url}}],
            "users": [{"name": "u", "user": {}}], "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        proc = subprocess.Popen([sys.executable, "-m", "kubectl_tspread", *command, "--kubeconfig", str(cfg)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        try:
            deadline = time.monotonic() + 20
            while not api.requests and time.monotonic() < deadline:
                time.sleep(0.02)
            assert api.requests, "the program never asked the server"
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert (proc.returncode, out, err) == (EXIT_ABORTED, "", "error: aborted\n")


def _terminate_here(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)  # the handler raises before this ends
    raise AssertionError("SIGTERM was not handled")


@pytest.mark.parametrize("args, target", [
    (["distribution", "--from-file", "DUMP"], "kubectl_tspread.snapshot.files.load_files"),
    (["distribution", "--from-file", "DUMP"], "kubectl_tspread.views.distribution.compute_distribution"),
    (["distribution", "--from-file", "DUMP"], "kubectl_tspread.render.table.summary_text"),
    (["why-pending", "--from-file", "DUMP"], "kubectl_tspread.views.pending.explain_pods"),
    (["drain-safe", "a1", "--from-file", "DUMP"], "kubectl_tspread.views.drain.plan.plan_drain"),
    (["drain-safe", "a1", "--from-file", "DUMP", "-o", "json"], "kubectl_tspread.render.drain.drain_plan_view"),
], ids=["loading", "computing", "rendering", "explaining", "planning", "rendering the plan"])
def test_sigterm_at_every_phase_is_aborted_exit_130(capsys, monkeypatch, tmp_path, args, target):
    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps(as_dump([node_obj("a1", zone="a"), pod_obj("web", node="a1")])))
    monkeypatch.setattr(target, _terminate_here)
    code, out, err = run(capsys, *[str(dump) if a == "DUMP" else a for a in args])
    assert (code, out, err) == (EXIT_ABORTED, "", "error: aborted\n")
    assert signal.getsignal(signal.SIGTERM) is not None  # main() put the previous handler back


# ---- wording --------------------------------------------------------------------------------------

def test_kubectls_refusal_says_cannot_delete_once(capsys, tmp_path):
    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps(as_list([node_obj("a1", zone="a"), node_obj("b1", zone="b"),
                                        pod_obj("debug", node="a1", labels={"run": "debug"})])))
    code, out, _ = run(capsys, "drain-safe", "a1", "--from-file", str(dump))
    assert code == 3
    assert "cannot delete cannot delete" not in out
    assert "kubectl drain refuses: cannot delete Pods that declare no controller (use --force to override): " \
           "default/debug." in out
