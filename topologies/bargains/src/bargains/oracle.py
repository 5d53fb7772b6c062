"""The bargains the topology must write, computed directly from the feeds (pure Python)."""
from __future__ import annotations

import os

from bargains.logic import AsOfJoin, VwapWindow, is_bargain, margin_ppm
from bargains.taq import quote_values, trade_values
from storm_planner.streaming.feedio import iter_feed_records


def expected_bargains(trades_feed: str | os.PathLike, quotes_feed: str | os.PathLike,
                      margin: float = 0.005, window_s: float = 600.0) -> list[tuple]:
    """Sorted ``(symbol, time_ms, ask_e4, ask_size)`` of every bargain quote."""
    windows: dict[str, VwapWindow] = {}
    join = AsOfJoin()
    for record in iter_feed_records(os.fspath(trades_feed)):
        trade = trade_values(record)
        if trade is None:
            continue
        symbol, time_ms, price, size = trade
        window = windows.setdefault(symbol, VwapWindow(int(round(window_s * 1000))))
        join.add_vwap(symbol, time_ms, *window.add(time_ms, price, size))
    ppm = margin_ppm(margin)
    bargains = []
    for record in iter_feed_records(os.fspath(quotes_feed)):
        quote = quote_values(record)
        if quote is None:
            continue
        sums = join.vwap_as_of(quote[0], quote[1])
        if sums is not None and is_bargain(quote[2], *sums, ppm):
            bargains.append(tuple(quote))
    return sorted(bargains)


def bargains_in_sink(sink: str | os.PathLike) -> list[tuple]:
    """The sink's bargains in the oracle's form, sorted."""
    import json
    out = []
    with open(sink, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                out.append((row["symbol"], row["time_ms"], int(round(row["ask"] * 10_000)), row["ask_size"]))
    return sorted(out)
