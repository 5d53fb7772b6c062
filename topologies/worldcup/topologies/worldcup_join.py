"""World Cup 1998: the join topology (Elastic Allocator §V.A); see ``worldcup.topology``."""
from worldcup.topology import build

WorldCupJoin = build("join")
