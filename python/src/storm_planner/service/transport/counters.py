"""The service's own counters (refused connections and frames, plan-log failures, ...), in ``Health.counters``;
and, for ``/metrics`` (:mod:`storm_planner.service.prometheus`), counts by labels (plans by algorithm and
outcome, calls by outcome) and durations (solve time, round trip)."""
from __future__ import annotations

import bisect
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

# A cause that repeats (an attack, a full disk) is logged at most once per this many seconds, with its count.
LOG_EVERY_S = 60.0

# Upper bounds (seconds) of the duration buckets: a greedy plan takes a millisecond, a solver up to the
# deadline (the plugin's default is 5 s; long deadlines reach minutes).
DURATION_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                      float("inf"))

Labels = tuple[str, ...]


class Durations:
    """Durations observed per label values, in cumulative buckets (a Prometheus histogram's figures)."""

    def __init__(self, buckets: Sequence[float] = DURATION_BUCKETS_S) -> None:
        self.buckets = tuple(buckets)
        self._series: dict[Labels, tuple[list[int], list[float]]] = {}   # labels -> (per bucket, [sum])
        self._lock = threading.Lock()

    def observe(self, labels: Labels, seconds: float) -> None:
        index = min(bisect.bisect_left(self.buckets, seconds), len(self.buckets) - 1)   # bucket: le its bound
        with self._lock:
            counts, total = self._series.setdefault(labels, ([0] * len(self.buckets), [0.0]))
            counts[index] += 1
            total[0] += seconds

    def snapshot(self) -> dict[Labels, tuple[list[tuple[float, int]], int, float]]:
        """Labels -> (cumulative (upper bound, count) per bucket, count, sum)."""
        with self._lock:
            series = {labels: (list(counts), total[0]) for labels, (counts, total) in self._series.items()}
        result = {}
        for labels, (counts, total) in series.items():
            cumulative, running = [], 0
            for bound, count in zip(self.buckets, counts):
                running += count
                cumulative.append((bound, running))
            result[labels] = (cumulative, running, total)
        return result


class ServiceCounters:
    """Thread-safe named counts; :meth:`note` also logs the first occurrence of a kind and then a summary
    at most every ``LOG_EVERY_S`` seconds, so a flood cannot flood the log."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._counts: Counter[str] = Counter()
        self._logged_at: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock
        self._labelled: Counter[tuple[str, Labels]] = Counter()
        self._durations: dict[str, Durations] = {}

    def add(self, name: str, amount: int = 1) -> int:
        with self._lock:
            self._counts[name] += amount
            return self._counts[name]

    def note(self, name: str, logger: logging.Logger, message: str, *args: object, level: int = logging.WARNING) -> None:
        """Count ``name`` and log ``message`` unless this kind was logged within ``LOG_EVERY_S``."""
        now = self._clock()
        with self._lock:
            self._counts[name] += 1
            count = self._counts[name]
            last = self._logged_at.get(name)
            due = last is None or now - last >= LOG_EVERY_S
            if due:
                self._logged_at[name] = now
        if due:
            logger.log(level, message + " (%s: %d so far; logged at most every %.0f s)",
                       *args, name, count, LOG_EVERY_S)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def count(self, name: str, *labels: str, amount: int = 1) -> None:
        """Count ``name`` for these label values (``/metrics`` only; ``Health.counters`` has no labels)."""
        with self._lock:
            self._labelled[name, labels] += amount

    def labelled(self, name: str) -> dict[Labels, int]:
        with self._lock:
            return {labels: count for (kind, labels), count in self._labelled.items() if kind == name}

    def observe(self, name: str, seconds: float, *labels: str) -> None:
        """A duration of ``name`` for these label values."""
        with self._lock:
            durations = self._durations.get(name)
            if durations is None:
                durations = self._durations[name] = Durations()
        durations.observe(labels, seconds)

    def durations(self, name: str) -> dict[Labels, tuple[list[tuple[float, int]], int, float]]:
        with self._lock:
            durations = self._durations.get(name)
        return durations.snapshot() if durations is not None else {}
