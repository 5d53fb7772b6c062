"""``storm-planner bench albic-real`` end to end on a real cluster (marked ``cluster``; root, cgroup v1,
iproute2): airline Job 2 at its quick rate on a drifting feed, under PoTC and ALBIC, two 20-second
periods each after a 10-second settle, through the command line. It checks the harness (every period
recorded, figures finite, tuples processed, the report and its figure written, standard output one JSON
document), that PoTC's partial key grouping ran (the kit's class in the topology jar) and ALBIC's setting:
it starts from ``spread`` (the one-to-one pairs extract k / plane sums k apart) and the service re-plans
within the budget; never that ALBIC wins."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.harness.tests.test_e2e_cluster import pytestmark as cluster_marks
from storm_planner_bench.common.cellfile import read_cells

REPO = Path(__file__).resolve().parents[3]
SCHEDULERS = ("potc", "planner:albic")
FINITE = ("collocation_factor", "load_distance", "load_index", "cpu_pct", "link_mbit", "processed_tps")
# Measured on the tuples of the period: none when a drained move paused the spouts through all of it.
OF_TUPLES = ("latency_p99_ms",)

# The end-to-end bench's own requirements (cluster marker, jars, root and iproute2, cgroup v1 quotas).
pytestmark = cluster_marks


def test_potc_and_albic_period_by_period(tmp_path):
    out = tmp_path / "albic-real"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(tmp_path / "state"))
    run = subprocess.run(
        [sys.executable, "-m", "storm_planner", "bench", "albic-real", "--quick", "--job", "2",
         "--schedulers", ",".join(SCHEDULERS), "--periods", "2", "--period", "20", "--settle", "10",
         "--budget", "2", "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stderr[-4000:]
    summary = json.loads(run.stdout)   # nothing but the answer on standard output
    assert summary["runs"] == len(SCHEDULERS)
    with (out / "periods.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["scheduler"], r["period"]) for r in rows] == [(s, str(p)) for s in SCHEDULERS for p in (1, 2)]
    for row in rows:
        where = f"{row['scheduler']} period {row['period']}: {row}"
        assert row["status"] == "ran", where
        assert all(math.isfinite(float(row[column])) for column in FINITE), where
        assert int(row["operator_tuples"]) > 0, where
    for scheduler in SCHEDULERS:
        mine = [r for r in rows if r["scheduler"] == scheduler]
        # A move drains the topology first (its spouts paused), then restarts workers: on a loaded host a
        # period of 20 s can pass before they ack again (CI saw ALBIC's first period emit nothing, its
        # spouts paused through it for a drained move of 2 executors). Every run must ack tuples, and so
        # must every period with no move in it or in the one before, with its latency measured.
        assert sum(float(r["processed_tps"]) for r in mine) > 0, mine
        for earlier, row in zip([None, *mine], mine):
            if all(int(r["migrations"]) == 0 for r in (earlier, row) if r is not None):
                assert float(row["processed_tps"]) > 0 and float(row["emitted_tps"]) > 0, row
                assert all(math.isfinite(float(row[column])) for column in OF_TUPLES), row
    potc = [r for r in rows if r["scheduler"] == "potc"]
    albic = [r for r in rows if r["scheduler"] == "planner:albic"]
    assert all(int(r["migrations"]) == 0 for r in potc), "Storm's scheduler does not move executors"
    # The service's budget windows are not the bench's periods: at most the budget per window, one more window.
    assert sum(int(r["migrations"]) for r in albic) <= 2 * (len(albic) + 1), albic
    plans = [plan for name, record in read_cells(out).items() if "albic" in name for plan in record["plans"]]
    assert plans and plans[0]["algorithm"] == "spread", "the first placement is the little-collocation start"
    assert {p["algorithm"] for p in plans[1:]} == {"albic"}
    report = (out / "job2.md").read_text()
    assert all(f"| {s} |" in report for s in SCHEDULERS)
    assert (out / "job2.png").stat().st_size > 1000
