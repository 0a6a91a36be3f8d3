"""Why a replacement found no node (the trap that stranded it), as a code and its details:
- NoCapacity: no node passes the filters other than spread; `reasons` is the scheduler's first-failure histogram.
- HostnameSpreadFull: a `kubernetes.io/hostname` DoNotSchedule constraint refuses every fit node (each holds globalMin
  + maxSkew; under nodeTaintsPolicy Ignore a drained, cordoned node is a 0-pod domain pinning globalMin to 0).
- CordonedDomainTrap: a zone-like DoNotSchedule constraint refuses the fit nodes, and some of its domains at the global
  minimum exist only through cordoned nodes (nodeTaintsPolicy Ignore): the pod would have to go there, and can't.
- SpreadBlocked: spread refuses the fit nodes with no cordoned domain to blame (e.g. minDomains above the domains)."""

from __future__ import annotations

from typing import Any

from kubectl_tspread.views.drain.core.memo import ObjectMemo
from kubectl_tspread.model.plan import CORDONED_DOMAIN_TRAP, HOSTNAME_SPREAD_FULL, NO_CAPACITY, SPREAD_BLOCKED
from kubectl_tspread.views.drain.core.placement import Placement
from kubectl_tspread.views.drain.core.simulate import SimCluster
from kubectl_tspread.engine import spread
from kubectl_tspread.model import HONOR, HOSTNAME_KEY


def closed_domains(sim: SimCluster, cs: spread.ConstraintState, holding: int | None = None) -> list[spread.Domain]:
    """Domains of `cs` with every node cordoned: they count but take no pod; with `holding`, those holding that many."""
    if cs.constraint.node_taints_policy == HONOR:
        return []
    return [d for d in cs.domains.values() if (holding is None or d.pods == holding) and _closed(sim, d.nodes)]


_CLOSED = ObjectMemo()  # node list -> (sim.node_epoch, closed): a zone being drained lists hundreds of nodes
_WALKED = 8  # lists up to this long (a hostname domain's one node) are walked each time


def _closed(sim: SimCluster, names: tuple[str, ...]) -> bool:
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
    return [d.value for d in closed_domains(sim, cs, holding=cs.global_min)]


def strand_reason(sim: SimCluster, pl: Placement) -> tuple[str, dict[str, Any]]:
    """(code, details) for a replacement that `pl` says has no node."""
    if not pl.fit_nodes:
        return NO_CAPACITY, {"reasons": dict(sorted(pl.reasons.items()))}
    refusing = [cs for cs in sim.spread_state(pl.pod).hard if pl.spread_refusals.get(cs.constraint.topology_key)]
    details: dict[str, Any] = {"fitNodes": len(pl.fit_nodes)}
    for cs in refusing:
        key, trapped = cs.constraint.topology_key, cordoned_min_domains(sim, cs)
        details.update({"topologyKey": key, "maxSkew": cs.constraint.max_skew, "globalMin": cs.global_min,
                        "distribution": {d.value: d.pods for d in cs.domains.values()}})
        if key == HOSTNAME_KEY or trapped:
            details["cordonedDomains"] = trapped
            return HOSTNAME_SPREAD_FULL if key == HOSTNAME_KEY else CORDONED_DOMAIN_TRAP, details
    return SPREAD_BLOCKED, details
