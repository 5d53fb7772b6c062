"""A resubmitted topology's first plan on the loads its name was last measured at (``planner.loads.remembered``).

The end-to-end bench found topDown's first plan on bargains, made on the declared 10 % per executor, packing
join and vwap onto one 45 % node that then ran at its quota; measured re-plans could not spread them without
restarting a spout's worker. The service now remembers, per topology name, each component's highest
measured load per executor over a run, and a later run of that name may start from it.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from storm_planner.core.problem import Executor
from storm_planner.metrics.measured import MeasuredTopology
from storm_planner.planners.base import run
from storm_planner.service.planning.convert import problem_from_thrift
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.memory import (
    MAX_ENTRIES,
    MAX_KEY_CHARS,
    ComponentLoad,
    LoadMemory,
    RememberedLoads,
    component_loads,
    storm_name_of,
)
from storm_planner.service.transport.contract import planner_thrift as T
from tests.service.test_imc_prior import SUPERVISORS, bench_nodes, request


def executors(*loads: tuple[str, float]) -> list[Executor]:
    return [Executor(id=f"[{k}-{k}]", component=c, load=load) for k, (c, load) in enumerate(loads, 1)]


def loads(*figures: tuple[str, float]):
    return component_loads(executors(*figures))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_run_keeps_its_highest_load_per_executor_and_a_new_run_starts_afresh():
    memory = LoadMemory(clock=Clock())
    memory.remember("wc", "wc-1-1", loads(("count", 10.0), ("count", 20.0), ("words", 4.0)), {("words", "count"): 90.0})
    # The feed stopped: the run's last windows are nearly idle, and its peak stays.
    memory.remember("wc", "wc-1-1", loads(("count", 1.0), ("count", 1.0), ("words", 6.0)), {("words", "count"): 95.0})
    first = memory.recall("wc")
    assert first is not None and first.topology_id == "wc-1-1"
    assert dict(first.cpu) == {"count": 15.0, "words": 6.0}
    assert dict(first.tuple_bytes) == {("words", "count"): 95.0}   # sizes: the latest
    memory.remember("wc", "wc-2-9", loads(("count", 3.0), ("count", 5.0)), {})
    second = memory.recall("wc")
    assert second is not None and dict(second.cpu) == {"count": 4.0} and not second.tuple_bytes
    assert memory.recall("other") is None


def test_a_run_keeps_each_pairs_highest_rate():
    memory = LoadMemory()
    memory.remember("wc", "wc-1-1", loads(("count", 10.0)), {}, {("words", "count"): 400.0, ("count", "rank"): 3.0})
    memory.remember("wc", "wc-1-1", loads(("count", 1.0)), {}, {("words", "count"): 2.0, ("rank", "total"): 1.0})
    kept = memory.recall("wc")
    assert kept is not None
    assert dict(kept.rates) == {("words", "count"): 400.0, ("count", "rank"): 3.0, ("rank", "total"): 1.0}
    memory.remember("wc", "wc-2-2", loads(("count", 1.0)), {}, {("words", "count"): math.nan})
    fresh = memory.recall("wc")
    assert fresh is not None and not fresh.rates          # a new run starts afresh; NaN is not kept


def test_a_rebalance_within_the_run_starts_the_components_peak_afresh():
    """Storm's rebalance keeps the topology id: 1 count at 40 % then 4 at 10 % each is 10 % per executor
    (the old peak at 1 executor would plan 160 % for the component)."""
    memory = LoadMemory()
    memory.remember("wc", "wc-1-1", loads(("count", 40.0), ("words", 5.0)), {})
    memory.remember("wc", "wc-1-1", loads(*[("count", 10.0)] * 4, ("words", 3.0)), {})
    kept = memory.recall("wc")
    assert kept is not None
    assert kept.loads["count"] == ComponentLoad(10.0, 4) and kept.loads["words"] == ComponentLoad(5.0, 1)


def test_only_executors_with_a_window_of_their_own_are_remembered():
    """The metrics source fills in an executor without a window (its component's mean, or the topology's
    median for a component with none): a guess is not a measurement."""
    figures = executors(("count", 30.0), ("count", 10.0), ("rank", 20.0), ("words", 5.0))
    measured = component_loads(figures, windowed={"[1-1]", "[4-4]"})
    assert measured == {"count": ComponentLoad(30.0, 2), "words": ComponentLoad(5.0, 1)}   # rank had no window


def test_the_handler_remembers_what_the_metrics_measured_not_what_they_filled_in():
    from storm_planner.metrics.loads_and_traffic import ExecutorFigures, Measurement

    spec = request("bargains-link")
    join = {e.id for e in spec.executors if e.component == "join"}
    # Every executor has a window but the joins', which the source fills in at the topology's median.
    figures = {e.id: ExecutorFigures(executor=e.id, component=e.component, measured=e.id not in join)
               for e in spec.executors}
    measured = MeasuredTopology(executors=tuple(Executor(id=e.id, component=e.component, load=4.0)
                                                for e in spec.executors),
                                measurement=Measurement(topology_id="e2e-bargains-link-1-1", executors=figures, traffic={},
                                                        component_traffic={}))
    handler = PlannerHandler(metrics=lambda tid: measured, isolate=False)
    plan_of(handler, "e2e-bargains-link-1-1", {})
    kept = handler.load_memory.recall("e2e-bargains-link")
    assert kept is not None and "join" not in kept.loads and kept.loads["vwap"] == ComponentLoad(4.0, 2)
    handler.close()


def test_figures_that_are_not_finite_and_non_negative_are_left_out_and_the_rest_kept():
    kept_loads = loads(("a", math.nan), ("a", 8.0), ("b", math.inf), ("c", -1.0), ("d", 0.0))
    assert {c: load.per_executor for c, load in kept_loads.items()} == {"a": 8.0, "d": 0.0}
    memory = LoadMemory()
    memory.remember("t", "t-1-1", loads(("a", 8.0)), {("a", "b"): math.nan, ("b", "c"): 120.0, ("c", "d"): -5.0})
    kept = memory.recall("t")
    assert kept is not None and dict(kept.tuple_bytes) == {("b", "c"): 120.0}
    memory.remember("bad", "bad-1-1", loads(("a", math.nan)), {("a", "b"): math.inf})
    assert memory.recall("bad") is None and memory.recall("t") is not None    # nothing usable: nothing kept
    memory.remember("", "anonymous-1-1", loads(("a", 1.0)), {})
    memory.remember("t2", "t2", loads(("a", 1.0)), {})               # not an id Storm gives topology t2
    memory.remember("x" * (MAX_KEY_CHARS + 1), "x" * (MAX_KEY_CHARS + 1) + "-1-1", loads(("a", 1.0)), {})
    assert len(memory) == 1
    assert storm_name_of("e2e-trends-link-3-1795758981", "e2e-trends-link")
    assert not storm_name_of("e2e-trends-link-3-1795758981", "e2e-trends")


def test_the_memory_is_bounded_in_names_components_and_key_length():
    memory = LoadMemory(max_topologies=2)
    for name in ("a", "b"):
        memory.remember(name, f"{name}-1-1", loads(("x", 1.0)), {})
    assert memory.recall("a") is not None      # a is now the most recently used
    memory.remember("c", "c-1-1", loads(("x", 1.0)), {})
    assert memory.recall("b") is None and memory.recall("a") is not None and memory.recall("c") is not None
    many = [Executor(id=f"[{k}-{k}]", component=f"c{k}", load=1.0) for k in range(MAX_ENTRIES + 5)]
    long = "y" * (MAX_KEY_CHARS + 1)
    memory.remember("big", "big-1-1", component_loads(many + [Executor(id="[0-0]", component=long, load=1.0)]),
                    {(f"c{k}", "sink"): 10.0 for k in range(MAX_ENTRIES + 5)})
    big = memory.recall("big")
    assert big is not None and len(big.loads) == MAX_ENTRIES and len(big.tuple_bytes) == MAX_ENTRIES
    memory.remember("long", "long-1-1", component_loads([Executor(id="[0-0]", component=long, load=1.0)]),
                    {(long, "sink"): 10.0})
    assert memory.recall("long") is None
    with pytest.raises(ValueError, match="max_topologies"):
        LoadMemory(max_topologies=0)


# bargains at 200 t/s per spout: join and vwap are the heavy components (cf. benchmarks/README.md, e2e-relief), the rest light.
BARGAINS_LOADS = {"trades": 6.0, "quotes": 6.0, "vwap": 16.0, "join": 19.0, "filter": 3.0, "sink": 2.0, "__acker": 3.0}


def remembered_bargains(figures: dict[str, float] = BARGAINS_LOADS) -> RememberedLoads:
    return RememberedLoads("e2e-bargains-link-1-1", {c: ComponentLoad(load, 2) for c, load in figures.items()},
                           {("trades", "vwap"): 310.0}, 0.0)


def test_a_plan_without_metrics_takes_the_remembered_loads_and_sizes_in_place_of_the_declared_ones():
    spec = request("bargains-link")
    problem = problem_from_thrift(spec, bench_nodes(), remembered=remembered_bargains())
    assert not problem.measured                   # still a plan on estimates: its first measured re-plan is judged as usual
    assert problem.loads_remembered and problem.loads_known
    assert {e.component: e.load for e in problem.executors} == BARGAINS_LOADS
    assert all(e.cpu == 10.0 for e in problem.executors)     # what Storm accounts (RAS) is still declared
    sizes = {(s.source, s.target): s.tuple_bytes for s in problem.streams}
    assert sizes[("trades", "vwap")] == 310.0
    plain = problem_from_thrift(spec, bench_nodes())
    assert {e.load for e in plain.executors} == {10.0} and not plain.loads_known
    elsewhere = problem_from_thrift(spec, bench_nodes(), remembered=remembered_bargains({"gone": 50.0}))
    assert not elsewhere.loads_remembered        # no component of the memory is in this topology
    plain_sizes = {(s.source, s.target): s.tuple_bytes for s in plain.streams}
    assert plain_sizes[("trades", "vwap")] != 310.0
    assert plain_sizes[("quotes", "join")] == sizes[("quotes", "join")]     # a pair the memory lacks keeps its estimate


def delivered(problem) -> dict:
    """Per component pair, the tuples/s the traffic model delivers to the target's executors (an ``all``
    stream's emit reaches every one of them), as the metrics count them."""
    executors = {c.id: c.executors for c in problem.components}
    totals: dict = defaultdict(float)
    for s in problem.streams:
        totals[(s.source, s.target)] += s.rate * (executors[s.target] if s.grouping == "all" else 1)
    return totals


def test_remembered_rates_are_what_each_pair_delivers_and_the_other_streams_follow_on_one_scale():
    """bargains pairs a fields stream with an ``all`` watermark stream on (vwap, join): the pair delivers
    the remembered 998 tuples/s in all, in the prior's mix. Pairs without a remembered rate are scaled to the
    same absolute scale, and acker streams without one follow the user streams' rates."""
    spec = request("bargains-link")
    rates = {("trades", "vwap"): 599.0, ("quotes", "join"): 600.0, ("vwap", "join"): 998.0,
             ("join", "__acker"): 399.0, ("filter", "sink"): 9.0}
    remembered = RememberedLoads("e2e-bargains-link-1-1", {}, {}, 0.0, rates)
    problem = problem_from_thrift(spec, bench_nodes(), remembered=remembered)
    plain = problem_from_thrift(spec, bench_nodes())
    assert {pair: delivered(problem)[pair] for pair in rates} == pytest.approx(rates)
    mix = {(s.source, s.target, s.stream_id): s.rate for s in problem.streams if (s.source, s.target) == ("vwap", "join")}
    prior_mix = {(s.source, s.target, s.stream_id): s.rate for s in plain.streams if (s.source, s.target) == ("vwap", "join")}
    assert len(mix) == 2 and mix.keys() == prior_mix.keys()
    first, second = sorted(mix)
    assert mix[first] / mix[second] == pytest.approx(prior_mix[first] / prior_mix[second])
    # (join, filter) has no remembered rate: it is scaled with the matched user streams, not left at the prior.
    scaled = delivered(problem)[("join", "filter")] / delivered(plain)[("join", "filter")]
    assert scaled > 100
    # (vwap, __acker) has none either: the acker's streams follow the remembered user rates.
    assert delivered(problem)[("vwap", "__acker")] > 100 * delivered(plain)[("vwap", "__acker")]


def test_the_handler_remembers_rates_counted_in_tuples_only():
    from storm_planner.metrics.loads_and_traffic import ExecutorFigures, Measurement

    spec = request("bargains-link")
    figures = {e.id: ExecutorFigures(executor=e.id, component=e.component, measured=True) for e in spec.executors}
    kept = {}
    for unit in ("tuples/s", "bytes/s"):
        measured = MeasuredTopology(
            executors=tuple(Executor(id=e.id, component=e.component, load=4.0) for e in spec.executors),
            measurement=Measurement(topology_id="e2e-bargains-link-1-1", executors=figures, traffic={},
                                    component_traffic={("vwap", "join"): 998.0}, unit=unit))
        handler = PlannerHandler(metrics=lambda tid, measured=measured: measured, isolate=False)
        plan_of(handler, "e2e-bargains-link-1-1", {})
        kept[unit] = handler.load_memory.recall("e2e-bargains-link")
        handler.close()
    assert dict(kept["tuples/s"].rates) == {("vwap", "join"): 998.0}
    assert not kept["bytes/s"].rates and kept["bytes/s"].loads


def test_measured_metrics_win_over_the_remembered_loads():
    spec = request("bargains-link")
    measured = MeasuredTopology(executors=tuple(Executor(id=e.id, component=e.component, load=1.5) for e in spec.executors))
    problem = problem_from_thrift(spec, bench_nodes(), measured, remembered=remembered_bargains())
    assert problem.measured and {e.load for e in problem.executors} == {1.5}


@pytest.mark.parametrize("planner", ["topdown", "tasklevel"])
def test_topdown_on_the_remembered_loads_keeps_every_bench_node_within_its_cpu(planner):
    """The property §4 asks of topDown (nodes below their capacity), on the loads that matter: with the
    remembered loads no supervisor of the bench's cluster is planned beyond its quota."""
    problem = problem_from_thrift(request("bargains-link"), bench_nodes(), remembered=remembered_bargains())
    plan = run(problem, planner)
    load = {e.id: e.load for e in problem.executors}
    on_node: dict[str, float] = defaultdict(float)
    for executor, slot in plan.assignments.items():
        on_node[slot.node] += load[executor]
    capacity = dict(SUPERVISORS)
    assert set(on_node) <= set(capacity)
    assert all(on_node[node] <= capacity[node] + 1e-9 for node in on_node), dict(on_node)


def handler_with_metrics_for(topology_id: str, load: float, rates: dict | None = None,
                             plan_log: Path | None = None) -> PlannerHandler:
    """A service whose metrics source has figures for ``topology_id`` alone (with ``rates``: component pairs'
    tuples/s; ``plan_log``: its plan log, beside which it keeps its load memory)."""
    from storm_planner.metrics.loads_and_traffic import ExecutorFigures, Measurement

    spec = request("bargains-link")
    counted = None if rates is None else Measurement(
        topology_id=topology_id, traffic={}, component_traffic=rates,
        executors={e.id: ExecutorFigures(executor=e.id, component=e.component, measured=True) for e in spec.executors})
    measured = MeasuredTopology(executors=tuple(Executor(id=e.id, component=e.component, load=load)
                                                for e in spec.executors), measurement=counted)
    return PlannerHandler(metrics=lambda tid: measured if tid == topology_id else None, isolate=False,
                          plan_log=plan_log)


def plan_of(handler: PlannerHandler, topology_id: str, options: dict[str, str]):
    spec = request("bargains-link", {"planner.algorithm": "topdown", **options})
    spec.id, spec.algorithm = topology_id, "topdown"   # as the plugin sends it (auto would recall by default)
    (plan,) = handler.plan(T.PlanRequest(request_id="r", nodes=bench_nodes(), topologies=[spec],
                                         deadline_ms=10_000)).plans
    return plan


def test_the_service_remembers_a_measured_run_and_a_resubmission_that_asks_starts_from_it():
    handler = handler_with_metrics_for("e2e-bargains-link-1-1", 7.0)
    plan_of(handler, "e2e-bargains-link-1-1", {})          # measured: remembered under the name e2e-bargains-link
    off = plan_of(handler, "e2e-bargains-link-2-2", {})
    on = plan_of(handler, "e2e-bargains-link-3-3", {"planner.loads.remembered": "true"})
    assert off.error is None and on.error is None
    assert any("no metrics for this topology: loads and rates are estimates" in note for note in off.notes)
    assert any(note.startswith("loads of 7 components") and "as measured on e2e-bargains-link-1-1" in note
               for note in on.notes), on.notes
    assert not any("loads and rates are estimates" in note for note in on.notes)
    # The plan was made on the remembered 7 % per executor, not the declared 10 %: the load it places is 0.7 times.
    assert on.figures["cpu_utilisation"] == pytest.approx(0.7 * off.figures["cpu_utilisation"])
    handler.close()


def test_traffic_only_keeps_the_declared_cpu_and_takes_the_remembered_rates():
    """``planner.loads.remembered.cpu: false``: loads measured under one placement overstate a tighter one, so
    the plan may keep Storm's declared CPU and take only what the run says about its traffic."""
    handler = handler_with_metrics_for("e2e-bargains-link-1-1", 7.0, {("vwap", "join"): 998.0})
    plan_of(handler, "e2e-bargains-link-1-1", {})
    declared = plan_of(handler, "e2e-bargains-link-2-2", {})
    traffic = plan_of(handler, "e2e-bargains-link-3-3", {"planner.loads.remembered": "true",
                                                          "planner.loads.remembered.cpu": "false"})
    assert traffic.figures["cpu_utilisation"] == pytest.approx(declared.figures["cpu_utilisation"])
    assert any(note.startswith("rates of 1 component pairs as measured on e2e-bargains-link-1-1")
               and note.endswith("(planner.loads.remembered; CPU as declared)") for note in traffic.notes), traffic.notes
    assert traffic.figures["imc_total"] > 10 * declared.figures["imc_total"]    # 998 tuples/s, not the prior
    handler.close()


# trends at 400 tweets/s as the hook measured it under DefaultScheduler on the bench's cluster (tuples/s).
TRENDS_RATES = {("tweets", "count"): 399.9, ("count", "rank"): 121.0, ("rank", "total"): 1.0,
                ("tweets", "__acker"): 399.9, ("count", "__acker"): 399.7, ("__acker", "tweets"): 397.9}


def crossing(problem, plan) -> float:
    use = problem.traffic_model.network({e: s.node for e, s in plan.assignments.items()})
    return sum(use.values()) / 2


def test_on_remembered_rates_the_local_search_keeps_more_of_trends_traffic_inside_nodes():
    """With the prior's selectivity 1 a count's output weighs as much as its input, and topDown keeps the
    counts with the ranks rather than the ackers. On the measured rates topdown-ls, starting from topDown,
    finds a placement with less traffic between nodes than topDown's first plan (by the same measured
    rates), within the same declared CPU."""
    remembered = RememberedLoads("e2e-trends-link-1-1", {}, {}, 0.0, TRENDS_RATES)
    on_rates = problem_from_thrift(request("trends-link"), bench_nodes(), remembered=remembered)
    on_priors = problem_from_thrift(request("trends-link"), bench_nodes())
    first = run(on_priors, "topdown")
    searched = run(on_rates, "topdown-ls")
    assert crossing(on_rates, searched) < 0.8 * crossing(on_rates, first)


def test_a_memory_of_pairs_the_topology_does_not_have_leaves_the_plan_on_estimates_and_says_so():
    handler = handler_with_metrics_for("e2e-bargains-link-1-1", 7.0, {("gone", "elsewhere"): 50.0})
    plan_of(handler, "e2e-bargains-link-1-1", {})
    traffic = plan_of(handler, "e2e-bargains-link-2-2", {"planner.loads.remembered": "true",
                                                          "planner.loads.remembered.cpu": "false"})
    assert any("loads and rates are estimates" in note for note in traffic.notes), traffic.notes
    assert not any("planner.loads.remembered" in note for note in traffic.notes)
    handler.close()


def test_a_bad_remembered_flag_refuses_the_topology_naming_the_key():
    handler = handler_with_metrics_for("nothing", 7.0)
    plan = plan_of(handler, "e2e-bargains-link-1-1", {"planner.loads.remembered": "sometimes"})
    assert plan.error is not None and "planner.loads.remembered" in plan.error.message
    handler.close()


def trends_measured(topology_id: str, rate: float) -> MeasuredTopology:
    """Trends measured at ``rate`` t/s: the spout 1 % + 0.02 % per tuple, each bolt 2 % + 0.02 % per tuple."""
    from storm_planner.metrics.loads_and_traffic import ExecutorFigures, Measurement

    spec = request("trends-link")
    figures, executors = {}, []
    per_component = {c.id: [e for e in spec.executors if e.component == c.id] for c in spec.components}
    for component, members in per_component.items():
        for e in members:
            processed = rate / len(members)
            load = 1.0 + 0.02 * processed if component == "tweets" else 2.0 + 0.02 * processed
            figures[e.id] = ExecutorFigures(e.id, component, True, load=load, executed_per_s=processed,
                                            emitted_per_s=processed, acked_per_s=rate if component == "tweets" else 0)
            executors.append(Executor(e.id, component, load))
    return MeasuredTopology(executors=tuple(executors),
                            measurement=Measurement(topology_id, figures, {}, {}))


def test_auto_recalls_per_tuple_costs_at_the_peak_rate_and_its_problem_says_how_loads_grow(tmp_path):
    from storm_planner.core.problem import Problem

    runs = {"e2e-trends-link-1-1": iter([trends_measured("e2e-trends-link-1-1", 400.0),
                                         trends_measured("e2e-trends-link-1-1", 900.0)])}
    log = tmp_path / "problems.jsonl"
    handler = PlannerHandler(metrics=lambda tid: next(runs[tid], None) if tid in runs else None, isolate=False,
                             problem_log=log)

    def plan(topology_id: str, algorithm: str | None) -> None:
        spec = request("trends-link")
        spec.id, spec.algorithm = topology_id, algorithm
        (answer,) = handler.plan(T.PlanRequest(request_id="r", nodes=bench_nodes(), topologies=[spec],
                                               deadline_ms=20_000)).plans
        assert answer.error is None, answer.error

    plan("e2e-trends-link-1-1", "topdown")   # measured at 400 t/s
    plan("e2e-trends-link-1-1", "topdown")   # and at 900: two rates, a fit
    plan("e2e-trends-link-2-2", None)        # a resubmission under the service's default: auto
    problems = [json.loads(line) for line in log.read_text().splitlines()]
    assert [p["algorithm"] for p in problems] == ["topdown", "topdown", "auto"]
    measured = Problem.from_dict(problems[1]["problem"])
    assert measured.costs.origin == "measured" and measured.costs.reference_rate == pytest.approx(900.0)
    assert measured.costs.executor_fixed["count"] == pytest.approx(2.0)
    recalled = Problem.from_dict(problems[2]["problem"])
    assert recalled.costs.origin == "remembered" and recalled.costs.reference_rate == pytest.approx(900.0)
    counts = [e.load for e in recalled.executors if e.component == "count"]
    assert counts and all(load == pytest.approx(2.0 + 0.02 * 900 / len(counts)) for load in counts)


def test_a_resubmissions_first_windows_at_one_rate_take_the_fixed_parts_its_last_run_fitted(tmp_path):
    """Word Count on the 2 Mbit/s cluster: auto's arm, placed on the calibration's costs, was re-planned on its
    first window (one rate), where the default fixed part read a worker's idle CPU as per-tuple cost. For a
    topology that asks for remembered loads the memory's fitted parts are the prior; for one that does not,
    the default."""
    from storm_planner.core.problem import Problem
    from storm_planner.metrics.per_tuple import DEFAULT_EXECUTOR_FIXED

    runs = {"e2e-trends-link-1-1": iter([trends_measured("e2e-trends-link-1-1", 400.0),
                                         trends_measured("e2e-trends-link-1-1", 900.0)]),
            "e2e-trends-link-2-2": iter([trends_measured("e2e-trends-link-2-2", 300.0)]),
            "e2e-trends-link-3-3": iter([trends_measured("e2e-trends-link-3-3", 300.0)])}
    log = tmp_path / "problems.jsonl"
    handler = PlannerHandler(metrics=lambda tid: next(runs[tid], None) if tid in runs else None, isolate=False,
                             problem_log=log)

    def plan(topology_id: str, algorithm: str) -> Problem:
        spec = request("trends-link")
        spec.id, spec.algorithm = topology_id, algorithm
        (answer,) = handler.plan(T.PlanRequest(request_id="r", nodes=bench_nodes(), topologies=[spec],
                                               deadline_ms=20_000)).plans
        assert answer.error is None, answer.error
        return Problem.from_dict(json.loads(log.read_text().splitlines()[-1])["problem"])

    plan("e2e-trends-link-1-1", "auto")
    assert plan("e2e-trends-link-1-1", "auto").costs.executor_fixed["count"] == pytest.approx(2.0)  # fitted
    resubmitted = plan("e2e-trends-link-2-2", "auto")    # measured at one rate, 300 t/s
    assert resubmitted.measured and resubmitted.costs.executor_fixed["count"] == pytest.approx(2.0)
    other = plan("e2e-trends-link-3-3", "topdown")       # asks for nothing remembered
    assert other.measured and other.costs.executor_fixed["count"] == pytest.approx(DEFAULT_EXECUTOR_FIXED)
    handler.close()


def test_the_service_tells_the_fit_which_nodes_ran_at_their_quota(tmp_path):
    """The same trends measurements with every executor on i5-a (35 % of a core) and their CPU far above it:
    the node reads at its quota, so the two rates fit no fixed part there (the prior stays), where on nodes with
    room they fit 2 % (the test above)."""
    import dataclasses

    from storm_planner.core.problem import Problem
    from storm_planner.metrics.per_tuple import DEFAULT_EXECUTOR_FIXED

    def on_i5(measured: MeasuredTopology) -> MeasuredTopology:
        figures = {e: dataclasses.replace(f, node="i5-a", cpu_percent=f.load)
                   for e, f in measured.measurement.executors.items()}
        return dataclasses.replace(measured, measurement=dataclasses.replace(measured.measurement, executors=figures))

    runs = iter([on_i5(trends_measured("e2e-trends-link-1-1", 400.0)),
                 on_i5(trends_measured("e2e-trends-link-1-1", 900.0))])
    log = tmp_path / "problems.jsonl"
    handler = PlannerHandler(metrics=lambda tid: next(runs, None), isolate=False, problem_log=log)
    for _ in range(2):
        spec = request("trends-link")
        spec.id, spec.algorithm = "e2e-trends-link-1-1", "topdown"
        (answer,) = handler.plan(T.PlanRequest(request_id="r", nodes=bench_nodes(), topologies=[spec],
                                               deadline_ms=20_000)).plans
        assert answer.error is None, answer.error
    measured = Problem.from_dict(json.loads(log.read_text().splitlines()[-1])["problem"])
    assert measured.costs.executor_fixed["count"] == pytest.approx(DEFAULT_EXECUTOR_FIXED)
    handler.close()
