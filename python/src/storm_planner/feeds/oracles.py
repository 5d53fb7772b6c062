"""Oracles: PySpark batch jobs computing what each topology must output once its feeds drained.

They read the same feeds the spouts replay (a JSON-lines file, gzip or not, or
a directory built by ``feeds build``) and implement each topology's
specification independently of its streaming code:

- **trends** — tweets per topic (hashtags lower-cased, distinct within a
  tweet), top k by count descending then topic ascending;
- **bargains** — for each trade, the VWAP of its symbol over the trades in
  ``(t − window, t]``; each quote takes the VWAP of its symbol's latest trade
  at or before it (ties: later in the feed); a bargain is a quote whose ask is
  below that VWAP by more than the margin, tested in exact integer
  arithmetic (prices in ten-thousandths of a dollar);
- **airline** — delay sums (``ArrDelayMinutes``) and flight counts per
  (tail number, year) [Job 2], per (origin, dest) [Job 3], and per rainscore
  bucket [Job 4]: rainscore = 100 · PRCP / running maximum PRCP of the station
  (0 before any rain), the route takes the larger of its two stations' scores
  on the flight's date, bucket = min(floor(score / 10), 9).
"""
from __future__ import annotations

import os

from storm_planner.streaming.feedio import feed_files


def _read_json(spark, feed, schema: str):
    files = [str(p) for p in feed_files(os.fspath(feed))]
    return spark.read.schema(schema).option("mode", "PERMISSIVE").json(files)


# -- trends ---------------------------------------------------------------------------------------

def trends_top_k(spark, feed, k: int = 10) -> list[list]:
    from pyspark.sql import functions as F
    tweets = _read_json(spark, feed, "entities struct<hashtags: array<struct<text: string>>>")
    topics = tweets.select(F.explode(F.array_distinct(F.filter(
        F.transform(F.col("entities.hashtags"), lambda h: F.lower(F.trim(h["text"]))),
        lambda t: t.isNotNull() & (F.length(t) > 0)))).alias("topic"))
    ranked = (topics.groupBy("topic").count()
              .orderBy(F.col("count").desc(), F.col("topic").asc()).limit(k).collect())
    return [[row["topic"], int(row["count"])] for row in ranked]


# -- bargains --------------------------------------------------------------------------------------

def _taq_ms(F):
    from storm_planner.feeds.readers import _taq_ts_ms
    return _taq_ts_ms(F)


def bargains(spark, trades_feed, quotes_feed, margin: float = 0.005, window_s: float = 600.0) -> list[list]:
    """Sorted ``[symbol, time_ms, ask_e4, ask_size]`` of every bargain."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    window_ms = int(round(window_s * 1000))
    ppm = int(round(margin * 1_000_000))
    big = "decimal(38,0)"
    trades = (_read_json(spark, trades_feed, "DATE string, TIME_M string, SYM_ROOT string, PRICE double, SIZE long")
              .select(F.col("SYM_ROOT").alias("symbol"), _taq_ms(F).alias("ts"),
                      F.round(F.col("PRICE") * 10_000).cast("long").alias("price"), F.col("SIZE").alias("size"),
                      F.monotonically_increasing_id().alias("seq"))
              .where(F.col("ts").isNotNull() & (F.col("price") > 0) & (F.col("size") > 0)))
    in_window = Window.partitionBy("symbol").orderBy("ts").rangeBetween(-(window_ms - 1), 0)
    vwaps = trades.select(
        "symbol", "ts", F.lit(0).alias("kind"), "seq",
        F.struct(F.sum(F.col("price").cast(big) * F.col("size").cast(big)).over(in_window).alias("pv"),
                 F.sum(F.col("size").cast(big)).over(in_window).alias("v")).alias("sums"),
        F.lit(None).cast("long").alias("ask"), F.lit(None).cast("long").alias("ask_size"))
    quotes = (_read_json(spark, quotes_feed, "DATE string, TIME_M string, SYM_ROOT string, ASK double, ASKSIZ long")
              .select(F.col("SYM_ROOT").alias("symbol"), _taq_ms(F).alias("ts"), F.lit(1).alias("kind"),
                      F.monotonically_increasing_id().alias("seq"),
                      F.lit(None).cast("struct<pv: decimal(38,0), v: decimal(38,0)>").alias("sums"),
                      F.round(F.col("ASK") * 10_000).cast("long").alias("ask"), F.col("ASKSIZ").alias("ask_size"))
              .where(F.col("ts").isNotNull() & (F.col("ask") > 0) & (F.col("ask_size") > 0)))
    so_far = Window.partitionBy("symbol").orderBy("ts", "kind", "seq").rowsBetween(Window.unboundedPreceding, 0)
    joined = (vwaps.unionByName(quotes)
              .withColumn("as_of", F.last("sums", ignorenulls=True).over(so_far))
              .where((F.col("kind") == 1) & F.col("as_of").isNotNull()))
    flagged = joined.where(
        F.col("ask").cast(big) * F.col("as_of.v") * F.lit(1_000_000).cast(big)
        < F.col("as_of.pv") * F.lit(1_000_000 - ppm).cast(big))
    rows = flagged.select("symbol", "ts", "ask", "ask_size").collect()
    return sorted([r["symbol"], int(r["ts"]), int(r["ask"]), int(r["ask_size"])] for r in rows)


# -- airline ----------------------------------------------------------------------------------------

FLIGHT_SCHEMA = "Year int, FlightDate string, TailNum string, Origin string, Dest string, ArrDelayMinutes double"
WEATHER_SCHEMA = "STN string, WBAN string, YEARMODA string, PRCP double"


def _sums(frame, keys: list[str], value: str = "delay"):
    from pyspark.sql import functions as F
    rows = frame.groupBy(*keys).agg(F.sum(value).alias("s"), F.count("*").alias("n")).collect()
    return sorted([*[r[k] for k in keys], float(r["s"]), int(r["n"])] for r in rows)


def airline_tables(spark, flights_feed, job: int = 2, weather_feed=None, stations=None) -> dict[str, list]:
    """``{table: sorted [*key, delay_sum, flights]}`` for Real Job ``job``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    if job not in (2, 3, 4):
        raise ValueError("the airline jobs are 2, 3 and 4")
    flights = (_read_json(spark, flights_feed, FLIGHT_SCHEMA)
               .where(F.col("ArrDelayMinutes").isNotNull() & (F.length(F.trim("TailNum")) > 0)
                      & F.col("Year").isNotNull() & F.col("Origin").isNotNull() & F.col("Dest").isNotNull())
               .select(F.trim("TailNum").alias("tail_num"), F.col("Year").alias("year"), "Origin", "Dest",
                       "FlightDate", F.col("ArrDelayMinutes").alias("delay"))).cache()
    tables = {"plane_delays": _sums(flights, ["tail_num", "year"]), "route_delays": [], "courier_efficiency": []}
    if job >= 3:
        tables["route_delays"] = _sums(flights, ["Origin", "Dest"])
    if job == 4:
        weather = (_read_json(spark, weather_feed, WEATHER_SCHEMA)
                   .where(F.col("PRCP").isNotNull() & (F.col("PRCP") < 99.99) & (F.col("PRCP") >= 0))
                   .select(F.concat_ws("-", "STN", "WBAN").alias("station"),
                           F.concat_ws("-", F.substring("YEARMODA", 1, 4), F.substring("YEARMODA", 5, 2),
                                       F.substring("YEARMODA", 7, 2)).alias("day"),
                           "PRCP", F.monotonically_increasing_id().alias("seq")))
        running = Window.partitionBy("station").orderBy("day", "seq").rowsBetween(Window.unboundedPreceding, 0)
        latest = Window.partitionBy("station", "day").orderBy(F.col("seq").desc())
        scored = (weather.withColumn("top", F.greatest(F.max("PRCP").over(running), F.lit(0.0)))
                  .withColumn("score", F.when(F.col("top") > 0, F.lit(100.0) * F.col("PRCP") / F.col("top"))
                              .otherwise(F.lit(0.0)))
                  .withColumn("rank", F.row_number().over(latest)).where(F.col("rank") == 1)
                  .select("station", "day", "score"))
        mapping = spark.read.json([str(p) for p in feed_files(os.fspath(stations))]).select("airport", "station")
        origin = mapping.select(F.col("airport").alias("Origin"), F.col("station").alias("o_station"))
        dest = mapping.select(F.col("airport").alias("Dest"), F.col("station").alias("d_station"))
        o_score = scored.select(F.col("station").alias("o_station"), F.col("day").alias("FlightDate"),
                                F.col("score").alias("o_score"))
        d_score = scored.select(F.col("station").alias("d_station"), F.col("day").alias("FlightDate"),
                                F.col("score").alias("d_score"))
        routed = (flights.join(origin, "Origin", "left").join(dest, "Dest", "left")
                  .join(o_score, ["o_station", "FlightDate"], "left").join(d_score, ["d_station", "FlightDate"], "left")
                  .withColumn("route_score", F.greatest("o_score", "d_score"))
                  .where(F.col("route_score").isNotNull())
                  .withColumn("bucket", F.least(F.floor(F.col("route_score") / F.lit(10.0)), F.lit(9)).cast("int")))
        tables["courier_efficiency"] = _sums(routed, ["bucket"])
    flights.unpersist()
    return tables


# -- World Cup 1998 (Elastic Allocator's workload) ---------------------------------------------------
#
# - **worldcup_topk** — requests per object id, top k by count descending then id ascending;
# - **worldcup_wordcount** — the tokens of every request's URL (split on "/", "." and "_", numbers
#   left out), counted;
# - **worldcup_join** — requests joined (inner) with the object catalogue on the object id: requests
#   and bytes per catalogue section.

REQUEST_SCHEMA = "object_id long, size long, url string"


def worldcup_top_k(spark, feed, k: int = 10) -> list[list]:
    from pyspark.sql import functions as F
    counts = _read_json(spark, feed, REQUEST_SCHEMA).groupBy("object_id").count()
    ordered = counts.orderBy(F.desc("count"), F.asc("object_id")).limit(k).collect()
    return [[int(row.object_id), int(row["count"])] for row in ordered]


def worldcup_word_count(spark, feed) -> dict[str, int]:
    from pyspark.sql import functions as F
    tokens = _read_json(spark, feed, REQUEST_SCHEMA).select(F.explode(F.split("url", r"[/._]+")).alias("token"))
    counts = tokens.where((F.length("token") > 0) & ~F.col("token").rlike(r"^[0-9]+$")).groupBy("token").count()
    return {row.token: int(row["count"]) for row in counts.collect()}


def worldcup_join(spark, feed, catalogue) -> dict[str, list[int]]:
    from pyspark.sql import functions as F
    requests = _read_json(spark, feed, REQUEST_SCHEMA)
    sections = _read_json(spark, catalogue, "object_id long, section string")
    joined = requests.join(sections, "object_id").groupBy("section").agg(F.count("*").alias("requests"),
                                                                           F.sum("size").alias("bytes"))
    return {row.section: [int(row.requests), int(row.bytes)] for row in joined.collect()}
