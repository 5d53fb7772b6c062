"""What the topologies of one request hold on each node while the service plans them one by one.

The plugin reports, per node, what topologies *outside* the request hold
(``Node.used_cpu``/``used_memory_mb``). The request's own topologies share
the rest: while topology k is planned, each other one holds either its new
plan (planned before k) or its current placement (still to be planned, or
left where it is when its planning failed), so two plans of one request never
count the same capacity twice.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from storm_planner.service.convert import declared_use


class HeldByOthers(Mapping):
    """node -> (CPU %, MB) the request's other topologies hold there, read off the totals on demand.

    ``changed``: the nodes whose figure may differ from the previous :meth:`RequestLedger.held_by_others`
    answer (what plans changed since, and the nodes of this and that topology's own use), so that the
    service rebuilds only those nodes' views.
    """

    def __init__(self, total: Mapping[str, list[float]], own: Mapping[str, list[float]], changed: set[str]) -> None:
        self._total, self._own, self.changed = total, own, changed

    def __getitem__(self, node: str) -> tuple[float, float]:
        cpu, memory = self._total[node]
        own = self._own.get(node)
        return (cpu, memory) if own is None else (cpu - own[0], memory - own[1])

    def __iter__(self):
        return iter(self._total)

    def __len__(self) -> int:
        return len(self._total)


class RequestLedger:
    """Per node, what each of the request's topologies holds, and the sum of all: O(nodes it places) a topology."""

    def __init__(self, specs: Iterable[Any]) -> None:
        self._held: dict[str, dict[str, list[float]]] = {
            spec.id: declared_use(spec, spec.current or {}) for spec in specs}
        self._total: dict[str, list[float]] = {}
        self._touched: set[str] = set()        # nodes whose totals changed since the last question
        self._previous_own: set[str] = set()
        for per_node in self._held.values():
            self._add(per_node, 1.0)

    def held_by_others(self, topology_id: str) -> HeldByOthers:
        """Per node, the declared (CPU %, MB) that the request's other topologies hold."""
        own = self._held.get(topology_id, {})
        changed = self._touched | self._previous_own | set(own)
        self._touched, self._previous_own = set(), set(own)
        return HeldByOthers(self._total, own, changed)

    def planned(self, spec: Any, assignments: Mapping[str, Any]) -> None:
        """``spec``'s topology now holds what its plan places (a failed one keeps its current place)."""
        if assignments:
            self._add(self._held.get(spec.id, {}), -1.0)
            self._held[spec.id] = declared_use(spec, assignments)
            self._add(self._held[spec.id], 1.0)

    def _add(self, per_node: Mapping[str, list[float]], sign: float) -> None:
        for node, (cpu, memory) in per_node.items():
            sums = self._total.setdefault(node, [0.0, 0.0])
            sums[0] += sign * cpu
            sums[1] += sign * memory
        self._touched.update(per_node)
