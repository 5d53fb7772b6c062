"""The profiling run's error class."""
from __future__ import annotations

from storm_planner.core.errors import StormPlannerError


class ProfilingError(StormPlannerError, RuntimeError):
    """The profiling run cannot go on (bad arguments, cluster or topology trouble)."""
