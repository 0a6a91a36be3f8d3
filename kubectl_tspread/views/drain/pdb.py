"""PodDisruptionBudgets as the Eviction API applies them, for planning (the plan output documents this model too).

A pod is covered by every PDB of its namespace whose selector matches its labels (an empty selector matches all, a nil
one none); under two or more it is never evicted (the API answers 500 "more than one PodDisruptionBudget":
MultiplePdbs). A step's evictions of covered pods never exceed `status.disruptionsAllowed`, and each is charged, even of
a pod not Ready (the API sometimes lets those pass free). The budget comes back when the step's replacements are Ready,
assumed before the next step, but not for one that finds no node. A budget of 0 blocks the pod for good (PdbBlocks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from kubectl_tspread.model import Pdb, Pod


def pdb_key(pdb: Pdb) -> str:
    return f"{pdb.namespace}/{pdb.name}"


def covering(pod: Pod, pdbs: Iterable[Pdb]) -> list[Pdb]:
    return sorted((b for b in pdbs if b.namespace == pod.namespace and b.selector.matches(pod.labels)), key=pdb_key)


def structurally_zero(pdb: Pdb) -> bool:
    """Whether the spec alone forbids every voluntary disruption, however many of the PDB's pods are healthy."""
    mu = pdb.max_unavailable
    if mu is not None and str(mu).strip().rstrip("%") in ("0", ""):
        return True
    m = pdb.min_available
    if isinstance(m, str) and m.strip() == "100%":
        return True
    return isinstance(m, int) and pdb.expected_pods > 0 and m >= pdb.expected_pods


def budget_state(pdb: Pdb) -> dict:
    """Why a PDB allows no disruption (PdbBlocks' `budgets`): `specAllowsNone`, or `healthyNeeded` more healthy pods."""
    forbids = structurally_zero(pdb)
    short = pdb.desired_healthy + 1 - pdb.current_healthy
    return {"pdb": pdb_key(pdb), "disruptionsAllowed": pdb.disruptions_allowed, "currentHealthy": pdb.current_healthy,
            "desiredHealthy": pdb.desired_healthy, "expectedPods": pdb.expected_pods, "specAllowsNone": forbids,
            "healthyNeeded": short if not forbids and pdb.expected_pods > 0 and short > 0 else None}


@dataclass
class Budgets:
    """Per PDB: `allowed` per step, `lost` to replacements that never became Ready, `used` by the current step."""

    allowed: dict[str, int]
    lost: dict[str, int]
    used: dict[str, int]

    @classmethod
    def from_pdbs(cls, pdbs: Iterable[Pdb]) -> "Budgets":
        return cls({pdb_key(b): max(0, b.disruptions_allowed) for b in pdbs}, {}, {})

    def copy(self) -> "Budgets":
        return Budgets(dict(self.allowed), dict(self.lost), dict(self.used))

    def fits(self, keys: Iterable[str]) -> bool:
        return all(self.step_allowance(k) - self.used.get(k, 0) > 0 for k in keys)

    def charge(self, keys: Iterable[str]) -> None:
        for k in keys:
            self.used[k] = self.used.get(k, 0) + 1

    def strand(self, keys: Iterable[str]) -> None:
        """A covered pod's replacement stays Pending: its unit does not come back."""
        for k in keys:
            self.lost[k] = self.lost.get(k, 0) + 1

    def next_step(self) -> Mapping[str, int]:
        """Close the step: return its evictions per PDB and give the budget back."""
        used, self.used = {k: v for k, v in self.used.items() if v}, {}
        return used

    def step_allowance(self, key: str) -> int:
        """The budget a step starts with (what the plan reports as disruptionsAllowed)."""
        return self.allowed.get(key, 0) - self.lost.get(key, 0)
