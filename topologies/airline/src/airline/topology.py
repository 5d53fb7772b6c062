"""Airline delays, ALBIC paper §5.4: Real Jobs 2, 3 and 4 as three streamparse topologies.

Job 2::

    flights --fields(tail_num)--> extract --fields(tail_num)--> plane_delays --global--> store_planes

Job 3 adds ``extract --fields(origin, dest)--> route_delays --global--> store_routes``.

Job 4 adds ``weather --fields(station)--> rainscore --all--> join``,
``extract --fields(origin, dest)--> join --fields(bucket)--> courier --global--> store_courier``,
with watermark streams (all grouping) beside the data into ``join``.

Each job is its own topology file (``topologies/airline_job2.py`` ...), since
Storm fixes a topology's structure at submission.
"""
from __future__ import annotations

from streamparse import Grouping, Topology
from streamparse.dsl.topology import TopologyType

from airline.bolts import (
    CourierBolt,
    ExtractBolt,
    PlaneDelayBolt,
    RainscoreBolt,
    RouteDelayBolt,
    RouteRainJoinBolt,
    StoreBolt,
)
from airline.spouts import FlightSpout, WeatherSpout
from storm_planner.streaming import tick_config
from storm_planner.streaming.spout import FEED_SPOUTS_KEY
from storm_planner.streaming.watermarks import WATERMARK_STREAM

CONFIG = {"topology.max.spout.pending": 2000}


def build(job: int):
    """A new Topology class for Real Job ``job``."""
    if job not in (2, 3, 4):
        raise ValueError("the airline jobs are 2, 3 and 4")
    spouts = ["flights", "weather"] if job == 4 else ["flights"]
    specs: dict = {"conf_prefix": "airline", "config": dict(CONFIG), "job": job}
    flights = specs["flights"] = FlightSpout.spec(name="flights", par=1, config={FEED_SPOUTS_KEY: spouts})
    extract = specs["extract"] = ExtractBolt.spec(name="extract", par=2, inputs={
        flights["default"]: Grouping.fields("tail_num"), flights[WATERMARK_STREAM]: Grouping.ALL})
    planes = specs["plane_delays"] = PlaneDelayBolt.spec(
        name="plane_delays", par=2, inputs={extract["default"]: Grouping.fields("tail_num")}, config=tick_config(1))
    specs["store_planes"] = StoreBolt.spec(name="store_planes", par=1, inputs={planes: Grouping.GLOBAL},
                                           config=tick_config(1))
    if job >= 3:
        routes = specs["route_delays"] = RouteDelayBolt.spec(
            name="route_delays", par=2, inputs={extract["default"]: Grouping.fields("origin", "dest")},
            config=tick_config(1))
        specs["store_routes"] = StoreBolt.spec(name="store_routes", par=1, inputs={routes: Grouping.GLOBAL},
                                               config=tick_config(1))
    if job == 4:
        weather = specs["weather"] = WeatherSpout.spec(name="weather", par=1, config={FEED_SPOUTS_KEY: spouts})
        rainscore = specs["rainscore"] = RainscoreBolt.spec(name="rainscore", par=2, inputs={
            weather["default"]: Grouping.fields("station"), weather[WATERMARK_STREAM]: Grouping.ALL})
        join = specs["join"] = RouteRainJoinBolt.spec(name="join", par=2, inputs={
            extract["default"]: Grouping.fields("origin", "dest"), extract[WATERMARK_STREAM]: Grouping.ALL,
            rainscore["default"]: Grouping.ALL, rainscore[WATERMARK_STREAM]: Grouping.ALL})
        courier = specs["courier"] = CourierBolt.spec(name="courier", par=2, inputs={join: Grouping.fields("bucket")},
                                                      config=tick_config(1))
        specs["store_courier"] = StoreBolt.spec(name="store_courier", par=1, inputs={courier: Grouping.GLOBAL},
                                                config=tick_config(1))
    return TopologyType(f"AirlineJob{job}", (Topology,), specs)
