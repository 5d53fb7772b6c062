"""One request's state (RequestState in service/planning/convert.py): per-topology node views rebuilt only
where something changed equal views built afresh, and each topology sees what the request's other topologies
hold."""
from __future__ import annotations

import random

import pytest

from storm_planner.service.planning.convert import RequestState, declared_use
from storm_planner.service.transport.contract import planner_thrift as T


def random_request(rng: random.Random):
    nodes = [T.Node(id=f"n{k}", host=f"h{k}", cpu_capacity=400.0, memory_mb=4096.0, meta={},
                    free_ports=rng.sample(range(6700, 6706), rng.randrange(1, 5)), used_ports=[],
                    used_cpu=rng.choice([0.0, 50.0]), used_memory_mb=0.0)
             for k in range(rng.randrange(3, 12))]
    specs = []
    for t in range(rng.randrange(2, 7)):
        executors = [T.Executor(id=f"[{i}-{i}]", component="c", cpu=float(rng.randrange(10, 60)),
                                memory_mb=float(rng.randrange(64, 512))) for i in range(rng.randrange(1, 8))]
        current = {}
        if rng.random() < 0.5:  # a running topology: its executors in slots of its own
            for executor in executors:
                node = rng.choice(nodes)
                current[executor.id] = T.WorkerSlot(node_id=node.id, port=7000 + t)
        specs.append(T.TopologySpec(id=f"t{t}", name=f"t{t}", components=[], streams=[], executors=executors,
                                    current=current, algorithm="even", num_workers=2, options={}))
    return nodes, specs


def fresh_view(nodes, specs, commits, spec):
    """The view a new state gives ``spec`` after the same commits: every node built afresh."""
    state = RequestState(nodes, specs)
    for planned, assignments in commits:
        state.commit(planned, assignments)
    return state.view_for(spec)


def some_plan(rng, spec, nodes, taken):
    """A few executors on random offered slots (or none: a failed plan keeps its place)."""
    assignments = {}
    if rng.random() < 0.8:
        for executor in spec.executors:
            node = rng.choice(nodes)
            port = rng.choice(sorted(set(node.free_ports) - taken.get(node.id, set())) or [None])
            if port is not None:
                assignments[executor.id] = T.WorkerSlot(node_id=node.id, port=port)
    for slot in assignments.values():
        taken.setdefault(slot.node_id, set()).add(slot.port)
    return assignments


@pytest.mark.parametrize("seed", range(40))
def test_incremental_views_equal_fresh_ones_through_a_request(seed):
    rng = random.Random(seed)
    nodes, specs = random_request(rng)
    state, commits, taken = RequestState(nodes, specs), [], {}
    for spec in specs:
        assert state.view_for(spec) == fresh_view(nodes, specs, commits, spec)
        assignments = some_plan(rng, spec, nodes, taken)
        state.commit(spec, assignments)
        commits.append((spec, assignments))


@pytest.mark.parametrize("seed", range(10))
def test_a_topology_sees_what_the_others_hold_and_no_slot_taken_before_it(seed):
    rng = random.Random(seed)
    nodes, specs = random_request(rng)
    state, taken, holds = RequestState(nodes, specs), {}, {s.id: declared_use(s, s.current) for s in specs}
    by_id = {node.id: node for node in nodes}
    for spec in specs:
        own_ports = {(slot.node_id, slot.port) for slot in spec.current.values()}
        for node in state.view_for(spec):
            others = [use[node.id] for other, use in holds.items() if other != spec.id and node.id in use]
            assert node.used_cpu == pytest.approx(by_id[node.id].used_cpu + sum(cpu for cpu, _ in others))
            assert node.used_memory == pytest.approx(sum(memory for _, memory in others))
            assert all(port not in taken.get(node.id, set()) or (node.id, port) in own_ports for port in node.slots)
        assignments = some_plan(rng, spec, nodes, taken)
        state.commit(spec, assignments)
        if assignments:
            holds[spec.id] = declared_use(spec, assignments)
