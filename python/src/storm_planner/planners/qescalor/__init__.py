"""QEScalor (Mu et al., ICCS 2020): how many instances of an operator, with which provision, per epoch.

Unlike the placement planners beside it, these are *scalers*: ``schedule(instance) -> Schedule``,
behind :func:`storm_planner.scale` and ``storm-planner scale plan``.

* :mod:`.problem` — the JSON problem and its arrays; :mod:`.schedule` — the cost model;
* :mod:`.qcesa` — QCESA (Alg. 2) and ``qcesa-exact``; :mod:`.cba` — the CBA baseline;
  :mod:`.integer_program` — the cost model as an integer program (``scaling-ip``), the reference;
* :mod:`.performance` — OPRPMer, the random-forest performance model, and the comparison of
  Table 3; :mod:`.sampling` — OOPSer's DSA and FSSA; :mod:`.forecast` — the workload forecaster.

QEScalor's parts outside this pure layer, each in the layer it belongs to:

* :mod:`storm_planner.profiling.qescalor` — OOPSer on a real cluster (stress and live sampling) and
  the provisions enforced per instance;
* :mod:`storm_planner.adaptation.qescalor` — QECer on a running topology: the controller and
  ``storm-planner scale run``;
* :mod:`storm_planner.generators.qescalor` — the paper's provisions, synthetic operators and
  workloads, random scaling problems;
* :mod:`storm_planner_bench.qescalor` — the paper's figures and tables, in simulation and on the
  local cluster.
"""
from storm_planner.planners.qescalor.base import Scaler, register_scaler, run_scaler, scaler_class, scalers

__all__ = ["Scaler", "register_scaler", "run_scaler", "scaler_class", "scalers"]
