"""gma: Elastic Allocator's placement by CPU *and* bandwidth on a cluster where other work already runs.

Paper: Z. Han, R. Chu, H. Mi, H. Wang, *Elastic Allocator: An Adaptive Task Scheduler for
Streaming Query in the Cloud*, SOSE 2014. Implemented: the problem (§III.B), the load
capacity, bandwidth and constraint model (§IV.A–C, in :mod:`storm_planner.core.utilisation`),
the node levels and the Greedy Matching Algorithm (§IV.D–E, Algorithm 1) and the Random
baseline of the evaluation (§V, in :mod:`storm_planner.planners.baselines`).

* :mod:`.greedy` — ``gma``: the Greedy Matching Algorithm (Algorithm 1) as published;
* :mod:`.repair` — ``gma-repair``: ``gma``, then an exact step (a MILP solved by HiGHS) whenever
  ``gma`` breaks D_CPU or D_BW, so it never violates a limit when a placement within them exists.

The paper's Random baseline is ``random`` in :mod:`storm_planner.planners.baselines`.

The resource model both planners use is :mod:`storm_planner.core.utilisation` (the shared
evaluator's), kept incrementally by :mod:`._model`.
"""
