"""A benchmark's published results: one CSV of every table it writes, one markdown report, its figures.

Under a benchmark's output folder ``OUT`` (its ``--out``):

* ``OUT/cells.csv`` holds every table the benchmark writes, one line per row. Its first column, ``table``,
  names the table a row belongs to (``drift``, ``violations-per-instance``: what used to be a CSV file of
  its own); the other columns are the union of the tables' columns, blank where a table has no such
  column, each table's in its own order as far as the tables agree (two tables that order shared columns
  differently read back in the order of the one written first). A run replaces the rows of the tables it
  writes and keeps the others'. :func:`read_tables` gives every table back with its own columns (those not
  blank in any of its rows) and its figures as numbers again; a renderer that shows a table's columns in a
  set order names them.
* ``OUT.md`` (beside the folder: ``benchmarks/reports/albic.md`` for ``benchmarks/reports/albic``) is the
  report: what a person wrote, and one generated section per table, between a line
  ``<!-- generated NAME ... -->`` and a line ``<!-- end NAME -->``. A run rewrites its sections in place and
  appends those the report lacks; nothing else in the file changes. A section's heading and its
  ``Reproduce:`` line are the run's; its body is written from ``cells.csv`` alone by the section's
  :data:`Renderer`, so :func:`regenerate` (a benchmark's ``--report-only``) rewrites every body from the
  CSV and keeps each run's heading and command.
* ``OUT/NAME.png``: a table's figure, shown at the end of its section.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

CELLS = "cells.csv"
TABLE = "table"
# The tables of a report, by name: each a list of rows (column -> value).
Tables = Mapping[str, list[dict[str, Any]]]
# A section's body from the report's tables (None: its tables are not there).
Renderer = Callable[[Tables], "str | None"]
# Longer tables are folded (an HTML <details>, which GitHub and most viewers open on a click).
FOLD_ROWS = 25

_INT = re.compile(r"-?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(nan|inf)")
_BEGIN = "<!-- generated {name}"
_END = "<!-- end {name} -->"
_BEGIN_LINE = re.compile(r"^<!-- generated (?P<name>\S+?)(?::| -->| )", re.M)


def report_path(out: Path) -> Path:
    """The report of the results under ``out``: ``OUT.md`` beside the folder."""
    return out.parent / f"{out.name}.md"


# -- the CSV ---------------------------------------------------------------------------------------------

def value(text: str) -> Any:
    """A cell as written by :func:`store`, back as what it was: whole numbers as ints, other numbers (nan and
    inf too) as floats, ``True``/``False`` as booleans, anything else as text."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text in ("True", "False"):
        return text == "True"
    return text


class Row(dict):
    """A row read back: its table's columns; a column the table left blank in every row (which the CSV cannot
    tell from one it does not have) reads as ``""``, as it was written."""

    def __missing__(self, key: str) -> str:
        return ""


def read_tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Every table of ``out/cells.csv`` (none when it is absent), in the order of the file: each row a
    :class:`Row` of its table's columns, blank cells as ``""``."""
    path = out / CELLS
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        raw = list(csv.DictReader(handle))
    tables: dict[str, list[dict[str, str]]] = {}
    for row in raw:
        tables.setdefault(row.pop(TABLE), []).append(row)
    typed: dict[str, list[dict[str, Any]]] = {}
    for name, rows in tables.items():
        columns = [c for c in rows[0] if any(r.get(c) for r in rows)]
        typed[name] = [Row({c: value(r.get(c) or "") for c in columns}) for r in rows]
    return typed


def _columns(tables: Iterable[Sequence[str]]) -> list[str]:
    """The union of the tables' columns, table by table: each column new to the header goes just before the
    next of its table's columns already there (else at the end), so every table keeps its own order unless an
    earlier one orders their shared columns otherwise."""
    header: list[str] = []
    for columns in tables:
        for i, column in enumerate(columns):
            if column in header:
                continue
            after = next((c for c in columns[i + 1:] if c in header), None)
            header.insert(header.index(after) if after is not None else len(header), column)
    return header


def store(out: Path, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """``rows`` as the table ``table`` of ``out/cells.csv``, in place of its rows there (where the first of
    them was, else at the end); the other tables stay. The file is replaced whole."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / CELLS
    existing: list[dict[str, str]] = []
    if path.exists():
        with path.open(newline="") as handle:
            existing = list(csv.DictReader(handle))
    # Each table's columns: an earlier table's as the file has them (those not blank in any of its rows).
    tables: dict[str, tuple[list[str], list[Mapping[str, Any]]]] = {}
    for row in existing:
        tables.setdefault(row[TABLE], ([], []))[1].append(row)
    for columns, found in tables.values():
        columns.extend(c for c in found[0] if c != TABLE and any(r.get(c) for r in found))
    tables[table] = (list(dict.fromkeys(k for row in rows for k in row)), list(rows))
    header = [TABLE, *_columns(columns for columns, _ in tables.values())]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=header, restval="")
    writer.writeheader()
    for name, (columns, found) in tables.items():
        writer.writerows({TABLE: name, **{c: row.get(c, "") for c in columns}} for row in found)
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(text.getvalue())
    fresh.replace(path)


# -- the report ------------------------------------------------------------------------------------------

def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], right: Iterable[int] = ()) -> str:
    """A markdown table; columns whose index is in ``right`` are right-aligned (numbers)."""
    right = set(right)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "".join("---:|" if i in right else "---|" for i in range(len(header)))]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def folded(table: str, rows: int, what: str = "rows") -> str:
    """``table`` (markdown) as it is, or folded under a "N rows" summary when longer than :data:`FOLD_ROWS`."""
    if rows <= FOLD_ROWS:
        return table
    return f"<details><summary>{rows} {what}</summary>\n\n{table}\n</details>\n"


def dump(name: str, digits: int = 3) -> Renderer:
    """The renderer of a section that shows its table as it is: every row, every column, floats with
    ``digits`` decimals (folded when long)."""
    def render(tables: Tables) -> str | None:
        rows = tables.get(name)
        if not rows:
            return None
        columns = list(rows[0])
        table = markdown_table(columns, ([f"{row[c]:.{digits}f}" if isinstance(row[c], float) else row[c]
                                          for c in columns] for row in rows))
        return folded(table, len(rows))

    return render


def _span(text: str, name: str) -> tuple[int, int] | None:
    """Where the section ``name`` is in ``text`` (its first line's start, its end line's end)."""
    match = re.search(rf"^{re.escape(_BEGIN.format(name=name))}(?::| -->| ).*$", text, re.M)
    if match is None:
        return None
    end = text.find(_END.format(name=name), match.end())
    if end < 0:
        raise ValueError(f"the generated section {name!r} of the report has no end line {_END.format(name=name)}")
    return match.start(), end + len(_END.format(name=name))


def sections_in(report: Path) -> list[str]:
    """The names of the generated sections of ``report``, in order (none when it is absent)."""
    return _BEGIN_LINE.findall(report.read_text()) if report.exists() else []


def _header(report: Path, name: str) -> tuple[str, str] | None:
    """The heading line and the ``Reproduce:`` line of the section ``name`` of ``report``, as the run wrote them."""
    if not report.exists():
        return None
    text = report.read_text()
    span = _span(text, name)
    if span is None:
        return None
    lines = text[span[0]:span[1]].splitlines()
    heading = next((line for line in lines if line.startswith("#")), None)
    command = next((line for line in lines if line.startswith("Reproduce:")), None)
    return (heading, command) if heading and command else None


def write_section(out: Path, name: str, heading: str, command_line: str, body: str) -> str:
    """The section ``name`` of ``OUT.md``: ``heading``, ``command_line``, ``body``, and ``OUT/NAME.png`` when there
    is one; in place of the section as it was, else at the end (a report that does not exist yet starts
    with a title). Returns the section."""
    report = report_path(out)
    figure = f"\n![{name}]({out.name}/{name}.png)\n" if (out / f"{name}.png").exists() else ""
    section = (f"{_BEGIN.format(name=name)}: written from {out.name}/{CELLS}; --report-only rewrites it -->\n"
               f"{heading}\n\n{command_line}\n\n{body.rstrip()}\n{figure}{_END.format(name=name)}")
    text = report.read_text() if report.exists() else f"# {out.name}\n"
    span = _span(text, name)
    if span is None:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        text = text[:span[0]] + section + text[span[1]:]
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(text)
    return section


def publish(out: Path, name: str, rows: Sequence[Mapping[str, Any]], title: str, command: str, render: Renderer, *,
            plot: Callable[[Path], None] | None = None, facts: str = "") -> str:
    """A benchmark's output step: ``rows`` as the table ``name`` of ``OUT/cells.csv``; with ``plot``,
    ``OUT/NAME.png`` (``plot`` draws it to the path it is given); the section ``name`` of ``OUT.md``: the
    heading ``title``, ``Reproduce: `command``` (`` - facts`` after it, what the run knew and the tables do
    not hold: its wall time), then what ``render`` makes of the tables read back from the CSV. Returns the
    section; without rows nothing is written and it is empty."""
    if not rows:
        return ""
    store(out, name, rows)
    if plot is not None:
        plot(out / f"{name}.png")
    body = render(read_tables(out))
    if body is None:
        raise ValueError(f"the section {name!r} found no table to show in {out / CELLS}")
    # The heading keeps the level the report gives the section (## when it is new).
    heading = (_header(report_path(out), name) or ("## ", ""))[0]
    level = heading[:len(heading) - len(heading.lstrip("#"))] or "##"
    return write_section(out, name, f"{level} {title}", f"Reproduce: `{command}`" + (f" - {facts}" if facts else ""),
                         body)


def write_table(out: Path, name: str, rows: Sequence[Mapping[str, Any]], title: str, command: str,
                digits: int = 3) -> str:
    """:func:`publish` of a table shown as it is (:func:`dump`), without a figure."""
    return publish(out, name, rows, title, command, dump(name, digits))


def regenerate(out: Path, sections: Mapping[str, Renderer], default_command: str) -> list[str]:
    """Every section of ``OUT.md`` whose tables ``OUT/cells.csv`` holds, its body written again from the CSV
    (``--report-only``), in the report's order, then the sections it lacks; each keeps its heading and
    command as the run wrote them (a section the report lacks gets its name and ``default_command``).
    Returns the names of the sections written."""
    tables = read_tables(out)
    order = [s for s in sections_in(report_path(out)) if s in sections]
    order += [s for s in sections if s not in order]
    written = []
    for name in order:
        body = sections[name](tables)
        if body is None:
            continue
        heading, command_line = _header(report_path(out), name) or (f"## {name}", f"Reproduce: `{default_command}`")
        write_section(out, name, heading, command_line, body)
        written.append(name)
    return written
