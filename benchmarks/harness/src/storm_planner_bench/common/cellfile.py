"""A cluster run's per-cell records, one file per run: ``<out>/cells.jsonl`` beside its table (``cells.csv``,
``periods.csv``, ``steps.csv``), one JSON record per cell (or ramp step, or run), ``{"cell": NAME, PART: VALUE,
...}``, its parts those the run keeps:

* ``latency`` — the latency quantiles of the measured window (0 %, 1 %, ..., 100 %, ms), for the CDF plot;
* ``plans`` — the service's answers for the cell's topology (placements, figures, notes), to see why;
* ``startup`` — where the time from submission to the first ack went (:mod:`.startup`);
* ``executors`` — where each executor ran, task ids included.

Runs before this file kept each part as a file of its own (``<out>/latency/<cell>.json``,
``<out>/plans/<cell>.jsonl``, ``<out>/startup/<cell>.json``, ``<out>/executors/<cell>.json``);
:func:`cell_part` reads those too, so such a run's report can still be rewritten.
"""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

CELLS_FILE = "cells.jsonl"
PARTS = ("latency", "plans", "startup", "executors")


def save_cell_part(out: Path, cell: str, part: str, value: Any) -> None:
    """Set ``part`` of ``cell``'s record in ``<out>/cells.jsonl`` (a new cell's record goes last). The file is
    written whole to a temporary file and renamed over the old, so a run stopped mid-write keeps the last."""
    if part not in PARTS:
        raise ValueError(f"{part!r} is not a part of a cell's record ({', '.join(PARTS)})")
    path = out / CELLS_FILE
    records = dict(read_cells(out))
    records[cell] = {**records.get(cell, {"cell": cell}), part: value}
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(path.name + ".tmp")
    written.write_text("".join(json.dumps(record) + "\n" for record in records.values()))
    os.replace(written, path)
    _records.cache_clear()   # the next read is of this version, whatever its time stamp's resolution


def read_cells(out: Path) -> dict[str, dict[str, Any]]:
    """Every cell's record in ``<out>/cells.jsonl`` by cell name (none: empty), not to be changed: read once per
    version of the file, so a report that asks for every cell's part parses it once."""
    path = out / CELLS_FILE
    try:
        stat = path.stat()
    except OSError:
        return {}
    return _records(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _records(path: Path, mtime_ns: int, size: int) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["cell"]] = record
    return records


def cell_part(out: Path, cell: str, part: str) -> Any | None:
    """``part`` of ``cell``'s record, else the file an earlier run kept it in, else None (also for a file
    that cannot be read)."""
    record = read_cells(out).get(cell, {})
    if part in record:
        return record[part]
    legacy = out / part / f"{cell}.jsonl" if part == "plans" else out / part / f"{cell}.json"
    try:
        text = legacy.read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()] if part == "plans" else json.loads(text)
    except (OSError, ValueError):
        return None
