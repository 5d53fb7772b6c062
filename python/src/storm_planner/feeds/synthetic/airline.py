"""Synthetic BTS On-Time Performance flights and NOAA GSOD weather, with airport stations.

Flights carry the BTS column names the readers keep (``Year``, ``Month``,
``DayofMonth``, ``FlightDate``, ``UniqueCarrier``, ``TailNum``, ``FlightNum``,
``Origin``, ``Dest``, ``CRSDepTime``, ``DepDelay``, ``ArrDelay``,
``ArrDelayMinutes``, ``Cancelled``, ``Diverted``, ``Distance``); weather
records the GSOD ones (``STN``, ``WBAN``, ``YEARMODA``, ``TEMP``, ``PRCP``,
``PRCP_FLAG``; ``PRCP`` is None where GSOD writes 99.99); each airport has one
weather station (``{"airport", "station"}``, station id ``"STN-WBAN"``).

Realistic shape: airport traffic and tail-number use are Zipf-skewed (hubs,
busy airframes); routes join airports by traffic; 80 % of flights arrive
within 15 minutes (``ArrDelayMinutes`` 0 when early), the rest have a
log-normal delay whose mean grows with the rain at the origin that day; about
1.5 % are cancelled and 0.3 % diverted (no arrival delay). Precipitation is
seasonal per station (wetter months, wetter stations), log-normal when it
rains, and missing on 2 % of station-days. Flights start on 2004-01-01 at a
fixed number per day, so ten million flights span about nine years.

Drifting skew (``drift_every`` > 0): which airframes and airports are hot changes
every ``drift_every`` flights. The Zipf ranks stay; epoch ``index // drift_every``
maps each rank to a plane (and an airport) through its own seeded permutation,
so the busiest tail numbers and routes of one epoch are ordinary ones in the
next. Replayed at a fixed rate, a feed drifting every ``rate × N`` flights moves
its hot keys every N seconds: a key-partitioned operator's load per task and the
traffic between key groups shift over time (the changing load under which
Madsen et al. re-plan each adaptation period, §5.4). Epoch 0 keeps the identity,
so a drifting feed starts like the plain one.
"""
from __future__ import annotations

import math
from datetime import date, timedelta

from storm_planner.feeds.synthetic import rng_for, sample_cdf, zipf_cdf

FIRST_DAY = date(2004, 1, 1)
CARRIERS = ["AA", "DL", "UA", "WN", "US", "CO", "NW", "AS", "B6", "F9"]


def airport_code(index: int) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return "".join(letters[(index // 26 ** k) % 26] for k in (2, 1, 0))


def station_of(index: int) -> str:
    return f"{720000 + index * 7:06d}-{10000 + index * 13:05d}"


class AirlineGenerator:
    def __init__(self, seed: int = 2004, airports: int = 60, planes: int = 800,
                 flights_per_day: int = 3000, drift_every: int = 0):
        if drift_every < 0:
            raise ValueError(f"drift_every must be 0 (no drift) or a positive number of flights, not {drift_every}")
        self.seed = seed
        self.drift_every = drift_every
        self._permutations: dict[tuple[str, int], list[int]] = {}
        self.airports = airports
        self.planes = planes
        self.flights_per_day = flights_per_day
        self.airport_cdf = zipf_cdf(airports, 1.0)
        self.plane_cdf = zipf_cdf(planes, 0.6)

    # -- weather -----------------------------------------------------------------
    def stations(self) -> list[dict]:
        return [{"airport": airport_code(i), "station": station_of(i)} for i in range(self.airports)]

    def precipitation(self, station: int, day_index: int) -> float | None:
        """Inches of rain at a station on a day (None: missing)."""
        rng = rng_for(self.seed, "prcp", station, day_index)
        if rng.random() < 0.02:
            return None
        day = FIRST_DAY + timedelta(days=day_index)
        season = math.sin(2 * math.pi * (day.timetuple().tm_yday - 30) / 365.0)
        wetness = rng_for(self.seed, "wet", station).uniform(0.15, 0.4)
        if rng.random() >= wetness + 0.12 * season:
            return 0.0
        return round(min(rng.lognormvariate(math.log(0.15), 1.0), 9.0), 2)

    def weather_record(self, index: int) -> dict:
        """The index-th station-day, ordered by day then station."""
        day_index, station = divmod(index, self.airports)
        day = FIRST_DAY + timedelta(days=day_index)
        stn, wban = station_of(station).split("-")
        prcp = self.precipitation(station, day_index)
        rng = rng_for(self.seed, "temp", station, day_index)
        season = math.sin(2 * math.pi * (day.timetuple().tm_yday - 110) / 365.0)
        return {"STN": stn, "WBAN": wban, "YEARMODA": day.strftime("%Y%m%d"),
                "TEMP": round(55 + 25 * season + rng.gauss(0, 6), 1),
                "PRCP": prcp, "PRCP_FLAG": "" if prcp is None else "G"}

    # -- drift -------------------------------------------------------------------
    def epoch(self, index: int) -> int:
        """The skew epoch of the index-th flight (always 0 without drift)."""
        return index // self.drift_every if self.drift_every else 0

    def _permuted(self, kind: str, rank: int, epoch: int) -> int:
        """The key holding Zipf ``rank`` in ``epoch``: the identity in epoch 0, else a seeded shuffle."""
        if epoch == 0:
            return rank
        key = (kind, epoch)
        if key not in self._permutations:
            order = list(range(self.planes if kind == "plane" else self.airports))
            rng_for(self.seed, "drift", kind, epoch).shuffle(order)
            if len(self._permutations) > 64:
                self._permutations.clear()
            self._permutations[key] = order
        return self._permutations[key][rank]

    def hot_planes(self, epoch: int, count: int = 10) -> list[int]:
        """The tail-number indexes of the ``count`` most used planes in ``epoch`` (busiest first)."""
        return [self._permuted("plane", rank, epoch) for rank in range(min(count, self.planes))]

    # -- flights -----------------------------------------------------------------
    def flight_record(self, index: int) -> dict:
        rng = rng_for(self.seed, "flight", index)
        day_index, slot = divmod(index, self.flights_per_day)
        day = FIRST_DAY + timedelta(days=day_index)
        # Scheduled departures spread over 05:00–23:00 in time order within the day.
        minute = 300 + slot * (18 * 60) // self.flights_per_day
        epoch = self.epoch(index)
        origin = self._permuted("airport", sample_cdf(self.airport_cdf, rng.random()), epoch)
        dest = self._permuted("airport", sample_cdf(self.airport_cdf, rng.random()), epoch)
        if dest == origin:
            dest = (origin + 1 + rng.randrange(self.airports - 1)) % self.airports
        plane = self._permuted("plane", sample_cdf(self.plane_cdf, rng.random()), epoch)
        carrier = CARRIERS[plane % len(CARRIERS)]
        rain = self.precipitation(origin, day_index) or 0.0
        cancelled = rng.random() < 0.015 + 0.02 * min(rain, 1.0)
        diverted = not cancelled and rng.random() < 0.003
        if rng.random() < 0.8 - 0.2 * min(rain, 1.0):
            arr_delay = float(rng.randint(-20, 14))
        else:
            arr_delay = float(round(rng.lognormvariate(math.log(25 + 40 * rain), 0.8)))
        dep_delay = float(max(-10, round(arr_delay + rng.gauss(0, 6))))
        distance = 150 + (origin * 37 + dest * 53) % 2400
        record = {
            "Year": day.year, "Month": day.month, "DayofMonth": day.day,
            "FlightDate": day.isoformat(), "UniqueCarrier": carrier,
            "TailNum": f"N{100 + plane}{carrier}", "FlightNum": str(100 + (origin * 31 + dest) % 4000),
            "Origin": airport_code(origin), "Dest": airport_code(dest),
            "CRSDepTime": f"{minute // 60:02d}{minute % 60:02d}",
            "DepDelay": None if cancelled else dep_delay,
            "ArrDelay": None if cancelled or diverted else arr_delay,
            "ArrDelayMinutes": None if cancelled or diverted else max(0.0, arr_delay),
            "Cancelled": 1.0 if cancelled else 0.0, "Diverted": 1.0 if diverted else 0.0,
            "Distance": float(distance),
        }
        return record

    def days_for(self, flights: int) -> int:
        return max(1, -(-flights // self.flights_per_day))
