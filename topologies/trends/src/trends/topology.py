"""The Twitter trending topics topology (topDown paper §7.4).

    tweets (spout) --fields(topic)--> count --fields(topic)--> rank --global--> total (sink)

Defined inside the ``trends`` package (and re-exported by the project's
``topologies/trends.py``) because streamparse's loader imports the topology
file as a module named after it — ``trends`` — with ``src/`` first on the path,
which would otherwise find this package instead of the topology.
"""
from streamparse import Grouping, Topology

from storm_planner.streaming import tick_config
from storm_planner.streaming.spout import FEED_SPOUTS_KEY
from trends.bolts import CountBolt, RankBolt, TotalBolt
from trends.spouts import TweetSpout


class Trends(Topology):
    # Options named trends.parallelism.<component> / trends.grouping.<component>
    # reshape the topology at submit (storm_planner.streaming.configure_topology).
    conf_prefix = "trends"
    config = {"topology.max.spout.pending": 2000}

    tweets = TweetSpout.spec(name="tweets", par=1, config={FEED_SPOUTS_KEY: ["tweets"]})
    count = CountBolt.spec(name="count", inputs={tweets: Grouping.fields("topic")}, par=2,
                           config=tick_config(1))
    rank = RankBolt.spec(name="rank", inputs={count: Grouping.fields("topic")}, par=2,
                         config=tick_config(1))
    total = TotalBolt.spec(name="total", inputs={rank: Grouping.GLOBAL}, par=1,
                           config=tick_config(1))
