"""Airline delays logic, free of Storm (ALBIC paper §5.4, Real Jobs 2–4).

- Job 2: sum of delays (and flights) by airplane (tail number) per year.
- Job 3: also by route — an (origin, destination) pair.
- Job 4: a rainscore per station and day — precipitation as a percentage of the
  largest precipitation the station has recorded up to and including that day
  (0–100; 0 while the station has never seen rain); a flight's route gets the
  larger of its origin's and destination's rainscores on the flight's date
  (stations without a record that day are ignored, flights with none are not
  scored); courier efficiency is the sum of delays per rainscore bucket of
  ten (bucket ``b`` holds scores in ``[10b, 10b+10)``, and 100 falls in 9).

The text of the paper does not say how "historical maximum" or the route's
rainscore are taken; the choices above are ours (causal maximum, worse end
of the route).
"""
from __future__ import annotations

import heapq
import math

from airline.records import DAY_S, day_start


class RainScorer:
    """Running per-station maximum precipitation → rainscores, fed in date order per station."""

    def __init__(self):
        self.maximum: dict[str, float] = {}

    def score(self, station: str, prcp: float) -> float:
        top = max(self.maximum.get(station, 0.0), prcp)
        self.maximum[station] = top
        return 100.0 * prcp / top if top > 0 else 0.0


def bucket_of(score: float) -> int:
    # floor(score / 10), not score // 10: the batch oracle (Spark) computes it this way.
    return min(int(math.floor(score / 10.0)), 9)


def route_score(scores: dict, origin_station: str | None, dest_station: str | None, day: str) -> float | None:
    found = [scores[(s, day)] for s in (origin_station, dest_station) if s and (s, day) in scores]
    return max(found) if found else None


class RouteRainJoin:
    """Joins flights with the rainscores of their route's stations on their date.

    A flight of day ``D`` waits until the weather watermark passed ``D``'s
    start (all of ``D``'s station records were delivered); the flights'
    watermark lets scores of days no flight can still need be forgotten.
    """

    def __init__(self, stations: dict[str, str]):
        self.stations = stations
        self.scores: dict[tuple[str, str], float] = {}
        self.pending: list = []  # heap of (day start, arrival, flight)
        self.arrivals = 0
        self.weather_mark = float("-inf")
        self.unscored = 0

    def add_score(self, station: str, day: str, score: float) -> None:
        self.scores[(station, day)] = score

    def add_flight(self, flight: list) -> list:
        """``flight`` = ``[tail, year, delay, origin, dest, date]``; returns released (bucket, delay) pairs."""
        self.arrivals += 1
        heapq.heappush(self.pending, (day_start(flight[5]), self.arrivals, flight))
        return self._release()

    def advance_weather(self, watermark: float) -> list:
        self.weather_mark = max(self.weather_mark, watermark)
        return self._release()

    def advance_flights(self, watermark: float) -> None:
        """Forget scores older than the day before the flights' watermark."""
        horizon = watermark - 2 * DAY_S
        stale = [key for key in self.scores if day_start(key[1]) < horizon]
        for key in stale:
            del self.scores[key]

    def _release(self) -> list:
        out = []
        while self.pending and self.pending[0][0] < self.weather_mark:
            _, _, flight = heapq.heappop(self.pending)
            _, _, delay, origin, dest, day = flight
            score = route_score(self.scores, self.stations.get(origin), self.stations.get(dest), day)
            if score is None:
                self.unscored += 1
                continue
            out.append((bucket_of(score), delay))
        return out
