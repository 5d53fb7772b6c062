"""Flights (BTS On-Time Performance) and weather (NOAA GSOD) records, as the topology reads them.

Flight records use BTS column names (``TailNum``, ``Year``, ``FlightDate``,
``CRSDepTime``, ``Origin``, ``Dest``, ``ArrDelayMinutes``...); weather records
GSOD's (``STN``, ``WBAN``, ``YEARMODA``, ``PRCP``; ``PRCP`` None or 99.99 when
missing). The delay of a flight is ``ArrDelayMinutes`` — the arrival delay in
minutes, 0 when early; cancelled and diverted flights have none and are
skipped, as are flights without a tail number. Times are taken as UTC.
"""
from __future__ import annotations

from datetime import date, datetime, timezone

EPOCH = date(1970, 1, 1)
DAY_S = 86_400


def day_start(day: str) -> float:
    """Seconds since the epoch of 00:00 UTC on an ISO (or YYYYMMDD) date."""
    day = day.replace("-", "")
    return float((date(int(day[:4]), int(day[4:6]), int(day[6:8])) - EPOCH).days * DAY_S)


def flight_time(record: dict) -> float | None:
    """Scheduled departure (seconds since the epoch) of a flight record."""
    try:
        hhmm = str(record.get("CRSDepTime") or "0").strip().zfill(4)
        return day_start(str(record["FlightDate"])) + int(hhmm[:2]) % 24 * 3600 + int(hhmm[2:4]) * 60
    except (KeyError, TypeError, ValueError):
        return None


def flight_delay(record: dict) -> list | None:
    """``[tail_num, year, delay, origin, dest, flight_date]``, or None when the flight has no usable delay."""
    tail = str(record.get("TailNum") or "").strip()
    delay = record.get("ArrDelayMinutes")
    if not tail or delay in (None, ""):
        return None
    try:
        return [tail, int(record["Year"]), float(delay), str(record["Origin"]), str(record["Dest"]),
                str(record["FlightDate"])]
    except (KeyError, TypeError, ValueError):
        return None


def weather_time(record: dict) -> float | None:
    try:
        return day_start(str(record["YEARMODA"]))
    except (KeyError, TypeError, ValueError):
        return None


def weather_values(record: dict) -> list | None:
    """``[station, iso_date, prcp]`` (prcp in inches), or None when precipitation is missing."""
    prcp = record.get("PRCP")
    try:
        prcp = float(prcp)
        ymd = str(record["YEARMODA"])
        station = f"{record['STN']}-{record['WBAN']}"
    except (KeyError, TypeError, ValueError):
        return None
    if prcp >= 99.99 or prcp < 0:
        return None
    return [station, f"{ymd[:4]}-{ymd[4:6]}-{ymd[6:8]}", prcp]


def iso_day_of(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).date().isoformat()
