"""``storm-planner bench capacity`` end to end on a real cluster (marked ``cluster``; root, cgroup v1, iproute2),
at quick settings: Top-K on the bench's cluster under RAS and its A/A copy (``--aa ras``), one repetition,
each search a coarse step kept (40 t/s), a coarse step missed (20,000 t/s: far beyond what the cluster
processes), a recovery hold and one bisection step. It checks the harness (every step a row with its
figures, latency from the due time showing the missed steps' backlog where emit-to-ack does not, nothing
lost, histograms kept, the report and its A/A section written, the quotas at the CFS period asked for, a
rerun resuming with nothing to do), never the capacities."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storm_planner_bench.common.cluster import bench_cluster_missing

REPO = Path(__file__).resolve().parents[3]
# The feed must outlast the 20,000 t/s step, which the spouts chase as fast as the cluster lets them: 120,000
# records once ran out in the bisection step after it (CI, a less loaded moment), so the feed is 400,000.
ARGS = ["--quick", "--workloads", "topk-link", "--arms", "ras", "--aa", "ras", "--clusters",
        "benchmarks/e2e/cluster.yaml", "--repeat", "1", "--no-pilot", "--start-rate", "40", "--factor", "500",
        "--max-steps", "3", "--hold", "10", "--drain", "15", "--calibration", "0", "--feed-records", "400000",
        "--disturbed-cpu", "400", "--reruns", "0", "--cfs-period-ms", "50"]

MISSING = bench_cluster_missing()
pytestmark = [pytest.mark.cluster, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]


def test_a_quick_search_with_an_aa_pair_bisects_and_reports(tmp_path, bench_state):
    out = tmp_path / "capacity"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(bench_state))
    run = subprocess.run([sys.executable, "-m", "storm_planner", "bench", "capacity", *ARGS, "--out", str(out)],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    assert json.loads(run.stdout)["searches_run"] == 2          # nothing but the answer on standard output
    with (out / "searches.csv").open() as handle:
        searches = list(csv.DictReader(handle))
    assert sorted(s["arm"] for s in searches) == ["ras", "ras#2"]
    with (out / "steps.csv").open() as handle:
        steps = list(csv.DictReader(handle))
    for search in searches:
        where = f"{search['arm']}: {search}"
        assert search["status"] == "ran" and search["steps"] == "3" and "3 steps" in search["stopped"], where
        assert float(search["capacity_tps"]) == 40.0 and float(search["bracket_high_tps"]) == 10020.0, where
        mine = [s for s in steps if s["arm"] == search["arm"]]
        assert [(s["role"], s["rate"]) for s in mine] == [("coarse", "40"), ("coarse", "20000"),
                                                          ("recovery", "20"), ("bisect", "10020")], where
        kept, missed, bisect = mine[0], mine[1], mine[3]
        assert kept["verdict"] == "sustained" and kept["verdict_after_drain"] == "sustained", kept
        assert missed["verdict"] == bisect["verdict"] == "not sustained", (missed, bisect)
        for step in (kept, missed, bisect):
            assert all(math.isfinite(float(step[c])) for c in ("processed_tps", "due_p99_ms", "emit_to_ack_p99_ms",
                                                               "lag_start_s", "lag_end_s", "outside_cpu_pct")), step
            assert int(step["lost"]) == 0 and int(step["due_tuples"]) > 0 and step["placement"], step
        assert float(kept["due_p99_ms"]) < 500 and int(kept["unemitted"]) == 0, kept
        # far beyond capacity the spout falls behind: its backlog shows from the due time, not from the emit
        assert float(missed["due_p99_ms"]) > 10 * float(missed["emit_to_ack_p99_ms"]), missed
        assert float(missed["lag_end_s"]) > float(missed["lag_start_s"]) + 1, missed
    records = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["histograms"]["due"] and r["executors"] for r in records)
    run_record = json.loads((out / "run.json").read_text())
    assert run_record["commit"] and len(run_record["order"]) == 2
    assert run_record["conditions"] == {"cfs_period_ms": 50.0}           # and the quotas were made so:
    assert "quotas per CFS period of 50 ms" in run.stderr, run.stderr[-2000:]
    report = (tmp_path / "capacity.md").read_text()
    assert "## topk-link on e2e-bench" in report and "## Resolution: the A/A pair" in report
    assert "| ras#2 |" in report and (out / "e2e-bench-topk-link-throughput.png").is_file()
    # A rerun finds both searches done and starts no cluster (allowed on another commit: the tree may have
    # moved on while the test ran).
    again = subprocess.run([sys.executable, "-m", "storm_planner", "bench", "capacity", *ARGS, "--allow-other-commit",
                            "--out", str(out)],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and json.loads(again.stdout)["searches_run"] == 0, again.stderr[-2000:]
