"""A benchmark's published results (:mod:`storm_planner_bench.common.results`): every table in one CSV, read back
as written; one report whose generated sections a run or ``--report-only`` rewrites, and nothing else in it."""
from __future__ import annotations

import math

from storm_planner_bench.common.report import saved_command
from storm_planner_bench.common.results import (
    CELLS,
    dump,
    publish,
    read_tables,
    regenerate,
    report_path,
    sections_in,
    store,
    write_section,
)


def test_every_table_reads_back_with_its_own_columns_and_values(tmp_path):
    store(tmp_path, "runs", [{"run": "a", "count": 3, "share": 0.25, "ok": True, "note": "", "gap": math.nan},
                             {"run": "b", "count": -1, "share": 1e-06, "ok": False, "note": "x, y", "gap": 2.0}])
    store(tmp_path, "steps", [{"run": "a", "step": 1, "rate": 20.0}])
    tables = read_tables(tmp_path)
    assert list(tables) == ["runs", "steps"]
    first, second = tables["runs"]
    assert list(first) == ["run", "count", "share", "ok", "note", "gap"]
    assert (first["count"], first["share"], first["ok"], first["note"]) == (3, 0.25, True, "")
    assert math.isnan(first["gap"]) and isinstance(second["gap"], float)
    assert (second["count"], second["share"], second["ok"], second["note"]) == (-1, 1e-06, False, "x, y")
    assert tables["steps"] == [{"run": "a", "step": 1, "rate": 20.0}]
    # A column a table left blank in every row reads as "" (the CSV cannot tell it from one the table lacks).
    store(tmp_path, "blank", [{"name": "x", "bound": ""}])
    (row,) = read_tables(tmp_path)["blank"]
    assert list(row) == ["name"] and row["bound"] == ""


def test_a_table_written_again_replaces_its_rows_in_place(tmp_path):
    for name in ("one", "two", "three"):
        store(tmp_path, name, [{"name": name, "value": 1}])
    store(tmp_path, "two", [{"name": "two", "value": 2, "extra": "new"}, {"name": "two", "value": 3, "extra": ""}])
    tables = read_tables(tmp_path)
    assert list(tables) == ["one", "two", "three"]
    assert [r["value"] for r in tables["two"]] == [2, 3] and tables["one"] == [{"name": "one", "value": 1}]
    assert (tmp_path / CELLS).read_text().splitlines()[0] == "table,name,value,extra"


def test_tables_keep_their_own_column_order_where_they_agree(tmp_path):
    store(tmp_path, "a", [{"x": 1, "planner": "p", "y": 2}])
    store(tmp_path, "b", [{"first": 0, "planner": "q", "z": 3, "y": 4}])   # agrees with a: planner before y
    assert list(read_tables(tmp_path)["b"][0]) == ["first", "planner", "z", "y"]
    assert list(read_tables(tmp_path)["a"][0]) == ["x", "planner", "y"]


def test_a_run_rewrites_its_sections_and_nothing_else_of_the_report(tmp_path):
    out = tmp_path / "bench"
    report = report_path(out)
    report.write_text("# Hand-written\n\nBefore.\n\n<!-- generated drift -->\n<!-- end drift -->\n\nAfter.\n")
    rows = [{"round": 1, "load": 0.5}, {"round": 2, "load": 0.25}]
    publish(out, "drift", rows, "Drift", "storm-planner bench x drift", dump("drift", 2), facts="3 s")
    text = report.read_text()
    assert text.startswith("# Hand-written\n\nBefore.\n\n<!-- generated drift") and text.endswith("<!-- end drift -->\n\nAfter.\n")
    assert "## Drift\n\nReproduce: `storm-planner bench x drift` - 3 s\n\n| round | load |" in text
    assert "| 2 | 0.25 |" in text
    # A section the report lacks goes at the end; one already there keeps its place and its heading's level.
    publish(out, "scale", [{"n": 1}], "Scale", "cmd", dump("scale"))
    report.write_text(report.read_text().replace("## Drift", "#### Drift"))
    publish(out, "drift", [{"round": 1, "load": 1.0}], "Drift again", "cmd 2", dump("drift", 2))
    text = report.read_text()
    assert sections_in(report) == ["drift", "scale"] and "#### Drift again" in text and "| 1 | 1.00 |" in text
    assert "| 2 | 0.25 |" not in text and "After." in text


def test_report_only_rewrites_the_bodies_from_the_csv_and_keeps_the_runs_heading_and_command(tmp_path):
    out = tmp_path / "bench"
    publish(out, "drift", [{"round": 1, "load": 0.5}], "Drift, seed 1", "storm-planner bench x drift --seed 1",
            dump("drift"), facts="211 s wall")
    written = report_path(out).read_text()
    assert regenerate(out, {"drift": dump("drift"), "absent": dump("absent")}, "cmd") == ["drift"]
    assert report_path(out).read_text() == written
    # From the CSV alone: the same body, under the section's name and the command given.
    report_path(out).unlink()
    regenerate(out, {"drift": dump("drift")}, "storm-planner bench x all --report-only")
    text = report_path(out).read_text()
    assert "## drift\n\nReproduce: `storm-planner bench x all --report-only`\n\n| round | load |\n|---|---|\n| 1 | 0.500 |" in text


def test_a_long_table_is_folded(tmp_path):
    store(tmp_path, "long", [{"i": i} for i in range(30)])
    body = dump("long")(read_tables(tmp_path))
    assert body.startswith("<details><summary>30 rows</summary>\n\n| i |") and body.endswith("</details>\n")
    assert dump("other")(read_tables(tmp_path)) is None


def test_the_command_of_a_published_run_comes_from_its_report(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    report = tmp_path / "run.md"
    report.write_text("Reproduce: `flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench x --repeat 2 --out "
                      "benchmarks/reports/x`\n")
    assert saved_command(out, [report], "fallback") == "storm-planner bench x --repeat 2"
    (out / "command.txt").write_text("storm-planner bench x --repeat 3\n")
    assert saved_command(out, [report], "fallback") == "storm-planner bench x --repeat 3"
    assert saved_command(tmp_path / "none", [tmp_path / "none.md"], "fallback") == "fallback"


def test_a_section_is_written_once_even_beside_others_of_similar_names(tmp_path):
    out = tmp_path / "bench"
    write_section(out, "random", "## random", "Reproduce: `a`", "A")
    write_section(out, "random-summary", "## summary", "Reproduce: `b`", "B")
    write_section(out, "random", "## random", "Reproduce: `a`", "A2")
    text = report_path(out).read_text()
    assert sections_in(report_path(out)) == ["random", "random-summary"]
    assert "A2" in text and "\nA\n" not in text and "\nB\n" in text
