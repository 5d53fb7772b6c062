"""Placement planners, found by name, grouped by the paper they come from.

* :mod:`.baselines` — Storm's own schedulers as planners (``even``, ``storm-default``);
* :mod:`.chatzistergiou` — Chatzistergiou & Viglas (CIKM 2014): ``tasklevel``, ``topdown``,
  ``topdown-ls`` and the exact ``optimal``;
* :mod:`.madsen` — Madsen et al.: ``milp``, ``albic`` and their comparison baselines ``flux``
  and ``cola``;
* :mod:`.nasiri` — Nasiri et al.: the heterogeneity-aware CPU model, ``hetero`` and
  ``hetero-optimal``.

Importing this package imports every public module in it and in its family packages,
and each planner module registers its planner with
:func:`storm_planner.planners.base.register`, so adding a planner is adding a module.
"""
import importlib
import pkgutil

from storm_planner.planners.base import Planner, available, get_planner, register, run

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    _leaf = _module.name.rsplit(".", 1)[-1]
    if _leaf != "base" and not _leaf.startswith("_"):
        importlib.import_module(_module.name)

__all__ = ["Planner", "available", "get_planner", "register", "run"]
