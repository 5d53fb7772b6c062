"""``storm-planner bench e2e`` with ``planner:hetero`` on a real cluster (marked ``cluster``; root, cgroup v1,
iproute2): Top-K at its quick rate on the heterogeneous cluster. The bench profiles the workload on one
supervisor first (``storm_planner_bench/e2e/profiles.py``), keeps the profile under ``<out>/profiles``, and the cell
runs with it: the service answers hetero's plans (no fallback) for the executors Storm runs. The kept
profile is read back as a later run reads it (checked against the workload and the cluster's machine
types, no profiling): that a rerun with the same ``--out`` then profiles nothing again is the cache's own
logic, tested without a cluster in ``test_e2e_profiles.py`` (a second bench run here started a cluster and
ran a cell again only to show it)."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.harness.tests.test_e2e_cluster import pytestmark as cluster_marks
from storm_planner.planners.hetero.profiles import parse_profile
from storm_planner_bench.common.cellfile import read_cells
from storm_planner_bench.e2e.profiles import HeteroProfiles, submitted
from storm_planner_bench.e2e.workloads import parse_workloads

REPO = Path(__file__).resolve().parents[3]
CLUSTER = REPO / "benchmarks" / "e2e" / "cluster.yaml"
pytestmark = cluster_marks


def bench(out: Path, env: dict, repeat: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "storm_planner", "bench", "e2e", "--quick", "--workloads", "topk-link",
         "--schedulers", "planner:hetero", "--repeat", str(repeat), "--cluster", str(CLUSTER), "--settle", "5",
         "--measure", "15", "--feed-records", "6000", "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)


def test_a_hetero_cell_runs_with_the_profile_the_bench_made(tmp_path, bench_state):
    out = tmp_path / "e2e"
    # The session's state: the e2e cluster tests' Top-K feed of 6,000 requests, built once.
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(bench_state))
    run = bench(out, env, repeat=1)
    assert run.returncode == 0, run.stderr[-4000:]
    assert json.loads(run.stdout)["cells_run"] == 1
    assert "profiling topk-link on one supervisor" in run.stderr
    saved = out / "profiles" / "topk-link.json"
    profile = json.loads(saved.read_text())
    parsed = parse_profile(profile)
    for component in ("requests", "count", "top"):
        times = [parsed.times(component, machine_type) for machine_type in ("i7", "i5")]
        assert times[0] == times[1] and times[0].per_tuple_ms > 0, (component, times)
    assert {t for entry in profile["components"].values() for t in entry["times"]} == {"i7", "i5"}
    assert len(profile["profiling"]["steps"]) == 3
    with (out / "cells.csv").open() as handle:
        (cell,) = list(csv.DictReader(handle))
    assert cell["scheduler"] == "planner:hetero" and cell["status"] == "ran", cell   # not the fallback
    assert int(cell["plans"]) >= 1 and float(cell["processed_tps"]) > 0 and int(cell["lost"]) == 0, cell
    assert math.isfinite(float(cell["latency_p99_ms"])), cell
    (record,) = read_cells(out).values()
    plans = record["plans"]   # the service's answers for the cell's topology
    assert plans and all(p.get("algorithm") == "hetero" and not p.get("error") for p in plans), plans[:2]
    # A later run with the same --out takes the kept profile as written: it reads back (strict JSON, every
    # component on every machine type) and is what the cell submitted; no bench is needed, nothing profiles.
    (workload,) = parse_workloads("topk-link")
    rerun = HeteroProfiles(out / "profiles", ("i7", "i5"))
    rerun.check([workload])
    assert rerun.text(None, workload) == submitted(profile)
