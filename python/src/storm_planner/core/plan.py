"""The answer of a planner: where every executor runs, plus advice and figures.

``parallelism`` is how many executors per component the plan itself places.
``advice`` is for a topology Storm already runs, whose executors a planner may
not add to: the executors per component it *should* run — what a Nimbus
rebalance (``storm-planner rebalance``) would change, up to each component's
task count — and the predicted gain, so a caller (the service's automatic
rebalance, an operator) can judge whether the restart is worth it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Slot


@dataclass(frozen=True)
class ParallelismAdvice:
    """Executors per component a running topology should have, and what that would gain."""

    parallelism: Mapping[str, int]      # advised executors per component
    current: Mapping[str, int]          # executors per component now
    tasks: Mapping[str, int]            # each component's task count: the most executors a rebalance can give
    max_input_rate: float               # predicted max input rate with the advised executors
    current_max_input_rate: float       # ... with the current ones, as the plan places them

    @property
    def changes(self) -> dict[str, int]:
        """The components whose executor count would change: the ``-e component=N`` of a rebalance."""
        return {c: n for c, n in self.parallelism.items() if n != self.current.get(c)}

    @property
    def gain(self) -> float:
        """Relative gain of the predicted max input rate (0.5 = +50 %)."""
        if self.current_max_input_rate <= 0:
            return float("inf") if self.max_input_rate > 0 else 0.0
        return self.max_input_rate / self.current_max_input_rate - 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "parallelism": dict(self.parallelism),
            "current": dict(self.current),
            "tasks": dict(self.tasks),
            "max_input_rate": self.max_input_rate,
            "current_max_input_rate": self.current_max_input_rate,
            "gain": self.gain if math.isfinite(self.gain) else None,  # derived; ignored when read back
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ParallelismAdvice:
        if not isinstance(data, Mapping):
            raise ProblemError("a plan's 'advice' is an object")
        try:
            return cls(
                parallelism=MappingProxyType({str(c): int(n) for c, n in (data.get("parallelism") or {}).items()}),
                current=MappingProxyType({str(c): int(n) for c, n in (data.get("current") or {}).items()}),
                tasks=MappingProxyType({str(c): int(n) for c, n in (data.get("tasks") or {}).items()}),
                max_input_rate=float(data.get("max_input_rate") or 0.0),
                current_max_input_rate=float(data.get("current_max_input_rate") or 0.0),
            )
        except (TypeError, ValueError, AttributeError) as error:
            raise ProblemError(f"a plan's 'advice' is malformed: {error}") from None


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
    # For a running topology: the executors it should have (applied by a rebalance), if any.
    advice: ParallelismAdvice | None = None

    def node_of(self, executor_id: str) -> str:
        return self.assignments[executor_id].node

    @property
    def nodes(self) -> dict[str, str]:
        """executor id -> node id."""
        return {executor: slot.node for executor, slot in self.assignments.items()}

    def replace(self, **changes: Any) -> Plan:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "assignments": _slot_texts(self.assignments),
            "parallelism": dict(self.parallelism),
            "drain": list(self.drain),
            "figures": dict(self.figures),
            "solve_ms": round(self.solve_ms, 3),
            "notes": list(self.notes),
            **({"state": dict(self.state)} if self.state else {}),
            **({"advice": self.advice.to_dict()} if self.advice else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
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
            advice=ParallelismAdvice.from_dict(data["advice"]) if data.get("advice") else None,
        )


def _slot_texts(assignments: Mapping[str, Any]) -> dict[str, str]:
    """Executor → "node:port", sorted by executor; each slot's text made once (plans share slots)."""
    text = {slot: str(slot) for slot in set(assignments.values())}
    return {executor: text[slot] for executor, slot in sorted(assignments.items())}
