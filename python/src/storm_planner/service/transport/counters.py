"""The service's own counters (refused connections and frames, plan-log failures, ...), in ``Health.counters``."""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

# A cause that repeats (an attack, a full disk) is logged at most once per this many seconds, with its count.
LOG_EVERY_S = 60.0


class ServiceCounters:
    """Thread-safe named counts; :meth:`note` also logs the first occurrence of a kind and then a summary
    at most every ``LOG_EVERY_S`` seconds, so a flood cannot flood the log."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._counts: Counter[str] = Counter()
        self._logged_at: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

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
