"""The ``flights`` and ``weather`` spouts."""
from __future__ import annotations

from streamparse import Stream

from airline.paths import shipped_flights, shipped_weather
from airline.records import flight_time, weather_time
from storm_planner.streaming import ReplaySpout
from storm_planner.streaming.watermarks import WATERMARK_STREAM


class FlightSpout(ReplaySpout):
    """Emits ``(tail_num, flight)`` per flight record (the record as a JSON object); feed ``airline.flights_feed``."""

    conf_prefix = "airline"
    feed_key = "flights_feed"
    watermark_stream = WATERMARK_STREAM
    outputs = [Stream(fields=["tail_num", "flight"]), Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def default_feed(self):
        return str(shipped_flights())

    def tuples_for(self, record):
        return [([str(record.get("TailNum") or ""), record], None)]

    def event_time(self, record):
        return flight_time(record)


class WeatherSpout(ReplaySpout):
    """Emits ``(station, record)`` per GSOD station-day; feed ``airline.weather_feed``.

    Tasks split the feed by station, so each station's days stay in order.
    """

    conf_prefix = "airline"
    feed_key = "weather_feed"
    watermark_stream = WATERMARK_STREAM
    outputs = [Stream(fields=["station", "record"]), Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def default_feed(self):
        return str(shipped_weather())

    def tuples_for(self, record):
        return [([f"{record.get('STN')}-{record.get('WBAN')}", record], None)]

    def event_time(self, record):
        return weather_time(record)

    def partition_key(self, record):
        return f"{record.get('STN')}-{record.get('WBAN')}"
