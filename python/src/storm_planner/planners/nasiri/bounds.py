"""An upper bound on the input rate any execution graph can sustain (the fluid bound).

If a component's input could be divided over machines in any proportion —
as with unboundedly many instances and split groupings — the highest input
rate is the optimum of a linear program: choose ``x[c, m] >= 0``, the rate of
component ``c``'s input processed on machine ``m`` per unit of input rate:

    maximise IR
    subject to   Σ_m x[c, m] = IR · μ_c                 for every component c
                 Σ_c x[c, m] · cost[c, m] <= capacity_m  for every machine m

with ``μ_c`` the component's input rate per unit input rate (eq. 8; fixed when
every grouping is a split). Any placement with whole instances is a special
case, so no planner — ``hetero-optimal`` included — can beat this bound; the
gap to it bounds the gap to the true optimum on clusters too large for the
exhaustive search. Not in the paper; used by the benchmarks.

Solved with HiGHS through PuLP: C·M + 1 variables, C + M rows.
"""
from __future__ import annotations

import logging

import numpy as np
import pulp

from storm_planner.core.errors import ProblemError
from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners.nasiri.model import HeteroModel
from storm_planner.planners.nasiri.rates import propagate


def fluid_bound(model: HeteroModel) -> float:
    """The fluid upper bound on the sustainable topology input rate (tuples/s per spout)."""
    return fluid_solution(model)[0]


def fluid_solution(model: HeteroModel) -> tuple[float, np.ndarray]:
    """The LP's optimum: the rate, and each component's share of its input on each machine.

    Shares are a (C, M) array whose rows sum to 1; a component that uses no
    CPU (no input, or no cost) is not in the LP and gets a row of NaN.
    """
    if not model.has_only_split_groupings:
        raise ProblemError("the fluid bound needs split groupings only (no 'all' or 'global' streams)")
    mu = propagate(model, np.ones(model.n_components)).total
    lp = pulp.LpProblem("fluid_bound", pulp.LpMaximize)
    rate = lp.add_variable("input_rate", lowBound=0)
    share = {
        (c, m): lp.add_variable(f"x_{c}_{m}", lowBound=0)
        for c in range(model.n_components) if mu[c] > 0 and model.cost[c].max() > 0
        for m in range(model.n_machines)
    }
    lp += rate
    for c in {c for c, _ in share}:
        lp += pulp.lpSum(share[c, m] for m in range(model.n_machines)) == float(mu[c]) * rate
    for m in range(model.n_machines):
        lp += pulp.lpSum(share[c, m] * float(model.cost[c, m]) for c, mm in share if mm == m) <= float(model.capacity[m])
    with native_output_to_log(logging.getLogger(__name__), "HiGHS (fluid bound)"):
        status = lp.solve(pulp.HiGHS(msg=False))
    if pulp.LpStatus[status] != "Optimal":
        raise ProblemError(f"fluid bound: the LP ended {pulp.LpStatus[status]}")
    shares = np.full((model.n_components, model.n_machines), np.nan)
    for (c, m), variable in share.items():
        shares[c, m] = max(0.0, variable.value() or 0.0)
    totals = np.nansum(shares, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(totals > 0, shares / totals, np.nan)
    return float(rate.value()), shares
