"""Writing a replay feed: time-ordered, partitioned, compressed, with event-time offsets.

A feed directory holds ``part-00000.jsonl.gz``, ``part-00001.jsonl.gz``, ... —
each a contiguous range of event time, so the name order is the time order —
and ``_feed.json``, the summary (records, time span, bytes, malformed rows
skipped). Every record gets ``"_t"``: seconds from the feed's first event, so a
replayer can pace any feed without knowing its dataset's time fields.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from storm_planner.feeds.feedframe import FeedFrame
from storm_planner.feeds.progress import Progress, print_progress, spark_progress

SUMMARY = "_feed.json"


def write_feed(spark, feed: FeedFrame, out_dir: str | Path, partitions: int = 8,
               progress: Progress = print_progress) -> dict:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # Readers and generators are Python-heavy: compute each record once.
    frame = feed.frame.persist(StorageLevel.DISK_ONLY)
    with spark_progress(spark, progress):
        progress(f"{feed.kind}: reading/generating records ...")
        stats = frame.agg(F.count("*").alias("n"), F.min("ts_ms").alias("first"),
                          F.max("ts_ms").alias("last")).collect()[0]
        records = int(stats["n"])
        if records == 0:
            frame.unpersist()
            raise ValueError(f"{feed.kind}: no records to write ({feed.report()})")
        first, last = int(stats["first"]), int(stats["last"])
        progress(f"{feed.kind}: {records} records; sorting by event time into {partitions} partitions ...")
        offset = F.format_string("%.3f", (F.col("ts_ms") - F.lit(first)) / F.lit(1000.0))
        line = F.concat(F.expr("substring(json, 1, length(json) - 1)"), F.lit(',"_t":'), offset, F.lit("}"))
        staging = out_dir.with_name(out_dir.name + ".staging")
        if staging.exists():
            shutil.rmtree(staging)
        (frame.repartitionByRange(max(1, partitions), "ts_ms", "seq")
              .sortWithinPartitions("ts_ms", "seq")
              .select(line.alias("value"))
              .write.option("compression", "gzip").text(str(staging)))
    frame.unpersist()
    out_dir.mkdir()
    # Spark names parts part-<index>-<uuid>...; the index is the range order.
    parts = sorted(p for p in staging.iterdir() if p.name.startswith("part-") and not p.name.endswith(".crc"))
    size = 0
    for number, part in enumerate(parts):
        target = out_dir / f"part-{number:05d}.jsonl.gz"
        part.rename(target)
        size += target.stat().st_size
    shutil.rmtree(staging)
    summary = {
        "kind": feed.kind, "records": records, "first_ms": first, "last_ms": last,
        "span_s": (last - first) / 1000.0, "parts": len(parts), "bytes": size,
        "malformed_skipped": feed.malformed, "inputs": feed.inputs,
        "seconds": round(time.monotonic() - started, 1),
    }
    (out_dir / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    progress(f"{feed.kind}: wrote {out_dir} — {describe(summary)}")
    return summary


def describe(summary: dict) -> str:
    span_text = duration_text(summary["span_s"])
    return (f"{summary['records']} records over {span_text}, {summary['parts']} parts, "
            f"{summary['bytes'] / 1e6:.1f} MB, {summary['malformed_skipped']} malformed skipped, "
            f"{summary['seconds']} s")


def duration_text(seconds: float) -> str:
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"
