"""Seeded random clusters for the conformance run, as `kubectl get -o json` items.

One case is a small cluster (3-10 nodes, up to ~30 pods) and one unbound incoming pod.
The draws cover what the scheduler's default filters and scores read: zones and
hostnames, a `rack` key some nodes lack, taints of every effect, cordons with and
without the node controller's taint, node labels for affinity, tolerations, requests
and limits, init and sidecar containers, overhead, an extended resource, terminating
and finished pods, another namespace, matchLabelKeys, minDomains, both node inclusion
policies, default constraints through owners and Services, pod (anti-)affinity, host
ports, and PVCs (missing, bound to a zone-pinned PV). Some cases hold running pods mid-resize
(status resources above and below the spec per container, with and without allocatedResources,
pod-level status, PodResizePending Infeasible or Deferred), and some have nodes declaring
features (status.declaredFeatures) and an incoming pod that needs some (NodeDeclaredFeatures).
About half have images on their nodes (status.images, names as tags, digests and full registry
spellings, sizes around ImageLocality's floor and ceiling) and in their pods (containers, init
containers, image volumes). Those draws come from streams of their own, so every other draw is
what it was without them.

The same seed gives the same cases on every machine (only `random.Random(seed)` draws).
A case is made for one minor: a field that minor's API server drops (pod-level resources
before 1.34) is dropped, after the same draws, so the minors see the same clusters otherwise.
"""

from __future__ import annotations

import random
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"
NS = "default"
OTHER_NS = "other"
APPS = ("web", "api", "db")
EXTENDED = "example.com/gpu"
# the images nodes may hold, by the names status.images lists for each (a tag and a digest, or
# the registry's full spelling); sizes straddle ImageLocality's 23 MiB floor and 1000 MiB ceiling
IMAGE_CATALOG = {
    "nginx": ("nginx:latest", "docker.io/library/nginx@sha256:1111"),
    "nginx-1.27": ("nginx:1.27", "docker.io/library/nginx:1.27"),
    "busybox": ("busybox:latest",),
    "app": ("registry.example:5000/app:latest", "registry.example:5000/app@sha256:2222"),
    "model": ("models.example/llm:v3",),
}
IMAGE_SIZES = (8 * 2**20, 180 * 2**20, 700 * 2**20, 1500 * 2**20)
# what pods name: untagged (looked up as :latest), tagged, a registry with a port and no tag,
# the full spelling of a tag, and one no node holds
POD_IMAGES = ("nginx", "nginx:1.27", "busybox", "registry.example:5000/app", "docker.io/library/nginx:1.27",
              "models.example/llm:v3", "nginx@sha256:1111", "ghcr.io/none/such:1")
CREATED = "2026-01-01T00:00:00Z"
NODE_FEATURES = ("RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions")
# what a kubelet reports of a resized container
CPU_SIZES = ("50m", "200m", "750m", "2")
MEMORY_SIZES = ("32Mi", "512Mi", "2Gi", "5Gi")


class Case:
    """One cluster: its objects and the incoming pod's namespace/name."""

    def __init__(self, case_id: str, objects: list[dict[str, Any]], namespace: str, name: str):
        self.id = case_id
        self.objects = objects
        self.namespace = namespace
        self.name = name

    def oracle_input(self) -> dict[str, Any]:
        return {"id": self.id, "objects": self.objects, "pod": {"namespace": self.namespace, "name": self.name}}


def cases(seed: int, count: int, minor: int = 37) -> list[Case]:
    return [_Builder(random.Random(f"{seed}/{i}"), f"s{seed}-{i}", minor).case() for i in range(count)]


class _Builder:
    def __init__(self, rng: random.Random, case_id: str, minor: int):
        self.rng = rng
        self.id = case_id
        self.minor = minor
        self.objects: list[dict[str, Any]] = []
        self.nodes: list[dict[str, Any]] = []
        self.host_ports: set[tuple[str, int]] = set()
        self.uid = 0
        # resize and node-feature draws: their own stream (the clusters stay the same otherwise),
        # each kind in about a third of the cases
        self.extra = random.Random(f"{case_id}/extra")
        self.resizing = self.extra.random() < 0.35
        self.featured = self.extra.random() < 0.35
        # images on the nodes and in the pods (ImageLocality), in about half the cases: a stream
        # of their own too, and each name one size per case, as a registry's image has
        self.imaging = random.Random(f"{case_id}/images")
        self.imaged = self.imaging.random() < 0.5
        self.image_sizes = {name: self.imaging.choice(IMAGE_SIZES) for name in IMAGE_CATALOG}

    def next_uid(self, kind: str) -> str:
        self.uid += 1
        return f"{self.id}-{kind.lower()}-{self.uid}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def case(self) -> Case:
        zones = ["zone-a", "zone-b", "zone-c", "zone-d"][: self.rng.randint(2, 4)]
        for i in range(self.rng.randint(3, 10)):
            self.nodes.append(self.node(f"node-{i}", self.rng.choice(zones)))
        self.objects.extend(self.nodes)
        # a claim of another namespace: the dump holds PVCs, so a claim missing from it is
        # missing from the cluster (a dump without the kind could not tell)
        self.objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                             "metadata": {"name": "unrelated", "namespace": OTHER_NS, "uid": self.next_uid("PVC")},
                             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                             "status": {"phase": "Pending"}})
        self.owners()
        for i in range(self.rng.randint(0, 30)):
            self.objects.append(self.existing_pod(i))
        incoming = self.incoming()
        self.objects.append(incoming)
        self.rng.shuffle(self.objects)
        return Case(self.id, self.objects, NS, incoming["metadata"]["name"])

    # ---- nodes --------------------------------------------------------------------------------

    def node(self, name: str, zone: str) -> dict[str, Any]:
        rng = self.rng
        labels = {HOST: name, "kubernetes.io/os": "linux"}
        if not self.chance(0.08):
            labels[ZONE] = zone
        if self.chance(0.6):
            labels[RACK] = f"rack-{rng.randint(1, 3)}"
        if self.chance(0.5):
            labels["disk"] = rng.choice(["ssd", "hdd"])
        if self.chance(0.3):
            labels["pool"] = rng.choice(["blue", "green"])
        allocatable = {"cpu": rng.choice(["2", "4", "8", "3500m"]),
                       "memory": rng.choice(["4Gi", "8Gi", "16Gi", "6000Mi"]),
                       "pods": rng.choice(["110", "110", "110", "6", "3"]),
                       "ephemeral-storage": "100Gi"}
        if self.chance(0.25):
            allocatable[EXTENDED] = str(rng.randint(1, 2))
        spec: dict[str, Any] = {}
        taints = []
        if self.chance(0.25):
            taints.append({"key": "dedicated", "value": rng.choice(["infra", "batch"]),
                           "effect": rng.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])})
        if self.chance(0.12):
            spec["unschedulable"] = True
            if self.chance(0.5):
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if self.chance(0.04):
            taints.append({"key": "ToBeDeletedByClusterAutoscaler", "value": "1700000000", "effect": "NoSchedule"})
        if taints:
            spec["taints"] = taints
        status = {"capacity": dict(allocatable), "allocatable": allocatable,
                  "conditions": [{"type": "Ready", "status": "True"}]}
        if self.imaged:
            held = [name for name in IMAGE_CATALOG if self.imaging.random() < 0.45]
            status["images"] = [{"names": list(IMAGE_CATALOG[name]), "sizeBytes": self.image_sizes[name]}
                                for name in held]
        if self.featured and self.extra.random() < 0.8:
            # an unknown name among them: the scheduler maps only the names it registers
            status["declaredFeatures"] = sorted(f for f in NODE_FEATURES + ("SomeFutureFeature",)
                                                if self.extra.random() < 0.6)
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "uid": self.next_uid("Node"), "labels": labels,
                             "creationTimestamp": CREATED},
                "spec": spec, "status": status}

    # ---- owners and services ------------------------------------------------------------------

    def owners(self) -> None:
        self.replicasets: dict[str, dict[str, Any]] = {}
        for app in APPS:
            rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": {"name": f"{app}-h1", "namespace": NS, "uid": self.next_uid("ReplicaSet"),
                               "labels": {"app": app, "pod-template-hash": "h1"}, "creationTimestamp": CREATED},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app, "pod-template-hash": "h1"}},
                           "template": {"metadata": {"labels": {"app": app, "pod-template-hash": "h1"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
            self.replicasets[app] = rs
            self.objects.append(rs)
        if self.chance(0.5):
            self.objects.append({"apiVersion": "v1", "kind": "Service",
                                 "metadata": {"name": "web", "namespace": NS, "uid": self.next_uid("Service")},
                                 "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})

    def owner_ref(self, app: str) -> list[dict[str, Any]]:
        rs = self.replicasets[app]["metadata"]
        return [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["name"], "uid": rs["uid"],
                 "controller": True, "blockOwnerDeletion": True}]

    # ---- pods ---------------------------------------------------------------------------------

    def resources(self) -> dict[str, Any]:
        rng = self.rng
        if self.chance(0.2):
            return {}
        requests = {"cpu": rng.choice(["100m", "250m", "500m", "1", "1500m", "0"]),
                    "memory": rng.choice(["64Mi", "256Mi", "1Gi", "2Gi", "3Gi", "0"])}
        if self.chance(0.3):
            requests.pop(rng.choice(["cpu", "memory"]))
        out: dict[str, Any] = {"requests": requests}
        if self.chance(0.3):
            out["limits"] = {k: v for k, v in requests.items() if v != "0"}
        return out

    def containers(self, ports: bool) -> dict[str, Any]:
        rng = self.rng
        spec: dict[str, Any] = {"containers": []}
        for i in range(rng.choice([1, 1, 1, 2])):
            c: dict[str, Any] = {"name": f"c{i}", "image": self.image("nginx"), "resources": self.resources()}
            if ports and i == 0:
                c["ports"] = [{"containerPort": 8080, "hostPort": rng.choice([8080, 9090]), "protocol": "TCP"}]
            spec["containers"].append(c)
        if self.chance(0.15):
            init = {"name": "init", "image": self.image("busybox"), "resources": self.resources()}
            if self.chance(0.5):
                init["restartPolicy"] = "Always"  # a sidecar
            spec["initContainers"] = [init]
        if self.chance(0.05):
            spec["containers"][0]["resources"].setdefault("requests", {})[EXTENDED] = "1"
            spec["containers"][0]["resources"].setdefault("limits", {})[EXTENDED] = "1"
        if self.chance(0.08):
            spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
        if self.chance(0.08):
            pod_level = {"cpu": rng.choice(["500m", "2"]), "memory": rng.choice(["512Mi", "3Gi"])}
            if self.chance(0.3):
                pod_level.pop("memory")
            if self.minor >= 34:  # PodLevelResources: an older API server drops the field
                spec["resources"] = {"requests": pod_level}
        return spec

    def existing_pod(self, i: int) -> dict[str, Any]:
        rng = self.rng
        app = rng.choice(APPS)
        namespace = OTHER_NS if self.chance(0.1) else NS
        labels = {"app": app, "pod-template-hash": rng.choice(["h1", "h1", "h2"])}
        # started when created, some at the same second: preemption orders victims by start
        created = f"2026-01-01T00:{rng.randint(0, 59):02d}:00Z"
        meta: dict[str, Any] = {"name": f"{app}-{i}", "namespace": namespace, "uid": self.next_uid("Pod"),
                                "labels": labels, "creationTimestamp": created}
        if namespace == NS:
            meta["ownerReferences"] = self.owner_ref(app)
        spec = self.containers(ports=self.chance(0.1))
        spec["nodeName"] = node = rng.choice(self.nodes)["metadata"]["name"]
        port = spec["containers"][0].get("ports", [{}])[0].get("hostPort")
        if port is not None:
            # the scheduler never binds two pods holding one host port to a node: such a state
            # could not arise (its port bookkeeping is a set, and would read it inconsistently)
            if (node, port) in self.host_ports:
                del spec["containers"][0]["ports"]
            self.host_ports.add((node, port))
        spec["priority"] = rng.choice([0, 0, 1000])
        spec["schedulerName"] = "default-scheduler"
        spec["tolerations"] = [{"operator": "Exists"}] if self.chance(0.3) else []
        phase = "Running"
        if self.chance(0.05):
            phase = rng.choice(["Succeeded", "Failed"])
        if self.chance(0.08):
            meta["deletionTimestamp"] = "2026-01-01T01:00:00Z"
            meta["deletionGracePeriodSeconds"] = 30
        if app == "db" and self.chance(0.3):
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}
        status = {"phase": phase, "startTime": created, "conditions": [{"type": "PodScheduled", "status": "True"}]}
        if self.resizing and self.extra.random() < 0.4:
            self.resize(spec, status)
        self.image_volume(spec)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}

    def resize(self, spec: dict[str, Any], status: dict[str, Any]) -> None:
        """A running pod's status mid-resize: per container, resources the kubelet reports
        above or below the spec (drawn apart from it, so the directions differ across
        containers), with or without allocatedResources, sometimes no status at all; now and
        then pod-level status resources and a PodResizePending condition."""
        x = self.extra
        for field, kind in (("containers", "containerStatuses"), ("initContainers", "initContainerStatuses")):
            out = []
            for c in spec.get(field, ()):
                if x.random() < 0.15:
                    continue  # no status for this container (yet)
                st: dict[str, Any] = {"name": c["name"], "image": c["image"], "imageID": "", "ready": True,
                                      "restartCount": 0}
                spec_requests = (c.get("resources") or {}).get("requests") or {}
                if x.random() < 0.7:
                    st["allocatedResources"] = self.reported(spec_requests)
                if x.random() < 0.8:
                    st["resources"] = {"requests": self.reported(spec_requests)} if x.random() < 0.85 else {}
                out.append(st)
            if out:
                status[kind] = out
        if x.random() < 0.3:
            level = (spec.get("resources") or {}).get("requests") or {"cpu": "500m", "memory": "512Mi"}
            if x.random() < 0.8:
                status["allocatedResources"] = self.reported(level)
            status["resources"] = {"requests": self.reported(level)} if x.random() < 0.8 else {}
        if x.random() < 0.3:
            status["conditions"].append({"type": "PodResizePending", "status": "True",
                                         "reason": x.choice(["Infeasible", "Infeasible", "Deferred"]),
                                         "message": "resize pending"})

    def reported(self, requests: dict[str, str]) -> dict[str, str]:
        """Requests a kubelet reports for `requests`: each the same, larger or smaller, now and
        then one left out or one added."""
        x = self.extra
        out = {}
        for name in ("cpu", "memory"):
            if name in requests and x.random() < 0.3:
                out[name] = requests[name]
            elif name in requests or x.random() < 0.25:
                out[name] = x.choice(CPU_SIZES if name == "cpu" else MEMORY_SIZES)
        if x.random() < 0.1 and out:
            out.pop(x.choice(sorted(out)))
        return out

    def incoming(self) -> dict[str, Any]:
        rng = self.rng
        labels = {"app": "web", "pod-template-hash": rng.choice(["h1", "h2"])}
        meta: dict[str, Any] = {"name": "incoming", "namespace": NS, "uid": self.next_uid("Pod"),
                                "labels": labels, "creationTimestamp": CREATED}
        if self.chance(0.7):
            meta["ownerReferences"] = self.owner_ref("web")
        spec = self.containers(ports=self.chance(0.12))
        spec["schedulerName"] = "default-scheduler"
        spec["priority"] = rng.choice([0, 0, 500])
        constraints = [self.constraint(labels) for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3]))]
        if constraints:
            spec["topologySpreadConstraints"] = constraints
        tolerations = []
        if self.chance(0.3):
            tolerations.append({"key": "dedicated", "operator": "Equal", "value": rng.choice(["infra", "batch"]),
                                "effect": rng.choice(["NoSchedule", "NoExecute", ""])} )
        if self.chance(0.1):
            tolerations.append({"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                "effect": "NoSchedule"})
        if tolerations:
            spec["tolerations"] = [{k: v for k, v in t.items() if v != ""} for t in tolerations]
        affinity = self.affinity()
        if affinity:
            spec["affinity"] = affinity
        if self.chance(0.1):
            spec["nodeSelector"] = {"disk": rng.choice(["ssd", "hdd"])}
        if self.chance(0.15):
            self.volume(spec)
        if self.featured and self.extra.random() < 0.8:
            self.needs_features(spec)
        self.image_volume(spec)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                "status": {"phase": "Pending"}}

    def image(self, usual: str) -> str:
        """A container's image: `usual`, or in an imaged case one drawn from the catalog's
        spellings (untagged, tagged, a registry with a port, one no node holds)."""
        if not self.imaged:
            return usual
        return self.imaging.choice(POD_IMAGES)

    def image_volume(self, spec: dict[str, Any]) -> None:
        """Now and then in an imaged case, an image volume (ImageLocality counts it from 1.36),
        sometimes without a reference."""
        if not self.imaged or self.imaging.random() >= 0.15:
            return
        source: dict[str, Any] = {"pullPolicy": "IfNotPresent"}
        if self.imaging.random() < 0.85:
            source["reference"] = self.imaging.choice(POD_IMAGES)
        spec.setdefault("volumes", []).append({"name": "model", "image": source})

    def needs_features(self, spec: dict[str, Any]) -> None:
        """Spec fields that need node-declared features: a RestartAllContainers restart rule,
        the host network in a user namespace, a bind mount with options (each minor's registry
        knows some of them; an older minor's API types drop the fields they lack)."""
        x = self.extra
        wanted = [f for f in NODE_FEATURES if x.random() < 0.45] or [x.choice(NODE_FEATURES)]
        c = spec["containers"][-1]
        if "RestartAllContainersOnContainerExits" in wanted:
            c["restartPolicy"] = "Never"
            c["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                        "exitCodes": {"operator": "In", "values": [42]}}]
        if "UserNamespacesHostNetworkSupport" in wanted:
            spec["hostNetwork"] = True
            spec["hostUsers"] = False
        if "VolumeBindMountOptions" in wanted:
            spec.setdefault("volumes", []).append({"name": "scratch", "emptyDir": {}})
            c["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch", "bindMountOptions": ["ro"]}]

    def constraint(self, labels: dict[str, str]) -> dict[str, Any]:
        rng = self.rng
        hard = self.chance(0.7)
        c: dict[str, Any] = {"maxSkew": rng.choice([1, 1, 1, 2, 3]),
                             "topologyKey": rng.choice([ZONE, ZONE, HOST, RACK]),
                             "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway"}
        if self.chance(0.9):
            c["labelSelector"] = {"matchLabels": {"app": "web" if self.chance(0.85) else "api"}}
        if self.chance(0.3):
            c["matchLabelKeys"] = ["pod-template-hash"]
            if self.chance(0.5) and "labelSelector" in c:
                # what the API server stores since 1.34: the keys already merged into the selector
                c["labelSelector"]["matchExpressions"] = [
                    {"key": "pod-template-hash", "operator": "In", "values": [labels["pod-template-hash"]]}]
        if hard and self.chance(0.25):
            c["minDomains"] = rng.randint(1, 5)
        if self.chance(0.3):
            c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if self.chance(0.4):
            c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        return c

    def affinity(self) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        node: dict[str, Any] = {}
        if self.chance(0.15):
            node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": rng.choice(["In", "NotIn"]), "values": ["ssd"]}]}]}
        elif self.chance(0.04):
            name = rng.choice(self.nodes)["metadata"]["name"]
            node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}
        if self.chance(0.2):
            node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.choice([10, 50, 100]),
                 "preference": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["blue"]}]}}]
        if node:
            out["nodeAffinity"] = node
        if self.chance(0.1):
            out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": rng.choice(["web", "db"])}},
                 "topologyKey": rng.choice([HOST, ZONE])}]}
        elif self.chance(0.1):
            out["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                    "topologyKey": HOST}}]}
        if self.chance(0.08):
            out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}]}
        return out

    def volume(self, spec: dict[str, Any]) -> None:
        rng = self.rng
        claim = f"data-{self.uid}"
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        if self.chance(0.3):
            return  # the claim does not exist
        pv_name = f"pv-{self.uid}"
        zone = rng.choice(["zone-a", "zone-b", "zone-c"])
        self.objects.append({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": pv_name, "uid": self.next_uid("PV"), "labels": {ZONE: zone}},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "standard",
                     "claimRef": {"namespace": NS, "name": claim},
                     "csi": {"driver": "ebs.csi.example.com", "volumeHandle": pv_name},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [
                         {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}}},
            "status": {"phase": "Bound"}})
        # the PV controller marks a finished binding; without the mark the claim is only pre-bound
        annotations = {} if self.chance(0.15) else {"pv.kubernetes.io/bind-completed": "yes"}
        self.objects.append({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": NS, "uid": self.next_uid("PVC"), "annotations": annotations},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard", "volumeName": pv_name,
                     "resources": {"requests": {"storage": "10Gi"}}},
            "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}})
        if not any(o.get("kind") == "StorageClass" for o in self.objects):
            self.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                 "metadata": {"name": "standard", "uid": self.next_uid("SC")},
                                 "provisioner": "ebs.csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"})
