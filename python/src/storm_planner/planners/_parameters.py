"""Planner parameters: checking values, and reading them from a problem's options.

Two halves of the contract described in :mod:`storm_planner.planners.base`:

* :func:`checked` is what a planner's ``__init__`` calls on each argument: it
  converts the forms outside callers send (``"5"`` for 5, ``"false"`` for
  False) and refuses a wrong type or an out-of-range value with an
  :class:`InvalidParameterError` naming the planner and the parameter.
* :func:`parameters_from_options` is the one resolver from a problem's options
  to a planner's parameters: ``planner.<algorithm>.<key>`` (a topology's conf
  through the service, or a problem file), else the bare ``<key>`` (the older
  problem-file spelling, still read), each converted to the type of the
  parameter's default. An unknown key under ``planner.<algorithm>.`` is refused
  with :class:`UnknownParameterError`, as a misspelled constructor argument is.

And where each parameter is described: :func:`documented_parameters` reads the
``Parameters`` section of a planner's (or scaler's) class docstring, in the
numpydoc form scikit-learn's estimators use; :func:`documentation_gaps` says
which parameters it misses, names it has no more, and defaults it misstates.
"""
from __future__ import annotations

import difflib
import inspect
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from storm_planner.core.errors import InvalidParameterError, UnknownParameterError
from storm_planner.core.fields import parse_flag

if TYPE_CHECKING:
    from storm_planner.planners.base import Planner

OPTION_PREFIX = "planner."


def option_prefix(algorithm: str) -> str:
    """Where a topology's conf sets ``algorithm``'s parameters: ``planner.<algorithm>.``."""
    return f"{OPTION_PREFIX}{algorithm}."


# -- conversions: each returns the value in its type or raises ValueError saying what was expected --

def to_flag(value: Any) -> bool:
    flag = parse_flag(value)
    if flag is None:
        raise ValueError("true or false")
    return flag


def to_whole(value: Any) -> int:
    if isinstance(value, str):
        value = _number_from_text(value, "a whole number")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("a whole number")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("a whole number")
    return int(value)


def to_real(value: Any) -> float:
    if isinstance(value, str):
        value = _number_from_text(value, "a finite number")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        # inf would pass every range check and break the planner later (ALBIC's attempts count from max_pl).
        raise ValueError("a finite number")
    return float(value)


def to_text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a string")
    return value


def to_word(value: Any) -> str:
    """A keyword, case and surrounding spaces ignored (``"CBC "`` is ``cbc``)."""
    return to_text(value).strip().lower()


def from_text(value: Any) -> Any:
    """For a parameter whose default (None) has no type: a string holding JSON is parsed."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _number_from_text(text: str, expected: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(expected) from None


Converter = Callable[[Any], Any]
"""A parameter's conversion: the value as given (text, number, ...) to its type, or ValueError."""


def converter_like(default: Any) -> Converter:
    """The conversion to the type of ``default`` (bool before int: True is an int in Python)."""
    for kind, convert in ((bool, to_flag), (int, to_whole), (float, to_real), (str, to_text)):
        if isinstance(default, kind):
            return convert
    return from_text


# -- checking a constructor argument ----------------------------------------------------------

def checked(planner: str, name: str, value: Any, convert: Converter, *, minimum: float | None = None,
            above: float | None = None, choices: Iterable[str] | None = None, optional: bool = False) -> Any:
    """``value`` converted by ``convert`` (e.g. :func:`to_whole`), within its bounds, or an
    :class:`InvalidParameterError` naming ``planner`` and ``name``. ``optional``: None passes."""
    if value is None and optional:
        return None
    if optional and isinstance(value, str) and value.strip().lower() in ("null", "none"):
        return None
    try:
        result = convert(value)
    except ValueError as error:
        raise InvalidParameterError(f"{planner}: parameter {name} must be {error}, got {value!r}") from None
    if minimum is not None and result < minimum:
        raise InvalidParameterError(f"{planner}: parameter {name} must be >= {minimum:g}, got {value!r}")
    if above is not None and result <= above:
        raise InvalidParameterError(f"{planner}: parameter {name} must be > {above:g}, got {value!r}")
    if choices is not None and result not in tuple(choices):
        raise InvalidParameterError(f"{planner}: parameter {name} must be one of {', '.join(choices)}, "
                                    f"got {value!r}")
    return result


# -- unknown names --------------------------------------------------------------------------------

def unknown_parameters_error(planner: str, unknown: Iterable[str], known: Iterable[str],
                             spelled: str = "{}") -> UnknownParameterError:
    """The refusal of ``unknown`` names: which ones, the planner, its parameters, a likely meaning.
    ``spelled`` shows how the caller wrote a name (``"planner.topdown.{}"`` for an option)."""
    unknown, known = sorted(unknown), sorted(known)
    listed = ", ".join(repr(spelled.format(u)) for u in unknown)
    noun = "parameter" if len(unknown) == 1 else "parameters"
    its = f"its parameters: {', '.join(known)}" if known else "it takes no parameters"
    hints = [repr(spelled.format(m[0])) + (f" for {spelled.format(u)!r}" if len(unknown) > 1 else "")
             for u in unknown if (m := difflib.get_close_matches(u, known, n=1))]
    hint = f" (did you mean {'; '.join(hints)}?)" if hints else ""
    return UnknownParameterError(f"{planner} has no {noun} {listed}{hint}; {its}")


# -- the contract's base class ---------------------------------------------------------------------

_DEFAULTS: dict[type, dict[str, Any]] = {}  # class -> its parameters and their defaults


class Parameterised:
    """scikit-learn's estimator contract for planners and scalers: explicit keyword parameters with
    defaults, :meth:`get_params` / :meth:`set_params`, unknown names refused before ``__init__``.
    Subclasses set ``name`` (used in errors)."""

    name: ClassVar[str] = ""

    def __new__(cls, *args: Any, **params: Any) -> Parameterised:
        # Checked here, before __init__, so every estimator refuses unknown names the same way
        # (Python's own TypeError would not name the estimator nor list what it takes).
        cls.refuse_unknown(params)
        return super().__new__(cls)

    @classmethod
    def refuse_unknown(cls, names: Any) -> None:
        """UnknownParameterError for any of ``names`` that is not a parameter of this planner."""
        known = cls.param_defaults()
        unknown = set(names) - set(known)
        if unknown:
            raise unknown_parameters_error(cls.name or cls.__name__, unknown, known)

    def __init__(self) -> None:
        """A planner without parameters."""

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        """Parameter -> default, from the ``__init__`` signature (as scikit-learn's _get_param_names)."""
        if cls not in _DEFAULTS:  # inspecting a signature costs more than a small plan's evaluation
            _DEFAULTS[cls] = cls._signature_defaults()
        return dict(_DEFAULTS[cls])

    @classmethod
    def _signature_defaults(cls) -> dict[str, Any]:
        defaults = {}
        for parameter in list(inspect.signature(cls.__init__).parameters.values())[1:]:
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ takes *{parameter.name}: a planner's parameters "
                                f"must be explicit keywords with defaults")
            if parameter.default is parameter.empty:
                raise TypeError(f"{cls.__name__}.__init__: parameter {parameter.name} has no default")
            defaults[parameter.name] = parameter.default
        return defaults

    def get_params(self) -> dict[str, Any]:
        """This planner's parameters and their values."""
        return {name: getattr(self, name) for name in self.param_defaults()}

    def set_params(self, **params: Any) -> Parameterised:
        """Change parameters; unknown names and bad values are refused as by the constructor."""
        self.refuse_unknown(params)
        type(self).__init__(self, **{**self.get_params(), **params})
        return self

    @property
    def params(self) -> Mapping[str, Any]:
        """Read-only view of :meth:`get_params` (older spelling)."""
        return MappingProxyType(self.get_params())

    def __repr__(self) -> str:
        # getattr with a default: repr must work on an object whose __init__ failed half-way (tracebacks)
        args = ", ".join(f"{k}={getattr(self, k, '?')!r}" for k in self.param_defaults())
        return f"{type(self).__name__}({args})"


# -- the resolver ---------------------------------------------------------------------------------

def parameters_from_options(cls: type[Planner], options: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters ``options`` sets for planner ``cls``, converted to the types of their defaults.

    ``planner.<algorithm>.<key>`` wins over the bare ``<key>``; the bare spelling is not checked
    for unknown names (a problem's options carry much else: ``workers``, Storm's own keys).
    """
    defaults = cls.param_defaults()
    prefix = option_prefix(cls.name)
    found: dict[str, tuple[str, Any]] = {}  # parameter -> (option key, raw value)
    for key, name in (*((k, k) for k in defaults), *cls.option_aliases.items()):
        if options.get(key) is not None and name not in found:
            found[name] = (key, options[key])
    unknown = []
    for key, value in options.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        if name in defaults:
            found[name] = (key, value)
        elif name not in cls.option_inputs:
            unknown.append(name)
    if unknown:
        raise unknown_parameters_error(cls.name, unknown, defaults, spelled=prefix + "{}")
    return {name: _converted(cls.name, key, value, defaults[name]) for name, (key, value) in found.items()}


def _converted(planner: str, key: str, value: Any, default: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in ("null", "none"):
        return None  # the constructor says whether this parameter may be None
    try:
        return converter_like(default)(value)
    except ValueError as error:
        raise InvalidParameterError(f"{planner}: option {key} must be {error}, got {value!r}") from None


# -- documentation: the Parameters section of a class docstring ------------------------------------

_SECTION_RULE = re.compile(r"^-{3,}$")
_ENTRY = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*) : (?P<kind>.+?), default=(?P<default>.+)$")


@dataclass(frozen=True)
class ParameterDoc:
    """One entry of a ``Parameters`` section: ``name : kind, default=DEFAULT`` and an indented description."""

    name: str
    kind: str
    default: str
    description: str


def documented_parameters(cls: type) -> dict[str, ParameterDoc]:
    """The entries of the ``Parameters`` section of ``cls``'s own docstring, in order.

    The numpydoc form of scikit-learn's estimators::

        Parameters
        ----------
        skew_margin : float or None, default=0.25
            Relative load spread above which a component is split into sub-groups.

    A class without a docstring or without the section documents nothing. A line in the section that
    is neither an entry nor indented under one raises ValueError naming the class and the line.
    """
    lines = inspect.cleandoc(cls.__dict__.get("__doc__") or "").splitlines()
    start = next((i + 2 for i in range(len(lines) - 1)
                  if lines[i].strip() == "Parameters" and _SECTION_RULE.match(lines[i + 1].strip())), None)
    if start is None:
        return {}
    entries: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for number, line in enumerate(lines[start:], start):
        if number + 1 < len(lines) and _SECTION_RULE.match(lines[number + 1].strip()):
            break  # the next section's title
        if not line.strip() or line.startswith(" "):
            if current is not None and line.strip():
                current["description"].append(line.strip())
            continue
        match = _ENTRY.match(line)
        if not match:
            raise ValueError(f"{cls.__name__}: not a parameter entry (name : kind, default=VALUE): {line!r}")
        current = {**match.groupdict(), "description": []}
        entries[current["name"]] = current
    return {name: ParameterDoc(e["name"], e["kind"], e["default"], " ".join(e["description"]))
            for name, e in entries.items()}


def documented_default(value: Any) -> str:
    """How a default is written after ``default=``: Python's spelling, strings in double quotes."""
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def documentation_gaps(cls: type[Parameterised]) -> list[str]:
    """What the ``Parameters`` section of ``cls`` gets wrong, one line each; empty when it is complete."""
    documented = documented_parameters(cls)
    defaults = cls.param_defaults()
    gaps = [f"{name}: not documented" for name in defaults if name not in documented]
    gaps += [f"{name}: documented but not a parameter" for name in documented if name not in defaults]
    for name, doc in documented.items():
        if name not in defaults:
            continue
        if not doc.description:
            gaps.append(f"{name}: no description")
        if doc.default != documented_default(defaults[name]):
            gaps.append(f"{name}: documented default={doc.default}, "
                        f"the signature's is {documented_default(defaults[name])}")
    return gaps
