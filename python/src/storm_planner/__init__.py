"""storm-planner: placement planning for Apache Storm.

The planner core (:mod:`storm_planner.core`), the planners
(:mod:`storm_planner.planners`), the Thrift service the Nimbus plugin calls
(:mod:`storm_planner.service`) and the tools around a real cluster.
"""
from storm_planner.api import algorithms, plan, scale, scaling_algorithms
from storm_planner.core.errors import StormPlannerError

__version__ = "0.1.0"
__all__ = ["StormPlannerError", "algorithms", "plan", "scale", "scaling_algorithms", "__version__"]
