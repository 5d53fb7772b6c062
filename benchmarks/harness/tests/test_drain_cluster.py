"""``storm-planner bench drain`` end to end on a real cluster (marked ``cluster`` and ``slow``; root, cgroup v1,
iproute2), short: Top-K on the bench's quota cluster at 100 t/s under ``planner:auto``, one drained forced move
of a count and an acker 60 s after the first plan, 30 s measured after it. It checks the harness (the move found
in the plan log with its five phases, the per-second series written, the restarted workers' marks read from
their logs, nothing lost, the report and its plot written), never the figures."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storm_planner_bench.common.cluster import bench_cluster_missing

REPO = Path(__file__).resolve().parents[3]
ARGS = ["--arms", "drain", "--repeat", "1", "--rate", "100", "--force-after", "60", "--before", "20", "--after", "30",
        "--feed-records", "120000", "--drain-wait", "30"]

MISSING = bench_cluster_missing()
pytestmark = [pytest.mark.cluster, pytest.mark.bench, pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]


def test_one_drained_forced_move_is_measured_and_reported(tmp_path, bench_state):
    out = tmp_path / "drain"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(bench_state))
    run = subprocess.run([sys.executable, "-m", "storm_planner", "bench", "drain", *ARGS, "--out", str(out)],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    assert json.loads(run.stdout)["runs_run"] == 1
    with (out / "runs.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["status"] == "ran", row
    assert row["lost"] == "0" and int(row["acked"]) > 0, row
    assert all(row[f"{p}_s"] for p in ("pause", "drain", "move", "start", "resume")), row
    assert row["moved"] and row["service_starts"], row
    with (out / "seconds.csv").open() as handle:
        seconds = list(csv.DictReader(handle))
    assert len(seconds) == 50 and sum(int(s["acked"]) for s in seconds) > 0
    with (out / "starts.csv").open() as handle:
        starts = list(csv.DictReader(handle))
    assert starts and all(s["jvm_up_s"] and s["launched_s"] for s in starts), starts
    report = (tmp_path / "drain.md").read_text()
    assert "**drain on (planner.replan.drain.always)**: the criterion" in report and (out / "acks-per-second.png").is_file()
    assert (out / "logs" / "drain-1.log").is_file()
