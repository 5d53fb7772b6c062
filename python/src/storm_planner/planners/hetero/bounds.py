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

**With bases** (issue #18: ``base[c, m]``, the CPU one instance uses at zero
input). In shares ``s[c, m]`` (``Σ_m s = 1``) a placement with ``n_c``
instances has ``k[c, m] = s[c, m] · n_c >= s[c, m] · lower_c`` instances of
``c`` on ``m`` (``lower_c`` the fewest instances ``c`` may have, 1 for a new
topology), so it pays at least ``s[c, m] · lower_c · base[c, m]`` there. The
relaxation — *base-fluid bound* — is

    maximise IR   subject to   Σ_c s[c, m] · (lower_c · base[c, m] + IR · μ_c · cost[c, m]) <= capacity_m

— still an upper bound on every placement, but no longer linear: with
``N_m(s) = Σ_c s·μ·cost`` and ``D_m(s) = capacity_m − Σ_c s·lower·base`` it is
``min_s max_m N_m(s) / D_m(s)`` (= 1 / IR), a generalized fractional program,
solved exactly by Dinkelbach-type iterations (Crouzeix, Ferland & Schaible,
1985): for ``t_k``, one LP ``F(t_k) = min_s max_m (N_m(s) − t_k · D_m(s))``
gives ``s_k``, then ``t_{k+1} = max_m N_m(s_k) / D_m(s_k)``; ``t_k`` falls to
the optimum, where ``F = 0``. It charges a component spread thinly over many
machines only a fraction of one base per machine where a real placement pays
a whole one, so it is looser than the base-free bound is on base-free
problems: the benchmarks report the gap to the exhaustive optimum wherever it
runs. Without bases the first LP is the one above, unchanged.

Solved with HiGHS through PuLP: C·M + 1 variables, C + M rows, one LP per
iteration (2–6 iterations on the benchmarks' instances).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pulp

from storm_planner.core.errors import ProblemError
from storm_planner.core.quiet import native_output_to_log
from storm_planner.planners.hetero.model import HeteroModel
from storm_planner.planners.hetero.rates import propagate

MAX_ITERATIONS = 50
TOLERANCE = 1e-9


def fluid_bound(model: HeteroModel, lower: Sequence[int] | None = None) -> float:
    """The fluid upper bound on the sustainable topology input rate (tuples/s per spout)."""
    return fluid_solution(model, lower)[0]


def fluid_solution(model: HeteroModel, lower: Sequence[int] | None = None) -> tuple[float, np.ndarray]:
    """The LP's optimum: the rate, and each component's share of its input on each machine.

    Shares are a (C, M) array whose rows sum to 1; a component that uses no
    CPU (no input or no cost, and no base) is not in the LP and gets a row of
    NaN. ``lower``: the fewest instances of each component (default 1 each),
    which only matters with bases.
    """
    if not model.has_only_split_groupings:
        raise ProblemError("the fluid bound needs split groupings only (no 'all' or 'global' streams)")
    mu = propagate(model, np.ones(model.n_components)).total
    lower_counts = np.ones(model.n_components) if lower is None else np.maximum(1, np.asarray(lower, float))
    work = mu[:, None] * model.cost                       # N: CPU per unit rate and share
    fixed = lower_counts[:, None] * model.base            # D: CPU at zero input per share
    members = [c for c in range(model.n_components)
               if (mu[c] > 0 and model.cost[c].max() > 0) or model.base[c].max() > 0]
    if not model.has_base:
        members = [c for c in members if mu[c] > 0 and model.cost[c].max() > 0]
        rate, shares = _base_free(model, mu, members)
    else:
        rate, shares = _with_bases(model, work, fixed, members)
    result = np.full((model.n_components, model.n_machines), np.nan)
    for c in members:
        row = np.maximum(shares[c], 0.0)
        total = row.sum()
        result[c] = row / total if total > 0 else np.nan
    return rate, result


def _base_free(model: HeteroModel, mu: np.ndarray, members: list[int]) -> tuple[float, dict[int, np.ndarray]]:
    """The linear program of the module docstring (the paper's eq. 7: no bases)."""
    lp = pulp.LpProblem("fluid_bound", pulp.LpMaximize)
    rate = lp.add_variable("input_rate", lowBound=0)
    share = {(c, m): lp.add_variable(f"x_{c}_{m}", lowBound=0) for c in members for m in range(model.n_machines)}
    lp += rate
    for c in members:
        lp += pulp.lpSum(share[c, m] for m in range(model.n_machines)) == float(mu[c]) * rate
    for m in range(model.n_machines):
        lp += pulp.lpSum(share[c, m] * float(model.cost[c, m]) for c in members) <= float(model.capacity[m])
    _solve(lp, "fluid bound")
    return float(rate.value()), {c: np.array([share[c, m].value() or 0.0 for m in range(model.n_machines)])
                                 for c in members}


def _with_bases(model: HeteroModel, work: np.ndarray, fixed: np.ndarray,
                members: list[int]) -> tuple[float, dict[int, np.ndarray]]:
    """``min_s max_m N_m(s) / D_m(s)`` by Dinkelbach-type iterations (module docstring)."""
    machines = range(model.n_machines)
    t = None
    shares: dict[int, np.ndarray] = {}
    for _ in range(MAX_ITERATIONS):
        lp = pulp.LpProblem("fluid_bound_bases", pulp.LpMinimize)
        z = lp.add_variable("z")
        s = {(c, m): lp.add_variable(f"s_{c}_{m}", lowBound=0) for c in members for m in machines}
        lp += z
        for c in members:
            lp += pulp.lpSum(s[c, m] for m in machines) == 1
        for m in machines:
            numerator = pulp.lpSum(s[c, m] * float(work[c, m]) for c in members)
            used = pulp.lpSum(s[c, m] * float(fixed[c, m]) for c in members)
            lp += used <= float(model.capacity[m])         # the fixed parts alone must fit
            if t is None:   # first: the least peak utilisation, bases included (a good start)
                lp += numerator + used <= z * float(model.capacity[m])
            else:
                lp += numerator - t * (float(model.capacity[m]) - used) <= z
        status = _solve(lp, "fluid bound with bases", strict=False)
        if status != "Optimal":
            if t is None:
                return 0.0, {c: np.full(model.n_machines, np.nan) for c in members}  # bases alone do not fit
            break
        shares = {c: np.array([max(0.0, s[c, m].value() or 0.0) for m in machines]) for c in members}
        if t is not None and (z.value() or 0.0) >= -TOLERANCE * float(model.capacity.max()):
            break
        ratio = _peak_ratio(model, work, fixed, shares, members)
        if t is not None and ratio >= t * (1 - TOLERANCE):
            break
        t = ratio
    if t is None or t <= 0:
        raise ProblemError("fluid bound: nothing consumes CPU per tuple (no spout or no profiled cost)")
    return 1.0 / t, shares


def _peak_ratio(model: HeteroModel, work: np.ndarray, fixed: np.ndarray,
                shares: dict[int, np.ndarray], members: list[int]) -> float:
    numerator = sum((shares[c] * work[c] for c in members), np.zeros(model.n_machines))
    room = model.capacity - sum((shares[c] * fixed[c] for c in members), np.zeros(model.n_machines))
    loaded = numerator > 0
    if not loaded.any():
        return 0.0
    with np.errstate(divide="ignore"):
        return float(np.where(room[loaded] > 0, numerator[loaded] / np.maximum(room[loaded], 1e-300), np.inf).max())


def _solve(lp: pulp.LpProblem, what: str, strict: bool = True) -> str:
    with native_output_to_log(logging.getLogger(__name__), f"HiGHS ({what})"):
        status: str = pulp.LpStatus[lp.solve(pulp.HiGHS(msg=False))]
    if strict and status != "Optimal":
        raise ProblemError(f"{what}: the LP ended {status}")
    return status


def machine_base_bound(model: HeteroModel, seconds: float = 20.0) -> float:
    """A tighter upper bound with bases: every machine a component uses costs it a whole base.

    Not in the paper (issue #18). The base-fluid bound charges a component spread
    over many machines a fraction of one base; a real placement pays at least one
    base on every machine holding an instance of it. This mixed-integer
    relaxation keeps that and relaxes only the equal shares of split groupings:

        maximise R  subject to  Σ_m x[c, m] = R                      (every component's input)
                                x[c, m] <= U · y[c, m],  Σ_m y[c, m] >= 1,  y binary
                                Σ_c (μ_c · cost[c, m] · x[c, m] + base[c, m] · y[c, m]) <= capacity_m

    with ``U`` the base-free fluid bound (bases only lower the rate). Any placement
    (``y`` = the machines it uses, ``x = R · k / n``) is feasible in it, so its
    optimum — and, when HiGHS stops at the time limit, its dual bound — bounds
    every placement's sustainable rate. C·M binaries; HiGHS proves small clusters
    in well under a second, Table IV's large one (180 machines) within the limit or
    returns its best bound.
    """
    if not model.has_only_split_groupings:
        raise ProblemError("the base bound needs split groupings only (no 'all' or 'global' streams)")
    mu = propagate(model, np.ones(model.n_components)).total
    working = [c for c in range(model.n_components) if mu[c] > 0 and model.cost[c].max() > 0]
    ceiling = _base_free(model, mu, working)[0]
    machines = range(model.n_machines)
    lp = pulp.LpProblem("machine_base_bound", pulp.LpMaximize)
    rate = lp.add_variable("input_rate", lowBound=0, upBound=ceiling)
    x = {(c, m): lp.add_variable(f"x_{c}_{m}", lowBound=0) for c in working for m in machines}
    y = {(c, m): lp.add_variable(f"y_{c}_{m}", cat="Binary") for c in range(model.n_components) for m in machines}
    lp += rate
    for c in range(model.n_components):
        lp += pulp.lpSum(y[c, m] for m in machines) >= 1
    for c in working:
        lp += pulp.lpSum(x[c, m] for m in machines) == rate
        for m in machines:
            lp += x[c, m] <= ceiling * y[c, m]
    for m in machines:
        lp += (pulp.lpSum(float(mu[c] * model.cost[c, m]) * x[c, m] for c in working)
               + pulp.lpSum(float(model.base[c, m]) * y[c, m] for c in range(model.n_components))
               <= float(model.capacity[m]))
    with native_output_to_log(logging.getLogger(__name__), "HiGHS (machine base bound)"):
        lp.solve(pulp.HiGHS(msg=False, timeLimit=seconds, gapRel=1e-6))
    # PuLP hands HiGHS the negated objective of a maximisation: its dual bound comes back negated.
    bound = abs(lp.solverModel.getInfo().mip_dual_bound)
    if not np.isfinite(bound):
        raise ProblemError(f"machine base bound: HiGHS found no bound within {seconds:g} s")
    return float(min(bound, ceiling))
