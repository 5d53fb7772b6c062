"""Runtime metrics: what the worker-side task hook publishes to ZooKeeper, and what the
planner service makes of it.

* :mod:`.windows`  the znode layout and the versioned window documents (parse, validate);
* :mod:`.store`    :class:`MetricsStore`: reads and watches the znodes with kazoo, keeps
  the last windows per task, removes the metrics of killed topologies;
* :mod:`.loads_and_traffic`   windows -> executor loads (CPU percent x node speed),
  executor-pair and component-pair traffic, state sizes, with notes on what was missing, stale
  or corrupt;
* :mod:`.source`   the service's metrics source: fills ``Problem.executors``/``traffic``;
* :mod:`.hookjar`  the hook's jar and the topology conf that switches it on;
* :mod:`.commands` ``storm-planner metrics <topology> [--json]``.

When a running topology is re-planned (within its migration budget) is adaptation policy:
:mod:`storm_planner.adaptation.replan` and :mod:`storm_planner.adaptation.budget`.

The layout and every setting are described in ``docs/metrics.md``.
"""
from storm_planner.metrics.windows import DEFAULT_ROOT, CorruptWindow, TaskWindow, parse_window

__all__ = ["DEFAULT_ROOT", "CorruptWindow", "TaskWindow", "parse_window"]
