"""Stock market bargain detection (topDown paper §7.4).

    trades (spout) --fields(symbol)--> vwap --fields(symbol)--> join --shuffle--> filter --global--> sink
    quotes (spout) ----------------------------fields(symbol)--^

Watermark streams (all grouping) run beside the data: trades → vwap → join,
quotes → join. Defined in the package for the reason given in
``trends.topology``: streamparse's loader imports ``topologies/bargains.py`` as
module ``bargains``.
"""
from streamparse import Grouping, Topology

from bargains.bolts import FilterBolt, JoinBolt, SinkBolt, VwapBolt
from bargains.spouts import QuoteSpout, TradeSpout
from storm_planner.streaming.spout import FEED_SPOUTS_KEY
from storm_planner.streaming.watermarks import WATERMARK_STREAM

FEED_SPOUTS = {FEED_SPOUTS_KEY: ["trades", "quotes"]}


class Bargains(Topology):
    conf_prefix = "bargains"
    config = {"topology.max.spout.pending": 2000}

    trades = TradeSpout.spec(name="trades", par=1, config=FEED_SPOUTS)
    quotes = QuoteSpout.spec(name="quotes", par=1, config=FEED_SPOUTS)
    vwap = VwapBolt.spec(name="vwap", par=2, inputs={
        trades["default"]: Grouping.fields("symbol"),
        trades[WATERMARK_STREAM]: Grouping.ALL})
    join = JoinBolt.spec(name="join", par=2, inputs={
        vwap["default"]: Grouping.fields("symbol"),
        vwap[WATERMARK_STREAM]: Grouping.ALL,
        quotes["default"]: Grouping.fields("symbol"),
        quotes[WATERMARK_STREAM]: Grouping.ALL})
    filter = FilterBolt.spec(name="filter", par=1, inputs={join: Grouping.SHUFFLE})
    sink = SinkBolt.spec(name="sink", par=1, inputs={filter: Grouping.GLOBAL})
