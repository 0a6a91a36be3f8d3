"""The `kubectl-tspread` program (cli.console_main): it leaves with os._exit, skipping the
interpreter's teardown, so the whole output and the exit code must still get out."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kubectl_tspread.cli import main


def _program(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "kubectl_tspread", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_the_whole_output_gets_out_with_the_exit_code(capsys):
    with pytest.raises(SystemExit) as done:
        main(["distribution", "--demo", "-o", "json"])
    expected = capsys.readouterr().out
    got = _program("distribution", "--demo", "-o", "json")
    assert (got.returncode, got.stdout) == (done.value.code, expected)
    assert len(expected) > 10_000  # more than one pipe buffer's worth to flush


def test_an_error_keeps_its_line_and_its_code():
    got = _program("distribution", "--from-file", "/nonexistent/dump.json")
    assert got.returncode == 1
    assert got.stderr.startswith("error: ") and got.stderr.count("\n") == 1 and not got.stdout


class _Broken:
    def write(self, text):
        return len(text)

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("exit_with, expected", [
    pytest.param(None, 0, id="main returned"),
    pytest.param(3, 3, id="sys.exit(3): the plan is not safe"),
    pytest.param("boom", 1, id="sys.exit('boom'): printed, exit 1"),
])
def test_the_exit_code_is_mains(exit_with, expected, monkeypatch):
    from kubectl_tspread import cli
    codes = []
    monkeypatch.setattr(cli, "main", lambda: None if exit_with is None else sys.exit(exit_with))
    monkeypatch.setattr(cli.os, "_exit", codes.append)
    cli.console_main()
    assert codes == [expected]


def test_an_output_that_cannot_be_flushed_exits_120_as_python_does(monkeypatch):
    from kubectl_tspread import cli
    codes = []
    monkeypatch.setattr(cli, "main", lambda: None)
    monkeypatch.setattr(cli.os, "_exit", codes.append)
    monkeypatch.setattr(sys, "stdout", _Broken())
    cli.console_main()
    assert codes == [120]
