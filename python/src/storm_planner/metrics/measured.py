"""What the metrics tell the planner service about one topology: the typed answer of a metrics source.

:class:`MeasuredTopology` travels from :mod:`storm_planner.metrics.source` to the service's conversion of
a request (:func:`storm_planner.service.planning.convert.problem_from_thrift`) as it is: no dict, no keys to spell.
An answer without executors means "plan on estimates"; its notes say why. :func:`measured_now` asks a metrics
source (:data:`MetricsSource`) for it.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, cast

from storm_planner.core.problem import Executor, Traffic

if TYPE_CHECKING:
    from storm_planner.metrics.loads_and_traffic import Measurement

_EMPTY: Mapping = MappingProxyType({})


@dataclass(frozen=True)
class MeasuredTopology:
    """One topology's measured figures.

    * ``executors``: every executor with its measured load (empty: nothing usable, plan on estimates);
    * ``traffic``: executor-pair rates;
    * ``tuple_bytes``: per component pair, the bytes one tuple costs on the wire;
    * ``node_bandwidth``: per node, Mbit/s already used on its link besides this topology's own flows;
    * ``notes``: for the plan (why nothing was measured, what was skipped);
    * ``measurement``: the figures these were made from (for reports).
    """

    executors: tuple[Executor, ...] = ()
    traffic: tuple[Traffic, ...] = ()
    tuple_bytes: Mapping[tuple[str, str], float] = field(default_factory=lambda: _EMPTY)
    node_bandwidth: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    notes: tuple[str, ...] = ()
    measurement: Measurement | None = None

    @property
    def measured(self) -> bool:
        """Whether the loads replace the estimates."""
        return bool(self.executors)

    @property
    def windowed(self) -> frozenset[str] | None:
        """Ids of the executors with a window of their own (the others' loads are filled in from their
        component's or the topology's); None when the figures they were made from are not kept: every one."""
        if self.measurement is None:
            return None
        return frozenset(e for e, figures in self.measurement.executors.items() if figures.measured)

    @classmethod
    def estimates(cls, *notes: str) -> MeasuredTopology:
        """Nothing usable measured: the service plans on estimates, and the notes say why."""
        return cls(notes=tuple(notes))


class Measures(Protocol):
    def measure(self, spec: Any, nodes: list[Any]) -> MeasuredTopology | None: ...


# Metrics source: an object whose measure(spec, nodes) answers (storm_planner.metrics.source), or a
# function of the topology id.
MetricsSource = Measures | Callable[[str], "MeasuredTopology | None"]


def measured_now(metrics: MetricsSource | None, spec: Any, nodes: list[Any]) -> MeasuredTopology | None:
    """What ``metrics`` measured of the topology now (None: no metrics source)."""
    if metrics is None:
        return None
    measure = getattr(metrics, "measure", None)
    if measure is not None:
        measured: MeasuredTopology | None = measure(spec, nodes)
        return measured
    by_id = cast(Callable[[str], "MeasuredTopology | None"], metrics)  # no measure(): the function form
    return by_id(spec.id)
