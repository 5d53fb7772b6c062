"""Airline delays, Real Job 3 of the ALBIC paper (§5.4); see ``airline.topology``."""
from airline.topology import build

AirlineJob3 = build(3)
