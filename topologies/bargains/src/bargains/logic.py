"""The bargain detection logic, free of Storm: VWAP window, as-of join, bargain rule.

- VWAP per symbol over a window of ``window_ms`` sliding by one element: at
  each trade at time ``t`` the window holds the symbol's trades with time in
  ``(t - window_ms, t]``; the VWAP is ``Σ price·size / Σ size`` (kept as the two
  exact integer sums).
- The join pairs each quote with the VWAP of its symbol *as of the quote's
  time*: the VWAP computed at the symbol's latest trade with time ≤ the
  quote's (ties between trades at one instant: the later one in the feed).
  A quote before the symbol's first trade has no VWAP and is dropped.
- A quote is a bargain when its ask is below the VWAP by more than the margin:
  ``ask < vwap · (1 − margin)``, evaluated exactly as
  ``ask·Σsize·10⁶ < Σ(price·size)·(10⁶ − margin_ppm)``.
"""
from __future__ import annotations

import bisect
import heapq
from collections import deque

PPM = 1_000_000


class VwapWindow:
    def __init__(self, window_ms: int):
        if window_ms <= 0:
            raise ValueError("the VWAP window must be positive")
        self.window_ms = window_ms
        self.trades: deque = deque()  # (time_ms, price_e4 * size, size)
        self.sum_pv = 0
        self.sum_v = 0

    def add(self, time_ms: int, price_e4: int, size: int) -> tuple[int, int]:
        """Add a trade; return the window's (Σ price·size, Σ size) after it."""
        pv = price_e4 * size
        self.trades.append((time_ms, pv, size))
        self.sum_pv += pv
        self.sum_v += size
        horizon = time_ms - self.window_ms
        while self.trades and self.trades[0][0] <= horizon:
            _, old_pv, old_v = self.trades.popleft()
            self.sum_pv -= old_pv
            self.sum_v -= old_v
        return self.sum_pv, self.sum_v


def margin_ppm(margin: float) -> int:
    if not 0 <= margin < 1:
        raise ValueError("the bargain margin is a fraction in [0, 1)")
    return int(round(margin * PPM))


def is_bargain(ask_e4: int, sum_pv: int, sum_v: int, margin_in_ppm: int) -> bool:
    return sum_v > 0 and ask_e4 * sum_v * PPM < sum_pv * (PPM - margin_in_ppm)


def vwap_e4(sum_pv: int, sum_v: int) -> float:
    return sum_pv / sum_v


class AsOfJoin:
    """Pairs quotes with the VWAP as of their time, released by the trades' watermark.

    Feed it VWAP updates (per symbol in time order) and quotes in any order;
    :meth:`advance_trades` with the trades' watermark ``W`` (no trade earlier
    than ``W`` is still to come) releases every pending quote with time < W,
    each paired with its VWAP (or None when the symbol had no trade yet).
    :meth:`advance_quotes` with the quotes' watermark prunes VWAP history no
    future quote can need.
    """

    def __init__(self):
        self.history: dict[str, tuple[list, list]] = {}  # symbol -> (times, sums)
        self.pending: list = []  # heap of (time_ms, arrival, quote values)
        self.arrivals = 0
        self.trades_watermark_ms = float("-inf")

    def add_vwap(self, symbol: str, time_ms: int, sum_pv: int, sum_v: int) -> None:
        times, sums = self.history.setdefault(symbol, ([], []))
        if times and time_ms < times[-1]:
            # Out of order (a replayed trade): keep the history sorted.
            index = bisect.bisect_right(times, time_ms)
            times.insert(index, time_ms)
            sums.insert(index, (sum_pv, sum_v))
        else:
            times.append(time_ms)
            sums.append((sum_pv, sum_v))

    def add_quote(self, quote: list) -> list:
        """Buffer a quote ``[symbol, time_ms, ...]``; returns releases if it is already due."""
        self.arrivals += 1
        heapq.heappush(self.pending, (quote[1], self.arrivals, quote))
        return self._release()

    def advance_trades(self, watermark_ms: float) -> list:
        if watermark_ms > self.trades_watermark_ms:
            self.trades_watermark_ms = watermark_ms
        return self._release()

    def _release(self) -> list:
        out = []
        while self.pending and self.pending[0][0] < self.trades_watermark_ms:
            _, _, quote = heapq.heappop(self.pending)
            out.append((quote, self.vwap_as_of(quote[0], quote[1])))
        return out

    def vwap_as_of(self, symbol: str, time_ms: int):
        times, sums = self.history.get(symbol, ((), ()))
        index = bisect.bisect_right(times, time_ms)
        return sums[index - 1] if index else None

    def advance_quotes(self, watermark_ms: float) -> None:
        """Drop VWAP entries that no quote still to come, nor one still pending, can need.

        A quote still to come has time >= ``watermark_ms``; a pending quote (one
        that waits for the trades' watermark) can be older, so history is kept
        from the as-of entry of whichever is earlier. (Pruning up to the
        quotes' watermark alone lost the VWAPs of pending quotes whenever the
        quotes feed ran ahead of the trades: those quotes came out unmatched
        and their bargains were missing.)
        """
        horizon = min(watermark_ms, self.pending[0][0]) if self.pending else watermark_ms
        for times, sums in self.history.values():
            keep_from = bisect.bisect_right(times, horizon) - 1  # the as-of entry for the horizon
            if keep_from > 0:
                del times[:keep_from]
                del sums[:keep_from]
