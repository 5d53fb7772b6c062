"""What the topology must output once the feed drains, by direct count (pure Python)."""
from __future__ import annotations

import os
from collections import Counter

from trends.ranking import top_k
from trends.tweets import iter_topic_events


def topic_counts(feed_path: str | os.PathLike, window_s: float = 0.0) -> Counter:
    """Tweets per topic over the whole feed, or over its last ``window_s`` seconds of event time."""
    events = list(iter_topic_events(os.fspath(feed_path)))
    if window_s > 0:
        times = [t for _, t in events if t is not None]
        if times:
            horizon = max(times) - window_s
            events = [(topic, t) for topic, t in events if t is None or t > horizon]
    return Counter(topic for topic, _ in events)


def expected_top_k(feed_path: str | os.PathLike, k: int = 10, window_s: float = 0.0) -> list[list]:
    """The ``rankings`` the last sink line must hold: ``[[topic, count], ...]``, best first.

    Ties are broken as in the topology: count descending, then topic ascending.
    """
    return top_k(topic_counts(feed_path, window_s), k)
