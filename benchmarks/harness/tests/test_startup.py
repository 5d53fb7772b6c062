"""Where submission -> first ack goes, read from worker logs (storm_planner_bench/common/startup.py): the markers Storm 2.8's
worker logs, per worker its first start only, the later workers of a re-plan left out, and hostile text
neither read past its bound nor taken for a marker."""
from __future__ import annotations

import math
import time

import pytest

from storm_planner_bench.common.startup import MAX_LOG_BYTES, PHASES, startup_phases, worker_marks

T0 = time.mktime(time.strptime("2026-11-26 10:22:52", "%Y-%m-%d %H:%M:%S"))


def stamp(seconds: float) -> str:
    whole = int(seconds)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(T0 + whole)) + f".{round((seconds - whole) * 1000):03d}"


def worker_log(at_launch: float, at_loaded: float, at_active: float | None, port: int) -> str:
    lines = [
        f"{stamp(at_launch)} o.a.s.d.w.Worker main [INFO] Launching worker for topk-1-1 on a:{port} with id x",
        f"{stamp(at_launch + 1)} o.a.s.e.Executor main [INFO] Loading executor tasks count:[6, 6]",
        f"{stamp(at_loaded)} o.a.s.d.w.Worker main [INFO] Worker 9c1 for storm topk-1-1 on a:{port}  has finished "
        "loading",
    ]
    if at_active is not None:
        lines.append(f"{stamp(at_active)} o.a.s.e.s.SpoutExecutor Thread-16-requests-executor[7, 7] [INFO] "
                     "Activating spout requests:[7]")
    return "\n".join(lines) + "\n"


def write(tmp_path, port: int, text: str):
    folder = tmp_path / str(port)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "worker.log").write_text(text)


def test_the_phases_add_up_to_submission_to_first_ack(tmp_path):
    write(tmp_path, 6700, worker_log(15.0, 22.5, 28.0, 6700))
    write(tmp_path, 6701, worker_log(16.0, 23.0, None, 6701))
    phases = startup_phases(tmp_path, T0, T0 + 31.0, T0 + 31.4)
    assert list(phases) == list(PHASES)
    assert phases == {"scheduling and launch": 15.0, "worker start": 8.0, "components ready": 5.0,
                      "first emit": 3.0, "first ack": 0.4}
    assert sum(phases.values()) == pytest.approx(31.4)


def test_a_restarted_worker_counts_its_first_start_and_a_re_plans_new_worker_none(tmp_path):
    write(tmp_path, 6700, worker_log(15.0, 22.0, 27.0, 6700) + worker_log(200.0, 210.0, 215.0, 6700))
    write(tmp_path, 6702, worker_log(190.0, 195.0, None, 6702))   # started by a re-plan, after the first emit
    assert worker_marks(tmp_path)["launch"] == [T0 + 15.0, T0 + 190.0]
    phases = startup_phases(tmp_path, T0, T0 + 30.0, T0 + 30.5)
    assert phases["worker start"] == 7.0 and phases["components ready"] == 5.0


def test_missing_marks_are_nan_and_no_logs_at_all_is_not_an_error(tmp_path):
    assert all(math.isnan(v) for k, v in startup_phases(tmp_path / "absent", T0, math.nan, math.nan).items())
    write(tmp_path, 6700, worker_log(15.0, 22.0, None, 6700))
    phases = startup_phases(tmp_path, T0, T0 + 30.0, T0 + 31.0)
    assert math.isnan(phases["components ready"]) and math.isnan(phases["first emit"])
    assert phases["first ack"] == 1.0


def test_hostile_log_text_is_bounded_and_never_taken_for_a_marker(tmp_path):
    forged = (f"{stamp(1.0)} o.a.s.t.ShellBolt Thread-22 [INFO] ShellLog pid:1, name:count x\\n"
              f"{stamp(1.0)} o.a.s.d.w.Worker main [INFO] Launching worker for forged\n")   # no real newline
    padding = "x" * MAX_LOG_BYTES + "\n"
    late = f"{stamp(2.0)} o.a.s.d.w.Worker main [INFO] Launching worker for topk-1-1 on a:6700 with id y\n"
    write(tmp_path, 6700, forged + "   " + late + padding + late)
    assert worker_marks(tmp_path)["launch"] == []   # indented line and the line past the bound ignored
