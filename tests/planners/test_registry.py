"""The registries (storm_planner.planners.registry, storm_planner.scaling.scaler_registry) list every
planner and scaler the package defines, each once, planners in the family package they are listed
under; nothing registers itself by being imported."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import storm_planner.planners as planners_package
import storm_planner.scaling as scaling_package
from storm_planner.planners import available, registry
from storm_planner.planners.base import Planner
from storm_planner.scaling import scaler_registry, scalers
from storm_planner.scaling.base import Scaler


def _defined_classes(package, base: type) -> set[type]:
    """Every named subclass of ``base`` defined in a module of ``package``."""
    found = set()
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, base) and cls is not base and cls.__module__ == module.__name__ and cls.name:
                found.add(cls)
    return found


def test_every_planner_class_is_listed_once():
    assert set(registry.PLANNERS) == _defined_classes(planners_package, Planner)
    assert len(registry.PLANNERS) == len(set(registry.PLANNERS))


def test_every_scaler_class_is_listed_once():
    assert set(scaler_registry.SCALERS) == _defined_classes(scaling_package, Scaler)
    assert len(scaler_registry.SCALERS) == len(set(scaler_registry.SCALERS))


def test_each_class_sits_in_the_family_package_it_is_listed_under():
    for family, classes in registry.PLANNER_FAMILIES.items():
        for cls in classes:
            assert cls.__module__.startswith(f"storm_planner.planners.{family}."), (family, cls)
    for cls in scaler_registry.SCALERS:
        assert cls.__module__.startswith("storm_planner.scaling."), cls


def test_names_are_looked_up_in_the_registry():
    assert {cls.name for cls in registry.PLANNERS} <= set(available())
    assert {cls.name: cls for cls in scaler_registry.SCALERS} == scalers()


def test_random_is_a_baseline():
    assert available()["random"].__module__ == "storm_planner.planners.baselines.random"
    assert available()["random"].baseline
