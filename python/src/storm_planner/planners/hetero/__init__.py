"""hetero: the heterogeneity-aware CPU model and the planners that maximise throughput with it.

Paper: H. Nasiri, S. Nasehi, A. Divband, M. Goudarzi, *A Scheduling Algorithm to Maximize Storm
Throughput in Heterogeneous Cluster*. Implemented: the profiles and the CPU model (§5.2,
eq. 7–8), FirstAssignment and MaximizeThroughput (§5.3–5.4, Alg. 1–2), the optimal scheduler
(§3, §6.2) and the simulator of the evaluation (§6.3, eq. 9–10).

The model:

* :mod:`.profiles` — the profile format (ET, MET, base per component and machine type),
  loading and validation;
* :mod:`.model` — eq. 7 (TCU = IR · (ET + MET)) over a problem;
* :mod:`.rates` — eq. 8, the input rate of every task;
* :mod:`.simulate` — per-machine utilisation, throughput, eq. 9–10;
* :mod:`.bounds` — the fluid upper bound on the input rate;
* :mod:`.plans` — between placements and plans;
* ``examples/`` — profile files: Table III of the paper, a word count.

The planners:

* :mod:`.hetero` — ``hetero``: FirstAssignment (Alg. 1) and MaximizeThroughput (Alg. 2),
  with the re-placement descent of :mod:`._hetero_descent`;
* :mod:`.hetero_optimal` — ``hetero-optimal``: the exhaustive optimum for small problems.

Their baseline ``storm-default`` is in :mod:`storm_planner.planners.baselines`; the paper's
topologies, clusters and profile in :mod:`storm_planner.generators.hetero`; measuring profiles
on a real cluster in :mod:`storm_planner.profiling`.
"""
