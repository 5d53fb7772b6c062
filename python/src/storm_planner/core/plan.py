"""The answer of a planner: where every executor runs, plus advice and figures."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Slot


@dataclass(frozen=True)
class Plan:
    algorithm: str
    assignments: Mapping[str, Slot]                 # executor id -> slot
    parallelism: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    drain: tuple[str, ...] = ()                     # node ids to empty
    figures: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    solve_ms: float = 0.0
    notes: tuple[str, ...] = ()
    # Planner state to hand back on the next round (e.g. ALBIC's collocated sets); JSON-able.
    state: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def node_of(self, executor_id: str) -> str:
        return self.assignments[executor_id].node

    @property
    def nodes(self) -> dict[str, str]:
        """executor id -> node id."""
        return {executor: slot.node for executor, slot in self.assignments.items()}

    def replace(self, **changes: Any) -> "Plan":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "assignments": {e: str(s) for e, s in sorted(self.assignments.items())},
            "parallelism": dict(self.parallelism),
            "drain": list(self.drain),
            "figures": dict(self.figures),
            "solve_ms": round(self.solve_ms, 3),
            "notes": list(self.notes),
            **({"state": dict(self.state)} if self.state else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Plan":
        if not isinstance(data, Mapping) or not isinstance(data.get("assignments"), Mapping):
            raise ProblemError("a plan is a JSON object with an 'assignments' object")
        return cls(
            algorithm=str(data.get("algorithm", "")),
            assignments=MappingProxyType(
                {e: Slot.parse(s) for e, s in data["assignments"].items()}
            ),
            parallelism=MappingProxyType(dict(data.get("parallelism") or {})),
            drain=tuple(data.get("drain") or ()),
            figures=MappingProxyType(dict(data.get("figures") or {})),
            solve_ms=float(data.get("solve_ms") or 0.0),
            notes=tuple(data.get("notes") or ()),
            state=MappingProxyType(dict(data.get("state") or {})),
        )
