"""The drain waits for the spout's last emits before it says every tuple was acked, and reads once more at
its deadline (the log is flushed a second apart: what is still in the spout's buffer is not lost)."""
from __future__ import annotations

import threading
import time

from storm_planner_bench.e2e import cells as e2e_cells


def fast_clock(monkeypatch, flush_s: float = 0.1) -> None:
    """The drain's waits scaled down (poll 50 ms, stop check 500 ms), with margins a loaded machine keeps."""
    monkeypatch.setattr(e2e_cells, "POLL_S", 0.05)
    monkeypatch.setattr(e2e_cells, "FLUSH_S", flush_s)
    monkeypatch.setattr(e2e_cells, "STOP_CHECK_S", 0.5)


def append_later(path, delay_s: float, text: str) -> threading.Thread:
    def write() -> None:
        time.sleep(delay_s)
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)
    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_the_drain_waits_for_the_emits_the_spout_logs_after_it_saw_the_stop(tmp_path, monkeypatch):
    fast_clock(monkeypatch)
    log = tmp_path / "tweets-1-100.times"
    log.write_text("e 0:0:0 100.0000\na 0:0:0 100.0100\n")     # all acked so far
    writers = [append_later(log, 0.12, "e 0:1:0 100.5000\n"), append_later(log, 0.42, "a 0:1:0 100.6000\n")]
    times = e2e_cells.drain(tmp_path, drain_s=5.0)
    for writer in writers:
        writer.join()
    assert (len(times.emitted), times.never_acked()) == (2, 0)


def test_at_its_deadline_the_drain_reads_the_acks_a_flush_later(tmp_path, monkeypatch):
    fast_clock(monkeypatch, flush_s=0.5)
    log = tmp_path / "tweets-1-100.times"
    log.write_text("e 0:0:0 100.0000\n")
    writer = append_later(log, 0.35, "a 0:0:0 101.0000\n")     # after the 0.2 s deadline, within a flush
    times = e2e_cells.drain(tmp_path, drain_s=0.2)
    writer.join()
    assert times.never_acked() == 0
