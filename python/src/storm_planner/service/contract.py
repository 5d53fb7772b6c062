"""The Thrift contract, loaded at run time from ``planner.thrift`` with thriftpy2."""
from __future__ import annotations

from pathlib import Path

import thriftpy2

IDL_PATH = Path(__file__).with_name("planner.thrift")

# thriftpy2 needs the module name to end in "_thrift" to register it for pickling.
planner_thrift = thriftpy2.load(str(IDL_PATH), module_name="planner_thrift")
