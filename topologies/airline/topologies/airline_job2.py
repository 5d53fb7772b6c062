"""Airline delays, Real Job 2 of the ALBIC paper (§5.4); see ``airline.topology``."""
from airline.topology import build

AirlineJob2 = build(2)
