"""Event-time watermarks, so that joins of two replayed streams are deterministic.

Two spouts replay two feeds at their own pace, so which tuple reaches a join
first is an accident of scheduling. A join that must give the answer a batch
job gives (the oracles) waits instead: every replay spout with a
``watermark_stream`` sends, on that stream, ``[W]`` meaning "this task will
send no more records with event time < W" (``W = END`` once the feed is
exhausted); bolts pass watermarks on after the data they cover, and a consumer
acts on an event-time ``t`` only once the minimum watermark over all its
upstream tasks exceeds ``t``.

Storm delivers the tuples of one task to another task in the order they were
emitted, across streams, so a watermark never overtakes the data before it.
(A tuple replayed after a failure can: it then counts as late, and the
consumers treat it as arriving "now". Replays do not happen in a healthy run.)
"""
from __future__ import annotations

from collections.abc import Iterable

WATERMARK_STREAM = "watermark"
END = 9.0e18  # later than any event time (JSON has no infinity)


def upstream_tasks(context: dict, components: Iterable[str]) -> list[int]:
    """Task ids of the given components, from the multilang handshake context."""
    wanted = set(components)
    return sorted(int(t) for t, c in (context.get("task->component") or {}).items() if c in wanted)


class WatermarkTracker:
    """The minimum watermark over a fixed set of upstream tasks."""

    def __init__(self, tasks: Iterable[int]):
        self.marks = {int(t): float("-inf") for t in tasks}
        if not self.marks:
            raise ValueError("a watermark tracker needs at least one upstream task")
        self.current = float("-inf")

    def update(self, task: int, watermark: float) -> float | None:
        """Record a task's watermark; return the new minimum when it advanced."""
        task = int(task)
        if task not in self.marks:
            raise KeyError(f"watermark from unexpected task {task} (expected {sorted(self.marks)})")
        if watermark > self.marks[task]:
            self.marks[task] = float(watermark)
        low = min(self.marks.values())
        if low > self.current:
            self.current = low
            return low
        return None

    @property
    def finished(self) -> bool:
        return self.current >= END
