"""Counting and ranking topics.

Order of a ranking: count descending, then topic ascending — a total order, so
top-k lists are deterministic, and the top-k of a union of disjoint partitions
equals the top-k of the partitions' top-k lists merged (which is why the
intermediate rankers may send only their own top-k to the total ranker).
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping


def rank_key(item: tuple[str, int]) -> tuple[int, str]:
    topic, count = item
    return (-count, topic)


def top_k(counts: Mapping[str, int] | Iterable[tuple[str, int]], k: int) -> list[list]:
    """The k best ``[topic, count]`` pairs (count > 0), best first."""
    items = counts.items() if isinstance(counts, Mapping) else counts
    best = heapq.nsmallest(k, ((t, c) for t, c in items if c > 0), key=rank_key)
    return [[topic, count] for topic, count in best]


def merge_rankings(rankings: Iterable[Iterable[Iterable]], k: int) -> list[list]:
    """Top-k over several partition rankings (partitions hold disjoint topics)."""
    merged: dict[str, int] = {}
    for ranking in rankings:
        for topic, count in ranking:
            merged[topic] = max(count, merged.get(topic, 0))
    return top_k(merged, k)


class TopicCounter:
    """Counts per topic, cumulative or over a sliding event-time window.

    With ``window_s > 0`` a topic's count is the number of its events whose
    event time lies in ``(watermark - window_s, watermark]``, where the
    watermark is the largest event time seen so far; events already older than
    the window when they arrive are dropped. Every count change is remembered
    until :meth:`drain_changes` hands it out (count 0 means: no longer counted).
    """

    def __init__(self, window_s: float = 0.0):
        if window_s < 0:
            raise ValueError("window must not be negative")
        self.window_s = window_s
        self.counts: dict[str, int] = {}
        self.changed: set[str] = set()
        self.watermark: float | None = None
        self.late_dropped = 0
        self._events: list[tuple[float, str]] = []  # heap of (event time, topic)

    def add(self, topic: str, event_time: float | None = None) -> None:
        if self.window_s > 0 and event_time is not None:
            if self.watermark is not None and event_time <= self.watermark - self.window_s:
                self.late_dropped += 1
                return
            heapq.heappush(self._events, (event_time, topic))
            if self.watermark is None or event_time > self.watermark:
                self.watermark = event_time
        self.counts[topic] = self.counts.get(topic, 0) + 1
        self.changed.add(topic)
        self._expire()

    def _expire(self) -> None:
        if self.window_s <= 0 or self.watermark is None:
            return
        horizon = self.watermark - self.window_s
        while self._events and self._events[0][0] <= horizon:
            _, topic = heapq.heappop(self._events)
            remaining = self.counts[topic] - 1
            if remaining:
                self.counts[topic] = remaining
            else:
                del self.counts[topic]
            self.changed.add(topic)

    def drain_changes(self) -> list[tuple[str, int]]:
        """``(topic, count)`` for every topic changed since the last drain, sorted by topic."""
        changes = sorted((topic, self.counts.get(topic, 0)) for topic in self.changed)
        self.changed.clear()
        return changes
