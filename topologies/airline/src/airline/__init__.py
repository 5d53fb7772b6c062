"""Airline delays (ALBIC paper §5.4, Real Jobs 2–4): components, logic, store and oracle.

``airline.expected_tables(flights_feed, job, weather_feed, stations)`` gives what
the result tables must hold once the feeds drained; ``airline.read_tables(url)``
reads them back from the database.
"""
from airline.oracle import expected_tables
from airline.paths import shipped_flights, shipped_stations, shipped_weather
from airline.store import read_tables

__all__ = ["expected_tables", "read_tables", "shipped_flights", "shipped_weather", "shipped_stations"]
