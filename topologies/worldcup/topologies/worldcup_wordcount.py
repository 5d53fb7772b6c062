"""World Cup 1998: the wordcount topology (Elastic Allocator §V.A); see ``worldcup.topology``."""
from worldcup.topology import build

WorldCupWordcount = build("wordcount")
