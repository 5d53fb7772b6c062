"""The synthetic generators: the real schemas, reproducible, with the datasets' shape."""
from __future__ import annotations

import statistics
from collections import Counter

import pytest
import trends

from storm_planner.feeds.synthetic.airline import AirlineGenerator
from storm_planner.feeds.synthetic.stocks import MINUTES_PER_DAY, StockGenerator, taq_time_ms
from storm_planner.feeds.synthetic.tweets import TweetGenerator, topic_name
from storm_planner.feeds.timeparse import flight_ts_ms


def test_tweets_have_twitters_shape_zipf_topics_and_bursts():
    generator = TweetGenerator(seed=3, vocabulary=500, tweets_per_second=10, epoch_s=60)
    tweets = [generator.record(i) for i in range(6000)]
    assert tweets[17] == TweetGenerator(seed=3, vocabulary=500, tweets_per_second=10, epoch_s=60).record(17)
    times = [int(t["timestamp_ms"]) for t in tweets]
    assert times == sorted(times)
    assert trends.event_time_of(tweets[5]) == times[5] / 1000  # created_at and timestamp_ms agree
    first = tweets[0]
    assert {"created_at", "id", "id_str", "text", "user", "entities", "timestamp_ms"} <= set(first)
    for tweet in tweets[:50]:
        for tag in tweet["entities"]["hashtags"]:
            start, end = tag["indices"]
            assert tweet["text"][start:end] == "#" + tag["text"]
    counts = Counter(topic for t in tweets for topic in trends.topics_of(t))
    ranked = [c for _, c in counts.most_common()]
    assert ranked[0] > 10 * statistics.median(ranked)  # heavy head, long tail
    assert 0.25 < sum(1 for t in tweets if not t["entities"]["hashtags"]) / len(tweets) < 0.4
    # A burst topic is far more frequent inside its epoch than outside it.
    burst = topic_name(generator.burst_topics(3)[0]).lower()
    start_s = int(tweets[0]["timestamp_ms"]) // 1000

    def epoch_of(tweet):
        return int((int(tweet["timestamp_ms"]) / 1000 - start_s) // 60)

    inside = sum(1 for t in tweets if epoch_of(t) == 3 and burst in trends.topics_of(t))
    outside = sum(1 for t in tweets if epoch_of(t) in (6, 7) and burst in trends.topics_of(t)) / 2
    assert inside > 5 * max(outside, 1)


def test_stocks_random_walks_with_intraday_volume_u_shape():
    generator = StockGenerator(seed=5, symbols=4)
    series = list(generator.series(2, 2 * MINUTES_PER_DAY))
    trades = [r for r in series if "PRICE" in r]
    quotes = [r for r in series if "ASK" in r]
    assert len(trades) == len(quotes) == 2 * MINUTES_PER_DAY
    assert set(trades[0]) == {"DATE", "TIME_M", "SYM_ROOT", "PRICE", "SIZE"}
    assert set(quotes[0]) == {"DATE", "TIME_M", "SYM_ROOT", "BID", "BIDSIZ", "ASK", "ASKSIZ"}
    times = [taq_time_ms(r) for r in series]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert trades[0]["DATE"] == "20130603" and trades[MINUTES_PER_DAY]["DATE"] == "20130604"
    steps = [abs(b["PRICE"] / a["PRICE"] - 1) for a, b in zip(trades, trades[1:])]
    assert max(steps) < 0.02  # a walk, not noise
    edges = [t["SIZE"] for t in trades[:30] + trades[MINUTES_PER_DAY - 30:MINUTES_PER_DAY]]
    middle = [t["SIZE"] for t in trades[180:240]]
    assert statistics.mean(edges) > 1.5 * statistics.mean(middle)
    below = sum(1 for q, t in zip(quotes, trades) if q["ASK"] < t["PRICE"] * 0.998)
    assert 0 < below < len(quotes) * 0.1  # occasional cheap asks
    assert all(q["BID"] < q["ASK"] for q in quotes)


def test_airline_flights_and_weather_shape():
    generator = AirlineGenerator(seed=9, airports=30, planes=200, flights_per_day=500)
    flights = [generator.flight_record(i) for i in range(5000)]
    assert flights[42] == AirlineGenerator(seed=9, airports=30, planes=200, flights_per_day=500).flight_record(42)
    times = [flight_ts_ms(f["FlightDate"], f["CRSDepTime"]) for f in flights]
    assert times == sorted(times)
    origins = Counter(f["Origin"] for f in flights)
    assert origins.most_common(1)[0][1] > 5 * origins.most_common()[-1][1]  # hubs
    planes = Counter(f["TailNum"] for f in flights)
    assert planes.most_common(1)[0][1] > 3 * statistics.median(planes.values())
    delays = [f["ArrDelayMinutes"] for f in flights if f["ArrDelayMinutes"] is not None]
    assert 0.6 < sum(1 for d in delays if d <= 15) / len(delays) < 0.9
    assert 0.005 < sum(1 for f in flights if f["Cancelled"]) / len(flights) < 0.05
    assert all(f["ArrDelayMinutes"] is None for f in flights if f["Cancelled"] or f["Diverted"])
    assert all(f["Origin"] != f["Dest"] for f in flights)
    # Weather: every station every day, some missing, wetter in some months than others.
    days = 365
    weather = [generator.weather_record(i) for i in range(days * 30)]
    assert len({(w["STN"], w["YEARMODA"]) for w in weather}) == len(weather)
    missing = sum(1 for w in weather if w["PRCP"] is None) / len(weather)
    assert 0.005 < missing < 0.05
    by_month = Counter()
    for w in weather:
        if w["PRCP"]:
            by_month[w["YEARMODA"][4:6]] += 1
    assert max(by_month.values()) > 1.3 * min(by_month.values())
    assert {s["airport"] for s in generator.stations()} >= set(origins)


def _hottest(flights: list[dict], key, count: int = 5) -> set:
    return {k for k, _ in Counter(key(f) for f in flights).most_common(count)}


def test_airline_drift_moves_the_hot_planes_and_routes_every_epoch():
    drift = 4000
    drifting = AirlineGenerator(seed=9, drift_every=drift)
    steady = AirlineGenerator(seed=9)
    # Epoch 0 is the plain feed: a drifting feed starts as the fixed one.
    assert [drifting.flight_record(i) for i in range(0, drift, 97)] == [steady.flight_record(i) for i in range(0, drift, 97)]
    epochs = [[drifting.flight_record(i) for i in range(e * drift, (e + 1) * drift)] for e in range(3)]
    def plane(flight: dict) -> str:
        return flight["TailNum"][1:-2]   # "N{100 + plane}{carrier}" -> 100 + plane

    def routes(flight: dict) -> tuple:
        return flight["Origin"], flight["Dest"]

    for before, after in zip(epochs, epochs[1:]):
        assert len(_hottest(before, plane) & _hottest(after, plane)) <= 1       # new hot airframes
        assert len(_hottest(before, routes, 3) & _hottest(after, routes, 3)) <= 1  # new busy routes
    for epoch, flights in enumerate(epochs):
        # The skew itself stays: the generator's hottest planes of the epoch are the ones the feed uses most.
        counts = Counter(plane(f) for f in flights)
        hot = [str(100 + p) for p in drifting.hot_planes(epoch, 3)]
        assert counts[hot[0]] > 3 * statistics.median(counts.values())
        assert set(hot) & _hottest(flights, plane, 5)
    # Without drift the hot set stays where it was.
    fixed = [[steady.flight_record(i) for i in range(e * drift, (e + 1) * drift)] for e in range(2)]
    assert len(_hottest(fixed[0], plane) & _hottest(fixed[1], plane)) >= 3
    with pytest.raises(ValueError, match="drift_every"):
        AirlineGenerator(drift_every=-1)
