"""The cost model of QEScalor (:mod:`.schedule`) as an integer program, solved by HiGHS through PuLP.

Not in the paper: the reference QCESA and ``qcesa-exact`` are measured against. Variables per epoch t
and provision r: the count ``n[t,r]`` (integer, 0..cap_r of :func:`._grid.box_caps`, which loses no
optimum), startups ``u[t,r] >= n[t,r] − n[t−1,r]`` and shutdowns ``d[t,r] >= n[t−1,r] − n[t,r]``
(continuous, non-negative: at the optimum they equal the positive and negative parts). Minimise
Σ price_r·n + p_u·Σ u + p_d·Σ d subject to Σ_r perf_r·n[t,r] >= W_t.

Size: 3·T·R variables and (T + 2·T·R) rows; HiGHS solves the benchmark's instances (a day of 5-minute
epochs, four provisions) in well under a second each. With ``time_limit_s`` reached before optimality
the incumbent is returned and ``optimal`` is False.
"""
from __future__ import annotations

import logging

import numpy as np
import pulp

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners._parameters import checked, to_real
from storm_planner.scaling._grid import box_caps
from storm_planner.scaling.base import Scaler
from storm_planner.scaling.scaling_problem import ScalingInstance
from storm_planner.scaling.schedule import TOLERANCE, Schedule

_log = logging.getLogger(__name__)


class IntegerProgram(Scaler):
    """The QEScalor cost model as an integer program solved by HiGHS: the exact reference the other
    scalers are checked against (not in the paper).

    Parameters
    ----------
    time_limit_s : float, default=60.0
        Seconds HiGHS may take; past them the incumbent is returned and ``optimal`` is False.
    """

    name = "scaling-ip"
    summary = "the QEScalor cost model as an integer program (PuLP + HiGHS): the exact reference"
    baseline = True

    def __init__(self, *, time_limit_s: float = 60.0):
        self.time_limit_s = checked(self.name, "time_limit_s", time_limit_s, to_real, above=0.0)
        self.optimal = False  # set by schedule(): did HiGHS prove the schedule optimal

    def schedule(self, instance: ScalingInstance) -> Schedule:
        epochs, provisions = range(instance.n_epochs), range(instance.n_resources)
        caps = box_caps(instance)
        program = pulp.LpProblem("qescalor_cost", pulp.LpMinimize)
        variable = program.add_variable
        n = {(t, r): variable(f"n_{t}_{r}", 0, int(caps[r]), cat="Integer") for t in epochs for r in provisions}
        up = {(t, r): variable(f"u_{t}_{r}", 0) for t in epochs for r in provisions}
        down = {(t, r): variable(f"d_{t}_{r}", 0) for t in epochs for r in provisions}
        program += (pulp.lpSum(float(instance.price[r]) * n[t, r] for t in epochs for r in provisions)
                    + instance.startup_cost * pulp.lpSum(up.values())
                    + instance.shutdown_cost * pulp.lpSum(down.values()))
        for t in epochs:
            program += (pulp.lpSum(float(instance.performance[r]) * n[t, r] for r in provisions)
                        >= float(instance.workload[t]) * (1 - TOLERANCE)), f"cover_{t}"
            for r in provisions:
                before = n[t - 1, r] if t else int(instance.current[r])
                program += up[t, r] >= n[t, r] - before, f"up_{t}_{r}"
                program += down[t, r] >= before - n[t, r], f"down_{t}_{r}"
        with native_output_to_log(_log, "HiGHS"):  # its banner comes from C++, on descriptor 1
            status = program.solve(pulp.HiGHS(msg=False, timeLimit=self.time_limit_s))
        if pulp.LpStatus[status] == "Infeasible":
            raise InfeasibleError("scaling-ip: no schedule covers the workload")
        counts = np.array([[round(n[t, r].value() or 0) for r in provisions] for t in epochs], dtype=int)
        self.optimal = pulp.LpStatus[status] == "Optimal"
        return Schedule(counts.reshape(instance.n_epochs, instance.n_resources))
