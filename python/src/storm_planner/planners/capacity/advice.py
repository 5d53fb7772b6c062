"""More executors where a component's executor count binds: the capacity planner's parallelism advice.

Under a fields or shuffle grouping a component's load splits over its executors only: two executors of a
heavy bolt cannot use four nodes, and one executor cannot outgrow the node it is on. Storm fixes a
component's tasks at submission, but a rebalance (``rebalance -e component=N``) spreads them over up to
that many executors. So, while a component has tasks to spare, the advice tries more executors for it,
places the result (greedy and local search, stream-level traffic for both sides so they compare alike)
and keeps the change while it raises the sustainable factor by at least ``MIN_GAIN``.

Storm gives each executor a contiguous range of the tasks (:func:`~storm_planner.core.tasks.storm_split`), and
an executor's share of the tuples is its tasks' share: three executors of four tasks run two, one and one,
and the first still takes half the tuples, as each of two executors did. So a trial goes to the next count
that gives the busiest executor fewer tasks (:func:`~storm_planner.core.tasks.next_useful_count`: from two
of four, four), and each trial executor carries its tasks' share of the component's per-tuple cost (its
fixed cost paid once more). Stream traffic is still spread evenly over a component's executors, as
:mod:`storm_planner.core.traffic` spreads it everywhere.

O(increments × search); at most ``MAX_INCREMENTS`` increments.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from storm_planner.core.elements import Component, Executor
from storm_planner.core.plan import ParallelismAdvice
from storm_planner.core.problem import Problem
from storm_planner.core.tasks import next_useful_count, storm_split, task_counts
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.search import greedy, improve

MIN_GAIN = 0.05
MAX_INCREMENTS = 16
SEARCH_S = 0.3


@dataclass(frozen=True)
class Advice:
    advice: ParallelismAdvice
    note: str


def advise(problem: Problem, model: CapacityModel, node_of: Mapping[str, str], factor: float,
           workers: int | None) -> Advice | None:
    """Parallelism that sustains a higher rate, within each component's tasks; None when tasks are unknown."""
    tasks = task_counts(problem)
    now = Counter(e.component for e in problem.executors)
    user = {c.id for c in problem.components if not c.system and c.id in tasks}
    if not user:
        return None
    counts = {c: now[c] for c in user}
    baseline = _factor(problem, model, counts, workers)
    best = baseline
    for _ in range(MAX_INCREMENTS):
        steps = {c: step for c in sorted(user) if (step := next_useful_count(tasks[c], counts[c])) is not None}
        trials = {c: _factor(problem, model, {**counts, c: step}, workers, tasks) for c, step in steps.items()}
        if not trials:
            break
        chosen = max(trials, key=lambda c: (trials[c], c))
        if trials[chosen] < best * (1 + MIN_GAIN):
            break
        counts[chosen] = steps[chosen]
        best = trials[chosen]
    rate = problem.costs.reference_rate or 1.0
    advice = ParallelismAdvice(
        parallelism=MappingProxyType(dict(sorted(counts.items()))),
        current=MappingProxyType({c: now[c] for c in sorted(user)}),
        tasks=MappingProxyType({c: tasks[c] for c in sorted(user)}),
        max_input_rate=best * rate, current_max_input_rate=baseline * rate)
    return Advice(advice, _note(problem, advice))


def _factor(problem: Problem, model: CapacityModel, counts: Mapping[str, int], workers: int | None,
            tasks: Mapping[str, int] | None = None) -> float:
    """The factor a placement of the topology with ``counts`` executors per user component reaches."""
    scaled = with_parallelism(problem, model, counts, tasks)
    what_if = CapacityModel(scaled, problem.costs.executor_fixed, model.worker_fixed)
    start = greedy(what_if, workers)
    return what_if.factor(improve(what_if, start, workers, seed=problem.options.seed, time_limit_s=SEARCH_S))


def with_parallelism(problem: Problem, model: CapacityModel, counts: Mapping[str, int],
                     tasks: Mapping[str, int] | None = None) -> Problem:
    """``problem`` with ``counts`` executors for those components, executor pairs dropped for stream-level
    traffic. Each executor carries the fixed part once and its share of the component's per-tuple load: its
    tasks' share as Storm splits ``tasks`` (per component), an equal share where its tasks are unknown."""
    executors: list[Executor] = []
    components: list[Component] = []
    for component in problem.components:
        own = [e for e in problem.executors if e.component == component.id]
        wanted = counts.get(component.id, len(own))
        if wanted == len(own) or not own:
            executors.extend(own)
            components.append(component)
            continue
        fixed = model.fixed[own[0].id]
        variable = sum(model.variable[e.id] for e in own)
        known = (tasks or {}).get(component.id, 0)
        shares = [n / known for n in storm_split(known, wanted)] if known >= wanted else [1 / wanted] * wanted
        memory = sum(e.memory for e in own) / len(own)
        executors.extend(Executor(f"{component.id}/{i}", component.id, fixed + variable * share, own[0].state_size,
                                  memory, own[0].cpu) for i, share in enumerate(shares))
        components.append(Component(component.id, component.type, wanted, component.cost, component.system,
                                    component.memory))
    return problem.replace(executors=tuple(executors), components=tuple(components), traffic=(),
                           current=MappingProxyType({}))


def _note(problem: Problem, advice: ParallelismAdvice) -> str:
    name = problem.options.get("topology.name") or problem.topology_id
    listed = ", ".join(f"{c}={n}" for c, n in advice.parallelism.items())
    text = (f"parallelism: {listed} sustains {advice.max_input_rate:.6g} against {advice.current_max_input_rate:.6g} "
            f"with the executors running")
    if not advice.changes:
        return f"{text} — no executor count binds"
    executors = " ".join(f"-e {c}={n}" for c, n in advice.changes.items())
    return f"{text} ({advice.gain:+.0%}) — apply with `storm-planner rebalance {name} {executors}`"
