"""Capacity planning: place a topology's executors for the highest rate it can sustain.

The kit's own planner, not one of the five papers'; the recommended one (registered also as ``auto``).
Its objective is the one Nasiri et al. (*A Scheduling Algorithm to Maximize Storm Throughput in
Heterogeneous Cluster*) state, the maximum input rate, reached here by placement on measured costs
rather than by a profile made beforehand, and with links as well as CPU:

* :mod:`.model` — every executor's CPU and every stream's bytes as linear functions of the offered
  rate (per-tuple costs plus fixed costs per executor and per worker JVM), and the factor of the
  reference rate a placement sustains: the least headroom over every node's CPU and link;
* :mod:`.bound` — λ*, the LP relaxation's bound on what any placement could sustain;
* :mod:`.exact` — the best placement exactly (a feasibility MILP per factor, bisected, HiGHS), where
  the model is small enough;
* :mod:`.search` — greedy and local search beyond that size, incremental, nothing quadratic;
* :mod:`.advice` — more executors where a component's executor count binds (up to its tasks);
* :mod:`.planner` — ``capacity`` and ``auto``.

How the costs are measured and remembered, and how ``auto`` calibrates a topology it has no costs for,
is in ``docs/capacity.md``.
"""
