"""The benchmark harness at a tiny size, end to end: generate, serve, read through the live path.

Asserts answers, never timings: the per-zone counts `distribution -A` prints for each
generated workload equal the counts computed here straight from the generated objects,
and the harness itself (cases, floor replay, report) completes on the same cluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter

import pytest
from click.testing import CliRunner

from bench import generate, runner
from bench.server import make_server, write_kubeconfig
from kubectl_tspread.cli import cli

ZONE_KEY = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def tiny_cluster(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("bench") / "cluster-tiny")
    generate.generate(generate.SIZES["tiny"], directory)
    return directory


@pytest.fixture(scope="module")
def served(tiny_cluster):
    server = make_server(tiny_cluster)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield url, write_kubeconfig(os.path.join(tiny_cluster, "kubeconfig"), url)
    server.shutdown()
    server.server_close()


def _items(directory: str, kind: str) -> list[dict]:
    with open(os.path.join(directory, f"{kind}.items"), "rb") as f:
        return [json.loads(line) for line in f]


def expected_zone_counts(directory: str) -> dict[tuple[str, str], Counter]:
    """(namespace, deployment) -> zone -> pods the scheduler counts, for Deployments with a zone constraint.

    Counted: bound, not terminating, not finished, carrying the Deployment's labels.
    Every node is eligible (no node affinity; nodeTaintsPolicy defaults to Ignore).
    """
    zone_of = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE_KEY] for n in _items(directory, "Node")}
    out: dict[tuple[str, str], Counter] = {}
    pods = _items(directory, "Pod")
    for d in _items(directory, "Deployment"):
        spread = d["spec"]["template"]["spec"].get("topologySpreadConstraints") or []
        if not any(c["topologyKey"] == ZONE_KEY for c in spread):
            continue
        ns, labels = d["metadata"]["namespace"], d["spec"]["selector"]["matchLabels"]
        counts = Counter({z: 0 for z in zone_of.values()})
        for p in pods:
            m = p["metadata"]
            if (m["namespace"] == ns and all(m["labels"].get(k) == v for k, v in labels.items())
                    and p["spec"].get("nodeName") and "deletionTimestamp" not in m
                    and p["status"]["phase"] not in ("Succeeded", "Failed")):
                counts[zone_of[p["spec"]["nodeName"]]] += 1
        out[(ns, d["metadata"]["name"])] = counts
    return out


def test_generated_cluster_has_what_the_benchmark_needs(tiny_cluster):
    with open(os.path.join(tiny_cluster, "summary.json")) as f:
        summary = json.load(f)
    pods = _items(tiny_cluster, "Pod")
    assert len(pods) == generate.SIZES["tiny"].pods == summary["kinds"]["Pod"]
    assert sum(1 for p in pods if not p["spec"].get("nodeName")) == generate.SIZES["tiny"].pending
    phases = {p["status"]["phase"] for p in pods}
    assert phases >= {"Running", "Pending"} and phases & {"Succeeded", "Failed"}, "finished pods test the filter"
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
    assert keys == sorted(keys), "lists come in the API server's namespace/name order"
    assert len(set(keys)) == len(keys), "one pod per namespace and name"
    assert len({p["metadata"]["uid"] for p in pods}) == len(pods)


def test_nodes_list_the_images_of_the_pods_they_run(tiny_cluster):
    """ImageLocality has images to score: each node lists those of its pods (at most 50, the
    largest first, as a kubelet does), each name of one size on every node."""
    listed = {n["metadata"]["name"]: n["status"]["images"] for n in _items(tiny_cluster, "Node")}
    sizes: dict[str, int] = {}
    for images in listed.values():
        assert len(images) <= 50 and [i["sizeBytes"] for i in images] == sorted((i["sizeBytes"] for i in images),
                                                                                reverse=True)
        for image in images:
            for name in image["names"]:
                assert sizes.setdefault(name, image["sizeBytes"]) == image["sizeBytes"]
    held = {node: {name for i in images for name in i["names"]} for node, images in listed.items()}
    for p in _items(tiny_cluster, "Pod"):
        node = p["spec"].get("nodeName")
        if node and len(listed[node]) < 50:
            assert {c["image"] for c in p["spec"]["containers"]} <= held[node]


def test_a_pod_name_drawn_twice_gets_the_next_free_last_letter():
    rows = [("kube-system", "log-agent-bcdfb", -1, "n1", "Running", False),
            ("kube-system", "log-agent-bcdfb", -1, "n2", "Running", False),
            ("kube-system", "log-agent-bcdfc", -1, "n3", "Running", False),
            ("team-00", "log-agent-bcdfb", 3, "n4", "Running", False)]
    out = generate._unique_names(rows)
    assert [r[1] for r in out] == ["log-agent-bcdfb", "log-agent-bcdfc", "log-agent-bcdfd", "log-agent-bcdfb"]
    assert [r[2:] for r in out] == [r[2:] for r in rows]


def test_generation_is_deterministic(tiny_cluster, tmp_path):
    again = str(tmp_path / "again")
    generate.generate(generate.SIZES["tiny"], again)
    for kind in ("Pod", "Node", "Deployment"):
        with open(os.path.join(tiny_cluster, f"{kind}.items"), "rb") as a, \
                open(os.path.join(again, f"{kind}.items"), "rb") as b:
            assert a.read() == b.read(), kind


def test_distribution_all_namespaces_live_counts_match_the_generated_objects(tiny_cluster, served):
    _, kubeconfig = served
    result = CliRunner().invoke(cli, ["distribution", "-A", "-o", "json", "--kubeconfig", kubeconfig])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    seen = {}
    for w in report["workloads"]:
        for c in w["constraints"]:
            if c["topologyKey"] == ZONE_KEY and not c["implicit"]:
                seen[(w["namespace"], w["name"])] = Counter({d["value"]: d["pods"] for d in c["domains"]})
    expected = expected_zone_counts(tiny_cluster)
    assert sum(1 for v in expected.values() if sum(v.values())) >= 2, "bound workloads with zone constraints"
    assert seen == expected


def test_server_filters_finished_pods_and_pages_like_the_api(served):
    import urllib.request

    url, _ = served
    fields = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"
    names, token, pages = [], "", 0
    while True:
        q = f"{url}/api/v1/pods?limit=50&fieldSelector={fields}" + (f"&continue={token}" if token else "")
        with urllib.request.urlopen(q) as resp:
            page = json.load(resp)
        names += [i["metadata"]["name"] for i in page["items"]]
        pages += 1
        token = page["metadata"].get("continue")
        if not token:
            break
    assert pages == -(-len(names) // 50) and len(names) == len(set(names))
    assert len(names) == generate.SIZES["tiny"].pods - generate.SIZES["tiny"].pods // 200


def test_harness_runs_a_case_with_its_floor_and_reports_it(tmp_path, capsys):
    rc = runner.main(["--sizes", "tiny", "--only", "distribution-A,no-such-case", "--runs", "1", "--no-write",
                      "--cache-dir", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("distribution -A"))
    assert " tiny " in row and "failed" not in row
    assert "distribution -A [tiny]" in out  # the target line, judged at the only size run
    with open(tmp_path / "cluster-tiny" / "requests-tiny-distribution-A.json") as f:
        replayed = json.load(f)
    assert any(t.startswith("/api/v1/pods?") for t in replayed)


def test_only_option_names_every_case(tiny_cluster, tmp_path):
    from bench.cases import fixed_cases, sized_cases

    from bench.cases import trap_cases

    cases = sized_cases(tiny_cluster, "kubeconfig", "dump.json", False, None, str(tmp_path)) + fixed_cases(None) \
        + trap_cases("kubeconfig", None)
    assert sorted(c.name for c in cases) == sorted(runner.CASE_NAMES)


def test_the_trap_cluster_traps_every_zone_spread_workload_of_a_drained_zone(tmp_path):
    """The trap size's shape at a tiny scale: every Deployment zone-spread with DoNotSchedule,
    maxSkew 1 and no nodeTaintsPolicy, no pending pods, and a whole-zone drain that is UNSAFE
    with a CordonedDomainTrap for every Deployment (or the PDB that blocks it first)."""
    size = generate.Size("trap-tiny", 30, 900, 0, modes=generate.SIZES["trap"].modes)
    directory = str(tmp_path / "cluster-trap-tiny")
    generate.generate(size, directory)
    deployments = _items(directory, "Deployment")
    for d in deployments:
        (c,) = d["spec"]["template"]["spec"]["topologySpreadConstraints"]
        assert (c["topologyKey"], c["whenUnsatisfiable"], c["maxSkew"]) == (ZONE_KEY, "DoNotSchedule", 1)
        assert "nodeTaintsPolicy" not in c
    assert all(p["spec"].get("nodeName") for p in _items(directory, "Pod"))
    server = make_server(directory)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        kubeconfig = write_kubeconfig(os.path.join(directory, "kubeconfig"), f"http://127.0.0.1:{server.server_address[1]}")
        got = subprocess.run([sys.executable, "-m", "kubectl_tspread", "drain-safe", "--domain", f"{ZONE_KEY}=zone-b",
                              "--ignore-daemonsets", "--delete-emptydir-data", "--kubeconfig", kubeconfig, "-o", "json"],
                             capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    assert got.returncode == 3, got.stderr  # UNSAFE
    doc = json.loads(got.stdout)
    def having(code: str) -> set[str]:
        return {f["workload"] for f in doc["findings"] if f["code"] == code}

    # a workload whose budget stops its evictions first is blocked by the PDB before the trap
    trapped = having("CordonedDomainTrap")
    assert trapped and trapped | having("PdbBlocks") == {f"Deployment/{d['metadata']['name']}" for d in deployments}


@pytest.mark.parametrize("asked, warmup, runs", [
    (5, 0.0, 5),  # a case without a warm-up (a baseline) keeps what was asked
    (5, 29.0, 5),
    (5, 31.0, 3),  # over half a minute: three
    (3, 125.0, 3),  # minutes (a whole zone at 150k pods): still three, a median needs them
    (1, 125.0, 1),  # --runs 1 is honoured
])
def test_long_commands_still_get_a_median_of_three(asked, warmup, runs):
    assert runner._runs_for(asked, warmup) == runs
