"""World Cup 1998: the topk topology (Elastic Allocator §V.A); see ``worldcup.topology``."""
from worldcup.topology import build

WorldCupTopk = build("topk")
