"""``storm-planner feeds build``: replay feeds from the real datasets or synthetic ones.

Kinds and what they write under ``--out``:

- ``tweets``: the feed itself (``part-*.jsonl.gz`` + ``_feed.json``); input:
  tweet JSON-lines files.
- ``stocks``: ``trades/`` and ``quotes/``; input: TAQ CSV files (each a trades
  or a quotes file, told apart by header).
- ``airline``: ``flights/``, ``weather/`` (when weather input or synthetic) and
  ``stations.jsonl``; input: BTS On-Time CSVs, ``--weather`` GSOD files,
  ``--stations`` NOAA's ``isd-history.csv``.
- ``worldcup``: ``requests/`` and ``catalogue.jsonl`` (the objects the requests name, with their
  URLs; see :mod:`storm_planner.feeds.worldcup`); input: the 1998 World Cup logs' binary
  ``wc_dayX_Y[.gz]`` files.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from storm_planner.feeds import generate, readers
from storm_planner.feeds.progress import Progress, print_progress
from storm_planner.feeds.spark import driver_stopped
from storm_planner.feeds.write import describe, write_feed

KINDS = ("tweets", "stocks", "airline", "worldcup")


def build_feeds(spark, kind: str, out: str | Path, *, inputs=(), weather=(), stations=None,
                synthetic: bool = False, records: int = 100_000, seed: int | None = None,
                partitions: int = 8, progress: Progress = print_progress, drift_every: int = 0) -> dict[str, dict]:
    """Build the feeds of ``kind`` under ``out``; returns ``{feed name: summary}``. ``drift_every``
    (synthetic airline only): the hot planes and airports change every that many flights. A driver JVM that
    stops on the way (out of heap, most often) raises :class:`~storm_planner.feeds.spark.SparkDriverError`
    naming the setting that gives it more."""
    try:
        return _build_feeds(spark, kind, out, inputs=inputs, weather=weather, stations=stations,
                            synthetic=synthetic, records=records, seed=seed, partitions=partitions,
                            progress=progress, drift_every=drift_every)
    except Exception as error:
        stopped = driver_stopped(error, f"building the {kind} feeds")
        if stopped is None:
            raise
        raise stopped from error


def _build_feeds(spark, kind: str, out: str | Path, *, inputs, weather, stations, synthetic: bool, records: int,
                 seed: int | None, partitions: int, progress: Progress, drift_every: int) -> dict[str, dict]:
    if kind not in KINDS:
        raise ValueError(f"unknown feed kind {kind!r} (kinds: {', '.join(KINDS)})")
    _check_source(kind, synthetic, inputs, drift_every)
    out = Path(out)
    started = time.monotonic()
    seeds = {"seed": seed} if seed is not None else {}
    summaries: dict[str, dict] = {}
    if kind == "tweets":
        feed = (generate.tweets(spark, records, partitions=partitions, **seeds) if synthetic
                else readers.read_tweets(spark, inputs))
        _report_malformed(feed, progress)
        summaries["tweets"] = write_feed(spark, feed, out, partitions, progress)
    elif kind == "stocks":
        feeds = (generate.stocks(spark, records, partitions=partitions, **seeds) if synthetic
                 else readers.read_taq(spark, inputs))
        for name, feed in feeds.items():
            _report_malformed(feed, progress)
            summaries[name] = write_feed(spark, feed, out / name, partitions, progress)
    elif kind == "worldcup":
        if synthetic:
            feeds, catalogue = generate.worldcup(spark, records, partitions=partitions, **seeds)
        else:
            feeds = {"requests": readers.read_worldcup(spark, inputs)}
            catalogue = _catalogue_of_requests(feeds["requests"])
        for name, feed in feeds.items():
            _report_malformed(feed, progress)
            summaries[name] = write_feed(spark, feed, out / name, partitions, progress)
        out.mkdir(parents=True, exist_ok=True)
        (out / "catalogue.jsonl").write_text("".join(json.dumps(entry) + "\n" for entry in catalogue))
        progress(f"catalogue: {len(catalogue)} objects")
    else:
        if synthetic:
            feeds, station_map = generate.airline(spark, records, partitions=partitions, drift_every=drift_every,
                                                  **seeds)
        else:
            feeds = {"flights": readers.read_bts(spark, inputs)}
            if weather:
                feeds["weather"] = readers.read_gsod(spark, weather)
            station_map = []
            if stations:
                station_map, bad = readers.read_isd_stations(stations)
                if bad:
                    progress(f"stations: skipped {bad} malformed rows")
        for name, feed in feeds.items():
            _report_malformed(feed, progress)
            summaries[name] = write_feed(spark, feed, out / name, partitions, progress)
        if station_map:
            out.mkdir(parents=True, exist_ok=True)
            (out / "stations.jsonl").write_text("".join(json.dumps(s) + "\n" for s in station_map))
            progress(f"stations: {len(station_map)} airports mapped to weather stations")
    total_records = sum(s["records"] for s in summaries.values())
    total_bytes = sum(s["bytes"] for s in summaries.values())
    progress(f"built {kind} feeds in {out}: {total_records} records, {total_bytes / 1e6:.1f} MB, "
             f"{time.monotonic() - started:.0f} s")
    return summaries


def _check_source(kind: str, synthetic: bool, inputs, drift_every: int) -> None:
    if drift_every and not (synthetic and kind == "airline"):
        raise ValueError("a drifting key skew (drift_every) is a property of the synthetic airline feed only")
    if not synthetic and not inputs:
        raise ValueError("give --input files of the real dataset, or --synthetic --records N")


def _catalogue_of_requests(feed) -> list[dict]:
    """The catalogue of the objects real logs name (the archive has none: built from their ids and types)."""
    from pyspark.sql import functions as F

    from storm_planner.feeds.worldcup import catalogue_entry, in_catalogue
    objects = (feed.frame.select(F.get_json_object("json", "$.object_id").cast("long").alias("object_id"),
                                 F.get_json_object("json", "$.type").alias("type"))
               .groupBy("object_id").agg(F.first("type").alias("type")).collect())
    return [catalogue_entry(row.object_id, row.type) for row in sorted(objects) if in_catalogue(row.object_id)]


def _report_malformed(feed, progress: Progress) -> None:
    if feed.malformed:
        progress(feed.report())


__all__ = ["build_feeds", "describe", "KINDS"]
