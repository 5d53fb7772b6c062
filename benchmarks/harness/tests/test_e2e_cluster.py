"""``storm-planner bench e2e`` end to end on a real cluster (marked ``cluster``; root, cgroup v1, iproute2):
Top-K at its quick rate on the link-bound cluster under Storm's DefaultScheduler, its
ResourceAwareScheduler and the plugin with ``topdown``, one short cell each, through the command line.
It checks the harness (every cell recorded with finite figures, tuples processed, none lost, the report
written, standard output one JSON document) and issue #33's placement property (topdown's ackers beside
their executors, no more link bytes per tuple than RAS), never throughput or latency ratios."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storm_planner_bench.common.cellfile import read_cells
from storm_planner_bench.common.cluster import bench_cluster_missing

REPO = Path(__file__).resolve().parents[3]
SCHEDULERS = ("default", "ras", "planner:topdown")
FINITE = ("processed_tps", "emitted_tps", "latency_p50_ms", "latency_p99_ms", "latency_mean_ms",
          "submit_to_first_ack_s", "link_bytes_per_tuple", "cpu_a_pct", "link_d_mbit")
# Four equal supervisors behind 2 Mbit/s links, CPU not binding: where the tuples and the acker's traffic
# cross a link is the placement's whole effect (issue #33's setting).
LINK_CLUSTER = REPO / "benchmarks" / "e2e" / "cluster-link.yaml"

MISSING = bench_cluster_missing()
pytestmark = [pytest.mark.cluster, pytest.mark.bench, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]


def workers_by_node(text: str) -> dict[str, set[str]]:
    """cells.csv's ``workers``, ``i7-a:6700[__ackerx2,countx1] i7-b:6701[topx1]``, as node -> components."""
    holding: dict[str, set[str]] = {}
    for worker in text.split():
        slot, _, inside = worker.partition("[")
        holding.setdefault(slot.split(":")[0], set()).update(
            part.rpartition("x")[0] for part in inside.rstrip("]").split(",") if part)
    return holding


def test_workers_by_node_reads_the_cells_column():
    assert workers_by_node("i7-a:6700[__ackerx2,countx1] i7-a:6701[topx1] i5-b:6702[__ackerx1]") == {
        "i7-a": {"__acker", "count", "top"}, "i5-b": {"__acker"}}


def test_three_schedulers_side_by_side(tmp_path, bench_state):
    out = tmp_path / "e2e"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(bench_state))
    run = subprocess.run(
        [sys.executable, "-m", "storm_planner", "bench", "e2e", "--quick", "--schedulers", ",".join(SCHEDULERS),
         "--cluster", str(LINK_CLUSTER), "--settle", "5", "--measure", "15", "--feed-records", "6000",
         "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    summary = json.loads(run.stdout)   # nothing but the answer on standard output
    assert summary["cells_run"] == len(SCHEDULERS)
    with (out / "cells.csv").open() as handle:
        cells = list(csv.DictReader(handle))
    assert [c["scheduler"] for c in cells] == list(SCHEDULERS)
    for cell in cells:
        where = f"{cell['scheduler']}: {cell}"
        assert cell["status"] == "ran", where
        assert all(math.isfinite(float(cell[column])) for column in FINITE), where
        assert float(cell["processed_tps"]) > 0, where
        assert int(cell["lost"]) == 0, where
        assert int(cell["supervisors_used"]) >= 1 and cell["placement"], where
        # Nimbus ran the cell's scheduler: only the plugin asks the planner service for plans.
        assert (int(cell["plans"]) > 0) == cell["scheduler"].startswith("planner:"), where
    # Issue #33: topdown puts every acker on a node that runs executors it serves, and sends no more bytes
    # over the links per tuple than RAS. Both placements keep the data path inside a node, so what crosses
    # links is mostly the daemons' heartbeats to Nimbus and ZooKeeper (same for both): 10 % and 50 bytes
    # per tuple of slack for them.
    by_scheduler = {c["scheduler"]: c for c in cells}
    topdown, ras = by_scheduler["planner:topdown"], by_scheduler["ras"]
    holding = workers_by_node(topdown["workers"])
    with_ackers = {node for node, components in holding.items() if "__acker" in components}
    assert with_ackers and all(holding[node] - {"__acker"} for node in with_ackers), topdown["workers"]
    topdown_bytes, ras_bytes = float(topdown["link_bytes_per_tuple"]), float(ras["link_bytes_per_tuple"])
    assert topdown_bytes <= 1.1 * ras_bytes + 50, (topdown_bytes, ras_bytes, topdown["workers"], ras["workers"])
    report = (tmp_path / "e2e.md").read_text()
    assert all(f"| {s} |" in report for s in SCHEDULERS)
    assert (out / "topk-link-60.png").is_file()
    # A rerun finds every cell done and starts no cluster.
    again = subprocess.run([sys.executable, "-m", "storm_planner", "bench", "e2e", "--quick", "--schedulers",
                            ",".join(SCHEDULERS), "--cluster", str(LINK_CLUSTER), "--out", str(out)], cwd=REPO,
                           env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and json.loads(again.stdout)["cells_run"] == 0, again.stderr[-2000:]


def test_a_stepped_ramp_measures_each_rate_on_one_submission(tmp_path, bench_state):
    """``--stepped``: one submission raised from 30 to 60 t/s through the spout's rate file, each step a
    row of its own with the rate it offered, nothing lost; the start-up and the plans are the ramp's."""
    out = tmp_path / "ramp"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(bench_state))
    run = subprocess.run(
        [sys.executable, "-m", "storm_planner", "bench", "e2e", "--schedulers", "planner:topdown", "--rate", "30,60",
         "--stepped", "--step-settle", "5", "--cluster", str(LINK_CLUSTER), "--settle", "5", "--measure", "15",
         "--drain", "45", "--feed-records", "6000", "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    assert json.loads(run.stdout)["cells_run"] == 2
    assert run.stderr.count("Submitting e2e-topk-link topology") == 1, run.stderr[-4000:]
    with (out / "cells.csv").open() as handle:
        steps = list(csv.DictReader(handle))
    assert [(s["rate"], s["status"]) for s in steps] == [("30", "ran"), ("60", "ran")], steps
    for step in steps:
        offered = float(step["rate"])
        assert abs(float(step["emitted_tps"]) - offered) <= 0.15 * offered, step    # the rate file took
        assert float(step["processed_tps"]) > 0 and int(step["lost"]) == 0, step
        assert all(math.isfinite(float(step[column])) for column in FINITE), step
    records = read_cells(out)   # one record per step; the ramp's start-up and plans in its first step's
    assert [name for name, record in records.items() if "startup" in record] == ["topk-link-30-planner-topdown-1"]
    assert [name for name, record in records.items() if "plans" in record] == ["topk-link-30-planner-topdown-1"]
    assert sorted(name for name, record in records.items() if "latency" in record and "executors" in record) == [
        "topk-link-30-planner-topdown-1", "topk-link-60-planner-topdown-1"]
    assert sum(int(s["plans"]) for s in steps) >= 1
    assert "topk-link: highest sustainable rate of 30, 60 t/s" in (tmp_path / "ramp.md").read_text()
    assert (out / "topk-link-ramp.png").is_file()
