"""`kubectl tspread distribution` end to end through main(): exit codes, stdout and stderr apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from apiobjects import as_list, node_obj, pod_obj, spread_obj, workload_obj
from kubectl_tspread.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def _cluster(placements=("n0", "n1", "n0", "n2", "n4")) -> dict:
    nodes = [node_obj(f"n{i}", zone=z) for i, z in enumerate("aabbcc")]
    deploy = workload_obj("Deployment", "web", {"app": "web"})
    rs = workload_obj("ReplicaSet", "web-5d8f", {"app": "web"}, owner=("Deployment", "web"))
    pods = [pod_obj(f"web-5d8f-{i}", node=n, labels={"app": "web", "pod-template-hash": "5d8f"},
                    spread=[spread_obj()], owner=("ReplicaSet", "web-5d8f"), created=f"2026-01-01T00:00:0{i}Z")
            for i, n in enumerate(placements)]
    return as_list(nodes + [deploy, rs] + pods)


@pytest.fixture
def dump(tmp_path):
    def write(doc=None, name="cluster.json"):
        p = tmp_path / name
        p.write_text(json.dumps(doc if doc is not None else _cluster()))
        return str(p)
    return write


def test_summary_from_file(capsys, dump):
    code, out, err = run(capsys, "distribution", "--from-file", dump())
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["NAMESPACE", "WORKLOAD", "PODS"]
    assert lines[1].split()[:3] == ["default", "deployment/web", "5"]
    assert "a=3 b=1 c=1" in lines[1] and lines[1].endswith("VIOLATED")


def test_exit_code_3_only_when_violated_and_asked(capsys, dump):
    assert run(capsys, "distribution", "--from-file", dump())[0] == 0
    assert run(capsys, "distribution", "--exit-code", "--from-file", dump())[0] == 3
    balanced = dump(_cluster(("n0", "n2", "n4")), "ok.json")
    assert run(capsys, "distribution", "--exit-code", "--from-file", balanced)[0] == 0


def test_detail_json_and_yaml_agree(capsys, dump):
    code, out, err = run(capsys, "distribution", "deploy/web", "-o", "json", "--from-file", dump())
    assert (code, err) == (0, "")
    doc = json.loads(out)
    (w,) = doc["workloads"]
    assert (w["kind"], w["name"], w["pods"]) == ("Deployment", "web", 5)
    c = w["constraints"][0]
    assert [(d["value"], d["pods"], d["headroom"]) for d in c["domains"]] == [("a", 3, 0), ("b", 1, 1), ("c", 1, 1)]
    assert (c["globalMin"], c["skew"], c["status"]) == (1, 2, "VIOLATED")
    code, out_yaml, _ = run(capsys, "distribution", "deploy/web", "-o", "yaml", "--from-file", dump())
    assert yaml.safe_load(out_yaml) == doc


def test_timeline_rows(capsys, dump):
    code, out, _ = run(capsys, "distribution", "deploy/web", "--timeline", "--from-file", dump())
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith(("1 ", "2 ", "3 ", "4 ", "5 "))]
    assert len(rows) == 5
    assert "a=2 b=0 c=0" in rows[1] and "> maxSkew" in rows[1]


@pytest.mark.parametrize("args, code, message", [
    (["distribution", "-l", "app in web"], 2, "error: invalid label selector 'app in web'"),
    (["distribution", "deploy/nope"], 1, 'error: deployment "nope" not found in namespace "default"'),
    (["distribution", "svc/web"], 2, "error: cannot use 'svc/web' as a target"),
    (["distribution", "deploy/web", "-l", "app=web"], 2, "error: give either TYPE/NAME or -l/--selector"),
], ids=["malformed selector", "unknown workload", "unsupported kind", "target and selector"])
def test_errors_are_one_line_on_stderr(capsys, dump, args, code, message):
    got, out, err = run(capsys, *args, "--from-file", dump())
    assert got == code
    assert out == ""
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err


def test_missing_file_is_an_error(capsys, tmp_path):
    code, out, err = run(capsys, "distribution", "--from-file", str(tmp_path / "nope.json"))
    assert code == 1 and out == "" and err.startswith("error: ") and "nope.json" in err


def test_demo_and_from_file_together_is_a_usage_error(capsys, dump):
    code, out, err = run(capsys, "distribution", "--demo", "--from-file", dump())
    assert code == 2 and out == "" and "--demo and --from-file" in err


def test_color_always_vs_never(capsys, dump):
    _, colored, _ = run(capsys, "distribution", "--color", "always", "--from-file", dump())
    _, plain, _ = run(capsys, "distribution", "--color", "never", "--from-file", dump())
    assert "\x1b[" in colored and "\x1b[" not in plain


def test_no_color_env_wins_over_auto(capsys, dump, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run(capsys, "distribution", "--from-file", dump())
    assert "\x1b[" not in out


def test_wide_adds_columns(capsys, dump):
    _, out, _ = run(capsys, "distribution", "-o", "wide", "--from-file", dump())
    assert out.splitlines()[0].split()[-4:] == ["GLOBALMIN", "MINDOMAINS", "POLICIES", "SELECTOR"]


def test_demo_runs(capsys):
    code, out, err = run(capsys, "distribution", "--demo")
    assert code == 0 and err == "" and out.startswith("NAMESPACE")


def test_module_entry_point_and_version():
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    r = subprocess.run([sys.executable, "-m", "kubectl_tspread", "--version"], capture_output=True, text=True, env=env)
    from kubectl_tspread import __version__
    assert r.returncode == 0 and r.stdout.strip() == f"kubectl-tspread {__version__}"
    r = subprocess.run([sys.executable, "-m", "kubectl_tspread", "distribution", "--help"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.startswith("Usage: kubectl tspread distribution")


def test_trap_details_use_camel_case_keys_like_the_rest_of_the_json(capsys):
    code, out, _ = run(capsys, "distribution", "--demo", "-A", "-o", "json")
    details = [t["details"] for w in json.loads(out)["workloads"] for c in w["constraints"] for t in c["traps"]]
    assert code == 0 and details
    assert sorted({k for d in details for k in d if "_" in k}) == []
    assert any("maxSkew" in d for d in details)


def test_closed_pipe_ends_quietly_without_a_traceback():
    """`… | head`: no traceback and nothing on stderr (click pacifies the broken pipe). We do not
    restore SIGPIPE's default action: it would also kill the process on a socket the API
    server closed, silently, and mid-drain."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    p = subprocess.Popen([sys.executable, "-m", "kubectl_tspread", "distribution", "--demo", "-A", "-o", "json",
                          "--timeline"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait() in (0, 1)  # 1 when click sees EPIPE itself, 0 when it surfaces at exit
    assert err == b""


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_structured_output_is_written_workload_by_workload_as_the_whole_document(capsys, fmt):
    """-o json|yaml writes each workload's view as it makes it (structured.pieces): the same bytes
    as the whole document dumped at once."""
    from kubectl_tspread.views.distribution import compute_distribution
    from kubectl_tspread.engine.index import ClusterIndex
    from kubectl_tspread.render import structured
    from kubectl_tspread.snapshot.demo import load_demo
    from kubectl_tspread.views.targets import resolve

    code, out, err = run(capsys, "distribution", "--demo", "-A", "-o", fmt)
    index = ClusterIndex(load_demo(all_namespaces=True))
    doc = structured.distribution_view(compute_distribution(index, resolve(index, None, None, None)))
    assert isinstance(doc["workloads"], structured.Stream) and len(list(doc["workloads"])) >= 2
    assert err == "" and code in (0, 3)
    assert out == structured.dump(doc, fmt)
