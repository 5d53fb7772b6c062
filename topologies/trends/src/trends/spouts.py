"""The ``tweets`` spout: replays a tweet feed, one tuple per topic of a tweet."""
from __future__ import annotations

from storm_planner.streaming import ReplaySpout
from trends.paths import shipped_feed
from trends.tweets import event_time_of, topics_of


class TweetSpout(ReplaySpout):
    """Emits ``(topic, event_time)`` for each distinct hashtag of each tweet."""

    conf_prefix = "trends"
    outputs = ["topic", "event_time"]

    def default_feed(self):
        return str(shipped_feed())

    def tuples_for(self, tweet):
        when = event_time_of(tweet)
        return [([topic, when], None) for topic in topics_of(tweet)]

    def event_time(self, tweet):
        return event_time_of(tweet)
