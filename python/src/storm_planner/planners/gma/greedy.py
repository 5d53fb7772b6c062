"""``gma``: Elastic Allocator's Greedy Matching Algorithm (Algorithm 1).

*Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the Cloud*
(SOSE 2014), §IV.D–E. A Storm operator instance is an
executor; a node is a supervisor. The resource model (node load with other work's CPU,
each node's link use after placement with other work's traffic, D_CPU and D_BW, R_utl and
R_dev) is :mod:`storm_planner.core.utilisation`, kept incrementally by
:class:`~storm_planner.planners.gma._model.GmaState`.

Algorithm 1 as the paper states it::

    C0, B0 ← F0                                   (other work's CPU and bandwidth: ``used``)
    while t ≤ t_max:
        for i = 1..m:                             (operators, topology order)
            cluster nodes into 3 levels by CPU and bandwidth use
            for j = 1..n:
                if o_i satisfies the resource constraints on n_j:
                    try o_i on n_j, compute the objective
                    if a_ij improves the objective: assign o_i to n_j; n_allc++
    if n_allc < m: allocate the remaining operators evenly on the light sub-cluster

Reconstructions (the paper is vague or its symbols were lost):

* **Levels** (§IV.D): light below 40 %, moderate 40–80 %, heavy 80 % or above (``light``,
  ``heavy`` parameters), of the *busier* of a node's CPU and link (a node is as heavy as its
  scarcest resource). Levels are recomputed before every operator (line 4 sits in the loop).
* **Scanning nodes** (lines 5–10): the levels are scanned light, then moderate, then heavy;
  the first level holding a node that satisfies D_CPU and D_BW is searched whole, and the
  operator goes to the node of that level with the best objective ("improves the objective"
  read as best improvement over the level, since every operator must be placed). The levels
  are what make the search cheap, as the paper motivates them.
* **Objective**: the paper offers R_utl or R_dev. R_utl of CPU does not depend on where a
  fixed workload is placed (only overload lowers it), so the greedy step minimises the
  deviation: R_dev(CPU) + ``bandwidth_weight`` × R_dev(bandwidth), both in percent points.
* **Leftovers** (lines 11–13): an operator no node can take within the constraints, and every
  operator still unplaced when ``t_max`` runs out, is dealt round-robin over the light nodes
  (least used first; moderate ones if none is light, then any) *without* checking the
  constraints — the paper's "best-effort manner". This is where the literal algorithm can
  violate a limit although a feasible placement exists (greedy order); ``gma-repair`` fixes it.
* **t_max** is ``time_limit_s`` (default: the problem's ``options.time_limit_s``).
* Initial allocation only: current placements are not kept (no migration budget), slots are
  one per used node (:func:`~storm_planner.core.slots.slots_for_nodes`).

Parameters: ``light``, ``heavy`` (level thresholds in %), ``bandwidth_weight`` (weight of the
bandwidth deviation in the objective), ``time_limit_s`` (t_max).

Complexity: O(m · (F + 1) · n) for m executors, n nodes and F streams touching an executor's
component (per executor: its peers' traffic per node from component counts, then O(1) per
candidate node from sums of the deviation; all per-node steps numpy vector operations), plus
O(measured pairs). Never executor pairs. Measured on the shared development machine: 5,000
executors on 300 nodes in 0.9 s, 20,000 on 1,000 nodes in 13 s (a five-stage fields pipeline).
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from types import MappingProxyType

import numpy as np

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Executor, Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners._parameters import checked, to_real
from storm_planner.planners.base import Planner
from storm_planner.planners.gma._model import HEAVY, LEVEL_NAMES, LIGHT, MODERATE, GmaState

DEFAULT_LIGHT, DEFAULT_HEAVY = 40.0, 80.0


def greedy_matching(problem: Problem, light: float = DEFAULT_LIGHT, heavy: float = DEFAULT_HEAVY,
                    bandwidth_weight: float = 1.0, time_limit_s: float | None = None,
                    order: Iterable[Executor] | None = None) -> tuple[GmaState, list[str]]:
    """Algorithm 1 on ``problem``; returns the final state and notes.

    ``order``: the executors in the order they are matched (default: the problem's, i = 1..m).
    """
    state = GmaState(problem, bandwidth_weight)
    limit = problem.options.time_limit_s if time_limit_s is None else time_limit_s
    deadline = time.monotonic() + limit
    executors = list(problem.executors if order is None else order)
    leftovers, timed_out = [], False
    for position, executor in enumerate(executors):
        if time.monotonic() > deadline:
            leftovers.extend(executors[position:])
            timed_out = True
            break
        levels = state.levels(light, heavy)
        peers = state.peer_traffic(executor)
        chosen = None
        for level in (LIGHT, MODERATE, HEAVY):
            nodes = np.flatnonzero(levels == level)
            if len(nodes):
                values, ok = state.candidates(executor, peers, nodes)
                if ok.any():
                    # The best node of the level; ties: the first in the problem's order.
                    chosen = int(nodes[ok][np.argmin(values[ok])])
                    break
        if chosen is None:
            leftovers.append(executor)
        else:
            state.place(executor, chosen, peers)
    notes = []
    if leftovers:
        placed_on = _spread_evenly(state, leftovers, light, heavy)
        notes.append(f"{len(leftovers)} executor(s) fit no node within the limits"
                     f"{' before t_max' if timed_out else ''}: dealt evenly over the {placed_on} sub-cluster "
                     f"without checking the limits (Algorithm 1, lines 11-13)")
    if timed_out:
        notes.append(f"t_max ({limit:g} s) reached after {len(executors) - len(leftovers)} executor(s)")
    return state, notes


def _spread_evenly(state: GmaState, leftovers: Sequence[Executor], light: float, heavy: float) -> str:
    """Round-robin over the lightest level that has nodes, least used node first."""
    levels = state.levels(light, heavy)
    level = min(int(levels.min()), HEAVY)
    busy = np.maximum(state.cpu_shares(), state.bw_shares())
    nodes = sorted(np.flatnonzero(levels == level).tolist(), key=lambda k: (busy[k], k))
    for i, executor in enumerate(leftovers):
        state.place(executor, nodes[i % len(nodes)])
    return LEVEL_NAMES[level]


def level_parameters(planner: str, light: float, heavy: float, bandwidth_weight: float,
                     time_limit_s: float | None) -> tuple[float, float, float, float | None]:
    """The parameters gma and gma-repair share, checked: (light, heavy, bandwidth_weight, time_limit_s)."""
    light = checked(planner, "light", light, to_real, minimum=0)
    heavy = checked(planner, "heavy", heavy, to_real, above=light)
    bandwidth_weight = checked(planner, "bandwidth_weight", bandwidth_weight, to_real, minimum=0)
    time_limit_s = checked(planner, "time_limit_s", time_limit_s, to_real, above=0, optional=True)
    return light, heavy, bandwidth_weight, time_limit_s


class GmaPlanner(Planner):
    """Elastic Allocator's Greedy Matching Algorithm (Algorithm 1) as published: each executor to the
    best node of the lightest level that keeps D_CPU and D_BW, the rest dealt over the light nodes.

    Parameters
    ----------
    light : float, default=40.0
        Use, in percent of the busier of a node's CPU and link, below which the node is light.
    heavy : float, default=80.0
        Use at or above which a node is heavy (must exceed ``light``); between the two it is moderate.
    bandwidth_weight : float, default=1.0
        Weight of the bandwidth deviation next to the CPU deviation in the objective.
    time_limit_s : float or None, default=None
        The paper's t_max: executors still unplaced then are dealt over the light nodes; None takes the
        problem's ``options.time_limit_s``.
    """

    name = "gma"
    summary = "Elastic Allocator's greedy matching (CPU and bandwidth, light/moderate/heavy nodes), as published"

    def __init__(self, *, light: float = DEFAULT_LIGHT, heavy: float = DEFAULT_HEAVY,
                 bandwidth_weight: float = 1.0, time_limit_s: float | None = None) -> None:
        self.light, self.heavy, self.bandwidth_weight, self.time_limit_s = level_parameters(
            self.name, light, heavy, bandwidth_weight, time_limit_s)

    def plan(self, problem: Problem) -> Plan:
        state, notes = greedy_matching(problem, self.light, self.heavy, self.bandwidth_weight, self.time_limit_s)
        return Plan(algorithm=self.name, assignments=slots_for_nodes(problem, state.node_ids()),
                    notes=tuple(notes), figures=MappingProxyType({"gma_objective": state.objective()}))
