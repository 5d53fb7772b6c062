"""The capacity model against each node (``capacity/nodes.py``): the placement read from a step's ``workers``
column, the model's CPU and link figures at the rate processed beside the measured ones, the fit of the CPU
it misses against what a node sends, and the report's section built from them."""
from __future__ import annotations

import json

import pytest
from test_capacity_measured import trends_problem
from test_capacity_report import WORKERS, fake_run

from storm_planner import cli
from storm_planner.core.problem import Problem
from storm_planner_bench.capacity.nodes import NodeFigures, node_figures, placement_of, sent_cpu_fit

QUOTAS = {"i7-a": 45.0, "i7-b": 45.0, "i5-a": 35.0, "i5-b": 35.0}


def test_the_workers_column_gives_one_entry_per_executor():
    placement = placement_of(WORKERS)
    assert len(placement) == 10
    assert sum(p["component"] == "__acker" and p["node"] == "i7-a" and p["port"] == 6700 for p in placement) == 4
    assert [p["node"] for p in placement if p["component"] == "count"] == ["i7-b", "i7-b"]
    assert placement_of("") == []
    with pytest.raises(ValueError, match="'count' is not COMPONENTxCOUNT"):
        placement_of("i7-a:6700[count]")


def test_each_node_is_predicted_at_the_rate_processed_beside_what_it_measured():
    problem = Problem.from_dict(trends_problem(rate=1000.0))
    step = {"workers": WORKERS, "processed_tps": "2000", "cpu_i7-a_pct": "45.0", "cpu_i7-b_pct": "40.0",
            "link_i7-a_out_bytes_per_tuple": "100", "link_i7-a_in_bytes_per_tuple": "60",
            "link_i7-b_out_bytes_per_tuple": "60", "link_i7-b_in_bytes_per_tuple": "100"}
    a, b = node_figures(problem, step, QUOTAS)
    # Twice the reference rate: fixed + 2 × (load − fixed) per executor, and 2 % per worker JVM.
    # i7-a: tweets 2 + 2·18, two ranks 2·(1 + 2·7), total 2·3, four ackers 4·(0.5 + 2·3.5), its worker 2.
    assert (a.node, a.cpu_predicted) == ("i7-a", pytest.approx(38 + 30 + 6 + 30 + 2))
    assert (b.node, b.cpu_predicted) == ("i7-b", pytest.approx(2 * (1 + 2 * 14) + 2))
    assert a.at_quota and not b.at_quota and b.cpu_missed == pytest.approx(40.0 - 60.0)
    # tweets → count crosses from i7-a (150 B, 2000 t/s); count → rank comes back (120 B, 2000 t/s).
    assert a.sent_predicted == pytest.approx(2000 * 150 * 8e-6) == b.received_predicted
    assert b.sent_predicted == pytest.approx(2000 * 120 * 8e-6) == a.received_predicted
    assert (a.sent_measured, a.received_measured) == (pytest.approx(1.6), pytest.approx(0.96))
    assert node_figures(problem, {**step, "processed_tps": "0"}, QUOTAS) == []
    assert node_figures(problem, {**step, "workers": ""}, QUOTAS) == []


def figures(sent: float, missed: float, quota: float = 45.0, measured: float = 20.0) -> NodeFigures:
    return NodeFigures("n", measured - missed, measured, quota, 0.0, sent, 0.0, 0.0)


def test_the_fit_finds_the_cpu_missed_per_mbit_sent_and_leaves_nodes_at_their_quota_out():
    points = [figures(0.5, 2.6), figures(1.0, 4.9), figures(2.0, 10.1), figures(0.0, 0.2),
              figures(1.0, 30.0, measured=44.0)]                              # at its quota: left out
    fit = sent_cpu_fit(points)
    assert fit is not None and fit.nodes == 4
    assert fit.per_mbit == pytest.approx(5.0, abs=0.1)
    assert fit.rms_after < 0.3 < fit.rms_before
    assert sent_cpu_fit(points[:2]) is None
    assert sent_cpu_fit([figures(0.0, 1.0)] * 3) is None


def test_the_report_sets_each_node_beside_the_model_when_the_run_kept_its_measured_problem(tmp_path):
    out = tmp_path / "e2e"
    fake_run(out)
    measured = out / "measured" / "e2e-bench" / "trends-link.json"
    saved = json.loads(measured.read_text())
    measured.write_text(json.dumps({**saved, "record": {"problem": trends_problem(rate=1000.0)}}))
    assert cli.main(["bench", "capacity", "--report-only", "--out", str(out)]) == 0
    report = (tmp_path / "e2e.md").read_text()
    section = report.split("## The model against each node")[1].split("\n## ")[0]
    assert "| planner:auto (repetition 1) | 4,900 | i7-a |" in section
    assert " (quota) |" not in section                          # the i7s measured 40 of their 45 %
    assert "% of a core per Mbit/s the node sends" in section


def test_the_report_leaves_the_section_out_without_a_measured_problem(tmp_path):
    out = tmp_path / "e2e"
    fake_run(out)
    assert cli.main(["bench", "capacity", "--report-only", "--out", str(out)]) == 0
    assert "## The model against each node" not in (tmp_path / "e2e.md").read_text()
