"""The papers' benchmarks in simulation (no cluster): :mod:`.topdown` (Chatzistergiou & Viglas),
:mod:`.albic` (Madsen et al.), :mod:`.hetero` and :mod:`.hetero_bases` (Nasiri et al.), and :mod:`.scale`
(the planner service on production-sized topologies)."""
