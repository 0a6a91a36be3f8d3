"""deploy/rbac/: the ClusterRoles grant exactly what the live layer and drain-safe use."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubectl_tspread.snapshot.decode import DECODERS
from kubectl_tspread.snapshot.kinds import RESOURCES

RBAC_DIR = Path(__file__).resolve().parent.parent / "deploy" / "rbac"
READONLY = RBAC_DIR / "tspread-readonly.yaml"
DRAIN = RBAC_DIR / "tspread-drain.yaml"
BINDINGS = RBAC_DIR / "example-bindings.yaml"
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate"}


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _role(path: Path) -> dict:
    (doc,) = _docs(path)
    return doc


def grants(role: dict) -> set[tuple[str, str, str]]:
    """(apiGroup, resource, verb) triples a ClusterRole allows."""
    out = set()
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    out.add((group, resource, verb))
    return out


def _group_of(prefix: str) -> str:
    # "/api/v1" is the core group ""; "/apis/apps/v1" is "apps"
    return prefix.split("/")[2] if prefix.startswith("/apis/") else ""


@pytest.fixture(scope="module")
def readonly() -> dict:
    return _role(READONLY)


@pytest.fixture(scope="module")
def drain() -> dict:
    return _role(DRAIN)


def test_every_decoded_kind_has_a_known_api_resource():
    # A kind decoded but absent from RESOURCES could be read without anyone granting it.
    missing = sorted(set(DECODERS) - set(RESOURCES))
    assert not missing, f"kinds decoded but with no API resource (so no RBAC rule): {missing}"


@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_readonly_role_grants_get_and_list_on_every_kind_the_live_layer_reads(readonly, kind):
    res = RESOURCES[kind]
    granted = grants(readonly)
    for verb in ("get", "list"):
        assert (_group_of(res.prefix), res.plural, verb) in granted, (
            f"{READONLY.name} lacks {verb} on {res.group_resource} ({kind})")


@pytest.mark.parametrize("path", [READONLY, DRAIN], ids=["readonly", "drain"])
def test_roles_are_rbac_v1_clusterroles_without_wildcards(path):
    role = _role(path)
    assert role["apiVersion"] == "rbac.authorization.k8s.io/v1"
    assert role["kind"] == "ClusterRole"
    assert role["metadata"]["name"] == path.stem
    for group, resource, verb in grants(role):
        assert "*" not in (group, resource, verb), f"{path.name} uses a wildcard: {group}/{resource} {verb}"


def test_readonly_role_cannot_write_anything(readonly):
    writes = sorted(g for g in grants(readonly) if g[2] in WRITE_VERBS)
    assert not writes, f"read-only role grants writes: {writes}"


def test_readonly_role_grants_nothing_beyond_the_resources_read(readonly):
    read = {(_group_of(r.prefix), r.plural) for r in RESOURCES.values()}
    extra = sorted({(g, r) for g, r, _ in grants(readonly)} - read)
    assert not extra, f"read-only role grants resources the tool never reads: {extra}"


@pytest.mark.parametrize("grant", [
    ("", "nodes", "patch"),
    ("", "pods/eviction", "create"),
    ("", "nodes", "watch"),
    ("", "pods", "watch"),
    ("apps", "replicasets", "watch"),
    ("apps", "deployments", "watch"),
    ("apps", "statefulsets", "watch"),
    ("policy", "poddisruptionbudgets", "watch"),
], ids=lambda g: f"{g[2]} {g[1]}{'.' + g[0] if g[0] else ''}")
def test_drain_role_grants_what_execution_needs(drain, grant):
    assert grant in grants(drain)


def test_drain_role_includes_every_read_of_the_readonly_role(drain, readonly):
    # the drain planner runs every scheduler filter, so it reads all that why-pending reads
    missing = sorted(grants(readonly) - grants(drain))
    assert not missing, f"drain role lacks reads of the read-only role: {missing}"


def test_drain_role_writes_only_cordon_and_eviction(drain):
    writes = {g for g in grants(drain) if g[2] in WRITE_VERBS}
    assert writes == {("", "nodes", "patch"), ("", "pods/eviction", "create")}


def test_example_bindings_point_at_the_shipped_roles():
    shipped = {_role(READONLY)["metadata"]["name"], _role(DRAIN)["metadata"]["name"]}
    bound = set()
    for doc in _docs(BINDINGS):
        assert doc["kind"] == "ClusterRoleBinding", "node reads need a cluster-wide binding"
        assert doc["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": doc["roleRef"]["name"]}
        assert doc["subjects"], f"{doc['metadata']['name']} binds nobody"
        bound.add(doc["roleRef"]["name"])
    assert bound == shipped


def test_the_403_hint_names_the_shipped_readonly_file():
    from kubectl_tspread.snapshot.kinds import RBAC_HINT

    assert str(READONLY.relative_to(RBAC_DIR.parent.parent)) in RBAC_HINT


def test_the_write_403_hint_names_the_shipped_drain_file():
    from kubectl_tspread.snapshot.kinds import WRITE_RBAC_HINT

    assert str(DRAIN.relative_to(RBAC_DIR.parent.parent)) in WRITE_RBAC_HINT
