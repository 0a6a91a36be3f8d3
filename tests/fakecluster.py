"""What a drain needs from a cluster, on top of `fakeapi.FakeApiServer` (additive: routes only).

- PATCH of a node (JSON merge patch, `dryRun=All` honoured): cordon and uncordon.
- POST `/api/v1/namespaces/{ns}/pods/{name}/eviction` with a policy/v1 Eviction, following
  kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go: 404 for a missing pod,
  direct deletion of pending/finished/terminating pods, 500 for a pod covered by more than
  one PDB, a not-Ready pod let through free while the budget is healthy, 429 with a
  `DisruptionBudget` cause when `status.disruptionsAllowed` is 0, otherwise the budget is
  decremented and the pod gets a deletionTimestamp. `dryRun` (query or deleteOptions)
  checks everything and changes nothing.
- A fake world that advances one tick per request (so a client that polls or retries
  drives it, with no background thread to race a test): terminating pods disappear after `termination_ticks`;
  a ReplicaSet controller recreates missing pods (new name, same labels including
  pod-template-hash, unbound); a deliberately simple scheduler — independent of tspread's
  engine — binds each pending pod to the least-loaded schedulable node of the zone with the
  fewest pods of its kind, honouring DoNotSchedule spread constraints by its own plain
  counting; bound pods turn Ready after `ready_ticks`; a PDB controller recomputes budgets.

Tests steer it through `paused`, `hold_pending`, `frozen_pdbs` and `on_tick` hooks.
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable

from fakeapi import COLLECTION, NAMED, SUBRESOURCE, FakeApiServer, Request, status_body

POD_RES = "/api/v1/pods"
NODE_RES = "/api/v1/nodes"
RS_RES = "/apis/apps/v1/replicasets"
PDB_RES = "/apis/policy/v1/poddisruptionbudgets"
ZONE = "topology.kubernetes.io/zone"

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


@dataclass
class EvictionRecord:
    namespace: str
    name: str
    dry_run: bool
    status: int


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _labels_match(selector: dict | None, labels: dict) -> bool:
    """A LabelSelector (matchLabels + matchExpressions); nil or empty matches nothing here,
    as the eviction code and this fake scheduler both treat it."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or ():
        key, op, vals = e["key"], e["operator"], set(e.get("values") or ())
        ok = {"In": key in labels and labels[key] in vals, "NotIn": labels.get(key) not in vals,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def _controller(pod: dict) -> dict | None:
    for ref in pod["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def _ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def _terminating(pod: dict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


class FakeCluster:
    def __init__(self, api: FakeApiServer, *, termination_ticks: int = 1, ready_ticks: int = 1,
                 pdb_controller: bool = True):
        self.api = api
        self.termination_ticks = termination_ticks
        self.ready_ticks = ready_ticks
        self.pdb_controller = pdb_controller
        self.paused = False  # freeze every controller (the API still answers)
        self.hold_pending: set[str] = set()  # "ns/name" prefixes the scheduler leaves alone
        self.frozen_pdbs: set[str] = set()  # "ns/name" of PDBs whose status tests set by hand
        self.on_tick: list[Callable[["FakeCluster"], None]] = []
        self.evictions: list[EvictionRecord] = []
        self.ticks = 0
        self._age: dict[tuple[str, str], int] = {}  # pod key -> ticks since deletion / binding
        self._seq = itertools.count(1)
        self._templates: dict[str, dict] = {}  # ReplicaSet uid -> a pod to clone
        api.add_route("GET", COLLECTION, lambda s, r, m: self._ticked(FakeApiServer._list, r, m))
        api.add_route("GET", NAMED, lambda s, r, m: self._ticked(FakeApiServer._get, r, m))
        # writes tick too: a client backing off on 429s must see budgets come back
        api.add_route("PATCH", NAMED, lambda s, r, m: self._ticked(lambda _, r2, m2: self._patch(r2, m2), r, m))
        api.add_route("POST", SUBRESOURCE, lambda s, r, m: self._ticked(lambda _, r2, m2: self._evict(r2, m2), r, m))

    # ---- reading the store ---------------------------------------------------------------

    def objs(self, resource: str, namespace: str | None = None) -> list[dict]:
        return [o for (r, ns, _), o in sorted(self.api.objects.items())
                if r == resource and (namespace is None or ns == namespace)]

    def pod(self, namespace: str, name: str) -> dict | None:
        return self.api.objects.get((POD_RES, namespace, name))

    def pods_of(self, namespace: str, **labels: str) -> list[dict]:
        return [p for p in self.objs(POD_RES, namespace)
                if all(p["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())]

    def _bump(self, obj: dict) -> None:
        self.api.resource_version += 1
        obj["metadata"]["resourceVersion"] = str(self.api.resource_version)

    # ---- routes --------------------------------------------------------------------------

    def _ticked(self, handler: Callable, req: Request, m: dict) -> tuple[int, Any, dict]:
        self.tick()
        return handler(self.api, req, m)

    def _patch(self, req: Request, m: dict) -> tuple[int, Any, dict]:
        if m["plural"] != "nodes" or m["ns"]:
            return 405, status_body(405, "the server does not allow this method on the requested resource"), {}
        node = self.api.objects.get((NODE_RES, "", m["name"]))
        if node is None:
            return 404, status_body(404, f'nodes "{m["name"]}" not found',
                                    details={"name": m["name"], "kind": "nodes"}), {}
        if "merge-patch" not in (req.headers.get("Content-Type") or ""):
            return 415, status_body(415, "the body of the request was in an unknown format", "UnsupportedMediaType"), {}
        patched = merge_patch(node, req.json())
        if req.query.get("dryRun") != "All":
            self.api.objects[(NODE_RES, "", m["name"])] = patched
            self._bump(patched)
        return 200, patched, {}

    def _evict(self, req: Request, m: dict) -> tuple[int, Any, dict]:
        if m["plural"] != "pods" or m["sub"] != "eviction" or m["prefix"] != "/api/v1":
            return 404, status_body(404, "the server could not find the requested resource"), {}
        body = req.json() or {}
        if body.get("kind") != "Eviction" or body.get("apiVersion") not in ("policy/v1", "policy/v1beta1"):
            return 400, status_body(400, f"not a Eviction object: {body.get('kind')}"), {}
        if (body.get("metadata") or {}).get("name") != m["name"]:
            return 400, status_body(400, "name in URL does not match name in Eviction object"), {}
        dry = req.query.get("dryRun") == "All" or ((body.get("deleteOptions") or {}).get("dryRun") == ["All"])
        uid = (((body.get("deleteOptions") or {}).get("preconditions")) or {}).get("uid")
        status, answer = self._eviction(m["ns"], m["name"], dry, uid)
        self.evictions.append(EvictionRecord(m["ns"], m["name"], dry, status))
        return status, answer, {}

    def _eviction(self, ns: str, name: str, dry: bool, uid: str | None = None) -> tuple[int, dict]:
        pod = self.pod(ns, name)
        if pod is None:
            return 404, status_body(404, f'pods "{name}" not found', details={"name": name, "kind": "pods"})
        phase = (pod.get("status") or {}).get("phase")
        success = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        # the delete the eviction makes checks deleteOptions.preconditions (after the PDB, as the API server)
        has = pod["metadata"].get("uid")
        conflict = (409, status_body(409, f'Operation cannot be fulfilled on Pod "{name}": Precondition failed: '
                                          f"UID in precondition: {uid}, UID in object meta: {has}")) \
            if uid and uid != has else None
        if phase in ("Pending", "Succeeded", "Failed") or _terminating(pod):
            if conflict:
                return conflict
            if not dry:
                self._delete(pod)
            return 201, success
        pdbs = [b for b in self.objs(PDB_RES, ns) if _labels_match(b["spec"].get("selector"),
                                                                   pod["metadata"].get("labels") or {})]
        if len(pdbs) > 1:
            return 500, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "message": MULTIPLE_PDBS, "code": 500}
        if pdbs:
            st = pdbs[0].setdefault("status", {})
            healthy, desired = st.get("currentHealthy", 0), st.get("desiredHealthy", 0)
            unready_free = not _ready(pod) and healthy >= desired and desired > 0
            if not unready_free:
                if st.get("disruptionsAllowed", 0) <= 0:
                    cause = {"reason": "DisruptionBudget", "message": f"The disruption budget "
                             f"{pdbs[0]['metadata']['name']} needs {desired} healthy pods and has {healthy} currently"}
                    return 429, status_body(429, PDB_VIOLATION, details={"causes": [cause]})
                if conflict:
                    return conflict
                if not dry:
                    st["disruptionsAllowed"] -= 1
                    st.setdefault("disruptedPods", {})[name] = "2026-01-01T00:00:00Z"
                    self._bump(pdbs[0])
        if conflict:
            return conflict
        if not dry:
            self._delete(pod)
        return 201, success

    def _delete(self, pod: dict) -> None:
        meta = pod["metadata"]
        if self.termination_ticks <= 0 or meta.get("deletionTimestamp") or not pod["spec"].get("nodeName"):
            self.api.objects.pop((POD_RES, meta["namespace"], meta["name"]), None)
            return
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        self._age[(meta["namespace"], meta["name"])] = 0
        self._bump(pod)

    # ---- the world -----------------------------------------------------------------------

    def tick(self) -> None:
        self.ticks += 1
        if self.paused:
            return
        self._remember_templates()
        self._finish_terminations()
        self._replicasets()
        self._schedule()
        self._readiness()
        if self.pdb_controller:
            self._pdbs()
        for hook in list(self.on_tick):
            hook(self)

    def _remember_templates(self) -> None:
        for p in self.objs(POD_RES):
            ref = _controller(p)
            if ref and ref.get("kind") == "ReplicaSet" and not _terminating(p):
                self._templates[ref.get("uid") or ref["name"]] = p

    def _finish_terminations(self) -> None:
        for p in self.objs(POD_RES):
            key = (p["metadata"]["namespace"], p["metadata"]["name"])
            if _terminating(p):
                self._age[key] = self._age.get(key, 0) + 1
                if self._age[key] > self.termination_ticks:
                    self.api.objects.pop((POD_RES, *key), None)
                    self._age.pop(key, None)

    def _replicasets(self) -> None:
        for rs in self.objs(RS_RES):
            meta = rs["metadata"]
            uid = meta.get("uid") or meta["name"]
            active = [p for p in self.objs(POD_RES, meta["namespace"]) if not _terminating(p)
                      and (_controller(p) or {}).get("uid", (_controller(p) or {}).get("name")) == uid
                      and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
            template = self._templates.get(uid)
            for _ in range(int(rs["spec"].get("replicas") or 0) - len(active)):
                if template is None:
                    break
                self._create_replacement(template, meta["name"])

    def _create_replacement(self, template: dict, rs_name: str) -> None:
        new = copy.deepcopy(template)
        name = f"{rs_name}-r{next(self._seq)}"
        meta = new["metadata"]
        for k in ("deletionTimestamp", "resourceVersion"):
            meta.pop(k, None)
        meta.update(name=name, uid=f"uid-{name}", creationTimestamp=f"2026-01-02T00:00:{self.ticks % 60:02d}Z")
        new["spec"].pop("nodeName", None)
        new["status"] = {"phase": "Pending"}
        self.api.add(new)

    def _schedule(self) -> None:
        nodes = self.objs(NODE_RES)
        for p in self.objs(POD_RES):
            meta = p["metadata"]
            key = f"{meta['namespace']}/{meta['name']}"
            if p["spec"].get("nodeName") or _terminating(p) or any(key.startswith(h) for h in self.hold_pending):
                continue
            if (p.get("status") or {}).get("phase") != "Pending":
                continue
            chosen, reasons = self._pick(p, nodes)
            if chosen is None:
                msg = ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
                p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                              "message": f"0/{len(nodes)} nodes are available: {msg}."}]
            else:
                p["spec"]["nodeName"] = chosen
                p["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
                self._age[(meta["namespace"], meta["name"])] = 0
            self._bump(p)

    def _pick(self, pod: dict, nodes: list[dict]) -> tuple[str | None, dict[str, int]]:
        """Filter by cordon, taints (none tolerated), pod count and hard spread; then the zone with
        the fewest pods of the pod's kind (same labels), then the node with the fewest pods."""
        ns = pod["metadata"]["namespace"]
        bound = [p for p in self.objs(POD_RES, ns) if p["spec"].get("nodeName") and not _terminating(p)]
        per_node: dict[str, int] = {}
        for p in self.objs(POD_RES):
            if p["spec"].get("nodeName") and not _terminating(p):
                per_node[p["spec"]["nodeName"]] = per_node.get(p["spec"]["nodeName"], 0) + 1
        reasons: dict[str, int] = {}
        ok = []
        for n in nodes:
            reason = self._refusal(pod, n, nodes, bound, per_node)
            if reason:
                reasons[reason] = reasons.get(reason, 0) + 1
            else:
                ok.append(n)
        if not ok:
            return None, reasons
        mine = pod["metadata"].get("labels") or {}
        kin = [p for p in bound if (p["metadata"].get("labels") or {}) == mine]

        def zone_load(n: dict) -> int:
            z = n["metadata"]["labels"].get(ZONE)
            return sum(1 for p in kin if self._zone_of(p["spec"]["nodeName"], nodes) == z)

        best = min(ok, key=lambda n: (zone_load(n), per_node.get(n["metadata"]["name"], 0), n["metadata"]["name"]))
        return best["metadata"]["name"], reasons

    @staticmethod
    def _zone_of(node_name: str, nodes: list[dict]) -> str | None:
        for n in nodes:
            if n["metadata"]["name"] == node_name:
                return n["metadata"]["labels"].get(ZONE)
        return None

    def _refusal(self, pod: dict, node: dict, nodes: list[dict], bound: list[dict],
                 per_node: dict[str, int]) -> str | None:
        name = node["metadata"]["name"]
        if node["spec"].get("unschedulable"):
            return "node(s) were unschedulable"
        if any(t.get("effect") in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints") or ()):
            return "node(s) had untolerated taint(s)"
        if per_node.get(name, 0) >= int(node["status"]["allocatable"].get("pods", "110")):
            return "Too many pods"
        for c in pod["spec"].get("topologySpreadConstraints") or ():
            if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule" and not self._spread_ok(
                    pod, c, node, nodes, bound):
                return "node(s) didn't match pod topology spread constraints"
        return None

    @staticmethod
    def _spread_ok(pod: dict, c: dict, node: dict, nodes: list[dict], bound: list[dict]) -> bool:
        key = c["topologyKey"]
        value = node["metadata"]["labels"].get(key)
        if value is None:
            return False
        labels = pod["metadata"].get("labels") or {}
        selector = copy.deepcopy(c.get("labelSelector") or {})
        for k in c.get("matchLabelKeys") or ():
            if k in labels:
                selector.setdefault("matchLabels", {})[k] = labels[k]
        honor = c.get("nodeTaintsPolicy") == "Honor"
        domain_of = {n["metadata"]["name"]: n["metadata"]["labels"][key] for n in nodes
                     if key in n["metadata"]["labels"] and not (honor and n["spec"].get("unschedulable"))}
        counts = dict.fromkeys(domain_of.values(), 0)
        for p in bound:
            d = domain_of.get(p["spec"]["nodeName"])
            if d is not None and _labels_match(selector, p["metadata"].get("labels") or {}):
                counts[d] += 1
        low = min(counts.values()) if len(counts) >= int(c.get("minDomains") or 1) else 0
        self_match = 1 if _labels_match(selector, labels) else 0
        return counts.get(value, 0) + self_match - low <= int(c["maxSkew"])

    def _readiness(self) -> None:
        for p in self.objs(POD_RES):
            meta = p["metadata"]
            key = (meta["namespace"], meta["name"])
            if not p["spec"].get("nodeName") or _terminating(p) or _ready(p) or key not in self._age:
                continue
            self._age[key] += 1
            if self._age[key] > self.ready_ticks:
                p["status"] = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"},
                                                                   {"type": "Ready", "status": "True"}]}
                self._age.pop(key)
                self._bump(p)

    def _pdbs(self) -> None:
        for b in self.objs(PDB_RES):
            meta = b["metadata"]
            if f"{meta['namespace']}/{meta['name']}" in self.frozen_pdbs:
                continue
            pods = [p for p in self.objs(POD_RES, meta["namespace"]) if not _terminating(p)
                    and _labels_match(b["spec"].get("selector"), p["metadata"].get("labels") or {})]
            expected = len(pods)
            healthy = sum(1 for p in pods if _ready(p))
            desired = desired_healthy(b["spec"], expected)
            b["status"] = {"currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
                           "disruptionsAllowed": max(0, healthy - desired), "observedGeneration": 1}


def desired_healthy(spec: dict, expected: int) -> int:
    """minAvailable (int or %, rounded up) or expected − maxUnavailable (int or %, rounded up)."""
    def scaled(v: Any) -> int:
        if isinstance(v, str) and v.endswith("%"):
            return math.ceil(int(v[:-1]) * expected / 100)
        return int(v)

    if spec.get("minAvailable") is not None:
        return scaled(spec["minAvailable"])
    if spec.get("maxUnavailable") is not None:
        return max(0, expected - scaled(spec["maxUnavailable"]))
    return expected


# ---- raw object builders for drain scenarios -----------------------------------------------

def ready_pod(name: str, node: str, rs: str, labels: dict[str, str], namespace: str = "default",
              spread: list[dict] | None = None) -> dict:
    """A Running, Ready pod owned by ReplicaSet `rs` (uid "uid-rs-<rs>")."""
    spec: dict = {"nodeName": node, "containers": [{"name": "c", "image": "nginx",
                                                    "resources": {"requests": {"cpu": "100m"}}}]}
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": dict(labels),
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                              "uid": f"uid-rs-{rs}", "controller": True}]},
            "spec": spec,
            "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"},
                                                          {"type": "Ready", "status": "True"}]}}


def deployment(name: str, labels: dict[str, str], replicas: int, namespace: str = "default",
               template_hash: str = "abc12") -> list[dict]:
    """A Deployment and its ReplicaSet `<name>-<hash>`."""
    rs = f"{name}-{template_hash}"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": namespace, "uid": f"uid-deploy-{name}"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}}}
    rso = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
           "metadata": {"name": rs, "namespace": namespace, "uid": f"uid-rs-{rs}",
                        "labels": {**labels, "pod-template-hash": template_hash},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                             "uid": f"uid-deploy-{name}", "controller": True}]},
           "spec": {"replicas": replicas,
                    "selector": {"matchLabels": {**labels, "pod-template-hash": template_hash}}}}
    return [dep, rso]


def pdb(name: str, labels: dict[str, str], namespace: str = "default", **spec: Any) -> dict:
    """A policy/v1 PDB; spec keys minAvailable / maxUnavailable."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": dict(labels)}, **spec}, "status": {}}


__all__ = ["FakeCluster", "EvictionRecord", "merge_patch", "desired_healthy", "ready_pod", "deployment", "pdb",
           "PDB_VIOLATION", "MULTIPLE_PDBS"]
