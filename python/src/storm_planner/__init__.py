"""storm-planner: placement planning for Apache Storm.

The planner core (:mod:`storm_planner.core`), the planners
(:mod:`storm_planner.planners`), QEScalor's scaling (:mod:`storm_planner.scaling`),
the Thrift service the Nimbus plugin calls (:mod:`storm_planner.service`) and the
tools around a real cluster.

The planners come in one family package per algorithm, all listed in
:mod:`storm_planner.planners.registry`: ``baselines`` (Storm's own schedulers
and a random placement), ``topdown`` (Chatzistergiou & Viglas: taskLevel,
topDown), ``albic`` (Madsen et al.: the load-balancing MILP, ALBIC, Flux, COLA),
``hetero`` (Nasiri et al.: heterogeneity-aware throughput) and ``gma`` (Elastic
Allocator). QEScalor's scalers, their models, controller and generator are one
package, :mod:`storm_planner.scaling`, its parts on a real cluster in
:mod:`storm_planner.scaling.live`. docs/design.md describes the layers and the data flow.
"""
from storm_planner.api import algorithms, plan, scale, scaling_algorithms
from storm_planner.core.errors import StormPlannerError

__version__ = "0.1.0"
__all__ = ["StormPlannerError", "algorithms", "plan", "scale", "scaling_algorithms", "__version__"]
