"""The bolts of bargain detection: ``vwap`` → ``join`` (+ quotes) → ``filter`` → ``sink``.

- :class:`VwapBolt` (fields on symbol): VWAP over a ten-minute window
  (``bargains.window_s``) sliding by one trade; emits ``(symbol, time_ms,
  sum_pv, sum_v)`` anchored to the trade, and passes the trades' watermarks on.
- :class:`JoinBolt` (fields on symbol): keeps each symbol's VWAPs in memory
  and probes them with every quote, as of the quote's time (see
  :mod:`bargains.logic`); a quote waits until the trades' watermark passed its
  time. Quotes are acked when buffered, so a slow trades feed cannot make
  them time out; the released pairs are emitted unanchored.
- :class:`FilterBolt`: flags a bargain when the ask is below the VWAP by more
  than ``bargains.margin`` (a fraction, default 0.005).
- :class:`SinkBolt`: one JSON line per bargain in ``bargains.sink``.
"""
from __future__ import annotations

from streamparse import Bolt, Stream

from bargains.logic import AsOfJoin, VwapWindow, is_bargain, margin_ppm, vwap_e4
from storm_planner.streaming import ConfReader, JsonLinesSinkBolt
from storm_planner.streaming.watermarks import END, WATERMARK_STREAM, WatermarkTracker, upstream_tasks

PREFIX = "bargains"


def watermark_ms(watermark: float) -> float:
    """Seconds → milliseconds, exact for times that were whole milliseconds."""
    return float("inf") if watermark >= END else round(watermark * 1000)


class VwapBolt(Bolt):
    outputs = [Stream(fields=["symbol", "time_ms", "sum_pv", "sum_v"]),
               Stream(fields=["watermark"], name=WATERMARK_STREAM)]

    def initialize(self, storm_conf, context):
        options = ConfReader(storm_conf, PREFIX)
        self.window_ms = int(round(options.float("window_s", 600.0, minimum=0.001) * 1000))
        self.windows: dict[str, VwapWindow] = {}
        self.watermarks = WatermarkTracker(upstream_tasks(context, ["trades"]))

    def process(self, tup):
        if tup.stream == WATERMARK_STREAM:
            advanced = self.watermarks.update(tup.task, tup.values[0])
            if advanced is not None:
                self.emit([advanced], stream=WATERMARK_STREAM, anchors=[])
            return
        symbol, time_ms, price, size = tup.values
        window = self.windows.get(symbol)
        if window is None:
            window = self.windows[symbol] = VwapWindow(self.window_ms)
        sum_pv, sum_v = window.add(time_ms, price, size)
        self.emit([symbol, time_ms, sum_pv, sum_v])


class JoinBolt(Bolt):
    outputs = ["symbol", "time_ms", "ask_e4", "ask_size", "sum_pv", "sum_v"]

    def initialize(self, storm_conf, context):
        self.join = AsOfJoin()
        self.trades_marks = WatermarkTracker(upstream_tasks(context, ["vwap"]))
        self.quotes_marks = WatermarkTracker(upstream_tasks(context, ["quotes"]))
        self.unmatched = 0

    def process(self, tup):
        if tup.stream == WATERMARK_STREAM:
            if tup.component == "quotes":
                advanced = self.quotes_marks.update(tup.task, tup.values[0])
                if advanced is not None:
                    self.join.advance_quotes(watermark_ms(advanced))
                return
            advanced = self.trades_marks.update(tup.task, tup.values[0])
            released = self.join.advance_trades(watermark_ms(advanced)) if advanced is not None else []
        elif tup.component == "quotes":
            released = self.join.add_quote(list(tup.values))
        else:
            symbol, time_ms, sum_pv, sum_v = tup.values
            self.join.add_vwap(symbol, time_ms, sum_pv, sum_v)
            released = []
        for quote, sums in released:
            if sums is None:
                self.unmatched += 1  # a quote before its symbol's first trade
                continue
            self.emit([*quote, *sums], anchors=[])


class FilterBolt(Bolt):
    outputs = ["symbol", "time_ms", "ask_e4", "ask_size", "vwap_e4"]

    def initialize(self, storm_conf, context):
        options = ConfReader(storm_conf, PREFIX)
        self.margin_ppm = margin_ppm(options.float("margin", 0.005, minimum=0.0))

    def process(self, tup):
        symbol, time_ms, ask, ask_size, sum_pv, sum_v = tup.values
        if is_bargain(ask, sum_pv, sum_v, self.margin_ppm):
            self.emit([symbol, time_ms, ask, ask_size, vwap_e4(sum_pv, sum_v)])


class SinkBolt(JsonLinesSinkBolt):
    conf_prefix = PREFIX

    def record_for(self, tup):
        symbol, time_ms, ask, ask_size, vwap = tup.values
        return {"symbol": symbol, "time_ms": time_ms, "ask": ask / 10_000, "ask_size": ask_size,
                "vwap": round(vwap / 10_000, 6), "discount": round(1 - ask / vwap, 6)}
