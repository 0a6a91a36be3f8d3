"""krew-manifest.yaml against krew-index's rules, and the archive scripts/release builds.

The rules come from krew's manifest documentation and its validator: apiVersion and kind,
a safe lowercase name, a v-prefixed semantic version, a one-line short description, a
non-empty selector per platform using only the keys os and arch, a uri, a lowercase
64-hex sha256, bin, and files whose `from`/`to` are set. krew-index reviewers add: short
description of a few words, description wrapped and free of usage examples, caveats for
what the user must install.

Each platform has an archive of its own (numpy and the other compiled dependencies are
wheels per platform and per CPython version); the one for this machine is built, unpacked
as krew does and run with a system python that has no numpy of its own.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.machinery
import importlib.util
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
from shipping import (KUBECTL, NO_KUBECTL, ROOT, UNSAFE_DRAIN, assert_runs_the_demo, base_python, clean_env,
                      live_cluster, python_of_minor, run, supported_minors)


def _load_release():
    """scripts/release as a module (the file has no .py suffix): its platform table and checks."""
    loader = importlib.machinery.SourceFileLoader("tspread_release", str(ROOT / "scripts" / "release"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


RELEASE = _load_release()
HOST = RELEASE.host_platform()
MANIFEST = ROOT / "krew-manifest.yaml"
REQUIRED_PLATFORMS = {(os_, arch) for os_ in ("linux", "darwin") for arch in ("amd64", "arm64")}
# every os/arch krew is released for: a platform must be matched by at most one selector
KREW_PLATFORMS = [(o, a) for o in ("linux", "darwin", "windows") for a in ("amd64", "arm64", "386", "arm", "ppc64le")]


def archive_name(platform: tuple[str, str]) -> str:
    return f"kubectl-tspread-v{__version__}-{platform[0]}-{platform[1]}.tar.gz"


def platform_of(entry: dict) -> tuple[str, str]:
    labels = entry["selector"]["matchLabels"]
    return labels["os"], labels["arch"]


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
        assert pl["uri"].startswith("https://")
        assert pl["uri"].endswith(f"/v{__version__}/{archive_name(platform_of(pl))}")
        assert pl["bin"] == "kubectl-tspread"
        froms = [f["from"] for f in pl["files"]]
        assert "LICENSE" in froms and "kubectl-tspread" in froms
        for f in pl["files"]:
            assert f["from"] and f["to"] and os.path.normpath(f["to"]) == f["to"], f


def test_each_platform_has_an_archive_of_its_own_that_scripts_release_builds(manifest):
    platforms = [platform_of(pl) for pl in manifest["spec"]["platforms"]]
    assert set(platforms) <= set(RELEASE.PLATFORMS), "scripts/release has no wheel platform for some entry"
    assert len({pl["uri"] for pl in manifest["spec"]["platforms"]}) == len(platforms)
    assert len({pl["sha256"] for pl in manifest["spec"]["platforms"]}) == len(platforms)


def test_caveats_and_readme_name_what_the_archive_carries(manifest):
    caveats = " ".join(manifest["spec"]["caveats"].split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    minors = list(RELEASE.SUPPORTED_MINORS)
    versions = f"3.{minors[0]} to 3.{minors[-1]}"
    assert versions in caveats and "numpy" in caveats
    assert f"glibc 2.{RELEASE.GLIBC_MINOR}" in readme and f"CPython {versions}" in readme
    for os_, arch in RELEASE.PLATFORMS:
        assert f"{os_}/{arch}" in readme


# ---- scripts/release's checks, on made-up files ----------------------------------------

def _elf(machine: int) -> bytes:
    return b"\x7fELF\x02\x01\x01" + bytes(11) + machine.to_bytes(2, "little") + bytes(40)


def _macho(cpu: int) -> bytes:
    return b"\xcf\xfa\xed\xfe" + cpu.to_bytes(4, "little") + bytes(24)


def _fat(*cpus: int) -> bytes:
    table = b"".join(c.to_bytes(4, "big") + bytes(16) for c in cpus)
    return b"\xca\xfe\xba\xbe" + len(cpus).to_bytes(4, "big") + table


@pytest.mark.parametrize("data, runs_on", [
    (_elf(62), {("linux", "amd64")}),
    (_elf(183), {("linux", "arm64")}),
    (_elf(40), set()),  # arm: no platform the archives are built for
    (_macho(0x01000007), {("darwin", "amd64")}),
    (_macho(0x0100000C), {("darwin", "arm64")}),
    (_fat(0x01000007, 0x0100000C), {("darwin", "amd64"), ("darwin", "arm64")}),
    (b"import sys\n", None),
], ids=["elf x86-64", "elf aarch64", "elf arm", "mach-o x86-64", "mach-o arm64", "universal2", "python"])
def test_release_reads_the_platform_of_a_compiled_file(data, runs_on):
    assert RELEASE.binary_platform(data) == runs_on


@pytest.mark.parametrize("files, problem", [
    ({"cp311/numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so": _elf(62)}, None),
    ({"cp311/numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so": _elf(183)}, "for linux/arm64"),
    ({"cp311/orjson/orjson.cpython-311-darwin.so": _fat(0x01000007, 0x0100000C)}, "for darwin/amd64, darwin/arm64"),
    ({"cp312/numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so": _elf(62)}, "outside lib/cp311/"),
    ({"yaml/_yaml.cpython-311-x86_64-linux-gnu.so": _elf(62)}, "outside lib/cp311/"),
    ({"cp311/numpy.libs/libopenblas.so": b"not a binary"}, "not an ELF or Mach-O file"),
    ({"click/__init__.py": b"pass\n"}, "holds no compiled file"),
], ids=["right", "wrong arch", "wrong os", "wrong python", "shared", "unreadable", "nothing compiled"])
def test_release_refuses_a_lib_with_binaries_of_another_platform_or_python(tmp_path, files, problem):
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    if problem is None:
        assert RELEASE.check_binaries(tmp_path, ("linux", "amd64")) == 1
        return
    with pytest.raises(RELEASE.ReleaseError, match=re.escape(problem)):
        RELEASE.check_binaries(tmp_path, ("linux", "amd64"))


def test_release_moves_up_only_what_every_python_shares(tmp_path):
    per_python = {}
    for minor in (10, 11):
        d = per_python[minor] = tmp_path / "work" / f"cp3{minor}"
        (d / "click").mkdir(parents=True)
        (d / "click" / "__init__.py").write_text("same\n")
        (d / "numpy").mkdir()
        (d / "numpy" / "__init__.py").write_text(f"built for 3.{minor}\n")
    (per_python[10] / "typing_extensions.py").write_text("only 3.10 needs it\n")
    lib = tmp_path / "lib"
    lib.mkdir()
    RELEASE.split_common(per_python, lib)
    assert sorted(p.relative_to(lib).as_posix() for p in lib.rglob("*") if p.is_file()) == [
        "click/__init__.py", "cp310/numpy/__init__.py", "cp310/typing_extensions.py", "cp311/numpy/__init__.py"]


def test_release_rewrites_only_the_platforms_it_built(tmp_path):
    manifest = tmp_path / "krew-manifest.yaml"
    shutil.copy(MANIFEST, manifest)
    built = {("linux", "arm64"): ("https://example.test/a.tar.gz", "a" * 64)}
    RELEASE.rewrite_manifest(manifest, __version__, built)
    before, after = load(), load(manifest)
    for old, new in zip(before["spec"]["platforms"], after["spec"]["platforms"], strict=True):
        want = built.get(platform_of(old), (old["uri"], old["sha256"]))
        assert (new["uri"], new["sha256"]) == want
    assert len(MANIFEST.read_text().splitlines()) == len(manifest.read_text().splitlines())


def test_release_refuses_a_platform_the_manifest_does_not_list(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "release"), "--platform", "windows/amd64",
                          "--out-dir", str(tmp_path), "--manifest", str(MANIFEST)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and out.stdout == "" and not list(tmp_path.iterdir())
    assert out.stderr.startswith("error: --platform windows/amd64: the manifest lists linux/amd64")
    assert len(out.stderr.splitlines()) == 1


# ---- scripts/release and the archive it builds ------------------------------------------

@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """Run scripts/release for this machine's platform into a temp dir, against a temp copy
    of the manifest, and unpack the archive as krew does. The wheels it downloads stay in
    ~/.cache/kubectl-tspread/pip: the first run downloads them, later runs do not."""
    if HOST is None:
        pytest.skip(f"scripts/release builds no archive for this machine ({sys.platform}/{os.uname().machine})")
    tmp = tmp_path_factory.mktemp("release")
    manifest = tmp / "krew-manifest.yaml"
    shutil.copy(MANIFEST, manifest)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "release"), "--platform", "/".join(HOST),
                          "--out-dir", str(tmp / "dist"), "--manifest", str(manifest)],
                         capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, f"scripts/release failed:\n{out.stdout}\n{out.stderr}"
    archive = tmp / "dist" / archive_name(HOST)
    assert archive.is_file(), f"scripts/release did not write {archive}"
    assert [p.name for p in (tmp / "dist").iterdir()] == [archive.name], "built more than this platform"
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


def system_python() -> str:
    """A python3 outside the test venv that cannot import numpy on its own: what the archive
    runs with must then come from the archive."""
    candidates = ["/usr/bin/python3", base_python(), *(python_of_minor(m) for m in supported_minors())]
    probe = "import importlib.util, sys; sys.exit(3 if importlib.util.find_spec('numpy') is None else 0)"
    for python in dict.fromkeys(c for c in candidates if c and os.access(c, os.X_OK)):
        out = subprocess.run([python, "-c", probe], env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                             capture_output=True, timeout=60)
        if out.returncode == 3:  # it runs, and finds no numpy
            return python
    pytest.fail(f"every python3 here imports numpy on its own ({candidates}); the test needs one that does not")


def _launcher_env(release, python: str | None = None, extra_path: tuple[str, ...] = ()) -> dict[str, str]:
    # no venv on PATH, no VIRTUAL_ENV or PYTHONPATH: only the launcher and a bare interpreter
    return clean_env(release["tmp"], [release["bin"], *extra_path, "/usr/bin", "/bin"],
                     TSPREAD_PYTHON=python or base_python())


@pytest.mark.slow
def test_release_writes_the_archive_checksum_and_version_into_the_manifest(release):
    digest = hashlib.sha256(release["archive"].read_bytes()).hexdigest()
    written, committed = load(release["manifest"]), load()
    assert written["spec"]["version"] == f"v{__version__}"
    for pl, old in zip(written["spec"]["platforms"], committed["spec"]["platforms"], strict=True):
        if platform_of(pl) == HOST:
            assert pl["sha256"] == digest
            assert pl["uri"].endswith(f"/v{__version__}/{archive_name(HOST)}")
        else:  # not built: left as it was
            assert (pl["uri"], pl["sha256"]) == (old["uri"], old["sha256"])
    # only the three release fields may change: layout and comments survive
    before = [line for line in MANIFEST.read_text().splitlines()
              if not re.match(r"\s*(- )?(version|uri|sha256):", line)]
    after = [line for line in release["manifest"].read_text().splitlines()
             if not re.match(r"\s*(- )?(version|uri|sha256):", line)]
    assert before == after


@pytest.mark.slow
def test_archive_holds_the_launcher_license_and_a_lib_per_python_for_this_platform(release):
    with tarfile.open(release["archive"]) as tar:
        members = {m.name: m for m in tar.getmembers()}
        headers = {name: tar.extractfile(m).read(64) for name, m in members.items()
                   if m.isfile() and name.endswith((".so", ".dylib"))}
    assert members["kubectl-tspread"].mode & 0o111, "launcher must be executable"
    assert "LICENSE" in members and "lib/kubectl_tspread/__init__.py" in members
    assert not [n for n in members if "__pycache__" in n]
    for data in (ROOT / "kubectl_tspread" / "data").glob("*"):
        assert f"lib/kubectl_tspread/data/{data.name}" in members, f"package data {data.name} missing"
    # one directory per CPython, each with its own numpy, orjson, msgspec and libyaml binding
    assert {n.split("/")[1] for n in members if re.match(r"lib/cp3\d+/", n)} == {
        f"cp3{m}" for m in RELEASE.SUPPORTED_MINORS}
    for minor in RELEASE.SUPPORTED_MINORS:
        for package in ("numpy", "orjson", "msgspec", "yaml"):
            assert f"lib/cp3{minor}/{package}/__init__.py" in members, f"{package} for 3.{minor} missing"
        native = [n for n in headers if n.startswith(f"lib/cp3{minor}/")]
        assert any(re.search(rf"/_multiarray_umath\.cpython-3{minor}-", n) for n in native), native[:5]
        assert any(re.search(rf"^lib/cp3{minor}/yaml/_yaml\.cpython-3{minor}-", n) for n in native), native[:5]
    # every binary is one this machine runs: ELF for its architecture, or Mach-O on macOS
    if HOST[0] == "linux":
        machine = {"amd64": 62, "arm64": 183}[HOST[1]]
        wrong = [n for n, h in headers.items() if h[:4] != b"\x7fELF" or int.from_bytes(h[18:20], "little") != machine]
    else:
        wrong = [n for n, h in headers.items() if h[:4] not in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")]
    assert headers and not wrong, wrong[:5]
    # every `files` entry of the manifest must match something, or krew install fails
    for pl in load(release["manifest"])["spec"]["platforms"]:
        for f in pl["files"]:
            assert any(fnmatch.fnmatch(n, f["from"]) for n in members), f"nothing matches from: {f['from']}"


@pytest.mark.slow
def test_archive_plans_an_unsafe_drain_and_explains_a_pending_pod_with_the_system_python(release):
    python = system_python()
    env = _launcher_env(release, python)
    assert run([python, "-c", "import numpy"], env).returncode != 0, f"{python} has numpy of its own"
    assert_runs_the_demo([release["bin"] / "kubectl-tspread"], env)


@pytest.mark.slow
def test_launcher_finds_the_system_python_on_path_by_itself(release):
    # no TSPREAD_PYTHON: python3 from PATH, as a user's shell gives it
    python = system_python()
    env = clean_env(release["tmp"], [release["bin"], os.path.dirname(python), "/usr/bin", "/bin"])
    out = run([release["bin"] / "kubectl-tspread", *UNSAFE_DRAIN], env)
    assert (out.returncode, out.stderr) == (3, ""), out.stderr
    assert out.stdout.startswith("UNSAFE: ")


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
def test_launcher_refuses_a_tspread_python_the_archive_has_no_build_for(release, tmp_path):
    # answers the launcher's version question as a CPython 3.9 would
    fake = tmp_path / "python3.9"
    fake.write_text("#!/bin/sh\necho cp39\n")
    fake.chmod(0o755)
    for python in (str(fake), str(tmp_path / "no-such-python")):
        out = run([release["bin"] / "kubectl-tspread", "--version"], _launcher_env(release, python))
        assert (out.returncode, out.stdout) == (1, "")
        assert out.stderr.startswith(f"error: TSPREAD_PYTHON={python} is not a CPython this archive carries")
        assert "3.10 3.11" in out.stderr and len(out.stderr.splitlines()) == 1


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
    # the numpy built for this Python
    drain = run([release["bin"] / "kubectl-tspread", *UNSAFE_DRAIN], env)
    assert (drain.returncode, drain.stderr) == (3, ""), drain.stderr
    assert drain.stdout.startswith("UNSAFE: ")


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
