"""pip/pipx packaging: sdist and wheel build cleanly and carry everything; the installed
console scripts work, and kubectl discovers the plugin."""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from kubectl_tspread import __version__
from shipping import KUBECTL, NO_KUBECTL, ROOT, assert_runs_the_demo, clean_env, live_cluster, run

PACKAGE = ROOT / "kubectl_tspread"
SCRIPTS_DIR = Path(sysconfig.get_path("scripts"))
CONSOLE_SCRIPTS = {"kubectl-tspread": "kubectl_tspread.cli:console_main",
                   "kubectl_complete-tspread": "kubectl_tspread.cli:complete_main"}
DEMO_DATA = PACKAGE / "data" / "demo-cluster.json"


def _source_files() -> list[str]:
    """Package files the wheel must carry: modules and package data."""
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    files += [p for p in (PACKAGE / "data").glob("*") if p.suffix in (".json", ".yaml")]
    return sorted(p.relative_to(ROOT).as_posix() for p in files)


def _installed_script(name: str) -> Path:
    path = SCRIPTS_DIR / name
    assert path.exists(), (f"{path} is missing: install the project into this interpreter's environment "
                           "(bash scripts/test does: pip install -e '.[test]')")
    return path


# ---- sdist and wheel ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """`python -m build`: the sdist, then the wheel built from that sdist (so both are checked)."""
    out_dir = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out_dir), str(ROOT)],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    (wheel,) = out_dir.glob("*.whl")
    (sdist,) = out_dir.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist, "log": proc.stdout + proc.stderr}


@pytest.mark.slow
def test_build_is_clean(dists):
    # setuptools reports metadata mistakes (missing README, deprecated license fields) as warnings
    # ("byte-compiling is disabled" only echoes PYTHONDONTWRITEBYTECODE and says nothing of the package)
    warnings = [line for line in dists["log"].splitlines()
                if re.search(r"warning", line, re.I) and "byte-compiling is disabled" not in line]
    assert not warnings, "\n".join(warnings)
    assert dists["wheel"].name == f"kubectl_tspread-{__version__}-py3-none-any.whl"


@pytest.mark.slow
def test_wheel_carries_every_module_and_the_package_data(dists):
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    missing = [f for f in _source_files() if f not in names]
    assert not missing, f"not in the wheel: {missing}"


@pytest.mark.slow
def test_wheel_carries_the_demo_cluster(dists):
    if not DEMO_DATA.exists():
        pytest.skip("kubectl_tspread/data/demo-cluster.json is not in this tree yet")
    assert "kubectl_tspread/data/demo-cluster.json" in zipfile.ZipFile(dists["wheel"]).namelist()


@pytest.mark.slow
def test_wheel_declares_entry_points_python_and_license(dists):
    wheel = zipfile.ZipFile(dists["wheel"])
    info = f"kubectl_tspread-{__version__}.dist-info"
    entry_points = configparser.ConfigParser(delimiters=("=",))
    entry_points.read_string(wheel.read(f"{info}/entry_points.txt").decode())
    assert {k: v.strip() for k, v in entry_points["console_scripts"].items()} == CONSOLE_SCRIPTS
    metadata = wheel.read(f"{info}/METADATA").decode()
    assert "Requires-Python: >=3.10" in metadata
    assert re.search(r"^License(-Expression)?: Apache-2\.0$", metadata, re.M)
    assert any(n.startswith(f"{info}/") and n.endswith("LICENSE") for n in wheel.namelist())
    assert "Description-Content-Type: text/markdown" in metadata


@pytest.mark.slow
def test_sdist_carries_what_a_rebuild_needs(dists):
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ["setup.cfg", "pyproject.toml", "README.md", "LICENSE", *_source_files()]:
        assert needed in names, f"{needed} missing from {dists['sdist'].name}"


# ---- the installed console scripts ------------------------------------------------------

def test_console_scripts_are_installed():
    for name in CONSOLE_SCRIPTS:
        assert os.access(_installed_script(name), os.X_OK)


def _script_env(tmp_path: Path, *extra_dirs: str) -> dict[str, str]:
    return clean_env(tmp_path, [SCRIPTS_DIR, *extra_dirs, "/usr/bin", "/bin"])


def test_console_script_help_reads_kubectl_tspread(tmp_path):
    out = run([_installed_script("kubectl-tspread"), "--help"], _script_env(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "kubectl tspread" in out.stdout and out.stderr == ""


@pytest.mark.parametrize("argv", [["kubectl-tspread"], [sys.executable, "-m", "kubectl_tspread"]],
                         ids=["console script", "python -m"])
def test_version(tmp_path, argv):
    if argv == ["kubectl-tspread"]:
        argv = [str(_installed_script("kubectl-tspread"))]
    out = run([*argv, "--version"], _script_env(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(__version__)


def test_console_script_reads_a_live_cluster(tmp_path):
    with live_cluster(tmp_path) as kubeconfig:
        out = run([_installed_script("kubectl-tspread"), "distribution", "deployment/web",
                   "--kubeconfig", kubeconfig, "-o", "yaml"], _script_env(tmp_path))
    assert out.returncode == 0, out.stderr
    (workload,) = yaml.safe_load(out.stdout)["workloads"]
    assert (workload["name"], workload["pods"]) == ("web", 3)


def test_console_script_plans_an_unsafe_drain_and_explains_a_pending_pod(tmp_path):
    # pip's install path: numpy comes from the environment pip installed into
    assert_runs_the_demo([_installed_script("kubectl-tspread")], _script_env(tmp_path))


@pytest.fixture
def kubectl_env(tmp_path):
    if not KUBECTL:
        pytest.skip(NO_KUBECTL)
    _installed_script("kubectl-tspread")
    return _script_env(tmp_path, os.path.dirname(KUBECTL))


def test_kubectl_plugin_list_finds_the_installed_plugin(kubectl_env):
    out = run([KUBECTL, "plugin", "list"], kubectl_env)
    assert str(SCRIPTS_DIR / "kubectl-tspread") in out.stdout.splitlines(), out.stdout + out.stderr


def test_kubectl_tspread_help_runs_through_kubectl(kubectl_env):
    out = run([KUBECTL, "tspread", "--help"], kubectl_env)
    assert out.returncode == 0, out.stderr
    assert "kubectl tspread" in out.stdout


def test_kubectl_completes_subcommands_through_kubectl_complete_tspread(kubectl_env):
    out = run([KUBECTL, "__complete", "tspread", ""], kubectl_env)
    lines = out.stdout.splitlines()
    assert lines and re.fullmatch(r":\d+", lines[-1]), out.stdout + out.stderr
    words = [line.split("\t")[0] for line in lines[:-1]]
    assert "distribution" in words


def test_every_command_has_help_and_a_readme_section():
    from kubectl_tspread.cli import cli

    headings = [line.lstrip("#").strip().lower() for line in (ROOT / "README.md").read_text().splitlines()
                if line.startswith("#")]
    assert cli.commands, "no subcommands registered"
    for name, command in cli.commands.items():
        assert (command.help or "").strip(), f"`kubectl tspread {name}` has no help text"
        assert any(name in h for h in headings), f"README.md has no section for `{name}`"


# ---- pipx -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_pipx_install_gives_a_working_plugin(tmp_path):
    pytest.importorskip("pipx", reason="pipx is not installed in the test environment")
    env = clean_env(tmp_path, [Path(sys.executable).parent, "/usr/bin", "/bin"],
                    PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
                    PIPX_MAN_DIR=str(tmp_path / "man"),
                    # the user's own pip cache: a fresh HOME would download every wheel again
                    PIP_CACHE_DIR=os.path.expanduser("~/.cache/pip"))
    # pip's configuration, certificates and proxies are how this machine reaches PyPI
    passthrough = ("PIP_", "SSL_CERT_", "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
    env.update({k: v for k, v in os.environ.items() if k.upper().startswith(passthrough)})
    user_conf = Path(os.path.expanduser("~/.config/pip/pip.conf"))
    if user_conf.exists():
        env.setdefault("PIP_CONFIG_FILE", str(user_conf))
    out = run([sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(ROOT)], env, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    for name in CONSOLE_SCRIPTS:
        assert (tmp_path / "bin" / name).exists(), f"pipx did not expose {name}"
    version = run([tmp_path / "bin" / "kubectl-tspread", "--version"], env)
    assert version.returncode == 0 and version.stdout.strip().endswith(__version__), version.stderr
    assert_runs_the_demo([tmp_path / "bin" / "kubectl-tspread"], env)


# ---- the README's two commands and CI ------------------------------------------------------

def test_quick_start_is_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["bash scripts/demo", "bash scripts/test"]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#")]
    assert ci == ["exec bash scripts/test"]


def test_scripts_test_fails_when_no_test_is_collected_and_skips_a_needless_reinstall(tmp_path):
    # run twice: the first may install (setup.cfg changed since the stamp); the second must not
    env = {**os.environ, "CI": "true"}
    for _ in range(2):
        out = subprocess.run(["bash", str(ROOT / "scripts" / "test"), "-q", "-p", "no:cacheprovider",
                              str(ROOT / "tests" / "test_rbac.py"), "-k", "no_test_has_this_name_xyz"], capture_output=True, text=True, env=env,
                             timeout=600, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert out.returncode == 5, out.stdout + out.stderr
    assert "error: pytest collected no tests" in out.stderr
    assert "Installing" not in out.stderr
