"""Reading replay feeds.

A feed is one of:

- a JSON-lines file (``.jsonl``/``.json``), optionally gzip-compressed (``.gz``);
- a directory written by ``storm-planner feeds build``: part files
  ``part-*.jsonl.gz`` (or ``.jsonl``) whose name order is the time order, and an
  optional ``_feed.json`` summary; any other file is ignored.

Records are JSON objects, one per line. Blank lines are skipped; a line that is
not a JSON object is counted and skipped (the caller decides how to report it),
never fatal, because a replay of millions of records should not die on one bad
byte.
"""
from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

PART_SUFFIXES = (".jsonl.gz", ".json.gz", ".jsonl", ".json")


def feed_files(path: str | os.PathLike) -> list[Path]:
    """The files of a feed, in replay order."""
    root = Path(path)
    if root.is_dir():
        files = sorted(p for p in root.iterdir()
                       if p.is_file() and p.name.startswith("part-") and p.name.endswith(PART_SUFFIXES))
        if not files:
            raise FileNotFoundError(f"feed directory {root} holds no part-*.jsonl[.gz] files")
        return files
    if not root.is_file():
        raise FileNotFoundError(f"feed {root} does not exist")
    return [root]


def _open_text(path: Path) -> io.TextIOBase:
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_feed_lines(path: str | os.PathLike) -> Iterator[str]:
    """Every non-blank line of the feed, in order, without its newline."""
    for file in feed_files(path):
        with _open_text(file) as handle:
            for line in handle:
                line = line.strip()
                if line:
                    yield line


class FeedStats:
    """Counts of a feed read: good records and malformed lines skipped."""

    def __init__(self) -> None:
        self.records = 0
        self.malformed = 0
        self.first_malformed: str | None = None

    def __repr__(self) -> str:
        return f"FeedStats(records={self.records}, malformed={self.malformed})"


def parse_record(line: str) -> dict | None:
    """The JSON object on ``line``, or None when the line is not one."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def iter_feed_records(path: str | os.PathLike, stats: FeedStats | None = None,
                      stride: int = 1, offset: int = 0) -> Iterator[dict]:
    """The feed's records (dicts) in order, skipping malformed lines.

    ``stride``/``offset`` select every ``stride``-th line starting at
    ``offset`` (counting non-blank lines), so that parallel spout tasks split a
    feed without parsing each other's lines.
    """
    if stride < 1 or not 0 <= offset < stride:
        raise ValueError(f"bad feed split: offset {offset} of stride {stride}")
    stats = stats if stats is not None else FeedStats()
    for index, line in enumerate(iter_feed_lines(path)):
        if index % stride != offset:
            continue
        record = parse_record(line)
        if record is None:
            stats.malformed += 1
            if stats.first_malformed is None:
                stats.first_malformed = line[:200]
            continue
        stats.records += 1
        yield record
