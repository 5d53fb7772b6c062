"""``gma-repair``: ``gma``, then an exact step whenever its plan breaks D_CPU or D_BW.

Beyond the paper (*Elastic Allocator*, SOSE 2014): Algorithm 1 deals the operators no node takes
within the limits "evenly on the light sub-cluster" without checking them, so a greedy order
can end over a limit although a placement within both limits exists. ``gma-repair``:

1. runs ``gma`` (:func:`~storm_planner.planners.gma.greedy.greedy_matching`, same parameters);
   if its plan is within D_CPU and D_BW on every node, that plan is the answer (so on easy
   clusters it balances exactly as ``gma`` does);
2. otherwise solves the placement exactly (:func:`~storm_planner.planners.gma._exact.exact_placement`,
   a MILP with HiGHS: every node within both limits, the busiest CPU and link as low as
   possible) in the time left of ``time_limit_s``. Any plan it returns is within the limits;
   when HiGHS proves that none exists, or finds none in time, ``gma``'s plan is kept and the
   plan's notes say which.

So whenever a placement within the limits exists and the solver has time to find it,
``gma-repair`` returns one (``tests/planners/gma`` checks this against exhaustive search on
small instances).

Parameters: those of ``gma`` (``light``, ``heavy``, ``bandwidth_weight``, ``time_limit_s``:
the whole call's budget, gma's greedy pass included).

Complexity: step 1 as ``gma``; step 2 NP-hard (bin packing), bounded by the time limit, on a
model of O(classes·N + streams·N·log n) columns (no executor pairs; see :mod:`._exact`).
"""
from __future__ import annotations

import time
from types import MappingProxyType

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.core.utilisation import resource_figures
from storm_planner.planners.base import Planner
from storm_planner.planners.gma._exact import exact_placement
from storm_planner.planners.gma.greedy import DEFAULT_HEAVY, DEFAULT_LIGHT, greedy_matching, level_parameters


def violations(problem: Problem, node_of: dict[str, str]) -> int:
    loads: dict[str, float] = {}
    for executor in problem.executors:
        node = node_of[executor.id]
        loads[node] = loads.get(node, 0.0) + executor.load
    return int(resource_figures(problem, node_of, loads)["constraint_violations"])


class GmaRepairPlanner(Planner):
    """``gma``, then an exact placement (a MILP solved by HiGHS) whenever its plan breaks D_CPU or
    D_BW, so the plan keeps both limits whenever a placement within them exists.

    Parameters
    ----------
    light : float, default=40.0
        Use, in percent of the busier of a node's CPU and link, below which the node is light.
    heavy : float, default=80.0
        Use at or above which a node is heavy (must exceed ``light``); between the two it is moderate.
    bandwidth_weight : float, default=1.0
        Weight of the bandwidth deviation next to the CPU deviation in the objective.
    time_limit_s : float or None, default=None
        Seconds for the greedy pass and the exact step together; None takes the problem's
        ``options.time_limit_s``.
    """

    name = "gma-repair"
    summary = "gma, then an exact MILP step (HiGHS) whenever gma breaks D_CPU or D_BW: within the limits when possible"
    isolated = True  # a solver planner: the service runs it in the worker process it can kill at the deadline

    def __init__(self, *, light: float = DEFAULT_LIGHT, heavy: float = DEFAULT_HEAVY,
                 bandwidth_weight: float = 1.0, time_limit_s: float | None = None) -> None:
        self.light, self.heavy, self.bandwidth_weight, self.time_limit_s = level_parameters(
            self.name, light, heavy, bandwidth_weight, time_limit_s)

    def plan(self, problem: Problem) -> Plan:
        limit = problem.options.time_limit_s if self.time_limit_s is None else self.time_limit_s
        started = time.monotonic()
        state, notes = greedy_matching(problem, self.light, self.heavy, self.bandwidth_weight, limit)
        node_of = state.node_ids()
        broken = violations(problem, node_of)
        repaired = 0.0
        if not broken:
            notes.append("gma's plan is within D_CPU and D_BW: kept")
        else:
            left = max(0.05, limit - (time.monotonic() - started))
            result = exact_placement(state, left, problem.options.seed)
            if result.node_of is not None:
                notes.append(f"gma's plan broke the limits on {broken} node(s); the exact step "
                             f"({result.status}) placed every executor within them")
                node_of, repaired = result.node_of, 1.0
            elif result.status == "infeasible":
                notes.append(f"no placement within D_CPU and D_BW exists (the exact step proved it): "
                             f"gma's plan kept ({broken} node(s) over)")
            else:
                notes.append(f"the exact step found no placement within the limits in {left:.2f} s: "
                             f"gma's plan kept ({broken} node(s) over)")
        return Plan(algorithm=self.name, assignments=slots_for_nodes(problem, node_of), notes=tuple(notes),
                    figures=MappingProxyType({"repaired": repaired}))
