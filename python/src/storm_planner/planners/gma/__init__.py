"""*Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the Cloud* (SOSE 2014):
placement by CPU *and* bandwidth on a cluster where other work already runs.

* :mod:`.greedy` — ``gma``: the Greedy Matching Algorithm (Algorithm 1) as published;
* :mod:`.repair` — ``gma-repair``: ``gma``, then an exact step (a MILP solved by HiGHS) whenever
  ``gma`` breaks D_CPU or D_BW, so it never violates a limit when a placement within them exists.

The paper's Random baseline is ``random`` in :mod:`storm_planner.planners.baselines`.

The resource model both planners use is :mod:`storm_planner.core.utilisation` (the shared
evaluator's), kept incrementally by :mod:`._model`.
"""
