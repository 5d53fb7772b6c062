"""Synthetic tweets in Twitter's v1.1 JSON shape, with Zipf hashtags and bursts.

Shape of a record (the fields the readers and the topology use, plus a few
usual ones): ``id``, ``id_str``, ``created_at`` (``"Wed Oct 10 20:19:24 +0000
2018"``), ``timestamp_ms`` (string), ``text``, ``lang``, ``user{id,
screen_name}``, ``entities{hashtags[{text, indices}], user_mentions, urls}``.

Realistic shape: topic popularity follows a Zipf law over a vocabulary; time is
cut into epochs and in each epoch a few topics burst (their probability is
boosted for that epoch only), as trending topics do; tweets carry 0–3 hashtags
(about a third carry none); arrival times are increasing with random gaps, so a
feed is time-ordered by construction.
"""
from __future__ import annotations

from datetime import datetime, timezone

from storm_planner.feeds.synthetic import rng_for, sample_cdf, zipf_cdf

START = datetime(2013, 6, 1, tzinfo=timezone.utc).timestamp()
SYLLABLES = ["storm", "data", "cloud", "rain", "music", "news", "game", "vote", "tech", "food",
             "sun", "city", "team", "love", "film", "art", "code", "bike", "star", "wave"]
HASHTAG_COUNT_CDF = [0.33, 0.73, 0.93, 1.0]  # 0, 1, 2, 3 hashtags


def topic_name(rank: int) -> str:
    """A readable, unique hashtag for a popularity rank (0 = most popular)."""
    n = len(SYLLABLES)
    first, rest = SYLLABLES[rank % n], rank // n
    second = SYLLABLES[rest % n] if rest else ""
    suffix = str(rest // n) if rest >= n else ""
    return f"{first.capitalize()}{second.capitalize()}{suffix}"


class TweetGenerator:
    def __init__(self, seed: int = 7, vocabulary: int = 2000, exponent: float = 1.1,
                 tweets_per_second: float = 50.0, epoch_s: float = 600.0, bursts: int = 3,
                 burst_share: float = 0.25):
        self.seed = seed
        self.vocabulary = vocabulary
        self.cdf = zipf_cdf(vocabulary, exponent)
        self.gap = 1.0 / tweets_per_second
        self.epoch_s = epoch_s
        self.bursts = bursts
        self.burst_share = burst_share

    def event_time(self, index: int) -> float:
        # Uniform jitter inside the slot keeps times strictly increasing.
        return START + (index + rng_for(self.seed, "t", index).random() * 0.999) * self.gap

    def burst_topics(self, epoch: int) -> list[int]:
        rng = rng_for(self.seed, "burst", epoch)
        # Bursting topics come from the long tail: a trend is news.
        return [rng.randrange(self.vocabulary // 10, self.vocabulary) for _ in range(self.bursts)]

    def topic(self, rng, epoch: int) -> int:
        if self.bursts and rng.random() < self.burst_share:
            return rng.choice(self.burst_topics(epoch))
        return sample_cdf(self.cdf, rng.random())

    def record(self, index: int) -> dict:
        rng = rng_for(self.seed, "tweet", index)
        when = self.event_time(index)
        epoch = int((when - START) // self.epoch_s)
        count = sample_cdf(HASHTAG_COUNT_CDF, rng.random())
        tags: list[str] = []
        for _ in range(count):
            tag = topic_name(self.topic(rng, epoch))
            if tag not in tags:
                tags.append(tag)
        user = rng.randrange(1, 50_000)
        words = " ".join(rng.choice(SYLLABLES) for _ in range(rng.randint(3, 9)))
        text, hashtags = words, []
        for tag in tags:
            start = len(text) + 1
            text += f" #{tag}"
            hashtags.append({"text": tag, "indices": [start, start + len(tag) + 1]})
        tweet_id = 340_000_000_000_000_000 + index
        stamp = datetime.fromtimestamp(when, timezone.utc)
        return {
            "created_at": stamp.strftime("%a %b %d %H:%M:%S +0000 %Y"),
            "id": tweet_id, "id_str": str(tweet_id),
            "text": text, "lang": "en",
            "timestamp_ms": str(int(when * 1000)),
            "user": {"id": user, "id_str": str(user), "screen_name": f"user{user}"},
            "entities": {"hashtags": hashtags, "user_mentions": [], "urls": []},
        }
