"""QEScalor: how many instances of an operator, with which provision, per epoch.

Paper: W. Mu, Z. Jin, W. Zhu, F. Liu, Z. Li, Z. Zhu, W. Wang, *QEScalor: Quantitative Elastic
Scaling Framework in Distributed Streaming Processing*, ICCS 2020. Implemented: OOPSer's sampling
(§2.2, Alg. 1 and §3.3), OPRPMer's performance model (§2.3, §3.4, Table 3), QECer's cost model,
QCESA and the controller (§2.4, Alg. 2), and the workloads of the evaluation (§3).

Unlike the placement planners (:mod:`storm_planner.planners`), these are *scalers*:
``schedule(instance) -> Schedule``, behind :func:`storm_planner.scale` and ``storm-planner scale plan``.
:mod:`.scaler_registry` lists every scaler; importing this package enters them into the look-up
table of :mod:`.base`, so :func:`scalers` and :func:`run_scaler` find them by name.

The pure part (no I/O; import-linter keeps it from cluster, service and CLI code):

* :mod:`.scaling_problem` — the JSON problem and its arrays; :mod:`.schedule` — the cost model;
* :mod:`.base` — the scaler interface and :func:`run_scaler`; :mod:`.scaler_registry` — every
  scaler, by name;
* :mod:`.qcesa` — QCESA (Alg. 2) and ``qcesa-exact``; :mod:`.cba` — the CBA baseline;
  :mod:`.integer_program` — the cost model as an integer program (``scaling-ip``), the reference;
* :mod:`.performance` — OPRPMer, the random-forest performance model, and the comparison of
  Table 3; :mod:`.sampling` — OOPSer's DSA and FSSA; :mod:`.forecast` — the workload forecaster;
* :mod:`.controller` — QECer's decision for one epoch from measured rates
  (:class:`ScalingController`);
* :mod:`.generator` — the paper's provisions, synthetic operators and workloads, random scaling
  problems.

On a real cluster, :mod:`.live`: OOPSer's stress and live sampling (``storm-planner scale sample``),
the provisions enforced per instance, and the controller run on a running topology
(``storm-planner scale run``). The paper's figures and tables are benchmarks
(``storm-planner bench qescalor``).
"""
from storm_planner.scaling import scaler_registry  # noqa: F401  (enters the listed scalers)
from storm_planner.scaling.base import Scaler, register_scaler, run_scaler, scaler_class, scalers
from storm_planner.scaling.controller import ScalingController

__all__ = ["Scaler", "ScalingController", "register_scaler", "run_scaler", "scaler_class", "scalers"]
