"""What each topology must output once the feed drained, by direct count (pure Python).

The Spark batch oracles (``storm_planner.feeds.oracles.worldcup_*``) compute the same from the
same feeds independently; these serve the component tests and the shipped feed.
"""
from __future__ import annotations

import json
import os
from collections import Counter

from storm_planner.streaming.feedio import iter_feed_records
from worldcup.logic import section_totals, tokens_of, top_k


def expected_top_k(feed: str | os.PathLike, k: int = 10) -> list[list[int]]:
    return top_k(Counter(int(r["object_id"]) for r in iter_feed_records(os.fspath(feed))), k)


def expected_word_counts(feed: str | os.PathLike) -> dict[str, int]:
    return dict(Counter(word for r in iter_feed_records(os.fspath(feed)) for word in tokens_of(r.get("url"))))


def expected_section_totals(feed: str | os.PathLike, catalogue: str | os.PathLike) -> dict[str, list[int]]:
    with open(catalogue) as handle:
        sections = {int(e["object_id"]): e["section"] for e in map(json.loads, filter(str.strip, handle))}
    return section_totals(iter_feed_records(os.fspath(feed)), sections)
