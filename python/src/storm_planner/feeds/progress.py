"""Progress lines while Spark works: stage lines from the caller, task counts from a watcher thread."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from storm_planner.progress import Progress, print_progress

__all__ = ["Progress", "print_progress", "spark_progress"]


@contextmanager
def spark_progress(spark, progress: Progress, every_s: float = 10.0):
    """Report the running stages' completed/total tasks every ``every_s`` seconds."""
    stop = threading.Event()
    tracker = spark.sparkContext.statusTracker()
    started = time.monotonic()

    def watch():
        last = None
        while not stop.wait(every_s):
            parts = []
            for stage_id in sorted(tracker.getActiveStageIds()):
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    parts.append(f"stage {stage_id}: {info.numCompletedTasks}/{info.numTasks} tasks")
            line = ", ".join(parts)
            if line and line != last:
                progress(f"  [{time.monotonic() - started:6.0f} s] {line}")
                last = line

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1)
