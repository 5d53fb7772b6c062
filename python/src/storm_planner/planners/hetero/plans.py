"""Between the problem's executors and the model's instances.

Instance ``i`` of a component is the component's ``i``-th executor in the
problem (the starting execution graph); instances beyond those are new
executors named ``<component>/<i>`` (the first free index), which a planner
with ``changes_parallelism`` may return. Storm creates them on a rebalance
(``storm-planner rebalance NAME -e component=n``, up to the component's task
count) or at submission with the new parallelism hints.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from storm_planner.core.derive import executor_name
from storm_planner.core.errors import ProblemError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners.hetero.model import HeteroModel
from storm_planner.planners.hetero.simulate import Placement, simulate


def starting_parallelism(problem: Problem, model: HeteroModel) -> list[int]:
    """Executors per component in the problem: the graph a planner starts from."""
    counts = dict.fromkeys(model.components, 0)
    for executor in problem.executors:
        counts[executor.component] += 1
    return [max(1, counts[c]) for c in model.components]


def executor_names(problem: Problem, model: HeteroModel, parallelism: Iterable[int]) -> list[list[str]]:
    """Per component, the executor id of each instance: existing ids first, then new ones."""
    existing: dict[str, list[str]] = {c: [] for c in model.components}
    for executor in problem.executors:
        existing[executor.component].append(executor.id)
    taken = {e.id for e in problem.executors}
    names = []
    for component, count in zip(model.components, parallelism):
        own = existing[component][:count]
        if len(existing[component]) > count:
            raise ProblemError(
                f"{component}: {count} instance(s) planned but the problem already has "
                f"{len(existing[component])} executors; planners only add instances"
            )
        index = 0
        while len(own) < count:
            candidate = executor_name(component, index)
            if candidate not in taken:
                own.append(candidate)
                taken.add(candidate)
            index += 1
        names.append(own)
    return names


def plan_from_placement(
    problem: Problem,
    model: HeteroModel,
    placement: Placement,
    algorithm: str,
    figures: Mapping[str, float] | None = None,
    notes: Iterable[str] = (),
) -> Plan:
    """A plan placing every instance, with the simulator's figures and the parallelism (the instances the
    profile does not price spread over the machines that do the work: :func:`spread_unpriced`)."""
    simulation = simulate(model, placement)   # unpriced instances cost nothing: the same after the spread
    placement = spread_unpriced(model, placement, simulation.utilisation)
    names = executor_names(problem, model, placement.parallelism)
    node_of = {
        name: model.machines[m]
        for component_names, machines in zip(names, placement.machines_of)
        for name, m in zip(component_names, machines)
    }
    return Plan(
        algorithm=algorithm,
        assignments=slots_for_nodes(problem, node_of),
        parallelism=MappingProxyType(simulation.parallelism),
        figures=MappingProxyType({**simulation.figures(), **(figures or {})}),
        notes=tuple(notes),
    )


def unpriced(model: HeteroModel, component: int) -> bool:
    """A system component the profile leaves at no cost (Storm's ackers: eq. 7 has no system components)."""
    return bool(model.is_system[component] and not model.cost[component].any() and not model.base[component].any())


def spread_unpriced(model: HeteroModel, placement: Placement,
                    utilisation: Mapping[str, float] | None = None) -> Placement:
    """The placement with each unpriced system component's instances dealt round-robin over the machines
    that host priced instances, the least utilised first (``utilisation``: machine id -> percent of its
    budget at the plan's rate; without it, the machines with the most instances first).

    Not in the paper, whose model has no system components: at no cost every machine is as good as
    another for an acker, and the search's tie-break stacked all of a topology's ackers on one machine,
    so every spout's and bolt's acker message crossed to it. Dealt with the work, as Storm's own schedulers
    give each worker an acker, most of those messages stay on their machine; an acker does cost CPU the
    model does not see, so the machines with the most headroom take them first. The simulator's figures do
    not change (the instances cost nothing in the model). O(instances + machines log machines)."""
    hosting = Counter(m for c, machines in enumerate(placement.machines_of) if not unpriced(model, c)
                      for m in machines)
    if not hosting:
        return placement
    used = utilisation or {}
    order = sorted(hosting, key=lambda m: (used.get(model.machines[m], 0.0), -hosting[m], m))
    return Placement(tuple(
        tuple(order[i % len(order)] for i in range(len(machines))) if unpriced(model, c) else machines
        for c, machines in enumerate(placement.machines_of)))


def placement_from_assignments(problem: Problem, model: HeteroModel,
                               assignments: Mapping[str, Slot | str]) -> Placement:
    """The placement a plan describes (its executors, known or ``<component>/<i>``)."""
    component_of = {e.id: e.component for e in problem.executors}
    rank = {e.id: i for i, e in enumerate(problem.executors)}
    machine_index = {m: i for i, m in enumerate(model.machines)}
    per_component: dict[str, list[tuple[tuple[int, int, int], int]]] = {c: [] for c in model.components}
    for executor, slot in assignments.items():
        node = slot.node if isinstance(slot, Slot) else Slot.parse(slot).node
        component = component_of.get(executor) or _component_of_new(executor, per_component)
        if node not in machine_index:
            raise ProblemError(f"{executor} is placed on {node!r}, which is not a usable node")
        order = (0, rank[executor], 0) if executor in rank else (1, 0, int(executor.rsplit("/", 1)[1]))
        per_component[component].append((order, machine_index[node]))
    machines_of = []
    for component in model.components:
        if not per_component[component]:
            raise ProblemError(f"the plan places no executor of {component!r}")
        machines_of.append(tuple(m for _, m in sorted(per_component[component])))
    return Placement(tuple(machines_of))


def _component_of_new(executor: str, components: Mapping[str, object]) -> str:
    component, sep, index = executor.rpartition("/")
    if not sep or component not in components or not index.isdigit():
        raise ProblemError(f"unknown executor {executor!r} (new executors are named <component>/<i>)")
    return component
