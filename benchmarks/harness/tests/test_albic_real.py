"""``storm-planner bench albic-real`` without a cluster: its options, the per-period figures from fixture
windows, counters and plan-log records, and the report (the smoke test runs the report too)."""
from __future__ import annotations

import argparse
import dataclasses
import json
import math

import pytest

from storm_planner.metrics.windows import Flow, TaskWindow
from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.albic_real import experiment as albic_real
from storm_planner_bench.albic_real.series import (
    Collocation,
    Counters,
    Sample,
    load_distance,
    moves,
    period_row,
    task_nodes,
)
from storm_planner_bench.common.cellfile import read_cells


def args(**given) -> argparse.Namespace:
    values = {name: None for name in ("job", "rate", "period", "periods", "drift", "budget", "parallelism", "start",
                                      "settle", "drain", "start_timeout")}
    return argparse.Namespace(**{**values, "quick": False, "seed": 1, **given})


# -- options ----------------------------------------------------------------------------------------------------

def test_settings_take_the_defaults_the_quick_ones_and_what_is_given():
    full = albic_real.settings_of(args())
    assert (full.job, full.period_s, full.periods, full.rate, full.budget, full.start) == (3, 120.0, 8, 40.0, 3, "spread")
    assert full.drift_every == 9_600 and full.feed_records() >= 40.0 * (30 + 960)
    quick = albic_real.settings_of(args(quick=True, job=2, budget=5))
    assert (quick.job, quick.period_s, quick.periods, quick.rate, quick.budget) == (2, 60.0, 3, 30.0, 5)
    assert albic_real.settings_of(args(drift=0)).drift_every == 0


@pytest.mark.parametrize("given, message", [
    ({"job": 5}, "airline jobs are 2, 3 and 4"), ({"period": 0}, "--period must be positive"),
    ({"periods": 0}, "--periods must be positive"), ({"budget": -1}, "must not be negative"),
    ({"start": "nope"}, "--start 'nope'"),
])
def test_bad_settings_are_refused_naming_the_option(given, message):
    with pytest.raises(ValueError, match=message):
        albic_real.settings_of(args(**given))


def test_contenders_carry_the_options_that_make_them():
    settings = albic_real.settings_of(args())
    by = {c.label: c for c in albic_real.parse_contenders("default, ras,potc,planner:albic,planner:cola", settings)}
    assert [by[s].scheduler.nimbus for s in by] == ["default", "resource-aware", "default", "planner", "planner"]
    assert by["default"].options == {} and by["ras"].options == {}
    # PoTC: partial key grouping on Job 3's fields-grouped inputs, nothing of Job 4's.
    assert by["potc"].options == {"airline.grouping.extract": "partial_key:tail_num",
                                  "airline.grouping.plane_delays": "partial_key:tail_num",
                                  "airline.grouping.route_delays": "partial_key:origin,dest"}
    albic, cola = by["planner:albic"].options, by["planner:cola"].options
    assert albic["planner.max.migrations"] == 3 and "planner.max.migrations" not in cola   # COLA: from scratch
    for options in (albic, cola):
        assert options["planner.replan.trust"] is True and options["planner.replan.period.secs"] == 120.0
        assert options["planner.replan.settle.secs"] == 60.0
        assert options["planner.initial.algorithm"] == "spread"
        assert options["planner.replan.threshold"] > 100   # only the period triggers
    own = albic_real.parse_contenders("planner:albic", albic_real.settings_of(args(start="own")))[0]
    assert "planner.initial.algorithm" not in own.options
    job2 = albic_real.parse_contenders("potc", albic_real.settings_of(args(job=2)))[0]
    assert set(job2.options) == {"airline.grouping.extract", "airline.grouping.plane_delays"}
    assert albic_real.job_options(albic_real.settings_of(args(job=2))) == {
        "topology.component.cpu.pcore.percent": albic_real.DECLARED_CPU,
        "airline.parallelism.extract": 4, "airline.parallelism.plane_delays": 4}


@pytest.mark.parametrize("text, message", [("planner:nope", "no planner 'nope'"), ("magic", "not default"),
                                           ("ras+nohook", "metrics hook"),
                                           ("planner:albic+nohook+max_pl=50", "metrics hook"), (" , ", "none given")])
def test_bad_schedulers_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        albic_real.parse_contenders(text, albic_real.settings_of(args()))


def test_the_job_is_an_e2e_workload_with_its_feeds():
    workload = albic_real.job_workload(albic_real.settings_of(args(job=4)))
    assert workload.topology == "airline_job4" and workload.feed_kind == "airline"
    assert set(workload.feed_paths) == {"flights_feed", "weather_feed"}
    assert {"weather", "rainscore", "join", "courier", "store_courier"} <= set(workload.cpu)
    # What every executor declares (4 ackers among them) fits the e2e cluster's 160 % with room: RAS places it.
    settings = albic_real.settings_of(args(job=4))
    executors = 4 + sum(settings.parallelism if f"airline.parallelism.{c}" in albic_real.job_options(settings)
                        else (2 if c == "rainscore" else 1) for c in workload.cpu)
    assert executors == 31 and executors * albic_real.DECLARED_CPU <= 0.8 * 160


# -- the per-period figures -----------------------------------------------------------------------------------

def window(task: int, component: str, seq: int, end_ms: int, sent=()) -> TaskWindow:
    return TaskWindow(topology="t", component=component, task=task, seq=seq, start_ms=end_ms - 10_000, end_ms=end_ms,
                      period_s=10.0, sent=tuple(Flow(stream, target, tuples, tuples) for stream, target, tuples in sent))


def job_windows(seq: int, end_ms: int) -> dict[int, TaskWindow]:
    """flights (1) -> extract (2, 3) -> plane_delays (4, 5) one to one; acks to __acker (9)."""
    return {1: window(1, "flights", seq, end_ms, [("default", 2, 500), ("default", 3, 500)]),
            2: window(2, "extract", seq, end_ms, [("default", 4, 300), ("__ack_ack", 9, 300)]),
            3: window(3, "extract", seq, end_ms, [("default", 5, 100)]),
            4: window(4, "plane_delays", seq, end_ms), 5: window(5, "plane_delays", seq, end_ms),
            9: window(9, "__acker", seq, end_ms)}


def test_task_nodes_unfold_executor_ranges():
    assert task_nodes([{"executor": "[1-1]", "node": "a"}, {"executor": "[2-4]", "node": "b"}]) == {
        1: "a", 2: "b", 3: "b", 4: "b"}


def test_collocation_counts_operator_tuples_once_per_window_in_their_period():
    nodes = {1: "a", 2: "a", 3: "b", 4: "a", 5: "c", 9: "a"}   # extract 2 beside plane 4; 3 apart from 5
    period = Collocation()
    for _ in range(2):   # the same windows read twice count once
        period.add(Sample(job_windows(1, 15_000), nodes), {"flights"}, 10_000, 20_000)
    assert (period.local, period.total) == (300, 400)   # spout and ack tuples left out
    assert period.factor == pytest.approx(0.75)
    period.add(Sample(job_windows(2, 25_000), nodes), {"flights"}, 10_000, 20_000)   # ended after the period
    assert period.total == 400
    later = Collocation()
    later.add(Sample(job_windows(2, 25_000), {**nodes, 5: "b"}), {"flights"}, 20_000, 30_000)   # 5 moved beside 3
    assert later.factor == 1.0
    assert math.isnan(Collocation().factor)


def test_load_distance_is_the_largest_gap_to_the_clusters_load():
    # a: 9 CPU s of 45 % x 40 s = 50 %; b: 3.5 of 35 % x 40 s = 25 %; cluster 12.5 / 32 = 39.06 %.
    assert load_distance({"a": 9.0, "b": 3.5}, {"a": 45.0, "b": 35.0}, 40.0) == pytest.approx(100 * 12.5 / 32 - 25)
    assert load_distance({"a": 4.0, "b": 4.0}, {"a": 50.0, "b": 50.0}, 10.0) == 0.0
    assert math.isnan(load_distance({}, {}, 10.0))


def test_moves_count_executors_moved_by_the_plans_of_the_period():
    def plan(at: float, **slots: str) -> dict:
        return {"time": at, "assignments": slots, "figures": {"collocation_factor": at / 100}}

    plans = [plan(5.0, e1="a:1", e2="b:1", e3="c:1"), plan(15.0, e1="a:1", e2="a:1", e3="c:1"),
             plan(18.0, e1="a:1", e2="a:1", e3="c:1"), plan(25.0, e1="b:1", e2="b:1", e3="a:1")]
    assert moves(plans, 10.0, 20.0) == {"migrations": 1, "replans": 1, "planned_collocation": 0.18}
    assert moves(plans, 20.0, 30.0) == {"migrations": 3, "replans": 1, "planned_collocation": 0.25}
    nothing = moves(plans, 30.0, 40.0)
    assert nothing["migrations"] == 0 and math.isnan(nothing["planned_collocation"])
    assert moves([plan(0.0, e1="a:1")], 0.0, 1.0)["planned_collocation"] == 0.0   # a planned 0 is a figure


def test_a_period_row_from_counters_and_the_spouts_times():
    times = TupleTimes(emitted={f"m{i}": 100.0 + i * 0.1 for i in range(200)},
                       acked={f"m{i}": 100.05 + i * 0.1 for i in range(200)},
                       emits_at=[100.0 + i * 0.1 for i in range(200)])
    before = Counters(100.0, {"a": 10.0, "b": 10.0}, {"a": 0, "b": 0})
    after = Counters(120.0, {"a": 14.5, "b": 13.5}, {"a": 1_000_000, "b": 1_500_000})
    period = Collocation(local=30, total=40)
    row = period_row(before, after, {"a": 45.0, "b": 35.0}, period, times, reference_cpu_s=None)
    assert row["seconds"] == 20.0 and row["collocation_factor"] == 0.75 and row["load_index"] == 1.0
    assert row["cpu_pct"] == 40.0 and row["processed_tps"] == 10.0 and row["emitted_tps"] == 10.0
    assert row["latency_p99_ms"] == pytest.approx(50.0, abs=0.1)
    assert row["link_mbytes"] == 2.5 and row["link_mbit"] == 1.0
    assert row["load_a_pct"] == 50.0 and row["load_b_pct"] == 50.0 and row["load_distance"] == 0.0
    assert row["cpu_ms_per_tuple"] == 40.0
    assert (row["failed"], row["replayed"]) == (0, 0)
    halved = period_row(before, after, {"a": 45.0, "b": 35.0}, period, times, reference_cpu_s=0.8)
    assert halved["load_index"] == 0.5


def test_a_period_counts_the_fails_and_replays_inside_it():
    """A move restarts workers: m0 and m1 time out (fail at 112 and 125) and are emitted again at 113 and
    126; the period [100, 120) counts one of each, the next the other."""
    times = TupleTimes(emitted={"m0": 101.0, "m1": 102.0, "m2": 103.0}, acked={"m0": 113.5, "m1": 126.5, "m2": 103.1},
                       emits_at=[101.0, 102.0, 103.0, 113.0, 126.0], failed_at=[112.0, 125.0])
    counters = [Counters(at, {"a": 0.0}, {"a": 0}) for at in (100.0, 120.0, 140.0)]
    rows = [period_row(b, a, {"a": 45.0}, Collocation(), times, None) for b, a in zip(counters, counters[1:])]
    assert [(r["failed"], r["replayed"]) for r in rows] == [(1, 1), (1, 1)]


def test_a_period_p99_from_the_due_time_counts_the_time_a_paused_spout_held_tuples_back():
    """A drained re-plan pauses the spout from 105 to 135: the 100 tuples due then are emitted at 135 and
    acked 50 ms later. From the emit they look quick; from the due time they waited up to 30 s. The period
    [100, 120) holds the 50 due in it; the emit-to-ack p99 of those first emitted in it sees none of them."""
    due = {f"m{i}": 105.0 + i * 0.3 for i in range(100)}
    times = TupleTimes(emitted={m: 135.0 for m in due}, acked={m: 135.05 for m in due}, due=due,
                       emits_at=[135.0] * 100)
    counters = [Counters(at, {"a": 0.0}, {"a": 0}) for at in (100.0, 120.0, 140.0)]
    first, second = (period_row(b, a, {"a": 45.0}, Collocation(), times, None) for b, a in zip(counters, counters[1:]))
    assert math.isnan(first["latency_p99_ms"]) and first["latency_due_p99_ms"] > 29_000
    assert second["latency_p99_ms"] == pytest.approx(50.0, abs=0.1)
    assert 14_800 < second["latency_due_p99_ms"] < 15_050   # due 120.0-134.7, acked 135.05


# -- the run loop, its cluster calls stood in for ------------------------------------------------------------

class _Account:
    def __init__(self, per_s: float) -> None:
        import time

        self.per_s, self.started = per_s, time.time()

    def usage_ns(self) -> int:
        import time

        return int((time.time() - self.started) * self.per_s * 1e9)


def test_a_run_turns_windows_counters_and_plans_into_one_row_per_period(tmp_path, monkeypatch):
    """``run_one`` on stand-ins for the cluster (no Storm here; the cluster test runs the real one): each
    period gets its windows, its CPU, its plans; the submission carries the contender's options."""
    import json
    import time
    from types import SimpleNamespace

    from storm_planner.cluster import nimbus_restart
    from storm_planner.metrics import windows as windows_module
    from storm_planner_bench.common import cluster as cluster_common
    from storm_planner_bench.e2e import cells as e2e_cells

    submitted = {}
    monkeypatch.setattr(albic_real, "SAMPLE_S", 0.05)
    monkeypatch.setattr(nimbus_restart, "switch_scheduler", lambda cluster, scheduler: False)
    monkeypatch.setattr(cluster_common, "kill_and_wait", lambda *a, **k: None)
    monkeypatch.setattr(e2e_cells, "submit_workload", lambda bench, workload, rate, scheduler, scratch, job, extra:
                        submitted.update(extra, topology=workload.topology) or SimpleNamespace(id="job2-1"))
    monkeypatch.setattr(e2e_cells, "wait_first_ack", lambda directory, deadline: True)
    monkeypatch.setattr(windows_module, "fetch_windows",
                        lambda hosts, topology: job_windows(int(time.time() * 10), int(time.time() * 1000) - 1))
    started = time.time()
    emitted = {f"m{i}": started + i * 0.01 for i in range(300)}
    monkeypatch.setattr(e2e_cells, "drain", lambda directory, seconds: TupleTimes(
        emitted=emitted, acked={m: at + 0.02 for m, at in emitted.items()}))
    plan_log = tmp_path / "plans.jsonl"
    plan_log.write_text("".join(json.dumps({"event": "plan", "topology": "job2-1", "time": at, "error": None,
                                            "assignments": {"[2-2]": slot}, "figures": {}}) + "\n"
                                for at, slot in ((started, "a:1"), (started + 0.5, "b:1"))))
    cluster = SimpleNamespace(addresses=SimpleNamespace(zookeeper="zk:2181"), network=None, plan_log=plan_log,
                              assignment=lambda topology: [{"executor": "[1-3]", "node": "a"},
                                                           {"executor": "[4-9]", "node": "b"}],
                              description=SimpleNamespace(supervisors=[SimpleNamespace(name="a", cpu=50.0, held_cpu=50.0),
                                                                       SimpleNamespace(name="b", cpu=50.0, held_cpu=50.0)]))
    bench = SimpleNamespace(cluster=cluster, accounts={"a": _Account(0.3), "b": _Account(0.1)}, work=tmp_path / "w",
                            out=tmp_path / "out", progress=lambda message: None, nimbus="n:6627")
    settings = albic_real.Settings(job=2, rate=100.0, period_s=0.4, periods=3, settle_s=0.0, drain_s=0.0)
    real_sleep = time.sleep   # the short waits between samples are real; the wait for the last windows is not
    monkeypatch.setattr(time, "sleep", lambda seconds: None if seconds > 1 else real_sleep(seconds))
    (contender,) = albic_real.parse_contenders("planner:albic", settings)
    rows = albic_real.run_one(bench, settings, contender, 1)
    assert [r["period"] for r in rows] == [1, 2, 3] and {r["status"] for r in rows} == {"ran"}
    assert submitted["topology"] == "airline_job2" and submitted["planner.max.migrations"] == 3
    assert submitted["airline.parallelism.extract"] == 4
    # extract 2 (a) -> plane 4 (b) 300 tuples, extract 3 (a) -> plane 5 (b) 100: nothing collocated.
    assert all(r["collocation_factor"] == 0.0 and r["operator_tuples"] > 0 for r in rows), rows
    assert rows[0]["load_index"] == 1.0 and all(abs(r["load_index"] - 1.0) < 0.3 for r in rows)
    assert all(abs(r["load_distance"] - 20.0) < 4.0 for r in rows), rows   # 60 % and 20 % of the quotas
    assert sum(r["migrations"] for r in rows) == 1
    (record,) = read_cells(tmp_path / "out").values()   # the run's plans, kept to see why
    assert [plan["assignments"] for plan in record["plans"]] == [{"[2-2]": "a:1"}, {"[2-2]": "b:1"}]
    # Every figure has its column in periods.csv (a key without one would stop the run at its first row).
    from storm_planner_bench.common.report import append_csv, read_csv

    for row in rows:
        append_csv(tmp_path / "periods.csv", albic_real.columns(["a", "b"]), row)
    header, written = read_csv(tmp_path / "periods.csv")
    assert len(written) == 3 and set(rows[0]) <= set(header)



def test_a_run_whose_every_plan_was_refused_ran_on_defaultschedulers_placement():
    refused = {"event": "plan", "error": "infeasible: no slots"}
    plans, status = albic_real.planned([refused, refused], "ran")
    assert plans == [] and status.startswith("ran on DefaultScheduler's placement: the planner answered infeasible")
    answered = {"event": "plan", "error": None, "assignments": {}}
    assert albic_real.planned([refused, answered], "ran") == ([answered], "ran")
    assert albic_real.planned([], "ran") == ([], "ran")          # DefaultScheduler, PoTC: no service at all


def test_a_rerun_resumes_only_a_file_of_its_own_columns_and_settings(tmp_path):
    from storm_planner_bench.common.report import append_csv

    header = albic_real.columns(["a", "b"])
    settings = albic_real.Settings()
    path = tmp_path / "periods.csv"
    append_csv(path, header, {"job": 3, "scheduler": "default", "repetition": 1, "period": 1, "status": "ran"})
    (tmp_path / albic_real.SETTINGS_FILE).write_text(json.dumps(dataclasses.asdict(settings)))
    assert albic_real.finished_runs(path, header, settings) == {("3", "default", "1")}
    with pytest.raises(ValueError, match="not this cluster's"):
        albic_real.finished_runs(path, albic_real.columns(["a", "c"]), settings)
    with pytest.raises(ValueError, match="ran with the settings in .*settings.json, not these"):
        albic_real.finished_runs(path, header, dataclasses.replace(settings, rate=30.0, periods=3))
    # Waiting longer for a start or a drain shapes no figure: the run resumes.
    assert albic_real.finished_runs(path, header, dataclasses.replace(settings, start_s=300.0, drain_s=90.0)) == {
        ("3", "default", "1")}


def test_a_file_from_before_the_added_columns_is_widened_on_resume_not_refused(tmp_path):
    from storm_planner_bench.common.report import append_csv, read_csv

    header = albic_real.columns(["a", "b"])
    older = [c for c in header if c not in albic_real.ADDED]
    path = tmp_path / "periods.csv"
    append_csv(path, older, {"job": 3, "scheduler": "default", "repetition": 1, "period": 1, "status": "ran",
                             "load_a_pct": 40.0})
    settings = albic_real.Settings()
    (tmp_path / albic_real.SETTINGS_FILE).write_text(json.dumps(dataclasses.asdict(settings)))
    with pytest.raises(ValueError, match="ran with the settings"):   # refused: the file stays as it was
        albic_real.finished_runs(path, header, dataclasses.replace(settings, rate=30.0))
    assert read_csv(path)[0] == older
    assert albic_real.finished_runs(path, header, settings) == {("3", "default", "1")}
    found, rows = read_csv(path)
    assert found == header and (rows[0]["load_a_pct"], rows[0]["failed"], rows[0]["replayed"]) == ("40.0", "", "")


def test_a_file_with_some_of_the_added_columns_is_widened_and_one_with_others_refused(tmp_path):
    from storm_planner_bench.common.report import append_csv, read_csv

    header = albic_real.columns(["a", "b"])
    path = tmp_path / "periods.csv"
    append_csv(path, [c for c in header if c != "latency_due_p99_ms"],
               {"job": 3, "scheduler": "ras", "repetition": 1, "period": 1, "status": "ran", "failed": 2})
    assert albic_real.finished_runs(path, header, albic_real.Settings()) == {("3", "ras", "1")}
    found, rows = read_csv(path)
    assert found == header and (rows[0]["failed"], rows[0]["latency_due_p99_ms"]) == ("2", "")
    other = tmp_path / "other.csv"
    append_csv(other, [c for c in header if c != "load_b_pct"], {"job": 3, "scheduler": "ras", "repetition": 1})
    with pytest.raises(ValueError, match="columns are not this cluster's"):
        albic_real.finished_runs(other, header, albic_real.Settings())


def test_a_run_that_never_started_is_run_again_and_its_rows_give_way(tmp_path):
    from storm_planner_bench.common.report import append_csv, read_csv

    header = albic_real.columns(["a", "b"])
    path = tmp_path / "periods.csv"
    for scheduler, status in (("default", "ran"), ("planner:albic", "no tuple acked within 180 s"),
                              ("ras", "not scheduled: no slots")):
        append_csv(path, header, {"job": 3, "scheduler": scheduler, "repetition": 1, "period": 1, "status": status})
    done = albic_real.finished_runs(path, header, albic_real.Settings())
    assert done == {("3", "default", "1"), ("3", "ras", "1")}   # unscheduled is an outcome; no ack is retried
    with path.open("a") as cut:   # a line a kill cut short, the next row glued to it
        cut.write("3,planner:cola,2")
    append_csv(path, header, {"job": 3, "scheduler": "planner:cola", "repetition": 3, "period": 1, "status": "ran"})
    albic_real._drop_runs(path, header, {("3", "planner:albic", "1")})
    found, rows = read_csv(path)
    assert found == header and [r["scheduler"] for r in rows] == ["default", "ras", "planner:cola"]


def test_a_run_without_a_first_ack_ends_at_once_with_its_status(tmp_path, monkeypatch):
    """Eight periods of two minutes would be waited out for nothing: the run returns its status row."""
    import time

    from storm_planner_bench.e2e import cells as e2e_cells

    monkeypatch.setattr(e2e_cells, "wait_first_ack", lambda directory, deadline: False)
    monkeypatch.setattr(time, "sleep", lambda seconds: pytest.fail(f"slept {seconds} s after no ack"))
    rows = albic_real._measure(None, albic_real.Settings(start_s=5.0), "t-1", tmp_path, "n")
    assert rows == [{"period": 0, "status": "no tuple acked within 5 s"}]


def test_the_planners_run_first_by_default():
    labels = [c.label for c in albic_real.parse_contenders(albic_real.DEFAULT_SCHEDULERS, albic_real.Settings())]
    assert labels[:2] == ["planner:albic", "planner:cola"] and set(labels[2:]) == {"default", "potc", "ras"}


def test_runs_that_did_not_run_as_asked_stay_out_of_the_summary(tmp_path):
    """One run at 5 points of load distance; two that acked nothing in time measured 60: the median is 5."""
    from storm_planner_bench.albic_real.report import write_report
    from storm_planner_bench.common.report import append_csv

    header = albic_real.columns(["a", "b"])
    for repetition, distance, status in ((1, 5.0, "ran"), (2, 60.0, "no tuple acked within 180 s"),
                                         (3, 60.0, "no tuple acked within 180 s")):
        for period in (1, 2):
            append_csv(tmp_path / "periods.csv", header,
                       {"job": 3, "scheduler": "planner:albic", "repetition": repetition, "period": period,
                        "status": status, "load_distance": distance, "load_index": 1.0, "migrations": 0,
                        "collocation_factor": 0.5, "link_mbit": 1.0, "processed_tps": 40, "latency_p99_ms": 90})
    append_csv(tmp_path / "periods.csv", header, {"job": 3, "scheduler": "ras", "repetition": 1, "period": 0,
                                                  "status": "not scheduled: no slots"})
    with (tmp_path / "periods.csv").open("a") as cut:   # lines cut short by a kill, the next row after each
        cut.write("3,planner:albic,2")
    append_csv(tmp_path / "periods.csv", header, {"job": 3, "scheduler": "planner:albic", "repetition": 6,
                                                  "period": 1, "status": "ran", "load_distance": 5.0})
    with (tmp_path / "periods.csv").open("a") as cut:
        cut.write("3,planner:albic,4,1,99")
    append_csv(tmp_path / "periods.csv", header, {"job": 3, "scheduler": "planner:albic", "repetition": 5,
                                                  "period": 1, "status": "ran", "load_distance": 5.0})
    (report,) = write_report(tmp_path, "storm-planner bench albic-real")
    summary = report.read_text().split("| scheduler | runs |")[1].split("\n\n")[0]
    (row,) = [line for line in summary.splitlines() if line.startswith("| planner:albic |")]
    assert row.split(" | ")[1] == "1 of 4" and row.split(" | ")[4] == "5.0"   # the glued lines: no period, rep. 4
    (ras,) = [line for line in summary.splitlines() if line.startswith("| ras |")]
    assert ras.split(" | ")[1:8] == ["0 of 1", "–", "–", "–", "–", "–", "–"]   # no period: no figure, not 0
    every = report.read_text().split("## Every period")[1]
    assert "| no tuple acked within 180 s |" in every


def test_the_report_sets_the_periods_with_moves_beside_those_without(tmp_path):
    """albic moved in periods 2 and 3 (p99 from the due time 30 and 20 s) and not in 1 and 4 (0.1, 0.2 s);
    ras never moved and gets no row."""
    from storm_planner_bench.albic_real.report import write_report
    from storm_planner_bench.common.report import append_csv

    header = albic_real.columns(["a"])
    for scheduler, moved_per_period, due in (("planner:albic", (0, 2, 3, 0), (100, 30_000, 20_000, 200)),
                                             ("ras", (0, 0, 0, 0), (90, 90, 90, 90))):
        for period, (moved, p99) in enumerate(zip(moved_per_period, due), start=1):
            append_csv(tmp_path / "periods.csv", header,
                       {"job": 3, "scheduler": scheduler, "repetition": 1, "period": period, "status": "ran",
                        "migrations": moved, "latency_p99_ms": 50, "latency_due_p99_ms": p99,
                        "failed": 4 * moved if period < 4 else ""})
    (report,) = write_report(tmp_path, "storm-planner bench albic-real")
    section = report.read_text().split("## Latency in the periods with moves")[1].split("##")[0]
    rows = [line.rstrip(" |").split(" | ") for line in section.splitlines() if line.startswith("| planner:albic")]
    assert [r[1:8] for r in rows] == [["with moves", "2", "50", "50", "25,000", "30,000", "10"],
                                      ["without", "2", "50", "50", "150", "200", "0"]]
    # period 4 predates the failed column: no 0 of it (the mean of period 1's 0 alone)
    assert "| ras |" not in section
    assert (tmp_path / "job3.png").stat().st_size > 0
