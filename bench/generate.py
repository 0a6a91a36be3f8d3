"""A deterministic synthetic cluster, written to disk once as pre-serialized list items.

Layout (scaled from the pod count): 3 zones; nodes round-robin over them, 5 % in a
tainted gpu pool, 0.5 % cordoned, each in one of ten `bench.tspread/group` groups (a
group is 10 % of the nodes: the drain-safe benchmark drains one). One Deployment (with
its ReplicaSet, Service and, for every other one, a PDB) per ~300 pods, constraints
mixed: zone DoNotSchedule, hostname ScheduleAnyway, both, hostname DoNotSchedule, or
none (system defaults). Two DaemonSets put a pod on every node; Jobs leave finished
pods (the tool's field selector filters them); a few pods are terminating; some
workloads can never schedule (a cpu request no node has, or a pool whose taint they
do not tolerate) and give the Pending pods `why-pending -A` explains.

On disk, per kind: `<Kind>.items` (one JSON object per line, API order: namespace/name)
and `<Kind>.meta` (one JSON line per item: namespace, name, labels, selectable fields),
so the server can serve and filter without parsing objects again.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass, field

from bench import objects as ob

try:
    import orjson

    def _dumps(obj) -> bytes:
        return orjson.dumps(obj)
except ImportError:  # the generator still works, only slower
    def _dumps(obj) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode()

GENERATOR_VERSION = "6"  # 4: pod names unique in their namespace (_unique_names); 5: container statuses;
# 6: nodes list the images of the pods they run (status.images, ImageLocality)
# report resources as a 1.33+ kubelet does (in-place resize)
ZONES = ("zone-a", "zone-b", "zone-c")
APPS = ("api", "web", "worker", "cache", "search", "billing", "auth", "media", "feed", "ingest", "report",
        "notify")


@dataclass(frozen=True)
class Size:
    name: str
    nodes: int
    pods: int
    pending: int
    # the workloads' spread modes, in turn (None: MODES, the mix); "trap" spreads every one
    # over zones with DoNotSchedule, maxSkew 1 and the default nodeTaintsPolicy, so a whole-zone
    # drain traps every workload (the cordoned zone stays a domain and pins the minimum)
    modes: tuple[str, ...] | None = None


SIZES = {s.name: s for s in (Size("tiny", 20, 300, 10), Size("small", 500, 15_000, 100),
                             Size("large", 5_000, 150_000, 1_000),
                             Size("trap", 500, 15_000, 0, modes=("zone",)))}


@dataclass
class WorkloadPlan:
    namespace: str
    name: str
    replicas: int
    mode: str  # zone | hostname-soft | zone+hostname | hostname-hard | none
    cpu: str
    memory: str
    pending: bool = False
    node_selector: dict = field(default_factory=dict)
    skewed: bool = False  # placed 3 pods off balance: shows VIOLATED / DRIFTED rows

    @property
    def labels(self) -> dict:
        return {"app": self.name, "team": self.namespace}

    @property
    def rs_name(self) -> str:
        return f"{self.name}-{ob.uid('rs', self.namespace, self.name)[:10].replace('-', '')}"


def spread_of(w: WorkloadPlan) -> list[dict]:
    sel = {"matchLabels": w.labels}
    zone = {"maxSkew": 1, "topologyKey": ob.ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
    host_soft = {"maxSkew": 1, "topologyKey": ob.HOSTNAME_KEY, "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": sel}
    if w.mode == "zone":
        # half of them the way current charts write it, with the revision merged in
        return [dict(zone, matchLabelKeys=["pod-template-hash"])] if int(ob.uid(w.name)[:2], 16) % 2 else [zone]
    if w.mode == "hostname-soft":
        return [host_soft]
    if w.mode == "zone+hostname":
        return [zone, host_soft]
    if w.mode == "hostname-hard":
        return [dict(host_soft, whenUnsatisfiable="DoNotSchedule")]
    return []


MODES = ("zone", "zone", "zone", "zone", "hostname-soft", "hostname-soft", "zone+hostname", "zone+hostname",
         "hostname-hard", "none")


def plan_workloads(size: Size, rng: random.Random) -> list[WorkloadPlan]:
    """Deployments sharing the pods left after DaemonSets, Jobs and the pending workloads."""
    modes = size.modes or MODES
    count = max(4, size.pods // 300)
    namespaces = [f"team-{i:02d}" for i in range(max(2, count // 10))]
    finished = size.pods // 200
    bound_total = size.pods - 2 * size.nodes - size.pending - finished
    weights = [min(rng.paretovariate(1.2), 40.0) for _ in range(count)]
    scale = bound_total / sum(weights)
    plans = []
    for k, wgt in enumerate(weights):
        plans.append(WorkloadPlan(
            namespace=namespaces[k % len(namespaces)], name=f"{APPS[k % len(APPS)]}-{k:04d}",
            replicas=max(2, int(wgt * scale)), mode=modes[k % len(modes)],
            cpu=rng.choice(("100m", "250m", "500m")), memory=rng.choice(("128Mi", "256Mi", "512Mi", "1Gi")),
            skewed=k % 37 == 5 and size.modes is None))
    plans[0].replicas += bound_total - sum(p.replicas for p in plans)  # exact total
    per_pending = 100 if size.pending >= 100 else size.pending
    for k in range(max(1, size.pending // per_pending) if per_pending else 0):
        w = WorkloadPlan(namespaces[k % len(namespaces)], f"batch-{k:03d}", per_pending, "zone", "48", "1Gi",
                         pending=True)
        if k % 2:  # the gpu pool exists, but its taint is not tolerated
            w.cpu, w.node_selector = "500m", {"pool": "gpu"}
        plans.append(w)
    return plans


@dataclass
class NodePlan:
    name: str
    zone: str
    group: str
    pool: str
    cordoned: bool


def plan_nodes(size: Size) -> list[NodePlan]:
    out = []
    for i in range(size.nodes):
        zone = ZONES[i % 3]
        pool = "gpu" if i % 20 == 19 else "general"
        out.append(NodePlan(f"node-{zone[-1]}-{i:05d}", zone, f"g{i % 10}", pool, i % 200 == 101))
    return out


def place(w: WorkloadPlan, by_zone: dict[str, list[str]], rng: random.Random, k: int) -> list[str]:
    """Node names for the workload's replicas: even zone split (or off by 3 when skewed);
    distinct nodes when a hostname constraint asks for spreading."""
    n = w.replicas
    if "zone" in w.mode:
        counts = [n // 3 + (1 if (i - k) % 3 < n % 3 else 0) for i in range(3)]
        if w.skewed and counts[2] >= 3:
            counts[0], counts[2] = counts[0] + 3, counts[2] - 3
    else:
        counts = [0, 0, 0]
        for _ in range(n):
            counts[rng.randrange(3)] += 1
    nodes: list[str] = []
    for zone, cnt in zip(ZONES, counts):
        pool = by_zone[zone]
        if "hostname" in w.mode and cnt <= len(pool):
            nodes.extend(rng.sample(pool, cnt))
        else:
            nodes.extend(rng.choice(pool) for _ in range(cnt))
    return nodes


class KindWriter:
    """Appends one kind's items and their meta lines."""

    def __init__(self, directory: str, kind: str):
        self.items = open(os.path.join(directory, f"{kind}.items"), "wb")
        self.meta = open(os.path.join(directory, f"{kind}.meta"), "wb")
        self.count = 0

    def add(self, obj: dict, fields: dict | None = None) -> None:
        m = obj["metadata"]
        self.items.write(_dumps(obj) + b"\n")
        self.meta.write(_dumps([m.get("namespace", ""), m["name"], m.get("labels") or {}, fields or {}]) + b"\n")
        self.count += 1

    def close(self) -> None:
        self.items.close()
        self.meta.close()


def generate(size: Size, directory: str, seed: int = 20240501) -> dict:
    """Write the cluster of `size` into `directory` (replaced); returns its summary (also in summary.json)."""
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)
    rng = random.Random(seed)
    nodes = plan_nodes(size)
    workloads = plan_workloads(size, rng)
    summary = {"size": size.name, "nodes": size.nodes, "pods": size.pods, "seed": seed,
               "version": GENERATOR_VERSION, "kinds": {}}
    pods = _pod_rows(size, nodes, workloads, rng)
    _write_nodes(directory, nodes, _images_by_node(pods, workloads), summary)
    _write_pods(directory, pods, workloads, size, summary)
    _write_controllers(directory, workloads, size, summary)
    with open(os.path.join(directory, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def _write_nodes(directory: str, nodes: list[NodePlan], images: dict[str, list[str]], summary: dict) -> None:
    w = KindWriter(directory, "Node")
    for i, n in enumerate(nodes):
        w.add(ob.node(n.name, n.zone, n.group, n.pool, n.cordoned, i, images.get(n.name, [])))
    w.close()
    summary["kinds"]["Node"] = w.count


# (app, namespace) of the pod templates of the DaemonSet pods (row index -1) and the Job pods (-2)
DS_APP, JOB_APP = ("exporter", "kube-system"), ("nightly", "batch-jobs")


def _images_by_node(rows: list[tuple], workloads: list[WorkloadPlan]) -> dict[str, list[str]]:
    """The images each node holds: those of the pods it runs (pod_template's), in name order."""
    out: dict[str, set[str]] = {}
    for ns, _, k, node, _, _ in rows:
        if node is None:
            continue
        app, app_ns = (workloads[k].name, ns) if k >= 0 else DS_APP if k == -1 else JOB_APP
        out.setdefault(node, set()).update((ob.app_image(app_ns, app), ob.PROXY_IMAGE))
    return {node: sorted(images) for node, images in out.items()}


def _pod_rows(size: Size, nodes: list[NodePlan], workloads: list[WorkloadPlan], rng: random.Random) -> list[tuple]:
    """(namespace, name, workload index or -1/-2 for DaemonSet/Job, node, phase, terminating), API-sorted."""
    by_zone = {z: [n.name for n in nodes if n.zone == z and n.pool == "general" and not n.cordoned] for z in ZONES}
    rows = []
    for k, w in enumerate(workloads):
        placed = [None] * w.replicas if w.pending else place(w, by_zone, rng, k)
        for i, node in enumerate(placed):
            name = f"{w.rs_name}-{_suffix(rng)}"
            rows.append((w.namespace, name, k, node, "Pending" if node is None else "Running",
                         node is not None and i % 997 == 3))
    for ds in ("node-exporter", "log-agent"):
        for n in nodes:
            rows.append(("kube-system", f"{ds}-{_suffix(rng)}", -1, n.name, "Running", False))
    finished = size.pods // 200
    general = [n.name for n in nodes if n.pool == "general"]
    for i in range(finished):
        rows.append(("batch-jobs", f"nightly-{i // 50:03d}-{_suffix(rng)}", -2, rng.choice(general),
                     "Failed" if i % 10 == 0 else "Succeeded", False))
    rows = _unique_names(rows)
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


SUFFIX_LETTERS = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(rng: random.Random) -> str:
    return "".join(rng.choice(SUFFIX_LETTERS) for _ in range(5))


def _unique_names(rows: list[tuple]) -> list[tuple]:
    """`rows` with a pod name already taken in its namespace given another last letter (the
    next free one, in SUFFIX_LETTERS order): five random letters per pod collide now and then
    (10 pairs at the large size, mostly DaemonSet pods, which share one stem over 5,000 nodes),
    and an API server never lists two pods of one name. Nothing is drawn from the generator's
    random stream for this, so every other object stays as it was."""
    taken: set[tuple[str, str]] = set()
    out = []
    for row in rows:
        ns, name = row[0], row[1]
        stem, last = name[:-1], name[-1]
        i = SUFFIX_LETTERS.index(last)
        while (ns, name) in taken:
            i = (i + 1) % len(SUFFIX_LETTERS)
            name = stem + SUFFIX_LETTERS[i]
        taken.add((ns, name))
        out.append((ns, name) + tuple(row[2:]))
    return out


def _pending_message(size: Size, w: WorkloadPlan) -> str:
    gpu = size.nodes // 20
    cordoned = sum(1 for i in range(size.nodes) if i % 200 == 101)
    if w.node_selector:
        return (f"0/{size.nodes} nodes are available: {gpu} node(s) had untolerated taint "
                f"{{nvidia.com/gpu: present}}, {size.nodes - gpu} node(s) didn't match Pod's node "
                f"affinity/selector. preemption: 0/{size.nodes} nodes are available: "
                f"{size.nodes} Preemption is not helpful for scheduling.")
    return (f"0/{size.nodes} nodes are available: {cordoned} node(s) were unschedulable, "
            f"{gpu} node(s) had untolerated taint {{nvidia.com/gpu: present}}, "
            f"{size.nodes - gpu - cordoned} Insufficient cpu.")


def _write_pods(directory: str, rows: list[tuple], workloads: list[WorkloadPlan], size: Size, summary: dict) -> None:
    pods, events = KindWriter(directory, "Pod"), KindWriter(directory, "Event")
    templates = [ob.pod_template(w.name, w.namespace, w.cpu, w.memory, spread_of(w), w.node_selector)
                 for w in workloads]
    ds_template = ob.pod_template(*DS_APP, "50m", "64Mi", [])
    ds_template = dict(ds_template, tolerations=ob.DEFAULT_TOLERATIONS + [{"operator": "Exists"}])
    job_template = dict(ob.pod_template(*JOB_APP, "250m", "256Mi", []), restartPolicy="Never")
    for serial, (ns, name, k, node, phase, terminating) in enumerate(rows):
        if k >= 0:
            w = workloads[k]
            labels = dict(w.labels, **{"pod-template-hash": w.rs_name.rsplit("-", 1)[1]})
            owner, template = ob.owner_ref("ReplicaSet", w.rs_name, ns), templates[k]
        elif k == -1:
            ds = name.rsplit("-", 1)[0]
            labels, owner = {"app": ds}, ob.owner_ref("DaemonSet", ds, ns)
            template = dict(ds_template, affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                        "values": [node]}]}]}}})
        else:
            job = name.rsplit("-", 1)[0]
            labels, owner, template = {"job-name": job}, ob.owner_ref("Job", job, ns, "batch/v1"), job_template
        message = _pending_message(size, workloads[k]) if node is None else ""
        pods.add(ob.pod(name, ns, labels, owner, template, node, phase, serial, terminating, message),
                 {"spec.nodeName": node or "", "status.phase": phase})
        if node is None or serial % 100 == 0:
            reason = "FailedScheduling" if node is None else "Scheduled"
            text = message or f"Successfully assigned {ns}/{name} to {node}"
            events.add(ob.event(name, ns, reason, text, serial, "Warning" if node is None else "Normal"),
                       {"involvedObject.kind": "Pod", "involvedObject.name": name,
                        "involvedObject.namespace": ns, "reason": reason})
    for wr in (pods, events):
        wr.close()
        summary["kinds"][os.path.basename(wr.items.name).split(".")[0]] = wr.count


def _write_controllers(directory: str, workloads: list[WorkloadPlan], size: Size, summary: dict) -> None:
    writers = {k: KindWriter(directory, k) for k in ("Deployment", "ReplicaSet", "Service",
                                                     "PodDisruptionBudget", "DaemonSet", "Job")}
    for k, w in sorted(enumerate(workloads), key=lambda kw: (kw[1].namespace, kw[1].name)):
        spec = ob.pod_template(w.name, w.namespace, w.cpu, w.memory, spread_of(w), w.node_selector)
        writers["Deployment"].add(ob.deployment(w.name, w.namespace, w.labels, w.replicas, spec))
        writers["ReplicaSet"].add(ob.replica_set(w.rs_name, w.namespace, w.name, w.labels, w.replicas))
        writers["Service"].add(ob.service(w.name, w.namespace, w.labels))
        if k % 2 == 0:
            budget = {"maxUnavailable": 0 if k % 50 == 10 else 1} if k % 6 else {"minAvailable": "50%"}
            writers["PodDisruptionBudget"].add(ob.pdb(w.name, w.namespace, w.labels, w.replicas, budget))
    for ds in ("log-agent", "node-exporter"):
        writers["DaemonSet"].add(ob.daemon_set(ds, "kube-system", {"app": ds}, size.nodes))
    for j in range((size.pods // 200 + 49) // 50):
        name = f"nightly-{j:03d}"
        writers["Job"].add(ob.job(name, "batch-jobs", {"job-name": name}, 50))
    for kind, wr in writers.items():
        wr.close()
        summary["kinds"][kind] = wr.count


def ensure(size: Size, cache_dir: str) -> str:
    """The cluster directory for `size`, generated only when missing or from an older generator."""
    directory = os.path.join(cache_dir, f"cluster-{size.name}")
    try:
        with open(os.path.join(directory, "summary.json")) as f:
            if json.load(f).get("version") == GENERATOR_VERSION:
                return directory
    except (OSError, ValueError):
        pass
    generate(size, directory)
    return directory


DUMP_KINDS = (("Node", "v1"), ("Pod", "v1"), ("ReplicaSet", "apps/v1"), ("Deployment", "apps/v1"))


def ensure_dump(directory: str) -> str:
    """`kubectl get nodes,pods,rs,deploy -A -o json` of the cluster in `directory`, written once.

    Items get the kind and apiVersion kubectl adds to a List; finished pods are included,
    as in a real dump (the tool filters them, the server-side selector is not there).
    """
    path = os.path.join(directory, "dump.json")
    if os.path.exists(path):
        return path
    with open(path + ".part", "wb") as out:
        out.write(b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
        first = True
        for kind, api_version in DUMP_KINDS:
            prefix = b'{"apiVersion":"%s","kind":"%s",' % (api_version.encode(), kind.encode())
            with open(os.path.join(directory, f"{kind}.items"), "rb") as f:
                for line in f:
                    out.write((b"" if first else b",\n") + prefix + line.rstrip(b"\n")[1:])
                    first = False
        out.write(b"]}\n")
    os.replace(path + ".part", path)
    return path
