"""What a restarted worker's start is made of, read from supervisor and worker logs written here in Storm
2.8's format, and ``bench drain``'s report from the files of a run."""
from __future__ import annotations

import csv
import json
import math
import time

import pytest

from storm_planner import cli
from storm_planner_bench.drain import workerstart as ws
from storm_planner_bench.drain.experiment import RUN_COLUMNS, SECOND_COLUMNS, START_COLUMNS
from storm_planner_bench.drain.report import write_report

TOPOLOGY = "drain-topk-link-1-1796524860"


def stamp(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) + f".{int(round(at % 1 * 1000)) % 1000:03d}"


def supervisor_log(moved: float, port: str = "6709") -> str:
    rows = [
        (moved - 60, f"o.a.s.d.s.Slot SLOT_{port} [INFO] STATE waiting-for-worker-start msInState: 9081 topo:x "
                     f"worker:old -> running msInState: 0 topo:x worker:old"),
        (moved + 0.8, f"o.a.s.d.s.Slot SLOT_{port} [INFO] STATE running msInState: 90000 topo:x worker:old -> "
                      f"kill msInState: 0 topo:x worker:old"),
        (moved + 0.9, "o.a.s.d.s.Slot SLOT_6700 [INFO] STATE running msInState: 1 -> kill msInState: 0"),
        (moved + 2.1, f"o.a.s.d.s.Slot SLOT_{port} [INFO] STATE kill msInState: 1300 topo:x worker:old -> "
                      f"waiting-for-blob-localization msInState: 0"),
        (moved + 2.4, f"o.a.s.d.s.BasicContainer SLOT_{port} [INFO] Launching worker with command: 'java' '-cp'"),
        (moved + 2.5, f"o.a.s.d.s.Slot SLOT_{port} [INFO] STATE waiting-for-blob-localization msInState: 379 -> "
                      f"waiting-for-worker-start msInState: 0 topo:x worker:new"),
        (moved + 11.6, f"o.a.s.d.s.Slot SLOT_{port} [INFO] STATE waiting-for-worker-start msInState: 9081 topo:x "
                       f"worker:new -> running msInState: 0 topo:x worker:new"),
    ]
    return "\n".join(f"{stamp(at)} {text}" for at, text in rows) + "\n"


def worker_log(moved: float) -> str:
    rows = [
        (moved - 70, "o.a.s.d.w.Worker main [INFO] Launching worker for x on i5-b:6709 with id old and conf {}"),
        (moved - 60, "o.a.s.t.ShellBolt Thread-18-count-executor[5, 6] [INFO] Launched subprocess with pid 533"),
        (moved + 9.0, "o.a.s.d.w.Worker main [INFO] Launching worker for x on i5-b:6709 with id new and conf {}"),
        (moved + 12.5, "o.a.s.d.w.Worker main [INFO] Worker new for storm x on i5-b:6709  has finished loading"),
        (moved + 13.4, "o.a.s.d.w.WorkerState refresh-active-timer [INFO] All connections are ready for worker "
                       "i5-b:6709 with id new"),
        (moved + 13.5, "o.a.s.e.b.BoltExecutor Thread-16-__acker-executor[4, 4] [INFO] Prepared bolt __acker:[4]"),
        (moved + 15.1, "o.a.s.t.ShellBolt Thread-18-count-executor[5, 6] [INFO] Launched subprocess with pid 640"),
        (moved + 16.8, "o.a.s.e.b.BoltExecutor Thread-18-count-executor[5, 6] [INFO] Prepared bolt count:[5, 6]"),
        (moved + 17.0, "o.a.s.t.ShellBolt Thread-22 [INFO] ShellLog pid:640, name:count Prepared bolt count:[9]"),
    ]
    return "\n".join(f"{stamp(at)} {text}" for at, text in rows) + "\n"


def test_a_restarted_workers_marks_come_from_its_supervisors_and_its_own_log(tmp_path):
    moved = time.time() - 600
    (tmp_path / "supervisor-i5-b.log").write_text(supervisor_log(moved))
    worker = tmp_path / "workers-artifacts" / TOPOLOGY / "6709"
    worker.mkdir(parents=True)
    (worker / "worker.log").write_text(worker_log(moved))
    marks = ws.slot_marks(tmp_path, TOPOLOGY, ["i5-b:6709", "i7-a:6700"], moved)
    mine = marks["i5-b:6709"]
    assert mine["seen"] == pytest.approx(0.8, abs=0.01) and mine["old gone"] == pytest.approx(2.1, abs=0.01)
    assert mine["launched"] == pytest.approx(2.4, abs=0.01) and mine["jvm up"] == pytest.approx(9.0, abs=0.01)
    assert mine["loaded"] == pytest.approx(12.5, abs=0.01) and mine["connected"] == pytest.approx(13.4, abs=0.01)
    assert mine["components"] == pytest.approx(16.8, abs=0.01)     # a component's own log line is no mark
    assert mine["heartbeat"] == pytest.approx(11.6, abs=0.01)
    assert all(math.isnan(v) for v in marks["i7-a:6700"].values())   # no logs of that node
    kept = ws.kept_lines(tmp_path, TOPOLOGY, ["i5-b:6709"], moved)
    assert len(kept) == 11 and all("SLOT_6700" not in line for line in kept)
    summary = {r["mark"]: r for r in ws.summary([mine, marks["i7-a:6700"]])}
    assert summary["jvm up"]["slots"] == 1 and summary["jvm up"]["median_s"] == pytest.approx(9.0, abs=0.01)


def write_rows(path, columns, rows):
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), restval="")
        writer.writeheader()
        writer.writerows(rows)


def test_the_report_states_the_criterion_per_arm_with_its_figures_and_the_plot(tmp_path):
    out = tmp_path / "drain"
    out.mkdir()
    base = {"status": "ran", "intervals": 18, "lost": 0, "failed": 0, "replayed": 0, "longest_gap_s": 0.4,
            "pause_s": 0.4, "drain_s": 2.0, "move_s": 1.0, "start_s": 15.0, "resume_s": 0.3, "stopped_s": 18.7,
            "due_p50_ms": 40, "due_p99_ms": 17000, "due_max_ms": 18000, "acked_per_s_before": 320,
            "acked_per_s_after": 320, "in_flight_before": 800, "in_flight_after_drain": 0}
    runs = [{**base, "arm": "drain", "repetition": 1, "intervals_without_ack": 3, "longest_gap_s": 17.9},
            {**base, "arm": "no-drain", "repetition": 1, "intervals_without_ack": 0, "failed": 2003,
             "replayed": 2003, "pause_s": "", "drain_s": ""}]
    write_rows(out / "runs.csv", RUN_COLUMNS, runs)
    write_rows(out / "seconds.csv", SECOND_COLUMNS,
               [{"arm": arm, "repetition": 1, "second": s, "acked": 0 if arm == "drain" and 0 <= s < 18 else 320,
                 "emitted": 320, "failed": 0, "replayed": 0} for arm in ("drain", "no-drain") for s in range(-30, 60)])
    write_rows(out / "starts.csv", START_COLUMNS, [{"arm": "drain", "repetition": 1, "slot": "i5-b:6709",
                                                    "seen_s": 0.8, "jvm_up_s": 9.0, "service_s": 12.5}])
    (out / "run.json").write_text(json.dumps({"command": "storm-planner bench drain --repeat 1", "commit": "abc",
                                              "rate": 320, "rate_source": "given (--rate)", "workload": "topk-link",
                                              "scheduler": "planner:auto", "force": "count,__acker@i7-a",
                                              "force_after_s": 120, "target_why": "given"}))
    report = write_report(out)
    assert report == tmp_path / "drain.md" and (out / "acks-per-second.png").stat().st_size > 0
    text = report.read_text()
    assert "**drain on (planner.replan.drain.always)**: the criterion (a tuple acked in every 5 s interval around the " \
           "move, nothing lost) is **not met**: met in 0 of 1 repetitions" in text
    assert "**drain off (planner.replan.drain: false)**: the criterion" in text and "**met**: met in 1 of 1" in text
    assert "workers' start until their first metrics windows 15.0 s" in text
    assert "| jvm up | 1 | 9.0 |" in text and "](drain/acks-per-second.png)" in text
    report.unlink()
    assert cli.main(["bench", "drain", "--report-only", "--out", str(out)]) == 0
    assert report.read_text() == text
