"""The planner core: problems, plans, the evaluator. No I/O, no cluster."""
from storm_planner.core.errors import (
    InfeasibleError,
    PlanningError,
    ProblemError,
    StormPlannerError,
    TooLargeError,
    UnknownAlgorithmError,
)
from storm_planner.core.evaluate import evaluate, evaluate_plan
from storm_planner.core.plan import Plan
from storm_planner.core.problem import (
    Component,
    Executor,
    Node,
    Options,
    Problem,
    Slot,
    Stream,
    Traffic,
)
from storm_planner.core.slots import slots_for_nodes

__all__ = [
    "Component", "Executor", "InfeasibleError", "Node", "Options", "Plan", "PlanningError",
    "Problem", "ProblemError", "Slot", "StormPlannerError", "Stream", "TooLargeError", "Traffic",
    "UnknownAlgorithmError", "evaluate", "evaluate_plan", "slots_for_nodes",
]
