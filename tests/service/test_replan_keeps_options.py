"""A re-plan through the service keeps every option of the topology (regression: the re-planner rebuilt
``Options`` field by field, and a running topology's heap limit and GMA's D_CPU/D_BW reached the planner
as None)."""
from __future__ import annotations

import dataclasses

from storm_planner.adaptation.replan import Replanner
from storm_planner.core.problem import Executor, Options
from storm_planner.metrics.measured import MeasuredTopology
from storm_planner.planners import run
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.transport.contract import planner_thrift as T

OPTIONS = {"planner.max.cpu.utilisation": "0.7", "planner.max.bandwidth.utilisation": "0.5",
           "planner.max.migrations": "3", "planner.max.migration.cost": "9", "planner.seed": "7",
           "planner.time.limit.secs": "2", "planner.replan.threshold": "0.4", "planner.gma.d_cpu": "0.7"}


def running_request() -> T.PlanRequest:
    nodes = [T.Node(id=n, host=n, cpu_capacity=400.0, memory_mb=4096.0, meta={}, free_ports=[6701],
                    used_ports=[6700]) for n in ("a", "b")]
    executors = [T.Executor(id=f"[{i}-{i}]", component=c, cpu=10.0, memory_mb=128.0)
                 for i, c in enumerate(["s", "s", "b", "b"], start=1)]
    spec = T.TopologySpec(
        id="t1", name="t1", executors=executors, algorithm="even", num_workers=2, worker_max_heap_mb=768.0,
        components=[T.Component(id="s", type="spout", parallelism=2), T.Component(id="b", type="bolt", parallelism=2)],
        streams=[T.Stream(from_component="s", to_component="b", grouping="shuffle")],
        current={e.id: T.WorkerSlot(node_id="a", port=6700) for e in executors}, options=dict(OPTIONS))
    return T.PlanRequest(request_id="r1", nodes=nodes, topologies=[spec], deadline_ms=10_000)


def test_a_replan_through_the_service_keeps_every_option_but_the_budget_it_narrows():
    told: list[Options] = []

    def spy(problem, algorithm):
        told.append(problem.options)
        return run(problem, algorithm)

    measured = MeasuredTopology(executors=tuple(Executor(id=f"[{i}-{i}]", component=c, load=60.0)
                                                for i, c in enumerate(["s", "s", "b", "b"], start=1)))
    handler = PlannerHandler(metrics=lambda topology_id: measured, replanner=Replanner(runner=spy), isolate=False)
    try:
        (plan,) = handler.plan(running_request()).plans
    finally:
        handler.close()
    assert plan.error is None
    (options,) = told   # the first plan of a running, measured topology is a re-plan
    assert any("re-planned" in note for note in plan.notes), plan.notes
    expected = Options(max_migrations=3, max_migration_cost=9.0, time_limit_s=options.time_limit_s, seed=7,
                       worker_max_heap_mb=768.0, max_cpu_utilisation=0.7, max_bandwidth_utilisation=0.5,
                       extra=options.extra)
    assert options == expected
    assert 0 < options.time_limit_s <= 2.0   # capped to the topology's share of the deadline, never raised
    assert {k: options.extra[k] for k in ("planner.replan.threshold", "planner.gma.d_cpu")} == {
        "planner.replan.threshold": "0.4", "planner.gma.d_cpu": "0.7"}
    assert not set(options.extra) & {"planner.max.migrations", "planner.seed"}, "fields are not kept twice"
    assert [f.name for f in dataclasses.fields(Options)] == [
        "max_migrations", "max_migration_cost", "time_limit_s", "seed", "worker_max_heap_mb", "max_cpu_utilisation",
        "max_bandwidth_utilisation", "extra"], "a new Options field: add it to this test's request"
