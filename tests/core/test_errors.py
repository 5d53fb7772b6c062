"""One error root: every exception class storm-planner defines derives from StormPlannerError."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import storm_planner
from storm_planner import StormPlannerError


def _error_classes():
    for info in pkgutil.walk_packages(storm_planner.__path__, prefix="storm_planner."):
        if ".thrift_gen" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == module.__name__):
                yield f"{module.__name__}.{name}", value


def test_every_error_class_derives_from_the_root():
    classes = dict(_error_classes())
    assert "storm_planner.core.errors.ProblemError" in classes
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, StormPlannerError))
    assert not outside, outside


def test_the_root_keeps_the_other_bases():
    from storm_planner.cli import CommandError
    from storm_planner.cluster import ClusterError, DescriptionError
    from storm_planner.core.errors import ProblemError, UnknownAlgorithmError

    assert issubclass(ProblemError, ValueError) and issubclass(UnknownAlgorithmError, KeyError)
    assert issubclass(ClusterError, RuntimeError) and issubclass(DescriptionError, ValueError)
    assert issubclass(CommandError, StormPlannerError)
