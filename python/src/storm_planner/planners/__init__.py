"""Placement planners, one module each, found by name.

Importing this package imports every module in it, and each module registers
its planner with :func:`storm_planner.planners.base.register`, so adding a
planner is adding a module.
"""
import importlib
import pkgutil

from storm_planner.planners.base import Planner, available, get_planner, register, run

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Planner", "available", "get_planner", "register", "run"]
