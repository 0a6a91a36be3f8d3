"""Why a replacement found no node: the trap that stranded it, as data.

- NoCapacity: no node passes the filters other than spread (resources, taints,
  affinity, ports, volumes); `reasons` is the scheduler's first-failure histogram.
- HostnameSpreadFull: nodes fit, and a `kubernetes.io/hostname` DoNotSchedule
  constraint refuses every one of them (each node already holds globalMin + maxSkew;
  under nodeTaintsPolicy Ignore a drained, cordoned node is a domain with 0 pods that
  pins globalMin to 0).
- CordonedDomainTrap: nodes fit, a zone-like DoNotSchedule constraint refuses them,
  and some of its domains exist only through cordoned nodes (nodeTaintsPolicy Ignore)
  while holding the global minimum: the replacement would have to go there and can't.
- SpreadBlocked: nodes fit and spread refuses them with no cordoned domain to blame
  (e.g. minDomains above the schedulable domains).
"""

from __future__ import annotations

from typing import Any

from kubectl_tspread.views.drain.core.memo import ObjectMemo
from kubectl_tspread.model.plan import CORDONED_DOMAIN_TRAP, HOSTNAME_SPREAD_FULL, NO_CAPACITY, SPREAD_BLOCKED
from kubectl_tspread.views.drain.core.placement import Placement
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.engine import spread
from kubectl_tspread.model import HONOR, HOSTNAME_KEY


def closed_domains(sim: SimCluster, cs: spread.ConstraintState, holding: int | None = None) -> list[spread.Domain]:
    """Domains of `cs` whose every node is cordoned: they still count, and nothing can be
    placed in them (none under Honor, where cordoned nodes make no domain). With `holding`,
    only those whose count is that, looked at before the nodes are walked."""
    if cs.constraint.node_taints_policy == HONOR:
        return []
    return [d for d in cs.domains.values() if (holding is None or d.pods == holding) and _closed(sim, d.nodes)]


# a domain's node list -> (the simulation's node_epoch, whether it is closed)
_CLOSED = ObjectMemo()
# lists up to this long are walked each time (a hostname domain's one node)
_WALKED = 8


def _closed(sim: SimCluster, names: tuple[str, ...]) -> bool:
    """Whether every node of a domain's list that still exists is cordoned (and the list is
    not empty), remembered per list and Node objects (sim.node_epoch): a zone being drained
    lists hundreds of cordoned nodes, and every replacement it strands asks again."""
    kept = len(names) > _WALKED
    hit = _CLOSED.get(names) if kept else None
    if hit is not None and hit[0] == sim.node_epoch:
        return hit[1]
    nodes = sim.nodes
    out = bool(names) and all(nodes[n].unschedulable for n in names if n in nodes)
    if kept:
        _CLOSED.put(names, (sim.node_epoch, out))
    return out


def cordoned_min_domains(sim: SimCluster, cs: spread.ConstraintState) -> list[str]:
    """Closed domains of `cs` whose count is the global minimum. The count is looked at
    first: a stranded replacement asks this of each refusing constraint, a hostname one has
    a domain per node, and a zone being drained has hundreds of cordoned nodes to walk."""
    return [d.value for d in closed_domains(sim, cs, holding=cs.global_min)]


def strand_reason(sim: SimCluster, pl: Placement) -> tuple[str, dict[str, Any]]:
    """(code, details) for a replacement that `pl` says has no node."""
    if not pl.fit_nodes:
        return NO_CAPACITY, {"reasons": dict(sorted(pl.reasons.items()))}
    state = sim.spread_state(pl.pod)
    refusing = [cs for cs in state.hard if pl.spread_refusals.get(cs.constraint.topology_key)]
    details: dict[str, Any] = {"fitNodes": len(pl.fit_nodes)}
    for cs in refusing:
        key = cs.constraint.topology_key
        trapped = cordoned_min_domains(sim, cs)
        details.update({"topologyKey": key, "maxSkew": cs.constraint.max_skew, "globalMin": cs.global_min,
                        "distribution": {d.value: d.pods for d in cs.domains.values()}})
        if key == HOSTNAME_KEY:
            details["cordonedDomains"] = trapped
            return HOSTNAME_SPREAD_FULL, details
        if trapped:
            details["cordonedDomains"] = trapped
            return CORDONED_DOMAIN_TRAP, details
    return SPREAD_BLOCKED, details
