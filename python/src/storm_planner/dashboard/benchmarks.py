"""The comparison view's data: benchmark result tables (the CSVs the benches write, such as
``bench e2e``'s ``cells.csv``: one row per workload, scheduler and repetition) as schedulers side by
side per workload.

A table qualifies when its header has ``workload`` and ``scheduler`` columns. Files are read within
bounds (:data:`MAX_CSV_BYTES`, :data:`MAX_ROWS`), only from inside the reports directory; a cell that is
not a finite number is not a figure (placements, node lists stay text and are shown as they are).
"""
from __future__ import annotations

import csv
import io
import math
import statistics
from pathlib import Path

from storm_planner.core.errors import StormPlannerError

MAX_CSV_BYTES = 5_000_000
MAX_ROWS = 100_000
MAX_TABLES = 200
MAX_CELL_CHARS = 200
KEY_COLUMNS = ("workload", "rate", "scheduler", "repetition", "status")


class BenchmarkTableError(StormPlannerError, ValueError):
    """A table the comparison view cannot read; the message names it and why."""


def list_tables(reports_dir: Path | None) -> list[dict]:
    """The comparable tables under the reports directory (path relative to it), at most MAX_TABLES."""
    if reports_dir is None or not reports_dir.is_dir():
        return []
    found: list[dict] = []
    for path in sorted(reports_dir.rglob("*.csv")):
        if len(found) >= MAX_TABLES:
            break
        try:
            with path.open(newline="", encoding="utf-8", errors="replace") as handle:
                header = next(csv.reader([handle.readline(65_536)]), [])
        except OSError:
            continue
        if "workload" in header and "scheduler" in header:
            relative = path.relative_to(reports_dir).as_posix()
            report_md = path.parent.with_suffix(".md")
            found.append({"table": relative, "report": path.parent.relative_to(reports_dir).as_posix(),
                          "report_url": f"/reports/{report_md.relative_to(reports_dir).as_posix()}"
                          if report_md.is_file() else None})
    return found


def resolve_table(reports_dir: Path | None, relative: str) -> Path:
    """The table's path, refusing anything outside the reports directory or not a listed table."""
    if reports_dir is None:
        raise BenchmarkTableError("no benchmark reports directory")
    if not relative or len(relative) > 500 or not relative.endswith(".csv"):
        raise BenchmarkTableError(f"table {relative[:80]!r}: expected the path of a .csv under the reports")
    root = reports_dir.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        raise BenchmarkTableError(f"table {relative[:80]!r}: not a file under the reports directory")
    return path


def compare(path: Path, label: str) -> dict:
    """Per workload (workload and rate), per scheduler: each numeric column's median over the rows
    that ran, with the number of rows and each value; text columns as their distinct values."""
    size = path.stat().st_size
    if size > MAX_CSV_BYTES:
        raise BenchmarkTableError(f"table {label}: {size:,} bytes, more than {MAX_CSV_BYTES:,}")
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8", errors="replace"))))
    if len(rows) > MAX_ROWS:
        raise BenchmarkTableError(f"table {label}: {len(rows):,} rows, more than {MAX_ROWS:,}")
    if not rows or "workload" not in rows[0] or "scheduler" not in rows[0]:
        raise BenchmarkTableError(f"table {label}: no workload and scheduler columns")
    columns = [c for c in rows[0] if c is not None and c not in KEY_COLUMNS]
    groups: dict[str, dict[str, list[dict]]] = {}
    skipped = 0
    for row in rows:
        if row.get("status") not in (None, "", "ran"):
            skipped += 1
            continue
        workload = _cell(row.get("workload")) + (f" @ {_cell(row['rate'])}" if row.get("rate") else "")
        groups.setdefault(workload, {}).setdefault(_cell(row.get("scheduler")), []).append(row)
    workloads = {}
    for workload, by_scheduler in sorted(groups.items()):
        workloads[workload] = {scheduler: _figures(found, columns) for scheduler, found in sorted(by_scheduler.items())}
    numeric = [c for c in columns if any(isinstance(f.get(c, {}).get("median"), float)
                                         for w in workloads.values() for f in w.values())]
    return {"table": label, "columns": columns, "numeric": numeric, "workloads": workloads,
            "rows": len(rows), "not_run": skipped}


def _figures(rows: list[dict], columns: list[str]) -> dict:
    figures = {}
    for column in columns:
        numbers = [n for n in (_number(r.get(column)) for r in rows) if n is not None]
        if numbers:
            figures[column] = {"median": statistics.median(numbers), "n": len(numbers), "values": numbers}
        else:
            figures[column] = {"text": sorted({_cell(r.get(column)) for r in rows if r.get(column)})[:10]}
    return figures


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _cell(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS] + "…"
