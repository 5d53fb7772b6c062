"""Problem generators: the workloads of the papers' evaluations, as problem files.

Used by the tests and the benchmarks alike (as ``networkx.generators`` or
``sklearn.datasets``); each module follows one paper's protocol.

* :mod:`.topdown` — Chatzistergiou & Viglas §7: random jobs (§7.3), the speed
  pipeline (§7.2), the prioritisation jobs (§7.1), a production-sized job;
* :mod:`.albic` — Madsen et al. §5: load fluctuation, drift, scale-in and the collocation
  workload;
* :mod:`.hetero` — Nasiri et al. §6: the Linear, Diamond and Star topologies, the
  clusters of Tables II and IV and the profile of Table III; the small random instances
  of the heterogeneity benchmarks (``random_problem``, with bases: ``add_bases``).

QEScalor's workloads (Mu et al., ICCS 2020, §3: the provisions r1..r4, synthetic operators'
performance curves, diurnal workloads and random scaling problems) are
:mod:`storm_planner.scaling.generator`.
"""
