"""Trades and quotes in NYSE TAQ field names, as exact integers.

A trade record: ``{"DATE": "20130603", "TIME_M": "09:30:12.345", "SYM_ROOT": "AAPL",
"PRICE": 441.25, "SIZE": 1200}``; a quote: ``{"DATE", "TIME_M", "SYM_ROOT", "BID",
"BIDSIZ", "ASK", "ASKSIZ"}``. Times are taken as UTC milliseconds; prices become
integers in ten-thousandths of a dollar (TAQ's precision), so VWAPs and the
bargain test are exact and a batch job reproduces them bit for bit.
"""
from __future__ import annotations

from datetime import date

EPOCH = date(1970, 1, 1)


def time_ms(record: dict) -> int:
    day = str(record["DATE"]).replace("-", "")
    hours, minutes, seconds = str(record["TIME_M"]).split(":")
    whole, _, fraction = seconds.partition(".")
    millis = int((fraction + "000")[:3]) if fraction else 0
    days = (date(int(day[:4]), int(day[4:6]), int(day[6:8])) - EPOCH).days
    return ((days * 24 + int(hours)) * 60 + int(minutes)) * 60_000 + int(whole) * 1000 + millis


def price_e4(value) -> int:
    return int(round(float(value) * 10_000))


def trade_values(record: dict) -> list | None:
    """``[symbol, time_ms, price_e4, size]``, or None for an unusable trade."""
    try:
        size = int(record["SIZE"])
        price = price_e4(record["PRICE"])
        return [str(record["SYM_ROOT"]), time_ms(record), price, size] if size > 0 and price > 0 else None
    except (KeyError, TypeError, ValueError):
        return None


def quote_values(record: dict) -> list | None:
    """``[symbol, time_ms, ask_e4, ask_size]``, or None for a quote without an ask."""
    try:
        ask, size = price_e4(record["ASK"]), int(record["ASKSIZ"])
        return [str(record["SYM_ROOT"]), time_ms(record), ask, size] if ask > 0 and size > 0 else None
    except (KeyError, TypeError, ValueError):
        return None
