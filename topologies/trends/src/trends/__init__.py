"""Twitter trending topics: components, ranking logic and the direct-count oracle.

``trends.expected_top_k(feed_path, k)`` gives what the last line of the sink
must hold once the feed drained. The streamparse topology class is exported as
``trends.Trends`` when streamparse is importable (see ``trends.topology`` for
why it lives in this package).
"""
from trends.oracle import expected_top_k, topic_counts
from trends.paths import shipped_feed
from trends.tweets import event_time_of, topics_of

try:  # the topology needs streamparse; the oracle must not
    from trends.topology import Trends
except ModuleNotFoundError as error:  # pragma: no cover - streamparse missing
    if not (error.name or "").startswith("streamparse"):
        raise
    Trends = None

__all__ = ["expected_top_k", "topic_counts", "shipped_feed", "event_time_of", "topics_of", "Trends"]
