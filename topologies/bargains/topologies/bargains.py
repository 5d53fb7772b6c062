"""Stock market bargain detection (topDown paper §7.4), the streamparse topology file.

The class lives in the ``bargains`` package (``src/bargains/topology.py``):
streamparse's loader imports this file as a module named ``bargains``.
"""
from bargains.topology import Bargains

__all__ = ["Bargains"]
