"""Placement over numpy arrays for the replacements a drain places by the thousand (`Placer._place`), where a Python
call per node is too slow. Over the nodes in node-tree order (`SimCluster.scan_order`):

- the filters but spread and NodeResourcesFit: the walk's verdict per node, shape (`placement.shape_key`) and version;
- NodeResourcesFit: each node's free resources, per node version, against the pod's requests (resources.fits_array);
- PodTopologySpread's Filter: per hard constraint, each domain's count looked up through each node's label value;
- the walk: engine/walk.py's, over the mask of the nodes passing all of these;
- Score: engine/scorearrays.py (engine/scores.py's operations, the same rounding), ties to the smallest node name.

Only without pod (anti-)affinity in the cluster, PreFilter outcomes or requests outside FIT_RESOURCES; the rest, and
NoCapacity (no node fits before spread: its diagnosis is every node's first failure), take the walk. Placed pods get
no fit nodes, refusals or reasons; a pod spread refuses everywhere gets no `reasons` (NoCapacity alone reads them)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Protocol

import numpy as np

from kubectl_tspread.engine import resources, scorearrays, scores, spread, walk
from kubectl_tspread.engine.index import undo_entry
from kubectl_tspread.model import HOSTNAME_KEY, Node, Pod


class SimCluster(Protocol):
    """What this module reads of simulate.py's SimCluster: importing it would make a cycle (tests/test_layers.py)."""

    nodes: dict[str, Node]
    count_arrays: "CountArrays"
    table_parent: tuple[str, ...] | None

    @property
    def balanced_improvement(self) -> bool: ...
    def scan_order(self) -> tuple[str, ...]: ...
    def version_positions(self) -> dict[str, int]: ...
    def rows_from(self, positions: dict[str, int]): ...
    def images_for(self, pod: Pod) -> tuple | None: ...
    def usage_of(self, node: str, row_of: Callable[[Pod], tuple[int, ...]]) -> tuple[int, ...]: ...
    def note(self, undo: Callable[[Any, Any, Any], None], container: Any, key: Any, old: Any) -> None: ...


FIT_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_MISSING = spread.UNLABELLED_VALUE  # a scored node without the key counts as this value
TABLES_KEPT = 8
MEMO_KEPT = 4096  # entries an identity-keyed memo holds before it starts over


class Names(Sequence):
    """`tuple(names[i] for i in at)`, made when read: most such lists are only counted."""

    __slots__ = ("_names", "_at", "_made")

    def __init__(self, names: Sequence[str], at):
        self._names, self._at, self._made = names, at, None

    def _tuple(self) -> tuple[str, ...]:
        if self._made is None:
            self._made = tuple(map(self._names.__getitem__, self._at.tolist()))
        return self._made

    def __getitem__(self, i):
        return self._tuple()[i]

    def __len__(self) -> int:
        return len(self._at)

    def __iter__(self):
        return iter(self._tuple())

    def __eq__(self, other) -> bool:
        return self._tuple() == (tuple(other) if isinstance(other, (Names, list)) else other)

    def __hash__(self) -> int:
        return hash(self._tuple())

    def __repr__(self) -> str:
        return repr(self._tuple())


class NodeTable:
    """Per node set (`scan_order` tuple): arrays in walk order; rows per node version, so valid in any copy."""

    def __init__(self, sim: "SimCluster"):
        order, nodes = sim.scan_order(), sim.nodes
        self.order = order
        self.size = n = len(order)
        self.pos = sim.version_positions()  # the simulation's own map, made once per node set
        rank = {name: i for i, name in enumerate(sorted(order))}
        self.rank = np.array([rank[name] for name in order], dtype=np.int64)
        self.alloc = {r: np.array([nodes[name].allocatable.get(r, 0) for name in order], dtype=np.int64)
                      for r in FIT_RESOURCES + ("pods",)}
        self.row_version = np.full(n, -1, dtype=np.int64)
        self.free = {r: a.copy() for r, a in self.alloc.items()}  # less the pods' requests: fit is one comparison
        self.alloc2 = np.stack([self.alloc["cpu"], self.alloc["memory"]])  # score rows (cpu, memory): allocatable
        self.positive = scorearrays.all_positive(self.alloc2) or None  # if every node has both, any set has
        # per node what Score reads of its pods: requested cpu, memory; the same non-zero; scores.balance of the first
        self.scored = np.zeros((5, n), dtype=np.int64)
        self._values: dict[str, tuple] = {}
        self.complete: set[str] = set()  # the keys every node carries (no value id is the missing one)
        self._sorted: dict[str, tuple] = {}  # key -> (rank of each value id by name, the values by name)
        self.shapes: dict[int, list] = {}  # keys_of's shape number -> [ok per node, row versions, epoch all judged]
        self.root, self.root_pos = self, np.arange(n, dtype=np.int64)  # the table before deletions, rows' places in it
        self._inverse = None  # root position -> this table's row (-1: not here), made when asked
        self._rows: tuple | None = None  # rows_of's last (other table's root_pos, answer)
        self.node_images = [nodes[name].images for name in order]
        self._held: dict[str, object] = {}  # image name -> whether each row lists it; a derived table reads the root's
        self._image_rows: dict[str, list[int]] | None = None  # image name -> the rows listing it
        self._image_memo: tuple = (None, {})  # (image states, (names, count) -> scores per row, or False: asked once)

    @classmethod
    def derived(cls, old: "NodeTable", sim: "SimCluster") -> "NodeTable":
        """`old` less deleted nodes: its rows, keyed by node versions that a deletion leaves alone, all carry over."""
        new, order, perm = cls.__new__(cls), sim.scan_order(), sim.rows_from(old.pos)
        new.order, new.size, new.pos = order, len(order), sim.version_positions()
        new.rank = old.rank[perm]  # ranks keep their order: argmin over them is unchanged
        new.alloc = {r: a[perm] for r, a in old.alloc.items()}
        new.row_version = old.row_version[perm]
        new.free = {r: a[perm] for r, a in old.free.items()}
        # take(axis=1): [:, perm] would make them Fortran-ordered, slowing every take of their columns
        new.scored, new.alloc2 = old.scored.take(perm, axis=1), old.alloc2.take(perm, axis=1)
        new.positive = old.positive  # fewer nodes: each still has both resources
        # a value whose last node went keeps its id: no node refers to it any more
        new._values = {k: (vid[perm], ids, names, as_empty[perm]) for k, (vid, ids, names, as_empty)
                       in old._values.items()}
        new._sorted = dict(old._sorted)
        new.complete = set(old.complete)  # fewer nodes: each still carries the key
        new.shapes = {shape: [ok[perm], at[perm], None] for shape, (ok, at, _) in old.shapes.items()}
        if "_prefer_tainted" in old.__dict__:
            tainted = np.zeros(old.size, dtype=bool)
            tainted[old._prefer_tainted] = True
            new._prefer_tainted = np.flatnonzero(tainted[perm])
        # count arrays made on any table of the same root move over the same way (counts_of)
        new.root, new.root_pos, new._inverse, new._rows = old.root, old.root_pos[perm], None, None
        return new

    def rows_of(self, other: "NodeTable"):
        """`other`'s rows' positions here (one root), None if a node of `other` is not here; keeps the last answer."""
        last = self._rows
        if last is not None and last[0] is other.root_pos:
            return last[1]
        rows = self._inverted()[other.root_pos]
        if len(rows) and rows.min() < 0:
            rows = None
        self._rows = (other.root_pos, rows)  # a table's root_pos is never replaced nor changed
        return rows

    def _inverted(self):
        if self._inverse is None:
            self._inverse = np.full(self.root.size, -1, dtype=np.int64)
            self._inverse[self.root_pos] = np.arange(self.size, dtype=np.int64)
        return self._inverse

    def row(self, node: str) -> int | None:
        if self.pos is not None:
            return self.pos.get(node)
        at = self.root.pos.get(node)
        i = -1 if at is None else int(self._inverted()[at])
        return i if i >= 0 else None

    def image_scores(self, states, names: tuple[str, ...], count: int, found):
        """ImageLocality's scores at rows `found` (scores.image_sum's, in `states`: the cluster now). A query asked
        again under the same states is scored on every root row once (int16: a score is at most 100), then taken."""
        root = self.root
        if root._image_memo[0] is not states:  # they change only when a node is deleted or put
            root._image_memo = (states, {})
        memo, key = root._image_memo[1], (names, count)
        at = found if root is self else self.root_pos.take(found)  # the root's positions are its rows
        got = memo.get(key)
        if got is not None and got is not False:
            return got.take(at)
        rows = at if got is None else np.arange(root.size)
        sums = np.zeros(len(rows), dtype=np.int64)
        for name in (n for n in names if n in states.sizes):
            sums += np.where(root._holding(name).take(rows), scores.scaled_image_size(states, name), 0)
        out = scorearrays.image_priority(sums, count)
        memo[key] = False if got is None else out.astype(np.int16)
        return out if got is None else out.take(at)

    def _holding(self, name: str):
        held = self._held.get(name)
        if held is None:
            rows = self._image_rows
            if rows is None:  # one pass over every node's images, not one per image a pod names
                rows = self._image_rows = {}
                for i, images in enumerate(self.node_images):
                    for image in images:
                        rows.setdefault(image, []).append(i)
            held = self._held[name] = np.zeros(self.size, dtype=bool)
            held[rows.get(name, [])] = True
        return held

    def retire(self) -> None:
        """The table left the Placer: keep only what counts_of reads to move count arrays made on it to a live one."""
        for name in ("order", "rank", "alloc", "row_version", "free", "scored", "alloc2", "_sorted", "shapes"):
            delattr(self, name)
        self._values = {key: (None, ids, names, None) for key, (_, ids, names, _) in self._values.items()}
        self.__dict__.pop("_prefer_tainted", None)
        if self.root is not self:
            self.pos = None

    def values(self, sim: "SimCluster", key: str) -> tuple:
        """(value id per node, len(values) if keyless; value -> id; the values; the ids, keyless read as _MISSING)."""
        got = self._values.get(key)
        if got is None:
            ids: dict[str, int] = {}
            raw = [sim.nodes[name].labels.get(key) for name in self.order]
            for v in raw:
                if v is not None and v not in ids:
                    ids[v] = len(ids)
            missing = len(ids)
            vid = np.array([missing if v is None else ids[v] for v in raw], dtype=np.int64)
            names = list(ids)
            lacking = vid == missing
            as_empty = np.where(lacking, ids.get(_MISSING, missing), vid)
            got = self._values[key] = (vid, ids, names, as_empty)
            if not lacking.any():
                self.complete.add(key)
            by_name = sorted(range(len(names)), key=names.__getitem__)
            rank = np.empty(len(names), dtype=np.int64)
            rank[by_name] = np.arange(len(names))
            self._sorted[key] = (rank, [names[j] for j in by_name])
        return got

    def by_name(self, sim: "SimCluster", key: str) -> tuple:
        """(value id per node, value count, each id's rank by name, values by name); no table: Accepting outlives it."""
        vid, _, names, _ = self.values(sim, key)
        rank, ordered = self._sorted[key]
        return vid, len(names), rank, ordered

    def prefer_tainted(self, sim: "SimCluster"):
        """Rows with a PreferNoSchedule taint (TaintToleration's score reads only these), once per table: a cordon
        adds NoSchedule, and a new or replaced node makes a new table; a derived table keeps its parent's."""
        got = self.__dict__.get("_prefer_tainted")
        if got is None:
            nodes = sim.nodes
            rows = [i for i, name in enumerate(self.order)  # most nodes have no taint at all
                    if nodes[name].taints and any(t.effect == scores.PREFER_NO_SCHEDULE for t in nodes[name].taints)]
            got = self.__dict__["_prefer_tainted"] = np.array(rows, dtype=np.int64)
        return got

    def refresh_usage(self, sim: "SimCluster", version, nonzero: Callable[[Pod], tuple[int, int]],
                      rows=slice(None)) -> None:
        """Re-read the usage rows of `rows` whose version changed from SimCluster.usage_of's running sums."""
        stale = _stale(self.row_version, version, rows)
        if not stale:
            return
        order, row_of = self.order, usage_rows(nonzero)
        left = [(self.free[r], self.alloc[r]) for r in FIT_RESOURCES + ("pods",)]
        scored, alloc2 = self.scored, self.alloc2
        for i in stale:
            usage = sim.usage_of(order[i], row_of)
            for (free, alloc), total in zip(left, usage[:len(FIT_RESOURCES)] + usage[-1:]):
                free[i] = alloc[i] - total
            scored[:, i] = usage[:2] + usage[NONZERO_COLUMNS] + (scores.balance(usage[:2], alloc2[:, i].tolist()),)
            self.row_version[i] = version[i]

    def shape_ok(self, shape: int, version, row: Callable[[str], bool], rows=slice(None), epoch: int | None = None):
        """Whether nodes of `rows` pass all filters but spread and NodeResourcesFit for `shape`, judged by `row`. `epoch`:
        SimCluster.node_epoch, which fixes `version` (node_object_array): no row is stale while it holds."""
        got = self.shapes.get(shape)
        if got is None:
            got = self.shapes[shape] = [np.zeros(self.size, dtype=bool), np.full(self.size, -1, dtype=np.int64), None]
        ok, at, judged_at = got
        if epoch is None or epoch != judged_at:
            order = self.order
            for i in _stale(at, version, rows):
                ok[i] = row(order[i])
                at[i] = version[i]
            if epoch is not None and np.array_equal(at, version):
                got[2] = epoch
        return ok[rows]


def _stale(at, version, rows) -> list[int]:
    """Positions in `rows` (a slice or walk.window's positions) older than their node's version (plain nonzero():
    np.flatnonzero wraps it in Python)."""
    differ = (at[rows] != version[rows]).nonzero()[0]
    return walk.table_positions(rows, differ).tolist() if len(differ) else []


NONZERO_COLUMNS = slice(len(FIT_RESOURCES), len(FIT_RESOURCES) + 2)  # usage_rows' nonzero cpu and memory
_ROW_FUNCTIONS: dict[object, Callable[[Pod], tuple[int, ...]]] = {}


def usage_rows(nonzero: Callable[[Pod], tuple[int, int]]) -> Callable[[Pod], tuple[int, ...]]:
    """pod -> its usage row (FIT_RESOURCES requests, `nonzero`'s cpu and memory, 1), memoised per requests map."""
    got = _ROW_FUNCTIONS.get(nonzero)
    if got is not None:
        return got
    memo: dict[int, tuple] = {}

    def row_of(pod: Pod) -> tuple[int, ...]:
        req = pod.requests
        hit = memo.get(id(req))
        if hit is not None and hit[0] is req and hit[2] == pod.score_requests:
            return hit[1]
        row = tuple(req.get(r, 0) for r in FIT_RESOURCES) + tuple(nonzero(pod)) + (1,)
        if len(memo) >= MEMO_KEPT:
            memo.clear()
        memo[id(req)] = (req, row, pod.score_requests)
        return row

    row_of.zero = (0,) * (len(FIT_RESOURCES) + 3)  # type: ignore[attr-defined]  # a node without pods
    got = _ROW_FUNCTIONS[nonzero] = row_of
    return got


def tables_for(sim: "SimCluster", tables: dict) -> NodeTable:
    """The table of the simulation's node set (one per scan order, kept by the Placer)."""
    order = sim.scan_order()
    table = tables.get(id(order))
    if table is None or table.order is not order:
        parent = sim.table_parent
        old = tables.get(id(parent)) if parent is not None else None
        made = NodeTable.derived(old, sim) if old is not None and old.order is parent else NodeTable(sim)
        while len(tables) >= TABLES_KEPT:  # the oldest go (a drain deleting nodes makes one per step)
            tables.pop(next(iter(tables))).retire()
        table = tables[id(order)] = made
        live = {id(t) for t in tables.values()}  # _ENTRIES would keep old tables whole (count arrays keep them retired)
        for key in [k for k, v in _ENTRIES.items() if id(v[2]) not in live]:
            del _ENTRIES[key]
    return table


def fits_fast_path(pod: Pod) -> bool:
    return all(name in FIT_RESOURCES for name, _ in resources._checked(pod.requests))


class CountArrays:
    """Per constraint state, `counts_of`'s arrays and their table (perhaps retired): made once from its node counts,
    moved to each state shifted from it, changed in place via the simulation's undo log, so a revert restores them."""

    __slots__ = ("sim", "entries")

    def __init__(self, sim: "SimCluster"):
        self.sim = sim
        self.entries: dict[int, tuple] = {}  # id(cs) -> (cs, held to keep its id unique, table, per node, per value id)

    def copy_for(self, sim: "SimCluster") -> "CountArrays":
        other = CountArrays(sim)
        other.entries = {k: (cs, table, None if per_node is None else per_node.copy(), per_value.copy())
                         for k, (cs, table, per_node, per_value) in self.entries.items()}
        return other

    def of(self, cs: spread.ConstraintState) -> tuple | None:
        hit = self.entries.get(id(cs))
        return hit[1:] if hit is not None and hit[0] is cs else None

    def put(self, cs: spread.ConstraintState, table: NodeTable, per_node, per_value) -> None:
        entries, key = self.entries, id(cs)
        self.sim.note(undo_entry, entries, key, entries.get(key))
        entries[key] = (cs, table, per_node, per_value)

    def drop(self, st: spread.SpreadState) -> None:
        """The state left the simulation's memo: its constraints' arrays go with it."""
        for cs in st.constraints:
            self._taken(cs)

    def _taken(self, cs: spread.ConstraintState) -> tuple | None:
        got = self.of(cs)
        if got is not None:
            self.sim.note(undo_entry, self.entries, id(cs), self.entries.pop(id(cs)))
        return got

    def _add(self, array, i: int, delta: int) -> None:
        self.sim.note(operator.setitem, array, i, int(array[i]))
        array[i] += delta

    def shifted(self, old: spread.ConstraintState, new: spread.ConstraintState, node: str, delta: int) -> None:
        """`new` is `old` with a matching pod more (+1) or less (-1) on `node`; `old`'s arrays, if any, move to it."""
        taken = self._taken(old)
        if taken is None:
            return
        table, per_node, per_value = taken
        if per_node is not None:
            i = table.row(node)  # the table may be retired
            if i is not None:
                self._add(per_node, i, delta)
        value = new.node_domain.get(node)
        if value is not None:
            self._add_to_domain(table, new, per_value, value, delta)
        self.put(new, table, per_node, per_value)

    def moved_out(self, old: spread.ConstraintState, new: spread.ConstraintState, value: str,
                  leaving: int) -> None:
        """`new` is `old` less a node of `value`, cordoned under Honor: its `leaving` pods still count on the node."""
        taken = self._taken(old)
        if taken is None:
            return
        table, per_node, per_value = taken
        self._add_to_domain(table, new, per_value, value, -leaving)
        self.put(new, table, per_node, per_value)

    def handed_over(self, old: spread.ConstraintState, new: spread.ConstraintState) -> None:
        """After a node deletion `new` replaces `old`, same counts, and takes its arrays (counts_of moves them on)."""
        taken = self._taken(old)
        if taken is not None:
            self.put(new, *taken)

    def _add_to_domain(self, table: NodeTable, cs: spread.ConstraintState, per_value, value: str,
                       delta: int) -> None:
        j = table._values[cs.constraint.topology_key][1].get(value)
        if j is not None:  # a value the table has no id for counts nowhere
            self._add(per_value, j, delta)


def counts_of(table: NodeTable, sim: "SimCluster", cs: spread.ConstraintState):
    """(value id per node, matching pods per node or None, matching pods per value id with 0 at the missing slot) of a
    constraint state, kept in CountArrays; per node only for a hostname constraint, whose score alone reads it."""
    vid, ids, names, _ = table.values(sim, cs.constraint.topology_key)
    arrays = sim.count_arrays
    hit = arrays.of(cs)
    if hit is not None:
        made_on, per_node, per_value = hit
        if made_on is table:
            return vid, per_node, per_value
        rows = made_on.rows_of(table) if made_on.root is table.root else None
        if rows is not None:
            # made on a table of the same node set before node deletions: same value ids, the surviving nodes' rows (a
            # node deleted since held no pod the state counts, or it would have moved the state to another object)
            per_node = per_node[rows] if per_node is not None else None
            arrays.put(cs, table, per_node, per_value)
            return vid, per_node, per_value
    pos, node_domain, missing = table.pos, cs.node_domain, len(names)
    counts = cs.node_counts
    # drain/counts.NodeCounts (not imported: it imports this module) is a shared base map, arrayed once, plus changes
    base, changes = (counts.base, counts.changes) if hasattr(counts, "changes") else (counts, {})
    where, weights, at = _entries(table, base, node_domain, vid, missing)
    per_node = None
    if cs.constraint.topology_key == HOSTNAME_KEY:
        per_node = np.zeros(table.size, dtype=np.int64)
        per_node[where] = weights
    per_value = np.bincount(at, weights, minlength=missing + 1).astype(np.int64) if len(at) \
        else np.zeros(missing + 1, dtype=np.int64)
    if changes:
        rows, deltas, at = [], [], []  # added in two array operations: an element update costs as much as a small one
        for node, n in changes.items():
            i = pos.get(node)
            delta = n - base.get(node, 0)
            if i is not None and delta:
                rows.append(i)
                deltas.append(delta)
                v = node_domain.get(node)
                at.append(ids[v] if v is not None and v in ids else missing)
        if rows:
            if per_node is not None:
                per_node[rows] += deltas  # a node appears once among the changes
            np.add.at(per_value, at, deltas)  # a domain may appear several times
    per_value[-1] = 0  # pods on nodes outside the constraint's domains count nowhere
    arrays.put(cs, table, per_node, per_value)
    return vid, per_node, per_value


_ENTRIES: dict[tuple[int, int, int], tuple] = {}  # (id(base map), id(node_domain), id(table)) -> (those three, arrays)


def _entries(table: NodeTable, base, node_domain, vid, missing: int):
    """(position, count, value id) arrays of a count map's entries on the table, once per map for its shifted states."""
    key = (id(base), id(node_domain), id(table))
    hit = _ENTRIES.get(key)
    if hit is not None and hit[0] is base and hit[1] is node_domain and hit[2] is table:
        return hit[3:]
    names, n = list(base), len(base)
    where = np.fromiter(map(table.pos.get, names, itertools.repeat(-1)), dtype=np.int64, count=n)
    weights = np.fromiter(base.values(), dtype=np.int64, count=n)
    inside = np.fromiter(map(node_domain.__contains__, names), dtype=bool, count=n)
    on_table = where >= 0
    if not on_table.all():
        where, weights, inside = where[on_table], weights[on_table], inside[on_table]
    # a node in the domains is in its label's value's (the partition reads the same label)
    arrays = (where, weights, np.where(inside, vid[where], missing))
    if len(_ENTRIES) >= MEMO_KEPT:
        _ENTRIES.clear()
    _ENTRIES[key] = (base, node_domain, table) + arrays
    return arrays


def spread_values(table: NodeTable, sim: "SimCluster", state: spread.SpreadState) -> list[tuple]:
    """Per hard constraint: (value id per node, ConstraintState.allows per value id, False for a keyless node)."""
    out = []
    for cs in state.hard:
        vid, _, counts = counts_of(table, sim, cs)
        ok = spread.fits_array(counts, cs.self_match, cs.global_min, cs.constraint.max_skew)
        ok[-1] = False  # a node without the key: UnschedulableAndUnresolvable
        out.append((vid, ok))
    return out


def spread_verdicts(values: list[tuple], rows=slice(None)) -> tuple[list, Any]:
    """Per hard constraint whether it allows each node of `rows`, and spread.filter_node's verdict (None: no hard one)."""
    allowed = [ok[vid[rows]] for vid, ok in values]
    return allowed, (allowed[0] if len(allowed) == 1 else np.logical_and.reduce(allowed)) if allowed else None


def refusals(state: spread.SpreadState, allowed: list, fit) -> dict[str, int]:
    """Placement.spread_refusals: per topologyKey, the `fit` nodes its hard constraints refuse, once per constraint."""
    out: dict[str, int] = {}
    for cs, ok in zip(state.hard, allowed):
        n = int(np.count_nonzero(fit & ~ok))
        if n:
            key = cs.constraint.topology_key
            out[key] = out.get(key, 0) + n
    return out


def spread_scores(table: NodeTable, sim: "SimCluster", state: spread.SpreadState, found):
    """spread.score_nodes at positions `found`, in that order (scorearrays.spread_scores over the table's columns)."""
    ids: dict[str, Any] = {}  # key -> the value id of each found node, gathered once per key

    def at(key: str):
        got = ids.get(key)
        if got is None:
            got = ids[key] = table.values(sim, key)[0].take(found)
        return got

    def lacking(cs):
        key = cs.constraint.topology_key
        return None if key in table.complete else at(key) == len(table.values(sim, key)[2])

    def counts(cs, kept):
        if cs.constraint.topology_key == HOSTNAME_KEY:  # the node's own matching pods
            return counts_of(table, sim, cs)[1].take(found if kept is None else found[kept])
        values = at(cs.constraint.topology_key)
        return counts_of(table, sim, cs)[2].take(values if kept is None else values[kept])

    def distinct(cs, kept):
        _, _, names, as_empty = table.values(sim, cs.constraint.topology_key)
        rows = as_empty.take(found if kept is None else found[kept])
        return int(np.count_nonzero(np.bincount(rows, minlength=len(names) + 1)))

    soft, every_key = state.soft, state.require_all_soft_keys  # no soft constraint: None, no PodTopologySpread score
    return scorearrays.spread_scores(soft, every_key, len(found), lacking, counts, distinct) if soft else None


def score_totals(table: NodeTable, sim: "SimCluster", state: spread.SpreadState, pod: Pod, found,
                 topology: dict | None = None):
    """engine/scores.py's totals for the nodes at positions `found` (scorearrays.total over the table's rows)."""
    alloc, scored = table.alloc2.take(found, axis=1), table.scored.take(found, axis=1)
    soft = spread_scores(table, sim, state, found)
    order, nodes = table.order, sim.nodes
    tainted = table.prefer_tainted(sim)
    rows = np.flatnonzero(np.isin(found, tainted)).tolist() if len(tainted) else []
    images = sim.images_for(pod)  # None when no node holds one of the pod's images
    return scorearrays.total(pod, len(found), lambda i: nodes[order[int(found[i])]], alloc, scored[2:4], scored[:2],
                             soft, rows, topology, sim.balanced_improvement,
                             None if images is None else table.image_scores(*images, found), scored[4],
                             table.positive)


def accepting(table: NodeTable, sim: "SimCluster", pod: Pod, found) -> "Accepting":
    """placement.accepting_domains for the nodes at positions `found`, worked out when read."""
    keys = dict.fromkeys(c.topology_key for c in pod.spread)
    return Accepting({key: table.by_name(sim, key) for key in keys}, found.astype(np.int32))


class Accepting(Mapping):
    """{topologyKey: the domains of the feasible nodes}, made when read: only the steps a user looks at show them."""

    __slots__ = ("_parts", "_found", "_made")

    def __init__(self, parts: dict, found):
        self._parts, self._found, self._made = parts, found, None

    def _seen(self, key: str):
        """Whether a feasible node holds each of `key`'s values, by value id (nodes without the key left out)."""
        vid, count, _, _ = self._parts[key]
        seen = np.zeros(count + 1, dtype=bool)
        seen[vid.take(self._found)] = True
        return seen[:count]

    def __getitem__(self, key: str) -> Names:
        if self._made is None:
            self._made = {}
        names = self._made.get(key)
        if names is None:
            _, _, rank, ordered = self._parts[key]
            names = self._made[key] = Names(ordered, np.sort(rank[np.flatnonzero(self._seen(key))]))
        return names

    def domain_count(self, key: str) -> int:
        """len(self[key]) without naming the domains: past a few the table shows only the count."""
        names = self._made.get(key) if self._made is not None else None
        return len(names) if names is not None else int(np.count_nonzero(self._seen(key)))

    def __iter__(self):
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def __repr__(self) -> str:
        return repr({key: self[key] for key in self._parts})
