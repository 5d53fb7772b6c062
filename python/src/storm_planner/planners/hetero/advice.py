"""Parallelism advice for a running topology, from ``hetero``'s search (Nasiri et al.'s Algorithm 1).

Storm fixes a component's tasks at submission; ``hetero`` keeps a running topology's parallelism and
places it, and says here what parallelism its search would give (within each component's task count,
which a rebalance cannot exceed) with the maximum input rate either sustains, as a plan note with the
``storm-planner rebalance`` command that applies it.
"""
from __future__ import annotations

from types import MappingProxyType

from storm_planner.core.plan import ParallelismAdvice
from storm_planner.core.problem import Problem
from storm_planner.core.tasks import task_counts
from storm_planner.planners.hetero.model import HeteroModel
from storm_planner.planners.hetero.simulate import Placement, max_input_rate


def task_bounds(problem: Problem, model: HeteroModel, start: list[int], max_instances: int) -> list[int]:
    """Per component, the most instances the advice may give: its task count where known, and
    at most ``max_instances`` (refinement 3); never fewer than it runs now."""
    tasks = task_counts(problem)
    return [max(n, min(tasks.get(c, max_instances), max_instances)) for c, n in zip(model.components, start)]


def parallelism_advice(problem: Problem, model: HeteroModel, advised: Placement,
                       placement: Placement) -> ParallelismAdvice:
    """The search's parallelism for the user components vs the running one, with both max input rates."""
    tasks = task_counts(problem)
    user = [i for i in range(model.n_components) if not model.is_system[i]]
    return ParallelismAdvice(
        parallelism=MappingProxyType({model.components[i]: int(advised.parallelism[i]) for i in user}),
        current=MappingProxyType({model.components[i]: int(placement.parallelism[i]) for i in user}),
        tasks=MappingProxyType({model.components[i]: tasks[model.components[i]]
                                for i in user if model.components[i] in tasks}),
        max_input_rate=float(max_input_rate(model, advised)),
        current_max_input_rate=float(max_input_rate(model, placement)),
    )


def advice_note(problem: Problem, advice: ParallelismAdvice) -> str:
    """The advice in one line, with the command that applies it."""
    name = problem.options.get("topology.name") or problem.topology_id  # rebalance takes the name
    listed = ", ".join(f"{c}={n}" for c, n in advice.parallelism.items())
    text = (f"parallelism kept (running topology); advised: {listed} for max input rate "
            f"{advice.max_input_rate:.6g} vs {advice.current_max_input_rate:.6g} now")
    if not advice.changes:
        return f"{text} — nothing to change"
    if advice.gain <= 0:
        return f"{text} — no gain predicted from more executors: nothing to change"
    limit = "" if all(c in advice.tasks for c in advice.changes) else " (up to each task count)"
    executors = " ".join(f"-e {c}={n}" for c, n in advice.changes.items())
    return f"{text} ({advice.gain:+.0%}) — apply with `storm-planner rebalance {name} {executors}`{limit}"

