"""A mutable copy of the cluster that a drain plan is played on (`SimCluster`); the snapshot is never touched.

The simulation keeps its own node and pod maps and a ClusterIndex updated in place, so a replacement bound a moment ago
is seen by the next one's filters and spread counts. Evictions are modelled "until gone": `evict` marks the pod
terminating, so spread stops counting it (the scheduler bypasses pods with a deletionTimestamp) while NodeResourcesFit
still charges its requests, as a real terminating pod holds them; its node is cordoned in the same step, so this matters
only to pods that tolerate the cordon. `settle` ends a step: terminating pods are gone (the executor waits for that). A
StatefulSet pod keeps its name and is recreated only once the old pod is gone: `evict` removes it.

Each mutation bumps the version of the node it touches; placement caches per-node filter verdicts keyed by it. `fork`,
`revert` and `commit` branch the simulation; `copy` makes an independent one. `spread_state`'s memo of `spread.compute`
per pod template and the nodes' usage sums are moved by each change (counts.py), not recomputed.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import fields, replace
from typing import Any, Callable, Iterable

from kubectl_tspread.views.drain.core import counts, vector
from kubectl_tspread.engine import podrequests, scores, spread, versions
from kubectl_tspread.engine.index import ClusterIndex, undo_entry, undo_member
from kubectl_tspread.engine.nodematch import untolerated_taint
from kubectl_tspread.engine.partition import EXCLUDED_TAINT, without_node
from kubectl_tspread.engine.walk import round_robin, zone_lists
from kubectl_tspread.model import HONOR, Node, Pod, Snapshot, new_pod

REPLACEMENT_UID_PREFIX = "tspread-replacement-"
_VERSIONS = itertools.count(1)  # shared by every simulation: a version names one node state across copies and branches


class SimCluster:
    def __init__(self, snapshot: Snapshot, seq: int = 0):
        self.base = snapshot
        self.nodes: dict[str, Node] = {n.name: n for n in sorted(snapshot.nodes, key=lambda n: n.name)}
        pods = {p.key: p for p in snapshot.pods if not p.finished}
        self.index = ClusterIndex(replace(snapshot, nodes=tuple(self.nodes.values()), pods=tuple(pods.values())))
        self.index.follow_nodes_only()
        self.pods: dict[str, Pod] = pods
        self.version: dict[str, int] = {}
        self.stamp = next(_VERSIONS)  # names the whole state; renewed by any change that can move a placement
        self.seq = seq
        # InterPodAffinity reads pods on other nodes: per-node caching is only sound without it
        self.affinity_sensitive = any(p.pod_affinity or p.pod_anti_affinity for p in self.pods.values())
        self.affinity_scored = any(map(scores.scores_affinity, self.pods.values()))
        self._spread: dict[str, dict[tuple, spread.SpreadState]] = {}  # namespace -> template -> state
        self.count_arrays = vector.CountArrays(self)
        self.spread_epoch = next(_VERSIONS)  # names the set of memoised states; copies share it until either changes
        self.node_epoch = next(_VERSIONS)  # likewise the Node objects: what derives from them alone outlives pod moves
        self._honor: set[tuple[str, object]] = set()  # keys of the states a cordon moves (nodeTaintsPolicy Honor)
        # namespace -> a number naming its memoised templates; (namespace, it, labels) -> the templates such pods shift
        self._templates_seen: dict[str, int] = {}
        self._shifts: dict[tuple, tuple[object, list]] = {}
        self._partitions: dict[tuple, spread.Partition] = {}
        self._dead: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}  # _dead_listed's memo, per node list
        self._terminating: dict[str, Pod] = {p.key: p for p in self.pods.values() if p.terminating}
        self._usage: dict[str, tuple[int, ...]] = {}  # usage_of's sums per node, made when asked, moved by each pod
        self._row_of: Callable[[Pod], tuple[int, ...]] | None = None
        self.next_start = 0  # the scheduler's nextStartNodeIndex, moved by each placement; a live one's is unknown
        self.freed = 0  # counts changes that can free room on a schedulable node (a pod gone, a Node put or deleted)
        self._scan: tuple[str, ...] | None = None
        self._zones: dict[str, tuple[str, ...]] | None = None  # zone_lists, kept past deletions (_without_zone_member)
        self.table_parent: tuple[str, ...] | None = None  # the scan order before the last deletion (vector.tables_for)
        self._versions = None  # the node versions in scan order (vector.py), kept up to date by _touch
        self._arrays_for: tuple[str, ...] | None = None  # the arrays' order: older after deletions, until _rows_carried
        self._carried: tuple | None = None
        self._node_stamps: dict[str, int] = {}  # renewed by a cordon: verdicts that read only the Node key on it
        self._node_array = None
        self._images: scores.ImageStates | None = None  # made when asked; a cordon keeps it, other Node changes drop it
        self._marks: list[tuple[dict, list, dict]] = []  # innermost last: (attributes, undo log, index attributes)
        self._log: list | None = None  # the innermost mark's undo log, or None

    @property
    def balanced_improvement(self) -> bool:
        """BalancedAllocation's formula of the cluster's minor (engine/versions.py)."""
        return versions.rules_for(self.base.kube_version).balanced_improvement

    def images_for(self, pod: Pod) -> tuple[scores.ImageStates, tuple[str, ...], int] | None:
        """What ImageLocality scores `pod` with (scores.image_query); the image states are made once per node set."""
        if self._images is None:
            self._images = scores.image_states(self.nodes.values())
        return scores.image_query(pod, self._images, versions.rules_for(self.base.kube_version))

    def copy(self) -> "SimCluster":
        """A copy to play on, independent of this one, with no mark open."""
        other = SimCluster.__new__(SimCluster)
        other.base, other.seq, other.affinity_sensitive = self.base, self.seq, self.affinity_sensitive
        other.affinity_scored, other.stamp = self.affinity_scored, self.stamp
        # dict.copy, not dict(): a C-level clone of the table even after deletions
        other.nodes, other.pods, other.version = self.nodes.copy(), self.pods.copy(), self.version.copy()
        other._terminating = self._terminating.copy()
        other.index = self.index.copy()
        other._spread = {ns: dict(states) for ns, states in self._spread.items()}
        other.count_arrays = self.count_arrays.copy_for(other)
        other.spread_epoch, other.node_epoch = self.spread_epoch, self.node_epoch
        other._honor = set(self._honor)
        other._templates_seen, other._shifts = self._templates_seen.copy(), self._shifts  # _shifts holds no counts
        other._partitions, other._dead = self._partitions.copy(), self._dead.copy()
        other._usage, other._row_of = self._usage.copy(), self._row_of
        other.next_start, other._scan, other.freed = self.next_start, self._scan, self.freed
        other._zones, other.table_parent = self._zones, self.table_parent  # zones: replaced, never changed
        other._versions = None if self._versions is None else (self._versions[0], self._versions[1].copy())
        other._arrays_for, other._carried = self._arrays_for, self._carried
        other._node_stamps, other._images = self._node_stamps.copy(), self._images  # images: replaced, never changed
        other._node_array = None if self._node_array is None else self._node_array.copy()
        other._marks, other._log = [], None
        return other

    def fork(self) -> None:
        """Open a mark (marks nest). Large maps and the count arrays change in place, logging each replaced value
        (states are immutable: the old object is the undo); replaced attributes come back from the copy taken here;
        small maps that outside code also writes (partitions, terminating pods) and the version arrays are copied."""
        saved = self.__dict__.copy()
        entries: list = []
        self._marks.append((saved, entries, self.index.mark(entries)))
        self._log = entries
        self._partitions, self._terminating = self._partitions.copy(), self._terminating.copy()
        if self._versions is not None:
            self._versions = (self._versions[0], self._versions[1].copy())
        if self._node_array is not None:
            self._node_array = self._node_array.copy()

    def revert(self, redo: bool = False) -> tuple | None:
        """Undo every change since the innermost mark, and close it. Version numbers come back too, and caches keyed
        by them stay sound: a version names one state of one node across all branches. With `redo`, returns what `redo`
        takes to put the changes back (objects a change made anew are unreachable from here, so stay as they were)."""
        saved, entries, index_saved = self._marks.pop()
        back: list | None = None
        if redo:
            back = []
            post = (self.__dict__.copy(), self.index.__dict__.copy())
        for undo, container, key, old in reversed(entries):
            if back is not None:
                back.append((undo, container, key, _CURRENT[undo](container, key)))
            undo(container, key, old)
        self.__dict__.clear()
        self.__dict__.update(saved)  # `_marks` is the same list, `_log` the outer mark's entries
        self.index.restore(index_saved, self._log)
        return (back, post) if back is not None else None

    def redo(self, redo: tuple) -> None:
        """Put back what `revert(redo=True)` undid, on the state it left (anything since reverted); itself undoable."""
        log, marks = self._log, self._marks
        entries, (attributes, index_attributes) = redo
        for undo, container, key, new in reversed(entries):
            if log is not None:
                log.append((undo, container, key, _CURRENT[undo](container, key)))
            undo(container, key, new)
        self.__dict__.clear()
        self.__dict__.update(attributes)
        self._marks, self._log = marks, log
        self.index.restore(index_attributes, log)

    def commit(self) -> None:
        """Keep the changes since the innermost mark and close it: an outer mark's `revert` still undoes them."""
        _, entries, _ = self._marks.pop()
        self._log = self._marks[-1][1] if self._marks else None
        if self._log is not None:
            self._log.extend(entries)
        self.index.journal = self._log

    def forget_marks(self, keep: int = 0) -> None:
        """Close all marks but the `keep` innermost, keeping every change (the search bounds how far it backtracks)."""
        if keep <= 0:
            self._marks.clear()
            self._log = self.index.journal = None
        elif len(self._marks) > keep:
            del self._marks[:len(self._marks) - keep]

    @property
    def marks(self) -> int:
        return len(self._marks)

    def note(self, undo: Callable[[Any, Any, Any], None], container: Any, key: Any, old: Any) -> None:
        """Log an undo entry for something kept beside this simulation (the world's lists of pods to evict)."""
        if self._log is not None:
            self._log.append((undo, container, key, old))

    def _set(self, mapping, key, value) -> None:
        if self._log is not None:
            self._log.append((undo_entry, mapping, key, mapping.get(key)))
        mapping[key] = value

    def _pop(self, mapping, key) -> None:
        old = mapping.pop(key, None)
        if old is not None and self._log is not None:
            self._log.append((undo_entry, mapping, key, old))

    def _member(self, members: set, item, present: bool) -> None:
        if (item in members) != present:
            if self._log is not None:
                self._log.append((undo_member, members, item, not present))
            (members.add if present else members.discard)(item)

    def scan_order(self) -> tuple[str, ...]:
        """kube-scheduler's node-tree order: round robin over zones (zone_lists); node names stand for the order zones
        first appear and nodes were added, which the API does not expose."""
        if self._scan is None:
            if self._zones is None:
                self._zones = zone_lists(self.nodes.values())
            self._scan = round_robin(self._zones.values())
        return self._scan

    def version_positions(self) -> dict[str, int]:
        """Node name -> its index in `scan_order`."""
        self.version_array()
        return self._versions[0]

    def version_array(self):
        """sim.version as a numpy array in `scan_order` (vector.py's row keys)."""
        order = self.scan_order()
        if self._versions is None:
            import numpy as np
            array = np.fromiter(map(self.version.get, order, itertools.repeat(0)), dtype=np.int64, count=len(order))
            self._versions = (dict(zip(order, range(len(order)))), array)
            self._arrays_for = order
        elif self._arrays_for is not order:
            self._rows_carried(order)
        return self._versions[1]

    def _rows_carried(self, order: tuple[str, ...]) -> None:
        """After node deletions: carry the version and Node arrays over to `order`, not re-read for every node."""
        old_pos, old_versions = self._versions
        perm = _positions_in(old_pos, order)
        pos = dict(zip(order, range(len(order))))
        self._versions = (pos, old_versions[perm])
        if self._node_array is not None:
            self._node_array = self._node_array[perm]
        self._arrays_for, self._carried = order, (old_pos, pos, perm)

    def rows_from(self, positions: dict[str, int]):
        """Per `scan_order` node, its index in an earlier node set's `positions` (for vector.NodeTable.derived)."""
        pos, carried = self.version_positions(), self._carried
        if carried is not None and carried[0] is positions and carried[1] is pos:
            return carried[2]
        return _positions_in(positions, self.scan_order())

    def node_object_array(self):
        """Per node in `scan_order`, a number renewed by a cordon (other node changes renew the scan order itself)."""
        order = self.scan_order()
        if self._versions is not None and self._arrays_for is not order:
            self.version_array()  # carries both over (one `_arrays_for` for the two)
        if self._node_array is None:
            import numpy as np
            self._node_array = np.fromiter(map(self._node_stamps.get, order, itertools.repeat(0)), dtype=np.int64,
                                           count=len(order))
            self._arrays_for = order
        return self._node_array

    def forked_to(self, snapshot: Snapshot) -> "SimCluster | None":
        """On an unplayed simulation: a fork moved to `snapshot` (the base with a remedy's pods, nodes or PDBs), or None
        if more differs; unchanged parts keep their memos and node versions, so a shared Placer's cache stays sound."""
        base = self.base
        if snapshot is base:
            return self.copy()  # a re-plan that edits the options alone: no pod to match against the base
        if any(getattr(snapshot, f) is not getattr(base, f) for f in _SAME_FIELDS):
            return None
        other = self.copy()
        other.base = other.index.snapshot = snapshot
        if snapshot.nodes is not base.nodes:  # a remedy that leaves the nodes (or the pods) alone shares the tuple
            old_nodes = {n.name: n for n in base.nodes}
            new_nodes = {n.name: n for n in snapshot.nodes}
            for name in old_nodes.keys() - new_nodes.keys():
                other.delete_node(name)
            for name, node in sorted(new_nodes.items()):
                if old_nodes.get(name) is not node:
                    other.put_node(node)
        if snapshot.pods is base.pods:
            return other
        old, new = base.pods, snapshot.pods
        pairs = [p for p in zip(old, new) if p[0] is not p[1]] if len(old) == len(new) else None
        if pairs is not None and all(o.key == n.key for o, n in pairs):  # an edit keeps each pod's place
            old, new = [o for o, _ in pairs], [n for _, n in pairs]  # (remedies._edit_constraint): those alone differ
        old_pods, new_pods = {p.key: p for p in old if not p.finished}, {p.key: p for p in new if not p.finished}
        for key, pod in old_pods.items():
            if new_pods.get(key) is not pod:
                other._drop(pod)
        for key, pod in new_pods.items():
            if old_pods.get(key) is not pod:
                other._put(pod)
                other.affinity_sensitive = other.affinity_sensitive or bool(pod.pod_affinity or pod.pod_anti_affinity)
                other.affinity_scored = other.affinity_scored or scores.scores_affinity(pod)
        return other

    def put_node(self, node: Node) -> None:
        """Add or replace a Node object (the nodes stay in name order, as built)."""
        self.nodes = dict(sorted({**self.nodes, node.name: node}.items()))  # new maps: a mark keeps the old ones
        self.index.nodes = dict(sorted({**self.index.nodes, node.name: node}.items()))
        self._node_set_changed(node.name)

    def _node_set_changed(self, name: str, deleted: bool = False) -> None:
        """Walk order and domains may change: a deletion moves the memoised states, anything else drops them."""
        if not deleted:
            self.table_parent = self._zones = None
        elif self._scan is not None:  # else an earlier deletion of this step set it
            self.table_parent = self._scan
        self._scan = None
        if not deleted or self._versions is None:
            self._versions = self._node_array = None  # else carried over to the new order when asked
        self.freed += 1
        self.node_epoch, self._images = next(_VERSIONS), None
        self._touch(name)
        if deleted:
            self._zones = _without_zone_member(self._zones, name)
            self._without_node(name)
            return
        self._spread, self._honor, self._partitions, self._dead = {}, set(), {}, {}  # new maps: a mark keeps the old
        self.count_arrays = vector.CountArrays(self)
        self.spread_epoch = next(_VERSIONS)

    def _without_node(self, name: str) -> None:
        """Move partitions and states past the deleted node `name`: a domain keeping a live node still lists it
        (podless: no state changes); states whose domain it was the last node of lose it (every hostname state)."""
        moved = self._move_partitions(
            lambda key, part: without_node(part, name, dead=lambda listed: self._dead_listed(listed, name)))
        self._move_states(name, moved, [(ns, key) for ns, states in self._spread.items() for key in states])

    def _dead_listed(self, listed: tuple[str, ...], deleted: str | None = None) -> frozenset[str]:
        """The deleted nodes a domain's list holds (partition.without_node), which only deleting one of them changes."""
        hit = self._dead.get(id(listed))
        if hit is None or hit[0] is not listed:
            gone = frozenset(listed).difference(self.nodes)  # in C: a zone's list holds thousands, met at each cordon
        elif deleted is not None and deleted not in hit[1]:
            gone = hit[1] | {deleted}
        else:
            return hit[1]
        self._set(self._dead, id(listed), (listed, gone))
        return gone

    def _move_partitions(self, move: Callable[[tuple, spread.Partition], spread.Partition]
                         ) -> dict[int, spread.Partition]:
        """Replace each partition by `move(key, partition)`; returns id(node_domain) before -> partition after."""
        moved: dict[int, spread.Partition] = {}
        for key, part in list(self._partitions.items()):
            new = moved.get(id(part.node_domain))
            if new is None:
                new = moved[id(part.node_domain)] = move(key, part)
            self._partitions[key] = new
        return moved

    def _move_states(self, name: str, moved: dict[int, spread.Partition], which: list[tuple[str, tuple]]) -> None:
        """Move the states `which` with the partitions (`moved`); one not made from them is dropped."""
        for namespace, key in which:
            states = self._spread[namespace]
            old = states[key]
            new = counts.without_node(old, name, moved, self.count_arrays)
            if new is not None:
                if new is not old:
                    self._set(states, key, new)
                    self.spread_epoch = next(_VERSIONS)
                continue
            self.spread_epoch = next(_VERSIONS)
            self.count_arrays.drop(old)
            self._pop(states, key)
            self._member(self._honor, (namespace, key), False)
            self._set(self._templates_seen, namespace, next(_VERSIONS))

    def spread_state(self, pod: Pod) -> spread.SpreadState:
        """`spread.compute(self.index, pod)`, memoised until a mutation can change it."""
        st = self.shared_spread_state(pod)
        return st if st.pod is pod else counts.new_spread_state(pod, st.constraints, st.require_all_soft_keys, st.hard)

    def shared_spread_state(self, pod: Pod, key: int | None = None) -> spread.SpreadState:
        """`spread_state(pod)` as memoised, for `pod` or one like it (the judge reads only the constraint states)."""
        if key is None:
            key = spread_key_of(pod)
        states = self._spread.get(pod.namespace)
        if states is None:
            states = {}
            self._set(self._spread, pod.namespace, states)
        st = states.get(key)
        if st is None:
            st = spread.compute(self.index, pod, partitions=self._partitions)
            self._set(states, key, st)
            self.spread_epoch = next(_VERSIONS)
            self._set(self._templates_seen, pod.namespace, self.spread_epoch)
            if any(cs.constraint.node_taints_policy == HONOR for cs in st.constraints):
                self._member(self._honor, (pod.namespace, key), True)
        return st

    def shared_spread_states(self, probes: list[tuple[Pod, int]]) -> list[spread.SpreadState]:
        """shared_spread_state(pod, key) of each probe, the memoised ones read in place (a judge reads hundreds)."""
        spread_in, none = self._spread.get, {}
        return [spread_in(p.namespace, none).get(k) or self.shared_spread_state(p, k) for p, k in probes]

    def usage_of(self, node: str, row_of: Callable[[Pod], tuple[int, ...]]) -> tuple[int, ...]:
        """Σ row_of(pod) over the pods on `node`, terminating ones included: they hold their resources."""
        if row_of is not self._row_of:
            self._usage, self._row_of = {}, row_of
        hit = self._usage.get(node)
        if hit is None:
            rows = [row_of(p) for p in self.index.pods_by_node.get(node, ())]
            hit = tuple(map(sum, zip(*rows))) if rows else row_of.zero  # type: ignore[attr-defined]
            self._set(self._usage, node, hit)
        return hit

    def _charge(self, pod: Pod, sign: int) -> None:
        node = pod.node_name
        old = self._usage.get(node) if node else None
        if old is not None and not pod.finished:
            self._set(self._usage, node, tuple(map(operator.add if sign > 0 else operator.sub, old, self._row_of(pod))))

    def _shift_spread(self, pod: Pod, delta: int) -> None:
        states = self._spread.get(pod.namespace)
        if not states or not spread.counted(pod):
            return  # a terminating or unbound pod is in no count
        labels = pod.labels
        memo = (pod.namespace, self._templates_seen.get(pod.namespace), id(labels))
        hit = self._shifts.get(memo)
        if hit is None or hit[0] is not labels:
            if len(self._shifts) >= 65536:
                self._shifts.clear()
            hit = self._shifts[memo] = (labels, [k for k, st in states.items()
                                                 if any(counts.counts_in(cs, pod) for cs in st.constraints)])
        for key in hit[1]:
            new = counts.shifted_state(states[key], pod, delta, self.count_arrays)
            if new is not None:
                self._set(states, key, new)
                self.spread_epoch = next(_VERSIONS)

    def _cordoned_under_honor(self, name: str) -> None:
        """Under nodeTaintsPolicy Honor a cordoned node makes no domain for pods that do not tolerate the cordon."""
        taints = self.nodes[name].taints

        def move(key: tuple, part: spread.Partition) -> spread.Partition:
            # the key's tolerations (partition_key keeps them under Honor) decide
            if key[3] == HONOR and name in part.node_domain and untolerated_taint(taints, key[5]) is not None:
                return without_node(part, name, EXCLUDED_TAINT, dead=self._dead_listed)
            return part

        self._move_states(name, self._move_partitions(move), list(self._honor))

    def _touch(self, node: str) -> None:
        if node:
            self.stamp = next(_VERSIONS)
            self._set(self.version, node, self.stamp)
            if self._versions is not None:
                i = self._versions[0].get(node)
                if i is not None:
                    self._versions[1][i] = self.stamp

    def pods_on(self, node: str) -> list[Pod]:
        return list(self.index.pods_by_node.get(node, ()))

    def cordon(self, names: Iterable[str]) -> None:
        for name in names:
            n = self.nodes[name]
            if not n.unschedulable:
                cordoned = n.cordoned()
                self._set(self.nodes, name, cordoned)
                self._set(self.index.nodes, name, cordoned)
                self._touch(name)
                stamp = self.node_epoch = next(_VERSIONS)
                self._set(self._node_stamps, name, stamp)
                if self._node_array is not None:
                    at = self.version_positions()[name]  # first: it may carry the array over
                    self._node_array[at] = stamp
                self._cordoned_under_honor(name)

    def delete_node(self, name: str) -> None:
        """Remove a Node object and, as the pod garbage collector does, its pods (DaemonSet and mirror pods by then)."""
        for p in self.pods_on(name):
            self._drop(p)
        gone, images = self.nodes[name], self._images
        self.nodes = {n: node for n, node in self.nodes.items() if n != name}  # not a pop, whose undo loses name order
        self.index.nodes = {n: node for n, node in self.index.nodes.items() if n != name}
        self._node_set_changed(name, deleted=True)
        if images is not None:  # moved with the node, not made again from every node's images
            self._images = scores.image_states_without(images, gone, self.nodes.values())

    def _drop(self, pod: Pod) -> None:
        if pod.node_name:
            node = self.nodes.get(pod.node_name)
            if node is not None and not node.unschedulable:
                self.freed += 1
        self._pop(self.pods, pod.key)
        self._terminating.pop(pod.key, None)
        self.index.remove_pod(pod)
        self._charge(pod, -1)
        self._touch(pod.node_name)
        self._shift_spread(pod, -1)

    def _put(self, pod: Pod) -> None:
        self._set(self.pods, pod.key, pod)
        if pod.terminating:
            self._terminating[pod.key] = pod
        self.index.add_pod(pod)
        self._charge(pod, +1)
        self._touch(pod.node_name)
        self._shift_spread(pod, +1)

    def evict(self, pod: Pod) -> None:
        current = self.pods.get(pod.key, pod)
        if current.owner is not None and current.owner.kind == "StatefulSet":
            self._drop(current)
            return
        marked = pod_with(current, terminating=True)
        if not spread.counted(current):  # unbound, or terminating already: nothing is kept in place
            self._drop(current)
            self._put(marked)
            return
        node = self.nodes.get(current.node_name)  # as _drop then _put, in one change (usage sums stay)
        if node is not None and not node.unschedulable:
            self.freed += 1
        self._set(self.pods, marked.key, marked)
        self._terminating[marked.key] = marked
        self.index.replace_pod(current, marked)
        self._touch(current.node_name)
        self._shift_spread(current, -1)

    def settle(self) -> None:
        for p in list(self._terminating.values()):  # kept apart: no walk over every pod per step
            self._drop(p)

    def replacement_for(self, pod: Pod) -> Pod:
        """The pod a controller creates for `pod`: same labels, constraints and spec requests; unbound; renamed."""
        self.seq += 1
        if pod.owner is not None and pod.owner.kind == "StatefulSet":
            name = pod.name
        else:
            base = pod.name.rsplit("-", 1)[0] if "-" in pod.name else pod.name
            name = f"{base}-new{self.seq}"
        return pod_with(podrequests.fresh(pod), name=name, uid=f"{REPLACEMENT_UID_PREFIX}{self.seq}", node_name="",
                        phase="Pending", terminating=False, conditions=(), ready=False, nominated_node="", created="")

    def add_pending(self, pod: Pod) -> None:
        self._put(pod)

    def bind(self, pod: Pod, node: str) -> Pod:
        """Bind a pending pod (as the scheduler's assume step does)."""
        current = self.pods.get(pod.key, pod)
        if current.key in self.pods:
            self._drop(current)
        bound = pod_with(current, node_name=node, phase="Running")
        self._put(bound)
        return bound

    def pending(self) -> list[Pod]:
        return [p for p in self.pods.values() if p.pending]


_CURRENT: dict[Callable, Callable[[Any, Any], Any]] = {  # how to read what each undo function would overwrite (redo)
    undo_entry: lambda container, key: container.get(key),
    undo_member: operator.contains,
    operator.setitem: operator.getitem,  # an item of an array (vector.CountArrays)
}
_SAME_FIELDS = ("workloads", "services", "pvs", "pvcs", "storage_classes")  # a remedy never changes these (forked_to)


def spread_key(pod: Pod) -> tuple:
    """What `spread.compute` reads of the incoming pod: constraints (else the defaults its labels and owner select),
    labels (selfMatch, matchLabelKeys), and the nodeSelector/affinity and tolerations the inclusion policies apply."""
    return (tuple(sorted(pod.labels.items())), pod.spread, pod.owner, tuple(sorted(pod.node_selector.items())),
            pod.node_affinity, pod.tolerations)


def _positions_in(positions: dict[str, int], order: tuple[str, ...]):
    import numpy as np
    return np.fromiter(map(positions.__getitem__, order), dtype=np.int64, count=len(order))


def _without_zone_member(zones: dict[str, tuple[str, ...]] | None, name: str) -> dict[str, tuple[str, ...]] | None:
    """`zone_lists` of the nodes (in name order) less the deleted `name`. Zones are ordered by their first node: when
    it goes, the zone moves to where its next node's name falls among the other first nodes, as a new walk would."""
    if zones is None:
        return None
    for zone, names in zones.items():
        if name in names:
            break
    else:
        return zones
    left = tuple(n for n in names if n != name)
    if names[0] != name:
        out = dict(zones)
        out[zone] = left
        return out
    rest = [(z, v) for z, v in zones.items() if z != zone]
    if left:
        rest.append((zone, left))
        rest.sort(key=lambda item: item[1][0])
    return dict(rest)


def parts_memo(fn: Callable[[Pod], Any], reads: tuple[str, ...], by_value: tuple[str, ...] = (),
               limit: int = 65536, pods_limit: int = 4096) -> Callable[[Pod], Any]:
    """`fn(pod)` for a function reading only the fields `reads` and `by_value`, remembered per pod object and per the
    objects of `reads` (values of `by_value`: strings, cheap to hash), which `pod_with` records and a workload's loaded
    pods share. Entries hold their key objects, so ids are not reused. The maps empty at `limit` and `pods_limit`
    entries; the one by pod keeps its pods alive, so it would otherwise hold the records a simulation replaces."""
    by_pod: dict[int, tuple[Pod, Any]] = {}
    by_parts: dict[tuple, tuple[tuple, Any]] = {}
    parts_of = operator.attrgetter(*reads)
    values_of = operator.attrgetter(*by_value) if by_value else (lambda pod: ())
    if len(reads) == 1:
        parts_of = (lambda get: lambda pod: (get(pod),))(parts_of)
    if len(by_value) == 1:
        values_of = (lambda get: lambda pod: (get(pod),))(values_of)

    def get(pod: Pod) -> Any:
        hit = by_pod.get(id(pod))  # an entry holds its pod: while it lives, that id is this pod's
        if hit is not None:
            return hit[1]
        parts = parts_of(pod)
        key = (*values_of(pod), *map(id, parts))
        got = by_parts.get(key)  # the same: the ids of live objects are theirs
        if got is not None:
            value = got[1]
        else:
            value = fn(pod)
            if len(by_parts) >= limit:
                by_parts.clear()
            by_parts[key] = (parts, value)
        if len(by_pod) >= pods_limit:
            by_pod.clear()
        by_pod[id(pod)] = (pod, value)
        return value

    return get


def numbering() -> Callable[[Any], int]:
    """key -> a small number, the same for equal keys, which rehash their constraints at every lookup."""
    ids: dict[Any, int] = {}

    def number(key: Any) -> int:
        got = ids.get(key)
        if got is None:
            got = ids[key] = len(ids)
        return got

    return number


def interned(fn: Callable[[Pod], Any]) -> Callable[[Pod], int]:
    """`fn(pod)` (a hashable key) as a `numbering` number."""
    number = numbering()
    return lambda pod: number(fn(pod))


_POD_FIELDS = tuple(f.name for f in fields(Pod))
_pod_fields = operator.attrgetter(*_POD_FIELDS)
_POSITIONS = {name: i for i, name in enumerate(_POD_FIELDS)}


def pod_with(pod: Pod, **changes) -> Pod:
    """dataclasses.replace(pod, **changes) without its per-call field introspection and frozen setattrs."""
    values = list(_pod_fields(pod))
    for name, value in changes.items():
        values[_POSITIONS[name]] = value
    return new_pod(*values)


SPREAD_KEY_READS = ("labels", "spread", "owner", "node_selector", "node_affinity", "tolerations")
spread_key_of = parts_memo(interned(spread_key), SPREAD_KEY_READS)  # asked per probe pod per step, and per placement
