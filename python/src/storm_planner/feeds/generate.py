"""Synthetic feeds on Spark: the generators of :mod:`.synthetic`, run in parallel.

Per-record generators (tweets, flights, weather) map ranges of indexes;
per-series generators (a stock symbol's random walk) map symbols. Every
partition builds its own generator from the same parameters, so the result
does not depend on the partitioning.
"""
from __future__ import annotations

import json

from storm_planner.feeds.feedframe import FeedFrame

# Generation tasks of at most this many records, so that progress lines
# (completed tasks) move every few seconds even on a big feed.
RECORDS_PER_TASK = 250_000


def _slices(records: int, partitions: int) -> int:
    return max(partitions, -(-records // RECORDS_PER_TASK))


def _symbol_slices(records: int, symbols: int, partitions: int) -> int:
    """Tasks for a per-symbol feed of about ``records`` trades and as many quotes: each of at most
    ``RECORDS_PER_TASK`` rows where the symbols allow: in eight tasks of two million rows each, 8,000,000
    records ran a 1 GiB driver out of heap while Spark cached them."""
    return max(1, min(symbols, max(partitions, -(-2 * records // RECORDS_PER_TASK))))


def _frame(spark, rdd, kind: str) -> FeedFrame:
    frame = spark.createDataFrame(rdd, "ts_ms long, seq long, json string")
    return FeedFrame(kind, frame)


def _dumps(record: dict) -> str:
    return json.dumps(record, separators=(",", ":"))


def tweets(spark, records: int, seed: int = 7, partitions: int = 8) -> FeedFrame:
    def generate(indexes):
        from storm_planner.feeds.synthetic.tweets import TweetGenerator
        generator = TweetGenerator(seed=seed)
        for index in indexes:
            tweet = generator.record(index)
            yield int(tweet["timestamp_ms"]), index, _dumps(tweet)
    rdd = spark.sparkContext.range(0, records, numSlices=_slices(records, partitions)).mapPartitions(generate)
    return _frame(spark, rdd, "tweets")


def stocks(spark, records: int, seed: int = 100, symbols: int = 100, partitions: int = 8) -> dict[str, FeedFrame]:
    """About ``records`` trades and as many quotes: ``records / symbols`` minutes of every symbol."""
    minutes = max(1, -(-records // symbols))

    def generate(symbol_indexes):
        from storm_planner.feeds.synthetic.stocks import StockGenerator, taq_time_ms
        generator = StockGenerator(seed=seed, symbols=symbols)
        for symbol in symbol_indexes:
            for position, record in enumerate(generator.series(symbol, minutes)):
                kind = "trades" if "PRICE" in record else "quotes"
                yield kind, taq_time_ms(record), symbol * 10 * minutes + position, _dumps(record)

    rows = spark.sparkContext.parallelize(range(symbols), _symbol_slices(records, symbols, partitions))
    rows = rows.mapPartitions(generate)
    frame = spark.createDataFrame(rows, "kind string, ts_ms long, seq long, json string").cache()
    return {kind: FeedFrame(kind, frame.where(frame.kind == kind).select("ts_ms", "seq", "json"))
            for kind in ("trades", "quotes")}


def airline(spark, records: int, seed: int = 2004, partitions: int = 8,
            drift_every: int = 0) -> tuple[dict[str, FeedFrame], list[dict]]:
    """``records`` flights, the weather of every airport's station over their days, and the station map;
    with ``drift_every`` the hot planes and airports change every that many flights (see
    :class:`~storm_planner.feeds.synthetic.airline.AirlineGenerator`)."""
    from storm_planner.feeds.synthetic.airline import AirlineGenerator
    probe = AirlineGenerator(seed=seed, drift_every=drift_every)
    weather_records = probe.days_for(records) * probe.airports

    def flights(indexes):
        from storm_planner.feeds.synthetic.airline import AirlineGenerator
        from storm_planner.feeds.timeparse import flight_ts_ms
        generator = AirlineGenerator(seed=seed, drift_every=drift_every)
        for index in indexes:
            record = generator.flight_record(index)
            yield flight_ts_ms(record["FlightDate"], record["CRSDepTime"]), index, _dumps(record)

    def weather(indexes):
        from storm_planner.feeds.synthetic.airline import AirlineGenerator
        from storm_planner.feeds.timeparse import day_ts_ms
        generator = AirlineGenerator(seed=seed)
        for index in indexes:
            record = generator.weather_record(index)
            yield day_ts_ms(record["YEARMODA"]), index, _dumps(record)

    context = spark.sparkContext
    flight_rows = context.range(0, records, numSlices=_slices(records, partitions)).mapPartitions(flights)
    weather_rows = context.range(0, weather_records, numSlices=_slices(weather_records, partitions))
    feeds = {"flights": _frame(spark, flight_rows, "flights"),
             "weather": _frame(spark, weather_rows.mapPartitions(weather), "weather")}
    return feeds, probe.stations()


def worldcup(spark, records: int, seed: int = 1998, partitions: int = 8,
             rate: float = 50.0) -> tuple[dict[str, FeedFrame], list[dict]]:
    """About ``records`` World Cup requests (trace seconds of ``rate`` mean requests each, from the
    opening days), and the catalogue of every object they could name."""
    from storm_planner.feeds.worldcup import WorldCupGenerator, catalogue_entry, in_catalogue, object_type
    probe = WorldCupGenerator(seed=seed, rate=rate)
    seconds = max(1, int(round(records / rate)))

    def generate(trace_seconds):
        from storm_planner.feeds.worldcup import WorldCupGenerator, feed_record
        generator = WorldCupGenerator(seed=seed, rate=rate)
        for second in trace_seconds:
            for offset, request in enumerate(generator.second(second)):
                yield request.timestamp * 1000, second * 100_000 + offset, _dumps(feed_record(request))

    rows = spark.sparkContext.range(0, seconds, numSlices=_slices(records, partitions)).mapPartitions(generate)
    catalogue = [catalogue_entry(obj, object_type(seed, obj)) for obj in range(probe.objects) if in_catalogue(obj)]
    return {"requests": _frame(spark, rows, "requests")}, catalogue
