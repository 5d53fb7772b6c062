"""The benchmarks' stamped progress lines: on standard error, whatever it is when a line is written."""
from __future__ import annotations

import io
import sys

from storm_planner_bench.common.report import stamped_progress


def test_a_progress_made_earlier_writes_to_the_standard_error_of_the_moment(monkeypatch, capsys):
    """Benchmark modules make their progress at import; a test harness (or anything) may replace and close
    the standard error it had then. Lines go to the one in place when they are written, never to stdout."""
    earlier = io.StringIO()
    monkeypatch.setattr(sys, "stderr", earlier)
    progress = stamped_progress("a bench")
    earlier.close()
    monkeypatch.undo()
    progress("step one")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("[a bench ") and captured.err.rstrip().endswith("] step one")


def test_an_explicit_stream_is_kept():
    stream = io.StringIO()
    stamped_progress("b", stream)("hello")
    assert stream.getvalue().endswith("] hello\n")
