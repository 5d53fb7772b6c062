"""The ``trades`` and ``quotes`` spouts: TAQ records replayed with watermarks.

Both split the feed among their tasks by symbol (each symbol's records stay in
order in one task) and emit event-time watermarks on the ``watermark`` stream,
which the join needs to pair each quote with the VWAP as of its time.
"""
from __future__ import annotations

from streamparse import Stream

from bargains.paths import shipped_quotes, shipped_trades
from bargains.taq import quote_values, time_ms, trade_values
from storm_planner.streaming import ReplaySpout
from storm_planner.streaming.watermarks import WATERMARK_STREAM


class _TaqSpout(ReplaySpout):
    conf_prefix = "bargains"
    watermark_stream = WATERMARK_STREAM

    def event_time(self, record):
        try:
            return time_ms(record) / 1000.0
        except (KeyError, TypeError, ValueError):
            return None

    def partition_key(self, record):
        return record.get("SYM_ROOT")


class TradeSpout(_TaqSpout):
    """Emits ``(symbol, time_ms, price_e4, size)`` per trade; feed ``bargains.trades_feed``."""

    feed_key = "trades_feed"
    outputs = [Stream(fields=["symbol", "time_ms", "price_e4", "size"]),
               Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def default_feed(self):
        return str(shipped_trades())

    def tuples_for(self, record):
        values = trade_values(record)
        return [(values, None)] if values else []


class QuoteSpout(_TaqSpout):
    """Emits ``(symbol, time_ms, ask_e4, ask_size)`` per quote; feed ``bargains.quotes_feed``."""

    feed_key = "quotes_feed"
    outputs = [Stream(fields=["symbol", "time_ms", "ask_e4", "ask_size"]),
               Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def default_feed(self):
        return str(shipped_quotes())

    def tuples_for(self, record):
        values = quote_values(record)
        return [(values, None)] if values else []
