"""The drain simulator's memos (spread states, spread partitions, scoring usage, forked
indexes) must answer exactly what a fresh computation on the same simulated state does."""

from __future__ import annotations

import collections
import dataclasses
import itertools

import pytest

from conftest import make_constraint, make_pod, make_snapshot
from drain_builders import nodes_in, web
from kubectl_tspread.views.drain.core import vector
from kubectl_tspread.views.drain.core.placement import _nonzero, keys_of, template_of
from kubectl_tspread.views.drain.core.simulate import SimCluster, pod_with, spread_key_of
from kubectl_tspread.views.drain.core.steps import DomainCounts
from kubectl_tspread.engine import spread
from kubectl_tspread.engine.index import ClusterIndex
from kubectl_tspread.model import HONOR, HOSTNAME_KEY, IGNORE, SCHEDULE_ANYWAY, HostPort, Toleration, Volume


def _nodes():
    return nodes_in({"a": 2, "b": 2, "c": 2})


def _pods(constraints):
    out = web({"a1": 2, "a2": 1, "b1": 1, "c1": 1}, constraints, requests={"cpu": 500})
    out.append(make_pod("db-1", node="b2", labels={"app": "db"}, requests={"cpu": 1000}))
    return out


CASES = [
    ("zone DoNotSchedule, taints Ignore", [make_constraint()]),
    ("zone DoNotSchedule, taints Honor", [make_constraint(node_taints_policy=HONOR)]),
    ("zone hard + hostname soft", [make_constraint(), make_constraint(HOSTNAME_KEY, mode=SCHEDULE_ANYWAY)]),
    ("hostname hard, affinity Ignore", [make_constraint(HOSTNAME_KEY, node_affinity_policy=IGNORE)]),
]


def _listing_nodes_left(sim: SimCluster, st: spread.SpreadState) -> spread.SpreadState:
    """`st` without the deleted nodes its domains still list (partition.without_node keeps a
    deleted node listed while its domain keeps a node that exists): what a fresh compute
    over the nodes left makes. A domain listing only deleted nodes stays, with none, and so
    never equals a fresh compute's."""
    def left(cs: spread.ConstraintState) -> spread.ConstraintState:
        return dataclasses.replace(
            cs, node_domain={n: v for n, v in cs.node_domain.items() if n in sim.nodes},
            domains={v: spread.Domain(v, d.pods, tuple(n for n in d.nodes if n in sim.nodes))
                     for v, d in cs.domains.items()})
    return dataclasses.replace(st, constraints=tuple(map(left, st.constraints)))


def _same(sim: SimCluster, pod) -> None:
    fresh = spread.compute(sim.index, pod)
    assert _listing_nodes_left(sim, sim.spread_state(pod)) == fresh


def _mutations(sim: SimCluster):
    """Yield after each kind of mutation the simulator makes during a drain."""
    victim = sim.pods["default/web-1"]
    sim.cordon(["a1"])
    yield "cordon a1"
    sim.evict(victim)
    yield "evict web-1 (terminating)"
    repl = sim.replacement_for(victim)
    sim.add_pending(repl)
    yield "replacement pending"
    sim.bind(repl, "c2")
    yield "replacement bound to c2"
    sim.settle()
    yield "terminating pods gone"
    sim.delete_node("a1")
    yield "node a1 deleted"


@pytest.mark.parametrize("constraints", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_spread_state_memo_matches_fresh_compute_after_every_mutation(constraints):
    sim = SimCluster(make_snapshot(_nodes(), _pods(constraints)))
    probe = sim.replacement_for(sim.pods["default/web-2"])
    _same(sim, probe)
    for _ in _mutations(sim):
        _same(sim, probe)


@pytest.mark.parametrize("constraints", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_a_judged_distribution_summarises_the_counts_it_reads(constraints):
    """A step's table row summarises a spread past six domains by its fewest and most pods,
    taken from the state's count histogram: after every mutation they are the counts'."""
    sim = SimCluster(make_snapshot(_nodes(), _pods(constraints)))
    probe = sim.replacement_for(sim.pods["default/web-2"])
    for _ in itertools.chain([None], _mutations(sim)):
        for cs in sim.spread_state(probe).constraints:
            pods = [d.pods for d in cs.domains.values()]
            assert DomainCounts(cs.domains, cs.count_histogram).extremes() == (min(pods), max(pods))
            assert cs.count_histogram == dict(collections.Counter(pods))


def test_fork_does_not_see_the_other_branch():
    sim = SimCluster(make_snapshot(_nodes(), _pods([make_constraint()])))
    probe = sim.replacement_for(sim.pods["default/web-2"])
    before = sim.spread_state(probe)
    other = sim.copy()
    for _ in _mutations(other):
        pass
    assert sim.spread_state(probe) == before == spread.compute(sim.index, probe)
    assert spread.compute(other.index, probe) == _listing_nodes_left(other, other.spread_state(probe)) != before
    assert "a1" in sim.index.nodes and "a1" not in other.index.nodes


def test_index_copy_is_independent():
    snap = make_snapshot(_nodes(), _pods([make_constraint()]))
    index = ClusterIndex(snap)
    fork = index.copy()
    pod = snap.pods[0]
    fork.remove_pod(pod)
    assert pod in index.pods_by_node[pod.node_name] and pod not in fork.pods_by_node[pod.node_name]
    assert len(index.matching_pods("default", pod.spread[0].selector)) == 5
    assert len(fork.matching_pods("default", pod.spread[0].selector)) == 4


def test_nonzero_usage_follows_the_node_version():
    sim = SimCluster(make_snapshot(_nodes(), _pods([make_constraint()])))
    row_of = vector.usage_rows(_nonzero)
    assert sim.usage_of("a1", row_of)[vector.NONZERO_COLUMNS] == (1000, 2 * 200 * 1024 * 1024)
    sim.evict(sim.pods["default/web-1"])
    sim.settle()
    assert sim.usage_of("a1", row_of)[vector.NONZERO_COLUMNS] == (500, 200 * 1024 * 1024)


def _seven_nodes(constraints):
    """Zones a (3 nodes), b and c (2 each), pods of web on each node; the simulation, a
    probe replacement and its memo key, checked once against a fresh compute."""
    nodes = nodes_in({"a": 3, "b": 2, "c": 2})
    pods = web({"a1": 2, "a2": 1, "a3": 1, "b1": 1, "b2": 2, "c1": 1, "c2": 3}, constraints)
    sim = SimCluster(make_snapshot(nodes, pods))
    probe = sim.replacement_for(sim.pods["default/web-1"])
    _same(sim, probe)
    return sim, probe, spread_key_of(probe)


DELETION_CASES = [
    ("zone DoNotSchedule", [make_constraint()]),
    ("zone DoNotSchedule, minDomains 3", [make_constraint(min_domains=3)]),
    ("hostname DoNotSchedule", [make_constraint(HOSTNAME_KEY)]),
    ("zone hard + hostname soft", [make_constraint(), make_constraint(HOSTNAME_KEY, mode=SCHEDULE_ANYWAY)]),
    ("zone Honor + hostname hard", [make_constraint(node_taints_policy=HONOR), make_constraint(HOSTNAME_KEY)]),
]


@pytest.mark.parametrize("constraints", [c for _, c in DELETION_CASES], ids=[i for i, _ in DELETION_CASES])
def test_states_move_with_node_deletions_as_a_fresh_compute_counts(constraints):
    """A drain that deletes its drained nodes: each node is cordoned, emptied and deleted.
    The memoised states are moved, not dropped (the template is still memoised after each
    deletion), and every one equals a fresh compute: the domain loses the node, a zone
    goes with its last node (zone b, then a), a hostname domain with its node — the
    empty ones holding the global minimum, so it rises — and with minDomains 3 the
    minimum is forced to 0 once fewer than three zones are left."""
    sim, probe, key = _seven_nodes(constraints)
    mins = []
    for name in ("b1", "a1", "b2", "a2", "c1"):
        _emptied(sim, name)
        _same(sim, probe)
        mins.append([cs.global_min for cs in sim.spread_state(probe).constraints])
        sim.delete_node(name)
        assert key in sim._spread["default"], f"{name}: the state was dropped, not moved"
        _same(sim, probe)
        mins.append([cs.global_min for cs in sim.spread_state(probe).constraints])
    assert len({tuple(m) for m in mins}) > 1  # the deletions did move the minimum


HONOR_CASES = [
    ("zone Honor", [make_constraint(node_taints_policy=HONOR)]),
    ("zone Honor, minDomains 3", [make_constraint(node_taints_policy=HONOR, min_domains=3)]),
    ("hostname Honor", [make_constraint(HOSTNAME_KEY, node_taints_policy=HONOR)]),
    ("zone Honor + hostname Ignore", [make_constraint(node_taints_policy=HONOR), make_constraint(HOSTNAME_KEY)]),
]


@pytest.mark.parametrize("constraints", [c for _, c in HONOR_CASES], ids=[i for i, _ in HONOR_CASES])
def test_states_move_with_cordons_under_honor_as_a_fresh_compute_counts(constraints):
    """Under nodeTaintsPolicy Honor a cordoned node makes no domain: its pods, still there,
    stop counting in it, and zone b goes with its last node. The memoised states move
    with each cordon (the template stays memoised) and equal a fresh compute, through
    the evictions, settles and deletions that follow."""
    sim, probe, key = _seven_nodes(constraints)
    seen = set()
    for name in ("b1", "a1", "b2", "c1"):
        sim.cordon([name])
        assert key in sim._spread["default"], f"{name}: the state was dropped, not moved"
        _same(sim, probe)
        seen.add(tuple((len(cs.domains), cs.global_min, cs.skew) for cs in sim.spread_state(probe).constraints))
        for p in sim.pods_on(name)[:1]:
            sim.evict(p)
            _same(sim, probe)
        sim.settle()
        _same(sim, probe)
    sim.delete_node("b1")
    _same(sim, probe)
    assert len(seen) > 2  # the cordons did move the domains and counts


def _emptied(sim: SimCluster, name: str) -> None:
    """Cordon `name`, evict each of its pods and settle, as a drain step does."""
    sim.cordon([name])
    for p in sim.pods_on(name):
        sim.evict(p)
    sim.settle()


def _moves(sim: SimCluster, probe, names, delete: bool):
    """The probe's constraint states before and after each cordon, eviction, settle and
    deletion of `names`, in turn."""
    def states():
        return sim.spread_state(probe).constraints

    for name in names:
        before = states()
        sim.cordon([name])
        yield before, states()
        for p in sim.pods_on(name):
            before = states()
            sim.evict(p)
            yield before, states()
        before = states()
        sim.settle()
        yield before, states()
        if delete:
            before = states()
            sim.delete_node(name)
            yield before, states()


@pytest.mark.parametrize("constraints,delete",
                         [(c, True) for _, c in DELETION_CASES] + [(c, False) for _, c in HONOR_CASES],
                         ids=[f"delete: {i}" for i, _ in DELETION_CASES] + [f"honor: {i}" for i, _ in HONOR_CASES])
def test_same_counts_only_when_no_node_or_domain_count_moved(constraints, delete):
    """counts.same_counts lets the order search keep a moved state's shares (search.py):
    whenever it says yes, every node and every remaining domain holds what it held. It
    says yes at least once when drained, emptied nodes are deleted (a cordon under Honor
    here always takes counted pods out of their domain: it must say no)."""
    from kubectl_tspread.views.drain.core import counts

    sim, probe, _ = _seven_nodes(constraints)
    said_yes = 0
    for before, after in _moves(sim, probe, ("b1", "a1", "b2", "c1"), delete):
        for old, new in zip(before, after):
            if old is new or not counts.same_counts(old, new):
                continue
            said_yes += 1
            assert dict(new.node_counts.items()) == dict(old.node_counts.items())
            assert {v: d.pods for v, d in new.domains.items()} == \
                {v: old.domains[v].pods for v in new.domains}
    assert said_yes or not delete


def test_spread_state_of_a_pod_like_another_is_that_state_with_its_own_pod():
    sim = SimCluster(make_snapshot(_nodes(), _pods([make_constraint(), make_constraint(HOSTNAME_KEY)])))
    first = sim.replacement_for(sim.pods["default/web-1"])
    second = sim.replacement_for(sim.pods["default/web-2"])
    st = sim.spread_state(first)
    other = sim.spread_state(second)
    assert other.pod is second
    for f in dataclasses.fields(spread.SpreadState):  # `hard` included: it is not compared by ==
        if f.name != "pod":
            assert getattr(other, f.name) == getattr(st, f.name), f.name
    assert other == spread.compute(sim.index, second)


def test_template_keys_follow_every_field_they_read():
    """parts_memo keys a pod by the objects of the fields it reads: a record that shares
    them shares the key, and a change to any of them gives the key of a fresh record."""
    pod = make_pod("web-1", node="", labels={"app": "web"}, requests={"cpu": 500}, namespace="default")
    same = pod_with(pod, name="web-2", uid="u2")  # what the keys do not read
    assert template_of(same) == template_of(pod) and spread_key_of(same) == spread_key_of(pod)
    assert keys_of(same) == keys_of(pod)
    # an equal namespace string that is another object is the same namespace
    assert template_of(pod_with(pod, namespace="".join(["def", "ault"]))) == template_of(pod)
    changes = {
        "namespace": "other", "labels": {"app": "api"}, "node_name": "a1", "requests": {"cpu": 600},
        "tolerations": (Toleration(key="k", operator="Exists"),), "node_selector": {"disk": "ssd"},
        "spread": (make_constraint(),), "host_ports": (HostPort(8080),), "volumes": (Volume("data", pvc="claim"),),
    }
    for name, value in changes.items():
        changed = pod_with(pod, **{name: value})
        fresh = make_pod("web-1", node=changed.node_name, labels=dict(changed.labels), requests=dict(changed.requests),
                         namespace=changed.namespace)
        fresh = pod_with(fresh, tolerations=changed.tolerations, node_selector=dict(changed.node_selector),
                         spread=changed.spread, host_ports=changed.host_ports, volumes=changed.volumes)
        assert template_of(changed) != template_of(pod), name
        assert template_of(changed) == template_of(fresh), name
        assert keys_of(changed) == keys_of(fresh), name
        assert spread_key_of(changed) == spread_key_of(fresh), name


def test_a_parts_memo_holds_few_pods_alive_and_answers_alike_after_letting_go():
    """parts_memo's map by pod keeps the pods it was asked about alive, up to `pods_limit`:
    past it, it starts over (the records a simulation replaced are let go), and a pod asked
    about again is answered from the map by parts, without calling the function again."""
    import sys

    from kubectl_tspread.views.drain.core.simulate import parts_memo

    calls = []

    def fn(p):
        calls.append(p.name)
        return p.labels["app"]

    memo = parts_memo(fn, ("labels",), pods_limit=4)
    first = make_pod("web-0", labels={"app": "web"})
    pods = [pod_with(first, name=f"web-{k}") for k in range(1, 10)]  # the same labels object
    held = sys.getrefcount(first)
    assert memo(first) == "web" and sys.getrefcount(first) == held + 1  # the map by pod holds it
    assert [memo(p) for p in pods] == ["web"] * 9
    assert sys.getrefcount(first) == held  # let go when the map started over
    assert memo(first) == "web" and calls == ["web-0"]  # answered by parts, fn not called again


def test_usage_rows_move_with_every_mutation_as_a_fresh_sum():
    """SimCluster.usage_of keeps each node's sums by the pods put and dropped: after each kind
    of mutation they are what summing the node's pods again gives (terminating pods hold
    their requests until gone)."""
    sim = SimCluster(make_snapshot(_nodes(), _pods([make_constraint()])))
    row_of = vector.usage_rows(_nonzero)

    def fresh(node):
        rows = [row_of(p) for p in sim.index.pods_by_node.get(node, ())]
        return tuple(map(sum, zip(*rows))) if rows else row_of.zero

    names = sorted(sim.nodes)
    kept = {n: sim.usage_of(n, row_of) for n in names}  # kept from here on, moved by each mutation
    assert kept["a1"] == (1000, 0, 0, 1000, 2 * 200 * 1024 * 1024, 2)
    for what in _mutations(sim):
        for n in names:
            assert sim.usage_of(n, row_of) == fresh(n), (what, n)
        fork = sim.copy()
        fork.settle()
        for n in names:
            assert sim.usage_of(n, row_of) == fresh(n), ("fork settled", what, n)


@pytest.mark.parametrize("constraints", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_tracked_states_follow_every_mutation_in_every_branch(constraints):
    """tracked_states answers again from its memo while SimCluster.spread_epoch says no
    memoised state moved: after each kind of mutation, and in a fork and its parent that
    went different ways, it is still the state a fresh compute gives."""
    from kubectl_tspread.model.plan import PlanOptions
    from kubectl_tspread.views.drain.plan import build_context
    from kubectl_tspread.views.drain.pods import DrainFlags
    from kubectl_tspread.views.drain.core.steps import tracked_states

    sim = SimCluster(make_snapshot(_nodes(), _pods(constraints)))
    ctx = build_context(sim, ["a1"], PlanOptions(flags=DrainFlags(ignore_daemonsets=True)))
    assert ctx.tracked

    def check(s: SimCluster, what: str) -> None:
        got = tracked_states(ctx, s)
        assert tracked_states(ctx, s) is got  # nothing moved in between: the memo answers
        for t, cs in zip(ctx.tracked, got):
            fresh = spread.compute(s.index, t.pod).constraints[t.position]
            same = DomainCounts(cs.domains, {}) == DomainCounts(fresh.domains, {})
            assert (cs.global_min, cs.skew, same) == \
                (fresh.global_min, fresh.skew, True), what

    check(sim, "start")
    for what in _mutations(sim):
        fork = sim.copy()
        check(sim, what)
        fork.evict(next(p for p in fork.pods.values() if p.node_name and p.labels.get("app") == "web"))
        check(fork, f"fork of {what}, one more eviction")
        check(sim, f"{what}, after the fork moved")


def test_an_object_memo_answers_per_object_and_lets_go_of_what_only_it_holds():
    """ObjectMemo keeps a value per object, by identity: an equal object is another entry, a
    value of 0 or an empty tuple is a kept value. Past the limit it lets go of the entries
    whose object nothing else holds, and then, while more than three quarters of the limit
    are left, of the oldest."""
    from kubectl_tspread.views.drain.core.memo import ObjectMemo

    memo = ObjectMemo(limit=4)
    a, b = ["x"], ["x"]
    assert memo.get(a) is None
    assert memo.put(a, 0) == 0 and memo.get(a) == 0
    assert memo.get(b) is None  # equal, not the same object
    memo.put(b, ())
    assert memo.get(b) == () and memo.get(a) == 0
    gone = object()
    memo.put(gone, "gone")
    c = object()
    memo.put(c, "c")
    del gone  # the memo's entry is all that holds it now
    d = object()
    memo.put(d, "d")  # the fifth entry: the one held by nobody else goes, the rest stay
    assert (memo.get(a), memo.get(b), memo.get(c), memo.get(d)) == (0, (), "c", "d")
    assert len(memo._entries) == 4
    e = object()
    memo.put(e, "e")  # every entry held elsewhere: the oldest go, down to three
    assert (memo.get(a), memo.get(b), memo.get(c), memo.get(d), memo.get(e)) == (None, (), "c", "d", "e")


def test_pod_with_is_dataclasses_replace():
    """pod_with reads every field at once and sets the changed ones by position: the same
    record as dataclasses.replace, for each field alone, for several at once and for none."""
    pod = make_pod("web-1", node="a1", labels={"app": "web"}, requests={"cpu": 500}, owner="ReplicaSet/web-1",
                   spread=[make_constraint()])
    values = {"name": "web-9", "uid": "u9", "node_name": "", "phase": "Pending", "terminating": True,
              "ready": True, "priority": 7, "labels": {"app": "api"}, "created": "2026-01-01T00:00:00Z"}
    for name, value in values.items():
        assert pod_with(pod, **{name: value}) == dataclasses.replace(pod, **{name: value}), name
    assert pod_with(pod, **values) == dataclasses.replace(pod, **values)
    assert pod_with(pod) == pod and pod_with(pod) is not pod
    with pytest.raises(KeyError):
        pod_with(pod, no_such_field=1)


def test_a_deleted_node_stays_listed_while_its_zone_keeps_a_node():
    """Deleting an emptied node of a zone that keeps another node leaves every zone state
    the same object (no count, minimum or number of domains moves); its hostname domain
    goes at once. The zone's last node takes the deleted nodes listed with it, and every
    state equals a fresh compute over the nodes left throughout."""
    constraints = [make_constraint(), make_constraint(HOSTNAME_KEY, mode=SCHEDULE_ANYWAY)]
    sim, probe, key = _seven_nodes(constraints)
    for name in ("a1", "a2"):
        _emptied(sim, name)
        zone, host = sim.spread_state(probe).constraints
        sim.delete_node(name)
        now_zone, now_host = sim.spread_state(probe).constraints
        assert now_zone is zone and name in now_zone.domains["a"].nodes  # listed, not moved
        assert now_host is not host and name not in now_host.domains
        _same(sim, probe)
    _emptied(sim, "a3")
    sim.delete_node("a3")
    zone = sim.spread_state(probe).constraints[0]
    assert "a" not in zone.domains and not {"a1", "a2", "a3"} & zone.node_domain.keys()
    _same(sim, probe)


def test_partition_without_node_with_deleted_nodes_listed():
    """partition.without_node given the deleted nodes a domain lists: a deletion returns the
    partition itself while the domain keeps a node that exists, and drops the domain with
    every node it lists once none is left; a cordon under Honor does the same for the
    domain's last existing node."""
    from kubectl_tspread.engine.partition import EXCLUDED_TAINT, without_node

    sim, probe, _ = _seven_nodes([make_constraint()])
    part = next(iter(sim._partitions.values()))
    assert part.members["a"] == ("a1", "a2", "a3")
    gone: set[str] = set()

    def dead(listed):
        return frozenset(n for n in listed if n in gone)

    gone.add("a1")
    assert without_node(part, "a1", dead=dead) is part
    gone.add("a2")
    assert without_node(part, "a2", dead=dead) is part
    gone.add("a3")
    last = without_node(part, "a3", dead=dead)
    assert "a" not in last.members and not {"a1", "a2", "a3"} & last.node_domain.keys()
    assert last.members == {"b": ("b1", "b2"), "c": ("c1", "c2")}
    gone.discard("a3")
    cordoned = without_node(part, "a3", EXCLUDED_TAINT, dead=dead)  # a1 and a2 deleted, a3 leaving
    assert "a" not in cordoned.members and not {"a1", "a2", "a3"} & cordoned.node_domain.keys()
    assert [e.name for e in cordoned.excluded] == ["a3"]
    gone.clear()
    kept = without_node(part, "a3", EXCLUDED_TAINT, dead=dead)
    assert kept.members["a"] == ("a1", "a2") and "a3" not in kept.node_domain
    assert without_node(part, "a3") is not part  # without `dead`, a deletion moves the partition


def test_a_domains_last_open_node_is_found_past_the_deleted_nodes_it_lists():
    """The order heuristic drains a domain's last schedulable node late (search._only_open):
    the deleted nodes a zone still lists are not schedulable ones."""
    from kubectl_tspread.views.drain.core.search import _only_open

    sim, probe, _ = _seven_nodes([make_constraint()])
    for name in ("a1", "a2"):
        _emptied(sim, name)
        sim.delete_node(name)
    listed = sim.spread_state(probe).constraints[0].domains["a"].nodes
    assert listed == ("a1", "a2", "a3")
    assert _only_open(listed, sim.nodes) == "a3"
    sim.cordon(["a3"])
    assert _only_open(listed, sim.nodes) is None
