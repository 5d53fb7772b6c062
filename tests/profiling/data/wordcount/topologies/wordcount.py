"""Word count: sentences -> split -> count, with a global report."""
from bolts.wordcount import CountBolt, ReportBolt, SplitBolt
from spouts.sentences import SentenceSpout
from streamparse import Grouping, Topology


class WordCount(Topology):
    sentences = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par={"prod": 4, "dev": 1})
    report = ReportBolt.spec(inputs={count: Grouping.GLOBAL}, par=1)
