"""The errors of storm-planner.

:class:`StormPlannerError` is the root of every error the package raises (a caller can
catch them all at once); each keeps its other bases (``ValueError``, ``RuntimeError``,
``KeyError``) so code that catches those still does.

The planner's errors below each map to one ``ErrorKind`` of the Thrift contract, so the
service can tell the plugin why a topology got no plan.
"""


class StormPlannerError(Exception):
    """Root of every storm-planner error."""


class PlanningError(StormPlannerError):
    """Base class: a plan could not be produced."""

    kind = "INTERNAL"


class ProblemError(PlanningError, ValueError):
    """The problem file or request is malformed (bad JSON shape, unknown ids, ...)."""

    kind = "BAD_REQUEST"


class UnknownParameterError(ProblemError):
    """A planner was given a parameter it does not have (often a misspelling)."""


class InvalidParameterError(ProblemError):
    """A planner parameter has the wrong type or is out of range."""


class UnknownAlgorithmError(PlanningError, KeyError):
    kind = "UNKNOWN_ALGORITHM"

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown algorithm"


class InfeasibleError(PlanningError):
    """The executors cannot be placed within the nodes' capacities or slots."""

    kind = "INFEASIBLE"


class TooLargeError(PlanningError):
    """An exact planner refuses a problem beyond its size limit."""

    kind = "BAD_REQUEST"
