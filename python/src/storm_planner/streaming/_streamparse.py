"""streamparse's classes for the component kit, imported without pystorm's import-time warning.

pystorm (under streamparse) warns at import when msgpack is missing. msgpack serves only pystorm's
``MsgpackSerializer``, and the topologies speak JSON (streamparse's default serializer), so that one
warning is silenced here, and nothing else.
"""
import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Cannot import msgpack", category=ImportWarning)
    from streamparse import Bolt, Grouping, Spout

__all__ = ["Bolt", "Grouping", "Spout"]
