"""ClusterIndex: the lookups every verb needs, built once per snapshot.

Pods the scheduler never sees (phase Succeeded/Failed) are kept out of the per-node
lists; terminating pods stay in (they hold resources and the engine reports them as
uncounted). Matching a selector walks only the pods of one namespace that carry the
rarest label the selector requires, so a constraint costs its workload, not the cluster.
"""

from __future__ import annotations

import itertools
import operator
from collections import defaultdict
from typing import Any, Callable, Iterable

from kubectl_tspread.model.labels import IN, Selector
from kubectl_tspread.model import Node, Pod, Snapshot, Workload


class ClusterIndex:
    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.nodes: dict[str, Node] = {n.name: n for n in snapshot.nodes}
        self.pods_by_node: dict[str, list[Pod]] = defaultdict(list)
        self.pods_by_namespace: dict[str, list[Pod]] = defaultdict(list)
        # (namespace, label key, value) -> pods: the posting lists selector matching starts from
        self._by_label: dict[tuple[str, str, str], list[Pod]] = defaultdict(list)
        # node name -> its bound pods with required anti-affinity (InterPodAffinity's existing-pod
        # terms): most clusters have few, and the filter would otherwise walk every bound pod
        self.anti_affinity_by_node: dict[str, list[Pod]] = defaultdict(list)
        # in a what-if view (`patched`): the (table id, key) lists already copied from the parent
        self._owned: set[tuple[int, Any]] | None = None
        # with `follow_nodes_only()`: the namespace and label lists are left as built, the
        # unbound pods are listed here (under ""), the nodes whose list changed since are in
        # `_touched` per namespace of the pods that moved, and once a pod moved `candidates`
        # answers for a namespace from the built lists on the nodes none of its pods moved to
        # or from, and from the per-node lists on the others: `_stamp` names the pod set (0: as
        # built; copies share it until either changes), `_scans` holds such answers by
        # (namespace, built list) -> (stamp, the pods)
        self._lazy = False
        self._unbound: dict[str, list[Pod]] = defaultdict(list)
        self._touched: dict[str, set[str]] = {}
        self._stamp = 0
        self._scans: dict[tuple[str, int], tuple[int, list[Pod]]] = {}
        for p in snapshot.pods:  # what _slots lists, inline: this loop runs over every pod
            if p.finished:
                continue
            self.pods_by_namespace[p.namespace].append(p)
            if p.node_name:
                self.pods_by_node[p.node_name].append(p)
                if p.pod_anti_affinity:
                    self.anti_affinity_by_node[p.node_name].append(p)
            for k, v in p.labels.items():
                self._by_label[(p.namespace, k, v)].append(p)
        self.workloads_by_uid: dict[str, Workload] = {w.uid: w for w in snapshot.workloads if w.uid}
        # per-node values derived from the node's pod list (engine.resources keeps usage totals
        # here through `put_cache`); add_pod / remove_pod drop the entry of the node they touch
        self.node_cache: dict[str, Any] = {}
        # while a simulation holds a mark (`mark`): the list its undo entries go to, one
        # (undo, container, key, old value) per change, undone by undo_entry
        self.journal: list | None = None

    def copy(self) -> "ClusterIndex":
        """An independent index over the same pods (pods and snapshot shared): what-if
        branches (views/drain/core/simulate.py) fork it instead of re-indexing every pod. The pod
        lists are shared copy-on-write: both indexes copy a list before their first write
        to it, so a fork costs the number of lists, not of pods."""
        other = self._view()
        self._owned = set()  # every list is now shared by the two
        return other

    def mark(self, journal: list) -> dict:
        """Start sending undo entries to `journal` (a simulation's mark, views/drain/core/
        simulate.py): returns what `restore` puts back. Every pod list is then copied before
        its first write, and the old list is what the entry keeps; the attributes that are
        replaced rather than changed (the pod-set stamp, a node map made anew) come back
        from the returned copy."""
        saved = self.__dict__.copy()
        self._owned, self.journal = set(), journal
        return saved

    def restore(self, saved: dict, journal: list | None) -> None:
        """Back to the attributes `mark` returned, once the journal's entries since were
        undone; `journal` is where entries go from now on (an outer mark's, or None). The
        lists restored may be shared with a copy made meanwhile: each is copied again
        before it is written."""
        self.__dict__.clear()
        self.__dict__.update(saved)
        self._owned, self.journal = set(), journal

    def put_cache(self, node: str, value: Any) -> None:
        """node_cache[node] = value, undone with the simulation's mark."""
        if self.journal is not None:
            self.journal.append((undo_entry, self.node_cache, node, self.node_cache.get(node)))
        self.node_cache[node] = value

    def _uncache(self, node: str) -> None:
        old = self.node_cache.pop(node, None)
        if old is not None and self.journal is not None:
            self.journal.append((undo_entry, self.node_cache, node, old))

    def _view(self) -> "ClusterIndex":
        """A new index sharing this one's pod lists copy-on-write (its writes copy first)."""
        other = ClusterIndex.__new__(ClusterIndex)
        other.__dict__.update(self.__dict__)
        # dict.copy clones the tables in C even with deleted slots (node_cache loses an entry
        # per pod moved), where dict() inserts entry by entry
        other.nodes = self.nodes.copy()
        other.node_cache = self.node_cache.copy()  # its entries are immutable; the dict is per index
        other._owned = set()
        other.journal = None  # a copy answers to no simulation's marks
        if self._lazy:
            other._touched = {ns: set(nodes) for ns, nodes in self._touched.items()}
        for name in _TABLES:
            setattr(other, name, defaultdict(list, getattr(self, name)))
        return other

    @property
    def snapshot(self) -> Snapshot:
        """The snapshot indexed; a what-if view (`patched`) makes its changed copy on first use."""
        snap = self._snapshot
        if snap is None:
            snap = self._snapshot = self._make_snapshot()
        return snap

    @snapshot.setter
    def snapshot(self, value: Snapshot) -> None:
        self._snapshot = value

    def node(self, name: str) -> Node | None:
        return self.nodes.get(name)

    def candidates(self, namespace: str, selector: Selector) -> Iterable[Pod]:
        """Pods of `namespace` that may match `selector` (a superset; callers still call matches)."""
        best: list[Pod] | None = None
        for r in selector.requirements:
            if r.op == IN and len(r.values) == 1:
                lst = self._by_label.get((namespace, r.key, r.values[0]), [])
                if best is None or len(lst) < len(best):
                    best = lst
        if best is None:
            best = self.pods_by_namespace.get(namespace, [])
        return best if not self._stamp else self._moved_since_built(namespace, best)

    def _moved_since_built(self, namespace: str, built: list[Pod]) -> list[Pod]:
        """With `follow_nodes_only()`, once a pod moved: `built` (a list of the namespace's
        pods as built) on the nodes none of its pods came to or went from since, the
        namespace's pods on the others and the unbound ones. A simulation asks this a few
        dozen times in all, early (new workloads' first spread states), while it moves pods
        by the hundred thousand: keeping every namespace and label list up to date for those
        few answers would cost more than this. Made once per pod set."""
        key = (namespace, id(built))
        hit = self._scans.get(key)
        if hit is not None and hit[0] == self._stamp:
            return hit[1]
        touched, by_node = self._touched.get(namespace, ()), self.pods_by_node
        pods = [p for p in built if p.node_name and p.node_name not in touched]
        pods += [p for n in touched for p in by_node.get(n, ()) if p.namespace == namespace]
        pods += [p for p in self._unbound.get("", ()) if p.namespace == namespace]
        self._scans[key] = (self._stamp, pods)
        return pods

    def matching_pods(self, namespace: str, selector: Selector) -> list[Pod]:
        """Pods of `namespace` (finished ones excluded) whose labels match `selector`."""
        if selector.is_nothing:
            return []
        return [p for p in self.candidates(namespace, selector) if selector.matches(p.labels)]

    def controller_of(self, pod: Pod) -> Workload | None:
        """The pod's controlling workload record, if the snapshot has it."""
        if pod.owner is None:
            return None
        w = self.workloads_by_uid.get(pod.owner.uid)
        if w is not None:
            return w
        for w in self.snapshot.workloads:
            if w.kind == pod.owner.kind and w.name == pod.owner.name and w.namespace == pod.namespace:
                return w
        return None

    def top_controller(self, pod: Pod) -> Workload | None:
        """Follow ReplicaSet -> Deployment (one hop): the workload a user thinks in."""
        w = self.controller_of(pod)
        if w is not None and w.owner is not None:
            parent = self.workloads_by_uid.get(w.owner.uid)
            if parent is None:
                parent = next((x for x in self.snapshot.workloads if x.kind == w.owner.kind
                               and x.name == w.owner.name and x.namespace == w.namespace), None)
            if parent is not None:
                return parent
        return w

    def add_pod(self, pod: Pod) -> None:
        """Index one more pod (a simulation binding a replacement). `snapshot` is left as it was:
        what-if callers (views/drain/core/simulate.py) keep their own pod list."""
        if pod.finished:
            return
        if self._lazy:
            self._moved(pod.node_name, pod.namespace)
        for table, key in self._slots(pod, self._lazy):
            self._writable(table, key).append(pod)
        if pod.node_name:
            self._uncache(pod.node_name)

    def follow_nodes_only(self) -> None:
        """From now on only the per-node lists (and a list of the unbound pods) follow the
        pods: the namespace and label lists (thousands of pods each) stay as built, and
        `candidates` answers from them until a pod moves, then from them on the nodes no pod
        moved on and from the per-node and unbound lists for the rest (`_moved_since_built`).
        A simulation that moves pods by the thousand would otherwise edit, or copy, those
        lists for each move; only `candidates` reads them then."""
        if not self._lazy:
            self._lazy = True
            for p in self.snapshot.pods:
                if not p.finished and not p.node_name:
                    self._unbound[""].append(p)

    def remove_pod(self, pod: Pod) -> None:
        """Drop a pod added by the constructor or `add_pod` (matched by identity, then equality)."""
        if pod.node_name:
            self._uncache(pod.node_name)
        if self._lazy:
            self._moved(pod.node_name, pod.namespace)
        for table, key in self._slots(pod, self._lazy):
            if not table.get(key):
                continue
            lst = self._writable(table, key)
            hit = _last_index(lst, pod)
            if hit is not None:
                del lst[hit]
            elif pod in lst:
                lst.remove(pod)

    def replace_pod(self, old: Pod, new: Pod) -> None:
        """`new` in place of `old`, a record of the same pod on the same node (a simulated
        eviction marks a pod terminating where it is): one edit of the node's lists instead
        of a removal and an addition. Anything else is a removal and an addition."""
        if not self._lazy or old.node_name != new.node_name or not old.node_name \
                or old.finished or new.finished or bool(old.pod_anti_affinity) != bool(new.pod_anti_affinity):
            self.remove_pod(old)
            self.add_pod(new)
            return
        self._uncache(old.node_name)
        self._moved(old.node_name, old.namespace)
        for table, key in self._slots(old, lazy=True):
            lst = self._writable(table, key)
            hit = _last_index(lst, old)
            if hit is None and old in lst:  # an equal record, as remove_pod finds it
                hit = lst.index(old)
            if hit is None:
                lst.append(new)
            else:
                lst[hit] = new

    def _moved(self, node: str, namespace: str) -> None:
        """A pod of `namespace` came to or went from `node` (empty: unbound) in a
        `follow_nodes_only()` index. Another namespace's pods on that node did not move: its
        answers may still read the built lists there."""
        self._stamp = next(_STAMPS)
        if node:
            touched = self._touched.get(namespace)
            if touched is None:  # an empty set left behind by an undo is harmless
                touched = self._touched[namespace] = set()
            if node not in touched:
                if self.journal is not None:
                    self.journal.append((undo_member, touched, node, False))
                touched.add(node)

    def _slots(self, pod: Pod, lazy: bool = False) -> list[tuple[dict, Any]]:
        """(table, key) of every list the pod belongs in; with `lazy`, only the per-node ones,
        or the unbound list (`follow_nodes_only`)."""
        out: list[tuple[dict, Any]] = [] if lazy else [(self.pods_by_namespace, pod.namespace)]
        if pod.node_name:
            out.append((self.pods_by_node, pod.node_name))
            if pod.pod_anti_affinity:
                out.append((self.anti_affinity_by_node, pod.node_name))
        elif lazy:
            out.append((self._unbound, ""))
        if not lazy:
            out.extend((self._by_label, (pod.namespace, k, v)) for k, v in pod.labels.items())
        return out

    def _writable(self, table: dict, key: Any) -> list[Pod]:
        """`table[key]`, first copied when this is a what-if view still sharing it with its parent."""
        if self._owned is not None and (id(table), key) not in self._owned:
            self._owned.add((id(table), key))
            old = table.get(key)
            if self.journal is not None:
                self.journal.append((undo_entry, table, key, old))
            table[key] = list(old) if old is not None else []
        return table[key]

    def patched(self, snapshot: Snapshot | Callable[[], Snapshot], nodes: Iterable[Node] = (),
                removed_nodes: Iterable[str] = (), removed_pods: Iterable[Pod] = (),
                added_pods: Iterable[Pod] = ()) -> "ClusterIndex":
        """A what-if view of this index: `nodes` added or replaced (by name), `removed_nodes`
        gone, `removed_pods` (records of this index) dropped, `added_pods` indexed, for the
        changed `snapshot` (or a function making it, called when someone reads it: the
        filters never do, and copying 150k pods per fix would cost more than the check).
        Only the lists the change touches are copied; the others, and the node usage cached
        so far, are shared with this index, which must not change while the view is in
        use. The view itself may change (its writes copy first)."""
        other = self._view()
        if isinstance(snapshot, Snapshot):
            other.snapshot = snapshot
        else:
            other._snapshot, other._make_snapshot = None, snapshot
        for name in removed_nodes:
            other.nodes.pop(name, None)
        for n in nodes:
            other.nodes[n.name] = n
        for p in removed_pods:
            other.remove_pod(p)
        for p in added_pods:
            other.add_pod(p)
        return other


# the pod lists an index keeps: copies and views copy these
_TABLES = ("pods_by_node", "pods_by_namespace", "_by_label", "anti_affinity_by_node", "_unbound")
# names the pod sets of lazy indexes (ClusterIndex._stamp), unique across copies
_STAMPS = itertools.count(1)


def undo_entry(container, key: Any, old: Any) -> None:
    """Undo one write of `container[key]` (a dict, or a map like one): `old` is what it held,
    None when the key was absent (no such map holds None)."""
    if old is None:
        container.pop(key, None)
    else:
        container[key] = old


def undo_member(container: set, item: Any, was_in: bool) -> None:
    """Undo one add to or discard from a set."""
    if was_in:
        container.add(item)
    else:
        container.discard(item)


def _last_index(lst: list, pod: Pod) -> int | None:
    """The position of `pod` itself in `lst`, searched from the end (a simulation mostly
    removes pods it added a moment ago), by identity and in C: a namespace's list holds
    thousands of pods, and `in` would call the dataclass __eq__ on each of them."""
    hit = next(itertools.compress(itertools.count(), map(operator.is_, reversed(lst), itertools.repeat(pod))), None)
    return None if hit is None else len(lst) - 1 - hit
