from itertools import cycle

from streamparse import Spout


class SentenceSpout(Spout):
    outputs = ["sentence"]

    def initialize(self, stormconf, context):
        self.sentences = cycle(["the quick brown fox", "jumps over the lazy dog"])

    def next_tuple(self):
        self.emit([next(self.sentences)])
