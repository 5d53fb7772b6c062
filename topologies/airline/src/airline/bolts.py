"""The bolts of the airline delay jobs.

- :class:`ExtractBolt` (fields on tail number): extracts ``(tail_num, year,
  delay, origin, dest, flight_date)`` from a flight, anchored; passes the
  flights' watermarks on.
- :class:`PlaneDelayBolt` (fields on tail number — the same attribute as
  extract, so perfect collocation exists) and :class:`RouteDelayBolt` (fields
  on origin, dest): sums per key; every ``airline.emit_interval_s`` they emit
  the changed sums as ``(table, key, delay_sum, flights)``.
- :class:`RainscoreBolt` (fields on station): the rainscore of each
  station-day; passes the weather's watermarks on.
- :class:`RouteRainJoinBolt` (flights fields on route, rainscores and
  watermarks to all tasks): each flight with its route's rainscore, as
  ``(bucket, delay)``.
- :class:`CourierBolt` (fields on bucket): sum of delays per bucket.
- :class:`StoreBolt` (one per result table): upserts the latest sums into the
  database every ``airline.store_interval_s`` (the sum of every task's latest
  partial sum of a key: one task per key under fields grouping, two under PoTC).
"""
from __future__ import annotations

import os

from streamparse import Bolt, Stream

from airline.logic import RainScorer, RouteRainJoin
from airline.paths import shipped_stations
from airline.records import flight_delay, weather_values
from airline.store import ResultStore
from storm_planner.streaming import ConfReader, EmitTimer
from storm_planner.streaming.feedio import iter_feed_records
from storm_planner.streaming.watermarks import WATERMARK_STREAM, WatermarkTracker, upstream_tasks

PREFIX = "airline"
FLIGHT_FIELDS = ["tail_num", "year", "delay", "origin", "dest", "flight_date"]
SUM_FIELDS = ["table", "key", "delay_sum", "flights"]


def database_url(options: ConfReader) -> str:
    url = options.str("db_url")
    return url if url else "sqlite:///" + options.required_path("sink")


def load_stations(options: ConfReader) -> dict[str, str]:
    """Airport → weather station, from JSON lines ``{"airport", "station"}``.

    ``airline.stations`` if set; else a ``stations.jsonl`` beside the weather
    feed (next to the file, or next to / inside the feed directory, where
    ``storm-planner feeds build airline`` writes it); else the shipped map.
    """
    path = options.path("stations")
    weather = options.path("weather_feed")
    if path is None and weather:
        base = os.path.dirname(weather) if os.path.isfile(weather) else weather
        candidates = [os.path.join(base, "stations.jsonl"), os.path.join(os.path.dirname(base), "stations.jsonl")]
        path = next((c for c in candidates if os.path.isfile(c)), None)
    path = path or str(shipped_stations())
    return {str(r["airport"]): str(r["station"]) for r in iter_feed_records(path)
            if "airport" in r and "station" in r}


class _WatermarkForwarder(Bolt):
    """Passes the minimum watermark of ``upstream`` on, after the data it covers."""

    upstream = ""

    def setup_watermarks(self, context):
        self.watermarks = WatermarkTracker(upstream_tasks(context, [self.upstream]))

    def forward_watermark(self, tup) -> None:
        advanced = self.watermarks.update(tup.task, tup.values[0])
        if advanced is not None:
            self.emit([advanced], stream=WATERMARK_STREAM, anchors=[])


class ExtractBolt(_WatermarkForwarder):
    upstream = "flights"
    outputs = [Stream(fields=FLIGHT_FIELDS), Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def initialize(self, storm_conf, context):
        self.setup_watermarks(context)
        self.skipped = 0

    def process(self, tup):
        if tup.stream == WATERMARK_STREAM:
            self.forward_watermark(tup)
            return
        values = flight_delay(tup.values[1])
        if values is None:
            self.skipped += 1  # cancelled, diverted, or no tail number
            return
        self.emit(values)


class _SumBolt(Bolt):
    """Sums delays per key; emits changed sums on ticks."""

    outputs = SUM_FIELDS
    table = ""

    def key_of(self, values) -> tuple:
        raise NotImplementedError

    def delay_of(self, values) -> float:
        return values[2]

    def initialize(self, storm_conf, context):
        options = ConfReader(storm_conf, PREFIX)
        self.timer = EmitTimer(options.float("emit_interval_s", 2.0, minimum=0.0))
        self.sums: dict[tuple, list] = {}
        self.changed: set = set()

    def process(self, tup):
        if tup.stream == WATERMARK_STREAM:
            return
        key = self.key_of(tup.values)
        entry = self.sums.setdefault(key, [0.0, 0])
        entry[0] += float(self.delay_of(tup.values))
        entry[1] += 1
        self.changed.add(key)

    def process_tick(self, tup):
        if not (self.changed and self.timer.due()):
            return
        for key in sorted(self.changed):
            delay_sum, flights = self.sums[key]
            self.emit([self.table, list(key), delay_sum, flights], anchors=[])
        self.changed.clear()


class PlaneDelayBolt(_SumBolt):
    table = "plane_delays"

    def key_of(self, values):
        return (values[0], values[1])


class RouteDelayBolt(_SumBolt):
    table = "route_delays"

    def key_of(self, values):
        return (values[3], values[4])


class CourierBolt(_SumBolt):
    """Input ``(bucket, delay)``."""

    table = "courier_efficiency"

    def key_of(self, values):
        return (values[0],)

    def delay_of(self, values):
        return values[1]


class RainscoreBolt(_WatermarkForwarder):
    upstream = "weather"
    outputs = [Stream(fields=["station", "day", "score"]), Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def initialize(self, storm_conf, context):
        self.setup_watermarks(context)
        self.scorer = RainScorer()

    def process(self, tup):
        if tup.stream == WATERMARK_STREAM:
            self.forward_watermark(tup)
            return
        values = weather_values(tup.values[1])
        if values is None:
            return  # missing precipitation: no score that day
        station, day, prcp = values
        self.emit([station, day, self.scorer.score(station, prcp)])


class RouteRainJoinBolt(Bolt):
    outputs = ["bucket", "delay"]

    def initialize(self, storm_conf, context):
        self.join = RouteRainJoin(load_stations(ConfReader(storm_conf, PREFIX)))
        self.weather_marks = WatermarkTracker(upstream_tasks(context, ["rainscore"]))
        self.flight_marks = WatermarkTracker(upstream_tasks(context, ["extract"]))

    def process(self, tup):
        released = []
        if tup.stream == WATERMARK_STREAM:
            if tup.component == "rainscore":
                advanced = self.weather_marks.update(tup.task, tup.values[0])
                if advanced is not None:
                    released = self.join.advance_weather(advanced)
            else:
                advanced = self.flight_marks.update(tup.task, tup.values[0])
                if advanced is not None:
                    self.join.advance_flights(advanced)
        elif tup.component == "rainscore":
            station, day, score = tup.values
            self.join.add_score(station, day, score)
        else:
            released = self.join.add_flight(list(tup.values))
        for bucket, delay in released:
            self.emit([bucket, delay], anchors=[])


class StoreBolt(Bolt):
    """Upserts ``(table, key, delay_sum, flights)`` rows into the result database periodically.

    A sum task sends its latest sum of a key; the store adds up the latest sums of every task that sent
    one. Under a fields grouping one task holds a key, and the row is that task's sum; under a partial
    key grouping (PoTC: ``airline.grouping.<sums>=partial_key:...``) a key's tuples are split between two
    tasks, and the row is the merge of both partial sums."""

    outputs = []

    def initialize(self, storm_conf, context):
        options = ConfReader(storm_conf, PREFIX)
        self.store = ResultStore(database_url(options))
        self.timer = EmitTimer(options.float("store_interval_s", 2.0, minimum=0.0))
        self.partials: dict[tuple, dict[int, tuple]] = {}
        self.pending: set[tuple] = set()

    def process(self, tup):
        table, key, delay_sum, flights = tup.values
        row = (table, *key)
        self.partials.setdefault(row, {})[tup.task] = (delay_sum, flights)
        self.pending.add(row)

    def process_tick(self, tup):
        if not (self.pending and self.timer.due()):
            return
        by_table: dict[str, list] = {}
        for table, *key in sorted(self.pending):
            sums = self.partials[(table, *key)].values()
            by_table.setdefault(table, []).append((*key, sum(s for s, _ in sums), sum(n for _, n in sums)))
        for table, rows in by_table.items():
            self.store.upsert(table, rows)
        self.pending.clear()
