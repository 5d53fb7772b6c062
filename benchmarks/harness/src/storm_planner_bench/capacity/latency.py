"""A window's latency, measured from each tuple's due time, in a bounded HdrHistogram.

The replay spout logs each tuple's *due time* (when the replay schedule at the offered rate meant it to go
out) beside its first emit (:mod:`storm_planner.streaming.timelog`). A spout that falls behind emits late:
latency from the emit hides the wait (coordinated omission), latency from the due time counts it. So a
window ``[begin, end)`` is judged by the tuples **due** in it:

* a tuple due in the window and acked: ``ack − due`` into the histogram ``due``;
* due in the window but never acked (lost, or not yet acked when the figures are read), or never emitted at
  all (the schedule asked for ``offered × seconds`` tuples; those the spout did not get to are missing from
  its log): at the histogram's top, :data:`TOP_MS`. They are counted, never dropped: a spout that is
  held back shows its backlog in p99.

Beside it, named as such, the classic figure: ``emit-to-ack`` latency of the tuples first emitted in the
window and acked (a held-back spout's tuples look fast there).

**The spout's lag behind its schedule** at a time ``t``: per spout task, ``t`` minus the latest due time
among the tuples it had emitted by then (the schedule's backlog; an on-schedule spout lags by less than one
tuple's interval), the largest over tasks; read as the median of that lag over the second before ``t``
(:data:`LAG_SMOOTH_S`), so one late batch or a pause shorter than half a second does not read as a backlog
(a lag that grows steadily reads half a second behind, at both ends of a window alike). It is reported at the
window's start and end; the sustained rule (:mod:`.rule`) wants it flat.

The histograms record microseconds from 1 µs to :data:`TOP_MS` (values above it are clamped to it) with 3
significant digits (HdrHistogram's bounded memory: about 40 kB each, whatever the count); a step keeps both,
encoded, for the report's CDF.
"""
from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hdrh.histogram import HdrHistogram

from storm_planner.streaming.timelog import TupleTimes

TOP_MS = 300_000.0           # 5 minutes: the histogram's top, where unfinished and unemitted tuples count
_TOP_US = int(TOP_MS * 1000)
DIGITS = 3
LAG_SMOOTH_S = 1.0           # lag read as the median over this long before the time asked
_LAG_SAMPLES = 11


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, _TOP_US, DIGITS)


def record_ms(histogram: HdrHistogram, value_ms: float, count: int = 1) -> None:
    """Record ``count`` values of ``value_ms`` (clamped to [1 µs, :data:`TOP_MS`])."""
    if count > 0:
        micros = _TOP_US if not math.isfinite(value_ms) else min(_TOP_US, max(1, round(value_ms * 1000.0)))
        histogram.record_value(micros, count)


def percentile_ms(histogram: HdrHistogram, percent: float) -> float:
    """The histogram's ``percent`` percentile in ms (NaN when empty)."""
    if histogram.get_total_count() == 0:
        return math.nan
    return histogram.get_value_at_percentile(percent) / 1000.0


def encode(histogram: HdrHistogram) -> str:
    """HdrHistogram's compressed, base64 encoding (text)."""
    encoded = histogram.encode()
    return encoded.decode("ascii") if isinstance(encoded, bytes) else str(encoded)


def decode(text: str) -> HdrHistogram:
    return HdrHistogram.decode(text.encode("ascii"))


def cdf_ms(histogram: HdrHistogram, points: int = 200) -> tuple[list[float], list[float]]:
    """(latency ms, share of tuples at or below it) at ``points`` percentiles up to 99.99 %, for a plot."""
    if histogram.get_total_count() == 0:
        return [], []
    shares = [100.0 * (1.0 - 10 ** (-4.0 * k / (points - 1))) for k in range(points)]
    return [percentile_ms(histogram, share) for share in shares], [share / 100.0 for share in shares]


@dataclass(frozen=True)
class WindowLatency:
    """What one window's tuples say (see the module docstring): the due-time histogram and the classic
    emit-to-ack one, the counts behind them, and the spout's lag at the window's ends."""

    due: HdrHistogram
    emit_to_ack: HdrHistogram
    due_tuples: int          # tuples the schedule meant to go out in the window (offered × seconds)
    unemitted: int           # of those, never emitted (counted at the top)
    unacked: int             # emitted, due in the window, not acked (counted at the top)
    lag_start_s: float
    lag_end_s: float

    def figures(self) -> dict[str, Any]:
        """The row's latency columns (ms; NaN where there is nothing to read)."""
        return {
            "due_p50_ms": _round(percentile_ms(self.due, 50.0)),
            "due_p99_ms": _round(percentile_ms(self.due, 99.0)),
            "due_p999_ms": _round(percentile_ms(self.due, 99.9)),
            "emit_to_ack_p50_ms": _round(percentile_ms(self.emit_to_ack, 50.0)),
            "emit_to_ack_p99_ms": _round(percentile_ms(self.emit_to_ack, 99.0)),
            "emit_to_ack_p999_ms": _round(percentile_ms(self.emit_to_ack, 99.9)),
            "due_tuples": self.due_tuples, "unemitted": self.unemitted, "unacked": self.unacked,
            "lag_start_s": round(self.lag_start_s, 3), "lag_end_s": round(self.lag_end_s, 3),
        }


def window_latency(times: TupleTimes, begin: float, end: float, offered_tps: float,
                   lags: SpoutLag | None = None) -> WindowLatency:
    """The window ``[begin, end)``'s latency figures from the spouts' merged time log, the topology offered
    ``offered_tps`` in all (every spout task's schedule together). A tuple not acked in ``times`` counts at
    the top: read after the drain that is a tuple never acked; read earlier, one still unfinished. ``lags``:
    the log's :class:`SpoutLag`, when the caller reads several windows of one log."""
    due, classic = new_histogram(), new_histogram()
    found = unacked = 0
    for key, emitted in times.emitted.items():
        acked = times.acked.get(key)
        if begin <= emitted < end and acked is not None:
            record_ms(classic, (acked - emitted) * 1000.0)
        due_at = times.due.get(key, emitted)
        if not begin <= due_at < end:
            continue
        found += 1
        if acked is None:
            unacked += 1
        else:
            record_ms(due, (acked - due_at) * 1000.0)
    expected = max(0, round(offered_tps * (end - begin)))
    unemitted = max(0, expected - found)
    record_ms(due, TOP_MS, unacked + unemitted)
    lags = lags or SpoutLag(times)
    return WindowLatency(due, classic, max(expected, found), unemitted, unacked, lags.at(begin), lags.at(end))


class SpoutLag:
    """The spouts' lag behind their schedules at any time (module docstring), from one pass over the log."""

    def __init__(self, times: TupleTimes) -> None:
        per_task: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for key, emitted in times.emitted.items():
            per_task[key.rpartition("/")[0]].append((emitted, times.due.get(key, emitted)))
        self._tasks: list[tuple[list[float], list[float]]] = []
        for events in per_task.values():
            events.sort()
            emits, latest, high = [], [], -math.inf
            for emitted, due_at in events:
                high = max(high, due_at)
                emits.append(emitted)
                latest.append(high)
            self._tasks.append((emits, latest))

    def instant(self, t: float) -> float:
        """The largest lag over the spout tasks at ``t`` (0 before a task's first emit)."""
        worst = 0.0
        for emits, latest in self._tasks:
            index = bisect.bisect_right(emits, t) - 1
            if index >= 0:
                worst = max(worst, t - latest[index])
        return worst

    def at(self, t: float) -> float:
        """The lag at ``t``: the median of :meth:`instant` over the :data:`LAG_SMOOTH_S` before it."""
        if not self._tasks:
            return math.nan
        samples = sorted(self.instant(t - LAG_SMOOTH_S * k / (_LAG_SAMPLES - 1)) for k in range(_LAG_SAMPLES))
        return samples[_LAG_SAMPLES // 2]


def merged(histograms: Iterable[HdrHistogram]) -> HdrHistogram:
    """One histogram holding every value of ``histograms`` (repetitions of a step, for one CDF)."""
    total = new_histogram()
    for histogram in histograms:
        total.add(histogram)
    return total


def _round(value: float) -> float:
    return round(value, 1) if math.isfinite(value) else math.nan
