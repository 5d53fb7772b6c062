"""Airline delay components (Real Jobs 2–4) over the real multilang protocol."""
from __future__ import annotations

import zlib
from pathlib import Path

import airline
import pytest
from airline.logic import RainScorer, RouteRainJoin, bucket_of
from airline.records import day_start
from multilang import MultilangComponent, emits, storm_context

from storm_planner.streaming.watermarks import END

SRC = Path(__file__).resolve().parents[2] / "topologies" / "airline" / "src"
TASKS = {1: "flights", 2: "weather", 3: "extract", 4: "extract", 5: "plane_delays", 6: "plane_delays",
         7: "route_delays", 8: "rainscore", 9: "rainscore", 10: "join", 11: "join", 12: "courier",
         13: "store_planes", 14: "store_routes", 15: "store_courier"}


def conf_for(tmp_path: Path, **options) -> dict:
    conf = {"topology.name": "airline-test", "storm.id": "airline-test-1-1",
            "airline.sink": str(tmp_path / "results.db"), "airline.emit_interval_s": 0,
            "airline.store_interval_s": 0}
    conf.update({f"airline.{k}": v for k, v in options.items()})
    return conf


def start(target, tmp_path, name, task, **options):
    return MultilangComponent(f"airline.{target}", SRC, conf_for(tmp_path, **options),
                              storm_context(name, task, TASKS))


def flight(tail, date, delay, origin="AAA", dest="BBB", cancelled=False):
    return {"Year": int(date[:4]), "FlightDate": date, "TailNum": tail, "Origin": origin, "Dest": dest,
            "CRSDepTime": "0930", "ArrDelayMinutes": None if cancelled else delay,
            "Cancelled": 1.0 if cancelled else 0.0}


# -- logic -------------------------------------------------------------------------------------

def test_rainscore_is_a_percentage_of_the_running_maximum():
    scorer = RainScorer()
    assert scorer.score("S", 0.0) == 0.0  # never rained yet
    assert scorer.score("S", 0.5) == 100.0
    assert scorer.score("S", 0.25) == 50.0
    assert scorer.score("S", 1.0) == 100.0 and scorer.score("S", 0.5) == 50.0
    assert [bucket_of(s) for s in (0.0, 9.99, 10.0, 55.0, 99.9, 100.0)] == [0, 0, 1, 5, 9, 9]


def test_route_rain_join_waits_for_the_day_and_takes_the_wetter_end():
    join = RouteRainJoin({"AAA": "S1", "BBB": "S2"})
    assert join.add_flight(["N1", 2004, 30.0, "AAA", "BBB", "2004-01-02"]) == []
    join.add_score("S1", "2004-01-02", 20.0)
    assert join.advance_weather(day_start("2004-01-02")) == []  # day 2's records may still come
    join.add_score("S2", "2004-01-02", 75.0)
    assert join.advance_weather(day_start("2004-01-03")) == [(7, 30.0)]
    assert join.add_flight(["N2", 2004, 5.0, "AAA", "ZZZ", "2004-01-01"]) == []  # unscored (no S1 on day 1)
    assert join.unscored == 1


# -- components --------------------------------------------------------------------------------

def test_extract_bolt_extracts_delays_and_skips_unusable_flights(tmp_path):
    with start("bolts.ExtractBolt", tmp_path, "extract", 3) as bolt:
        out = emits(bolt.process(["N1", flight("N1", "2004-01-02", 12.0)], tup_id="f1", comp="flights"))
        assert [(m["tuple"], m["anchors"]) for m in out] == [(["N1", 2004, 12.0, "AAA", "BBB", "2004-01-02"], ["f1"])]
        assert emits(bolt.process(["N1", flight("N1", "2004-01-02", 0, cancelled=True)], tup_id="f2",
                                  comp="flights")) == []
        assert emits(bolt.process(["", flight("", "2004-01-02", 3.0)], tup_id="f3", comp="flights")) == []
        out = emits(bolt.process([END], tup_id="w", comp="flights", stream="watermark"))
        assert [(m["stream"], m["tuple"]) for m in out] == [("watermark", [END])]


def test_plane_delay_bolt_sums_per_plane_and_year_on_ticks(tmp_path):
    with start("bolts.PlaneDelayBolt", tmp_path, "plane_delays", 5) as bolt:
        batch = [{"values": v, "comp": "extract", "task": 3} for v in (
            ["N1", 2004, 10.0, "A", "B", "2004-01-01"], ["N1", 2004, 5.0, "A", "C", "2004-02-01"],
            ["N1", 2005, 7.0, "A", "B", "2005-01-01"], ["N2", 2004, 1.0, "B", "A", "2004-01-01"])]
        assert bolt.process_batch(batch) == []
        out = sorted(m["tuple"] for m in emits(bolt.tick()))
        assert out == [["plane_delays", ["N1", 2004], 15.0, 2], ["plane_delays", ["N1", 2005], 7.0, 1],
                       ["plane_delays", ["N2", 2004], 1.0, 1]]
        assert emits(bolt.tick("t2")) == []


def test_store_bolt_upserts_latest_sums_into_sqlite(tmp_path):
    with start("bolts.StoreBolt", tmp_path, "store_planes", 13) as bolt:
        bolt.process(["plane_delays", ["N1", 2004], 15.0, 2], tup_id="a", comp="plane_delays", task=5)
        bolt.process(["plane_delays", ["N1", 2004], 20.0, 3], tup_id="b", comp="plane_delays", task=5)
        bolt.heartbeat()
        bolt.tick()
        bolt.process(["route_delays", ["A", "B"], 4.0, 1], tup_id="c", comp="route_delays", task=7)
        bolt.tick("t2")
        # Partial key grouping: a second task's partial sum of the same key adds to the first's latest.
        bolt.process(["route_delays", ["A", "B"], 6.0, 2], tup_id="d", comp="route_delays", task=8)
        bolt.process(["route_delays", ["A", "B"], 5.0, 2], tup_id="e", comp="route_delays", task=7)
        bolt.tick("t3")
    tables = airline.read_tables("sqlite:///" + str(tmp_path / "results.db"))
    assert tables["plane_delays"] == {("N1", 2004): (20.0, 3)}
    assert tables["route_delays"] == {("A", "B"): (11.0, 4)}


def test_rainscore_bolt_scores_station_days_and_forwards_watermarks(tmp_path):
    with start("bolts.RainscoreBolt", tmp_path, "rainscore", 8) as bolt:
        def weather(day, prcp):
            return ["1-2", {"STN": "1", "WBAN": "2", "YEARMODA": day, "PRCP": prcp}]
        out = bolt.process_batch([{"values": weather("20040101", 0.4), "comp": "weather", "task": 2},
                                  {"values": weather("20040102", 0.1), "comp": "weather", "task": 2},
                                  {"values": weather("20040103", 99.99), "comp": "weather", "task": 2},
                                  {"values": [day_start("2004-01-04")], "comp": "weather",
                                   "stream": "watermark", "task": 2}])
        assert [(m.get("stream"), m["tuple"]) for m in out] == [
            (None, ["1-2", "2004-01-01", 100.0]), (None, ["1-2", "2004-01-02", 25.0]),
            ("watermark", [day_start("2004-01-04")])]


# -- Job 4 end to end over the protocol ----------------------------------------------------------------

def to_task(key, tasks):
    return tasks[zlib.crc32(repr(key).encode()) % len(tasks)]


def test_job4_pipeline_tables_equal_the_direct_oracle(tmp_path):
    """Shipped feeds through every Job 4 component kind; two tasks where state is split or merged.

    One store task writes all three tables here (the topology has one per table;
    the bolt is the same).
    """
    names = {1: ("spouts.FlightSpout", "flights"), 2: ("spouts.WeatherSpout", "weather"),
             3: ("bolts.ExtractBolt", "extract"), 5: ("bolts.PlaneDelayBolt", "plane_delays"),
             7: ("bolts.RouteDelayBolt", "route_delays"), 8: ("bolts.RainscoreBolt", "rainscore"),
             9: ("bolts.RainscoreBolt", "rainscore"), 10: ("bolts.RouteRainJoinBolt", "join"),
             11: ("bolts.RouteRainJoinBolt", "join"), 12: ("bolts.CourierBolt", "courier"),
             13: ("bolts.StoreBolt", "store_planes")}
    tasks = {task: name for task, (_, name) in names.items()}
    procs = {task: MultilangComponent(f"airline.{target}", SRC, conf_for(tmp_path), storm_context(name, task, tasks))
             for task, (target, name) in names.items()}
    inbox = {task: [] for task in names}

    def send(src, messages, route):
        for message in messages:
            stream = message.get("stream")
            for dest in route(message["tuple"], stream):
                inbox[dest].append({"values": message["tuple"], "comp": names[src][1], "stream": stream,
                                    "task": src})

    def run(task):
        items, inbox[task] = inbox[task], []
        for number, item in enumerate(items):
            item["id"] = f"{task}-{number}"
        return procs[task].process_batch(items)

    try:
        weather_out, flights_out = procs[2].drain(), procs[1].drain()
        send(2, weather_out, lambda v, s: [8, 9] if s == "watermark" else [to_task(v[0], [8, 9])])
        send(1, flights_out, lambda v, s: [3])
        for task in (8, 9):  # rainscores and their watermarks go to every join task
            send(task, run(task), lambda v, s: [10, 11])
        out = run(3)
        send(3, out, lambda v, s: [] if s == "watermark" else [5, 7])
        send(3, out, lambda v, s: [10, 11] if s == "watermark" else [to_task((v[3], v[4]), [10, 11])])
        for task in (10, 11):
            send(task, run(task), lambda v, s: [12])
        for task in (5, 7, 12):
            run(task)
            send(task, emits(procs[task].tick()), lambda v, s: [13])
        run(13)
        procs[13].tick()
        procs[1].ack_all([m["id"] for m in flights_out if m.get("id")])
        procs[2].ack_all([m["id"] for m in weather_out if m.get("id")])
        assert Path(str(tmp_path / "results.db") + ".feed-done").exists()  # both spouts finished
        expected = airline.expected_tables(airline.shipped_flights(), 4, airline.shipped_weather(),
                                           airline.shipped_stations())
        assert all(expected.values())
        assert airline.read_tables("sqlite:///" + str(tmp_path / "results.db")) == expected
    finally:
        for proc in procs.values():
            proc.close()


@pytest.mark.parametrize("job", [2, 3, 4])
def test_job_topologies_have_the_papers_shape(job):
    from airline.topology import build
    cls = build(job)
    inputs = {name: {sid.componentId: g for sid, g in b.common.inputs.items() if sid.streamId == "default"}
              for name, b in cls.thrift_bolts.items()}
    # Job 2: extract and the per-plane sums are partitioned on the same attribute.
    assert inputs["extract"]["flights"].fields == ["tail_num"]
    assert inputs["plane_delays"]["extract"].fields == ["tail_num"]
    assert ("route_delays" in inputs) == (job >= 3)
    assert ("join" in inputs) == (job == 4)
    if job == 4:
        assert inputs["join"]["extract"].fields == ["origin", "dest"]
        assert inputs["join"]["rainscore"].all is not None
