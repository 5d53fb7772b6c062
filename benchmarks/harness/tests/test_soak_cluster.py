"""``storm-planner bench soak`` on a real cluster (marked ``cluster`` and ``slow``; root, cgroup v1, iproute2),
through the command line, each a few minutes:

* a short soak: Top-K under ``auto`` with a forced drained move, the planner service killed, Nimbus
  restarted and a supervisor's link cut: nothing lost, the service and Nimbus back after their faults, Nimbus
  down only while it restarted, the report written, and nothing of the cluster left running;
* a soak stopped (SIGTERM) while the planner service is stopped by its hang: the run ends, the fault it was in
  is recorded as interrupted, its report is written as far as it went, and no process, namespace, bridge or
  cgroup of its cluster is left behind.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storm_planner.cluster import daemons, network
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.metrics.hookjar import default_hook_jar
from storm_planner.profiling.cgroups import CGROUP_CPU, detect_emulation
from storm_planner_bench.common.results import read_tables
from storm_planner_bench.soak import proc

REPO = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.bench,
    pytest.mark.slow,
    pytest.mark.skipif(not (default_plugin_jar() and default_plugin_jar().is_file()
                            and default_hook_jar() and default_hook_jar().is_file()),
                       reason="plugin or metrics jar not built (mvn package)"),
    pytest.mark.skipif(not (os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "nsenter"))),
                       reason="the emulated network needs root, iproute2 and nsenter"),
    pytest.mark.skipif(not detect_emulation().cgroup_quota, reason="needs a writable cgroup v1 CPU hierarchy"),
]


def soak_command(out: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "storm_planner", "bench", "soak", "--sustained", "200", "--sample", "2",
            "--out", str(out), *options]


def environment(bench_state: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), STORM_PLANNER_STATE=str(bench_state))


def storm_planner_cgroups() -> set[str]:
    return {path.name for path in CGROUP_CPU.glob("storm-planner-*")}


def assert_nothing_left(out: Path, cgroups_before: set[str]) -> None:
    """No process mentions the run's folder, no namespace or bridge of its cluster remains, no new cgroup."""
    state = out / "cluster"
    assert daemons.stray_processes(state) == []
    mentions = [p.pid for p in proc.processes() if str(out) in proc.command(p.pid) and p.pid != os.getpid()]
    assert mentions == [], [proc.command(p) for p in mentions]
    tag = network.state_tag(state)
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"spn-{tag}-" not in namespaces
    assert not (network.SYS_NET / network.Names(tag).bridge).exists()
    assert not (state / "network.json").exists()
    assert storm_planner_cgroups() <= cgroups_before


def test_a_short_soak_loses_nothing_and_every_part_comes_back(tmp_path, bench_state):
    out = tmp_path / "soak"
    before = storm_planner_cgroups()
    run = subprocess.run(
        soak_command(out, "--duration", "150", "--step", "50", "--faults", "service-kill,nimbus-restart,link-cut",
                     "--per-kind", "1", "--warmup", "25", "--tail", "35", "--force-after", "5", "--drain", "150"),
        cwd=REPO, env=environment(bench_state), capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-6000:]
    assert json.loads(run.stdout)["status"] == "finished"
    assert run.stderr.count("fault 1 (") >= 1 and "fault 3/3 (" in run.stderr, run.stderr[-4000:]
    tables = read_tables(out)
    summary = {row["check"]: row for row in tables["summary"]}
    where = json.dumps(tables, default=str)[:6000]
    assert summary["lost"]["verdict"] == "ok", where
    assert summary["service back after its faults"]["verdict"] == "ok", where
    assert summary["Nimbus"]["verdict"] == "ok", where
    assert summary["topology at the end"]["value"] == "ACTIVE", where
    assert [f["outcome"] for f in tables["faults"] if f["index"] > 0] == ["recovered"] * 3, where
    assert sorted(f["kind"] for f in tables["faults"]) == ["link-cut", "nimbus-restart", "service-kill"]
    assert [o for o in tables["nimbus"] if o.get("allowed")], where     # the restart was seen, and it came back
    assert len(tables["moves"]) >= 1 and tables["moves"][0].get("moved"), where   # the forced move at least
    assert any("pause" in str(d.get("phases")) for d in tables["drains"]), where
    report = (tmp_path / "soak.md").read_text()
    assert "## Summary" in report and "Reproduce: `storm-planner bench soak" in report
    assert (out / "throughput.png").is_file() and (out / "service.png").is_file()
    assert_nothing_left(out, before)


def test_a_soak_stopped_during_a_fault_undoes_it_and_leaves_nothing_behind(tmp_path, bench_state):
    out = tmp_path / "soak"
    before = storm_planner_cgroups()
    process = subprocess.Popen(
        soak_command(out, "--duration", "120", "--faults", "service-hang", "--per-kind", "1", "--warmup", "5",
                     "--tail", "60", "--force-move", "none"),
        cwd=REPO, env=environment(bench_state), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 900
        for line in process.stderr:
            lines.append(line)
            if "(SIGSTOP)" in line or time.monotonic() > deadline:
                break
        assert any("(SIGSTOP)" in line for line in lines), "".join(lines[-40:])
        planner = daemons.DaemonRecord.load(out / "cluster" / "run" / "planner.json").pid
        assert proc.stat(planner).state == "T"        # the service is stopped: the run is inside its fault
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 143, "".join(lines[-20:])
    run = json.loads((out / "run.json").read_text())
    assert run["status"].startswith("interrupted")
    faults = (out / "faults.csv").read_text()
    assert "service-hang" in faults and "interrupted" in faults
    assert (tmp_path / "soak.md").is_file()
    summary = {row["check"]: row for row in read_tables(out)["summary"]}
    assert summary["run"]["verdict"] == "NOT OK" and "interrupted" in summary["run"]["value"]
    assert_nothing_left(out, before)
