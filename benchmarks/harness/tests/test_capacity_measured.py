"""``bench capacity`` on the planner service's problem log (``serve --problem-log``, one JSON line per planned
topology per round): the measured problem it takes, ras+measured's declaration, λ* and the model's
prediction, from fixture lines in the log's format."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from storm_planner_bench.capacity.measured import (
    ACKER_CPU_KEY,
    DECLARED_SHARE,
    component_costs,
    declaration,
    latest_measured,
    load_measured,
    on_cluster,
    packs,
    predicted_rate,
    rate_bound,
    read_problem_log,
    save_measured,
    with_executors,
)

REPO = Path(__file__).resolve().parents[3]
NODES = {"i7-a": (45.0, [6700, 6701, 6702]), "i7-b": (45.0, [6703, 6704, 6705]),
         "i5-a": (35.0, [6706, 6707, 6708]), "i5-b": (35.0, [6709, 6710, 6711])}
LOADS = {"tweets": [20.0], "count": [15.0, 15.0], "rank": [8.0, 8.0], "total": [3.0], "__acker": [4.0] * 4}
FIXED = {"tweets": 2.0, "count": 1.0, "rank": 1.0, "__acker": 0.5}


def trends_problem(origin: str = "measured", rate: float = 1000.0, bandwidth: float | None = None) -> dict:
    """Trends as the service saw it, loads measured at ``rate`` t/s (what the problem log carries)."""
    executors, task = [], 1
    for component, loads in LOADS.items():
        for load in loads:
            executors.append({"id": f"[{task}-{task}]", "component": component, "load": load})
            task += 1
    components = [{"id": "tweets", "type": "spout"}, {"id": "count", "executors": 2}, {"id": "rank", "executors": 2},
                  {"id": "total"}, {"id": "__acker", "executors": 4, "system": True}]
    streams = [{"from": "tweets", "to": "count", "grouping": "fields", "rate": rate, "tuple_bytes": 150.0},
               {"from": "count", "to": "rank", "grouping": "fields", "rate": rate, "tuple_bytes": 120.0},
               {"from": "rank", "to": "total", "grouping": "global", "rate": rate / 10, "tuple_bytes": 200.0}]
    nodes = [{"id": n, "capacity": c, "slots": slots, **({"bandwidth": bandwidth} if bandwidth else {})}
             for n, (c, slots) in NODES.items()]
    costs = {"reference_rate": rate, "executor_fixed": FIXED, "worker_fixed": 2.0, "origin": origin}
    return {"nodes": nodes, "topology": {"id": "cap-trends-link-1-1700000000", "components": components,
                                         "streams": streams},
            "executors": executors, "costs": costs if origin != "declared" else {"origin": "declared"},
            "options": {"workers": 4}}


def log_lines(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl"
    line = {"time": 1700000100.0, "event": "problem", "topology": "cap-trends-link-1-1700000000",
            "name": "cap-trends-link", "algorithm": "auto"}
    path.write_text(json.dumps({**line, "problem": trends_problem("declared")}) + "\n"
                    + "{not json\n"
                    + json.dumps({**line, "time": 1700000160.0, "problem": trends_problem(rate=900.0)}) + "\n"
                    + json.dumps({**line, "topology": "another-1", "problem": trends_problem(rate=5.0)}) + "\n"
                    + json.dumps({**line, "time": 1700000220.0, "problem": trends_problem()}) + "\n"
                    + json.dumps({**line, "time": 1700000280.0, "problem": trends_problem(rate=1100.0)}))  # cut
    return path


def measured(tmp_path: Path):
    found = latest_measured(read_problem_log(log_lines(tmp_path), "cap-trends-link-1-1700000000"))
    assert found is not None
    return found


def description():
    from storm_planner.cluster.description import load_description

    return load_description(REPO / "benchmarks" / "e2e" / "cluster.yaml")


def test_the_last_measured_problem_of_the_topology_is_taken(tmp_path):
    records = read_problem_log(log_lines(tmp_path), "cap-trends-link-1-1700000000")
    assert [r["time"] for r in records] == [1700000100.0, 1700000160.0, 1700000220.0]   # not the cut last line
    record, problem = measured(tmp_path)
    assert record["time"] == 1700000220.0 and problem.costs.reference_rate == 1000.0
    assert latest_measured(records[:1]) is None                     # declared costs are not measured
    assert read_problem_log(tmp_path / "absent.jsonl") == [] and read_problem_log(None) == []


def test_per_tuple_costs_leave_out_each_executors_fixed_cpu(tmp_path):
    costs = component_costs(measured(tmp_path)[1])
    assert costs["count"].executors == 2 and costs["count"].fixed == 1.0
    assert costs["count"].per_tuple == pytest.approx((15 - 1) * 2 / 1000)
    assert costs["__acker"].per_tuple == pytest.approx((4 - 0.5) * 4 / 1000)
    assert costs["count"].per_executor(1000.0) == pytest.approx(15.0)


def test_ras_measured_declares_every_component_at_the_rate_that_fills_90_percent_and_packs(tmp_path):
    problem = measured(tmp_path)[1]
    capacities = {s.name: s.cpu for s in description().supervisors}
    declared = declaration(problem, capacities)
    costs = component_costs(problem)
    total = sum(declared.cpu[c] * cost.executors for c, cost in costs.items())
    assert total == pytest.approx(DECLARED_SHARE * 160.0, rel=0.01)
    assert declared.share == pytest.approx(DECLARED_SHARE, abs=0.01)
    # in proportion to what each costs: count's executors declare (1 + 14 × λ_d / 1000) each
    assert declared.cpu["count"] == pytest.approx(1 + 14 * declared.rate / 1000, abs=0.1)
    assert packs([declared.cpu[c] for c, cost in costs.items() for _ in range(cost.executors)], capacities)
    options = declared.options("trends")
    assert options["trends.cpu.count"] == declared.cpu["count"] and options[ACKER_CPU_KEY] == declared.cpu["__acker"]
    assert not any(key.endswith(".__acker") for key in options)
    # a spout that alone would overflow any node at that rate: the rate falls until first-fit-decreasing packs
    heavy = problem.replace(executors=tuple(e._replace(load=80.0) if e.component == "tweets" else e
                                            for e in problem.executors))
    lowered = declaration(heavy, capacities)
    assert lowered.cpu["tweets"] <= 45.0 and lowered.share < DECLARED_SHARE


def test_first_fit_decreasing_packing():
    assert packs([40, 30, 30, 20], {"a": 60, "b": 60})
    assert not packs([50, 50, 50], {"a": 60, "b": 60})


def test_lambda_star_bounds_every_placement_the_model_predicts(tmp_path):
    problem = on_cluster(measured(tmp_path)[1], description())
    assert {n.id: (n.capacity, n.bandwidth) for n in problem.nodes} == {
        "i7-a": (45.0, 2.0), "i7-b": (45.0, 2.0), "i5-a": (35.0, 2.0), "i5-b": (35.0, 2.0)}   # links filled in
    bound = rate_bound(problem)
    assert 0 < bound < math.inf
    nodes = list(NODES)
    for shift in range(4):
        placement = [{"executor": e.id, "component": e.component, "node": nodes[(i + shift) % 4],
                      "port": NODES[nodes[(i + shift) % 4]][1][0]} for i, e in enumerate(problem.executors)]
        predicted = predicted_rate(problem, placement)
        assert 0 < predicted <= bound * 1.001
    no_links = problem.replace(nodes=tuple(dataclasses.replace(n, bandwidth=None) for n in problem.nodes))
    assert rate_bound(no_links) >= bound


def test_a_placement_with_more_executors_is_predicted_on_the_costs_shared_out(tmp_path):
    problem = on_cluster(measured(tmp_path)[1], description())
    placement = [{"executor": e.id, "component": e.component, "node": "i7-a", "port": 6700}
                 for e in problem.executors if e.component != "count"]
    placement += [{"executor": f"[{20 + k}-{20 + k}]", "component": "count", "node": n, "port": NODES[n][1][0]}
                  for k, n in enumerate(("i7-b", "i5-a", "i5-b", "i7-b"))]   # count on four executors
    rebuilt = with_executors(problem, placement)
    counts = [e for e in rebuilt.executors if e.component == "count"]
    assert len(counts) == 4 and sum(e.load for e in counts) == pytest.approx(1.0 * 4 + 28.0)
    assert math.isfinite(predicted_rate(problem, placement))
    # Three executors of four tasks, as Storm splits them: the first runs two tasks, half the tuples.
    three = [p for p in placement if p["component"] != "count"]
    three += [{"executor": ids, "component": "count", "node": "i7-b", "port": 6700}
              for ids in ("[20-21]", "[22-22]", "[23-23]")]
    loads = [e.load for e in with_executors(problem, three).executors if e.component == "count"]
    assert loads == pytest.approx([1.0 + 14.0, 1.0 + 7.0, 1.0 + 7.0])


def test_a_kept_measured_problem_reads_back(tmp_path):
    record, _ = measured(tmp_path)
    path = tmp_path / "measured" / "e2e-bench" / "trends-link.json"
    save_measured(path, record, {"lambda_star_tps": 1234.5})
    saved, problem = load_measured(path)
    assert saved["lambda_star_tps"] == 1234.5 and problem.costs.reference_rate == 1000.0
    path.write_text("{}")
    assert load_measured(path) is None and load_measured(tmp_path / "absent.json") is None
