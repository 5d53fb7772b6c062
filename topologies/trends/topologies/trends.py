"""Twitter trending topics (topDown paper §7.4), the streamparse topology file.

The ``Trends`` class is defined in the ``trends`` package (``src/trends/topology.py``):
streamparse's loader imports this file as a module named ``trends`` with
``src/`` first on ``sys.path``, so the package and this file must yield the same
class whichever one it finds.
"""
from trends.topology import Trends

__all__ = ["Trends"]
