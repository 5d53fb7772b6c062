"""``bench e2e-wire``: each stream's wire bytes fitted from a grid's per-link bytes, and the placements by them.

The fit is checked on cells made from known weights (it must recover them) and on the third grid's own cells
(data/e2e-grid-links.csv: the key, status, workers and per-link bytes of every cell of
benchmarks/reports/e2e-grid3/cells.csv at commit 8e60c92; `bench e2e-wire` reads it by default), where the
property the study reports must hold: by the measured wire, RAS's placement is the exact optimum on Top-K and
trends, and the kit's local search on the fitted weights reaches the optimum on every workload.
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pytest

from storm_planner.cluster.description import load_description
from storm_planner_bench.common.report import read_csv, write_csv
from storm_planner_bench.e2e import wire as e2e_wire
from storm_planner_bench.e2e.submission import cluster_nodes, submission_problem
from storm_planner_bench.e2e.wire_fit import MIN_CELLS, coefficients, fit_wire, node_counts

ROOT = Path(__file__).resolve().parents[3]
GRID = Path(__file__).parent / "data" / "e2e-grid-links.csv"
NODES = ("i7-a", "i7-b", "i5-a", "i5-b")


@pytest.fixture(scope="module")
def thrift_nodes():
    return cluster_nodes(load_description(ROOT / "benchmarks/e2e/cluster.yaml"))


def problem_of(workload, thrift_nodes):
    return submission_problem(workload, ROOT, thrift_nodes)


def test_the_workers_column_gives_executors_per_component_and_node():
    counts = node_counts("i7-a:6700[__ackerx2,countx1,__systemx1] i7-b:6701[topx1] i7-b:6702[countx1] junk[x]")
    assert counts == {"__acker": {"i7-a": 2}, "count": {"i7-a": 1, "i7-b": 1}, "top": {"i7-b": 1}}
    assert node_counts("") == {}


def synthetic_cells(problem, weights, overheads, placements):
    """Cells whose per-link bytes are exactly what ``weights`` and ``overheads`` give for each placement."""
    cells = []
    for k, placement in enumerate(placements):
        workers = " ".join(f"{node}:{6700 + k}[" + ",".join(f"{c}x{n}" for c, where in sorted(placement.items())
                                                            if (n := where.get(node))) + "]"
                           for node in NODES if any(where.get(node) for where in placement.values()))
        cell = {"workload": "w", "scheduler": f"s{k}", "workers": workers, "status": "ran"}
        for (node, direction), row in coefficients(problem, placement, NODES).items():
            cell[f"link_{node}_{direction}_bytes_per_tuple"] = str(sum(a * b for a, b in zip(row, weights + overheads)))
        cells.append(cell)
    return cells


def random_placement(problem, rng):
    return {c.id: {node: n for node, n in zip(NODES, _split(c.executors, rng)) if n} for c in problem.components}


def _split(n, rng):
    counts = [0] * len(NODES)
    for _ in range(n):
        counts[rng.randrange(len(NODES))] += 1
    return counts


def test_the_fit_recovers_the_weights_that_made_the_link_bytes(thrift_nodes):
    problem = problem_of("trends-link", thrift_nodes)      # no two streams of one pair: every weight identifiable
    rng = random.Random(7)
    weights = [rng.uniform(0, 150) for _ in problem.streams]
    weights[2] = 0.0                                       # a stream that never carries anything
    overheads = [12.0, 2.0, 10.0, 1.5]
    cells = synthetic_cells(problem, weights, overheads, [random_placement(problem, rng) for _ in range(30)])
    fit = fit_wire("w", problem, cells, NODES)
    assert fit.weights == pytest.approx(weights, abs=1e-6)
    assert fit.overheads == pytest.approx(overheads, abs=1e-6)
    assert fit.rms < 1e-6 and fit.cells == 30


def test_a_cell_without_usable_link_figures_is_skipped_and_too_few_cells_are_refused(thrift_nodes):
    problem = problem_of("trends-link", thrift_nodes)
    rng = random.Random(3)
    weights = [50.0] * len(problem.streams)
    cells = synthetic_cells(problem, weights, [5.0, 1.0, 5.0, 1.0], [random_placement(problem, rng) for _ in range(12)])
    cells[0]["link_i7-a_out_bytes_per_tuple"] = "nan"
    cells[1]["link_i5-b_in_bytes_per_tuple"] = "-3"
    cells[2]["link_i7-b_in_bytes_per_tuple"] = ""
    cells[3]["workers"] = ""
    fit = fit_wire("w", problem, cells, NODES)
    assert fit.cells == 8 and fit.weights == pytest.approx(weights, abs=1e-6)
    with pytest.raises(ValueError, match=f"2 cell\\(s\\) with per-link bytes and workers, at least {MIN_CELLS}"):
        fit_wire("w", problem, cells[2:6], NODES)


@pytest.fixture(scope="module")
def grid_study(thrift_nodes):
    _, cells = read_csv(GRID)
    cells = [c for c in cells if c["status"] == "ran"]
    studied = {}
    for workload in dict.fromkeys(c["workload"] for c in cells):
        problem = problem_of(workload, thrift_nodes)
        studied[workload] = e2e_wire.study_workload(workload, problem, [c for c in cells if c["workload"] == workload],
                                                    NODES, ["topdown", "topdown-ls"])
    return studied


def test_on_the_grid_the_fit_explains_the_measured_link_bytes(grid_study):
    """Every scheduler within 10 % but RAS, whose placements the fit overstates by up to 16 % on four workloads
    (e2e-wire's notes: mostly unexplained; key skew is at most a quarter of it): bounded here, so that it
    shows if it grows, and never in the planners' favour."""
    for workload, (fit, rows) in grid_study.items():
        assert fit.rms < 0.15 * fit.mean, (workload, fit.rms, fit.mean)
        for row in rows:
            if row.get("measured_link_bytes") is None:
                continue
            ratio = row["predicted_link_bytes"] / row["measured_link_bytes"]
            if row["placement"].startswith("ras"):
                assert 0.97 < ratio < 1.2, (workload, ratio)
            else:
                assert ratio == pytest.approx(1.0, abs=0.1), (workload, row)


def test_by_the_measured_wire_ras_is_optimal_on_topk_and_trends_and_the_local_search_reaches_the_optimum(grid_study):
    for workload, (_, rows) in grid_study.items():
        by = {row["placement"]: row["streams_bytes"] for row in rows}
        optimum = by["optimum on the fitted weights"]
        assert by["topdown-ls on the fitted weights"] == pytest.approx(optimum, rel=1e-9), workload
        assert optimum <= by["ras (grid)"] * (1 + 1e-9), workload
        if workload in ("topk-link", "trends-link"):
            assert optimum == pytest.approx(by["ras (grid)"], rel=1e-9), workload
        else:
            assert optimum < 0.95 * by["ras (grid)"], workload


def command(*arguments: str):
    """``storm-planner bench e2e-wire ARGUMENTS`` parsed: call its ``handler`` with it."""
    parser = argparse.ArgumentParser()
    e2e_wire.BENCHMARKS[0].add_to(parser.add_subparsers())
    return parser.parse_args(["e2e-wire", *arguments])


def test_the_command_writes_the_report_and_answers_json_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)      # the workloads' projects are read from the checkout
    _, cells = read_csv(GRID)
    subset, out = tmp_path / "cells.csv", tmp_path / "wire"
    write_csv(subset, [c for c in cells if c["workload"] == "topk-link"])
    parsed = command("--cells", str(subset), "--out", str(out), "--planners", "topdown")
    assert parsed.handler(parsed) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["workloads"] == ["topk-link"]
    report = (tmp_path / "wire.md").read_text()
    assert "## topk-link" in report and "optimum on the fitted weights" in report
    assert (out / "fit.png").stat().st_size > 0
    _, weights = read_csv(out / "weights.csv")
    assert {w["stream"] for w in weights} >= {"requests > count (default)", "__acker > requests (__ack_ack)"}


def test_a_missing_cells_file_is_a_clear_error(tmp_path, capsys):
    parsed = command("--cells", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o"))
    assert parsed.handler(parsed) == 2
    captured = capsys.readouterr()
    assert "none.csv: no such file" in captured.err and captured.out == ""


def test_an_unknown_workload_is_named_and_one_without_cells_enough_does_not_hide_the_others(tmp_path, capsys,
                                                                                            monkeypatch):
    monkeypatch.chdir(ROOT)
    _, cells = read_csv(GRID)
    subset = tmp_path / "cells.csv"
    topk = [c for c in cells if c["workload"] == "topk-link"]
    write_csv(subset, topk + [c for c in cells if c["workload"] == "trends-link"][:2]
              + [{**topk[0], "workload": "mystery"}])
    parsed = command("--cells", str(subset), "--out", str(tmp_path / "wire"), "--planners", "topdown")
    assert parsed.handler(parsed) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["workloads"] == ["topk-link"]
    assert "trends-link: skipped: trends-link: 2 cell(s)" in captured.err
    assert "mystery: skipped: not a bench workload" in captured.err
    assert "## topk-link" in (tmp_path / "wire.md").read_text()
    parsed = command("--cells", str(subset), "--out", str(tmp_path / "o"), "--workloads", "topk-link,nope")
    assert parsed.handler(parsed) == 2
    assert "--workloads: nope: no cells in" in capsys.readouterr().err


def test_a_cells_file_that_is_not_the_benchs_or_a_planner_typo_is_refused_by_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    other = tmp_path / "other.csv"
    write_csv(other, [{"workload": "topk-link", "status": "ran"}])
    parsed = command("--cells", str(other), "--out", str(tmp_path / "o"))
    assert parsed.handler(parsed) == 2
    assert "no scheduler, workers column: not a bench e2e cells.csv" in capsys.readouterr().err
    parsed = command("--cells", str(GRID), "--out", str(tmp_path / "o"), "--planners", "topdown,nope")
    assert parsed.handler(parsed) == 2
    assert "--planners: nope: no such planner" in capsys.readouterr().err


def test_a_short_row_is_skipped_not_a_crash(thrift_nodes):
    problem = problem_of("trends-link", thrift_nodes)
    rng = random.Random(5)
    cells = synthetic_cells(problem, [40.0] * len(problem.streams), [5.0, 1.0, 5.0, 1.0],
                            [random_placement(problem, rng) for _ in range(6)])
    cells[0]["link_i5-b_in_bytes_per_tuple"] = None     # what csv.DictReader gives a short row
    assert fit_wire("w", problem, cells, NODES).cells == 5


def test_a_global_stream_into_several_executors_is_refused_by_name(thrift_nodes):
    import dataclasses

    problem = problem_of("trends-link", thrift_nodes)
    streams = tuple(dataclasses.replace(s, grouping="global") if (s.source, s.target) == ("tweets", "count") else s
                    for s in problem.streams)
    with pytest.raises(ValueError, match="tweets > count .*a global stream into 2 executors"):
        coefficients(problem.replace(streams=streams), {"count": {"i7-a": 2}}, NODES)
