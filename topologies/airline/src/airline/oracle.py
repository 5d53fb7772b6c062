"""What each job's tables must hold once the feeds drained, computed directly (pure Python)."""
from __future__ import annotations

import os

from airline.logic import RainScorer, bucket_of, route_score
from airline.records import flight_delay, weather_values
from storm_planner.streaming.feedio import iter_feed_records


def _add(table: dict, key: tuple, delay: float) -> None:
    entry = table.setdefault(key, [0.0, 0])
    entry[0] += delay
    entry[1] += 1


def expected_tables(flights_feed, job: int = 2, weather_feed=None, stations=None) -> dict[str, dict]:
    """``{table: {key: (delay_sum, flights)}}`` for Real Job ``job`` (2, 3 or 4)."""
    if job not in (2, 3, 4):
        raise ValueError("the airline jobs are 2, 3 and 4")
    planes: dict = {}
    routes: dict = {}
    courier: dict = {}
    scores: dict = {}
    airport_station: dict = {}
    if job == 4:
        scorer = RainScorer()
        for record in iter_feed_records(os.fspath(weather_feed)):
            values = weather_values(record)
            if values is not None:
                station, day, prcp = values
                scores[(station, day)] = scorer.score(station, prcp)
        airport_station = {str(r["airport"]): str(r["station"]) for r in iter_feed_records(os.fspath(stations))}
    for record in iter_feed_records(os.fspath(flights_feed)):
        flight = flight_delay(record)
        if flight is None:
            continue
        tail, year, delay, origin, dest, day = flight
        _add(planes, (tail, year), delay)
        if job >= 3:
            _add(routes, (origin, dest), delay)
        if job == 4:
            score = route_score(scores, airport_station.get(origin), airport_station.get(dest), day)
            if score is not None:
                _add(courier, (bucket_of(score),), delay)
    freeze = lambda table: {key: (float(s), int(n)) for key, (s, n) in table.items()}  # noqa: E731
    return {"plane_delays": freeze(planes), "route_delays": freeze(routes), "courier_efficiency": freeze(courier)}
