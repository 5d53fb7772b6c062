"""Feed builds on Spark, and the Spark oracles against the topologies' own direct oracles."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import airline
import bargains
import pytest
import trends

from storm_planner.cli import main
from storm_planner.feeds import oracles
from storm_planner.feeds.build import build_feeds
from storm_planner.streaming.feedio import iter_feed_records

pytestmark = pytest.mark.slow


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """A tweets feed built by Spark, and stock and airline feeds from the generators directly.

    Only the tweets feed goes through Spark's build (the write path is the same
    for every kind); the others are written straight from the synthetic
    generators, in time order, to keep the module fast.
    """
    from storm_planner.feeds.synthetic.airline import AirlineGenerator
    from storm_planner.feeds.synthetic.stocks import StockGenerator, taq_time_ms
    root = tmp_path_factory.mktemp("feeds")
    summaries = build_feeds(spark, "tweets", root / "tweets", synthetic=True, records=1500,
                            partitions=3, progress=lambda message: None)
    stocks = root / "stocks"
    stocks.mkdir()
    generator = StockGenerator(seed=11, symbols=12)
    series = sorted((r for s in range(12) for r in generator.series(s, 90)), key=taq_time_ms)
    write_jsonl(stocks / "trades.jsonl", (r for r in series if "PRICE" in r))
    write_jsonl(stocks / "quotes.jsonl", (r for r in series if "ASK" in r))
    air = root / "airline"
    air.mkdir()
    generator = AirlineGenerator(seed=4, airports=20, planes=60, flights_per_day=300)
    write_jsonl(air / "flights.jsonl", (generator.flight_record(i) for i in range(2400)))
    write_jsonl(air / "weather.jsonl", (generator.weather_record(i) for i in range(8 * 20)))
    write_jsonl(air / "stations.jsonl", generator.stations())
    return root, summaries
def test_feeds_are_time_ordered_partitioned_compressed_with_offsets(built):
    root, summaries = built
    feed = root / "tweets"
    parts = sorted(p.name for p in feed.iterdir() if p.name.startswith("part-"))
    assert parts == ["part-00000.jsonl.gz", "part-00001.jsonl.gz", "part-00002.jsonl.gz"]
    with gzip.open(feed / parts[0], "rt") as handle:
        assert json.loads(handle.readline())["_t"] == 0.0
    rows = list(iter_feed_records(feed))
    times = [int(r["timestamp_ms"]) for r in rows]
    assert len(rows) == 1500 and times == sorted(times)
    offsets = [r["_t"] for r in rows]
    assert offsets == sorted(offsets)
    assert abs(offsets[-1] - (times[-1] - times[0]) / 1000) < 0.002
    summary = json.loads((feed / "_feed.json").read_text())
    assert summary == summaries["tweets"]
    assert summary["records"] == 1500 and summary["bytes"] == sum(
        (feed / p).stat().st_size for p in parts)
    assert summary["span_s"] == (times[-1] - times[0]) / 1000


def test_spark_trends_oracle_equals_the_direct_count(spark, built):
    feed = built[0] / "tweets"
    assert oracles.trends_top_k(spark, feed, 10) == trends.expected_top_k(feed, 10)


def test_spark_bargains_oracle_equals_the_direct_join(spark, built):
    stocks = built[0] / "stocks"
    trades, quotes = stocks / "trades.jsonl", stocks / "quotes.jsonl"
    got = oracles.bargains(spark, trades, quotes, margin=0.004, window_s=300)
    expected = bargains.expected_bargains(trades, quotes, margin=0.004, window_s=300)
    assert got and [tuple(row) for row in got] == expected


def test_spark_airline_oracle_equals_the_direct_sums_for_job_4(spark, built):
    root = built[0] / "airline"
    flights, weather, stations = root / "flights.jsonl", root / "weather.jsonl", root / "stations.jsonl"
    got = oracles.airline_tables(spark, flights, 4, weather, stations)
    direct = airline.expected_tables(flights, 4, weather, stations)
    assert all(got.values())
    assert got == {table: sorted([*key, s, n] for key, (s, n) in rows.items()) for table, rows in direct.items()}
    job2 = oracles.airline_tables(spark, flights, 2)
    assert job2["plane_delays"] == got["plane_delays"] and job2["route_delays"] == []


def test_build_from_real_formats_reports_malformed_rows(spark, data, tmp_path):
    messages = []
    summaries = build_feeds(spark, "airline", tmp_path / "air",
                            inputs=[data / "On_Time_On_Time_Performance_2004_1.csv"],
                            weather=[data / "725030-14732-2004.op"], stations=data / "isd-history.csv",
                            partitions=1, progress=messages.append)
    assert summaries["flights"]["records"] == 3 and summaries["flights"]["malformed_skipped"] == 2
    assert summaries["weather"]["records"] == 3 and summaries["weather"]["malformed_skipped"] == 1
    assert any("skipped 2 malformed" in m for m in messages)
    assert (tmp_path / "air" / "stations.jsonl").exists()
    with pytest.raises(ValueError, match="--synthetic"):
        build_feeds(spark, "tweets", tmp_path / "t", progress=messages.append)
    with pytest.raises(ValueError, match="synthetic airline feed only"):
        build_feeds(spark, "tweets", tmp_path / "d", synthetic=True, records=10, drift_every=5,
                    progress=messages.append)


def test_cli_oracle_and_build(spark, built, tmp_path, capsys):
    out = tmp_path / "oracle.json"
    feed = built[0] / "tweets"
    assert main(["feeds", "oracle", "trends", "--feed", str(feed), "--k", "3", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["rankings"] == trends.expected_top_k(feed, 3)
    assert main(["feeds", "build", "tweets", "--out", str(tmp_path / "t"), "--synthetic", "--records", "50",
                 "--partitions", "1"]) == 0
    assert "tweets: 50 records" in capsys.readouterr().out
    assert main(["feeds", "build", "tweets", "--out", str(tmp_path / "x"), "--input", str(tmp_path / "none")]) == 2
    assert main(["feeds", "oracle", "airline", "--job", "4", "--flights", str(feed)]) == 2


def test_spark_generates_every_synthetic_kind(spark):
    from storm_planner.feeds import generate
    stocks = generate.stocks(spark, 50, symbols=5, partitions=2)  # 10 minutes of 5 symbols
    assert stocks["trades"].frame.count() == stocks["quotes"].frame.count() == 50
    first = json.loads(stocks["quotes"].frame.orderBy("ts_ms").first()["json"])
    assert set(first) == {"DATE", "TIME_M", "SYM_ROOT", "BID", "BIDSIZ", "ASK", "ASKSIZ"}
    # One task a symbol gives the same feed as two tasks: the partitioning never shows in the records.
    one_each = generate.stocks(spark, 50, symbols=5, partitions=5)
    assert ({r["json"] for r in one_each["trades"].frame.collect()}
            == {r["json"] for r in stocks["trades"].frame.collect()})
    feeds, stations = generate.airline(spark, 700, partitions=2)  # 3000 flights a day: one day
    assert feeds["flights"].frame.count() == 700
    assert feeds["weather"].frame.count() == len(stations) == 60
    # A drifting feed: its first 100 flights are the plain feed's, the later ones (mostly) not.
    drifting, _ = generate.airline(spark, 700, partitions=2, drift_every=100)
    plain = {r["json"] for r in feeds["flights"].frame.collect()}
    drifted = {r["json"] for r in drifting["flights"].frame.collect()}
    assert 100 <= len(plain & drifted) < 400


def test_a_big_stocks_feed_is_generated_in_tasks_of_at_most_a_quarter_million_rows():
    from storm_planner.feeds.generate import RECORDS_PER_TASK, _symbol_slices

    # 8,000,000 records (16 million rows) in eight tasks ran a 1 GiB driver out of heap while it cached them.
    assert _symbol_slices(8_000_000, 100, 8) == 64
    assert 2 * 8_000_000 / _symbol_slices(8_000_000, 100, 8) <= RECORDS_PER_TASK
    assert _symbol_slices(50_000_000, 100, 8) == 100      # never more tasks than symbols
    assert _symbol_slices(50, 5, 2) == 2 and _symbol_slices(50, 1, 8) == 1


def test_a_driver_that_stops_mid_build_is_named_with_the_setting_that_gives_it_more_heap(tmp_path, monkeypatch, capsys):
    """8,000,000 stocks records once ran the 1 GiB driver out of heap, and all the bench said was py4j's
    'SparkSession does not exist in the JVM'."""
    from py4j.protocol import Py4JError

    from storm_planner.feeds import build, commands, generate
    from storm_planner.feeds.spark import SparkDriverError

    def dies(*args, **kwargs):
        raise Py4JError("org.apache.spark.sql.classic.SparkSession does not exist in the JVM")

    monkeypatch.setattr(generate, "tweets", dies)
    monkeypatch.setenv("STORM_PLANNER_SPARK_MEMORY", "2g")
    with pytest.raises(SparkDriverError,
                       match=r"while building the tweets feeds \(Py4JError: .*more heap than 2g: "
                             r"STORM_PLANNER_SPARK_MEMORY=4g"):
        build.build_feeds(None, "tweets", tmp_path, synthetic=True, records=5)
    monkeypatch.setattr(commands, "_session", lambda args: None)
    assert main(["feeds", "build", "tweets", "--synthetic", "--records", "5", "--out", str(tmp_path / "x")]) == 2
    assert "STORM_PLANNER_SPARK_MEMORY" in capsys.readouterr().err

    def wrong(*args, **kwargs):
        raise ValueError("not a feed error")

    monkeypatch.setattr(generate, "tweets", wrong)
    with pytest.raises(ValueError, match="not a feed error"):   # anything else passes as it is
        build.build_feeds(None, "tweets", tmp_path, synthetic=True, records=5)
