"""The local cluster's one error class."""
from __future__ import annotations

from storm_planner.core.errors import StormPlannerError


class ClusterError(StormPlannerError, RuntimeError):
    """The cluster could not be started, reached or stopped; the message says why."""
