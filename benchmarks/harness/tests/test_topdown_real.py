"""``storm-planner bench topdown-real`` without a cluster: the options refused, the cells planned per CPU
scale, the IMC gain, ``+noreplan`` and TD-RC's options reaching the topology, a rate schedule that runs
every step where a ramp stops, the resumable steps.csv, and the report written from hand-made cells and
steps."""
from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from storm_planner import cli
from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.common.cellfile import read_cells
from storm_planner_bench.common.report import append_csv
from storm_planner_bench.e2e import experiment as e2e
from storm_planner_bench.e2e import ramp as e2e_ramp
from storm_planner_bench.e2e.cells import Bench, Timing, Window
from storm_planner_bench.e2e.workloads import TRENDS_LINK, parse_scheduler
from storm_planner_bench.topdown_real import experiment as topdown_real
from storm_planner_bench.topdown_real.report import gain_of, imc_gain, write_report

SUPERVISORS = ["i7-a", "i5-a"]


def options(**given) -> argparse.Namespace:
    """The command's defaults, as its parser and handler leave them, with ``given`` on top."""
    parser = argparse.ArgumentParser()
    for arg in topdown_real.BENCHMARKS[0].arguments:
        parser.add_argument(*arg.flags, **arg.options)
    args = parser.parse_args([])
    args.settle, args.measure, args.drain = 90.0, 40.0, 60.0
    for key, value in given.items():
        setattr(args, key, value)
    return args


def test_scales_schedules_and_schedulers_are_checked_with_the_option_named():
    assert topdown_real.parse_scales("1.5, 0.75,1") == [0.75, 1.0, 1.5]
    for bad, says in (("big", "'big' is not a number"), ("0", "between 0.05 and 20"), ("nan", "between"),
                      ("inf", "between"), ("1,1", "gives a scale twice"), ("", "'' is not a number")):
        with pytest.raises(ValueError, match=f"--cpu-scales: .*{says}"):
            topdown_real.parse_scales(bad)
    assert topdown_real.parse_schedule("400,200,400,600,300") == [400.0, 200.0, 400.0, 600.0, 300.0]
    for bad, says in (("400", "is one rate"), ("400,fast", "'fast' is not a number"), ("400,-1", "positive"),
                      ("400,nan", "positive")):
        with pytest.raises(ValueError, match=f"--rate-schedule: .*{says}"):
            topdown_real.parse_schedule(bad)
    with pytest.raises(ValueError, match="no planner 'topdwn'"):
        topdown_real.parse_schedulers("default,planner:topdwn")
    with pytest.raises(ValueError, match="--rate-schedulers: none given"):
        topdown_real.parse_schedulers(" , ", "--rate-schedulers")
    with pytest.raises(ValueError, match="names a scheduler twice"):
        topdown_real.parse_schedulers("default,planner:topdown,default")
    with pytest.raises(ValueError, match=r"\+noreplan, \+resumable, \+correct, \+remembered, \+remembered-traffic, "
                                         r"\+rebalance and \+KEY=VALUE are for planner:NAME alone"):
        parse_scheduler("ras+noreplan")


def test_a_bad_option_exits_2_naming_it_before_any_cluster_starts(tmp_path, capsys, monkeypatch):
    from storm_planner.cluster.launcher import LocalCluster

    def no_cluster(self):   # a check that regressed would start a real cluster here, beside any other
        raise AssertionError("a cluster started before the options were checked")

    monkeypatch.setattr(LocalCluster, "up", no_cluster)
    out = str(tmp_path / "run")
    for argv, says in ((["--cpu-scales", "0.75,x"], "--cpu-scales: 'x' is not a number"),
                       (["--part", "rates", "--rate-schedule", "400"], "--rate-schedule: '400' is one rate"),
                       (["--schedulers", "default,fifo"], "'fifo' is not default, ras or planner:NAME"),
                       (["--repeat", "0"], "--repeat must be at least 1"),
                       (["--part", "rates", "--step", "0"], "--step must be"),
                       (["--part", "rates", "--feed-records", "1000"], "give 256,000 or more"),
                       (["--part", "rates", "--rates-cpu-scale", "0"], "--rates-cpu-scale"),
                       (["--rates-workload", "trends-link,bargains-link"], "--rates-workload takes one workload")):
        assert cli.main(["bench", "topdown-real", *argv, "--out", out]) == 2, argv
        assert says in capsys.readouterr().err, argv
    assert not Path(out).exists()
    # A steps.csv of another schedule is refused before the capacity part's hours, not after them.
    steps = Path(out) / "rates" / "steps.csv"
    header = topdown_real.step_columns(["i7-a", "i7-b", "i5-a", "i5-b"])
    append_csv(steps, header, step_row("default", 1, 1, 300.0, 600.0))
    assert cli.main(["bench", "topdown-real", "--out", out]) == 2
    assert "ran the schedule 300, not 400,200,400,600,300: use another --out" in capsys.readouterr().err


def test_each_scale_runs_e2e_cells_in_e2e_order_into_its_own_folder(tmp_path):
    args = options(out=str(tmp_path / "td"), cpu_scales="1.5,0.75")
    plans = topdown_real.plan_capacity(args)
    assert [scale for scale, _, _ in plans] == [0.75, 1.5]
    for scale, scale_args, cells in plans:
        assert Path(scale_args.out) == tmp_path / "td" / "capacity" / f"cpu-{scale:g}"
        assert scale_args.cpu_scale == scale and not scale_args.stepped and scale_args.rate is None
        assert len(cells) == 2 * 4 * 2          # workloads x schedulers x repetitions
        assert [(w.name, s, r) for w, _, s, r in cells[:5]] == [
            ("trends-link", "default", 1), ("trends-link", "ras", 1), ("trends-link", "planner:tasklevel", 1),
            ("trends-link", "planner:topdown", 1), ("bargains-link", "default", 1)]
        assert {rate for w, rate, _, _ in cells if w.name == "bargains-link"} == {200.0}
        # The folder's own command reproduces (resumes, reports) the scale with bench e2e alone.
        command = e2e.e2e_command(scale_args)
        assert command.startswith("storm-planner bench e2e --workloads trends-link,bargains-link")
        assert f"--cpu-scale {scale:g} --quotas-as-described" in command and "--settle 90" in command
        # The schedulers see the scaled capacity; the quotas hold each node to what it has.
        described = {s.name: s.cpu for s in e2e.run_description(argparse.Namespace(**{**vars(scale_args),
                                                                                    "cpu_scale": None})).supervisors}
        nodes = e2e.run_description(scale_args).supervisors
        assert {n.name: n.cpu for n in nodes} == pytest.approx({k: v * scale for k, v in described.items()})
        assert {n.name: n.held_cpu for n in nodes} == described
        # Reproduced alone, the folder's command runs the same cluster.
        again = e2e.with_cluster_flags(argparse.Namespace(cluster="x", link_mbit=None, cpu_scale=None), command)
        assert {n.name: n.held_cpu for n in e2e.run_description(again).supervisors} == described
    scaled = topdown_real.plan_capacity(options(out=str(tmp_path / "q"), cpu_scales="1.5", scale_quotas=True))
    (_, scaled_args, _), = scaled
    assert "--quotas-as-described" not in e2e.e2e_command(scaled_args)
    assert all(n.held_cpu == n.cpu for n in e2e.run_description(scaled_args).supervisors)
    quick = topdown_real.plan_capacity(options(out=str(tmp_path), cpu_scales="1", quick=True, repeat=1))
    assert {rate for _, _, cells in quick for _, rate, _, _ in cells} == {60.0, 40.0}


def test_the_default_run_is_estimated_from_its_cells_and_steps(tmp_path):
    # A fresh folder: the estimate counts only what is not yet saved (the repository's own run is).
    minutes = topdown_real.estimate_minutes(options(out=str(tmp_path / "fresh")), ["capacity", "rates"])
    capacity = 3 * 90 + 48 * (100 + 90 + 40)
    rates = 90 + 6 * (100 + 90 + 5 * 40 + 4 * 80)
    assert minutes == pytest.approx((capacity + rates) / 60)


def test_the_estimate_leaves_out_what_is_saved(tmp_path):
    args = options(out=str(tmp_path / "td"), cpu_scales="1,1.5", repeat=1)
    (_, one, cells), (_, other, _) = topdown_real.plan_capacity(args)
    header = e2e.columns(SUPERVISORS)
    for workload, rate, scheduler, repetition in cells:   # every cell of scale 1 saved: its cluster never starts
        e2e.append_cell(Path(one.out) / "cells.csv", header, {"workload": workload.name, "rate": f"{rate:g}",
                                                              "scheduler": scheduler, "repetition": repetition})
    e2e.append_cell(Path(other.out) / "cells.csv", header, {"workload": "trends-link", "rate": "400",
                                                            "scheduler": "default", "repetition": 1})
    left = topdown_real.estimate_minutes(args, ["capacity"])
    assert left == pytest.approx((90 + 7 * (100 + 90 + 40)) / 60)
    # Rates: a run saved counts only when it is one of this schedule's (another repetition's does not).
    steps = Path(args.out) / "rates" / "steps.csv"
    append_csv(steps, topdown_real.step_columns(SUPERVISORS), step_row("default", 1, 1, 400.0, 600.0))
    append_csv(steps, topdown_real.step_columns(SUPERVISORS), step_row("default", 7, 1, 400.0, 600.0))
    one = 100 + 90 + 5 * 40 + 4 * 80
    assert topdown_real.estimate_minutes(args, ["rates"]) == pytest.approx((90 + 2 * one) / 60)


def test_a_folder_whose_cells_ran_on_other_nodes_is_refused_before_any_cluster(tmp_path, capsys):
    """Cells of a run whose quotas scaled with the declared CPU are not these: skipped as done, they would
    be reported as held to the described CPU."""
    out = tmp_path / "td"
    (_, scaled, _), = topdown_real.plan_capacity(options(out=str(out), cpu_scales="1.5", scale_quotas=True))
    Path(scaled.out).mkdir(parents=True)
    topdown_real._save_nodes(Path(scaled.out), e2e.run_description(scaled))
    assert cli.main(["bench", "topdown-real", "--part", "capacity", "--cpu-scales", "1.5", "--out", str(out)]) == 2
    assert "(--scale-quotas differs?); use another --out" in capsys.readouterr().err
    (_, same, _), = topdown_real.plan_capacity(options(out=str(out), cpu_scales="1.5", scale_quotas=True))
    topdown_real._same_nodes(Path(same.out), e2e.run_description(same))   # the same nodes: resumes


def test_imc_gain_is_the_share_of_defaults_link_bytes_kept_off_the_links():
    assert imc_gain(300.0, 600.0) == pytest.approx(0.5)
    assert imc_gain(900.0, 600.0) == pytest.approx(-0.5)
    assert all(math.isnan(g) for g in (imc_gain(math.nan, 600.0), imc_gain(100.0, math.nan), imc_gain(1.0, 0.0)))
    default = [{"link_bytes_per_tuple": b} for b in (500, 700)]         # median 600
    mine = [{"link_bytes_per_tuple": b} for b in (120, 300, "")]        # an empty figure is no figure
    assert gain_of(mine, default) == pytest.approx((1 - 210 / 600, 0.5, 0.8))
    assert all(math.isnan(g) for g in gain_of(mine, []))


def test_noreplan_and_td_rc_reach_the_topology_options(tmp_path, monkeypatch):
    import storm_planner.submit.operations as operations
    from storm_planner_bench.e2e.cells import submit_workload

    submitted = []
    monkeypatch.setattr(operations, "submit_project", lambda *a, **k: submitted.append(k["options"]))
    bench = Bench(cluster=SimpleNamespace(addresses=SimpleNamespace(nimbus="localhost:6627")), accounts={},
                  work=tmp_path, feeds={"tweets": tmp_path / "feeds"}, repo=tmp_path, out=tmp_path,
                  progress=print)
    td, td_rc = parse_scheduler("planner:topdown+noreplan"), parse_scheduler("planner:topdown")
    assert (td.label, td.algorithm, td.replan, td.hook) == ("planner:topdown+noreplan", "topdown", False, True)
    both = parse_scheduler("planner:topdown+nohook+noreplan")
    assert (both.label, both.with_hook, both.replan, both.hook) == (
        "planner:topdown+noreplan+nohook", "planner:topdown+noreplan", False, False)
    for scheduler in (td, td_rc, parse_scheduler("default")):
        submit_workload(bench, TRENDS_LINK, 400.0, scheduler, tmp_path, "job",
                        extra=topdown_real.rate_options(scheduler, cautious=False))
    (td_options, td_rc_options, default_options) = submitted
    assert td_options["planner.replan"] is False and "planner.replan.cautious" not in td_options
    assert "planner.replan" not in td_rc_options and td_rc_options["planner.replan.cautious"] is False
    assert not any(key.startswith("planner.replan") for key in default_options)
    assert topdown_real.rate_options(td_rc, cautious=True) == {}


def stepping_bench(tmp_path, monkeypatch) -> Bench:
    """A bench whose windows come 10 s apart and see no ack (every step behind), one tuple emitted before."""
    clock = iter(range(100, 10_000, 10))

    def window(begin: int) -> tuple[float, float]:
        return float(begin), begin + 5.0
    monkeypatch.setattr(e2e_ramp, "FLUSH_S", 0.0)
    monkeypatch.setattr(e2e_ramp, "wait_first_ack", lambda *a: True)
    monkeypatch.setattr(e2e_ramp, "measure_window", lambda bench: Window(*window(next(clock)), {}, {}, {}, {}))
    monkeypatch.setattr(e2e_ramp, "read_times", lambda d: TupleTimes())
    monkeypatch.setattr(e2e_ramp, "drain", lambda d, s: TupleTimes(emitted={"m": 1.0}))
    monkeypatch.setattr(e2e_ramp, "_save_startup", lambda *a: None)
    plan_log = tmp_path / "plans.jsonl"
    plan_log.write_text("")
    cluster = SimpleNamespace(assignment=lambda topology: [], plan_log=plan_log, log_dir=tmp_path)
    bench = Bench(cluster=cluster, accounts={}, work=tmp_path, feeds={}, repo=tmp_path,
                  out=tmp_path / "out", progress=lambda message: None,
                  timing=Timing(settle_s=0.0, measure_s=0.0, drain_s=0.0, start_s=1.0, step_s=0.0))
    return bench


def test_a_schedule_runs_every_step_where_a_ramp_stops_at_the_first_behind(tmp_path, monkeypatch):
    """No tuple is ever acked in a window (every step behind): the ramp stops after its first step and
    records the rest as not run, the schedule measures all three, each keyed and timed as given."""
    bench = stepping_bench(tmp_path, monkeypatch)

    def steps(stop_behind: bool) -> list[dict]:
        rate_file = tmp_path / "rate"
        rate_file.write_text("400")
        names = [f"n{i}-{stop_behind}" for i in range(3)]
        return e2e_ramp._steps(bench, "t-1", tmp_path, rate_file, [400.0, 200.0, 400.0], names, 0.0, 0.0,
                                stop_behind)

    ramp = steps(stop_behind=True)
    assert [r["status"] for r in ramp][1:] == [e2e_ramp.NOT_RUN.format(rate=400)] * 2
    # Each step counts its own tuples: the one tuple was emitted before the first step's start.
    assert [r.get("emitted") for r in ramp] == [1, None, None] and ramp[0]["lost"] == 1
    schedule = steps(stop_behind=False)
    assert [r["status"] for r in schedule] == ["ran"] * 3
    assert [r[e2e_ramp.WINDOW_START] for r in schedule] == [0.0, 10.0, 20.0]
    assert (tmp_path / "rate").read_text() == "400"        # the last step's rate reached the spout
    assert sorted(name for name, record in read_cells(tmp_path / "out").items() if "latency" in record) == [
        "n0-False", "n0-True", "n1-False", "n2-False"]
    # A topology that never acked a tuple stops a schedule too, and the steps not run say why.
    monkeypatch.setattr(e2e_ramp, "wait_first_ack", lambda *a: False)
    silent = [r["status"] for r in steps(stop_behind=False)]
    assert silent[0].startswith("no tuple acked within 1 s") and silent[1:] == [f"not run: {silent[0]}"] * 2



def test_each_step_counts_the_moves_answered_from_a_minute_before_its_window_to_its_end(tmp_path, monkeypatch):
    bench = stepping_bench(tmp_path, monkeypatch)   # windows [100, 105), [110, 115), [120, 125)
    plans = [{"topology": "t-1", "time": 30.0, "assignments": {"e1": "a:1", "e2": "a:1"}, "event": "plan"},
             {"topology": "t-1", "time": 108.0, "assignments": {"e1": "b:1", "e2": "a:1"}, "event": "plan"},
             {"topology": "other", "time": 109.0, "assignments": {"e1": "c:1"}, "event": "plan"}]
    bench.cluster.plan_log.write_text("".join(json.dumps(plan) + "\n" for plan in plans))
    (tmp_path / "rate").write_text("400")
    rows = e2e_ramp._steps(bench, "t-1", tmp_path, tmp_path / "rate", [400.0, 200.0, 400.0], ["a", "b", "c"],
                            0.0, 0.0, False)
    # The move at 108 s lands after the first window and within a minute before the next two.
    assert [r[e2e_ramp.WINDOW_MOVES] for r in rows] == [0, 1, 1]


def test_a_ramp_of_two_spouts_judges_each_step_on_what_both_offer(tmp_path, monkeypatch):
    bench = stepping_bench(tmp_path, monkeypatch)
    judged = []
    monkeypatch.setattr(e2e_ramp, "clearly_behind", lambda times, window, rate, now: judged.append(rate))
    (tmp_path / "rate").write_text("200")
    e2e_ramp._steps(bench, "t-1", tmp_path, tmp_path / "rate", [200.0, 300.0], ["s0", "s1"], 0.0, 0.0, True, 2)
    assert judged == [400.0, 600.0] and (tmp_path / "rate").read_text() == "300"   # the spouts' rate, per spout

def test_a_ramp_is_a_schedule_keyed_by_rate_without_the_window_start(tmp_path, monkeypatch):
    given = {}

    def schedule(bench, workload, rates, scheduler, keys, names, **options):
        given.update(keys=keys, names=names, options=options)
        return [{**key, "status": "ran", e2e_ramp.WINDOW_START: 0.0} for key in keys]

    monkeypatch.setattr(e2e_ramp, "run_schedule", schedule)
    rows = e2e_ramp.run_ramp(None, TRENDS_LINK, [300.0, 400.0], parse_scheduler("ras"), 2)
    assert rows == [{"workload": "trends-link", "rate": rate, "scheduler": "ras", "repetition": 2, "status": "ran"}
                    for rate in ("300", "400")]
    assert given["names"] == ["trends-link-300-ras-2", "trends-link-400-ras-2"]
    assert given["options"] == {"profile": None}      # stops at the first step behind, as before


def step_row(scheduler: str, repetition: int, step: int, rate: float, link_bytes: float, **extra) -> dict:
    return {"workload": "trends-link", "scheduler": scheduler, "repetition": repetition, "step": step,
            "rate": f"{rate:g}", "window_start_s": 120.0 * (step - 1), "status": "ran", "processed_tps": rate,
            "latency_p99_ms": 80.0, "lost": 0, "replans": 0, "migrations": 0, "link_bytes_per_tuple": link_bytes,
            "placement": "i7-a:6 i5-a:6", **extra}


def test_a_runs_steps_are_written_in_one_append_under_one_header(tmp_path):
    from storm_planner_bench.common.report import append_csv_rows, read_csv

    header = topdown_real.step_columns(SUPERVISORS)
    path = tmp_path / "steps.csv"
    first = [step_row("default", 1, step, rate, 600.0) for step, rate in enumerate((400.0, 200.0), 1)]
    append_csv_rows(path, header, first)
    append_csv_rows(path, header, [step_row("default", 2, 1, 400.0, 500.0)])
    found, rows = read_csv(path)
    assert found == header and [(r["repetition"], r["step"]) for r in rows] == [("1", "1"), ("1", "2"), ("2", "1")]
    with pytest.raises(ValueError):   # a row of unknown columns is refused whole: nothing of it is written
        append_csv_rows(path, header, [step_row("default", 3, 1, 400.0, 1.0), {"stray": 1}])
    assert len(read_csv(path)[1]) == 3


def test_steps_csv_resumes_by_run_and_refuses_another_schedule(tmp_path):
    header = topdown_real.step_columns(SUPERVISORS)
    assert header[:7] == ["workload", "scheduler", "repetition", "step", "rate", "window_start_s", "moves_near_window"]
    path = tmp_path / "steps.csv"
    for step, rate in enumerate((400.0, 200.0), 1):
        append_csv(path, header, step_row("default", 1, step, rate, 600.0))
    assert topdown_real.finished_schedules(path, header, [400.0, 200.0]) == {("trends-link", "default", "1")}
    with pytest.raises(ValueError, match="ran the schedule 400,200, not 400,300: use another --out"):
        topdown_real.finished_schedules(path, header, [400.0, 300.0])
    with pytest.raises(ValueError, match="its columns are not this cluster's"):
        topdown_real.finished_schedules(path, topdown_real.step_columns(["other"]), [400.0, 200.0])


def cell(scheduler: str, repetition: int, link_bytes: float, **extra) -> dict:
    return {"workload": "trends-link", "rate": "400", "scheduler": scheduler, "repetition": repetition,
            "status": "ran", "processed_tps": 400.0, "latency_p99_ms": 100.0, "lost": 0, "link_bytes_per_tuple":
            link_bytes, "supervisors_used": 2, "replans": 0, "migrations": 0, **extra}


def test_the_report_sets_gains_against_capacity_and_over_the_rate_schedule(tmp_path):
    out = tmp_path / "topdown-real"
    header = e2e.columns(SUPERVISORS)
    for scale, default_bytes, topdown_bytes in ((0.75, (600, 800), (500, 560)), (1.5, (700, 700), (70, 210))):
        folder = topdown_real.scale_dir(out, scale)
        for repetition in (1, 2):
            e2e.append_cell(folder / "cells.csv", header, cell("default", repetition, default_bytes[repetition - 1]))
            e2e.append_cell(folder / "cells.csv", header,
                            cell("planner:topdown", repetition, topdown_bytes[repetition - 1]))
    # 0.75 as an older run saved it (declared CPU alone, quotas scaled with it); 1.5 held to the described CPU.
    (topdown_real.scale_dir(out, 0.75) / "nodes.json").write_text(json.dumps({"i7-a": 33.75, "i5-a": 26.25}))
    (topdown_real.scale_dir(out, 1.5) / "nodes.json").write_text(json.dumps(
        {"declared": {"i7-a": 67.5, "i5-a": 52.5}, "held": {"i7-a": 45, "i5-a": 35}}))
    e2e.append_cell(topdown_real.scale_dir(out, 1.5) / "cells.csv", header,
                    cell("planner:tasklevel", 1, math.nan, status="not scheduled: no slots"))
    e2e.append_cell(topdown_real.scale_dir(out, 1.5) / "cells.csv", header,
                    cell("planner:tasklevel", 2, 150.0, processed_tps=300.0))   # behind: 300 of 400
    steps = out / "rates" / "steps.csv"
    step_header = topdown_real.step_columns(SUPERVISORS)
    for step, rate in enumerate((400.0, 200.0), 1):
        append_csv(steps, step_header, step_row("default", 1, step, rate, 600.0,
                                                processed_tps=rate if step == 1 else 150.0))
        append_csv(steps, step_header, step_row("planner:topdown+noreplan", 1, step, rate, 300.0))
        append_csv(steps, step_header, step_row("planner:topdown", 1, step, rate, 300.0 if step == 1 else 60.0,
                                                replans=step - 1, migrations=3 * (step - 1),
                                                moves_near_window=2 * (step - 1)))
    command = "storm-planner bench topdown-real --repeat 2"
    report = write_report(out, command).read_text()
    assert f"flock /tmp/storm-cluster.lock .venv/bin/{command} --out {out}" in report
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    # Scale 0.75: default's median 700; topdown's 530 -> +24 % [+20 – +29]. Scale 1.5: 140 of 700 -> +80 %.
    assert "| 0.75 | 26.2–33.8 | planner:topdown | 2 | all | 530 [500–560] | +24 % [+20 – +29] |" in report
    assert "| 0.75 | 26.2–33.8 | default | 2 | all | 700 [600–800] | +0 % [-14 – +14] |" in report
    at_1_5 = "| 1.5 | 52.5–67.5 (held to 35–45) |"
    assert any(r.startswith(f"{at_1_5} planner:topdown | 2 | all | 140 [70–210] | +80 % [+70 – +90] |") for r in rows)
    assert any(r.startswith(f"{at_1_5} planner:tasklevel | 1 of 2 | 0 of 1 | 150 | +79 % |") for r in rows)
    assert "scale 1.5, planner:tasklevel repetition 1: not scheduled: no slots" in report
    capacity = report.split("## A varying input rate")[0]
    assert "fell behind" not in capacity   # Storm's default, the reference, kept up at every scale
    # The schedule: TD keeps +50 %, TD-RC climbs to +90 % at 200 t/s after its re-plan.
    assert "| 2 | 200 | 120 | planner:topdown+noreplan | 1 | all | 300 | +50 % |" in report
    assert "| 2 | 200 | 120 | planner:topdown | 1 | all | 60 | +90 % | 200 | 80 | 0 | 1 | 2 | 3 |" in report
    # Default fell behind at 200 t/s (150 processed): its gains there are flagged, those at 400 are not.
    assert "- step 2: Storm's default, the reference, fell behind in 1 of 1 cells" in report
    assert "- step 1: Storm's default" not in report
    for plot in ("trends-link-400-capacity.png", "trends-link-rates.png"):
        assert (out / plot).stat().st_size > 10_000 and f"{out.name}/{plot}" in report
    # --report-only rewrites it from the saved command.
    (out / "command.txt").write_text(command + "\n")
    (out.parent / "topdown-real.md").unlink()
    assert cli.main(["bench", "topdown-real", "--report-only", "--out", str(out)]) == 0
    assert (out.parent / "topdown-real.md").read_text() == report
    # Published: one CSV of cells per part, the figures and the report, which names the command; --report-only
    # writes the same report from them alone.
    shutil.rmtree(out / "capacity")
    shutil.rmtree(out / "rates")
    (out / "command.txt").unlink()
    for plot in out.glob("*.png"):
        plot.unlink()
    assert sorted(p.name for p in out.iterdir()) == ["capacity.csv", "rates.csv"]
    assert cli.main(["bench", "topdown-real", "--report-only", "--out", str(out)]) == 0
    assert (out.parent / "topdown-real.md").read_text() == report
    assert (out / "trends-link-400-capacity.png").is_file() and (out / "trends-link-rates.png").is_file()


def test_nothing_to_report_writes_nothing(tmp_path):
    assert write_report(tmp_path / "empty", "storm-planner bench topdown-real") is None


def test_gains_count_only_cells_that_ran_as_asked_and_each_rate_has_its_own_section(tmp_path):
    """topdown's repetition 2 ran on DefaultScheduler's placement (the plugin fell back): its 1,000 B are not
    topdown's. Cells of an earlier --quick run at 60 t/s in the same --out are not set beside 400's."""
    out = tmp_path / "topdown-real"
    header = e2e.columns(SUPERVISORS)
    folder = topdown_real.scale_dir(out, 1.0)
    fallback = "ran on DefaultScheduler's placement: the planner answered infeasible"
    for row in (cell("default", 1, 1000.0), cell("default", 2, 1000.0), cell("planner:topdown", 1, 600.0),
                cell("planner:topdown", 2, 1000.0, status=fallback),
                cell("default", 1, 3000.0, rate="60"), cell("planner:topdown", 1, 2900.0, rate="60")):
        e2e.append_cell(folder / "cells.csv", header, row)
    (folder / "nodes.json").write_text(json.dumps({"i7-a": 45, "i5-a": 35}))
    report = write_report(out, "storm-planner bench topdown-real").read_text()
    at_400 = report.split("### trends-link at 400 t/s")[1].split("###")[0]
    assert "| planner:topdown | 1 of 2 | all | 600 | +40 % |" in at_400
    at_60 = report.split("### trends-link at 60 t/s")[1].split("##")[0]
    assert "| planner:topdown | 1 | all | 2,900 | +3 % |" in at_60
    assert (out / "trends-link-60-capacity.png").is_file() and (out / "trends-link-400-capacity.png").is_file()
