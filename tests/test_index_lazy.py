"""ClusterIndex.follow_nodes_only: the namespace and label lists stay as built and, once a pod
moved, `candidates` reads them only on the nodes no pod of the namespace moved on, and the
namespace's pods off the per-node lists of the others and off the unbound list; and
`candidates` / `matching_pods` must still answer exactly what an index edited in place
answers — before any move and after, across views (`copy`) taken at any moment, for pods
coming back, bound, unbound and marked terminating."""

import dataclasses
import random

import pytest

from conftest import make_node, make_pod, make_snapshot
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model.labels import Selector

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


@pytest.mark.parametrize("seed", range(6))
def test_lazy_changes_answer_like_edits_in_place(seed):
    rng = random.Random(seed)
    pods = _pods(60)
    # some pods start unbound: the lazy index lists them apart from the nodes' lists
    pods = [dataclasses.replace(p, node_name="") if i % 9 == 4 else p for i, p in enumerate(pods)]
    snap = make_snapshot([make_node(f"n{i}") for i in range(4)], pods)
    eager, lazy = ClusterIndex(snap), ClusterIndex(snap)
    lazy.follow_nodes_only()
    assert _answers(lazy) == _answers(eager)  # as built: the namespace and label lists answer
    present, gone = list(pods), []
    views = [(lazy.copy(), _answers(eager))]
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


def test_a_lazy_index_answers_from_the_pods_once_one_moved():
    """After a move, a namespace's answer is made from the pods where they are now (the
    namespace and label lists being stale), made once per state of the pods, and a view
    taken before the move keeps the answer of its moment."""
    pods = _pods(20)
    snap = make_snapshot([make_node(f"n{i}") for i in range(4)], pods)
    lazy = ClusterIndex(snap)
    lazy.follow_nodes_only()
    before = lazy.copy()
    web = Selector.parse("app=web")
    want = sorted(p.key for p in lazy.matching_pods("default", web))
    gone = next(p for p in pods if p.namespace == "default" and p.labels["app"] == "web")
    lazy.remove_pod(gone)
    assert sorted(p.key for p in lazy.matching_pods("default", web)) == sorted(set(want) - {gone.key})
    assert lazy.candidates("default", web) is lazy.candidates("default", web)  # made once for this state
    moved = dataclasses.replace(gone, node_name="")
    lazy.add_pod(moved)  # back, unbound
    assert moved in lazy.matching_pods("default", web)
    assert sorted(p.key for p in before.matching_pods("default", web)) == want
    assert gone in before.matching_pods("default", web)


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
@pytest.mark.parametrize("seed", range(4))
def test_a_mark_undoes_the_moves_and_the_usage_kept(seed, lazy):
    """ClusterIndex.mark / restore with the undo entries of its journal (a drain simulation's
    fork and revert): after random moves and usage reads, undoing the entries gives back the
    answers and pod lists of the mark's moment, and every usage total kept is that of the
    node's pods then (a total made after the mark for a node whose pods the mark gives back
    would otherwise stay)."""
    from kubectl_tspread.engine import resources

    rng = random.Random(seed)
    pods = _pods(48)
    index = ClusterIndex(make_snapshot([make_node(f"n{i}") for i in range(4)], pods))
    if lazy:
        index.follow_nodes_only()
    present = list(pods)
    undone = 0
    for round_ in range(30):
        for n in range(4):
            if rng.random() < 0.5:
                resources.node_usage(index, f"n{n}")
        answers, lists = _answers(index), {n: list(ps) for n, ps in index.pods_by_node.items()}
        journal: list = []
        saved = index.mark(journal)
        for step in range(rng.randint(1, 12)):
            if present and rng.random() < 0.5:
                index.remove_pod(present.pop(rng.randrange(len(present))))
            else:
                pod = make_pod(f"r{round_}-{step}", node=f"n{rng.randrange(4)}", labels={"app": "web", "team": "a"})
                present.append(pod)
                index.add_pod(pod)
            resources.node_usage(index, f"n{rng.randrange(4)}")
        if rng.random() < 0.7:
            for undo, container, key, old in reversed(journal):
                undo(container, key, old)
            index.restore(saved, None)
            present = [p for ps in index.pods_by_node.values() for p in ps]
            assert _answers(index) == answers and {n: ps for n, ps in index.pods_by_node.items() if ps} == \
                {n: ps for n, ps in lists.items() if ps}
            undone += 1
        else:
            index.journal = None  # kept: the entries are dropped
        for name, entry in index.node_cache.items():
            on = index.pods_by_node.get(name, ())
            assert entry[0] == resources._usage(on) and entry[1] == frozenset(p.key for p in on), (round_, name)
    assert undone >= 10
