"""Replay speed for spouts.

Three modes, chosen by two numbers:

- ``speed > 0``: × event time — a record whose event time is ``e`` is due
  ``(e - e0) / speed`` seconds after the first record (event time ``e0``) was
  emitted; ``speed=1`` replays in real time, ``speed=60`` a minute per second.
- else ``rate > 0``: a fixed rate in tuples per second (over all emitted
  tuples, so a record that becomes three tuples uses three slots);
- else as fast as possible (Storm's ``topology.max.spout.pending`` is then the
  only brake).

The pacer never sleeps: it says how long until the next record is due, and the
spout returns from ``next_tuple`` (a multilang spout must not block).

Each record's *due time* (:attr:`ReplayPacer.due`, on the pacer's clock) is when the schedule meant it
to go out, whether or not the spout kept up: a spout held back (``max.spout.pending`` full, a starved
worker) emits late, and latency measured from the due time counts that wait, which latency from the
actual emit hides (coordinated omission, as wrk2 and HdrHistogram call it). Unpaced, a record is due
when it is emitted.

A fixed rate may change while the topology runs (:meth:`ReplayPacer.set_rate`): :class:`RateFile`
reads it from a file, as profiling raises a running topology's input rate step by step.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable

RATE_FILE_CHECK_S = 0.5


class ReplayPacer:
    def __init__(self, rate: float = 0.0, speed: float = 0.0,
                 clock: Callable[[], float] = time.monotonic):
        if rate < 0 or speed < 0:
            raise ValueError("replay rate and speed must not be negative")
        self.rate = float(rate)
        self.speed = float(speed)
        self.clock = clock
        self._start_wall: float | None = None
        self._start_event: float | None = None
        self._tuples = 0
        self.due: float | None = None   # the last record's due time asked for by wait_for (clock time)

    @property
    def mode(self) -> str:
        if self.speed > 0:
            return f"x{self.speed:g} event time"
        if self.rate > 0:
            return f"{self.rate:g} tuples/s"
        return "as fast as possible"

    def wait_for(self, event_time: float | None) -> float:
        """Seconds until a record with this event time is due (≤ 0: now)."""
        now = self.clock()
        if self._start_wall is None:
            self._start_wall = now
        if self.speed > 0 and event_time is not None:
            if self._start_event is None:
                self._start_event = event_time
            self.due = self._start_wall + (event_time - self._start_event) / self.speed
            return self.due - now
        if self.rate > 0:
            self.due = self._start_wall + self._tuples / self.rate
            return self.due - now
        self.due = now
        return 0.0

    def emitted(self, tuples: int) -> None:
        """Record that a record's tuples went out (counts toward the rate)."""
        self._tuples += tuples

    def set_rate(self, rate: float) -> None:
        """Emit at ``rate`` tuples/s from now on (counted afresh, so no burst makes up for the past: the
        schedule, and so the due times, start again from the change)."""
        if not rate > 0:
            raise ValueError(f"replay rate must be positive, not {rate!r}")
        self.rate = float(rate)
        self._start_wall = None
        self._tuples = 0


class RateFile:
    """A rate in tuples/s read from ``path`` at most every ``RATE_FILE_CHECK_S``; :meth:`changed` gives
    a new positive rate once, else None (a missing file, or contents that are not a positive number,
    keep the rate as it was)."""

    def __init__(self, path: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.path, self.clock = path, clock
        self._checked: float | None = None
        self._rate: float | None = None

    def changed(self) -> float | None:
        now = self.clock()
        if not self.path or (self._checked is not None and now - self._checked < RATE_FILE_CHECK_S):
            return None
        self._checked = now
        try:
            with open(self.path) as handle:
                rate = float(handle.read(64).strip())   # a number: what is longer is not one
        except (OSError, ValueError):
            return None
        if not 0 < rate < math.inf or rate == self._rate:
            return None
        self._rate = rate
        return rate
