"""Acceptance rehearsal for `drain-safe` plans (issue 4, "Done when"), on `--from-file` dumps only.

1. Named scenarios, one per finding code plus the safe cases: verdict, exit code (0 safe,
   3 unsafe), stranded pods and finding codes, all written out by hand.
2. An independent checker, `Replay`: it reads the raw dump and the plan's JSON and nothing
   else from the project (no engine, no model), plays every step marked safe — cordon, evict,
   put each replacement on its `predictedNode` — with its own small scheduler arithmetic
   (count + selfMatch - globalMin <= maxSkew over eligible domains, cordoned nodes still
   domains under nodeTaintsPolicy Ignore; cpu and pod-count fit; no cordoned node), and
   asserts that each predicted node is feasible, no DoNotSchedule constraint ends a step past
   maxSkew (or past a violation that was already there), no PDB is asked for more than it
   allows, and a safe plan leaves its nodes empty. At the first unsafe step it checks the
   other direction: a replacement the plan calls stranded has no feasible node.
3. The same checker on random small clusters written as dumps (hypothesis).

The checker covers the objects the dumps here use: matchLabels selectors, the cordon taint,
no node affinity or pod affinity, cpu as the only scarce resource besides the pod count.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acceptance_dumps as ad
from apiobjects import HOST, ZONE, as_dump, spread_obj
from kubectl_tspread.cli import main

CORDON_KEY = "node.kubernetes.io/unschedulable"
SCHEDULING_REASONS = {"CordonedDomainTrap", "HostnameSpreadFull", "NoCapacity", "SpreadBlocked"}


def run(capsys, *args: str) -> tuple[int, dict]:
    with pytest.raises(SystemExit) as exc:
        main([*args, "-o", "json"])
    out, err = capsys.readouterr()
    assert err == "", err
    return exc.value.code, json.loads(out)


def load(name: str) -> dict:
    with open(ad.path(f"drain/{name}.json"), encoding="utf-8") as fh:
        return json.load(fh)


# ---- the independent checker ----------------------------------------------------------------------

def millicores(q: str | int | float) -> int:
    s = str(q)
    return int(s[:-1]) if s.endswith("m") else int(round(float(s) * 1000))


def matches(selector: dict | None, labels: dict) -> bool:
    if selector is None:
        return False
    assert set(selector) <= {"matchLabels"}, "the checker reads matchLabels selectors only"
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


@dataclass
class CPod:
    ns: str
    name: str
    labels: dict
    node: str
    cpu: int
    spec: dict  # the pod spec: its constraints and owner make the replacement
    workload: str  # "Kind/name" of the controller, "" when unmanaged
    replacement: bool = False


@dataclass
class CNode:
    name: str
    labels: dict
    cordoned: bool
    cpu: int
    pods: int


@dataclass
class Replay:
    """A tiny scheduler over the raw dump: just enough arithmetic to check a drain plan."""

    nodes: dict[str, CNode] = field(default_factory=dict)
    pods: list[CPod] = field(default_factory=list)
    pdbs: list[dict] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)  # "ns/ReplicaSet/name" -> "Deployment/name"

    @classmethod
    def from_dump(cls, doc: dict) -> "Replay":
        r = cls()
        for o in doc["items"]:
            kind, meta = o["kind"], o["metadata"]
            if kind == "Node":
                spec = o.get("spec", {})
                cordoned = bool(spec.get("unschedulable")) or any(t["key"] == CORDON_KEY for t in spec.get("taints", []))
                alloc = o["status"]["allocatable"]
                r.nodes[meta["name"]] = CNode(meta["name"], dict(meta.get("labels", {})), cordoned,
                                              millicores(alloc["cpu"]), int(alloc["pods"]))
            elif kind == "PodDisruptionBudget":
                r.pdbs.append(o)
            elif kind in ("ReplicaSet", "StatefulSet", "Deployment", "DaemonSet"):
                for ref in meta.get("ownerReferences", []):
                    r.owners[f"{meta.get('namespace', 'default')}/{kind}/{meta['name']}"] = f"{ref['kind']}/{ref['name']}"
        for o in doc["items"]:
            if o["kind"] == "Pod" and o["spec"].get("nodeName") and o["status"].get("phase") not in ("Succeeded", "Failed"):
                r.pods.append(r._pod(o))
        return r

    def _pod(self, o: dict) -> CPod:
        meta, spec = o["metadata"], o["spec"]
        ns = meta.get("namespace", "default")
        assert "affinity" not in spec and "nodeSelector" not in spec, "the checker has no node affinity"
        cpu = sum(millicores(c.get("resources", {}).get("requests", {}).get("cpu", "0")) for c in spec["containers"])
        ref = next((x for x in meta.get("ownerReferences", []) if x.get("controller")), None)
        workload = ""
        if ref is not None:
            workload = self.owners.get(f"{ns}/{ref['kind']}/{ref['name']}", f"{ref['kind']}/{ref['name']}")
        return CPod(ns, meta["name"], dict(meta.get("labels", {})), spec["nodeName"], cpu, spec, workload)

    # -- the scheduler's arithmetic

    def hard(self, pod: CPod) -> list[dict]:
        return [c for c in pod.spec.get("topologySpreadConstraints", []) if c["whenUnsatisfiable"] == "DoNotSchedule"]

    def selector(self, pod: CPod, c: dict) -> dict | None:
        """labelSelector AND key=<pod's value> for each matchLabelKeys key the pod carries."""
        sel = c.get("labelSelector")
        if sel is None:
            return None
        extra = {k: pod.labels[k] for k in c.get("matchLabelKeys", []) if k in pod.labels}
        return {"matchLabels": {**(sel.get("matchLabels") or {}), **extra}}

    def domains(self, pod: CPod, c: dict) -> dict[str, int]:
        """Matching pods per domain over the nodes that count: every node with all hard keys,
        cordoned ones too unless nodeTaintsPolicy is Honor (the pod tolerates no cordon)."""
        keys = {h["topologyKey"] for h in self.hard(pod)}
        honor = c.get("nodeTaintsPolicy") == "Honor"
        out: dict[str, int] = {}
        eligible = {}
        for n in self.nodes.values():
            if keys <= set(n.labels) and not (honor and n.cordoned):
                out.setdefault(n.labels[c["topologyKey"]], 0)
                eligible[n.name] = n.labels[c["topologyKey"]]
        for p in self.pods:
            if p.ns == pod.ns and p.node in eligible and matches(self.selector(pod, c), p.labels):
                out[eligible[p.node]] += 1
        return out

    def global_min(self, c: dict, counts: dict[str, int]) -> int:
        if not counts or len(counts) < c.get("minDomains", 1):
            return 0
        return min(counts.values())

    def why_not(self, pod: CPod, node: str) -> str | None:
        """None when `pod` may go to `node`, else what refuses it."""
        n = self.nodes[node]
        if n.cordoned:
            return "cordoned"
        here = [p for p in self.pods if p.node == node]
        if len(here) + 1 > n.pods:
            return "too many pods"
        if sum(p.cpu for p in here) + pod.cpu > n.cpu:
            return "cpu"
        for c in self.hard(pod):
            key = c["topologyKey"]
            if key not in n.labels:
                return f"missing {key}"
            counts = self.domains(pod, c)
            self_match = 1 if matches(self.selector(pod, c), pod.labels) else 0
            if counts.get(n.labels[key], 0) + self_match - self.global_min(c, counts) > c["maxSkew"]:
                return f"spread {key}"
        return None

    def key(self, p: CPod, c: dict) -> tuple[str, str, str, str]:
        """Which constraint: matchLabelKeys make one per ReplicaSet revision of a workload."""
        return p.ns, p.workload, c["topologyKey"], json.dumps(self.selector(p, c), sort_keys=True)

    def skews(self) -> dict[tuple[str, str, str, str], int]:
        """Skew of every DoNotSchedule constraint in use, by `key`."""
        out = {}
        for p in self.pods:
            for c in self.hard(p):
                counts = self.domains(p, c)
                if counts:
                    out[self.key(p, c)] = max(counts.values()) - self.global_min(c, counts)
        return out

    def max_skews(self) -> dict[tuple[str, str, str, str], int]:
        return {self.key(p, c): c["maxSkew"] for p in self.pods for c in self.hard(p)}

    # -- playing a plan

    def take(self, e: dict) -> CPod:
        """Remove the pod an eviction names: a pod of the dump, or a replacement placed earlier."""
        for i, p in enumerate(self.pods):
            if (p.ns, p.name) == (e["namespace"], e["name"]) and not p.replacement:
                return self.pods.pop(i)
        for i, p in enumerate(self.pods):
            if p.replacement and p.ns == e["namespace"] and p.workload == e["workload"] and p.node == e["node"]:
                return self.pods.pop(i)
        raise AssertionError(f"the plan evicts {e['namespace']}/{e['name']} from {e['node']}: no such pod there")

    def check_pdbs(self, step: dict, evicted: list[CPod]) -> None:
        for b in self.pdbs:
            ns = b["metadata"].get("namespace", "default")
            covered = [p for p in evicted if p.ns == ns and matches(b["spec"]["selector"], p.labels)]
            assert len(covered) <= b["status"].get("disruptionsAllowed", 0), (step["step"], b["metadata"]["name"])
        for p in evicted:
            n = sum(1 for b in self.pdbs if b["metadata"].get("namespace", "default") == p.ns
                    and matches(b["spec"]["selector"], p.labels))
            assert n <= 1, f"{p.name} is under {n} PDBs: the Eviction API refuses it"

    def play_step(self, step: dict, limits: dict, strict: bool) -> None:
        """One step. `strict`: the step is marked safe, so every placement and skew must hold;
        otherwise only check that what the plan strands really has nowhere to go."""
        for name in {*step["cordon"], *step["nodes"]}:
            self.nodes[name].cordoned = True
        evicted = []
        for e in step["evictions"]:
            p = self.take(e)
            assert p.node in step["nodes"], (step["step"], e)
            assert e["replaced"] is bool(p.workload), e  # unmanaged pods get no replacement
            evicted.append((e, p))
        if strict:
            self.check_pdbs(step, [p for _, p in evicted])
        for e, p in evicted:
            if not e["replaced"]:
                continue
            new = CPod(p.ns, p.name + "~r", p.labels, "", p.cpu, p.spec, p.workload, replacement=True)
            target = e["predictedNode"]
            if target is None:
                assert not strict, (step["step"], e)
                blocked = {n: self.why_not(new, n) for n in self.nodes}
                assert all(blocked.values()), f"stranded {p.name} fits {[n for n, w in blocked.items() if not w]}"
                continue
            assert self.why_not(new, target) is None, (step["step"], e["name"], target, self.why_not(new, target))
            new.node = target
            self.pods.append(new)
        for name in step.get("deleteNodes", []):
            self.nodes.pop(name)
            self.pods = [p for p in self.pods if p.node != name]
        if strict:
            for k, skew in self.skews().items():
                assert skew <= limits.get(k, skew), (step["step"], k, skew)


def replay(doc: dict, plan: dict) -> Replay:
    """Play every step marked safe, then the first unsafe one loosely; returns the final state."""
    r = Replay.from_dump(doc)
    before = r.skews()
    # a constraint already past maxSkew may stay there but not get worse
    limits = {k: max(m, before.get(k, 0)) for k, m in r.max_skews().items()}
    for step in plan["steps"]:
        r.play_step(step, limits, strict=step["safe"])
        if not step["safe"]:
            break
    if plan["safe"]:
        assert all(s["safe"] for s in plan["steps"]) and not plan["stranded"]
        # drained: only DaemonSet pods (left in place by --ignore-daemonsets) remain on the nodes
        left = [p.name for p in r.pods if p.node in plan["nodes"] and not p.workload.startswith("DaemonSet/")]
        assert not left, left
    return r


# ---- 1. named scenarios ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    dump: str
    args: tuple[str, ...]
    safe: bool
    stranded: tuple[tuple[str, int, str], ...] = ()  # (pod name or '<replacement>', step, reason)
    findings: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (pod, reason) over all steps


ZONE_A = ("--domain", f"{ZONE}=a")
CASES = {
    # cordon-first: a1 and a2 are cordoned at step 1, so a1's replacement strands there and then
    # (it used to go to a2 and strand again, evicted at step 2) and no replacement moves twice
    "whole zone a drained under Ignore: each node's pod strands at its own step": Case(
        "zone-ignore", ZONE_A, False,
        (("web-5d8f-a1-0", 1, "CordonedDomainTrap"), ("web-5d8f-a2-0", 2, "CordonedDomainTrap")),
        ("CordonedDomainTrap",)),
    "whole zone a drained under Honor: zone a stops being a domain, b and c take the pods": Case(
        "zone-honor", ZONE_A, True),
    "given order c2 b1 a1 puts the skew at 3; b1 first and c2 (the minimum's zone) last is safe": Case(
        "order", ("c2", "b1", "a1"), True, findings=("OrderMatters",)),
    "PDB with maxUnavailable 0 never allows the eviction": Case(
        "pdb-max-unavailable-0", ("a1",), False, (("web-5d8f-a1-0", 1, "PdbBlocks"),), ("PdbBlocks",),
        (("web-5d8f-a1-0", "PdbBlocks"),)),
    "a pod under two PDBs is refused by the Eviction API": Case(
        "two-pdbs", ("a1",), False, (("web-5d8f-a1-0", 1, "MultiplePdbs"),), ("MultiplePdbs",),
        (("web-5d8f-a1-0", "MultiplePdbs"),)),
    "hostname maxSkew 1, every other node already holds one pod": Case(
        "hostname-full", ("a1",), False, (("web-5d8f-a1-0", 1, "HostnameSpreadFull"),), ("HostnameSpreadFull",)),
    "bare pod without --force": Case(
        "unmanaged", ("a1",), False, findings=("UnmanagedPod",), skipped=(("debug-shell", "UnmanagedPod"),)),
    "bare pod with --force is evicted without a replacement": Case("unmanaged", ("a1", "--force"), True),
    "emptyDir pod without --delete-emptydir-data": Case(
        "emptydir", ("a1",), False, findings=("LocalStorage",), skipped=(("cache-5d8f-a1-0", "LocalStorage"),)),
    "emptyDir pod with --delete-emptydir-data": Case("emptydir", ("a1", "--delete-emptydir-data"), True),
    "DaemonSet pod without --ignore-daemonsets": Case(
        "daemonset", ("a1",), False, findings=("DaemonSetPod",), skipped=(("node-agent-a1", "DaemonSetPod"),)),
    "DaemonSet pod with --ignore-daemonsets stays, the web pod moves": Case(
        "daemonset", ("a1", "--ignore-daemonsets"), True, skipped=(("node-agent-a1", "DaemonSetPod"),)),
    "3-cpu pod, the other node has 2 of 4 cpu free": Case(
        "no-capacity", ("a1",), False, (("big-5d8f-a1-0", 1, "NoCapacity"),), ("NoCapacity",)),
    "zone and hostname spread, one node per zone, one at a time": Case("mixed", ("a1", "b1", "c1"), True),
    "zone and hostname spread, one node per zone, all at once": Case(
        "mixed", ("a1", "b1", "c1", "--max-parallel", "3"), True),
}


def test_every_drain_dump_has_a_scenario():
    assert {c.dump for c in CASES.values()} == set(ad.DRAIN)


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_drain_plan_verdict_stranded_and_findings(capsys, case):
    code, plan = run(capsys, "drain-safe", *case.args, "--from-file", ad.path(f"drain/{case.dump}.json"))
    assert (code, plan["safe"]) == ((0, True) if case.safe else (3, False))
    assert plan["verdict"].startswith("SAFE" if case.safe else "UNSAFE")
    originals = {p["metadata"]["name"] for p in load(case.dump)["items"] if p["kind"] == "Pod"}
    got = sorted((s["name"] if s["name"] in originals else "<replacement>", s["step"], s["reason"])
                 for s in plan["stranded"])
    assert got == sorted(case.stranded)
    assert sorted({f["code"] for f in plan["findings"]}) == sorted(case.findings)
    assert sorted((k["name"], k["reason"]) for s in plan["steps"] for k in s["skipped"]) == sorted(case.skipped)
    for f in plan["findings"]:
        if f.get("severity") == "error":
            assert any(r["verified"] for r in f["remedies"]), f  # every blocking finding has a proven way out
    replay(load(case.dump), plan)


def test_order_case_drains_the_minimum_zone_last(capsys):
    _, plan = run(capsys, "drain-safe", "c2", "b1", "a1", "--from-file", ad.path("drain/order.json"))
    assert [s["nodes"] for s in plan["steps"]][-1] == ["c2"]
    (info,) = plan["findings"]
    assert info["severity"] == "info"


def test_checker_catches_a_plan_that_places_a_replacement_where_spread_forbids(capsys):
    """The checker must be able to fail: move the safe Honor plan's last replacement into the
    zone that already holds one more pod than the other (the first step's replacement's)."""
    _, plan = run(capsys, "drain-safe", *ZONE_A, "--from-file", ad.path("drain/zone-honor.json"))
    bad = copy.deepcopy(plan)
    last = bad["steps"][-1]["evictions"]
    assert last[-1]["predictedNode"][0] != bad["steps"][0]["evictions"][0]["predictedNode"][0]  # another zone
    last[-1]["predictedNode"] = bad["steps"][0]["evictions"][0]["predictedNode"]
    with pytest.raises(AssertionError):
        replay(load("zone-honor"), bad)


def test_checker_catches_a_stranded_pod_that_would_fit(capsys):
    _, plan = run(capsys, "drain-safe", *ZONE_A, "--from-file", ad.path("drain/zone-honor.json"))
    bad = copy.deepcopy(plan)
    bad["steps"][-1]["safe"] = False
    bad["steps"][-1]["evictions"][0]["predictedNode"] = None
    with pytest.raises(AssertionError, match="fits"):
        replay(load("zone-honor"), bad)


# ---- 3. random small clusters ---------------------------------------------------------------------

@st.composite
def clusters(draw):
    """2-3 zones of 1-3 nodes, a few already cordoned; 1-2 Deployments with a zone or hostname
    DoNotSchedule constraint (maxSkew 1-2, Ignore or Honor, sometimes minDomains, sometimes
    matchLabelKeys [pod-template-hash] with a second, older ReplicaSet mid-rollout); pods placed
    where they fit; maybe a PDB; 1-3 targets."""
    nodes = []
    for z in "abc"[:draw(st.integers(2, 3))]:
        for i in range(1, draw(st.integers(1, 3)) + 1):
            cordoned = draw(st.integers(0, 5)) == 0
            nodes.append(ad.node_obj(f"{z}{i}", zone=z, cpu=str(draw(st.sampled_from([1, 2, 4]))),
                                     pods=str(draw(st.integers(1, 4))), unschedulable=cordoned,
                                     taints=[ad.CORDON_TAINT] if cordoned else ()))
    free = {n["metadata"]["name"]: [millicores(n["status"]["allocatable"]["cpu"]),
                                    int(n["status"]["allocatable"]["pods"])] for n in nodes}
    objs: list[dict] = list(nodes)
    for w, app in enumerate(["web", "api"][:draw(st.integers(1, 2))]):
        key = draw(st.sampled_from([ZONE, ZONE, HOST]))
        extra = {}
        if draw(st.integers(0, 3)) == 0:
            extra["minDomains"] = draw(st.integers(2, 4))
        if draw(st.booleans()):
            extra["matchLabelKeys"] = ["pod-template-hash"]
        c = spread_obj(key, draw(st.integers(1, 2)), match_labels={"app": app},
                       nodeTaintsPolicy=draw(st.sampled_from(["Ignore", "Honor"])), **extra)
        cpu = draw(st.sampled_from([0, 250, 500, 1000]))
        placement: dict[str, int] = defaultdict(int)
        for name in free:
            for _ in range(draw(st.integers(0, 2))):
                if free[name][0] >= cpu and free[name][1] >= 1:
                    free[name][0] -= cpu
                    free[name][1] -= 1
                    placement[name] += 1
        # an unfinished rolling update leaves pods of an older ReplicaSet beside the new one's
        revisions = [f"{w}f{w}c"] + ([f"{w}old"] if draw(st.booleans()) else [])
        for r, rs_hash in enumerate(revisions):
            share = {n: (k + len(revisions) - 1 - r) // len(revisions) for n, k in placement.items()}
            rs = ad.rs_pods(app, {n: k for n, k in share.items() if k}, [c], cpu=f"{cpu}m", rs_hash=rs_hash)
            objs += rs if r == 0 else rs[1:]  # one Deployment, one ReplicaSet per revision
        if draw(st.booleans()):
            healthy = sum(placement.values())
            objs.append(ad.pdb_obj(app, app, draw(st.integers(1, 2)), healthy, maxUnavailable=1))
    names = list(free)
    targets = draw(st.lists(st.sampled_from(names), min_size=1, max_size=min(3, len(names) - 1), unique=True))
    return as_dump(objs), targets, draw(st.integers(1, 2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(clusters())
def test_random_clusters_every_step_marked_safe_replays_safely(capsys, tmp_path, case):
    doc, targets, parallel = case
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    code, plan = run(capsys, "drain-safe", *targets, "--max-parallel", str(parallel), "--from-file", str(path))
    assert code == (0 if plan["safe"] else 3)
    for s in plan["steps"]:
        assert len(s["nodes"]) <= parallel
    replay(doc, plan)
