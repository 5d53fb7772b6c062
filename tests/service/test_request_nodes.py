"""The service's per-topology node views, rebuilt only where something changed, equal views built afresh."""
from __future__ import annotations

import random

import pytest

from storm_planner.service.contract import planner_thrift as T
from storm_planner.service.convert import RequestNodes, declared_use
from storm_planner.service.ledger import RequestLedger


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


def fresh_view(nodes, taken, own_ports, held):
    view = RequestNodes(nodes)
    for node_id, ports in taken.items():
        for port in ports:
            view.take(node_id, port)
    return view.for_topology(own_ports, dict(held))  # a plain dict: every node looked at


@pytest.mark.parametrize("seed", range(40))
def test_incremental_views_equal_fresh_ones_through_a_request(seed):
    rng = random.Random(seed)
    nodes, specs = random_request(rng)
    incremental, ledger, taken = RequestNodes(nodes), RequestLedger(specs), {}
    for spec in specs:
        own_ports: dict[str, set[int]] = {}
        for slot in spec.current.values():
            own_ports.setdefault(slot.node_id, set()).add(slot.port)
        held = ledger.held_by_others(spec.id)
        assert incremental.for_topology(own_ports, held) == fresh_view(nodes, taken, own_ports, held)
        # "Plan" it: a few executors on random offered slots (or none: a failed plan keeps its place).
        assignments = {}
        if rng.random() < 0.8:
            for executor in spec.executors:
                node = rng.choice(nodes)
                port = rng.choice(sorted(set(node.free_ports) - taken.get(node.id, set())) or [None])
                if port is not None:
                    assignments[executor.id] = T.WorkerSlot(node_id=node.id, port=port)
        for slot in assignments.values():
            incremental.take(slot.node_id, slot.port)
            taken.setdefault(slot.node_id, set()).add(slot.port)
        ledger.planned(spec, assignments)


def test_held_by_others_is_the_total_less_the_topologys_own():
    nodes, specs = random_request(random.Random(7))
    ledger = RequestLedger(specs)
    for spec in specs:
        held = ledger.held_by_others(spec.id)
        everyone: dict[str, list[float]] = {}
        for other in specs:
            if other.id != spec.id:
                for node, (cpu, memory) in declared_use(other, other.current).items():
                    sums = everyone.setdefault(node, [0.0, 0.0])
                    sums[0] += cpu
                    sums[1] += memory
        for node in everyone:
            assert held[node] == pytest.approx(tuple(everyone[node]))
