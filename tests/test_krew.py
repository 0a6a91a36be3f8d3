"""krew-manifest.yaml against krew-index's rules, and the archive scripts/release builds.

The rules come from krew's manifest documentation and its validator: apiVersion and kind,
a safe lowercase name, a v-prefixed semantic version, a one-line short description, a
non-empty selector per platform using only the keys os and arch, a uri, a lowercase
64-hex sha256, bin, and files whose `from`/`to` are set. krew-index reviewers add: short
description of a few words, description wrapped and free of usage examples, caveats for
what the user must install.
"""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from kubectl_tspread import __version__
from shipping import (KUBECTL, NO_KUBECTL, ROOT, base_python, clean_env, live_cluster, python_of_minor, run,
                      supported_minors)

MANIFEST = ROOT / "krew-manifest.yaml"
REQUIRED_PLATFORMS = {(os_, arch) for os_ in ("linux", "darwin") for arch in ("amd64", "arm64")}
# every os/arch krew is released for: a platform must be matched by at most one selector
KREW_PLATFORMS = [(o, a) for o in ("linux", "darwin", "windows") for a in ("amd64", "arm64", "386", "arm", "ppc64le")]
ARCHIVE_NAME = f"kubectl-tspread-v{__version__}.tar.gz"


def load(path: Path = MANIFEST) -> dict:
    return yaml.safe_load(path.read_text())


def selector_matches(selector: dict, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics, enough for krew's os/arch selectors."""
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or ():
        key, op, values = e["key"], e["operator"], e.get("values") or []
        ok = {"In": labels.get(key) in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def _python_requires_minimum() -> str:
    m = re.search(r"^python_requires\s*=\s*>=\s*([\d.]+)", (ROOT / "setup.cfg").read_text(), re.M)
    assert m, "setup.cfg must declare python_requires = >=X.Y"
    return m.group(1)


# ---- the manifest, as committed -------------------------------------------------------------

@pytest.fixture(scope="module")
def manifest() -> dict:
    return load()


def test_header_and_name(manifest):
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    name = manifest["metadata"]["name"]
    assert name == "tspread"
    # krew's safe-name rule plus the naming guide's lowercase kebab-case
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name)


def test_version_is_the_package_version(manifest):
    assert re.fullmatch(r"v\d+\.\d+\.\d+", manifest["spec"]["version"])
    assert manifest["spec"]["version"] == f"v{__version__}", (
        "krew-manifest.yaml is stale: run `python3 scripts/release` after changing __version__")


def test_short_description_is_one_short_line(manifest):
    short = manifest["spec"]["shortDescription"]
    assert short and "\n" not in short and "\r" not in short
    assert len(short) <= 50, f"{len(short)} characters: {short!r}"


def test_description_is_wrapped_at_80_columns_without_usage_examples(manifest):
    desc = manifest["spec"]["description"]
    assert len(desc.split()) >= 20, "description should explain what the plugin does"
    long_lines = [line for line in desc.splitlines() if len(line) > 80]
    assert not long_lines, f"lines over 80 columns: {long_lines}"
    raw_lines = [line for line in MANIFEST.read_text().splitlines() if len(line) > 80
                 and not line.lstrip().startswith(("uri:", "- uri:"))]
    assert not raw_lines, f"manifest lines over 80 columns: {raw_lines}"
    # usage belongs in --help: no command lines, prompts or flags in the description
    assert not re.search(r"kubectl tspread|^\s*\$ |(?<![\w-])--?[a-z]", desc, re.M), desc


def test_caveats_name_the_python_requirement(manifest):
    caveats = manifest["spec"]["caveats"]
    assert "python3" in caveats.lower() and _python_requires_minimum() in caveats


def test_homepage_is_the_project_url(manifest):
    url = re.search(r"^url\s*=\s*(\S+)", (ROOT / "setup.cfg").read_text(), re.M).group(1)
    assert manifest["spec"]["homepage"] == url
    assert url.startswith("https://")


def test_platforms_cover_linux_and_darwin_on_amd64_and_arm64(manifest):
    covered = {p for p in KREW_PLATFORMS
               if any(selector_matches(pl["selector"], {"os": p[0], "arch": p[1]})
                      for pl in manifest["spec"]["platforms"])}
    assert REQUIRED_PLATFORMS <= covered


@pytest.mark.parametrize("platform", KREW_PLATFORMS, ids=lambda p: "/".join(p))
def test_selectors_do_not_overlap(manifest, platform):
    labels = {"os": platform[0], "arch": platform[1]}
    hits = [pl["selector"] for pl in manifest["spec"]["platforms"] if selector_matches(pl["selector"], labels)]
    assert len(hits) <= 1, f"{platform} matches {len(hits)} selectors: {hits}"


def test_each_platform_is_complete(manifest):
    for pl in manifest["spec"]["platforms"]:
        sel = pl["selector"]
        assert sel.get("matchLabels") or sel.get("matchExpressions"), "krew rejects empty selectors"
        keys = set(sel.get("matchLabels") or {}) | {e["key"] for e in sel.get("matchExpressions") or ()}
        assert keys <= {"os", "arch"}
        assert re.fullmatch(r"[a-f0-9]{64}", pl["sha256"]), pl["sha256"]
        assert pl["uri"].startswith("https://") and pl["uri"].endswith(f"/v{__version__}/{ARCHIVE_NAME}")
        assert pl["bin"] == "kubectl-tspread"
        froms = [f["from"] for f in pl["files"]]
        assert "LICENSE" in froms and "kubectl-tspread" in froms
        for f in pl["files"]:
            assert f["from"] and f["to"] and os.path.normpath(f["to"]) == f["to"], f


# ---- scripts/release and the archive it builds ------------------------------------------

@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """Run scripts/release into a temp dir, against a temp copy of the manifest."""
    tmp = tmp_path_factory.mktemp("release")
    manifest = tmp / "krew-manifest.yaml"
    shutil.copy(MANIFEST, manifest)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "release"), "--out-dir", str(tmp / "dist"),
                          "--manifest", str(manifest)], capture_output=True, text=True, timeout=600,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, f"scripts/release failed:\n{out.stdout}\n{out.stderr}"
    archive = tmp / "dist" / ARCHIVE_NAME
    assert archive.is_file(), f"scripts/release did not write {archive}"
    # krew's layout: the archive unpacked in the store, a link to `bin` in ~/.krew/bin
    store = tmp / "krew" / "store" / "tspread" / f"v{__version__}"
    store.mkdir(parents=True)
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(archive) as tar:
        tar.extractall(store, **safe)
    bin_dir = tmp / "krew" / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl-tspread").symlink_to(store / "kubectl-tspread")
    # relative link to the link, as the manifest's caveats tell users to make
    (bin_dir / "kubectl_complete-tspread").symlink_to("kubectl-tspread")
    return {"tmp": tmp, "archive": archive, "manifest": manifest, "store": store, "bin": bin_dir}


def _launcher_env(release, python: str | None = None, extra_path: tuple[str, ...] = ()) -> dict[str, str]:
    # no venv on PATH, no VIRTUAL_ENV or PYTHONPATH: only the launcher and a bare interpreter
    return clean_env(release["tmp"], [release["bin"], *extra_path, "/usr/bin", "/bin"],
                     TSPREAD_PYTHON=python or base_python())


@pytest.mark.slow
def test_release_writes_the_archive_checksum_and_version_into_the_manifest(release):
    digest = hashlib.sha256(release["archive"].read_bytes()).hexdigest()
    written = load(release["manifest"])
    assert written["spec"]["version"] == f"v{__version__}"
    for pl in written["spec"]["platforms"]:
        assert pl["sha256"] == digest
        assert pl["uri"].endswith(f"/v{__version__}/{ARCHIVE_NAME}")
    # only the three release fields may change: layout and comments survive
    before = [line for line in MANIFEST.read_text().splitlines()
              if not re.match(r"\s*(- )?(version|uri|sha256):", line)]
    after = [line for line in release["manifest"].read_text().splitlines()
             if not re.match(r"\s*(- )?(version|uri|sha256):", line)]
    assert before == after


@pytest.mark.slow
def test_archive_holds_launcher_license_and_pure_python_lib(release):
    with tarfile.open(release["archive"]) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert members["kubectl-tspread"].mode & 0o111, "launcher must be executable"
    assert "LICENSE" in members and "lib/kubectl_tspread/__init__.py" in members
    compiled = [n for n in members if n.endswith((".so", ".pyd", ".dylib"))]
    assert not compiled, f"compiled files would tie the archive to one platform: {compiled[:5]}"
    assert not [n for n in members if "__pycache__" in n]
    for data in (ROOT / "kubectl_tspread" / "data").glob("*"):
        assert f"lib/kubectl_tspread/data/{data.name}" in members, f"package data {data.name} missing"
    # every `files` entry of the manifest must match something, or krew install fails
    for pl in load(release["manifest"])["spec"]["platforms"]:
        for f in pl["files"]:
            assert any(fnmatch.fnmatch(n, f["from"]) for n in members), f"nothing matches from: {f['from']}"


@pytest.mark.slow
def test_launcher_through_krew_symlink_shows_help_with_a_bare_python(release):
    out = run([release["bin"] / "kubectl-tspread", "--help"], _launcher_env(release))
    assert out.returncode == 0, out.stderr
    assert "kubectl tspread" in out.stdout and "distribution" in out.stdout
    assert out.stderr == ""


@pytest.mark.slow
def test_launcher_runs_the_demo_with_a_bare_python(release):
    if not (ROOT / "kubectl_tspread" / "data" / "demo-cluster.json").exists():
        pytest.skip("the demo cluster (kubectl_tspread/data/demo-cluster.json) is not in this tree yet")
    out = run([release["bin"] / "kubectl-tspread", "distribution", "--demo"], _launcher_env(release))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() and "Traceback" not in out.stderr


@pytest.mark.slow
def test_launcher_reads_a_live_cluster_with_the_vendored_client(release):
    with live_cluster(release["tmp"]) as kubeconfig:
        out = run([release["bin"] / "kubectl-tspread", "distribution", "deployment/web",
                   "--kubeconfig", kubeconfig, "-o", "json"], _launcher_env(release))
    assert out.returncode == 0, out.stderr
    report = yaml.safe_load(out.stdout)
    (workload,) = report["workloads"]
    assert (workload["kind"], workload["name"], workload["pods"]) == ("Deployment", "web", 3)
    (constraint,) = workload["constraints"]
    assert {d["value"]: d["pods"] for d in constraint["domains"]} == {"zone-a": 1, "zone-b": 2, "zone-c": 0}


@pytest.mark.slow
def test_launcher_without_a_suitable_python_says_what_to_install(release, tmp_path):
    # a PATH with the tools the launcher uses but no python at all
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("dirname", "readlink"):
        (tools / tool).symlink_to(shutil.which(tool))
    env = clean_env(release["tmp"], [release["bin"], tools])
    out = run([release["bin"] / "kubectl-tspread", "--help"], env)
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.startswith("error: ") and "3.10" in out.stderr and len(out.stderr.splitlines()) == 1


@pytest.mark.slow
def test_kubectl_discovers_the_krew_installed_plugin_and_completes_it(release):
    if not KUBECTL:
        pytest.skip(NO_KUBECTL)
    env = _launcher_env(release, extra_path=(os.path.dirname(KUBECTL),))
    listed = run([KUBECTL, "plugin", "list", "--name-only"], env)
    assert "kubectl-tspread" in listed.stdout.split(), listed.stdout + listed.stderr
    version = run([KUBECTL, "tspread", "--version"], env)
    assert version.returncode == 0 and __version__ in version.stdout, version.stderr
    completion = run([KUBECTL, "__complete", "tspread", ""], env)
    words = [line.split("\t")[0] for line in completion.stdout.splitlines()]
    assert "distribution" in words, completion.stdout + completion.stderr


def _minor_params():
    return [pytest.param(m, id=f"python3.{m}") for m in supported_minors()]


@pytest.mark.slow
@pytest.mark.parametrize("minor", _minor_params())
def test_archive_runs_on_every_declared_python(release, minor):
    python = python_of_minor(minor)
    if python is None:
        pytest.skip(f"no python3.{minor} on this machine")
    env = _launcher_env(release, python)
    out = run([release["bin"] / "kubectl-tspread", "--version"], env)
    assert out.returncode == 0 and __version__ in out.stdout, out.stderr
    with live_cluster(release["tmp"]) as kubeconfig:
        out = run([release["bin"] / "kubectl-tspread", "distribution", "--kubeconfig", kubeconfig], env)
    assert out.returncode == 0, out.stderr
    assert "web" in out.stdout


def test_selector_matching_helper_agrees_with_label_selector_semantics():
    # the overlap test is only as good as this helper
    cases = [
        ({"matchLabels": {"os": "linux"}}, {"os": "linux", "arch": "arm64"}, True),
        ({"matchLabels": {"os": "linux", "arch": "amd64"}}, {"os": "linux", "arch": "arm64"}, False),
        ({"matchExpressions": [{"key": "os", "operator": "In", "values": ["darwin", "linux"]}]},
         {"os": "darwin", "arch": "amd64"}, True),
        ({"matchExpressions": [{"key": "arch", "operator": "NotIn", "values": ["arm64"]}]},
         {"os": "darwin", "arch": "arm64"}, False),
    ]
    for selector, labels, want in cases:
        assert selector_matches(selector, labels) is want, (selector, labels)
    overlapping = [{"matchLabels": {"os": "linux"}}, {"matchLabels": {"os": "linux", "arch": "amd64"}}]
    assert any(sum(selector_matches(s, {"os": o, "arch": a}) for s in overlapping) > 1
               for o, a in itertools.product(["linux"], ["amd64"]))
