"""``storm-planner bench topdown-real`` end to end on real clusters (marked ``cluster``; root, cgroup v1,
iproute2): trends at its quick rate under DefaultScheduler at one CPU scale, 0.5 (a cluster of its own whose
supervisors declare half their described CPU, their quotas as described; the planners' cells are e2e's own, checked
by its cluster test; several scales are several such clusters in turn, planned per scale in
``test_topdown_real.py``), then a two-step rate schedule (down, then up again) under ``topdown`` placed once
(``+noreplan``), through the command line, with the shortest settings that still measure; TD-RC
(``planner:topdown``, re-planned) takes the same schedule on the same cluster with other topology options,
checked without a cluster in ``test_topdown_real.py``. It checks the
harness: every cell and step recorded with finite link bytes, tuples processed, the scale's cluster
declaring its scaled CPU, the rate file taking each step's rate, ``+noreplan``'s topology never
moved, the report and its plots written; never that a scheduler gains."""
from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.harness.tests.test_e2e_cluster import LINK_CLUSTER
from benchmarks.harness.tests.test_e2e_cluster import pytestmark as cluster_marks

REPO = Path(__file__).resolve().parents[3]

# The end-to-end bench's own requirements (cluster marker, jars, root and iproute2, cgroup v1 quotas).
pytestmark = cluster_marks


def read(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_capacity_scales_and_a_rate_schedule(tmp_path):
    out = tmp_path / "topdown-real"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(tmp_path / "state"))
    run = subprocess.run(
        [sys.executable, "-m", "storm_planner", "bench", "topdown-real", "--cluster", str(LINK_CLUSTER),
         "--cpu-scales", "0.5", "--workloads", "trends-link", "--schedulers", "default",
         "--repeat", "1", "--quick", "--settle", "5", "--measure", "15", "--drain", "45",
         "--rate-schedule", "60,30", "--rate-schedulers", "planner:topdown+noreplan",
         "--step", "15", "--step-settle", "10", "--feed-records", "20000", "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=2700)
    assert run.returncode == 0, run.stderr[-4000:]
    summary = json.loads(run.stdout)   # nothing but the answer on standard output
    assert summary == {"capacity_cells_run": 1, "rate_runs": 1, "report": str(tmp_path / "topdown-real.md")}
    for scale in ("0.5",):
        folder = out / "capacity" / f"cpu-{scale}"
        nodes = json.loads((folder / "nodes.json").read_text())
        assert set(nodes["declared"].values()) == {100 * float(scale)} and set(nodes["held"].values()) == {100}
        assert f"--cpu-scale {scale} --quotas-as-described" in (folder / "command.txt").read_text()
        cells = read(folder / "cells.csv")
        assert [c["scheduler"] for c in cells] == ["default"]
        for cell in cells:
            assert cell["status"] == "ran", cell
            assert float(cell["processed_tps"]) > 0 and math.isfinite(float(cell["link_bytes_per_tuple"])), cell
    steps = read(out / "rates" / "steps.csv")
    assert [(s["scheduler"], s["step"], s["rate"]) for s in steps] == [
        ("planner:topdown+noreplan", "1", "60"), ("planner:topdown+noreplan", "2", "30")]
    assert run.stderr.count("Submitting e2e-trends-link topology") == 1 + 1, run.stderr[-4000:]
    for step in steps:
        assert step["status"] == "ran", step
        offered = float(step["rate"])
        assert abs(float(step["emitted_tps"]) - offered) <= 0.15 * offered, step    # the rate file took
        assert math.isfinite(float(step["link_bytes_per_tuple"])) and float(step["window_start_s"]) >= 0, step
    # Planned by the service and, placed once, never had an executor moved.
    assert sum(int(s["plans"]) for s in steps) >= 1 and sum(int(s["migrations"]) for s in steps) == 0, steps
    report = (tmp_path / "topdown-real.md").read_text()
    assert "## Node capacity" in report and "## A varying input rate" in report
    for plot in ("trends-link-60-capacity.png", "trends-link-rates.png"):
        assert (out / plot).is_file()
    # A rerun finds everything done and starts no cluster.
    again = subprocess.run([sys.executable, "-m", "storm_planner", "bench", "topdown-real", "--cluster",
                            str(LINK_CLUSTER), "--cpu-scales", "0.5", "--workloads", "trends-link", "--schedulers",
                            "default", "--repeat", "1", "--quick", "--settle", "5", "--measure", "15",
                            "--rate-schedule", "60,30", "--rate-schedulers", "planner:topdown+noreplan",
                            "--step", "15", "--step-settle", "10", "--feed-records", "20000", "--out", str(out)],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout)["capacity_cells_run"] == 0 and json.loads(again.stdout)["rate_runs"] == 0
