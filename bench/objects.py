"""Builders of realistic API objects (dicts as the API server returns them in a list).

List items carry no `kind`/`apiVersion`, like the real server's. Pods are ~4–5 KB of JSON
each because that is what the tool really receives: managedFields of three managers,
environment, probes, volume mounts, container statuses. The bulk the tool must skip is
part of what the benchmark measures.
"""

from __future__ import annotations

import hashlib

ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"
REGION = "bench-1"
CREATED = "2024-05-01T08:00:00Z"

# the tolerations admission adds to every pod
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
]


def uid(*parts: object) -> str:
    """A stable UUID-shaped id for an object: the same inputs always give the same uid."""
    h = hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def timestamp(seconds: int) -> str:
    """CREATED + `seconds`, RFC 3339 (seconds < 1 day keeps the arithmetic trivial)."""
    seconds %= 86400
    return f"2024-05-01T{8 + seconds // 3600 % 16:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


PROXY_IMAGE = "registry.bench.invalid/mesh/proxy:2.1.0"
# a kubelet reports at most this many images, the largest first (nodeStatusMaxImages)
MAX_NODE_IMAGES = 50


def app_image(namespace: str, app: str) -> str:
    return f"registry.bench.invalid/{namespace}/{app}:1.4.2"


def image_status(images: list[str]) -> list[dict]:
    """status.images for a node holding `images`: each under its tag and a digest, of a size
    fixed by its name (40 MiB to 1 GiB), the largest MAX_NODE_IMAGES first."""
    out = []
    for image in images:
        digest = hashlib.sha256(image.encode()).hexdigest()
        size = (40 + int(digest[:6], 16) % 985) << 20
        out.append({"names": [f"{image.rsplit(':', 1)[0]}@sha256:{digest}", image], "sizeBytes": size})
    out.sort(key=lambda i: -i["sizeBytes"])
    return out[:MAX_NODE_IMAGES]


def node(name: str, zone: str, group: str, pool: str, cordoned: bool, serial: int, images: list[str] = ()) -> dict:
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", HOSTNAME_KEY: name,
        "node.kubernetes.io/instance-type": "m6i.8xlarge", "topology.kubernetes.io/region": REGION,
        ZONE_KEY: zone, "failure-domain.beta.kubernetes.io/zone": zone, "pool": pool,
        "bench.tspread/group": group,
    }
    spec: dict = {"providerID": f"bench://{zone}/{name}"}
    taints = []
    if pool == "gpu":
        taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
    if cordoned:
        spec["unschedulable"] = True
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                       "timeAdded": CREATED})
    if taints:
        spec["taints"] = taints
    resources = {"cpu": "32", "memory": "131072Mi", "pods": "110", "ephemeral-storage": "200Gi"}
    return {
        "metadata": {"name": name, "uid": uid("node", name), "resourceVersion": str(1000 + serial),
                     "creationTimestamp": CREATED, "labels": labels,
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": spec,
        "status": {
            "capacity": resources, "allocatable": dict(resources, cpu="31850m", memory="126976Mi"),
            "conditions": [
                {"type": t, "status": "False", "reason": f"Kubelet{r}", "lastHeartbeatTime": CREATED,
                 "lastTransitionTime": CREATED, "message": f"kubelet has {m}"}
                for t, r, m in (("MemoryPressure", "HasSufficientMemory", "sufficient memory available"),
                                ("DiskPressure", "HasNoDiskPressure", "no disk pressure"),
                                ("PIDPressure", "HasSufficientPID", "sufficient PID available"))
            ] + [{"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": CREATED,
                  "lastTransitionTime": CREATED, "message": "kubelet is posting ready status"}],
            "nodeInfo": {"kubeletVersion": "v1.30.4", "containerRuntimeVersion": "containerd://1.7.20",
                         "osImage": "Bench Linux", "architecture": "amd64", "operatingSystem": "linux"},
            "images": image_status(list(images)),
        },
    }


def _managed_fields(labels: dict, containers: list[str], bound: bool) -> list[dict]:
    """The three managers a controller-created pod carries: its controller, the scheduler, kubelet."""
    label_fields = {f"f:{k}": {} for k in labels}
    spec_fields = {f'k:{{"name":"{c}"}}': {".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {},
                                             "f:name": {}, "f:ports": {}, "f:resources": {"f:requests": {}},
                                             "f:terminationMessagePath": {}, "f:volumeMounts": {}}
                   for c in containers}
    out = [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": CREATED,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": label_fields,
                                        "f:ownerReferences": {".": {}}},
                         "f:spec": {"f:containers": spec_fields, "f:dnsPolicy": {}, "f:enableServiceLinks": {},
                                    "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
                                    "f:terminationGracePeriodSeconds": {}, "f:tolerations": {},
                                    "f:topologySpreadConstraints": {}, "f:volumes": {}}}}]
    if bound:
        out.append({"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": CREATED,
                    "fieldsType": "FieldsV1", "subresource": "status",
                    "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {},
                                              "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}})
    return out


def pod_template(app: str, namespace: str, cpu: str, memory: str, spread: list[dict],
                 node_selector: dict | None = None) -> dict:
    """The spec shared by every pod of one workload (copied per pod by `pod`)."""
    container = {
        "name": app, "image": app_image(namespace, app),
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "APP_NAME", "value": app},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"},
                         {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }
    sidecar = {"name": "proxy", "image": PROXY_IMAGE,
               "imagePullPolicy": "IfNotPresent", "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
               "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
    spec = {
        "containers": [container, sidecar],
        "volumes": [{"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
                    {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt",
                                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
        "schedulerName": "default-scheduler", "tolerations": DEFAULT_TOLERATIONS, "priority": 0,
        "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
    }
    if spread:
        spec["topologySpreadConstraints"] = spread
    if node_selector:
        spec["nodeSelector"] = node_selector
    return spec


def pod(name: str, namespace: str, labels: dict, owner: dict, template: dict, node: str | None,
        phase: str, serial: int, terminating: bool = False, pending_message: str = "") -> dict:
    spec = dict(template)
    if node:
        spec["nodeName"] = node
    names = [c["name"] for c in spec["containers"]]
    resources = [c.get("resources") or {} for c in spec["containers"]]
    meta = {"name": name, "generateName": name.rsplit("-", 1)[0] + "-", "namespace": namespace,
            "uid": uid("pod", namespace, name), "resourceVersion": str(50000 + serial),
            "creationTimestamp": timestamp(serial), "labels": labels, "ownerReferences": [owner],
            "managedFields": _managed_fields(labels, names, node is not None)}
    if terminating:
        meta["deletionTimestamp"] = timestamp(serial + 600)
        meta["deletionGracePeriodSeconds"] = 30
    return {"metadata": meta, "spec": spec,
            "status": _pod_status(names, node, phase, serial, pending_message, resources)}


def _pod_status(containers: list[str], node: str | None, phase: str, serial: int, pending_message: str,
                resources: list[dict]) -> dict:
    if node is None:
        return {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": pending_message,
             "lastProbeTime": None, "lastTransitionTime": timestamp(serial)}]}
    ip = f"198.18.{serial // 250 % 250}.{serial % 250 + 1}"
    ready = "True" if phase == "Running" else "False"
    return {
        "phase": phase, "hostIP": "198.19.0.1", "podIP": ip, "podIPs": [{"ip": ip}], "qosClass": "Burstable",
        "startTime": timestamp(serial),
        "conditions": [{"type": t, "status": ready if t in ("Ready", "ContainersReady") else "True",
                        "lastProbeTime": None, "lastTransitionTime": timestamp(serial + 5)}
                       for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
        "containerStatuses": [
            {"name": c, "ready": ready == "True", "restartCount": 0, "started": ready == "True",
             "image": f"registry.bench.invalid/{c}:latest", "imageID": "sha256:" + "ab" * 32,
             "containerID": "containerd://" + uid(c, serial).replace("-", ""),
             "state": {"running": {"startedAt": timestamp(serial + 3)}} if ready == "True" else
             {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1, "reason": "Completed"}},
             "lastState": {},
             # what a 1.33+ kubelet (InPlacePodVerticalScaling) reports of a container not resizing
             "allocatedResources": dict(r.get("requests") or {}), "resources": r}
            for c, r in zip(containers, resources)],
    }


def owner_ref(kind: str, name: str, namespace: str, api_version: str = "apps/v1") -> dict:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(kind, namespace, name),
            "controller": True, "blockOwnerDeletion": True}


def deployment(name: str, namespace: str, labels: dict, replicas: int, template_spec: dict) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("Deployment", namespace, name),
                         "creationTimestamp": CREATED, "labels": labels, "generation": 3},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": template_spec},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}},
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                       "updatedReplicas": replicas, "observedGeneration": 3}}


def replica_set(name: str, namespace: str, deploy: str, labels: dict, replicas: int) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("ReplicaSet", namespace, name),
                         "creationTimestamp": CREATED, "labels": labels,
                         "ownerReferences": [owner_ref("Deployment", deploy, namespace)]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}}},
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}}


def daemon_set(name: str, namespace: str, labels: dict, count: int) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("DaemonSet", namespace, name),
                         "creationTimestamp": CREATED, "labels": labels},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}}},
            "status": {"desiredNumberScheduled": count, "currentNumberScheduled": count, "numberReady": count}}


def job(name: str, namespace: str, labels: dict, completions: int) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("Job", namespace, name),
                         "creationTimestamp": CREATED, "labels": labels},
            "spec": {"completions": completions, "selector": {"matchLabels": labels}},
            "status": {"succeeded": completions}}


def pdb(name: str, namespace: str, labels: dict, replicas: int, budget: dict) -> dict:
    allowed = budget.get("maxUnavailable", 1) if "maxUnavailable" in budget else replicas - replicas // 2
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("PDB", namespace, name),
                         "creationTimestamp": CREATED},
            "spec": dict(budget, selector={"matchLabels": labels}),
            "status": {"disruptionsAllowed": allowed, "currentHealthy": replicas,
                       "desiredHealthy": replicas - allowed, "expectedPods": replicas, "observedGeneration": 1}}


def service(name: str, namespace: str, labels: dict) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("Service", namespace, name),
                         "creationTimestamp": CREATED},
            "spec": {"selector": labels, "type": "ClusterIP",
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}}


def event(pod_name: str, namespace: str, reason: str, message: str, serial: int, kind: str = "Warning") -> dict:
    name = f"{pod_name}.{serial:016x}"
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid("Event", namespace, name),
                         "creationTimestamp": timestamp(serial)},
            "involvedObject": {"kind": "Pod", "namespace": namespace, "name": pod_name,
                               "uid": uid("pod", namespace, pod_name), "apiVersion": "v1"},
            "reason": reason, "message": message, "type": kind, "count": 1 + serial % 4,
            "firstTimestamp": timestamp(serial), "lastTimestamp": timestamp(serial + 60),
            "source": {"component": "default-scheduler"}}
