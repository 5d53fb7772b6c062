"""Stock market bargain detection: components, logic and the direct oracle.

``bargains.expected_bargains(trades_feed, quotes_feed, margin, window_s)`` gives
the bargains the sink must hold once both feeds drained;
``bargains.bargains_in_sink(path)`` reads the sink in the same form.
"""
from bargains.oracle import bargains_in_sink, expected_bargains
from bargains.paths import shipped_quotes, shipped_trades

try:  # the topology needs streamparse; the oracle must not
    from bargains.topology import Bargains
except ModuleNotFoundError as error:  # pragma: no cover - streamparse missing
    if not (error.name or "").startswith("streamparse"):
        raise
    Bargains = None

__all__ = ["expected_bargains", "bargains_in_sink", "shipped_trades", "shipped_quotes", "Bargains"]
