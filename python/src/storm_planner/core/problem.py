"""The planning problem: one topology to place on a set of nodes.

A :class:`Problem` is immutable and self-contained: planners read it, never the
cluster. It is built from the problem-file JSON (see ``problem.schema.json``
beside this module) with :meth:`Problem.from_dict`, or from a Thrift request by
the service.

Storm mapping: group = component, task = executor, node = supervisor. Loads and
capacities are CPU percent of one reference core (100 = one core); a node's
*effective* capacity is its capacity times its speed (§5 of Chatzistergiou &
Viglas: heterogeneous capacity).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from storm_planner.core.baseline import ClusterBaseline
from storm_planner.core.codec import check_fits, parse_problem, problem_to_dict
from storm_planner.core.costs import RateCosts
from storm_planner.core.elements import (
    BOLT,
    EXECUTOR_ID,
    EXECUTOR_LOAD,
    GROUPINGS,
    SPOUT,
    Component,
    ComponentExecutors,
    Executor,
    Node,
    Options,
    Slot,
    Stream,
    Traffic,
    executors_by_component,
)
from storm_planner.core.jsonfile import loads_bounded
from storm_planner.core.traffic import TrafficModel, traffic_model


@dataclass(frozen=True)
class Problem:
    """One topology and the nodes it may use.

    ``executors`` is always filled: when the problem file has none, they are
    derived from the components (see :mod:`storm_planner.core.derive`).
    ``traffic`` holds measured executor pairs only (often none); traffic implied
    by the streams is never written out as pairs: :attr:`traffic_model` computes
    every figure per component (see :mod:`storm_planner.core.traffic`).
    """

    nodes: tuple[Node, ...]
    topology_id: str
    components: tuple[Component, ...]
    streams: tuple[Stream, ...]
    executors: tuple[Executor, ...]
    traffic: tuple[Traffic, ...]
    current: Mapping[str, Slot] = field(default_factory=lambda: MappingProxyType({}))
    options: Options = field(default_factory=Options)
    profiles: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    measured: bool = False  # executors/traffic came from metrics, not from estimates
    # No metrics yet, but each executor's load is its component's as an earlier run of the topology's name
    # measured it (the service's planner.loads.remembered): estimates still, though of a real run's loads.
    loads_remembered: bool = False
    # How the loads grow with the offered rate (core.costs); by default nothing is known of it.
    costs: RateCosts = field(default_factory=RateCosts)

    @property
    def loads_known(self) -> bool:
        """Whether the executors' loads are a real run's (measured now, or remembered) rather than declared."""
        return self.measured or self.loads_remembered

    # -- lookups -------------------------------------------------------------
    def node(self, node_id: str) -> Node:
        return self._node_index[node_id]

    def find_node(self, node_id: str) -> Node | None:
        """The node with this id, or None when the problem has none."""
        return self._node_index.get(node_id)

    def component(self, component_id: str) -> Component:
        return self._component_index[component_id]

    def executors_of(self, component_id: str) -> tuple[Executor, ...]:
        return tuple(e for e in self.executors if e.component == component_id)

    @property
    def traffic_model(self) -> TrafficModel:
        """The topology's traffic: measured pairs, or the streams at component level."""
        return traffic_model(self)

    @cached_property
    def by_component(self) -> tuple[ComponentExecutors, ...]:
        """The executors grouped by component (Storm's order within each), for per-component figures."""
        return tuple(ComponentExecutors.of(component, executors)
                     for component, executors in executors_by_component(self.executors).items())

    @cached_property
    def executor_ids(self) -> frozenset[str]:
        return frozenset(map(EXECUTOR_ID, self.executors))

    @cached_property
    def total_load(self) -> float:
        return float(sum(map(EXECUTOR_LOAD, self.executors)))

    @property
    def total_capacity(self) -> float:
        return sum(n.effective_capacity for n in self.nodes if not n.draining)

    @cached_property
    def baseline(self) -> ClusterBaseline:
        """The nodes' sums and extremes before this topology (the evaluator corrects them per plan)."""
        return ClusterBaseline(self.nodes)

    @cached_property
    def _node_index(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def _component_index(self) -> dict[str, Component]:
        return {c.id: c for c in self.components}

    # -- JSON ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Problem:
        """A problem from its problem-file JSON, validated (see :mod:`storm_planner.core.codec`)."""
        problem = cls(**parse_problem(data))
        check_fits(problem)
        return problem

    @classmethod
    def from_json(cls, text: str, source: str = "problem") -> Problem:
        """A problem from problem-file text, read within the limits of :mod:`storm_planner.core.limits`;
        anything wrong is a :class:`ProblemError` naming ``source`` or the field."""
        return cls.from_dict(loads_bounded(text, source))

    def to_dict(self) -> dict[str, Any]:
        return problem_to_dict(self)

    def replace(self, **changes: Any) -> Problem:
        return dataclasses.replace(self, **changes)


__all__ = ["BOLT", "GROUPINGS", "SPOUT", "Component", "ComponentExecutors", "Executor", "Node", "Options", "Problem", "Slot",
           "Stream", "Traffic"]
