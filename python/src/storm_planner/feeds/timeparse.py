"""Event times of the datasets' records, in milliseconds since the epoch (UTC)."""
from __future__ import annotations

from datetime import date

EPOCH = date(1970, 1, 1)
DAY_MS = 86_400_000


def day_ts_ms(day: str) -> int:
    """``2004-01-05`` or ``20040105`` → 00:00 UTC of that day."""
    digits = str(day).replace("-", "")
    return (date(int(digits[:4]), int(digits[4:6]), int(digits[6:8])) - EPOCH).days * DAY_MS


def flight_ts_ms(flight_date: str, crs_dep_time) -> int:
    """A flight's scheduled departure: FlightDate plus CRSDepTime (``hhmm``; 2400 is midnight)."""
    hhmm = str(crs_dep_time or "0").strip().split(".")[0].zfill(4)
    return day_ts_ms(flight_date) + (int(hhmm[:2]) % 24 * 60 + int(hhmm[2:4])) * 60_000
