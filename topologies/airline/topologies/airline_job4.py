"""Airline delays, Real Job 4 of the ALBIC paper (§5.4); see ``airline.topology``."""
from airline.topology import build

AirlineJob4 = build(4)
