"""World Cup topologies: their logic, their shapes, and the direct-count oracle on the shipped feed."""
from __future__ import annotations

import json

import pytest
import worldcup
from worldcup.logic import ChangeCounter, section_totals, tokens_of, top_k

from storm_planner.feeds.worldcup import catalogue_entry, url_of


def test_url_tokens_are_the_words_of_the_path_without_ids():
    assert tokens_of("/english/images/logo_83.gif") == ["english", "images", "logo", "gif"]
    assert tokens_of("/french/news/score_12/") == ["french", "news", "score"]
    assert tokens_of("") == [] and tokens_of(None) == []
    # Every URL the feeds give an object splits into exactly these four or three words.
    for obj, kind in ((5, "HTML"), (1234, "IMAGE"), (9, "DIRECTORY")):
        assert len(tokens_of(url_of(obj, kind))) == (3 if kind == "DIRECTORY" else 4)


def test_top_k_breaks_ties_by_object_id_and_change_counter_reports_each_change_once():
    assert top_k({7: 3, 2: 3, 9: 5, 1: 1}, 3) == [[9, 5], [2, 3], [7, 3]]
    counter = ChangeCounter()
    for key in ("a", "b", "a"):
        counter.add(key)
    assert counter.drain_changes() == [("a", 2), ("b", 1)] and counter.drain_changes() == []


def test_the_join_drops_requests_outside_the_catalogue():
    requests = [{"object_id": 1, "size": 10}, {"object_id": 7, "size": 99}, {"object_id": 1, "size": 5}]
    assert section_totals(requests, {1: "news"}) == {"news": [2, 15]}
    assert catalogue_entry(7, "IMAGE")["url"] == url_of(7, "IMAGE")


def test_the_shipped_feed_gives_nontrivial_answers():
    feed, catalogue = worldcup.shipped_requests(), worldcup.shipped_catalogue()
    top = worldcup.expected_top_k(feed, 10)
    assert len(top) == 10 and top[0][1] > top[-1][1] >= 1
    words = worldcup.expected_word_counts(feed)
    assert {"english", "images", "gif"} <= set(words)
    totals = worldcup.expected_section_totals(feed, catalogue)
    requests = sum(1 for line in feed.read_text().splitlines() if line.strip())
    in_catalogue = {json.loads(line)["object_id"] for line in catalogue.read_text().splitlines()}
    assert 0 < sum(n for n, _ in totals.values()) < requests  # some requests name objects outside it
    assert len(in_catalogue) > 100


@pytest.mark.parametrize("job, components", [
    ("topk", {"requests", "count", "top"}),
    ("wordcount", {"requests", "tokenize", "words", "counts"}),
    ("join", {"requests", "join", "totals", "sections"}),
])
def test_each_job_is_its_own_topology(job, components):
    pytest.importorskip("streamparse")
    from worldcup.topology import build

    topology = build(job)
    assert set(topology.specs_by_name if hasattr(topology, "specs_by_name") else
               {spec.name for spec in topology.specs}) == components
    with pytest.raises(ValueError, match="topk, wordcount, join"):
        build("pagerank")
