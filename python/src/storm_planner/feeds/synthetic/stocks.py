"""Synthetic NASDAQ-100 per-minute trades and quotes, in NYSE TAQ field names.

Records (one per symbol per minute of the trading day, 09:30–16:00, business
days from 2013-06-03):

- trade: ``{"DATE": "20130603", "TIME_M": "09:30:12.345", "SYM_ROOT": "SYM07",
  "PRICE": 123.4567, "SIZE": 1200}``
- quote: ``{"DATE", "TIME_M", "SYM_ROOT", "BID", "BIDSIZ", "ASK", "ASKSIZ"}``

Realistic shape: each symbol's price follows a geometric random walk (its own
drift and volatility, a base price between $10 and $600); volume per minute is
log-normal with the intraday U shape (heavy at the open and close); quotes
straddle the current price with a spread of a few cents and, now and then,
an ask well below it (the bargains the topology looks for). The trade of a
minute falls in its first 30 seconds and the quote in its last 30, so times
never tie within a symbol.

A symbol's series is sequential (a random walk), so generation is per symbol:
``series(symbol, minutes)`` yields that symbol's records in time order; a
feed interleaves the symbols by time.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import date, timedelta

from storm_planner.feeds.synthetic import rng_for

OPEN_MINUTE = 9 * 60 + 30
MINUTES_PER_DAY = 390
FIRST_DAY = date(2013, 6, 3)  # a Monday


def minute_stamp(minute_index: int) -> tuple[str, int]:
    """(DATE, minute of day) of the n-th trading minute since the first day."""
    day_index, minute = divmod(minute_index, MINUTES_PER_DAY)
    # Skip weekends arithmetically: 5 trading days per calendar week.
    weeks, rest = divmod(day_index, 5)
    day = FIRST_DAY + timedelta(days=7 * weeks + rest)
    return day.strftime("%Y%m%d"), OPEN_MINUTE + minute


def time_m(minute_of_day: int, millis: int) -> str:
    hours, minutes = divmod(minute_of_day, 60)
    seconds, ms = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}"


def symbol_name(index: int) -> str:
    return f"SYM{index:02d}" if index < 100 else f"SYM{index}"


class StockGenerator:
    def __init__(self, seed: int = 100, symbols: int = 100, bargain_share: float = 0.04):
        self.seed = seed
        self.symbols = symbols
        self.bargain_share = bargain_share

    def series(self, symbol: int, minutes: int, start_minute: int = 0) -> Iterator[dict]:
        """Trades and quotes of one symbol, minute by minute, in time order."""
        rng = rng_for(self.seed, "symbol", symbol)
        price = rng.uniform(10, 600)
        drift = rng.gauss(0, 0.00002)
        volatility = rng.uniform(0.0005, 0.002)
        base_volume = rng.uniform(300, 5000)
        name = symbol_name(symbol)
        for minute_index in range(minutes):
            # The walk is replayed from minute 0 so that any start gives the same prices.
            price *= math.exp(drift + volatility * rng.gauss(0, 1))
            price = max(price, 1.0)
            day, minute_of_day = minute_stamp(minute_index)
            position = (minute_of_day - OPEN_MINUTE) / MINUTES_PER_DAY
            u_shape = 1.0 + 2.5 * (2 * position - 1) ** 2
            size = max(1, int(rng.lognormvariate(math.log(base_volume * u_shape), 0.6)))
            size = max(100, size // 100 * 100)  # round lots
            trade_ms, quote_ms = rng.randrange(0, 30_000), rng.randrange(30_000, 60_000)
            spread = max(0.01, round(price * rng.uniform(0.0001, 0.0008), 2))
            ask = price + spread / 2
            if rng.random() < self.bargain_share:
                ask = price * (1 - rng.uniform(0.002, 0.02))  # a seller in a hurry
            bid = min(ask - 0.01, price - spread / 2)
            if minute_index < start_minute:
                continue
            yield {"DATE": day, "TIME_M": time_m(minute_of_day, trade_ms), "SYM_ROOT": name,
                   "PRICE": round(price, 4), "SIZE": size}
            yield {"DATE": day, "TIME_M": time_m(minute_of_day, quote_ms), "SYM_ROOT": name,
                   "BID": round(bid, 4), "BIDSIZ": rng.randrange(1, 50) * 100,
                   "ASK": round(ask, 4), "ASKSIZ": rng.randrange(1, 50) * 100}


def is_trade(record: dict) -> bool:
    return "PRICE" in record


def taq_time_ms(record: dict) -> int:
    """Milliseconds since the epoch of a TAQ record's DATE and TIME_M (taken as UTC)."""
    day = record["DATE"]
    stamp = str(record["TIME_M"])
    hours, minutes, seconds = stamp.split(":")
    whole, _, fraction = seconds.partition(".")
    millis = int((fraction + "000")[:3]) if fraction else 0
    days = (date(int(day[:4]), int(day[4:6]), int(day[6:8])) - date(1970, 1, 1)).days
    return ((days * 24 + int(hours)) * 60 + int(minutes)) * 60_000 + int(whole) * 1000 + millis
