"""The three World Cup topologies (Elastic Allocator §V.A's workload), one topology file each::

    worldcup_topk       requests --fields(object_id)--> count --global--> top
    worldcup_wordcount  requests --shuffle--> tokenize --fields(word)--> words --global--> counts
    worldcup_join       requests --fields(object_id)--> join --fields(section)--> totals --global--> sections

Storm fixes a topology's structure at submission, so each is its own file
(``topologies/worldcup_topk.py`` ...), built here.
"""
from __future__ import annotations

from streamparse import Grouping, Topology
from streamparse.dsl.topology import TopologyType

from storm_planner.streaming import tick_config
from storm_planner.streaming.spout import FEED_SPOUTS_KEY
from worldcup.bolts import (
    CatalogueJoinBolt,
    CountsSinkBolt,
    ObjectCountBolt,
    SectionTotalBolt,
    TokenizeBolt,
    TopKSinkBolt,
    WordCountBolt,
)
from worldcup.spouts import RequestSpout

JOBS = ("topk", "wordcount", "join")


def build(job: str):
    """A new Topology class for ``job`` (topk, wordcount or join)."""
    if job not in JOBS:
        raise ValueError(f"the World Cup jobs are {', '.join(JOBS)}")
    specs: dict = {"conf_prefix": "worldcup", "config": {"topology.max.spout.pending": 2000}}
    requests = specs["requests"] = RequestSpout.spec(name="requests", par=1, config={FEED_SPOUTS_KEY: ["requests"]})
    if job == "topk":
        count = specs["count"] = ObjectCountBolt.spec(name="count", par=2, config=tick_config(1),
                                                      inputs={requests: Grouping.fields("object_id")})
        specs["top"] = TopKSinkBolt.spec(name="top", par=1, inputs={count: Grouping.GLOBAL}, config=tick_config(1))
    elif job == "wordcount":
        tokenize = specs["tokenize"] = TokenizeBolt.spec(name="tokenize", par=2, inputs={requests: Grouping.SHUFFLE})
        words = specs["words"] = WordCountBolt.spec(name="words", par=2, config=tick_config(1),
                                                    inputs={tokenize: Grouping.fields("word")})
        specs["counts"] = CountsSinkBolt.spec(name="counts", par=1, inputs={words: Grouping.GLOBAL},
                                              config=tick_config(1))
    else:
        join = specs["join"] = CatalogueJoinBolt.spec(name="join", par=2,
                                                      inputs={requests: Grouping.fields("object_id")})
        totals = specs["totals"] = SectionTotalBolt.spec(name="totals", par=2, config=tick_config(1),
                                                         inputs={join: Grouping.fields("section")})
        specs["sections"] = CountsSinkBolt.spec(name="sections", par=1, inputs={totals: Grouping.GLOBAL},
                                                config=tick_config(1))
    return TopologyType(f"WorldCup{job.capitalize()}", (Topology,), specs)
