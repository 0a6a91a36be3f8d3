"""A Pod's container resources as the API server stores them (SetDefaults_Pod): a resource
limited but not requested is requested at its limit. Pods read from a cluster carry that
already; hand-written manifests in a dump may not, and were read as requesting nothing."""

from __future__ import annotations

import json

import pytest

from kubectl_tspread.snapshot import decode, wire
from kubectl_tspread.snapshot.fields import MalformedObject

MI = 1 << 20


def _pod(*containers: dict, inits: tuple = ()) -> dict:
    spec: dict = {"containers": [{"name": f"c{i}", "image": "x", "resources": r} for i, r in enumerate(containers)]}
    if inits:
        spec["initContainers"] = [{"name": f"i{i}", "image": "x", "resources": r} for i, r in enumerate(inits)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec,
            "status": {"phase": "Pending"}}


def _both(obj: dict):
    """The record from a full parse and from wire.py's typed parse (a dump's List item)."""
    full = decode.pod(json.loads(json.dumps(obj)))
    typed = decode.pod(wire.decode_pod_item(json.dumps(obj).encode()))
    assert full == typed
    return full


@pytest.mark.parametrize("resources, requests, nonzero", [
    # only limits: requested at them (the scoring's defaults no longer apply: there is a request)
    ({"limits": {"cpu": "2", "memory": "1Gi"}}, {"cpu": 2000, "memory": 1024 * MI}, (2000, 1024 * MI)),
    # a request kept, the other resource taken from its limit
    ({"requests": {"cpu": "500m"}, "limits": {"cpu": "2", "memory": "256Mi"}},
     {"cpu": 500, "memory": 256 * MI}, (500, 256 * MI)),
    # an explicit request of 0 stays 0
    ({"requests": {"cpu": "0"}, "limits": {"cpu": "1"}}, {"cpu": 0}, (0, 200 * MI)),
    # no limits: as written, the scoring's defaults for what is not requested
    ({"requests": {"cpu": "100m"}}, {"cpu": 100}, (100, 200 * MI)),
])
def test_a_limit_without_a_request_is_requested(resources, requests, nonzero):
    p = _both(_pod(resources))
    assert {k: v for k, v in p.requests.items() if k in ("cpu", "memory")} == requests
    assert p.score_requests == nonzero


def test_init_containers_are_defaulted_too():
    p = _both(_pod({"requests": {"cpu": "100m"}}, inits=({"limits": {"cpu": "3"}},)))
    assert p.requests["cpu"] == 3000  # max(init 3000, containers 100)


def test_a_bad_limit_is_named_as_the_limit():
    with pytest.raises(MalformedObject) as e:
        decode.DECODERS["Pod"][0](_pod({"limits": {"cpu": "lots"}}))
    assert "spec.containers[0].resources.limits.cpu" in str(e.value)
