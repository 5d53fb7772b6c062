"""Tweets in Twitter's JSON shape: topics and event times.

Topics are the tweet's hashtags (``entities.hashtags[].text``), lower-cased
(Twitter treats hashtags case-insensitively) and de-duplicated within a tweet,
so a topic's count is the number of tweets that mention it. The event time is
``timestamp_ms`` when present (streaming API), else ``created_at``
(``"Wed Oct 10 20:19:24 +0000 2018"``).
"""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from storm_planner.streaming.feedio import FeedStats, iter_feed_records

CREATED_AT_FORMAT = "%a %b %d %H:%M:%S %z %Y"


def topics_of(tweet: dict) -> list[str]:
    """The tweet's distinct topics, in order of first mention."""
    entities = tweet.get("entities") if isinstance(tweet, dict) else None
    hashtags = entities.get("hashtags") if isinstance(entities, dict) else None
    topics: list[str] = []
    for tag in hashtags or ():
        text = tag.get("text") if isinstance(tag, dict) else None
        if isinstance(text, str) and text.strip():
            topic = text.strip().lower()
            if topic not in topics:
                topics.append(topic)
    return topics


def event_time_of(tweet: dict) -> float | None:
    """Seconds since the epoch, or None when the tweet carries no usable time."""
    stamp = tweet.get("timestamp_ms")
    if stamp is not None:
        try:
            return int(stamp) / 1000.0
        except (TypeError, ValueError):
            pass
    created = tweet.get("created_at")
    if isinstance(created, str):
        try:
            return datetime.strptime(created, CREATED_AT_FORMAT).timestamp()
        except ValueError:
            return None
    return None


def iter_topic_events(feed_path: str, stats: FeedStats | None = None) -> Iterator[tuple[str, float | None]]:
    """(topic, event_time) for every topic of every tweet of the feed, in feed order."""
    for tweet in iter_feed_records(feed_path, stats):
        when = event_time_of(tweet)
        for topic in topics_of(tweet):
            yield topic, when
