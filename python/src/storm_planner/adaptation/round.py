"""One adaptation round: Algorithm 1 of Madsen et al. (§4.1).

1-3. Nodes marked for removal in earlier rounds that hold no executor any more
     are released: they leave the problem (reported in ``RoundResult.released``).
4.   Plan (``milp``, ``albic``, ... any registered planner) on what remains.
5.   Decide scaling on that *potential* plan (a :mod:`~.scaling` policy).
6-7. If nodes are to be removed, mark them and plan again, so one MILP decides
     balancing, collocation and draining together within the migration budget.

The plan's ``drain`` lists every node marked for removal and not yet released;
the state to persist is ``{"version": 1, "draining": [...], "planner": <the
planner's Plan.state>}``. :class:`AdaptationController` keeps that state in a
:class:`~storm_planner.adaptation.state.StateStore` under
``<topology id>/<algorithm>/round``, so a restarted service resumes the
draining and ALBIC's collocations where it left off.
"""
from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from storm_planner.adaptation.scaling import ScalingDecision, ScalingPolicy, ThresholdScaling
from storm_planner.adaptation.state import StateStore, state_key
from storm_planner.core.errors import InfeasibleError, ProblemError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners import run

STATE_VERSION = 1


@dataclass(frozen=True)
class RoundResult:
    plan: Plan
    state: dict[str, Any]
    released: tuple[str, ...] = ()
    decision: ScalingDecision = field(default_factory=ScalingDecision)
    potential: Plan | None = None   # the line-4 plan, when a scaling decision replaced it


def adaptation_round(
    problem: Problem,
    algorithm: str = "milp",
    policy: ScalingPolicy | None = None,
    state: Mapping[str, Any] | None = None,
    **params: Any,
) -> RoundResult:
    """Run Alg. 1 once; ``state`` is the previous round's ``RoundResult.state``."""
    state = dict(state or {})
    if state and state.get("version", STATE_VERSION) != STATE_VERSION:
        raise ProblemError(f"adaptation state version {state.get('version')!r} is not {STATE_VERSION}")
    policy = policy or ThresholdScaling()
    node_ids = {n.id for n in problem.nodes}
    marked = {n for n in state.get("draining", []) if n in node_ids} | {n.id for n in problem.nodes if n.draining}

    # Lines 1-3: release marked nodes that no executor occupies any more.
    occupied = {slot.node for slot in problem.current.values()}
    released = tuple(sorted(n for n in marked if n not in occupied))
    problem = with_marks(problem, marked - set(released), drop=set(released))

    planner_params = dict(params)
    if state.get("planner"):
        planner_params.setdefault("state", state["planner"])

    potential = run(problem, algorithm, **planner_params)              # line 4
    decision = policy.decide(problem, potential)                       # line 5
    plan = potential
    if decision.drain:                                                 # lines 6-7
        problem = with_marks(problem, marked - set(released) | set(decision.drain))
        plan = run(problem, algorithm, **planner_params)

    drain = tuple(sorted(n.id for n in problem.nodes if n.draining))
    notes = [f"adaptation: {decision.reason}"]
    if released:
        notes.append(f"released (drained and empty): {', '.join(released)}")
    if decision.drain:
        notes.append(f"marked for removal: {', '.join(decision.drain)}")
    if decision.add:
        notes.append(f"scale out: {decision.add} more node(s) wanted")
    figures = {**plan.figures, "released_nodes": float(len(released)), "scale_out_nodes": float(decision.add),
               "draining_nodes": float(len(drain))}
    plan = plan.replace(drain=drain, notes=plan.notes + tuple(notes), figures=MappingProxyType(figures))
    new_state = {"version": STATE_VERSION, "draining": list(drain), "planner": dict(plan.state)}
    return RoundResult(plan, new_state, released, decision, potential if decision.drain else None)


def with_marks(problem: Problem, draining: AbstractSet[str], drop: AbstractSet[str] = frozenset()) -> Problem:
    """The problem with exactly ``draining`` marked for removal and ``drop`` nodes gone."""
    nodes = tuple(replace(n, draining=n.id in draining) for n in problem.nodes if n.id not in drop)
    if not any(not n.draining for n in nodes):
        raise InfeasibleError("every node is marked for removal: there is nowhere to place executors")
    return problem.replace(nodes=nodes)


class AdaptationController:
    """Runs rounds for one planner, persisting the round state in a store between them."""

    def __init__(self, store: StateStore, algorithm: str = "milp", policy: ScalingPolicy | None = None,
                 **params: Any) -> None:
        self.store = store
        self.algorithm = algorithm
        self.policy = policy
        self.params = params

    def key(self, problem: Problem) -> str:
        return state_key(problem.topology_id, self.algorithm) + "/round"

    def round(self, problem: Problem) -> RoundResult:
        key = self.key(problem)
        result = adaptation_round(problem, self.algorithm, self.policy, self.store.load(key), **self.params)
        self.store.save(key, result.state)
        return result
