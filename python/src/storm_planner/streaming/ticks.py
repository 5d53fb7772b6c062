"""Tick tuples and emit intervals.

Storm's tick frequency (``topology.tick.tuple.freq.secs``) is a whole number of
seconds and is fixed per component at submit time, while the topologies' emit
intervals are run-time options. So bolts get a one-second tick through their
component configuration (:func:`tick_config`, which overrides the topology-wide
key) and decide at each tick whether their interval elapsed (:class:`EmitTimer`).
"""
from __future__ import annotations

import time
from collections.abc import Callable

TICK_FREQ_KEY = "topology.tick.tuple.freq.secs"


def tick_config(seconds: int = 1, **extra) -> dict:
    """Component configuration asking Storm for a tick every ``seconds``."""
    if seconds < 1:
        raise ValueError("Storm ticks at whole seconds, at least 1")
    return {TICK_FREQ_KEY: int(seconds), **extra}


class EmitTimer:
    """True once per ``interval_s`` when asked at ticks (interval 0: every tick)."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic):
        if interval_s < 0:
            raise ValueError("emit interval must not be negative")
        self.interval_s = interval_s
        self.clock = clock
        self._last: float | None = None

    def due(self) -> bool:
        now = self.clock()
        # Ticks come every whole second; allow a little jitter so that a 2 s
        # interval does not slip to 3 s when a tick arrives a hair early.
        if self._last is None or now - self._last >= self.interval_s - 0.05:
            self._last = now
            return True
        return False
