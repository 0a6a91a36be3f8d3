"""ClusterIndex.lazy_removals: the namespace and label lists are changed by marks and
additions kept aside, and `candidates` / `matching_pods` must still answer exactly what an
index edited in place answers — across views (`copy`), pods coming back, and the rebuild
once STALE_LIMIT changes pile up."""

import dataclasses
import random

import pytest

from conftest import make_node, make_pod, make_snapshot
from kubectl_tspread.engine import index as indexmod
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.labels import Selector

SELECTORS = [Selector.parse(s) for s in ("app=web", "app=api", "team=a", "app in (web,api)", "tier", "")]


def _pods(n: int):
    return [make_pod(f"p{i}", node=f"n{i % 4}", labels={"app": ("web", "api", "db")[i % 3], "team": "ab"[i % 2],
                                                        **({"tier": "x"} if i % 5 == 0 else {})},
                     namespace=("default", "other")[i % 7 == 0]) for i in range(n)]


def _answers(index: ClusterIndex) -> dict:
    out = {(ns, str(sel)): sorted(p.key for p in index.matching_pods(ns, sel))
           for ns in ("default", "other") for sel in SELECTORS}
    out.update({("node", n): sorted((p.key, p.terminating) for p in pods) for n, pods in index.pods_by_node.items()})
    return out


@pytest.mark.parametrize("limit", [3, 128], ids=["rebuilt every 3 changes", "rebuilt at the default limit"])
@pytest.mark.parametrize("seed", range(3))
def test_lazy_changes_answer_like_edits_in_place(seed, limit, monkeypatch):
    monkeypatch.setattr(indexmod, "STALE_LIMIT", limit)
    rng = random.Random(seed)
    pods = _pods(60)
    snap = make_snapshot([make_node(f"n{i}") for i in range(4)], pods)
    eager, lazy = ClusterIndex(snap), ClusterIndex(snap)
    lazy.lazy_removals()
    present, gone = list(pods), []
    views = []
    for step in range(300):
        if gone and rng.random() < 0.4:
            pod = gone.pop(rng.randrange(len(gone)))  # the same object back
            present.append(pod)
            eager.add_pod(pod)
            lazy.add_pod(pod)
        elif present and rng.random() < 0.2:
            # marked terminating where it is (replace_pod), or any other record in its place
            old = present.pop(rng.randrange(len(present)))
            new = dataclasses.replace(old, terminating=True) if rng.random() < 0.7 else \
                dataclasses.replace(old, node_name=f"n{(int(old.node_name[1:]) + 1) % 4}" if old.node_name else "")
            present.append(new)
            eager.remove_pod(old)
            eager.add_pod(new)
            lazy.replace_pod(old, new)
        elif present and rng.random() < 0.6:
            pod = present.pop(rng.randrange(len(present)))
            gone.append(pod)
            eager.remove_pod(pod)
            lazy.remove_pod(pod)
        else:
            pod = make_pod(f"new{step}", node=f"n{step % 4}", labels={"app": rng.choice(["web", "api"]), "team": "a"})
            present.append(pod)
            eager.add_pod(pod)
            lazy.add_pod(pod)
        if step % 50 == 0:  # a view taken now keeps answering for this moment
            views.append((lazy.copy(), _answers(eager)))
        assert _answers(lazy) == _answers(eager), step
    for view, answers in views:
        assert _answers(view) == answers
