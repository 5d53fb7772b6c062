"""``bench drain``'s figures of one forced move, from a time log and plan-log records made here."""
from __future__ import annotations

import math

import pytest

from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.drain import series
from storm_planner_bench.drain.experiment import capacity_rate, choose_target, parse_sets, run_order

T0 = 1_000_000.0


def steady(rate: int, begin: float, end: float, stall: tuple[float, float] | None = None,
           lag: float = 0.05) -> TupleTimes:
    """A spout at ``rate`` t/s from ``begin`` to ``end``, each tuple acked ``lag`` s after its due time; during
    ``stall`` nothing is emitted and the tuples due then go out (and are acked) at its end."""
    times = TupleTimes()
    k = 0
    at = begin
    while at < end:
        emitted = at if stall is None or not stall[0] <= at < stall[1] else stall[1] + (at - stall[0]) / 50
        key = f"t/{k}"
        times.emitted[key] = emitted
        times.due[key] = at
        times.emits_at.append(emitted)
        times.acked[key] = emitted + lag
        k += 1
        at = begin + k / rate
    return times


def drain_records(decided: float, pause=0.5, drain=2.0, start=15.0, resume=0.3, drained=True) -> list[dict]:
    plan = {"event": "plan", "topology": "topo-1", "time": decided + 0.01, "figures": {"moves": 2.0},
            "notes": ["forced move (planner.replan.force=count,__acker@i7-a): 2 executor(s) move ([3-3], [7-7])"]}
    if not drained:
        return [plan, {"event": "drain", "topology": "topo-1", "phase": "move", "seconds": 0.0, "time": decided,
                       "drained": False, "note": "not drained (planner.replan.drain: false): moved at once"},
                {"event": "drain", "topology": "topo-1", "phase": "start", "seconds": start, "time": decided + start,
                 "drained": False, "in_flight": None, "note": "2 of 2 restarted worker(s) up (i5-b:6709 in 12.5 s, "
                                                              "i7-a:6700 in 13.9 s)"}]
    t = decided
    records = [plan]
    for phase, seconds, note in (("pause", pause, "spouts paused (Nimbus deactivate); 812 tuple(s) in flight before"),
                                 ("drain", drain, "0 tuples in flight after 2.0 s"),
                                 ("move", 1.0, "the move answered on the plugin's offer"),
                                 ("start", start, "2 of 2 restarted worker(s) up (i5-b:6709 in 12.5 s, "
                                                  "i7-a:6700 in 13.9 s)"),
                                 ("resume", resume, "spouts resumed (Nimbus activate)")):
        t += seconds
        records.append({"event": "drain", "topology": "topo-1", "phase": phase, "seconds": seconds, "time": t,
                        "drained": True, "in_flight": 0 if phase != "pause" else None, "note": note, "outcome": "ok"})
    return records


def test_the_forced_move_is_found_by_its_plan_and_its_drain_decided_with_it():
    earlier = drain_records(T0 - 200)   # a re-plan of the planner's own, drained too: not the forced one
    for record in earlier:
        record["notes"] = ["relief: ..."] if record.get("event") == "plan" else None
    move = series.find_move([*earlier, *drain_records(T0)], "topo-1")
    assert move is not None and move.drained and math.isclose(move.decided, T0)
    assert list(move.phases) == list(series.PHASES) and series.complete(move)
    assert math.isclose(move.moved_at, T0 + 0.5 + 2.0 + 1.0)
    phases = series.drain_phases(move)
    assert phases["in_flight_before"] == 812 and phases["in_flight_after_drain"] == 0
    assert phases["starts"] == {"i5-b:6709": 12.5, "i7-a:6700": 13.9}
    assert phases["stopped_s"] == pytest.approx(18.8) and phases["start_s"] == 15.0
    assert series.find_move(drain_records(T0), "another") is None


def test_an_undrained_move_is_decided_when_it_moved():
    move = series.find_move(drain_records(T0, drained=False), "topo-1")
    assert move is not None and not move.drained and move.decided == T0 and series.complete(move)
    assert series.drain_phases(move)["pause_s"] != series.drain_phases(move)["pause_s"]   # NaN: no pause


def test_a_forced_plan_without_a_drain_is_not_complete():
    move = series.find_move(drain_records(T0)[:1], "topo-1")
    assert move is not None and not move.phases and not series.complete(move)


def test_a_stall_shows_as_5s_intervals_without_acks_and_the_rest_does_not():
    times = steady(100, T0 - 40, T0 + 70, stall=(T0 + 2, T0 + 19))
    gaps = series.ack_gaps(times, T0)
    assert gaps["intervals"] == 18
    assert gaps["empty_at"] == [5.0, 10.0] and gaps["intervals_without_ack"] == 2
    assert gaps["longest_gap_s"] == pytest.approx(17.0, abs=0.1) and gaps["longest_gap_from_s"] == pytest.approx(2.0, abs=0.1)
    assert series.ack_gaps(steady(100, T0 - 40, T0 + 70), T0)["intervals_without_ack"] == 0


def test_per_second_counts_acks_emits_fails_and_replays_in_each_second():
    times = steady(10, T0 - 40, T0 + 70)
    times.failed_at += [T0 + 3.5, T0 + 3.6]
    times.emits_at += [T0 + 4.2]          # the replay of a tuple emitted earlier
    rows = series.per_second(times, T0)
    assert len(rows) == 90 and rows[0]["second"] == -30 and rows[-1]["second"] == 59
    by = {r["second"]: r for r in rows}
    assert by[0]["acked"] == 10 and by[0]["emitted"] == 10
    assert by[3]["failed"] == 2 and by[4]["replayed"] == 1 and by[5]["replayed"] == 0


def test_latency_from_the_due_time_counts_the_stall_and_the_lost_apart():
    times = steady(100, T0 - 40, T0 + 70, stall=(T0 + 2, T0 + 19))
    del times.acked["t/5000"]            # due at T0 + 10: never acked
    figures = series.move_latency(times, T0, 100)
    assert figures["due_unacked"] == 1 and figures["due_tuples"] == 6000
    assert figures["due_max_ms"] == pytest.approx(17_050, abs=30)
    assert 40 <= figures["due_p50_ms"] <= 60 and figures["due_p99_ms"] > 10_000
    totals = series.totals(times)
    assert totals["lost"] == 1 and totals["failed"] == 0 and totals["replayed"] == 0


def test_runs_interleave_and_options_parse():
    assert run_order(["drain", "no-drain"], 3) == [(1, "drain"), (1, "no-drain"), (2, "no-drain"), (2, "drain"),
                                                   (3, "drain"), (3, "no-drain")]
    options = parse_sets(["planner.metrics.period.secs=2", "planner.replan.drain.secs=10.5", "x.flag=false",
                          "x.name=abc", "topology.max.spout.pending=100000"])
    assert options == {"planner.metrics.period.secs": 2, "planner.replan.drain.secs": 10.5, "x.flag": False,
                       "x.name": "abc", "topology.max.spout.pending": 100000}
    # Storm reads an int option as an int only: 100000.0 killed the spout's executor on a cluster
    assert type(options["topology.max.spout.pending"]) is int and type(options["planner.metrics.period.secs"]) is int
    with pytest.raises(ValueError):
        parse_sets(["nokey"])


def test_the_rate_comes_from_ras_capacity_repetitions_before_the_pilot(tmp_path):
    header = "cluster,workload,arm,repetition,status,capacity_tps\n"
    (tmp_path / "searches.csv").write_text(header + "c,topk-link,ras,0,ran,1000\nc,topk-link,planner:auto,1,ran,9\n")
    found = capacity_rate(f"{tmp_path / 'none'},{tmp_path}", "c", "topk-link")
    assert found is not None and found[0] == 1000 and "its pilot" in found[1]
    (tmp_path / "searches.csv").write_text(header + "c,topk-link,ras,0,ran,1000\nc,topk-link,ras,1,ran,800\n"
                                                    "c,topk-link,ras,2,ran,900\nc,topk-link,ras,3,ran,1200\n")
    assert capacity_rate(str(tmp_path), "c", "topk-link")[0] == 900
    assert capacity_rate(str(tmp_path), "other", "topk-link") is None


def test_the_target_is_a_node_the_first_plan_leaves_free_and_not_one_holding_every_count():
    from pathlib import Path

    from storm_planner.cluster.description import load_description
    from storm_planner_bench.capacity.workloads import WORKLOADS

    repo = Path(__file__).resolve().parents[3]
    description = load_description(repo / "benchmarks" / "e2e" / "cluster.yaml")
    target, why = choose_target(description, WORKLOADS["topk-link"], "even", 100, ["count", "__acker"], repo)
    assert target in {s.name for s in description.supervisors} and "first plan" in why


def test_the_command_names_a_move_into_a_worker_of_its_own():
    import argparse

    from storm_planner_bench.drain.experiment import drain_command
    args = argparse.Namespace(workload="topk-link", cluster="c.yaml", scheduler="planner:auto", arms="no-drain",
                              repeat=1, rate=2650.0, move="count,__acker", target="small-b", new_worker=True,
                              force_after=120.0, before=30.0, after=60.0, set=["topology.max.spout.pending=100000"],
                              feed_records=8_000_000)
    command = drain_command(args)
    assert "--move count,__acker --target small-b --new-worker --force-after 120" in command
    assert "--set topology.max.spout.pending=100000" in command
    assert "--new-worker" not in drain_command(argparse.Namespace(**{**vars(args), "new_worker": False}))


def test_a_runs_plan_log_records_are_kept_beside_its_rows(tmp_path):
    import json

    from storm_planner_bench.drain.experiment import save_run

    plans = [{"topology": "t-1", "event": "plan", "notes": ["spouts: [1-1] moved from small to large"]},
             {"topology": "t-1", "event": "drain", "phases": {"pause": 0.2}}]
    save_run(tmp_path, "auto", 2, {"status": "ran"}, [], [], [], plans)
    kept = [json.loads(line) for line in (tmp_path / "logs" / "auto-2-plans.jsonl").read_text().splitlines()]
    assert kept == plans
    save_run(tmp_path, "auto", 3, {"status": "no forced move"}, [], [], [])
    assert not (tmp_path / "logs" / "auto-3-plans.jsonl").exists()
