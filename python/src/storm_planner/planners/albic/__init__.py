"""ALBIC and the load-balancing MILP, and the baselines they are compared with.

Paper: K. G. S. Madsen, Y. Zhou, J. Cao, *Integrative Dynamic Reconfiguration in a Parallel
Stream Processing Engine*. Implemented: the MILP with integrated scale-in (§4.3.1), ALBIC
(§4.3.2), the baselines of §2 and §5 (Flux, COLA) and the start of the real-data experiment
(§5.4); Algorithm 1 (§4.2), the rounds around them, is :mod:`storm_planner.adaptation.round`.

* :mod:`.milp` — ``milp``: the load-balancing MILP with integrated scale-in (§4.3.1);
* :mod:`.albic` — ``albic``: ALBIC's collocation rounds on top of the MILP (§4.3.2);
* :mod:`.flux` — ``flux``: Flux's pairwise load shedding (Shah et al., ICDE 2003), the
  baseline of §2.2 and §5;
* :mod:`.cola` — ``cola``: COLA's recursive balanced partitioning (Khandekar et al.,
  Middleware 2009), the baseline of §2.1 and §5;
* :mod:`.spread` — ``spread``: the little-collocation start of the real-data experiment (§5.4);
* private: :mod:`._milp_model` (the MILP over units of executors), :mod:`._units` (its
  units and start placement), :mod:`._mip` (the mixed-integer program as arrays, solved by CBC or HiGHS), :mod:`._descent` (a primal
  heuristic giving the MILP an incumbent), :mod:`._partition` (balanced graph partitioning
  with METIS, for ALBIC and COLA).

The workloads of §5 are in :mod:`storm_planner.generators.albic`; re-planning across rounds
(Algorithm 1) in :mod:`storm_planner.adaptation`.
"""
