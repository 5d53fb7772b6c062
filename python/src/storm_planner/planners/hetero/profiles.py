"""Profiles: what one tuple of each component costs on each machine type.

Nasiri et al., *A Scheduling Algorithm to Maximize Storm Throughput in
Heterogeneous Cluster*, §5.2: a pre-processing step runs every component on
every machine type and records, per (component, machine type), the average
execute time of one tuple **ET** and Storm's miscellaneous time per tuple
**MET**; per component the tuple division ratio **α** (output tuples per input
tuple); and the topology's initial input rate. Eq. 7 then predicts CPU use
from the input rate alone (see :mod:`storm_planner.planners.hetero.model`).

File format (JSON or YAML; the same object may sit under the ``profiles`` key
of a problem file)::

    {
      "format": "storm-planner-profile/1",
      "time_unit": "ms",                 # unit of et/met: "ms" (default), "us" or "s"
      "input_rate": 100.0,               # IR0, tuples/s emitted by each spout at the start
      "executor_cap": null,              # optional: CPU percent one executor thread may use
      "machine_types": {                 # optional: derive an unprofiled type from another
        "i7": {"like": "i5", "speed": 1.3}            # times on i7 = times on i5 / 1.3
      },
      "component_types": {               # times per component type and machine type
        "lowCompute": {"pentium": {"et": 0.0581, "met": 0.0}, "i5": {"et": 0.0916, "base": 4.0}}
      },
      "components": {                    # per component of the topology
        "spout": {"type": "lowCompute", "input_share": 1.0},
        "split": {"type": "lowCompute", "alpha": 3.0},
        "count": {"times": {"i5": {"et": 0.2, "met": 0.01}}, "alpha": {"sink": 0.5, "*": 1.0}}
      }
    }

* A component's times come from its ``type`` (an entry of ``component_types``),
  overridden per machine type by its own ``times``; a component absent from
  ``components`` but named in ``component_types`` uses that entry. Times are a
  ``{"et": .., "met": .., "base": ..}`` object (``met`` and ``base`` default
  to 0) or a bare number (ET, with MET 0 and base 0).
* ``base`` (not in the paper; issue #18): the CPU percent (of one core) one
  instance uses at zero input on that machine type — a Storm executor is
  never free (idle spinning of the wait strategy, heartbeats, metrics). The
  CPU model becomes ``TCU = base + IR · (ET + MET) / 10``
  (:mod:`storm_planner.planners.hetero.model`). The default 0 is the paper's eq. 7, so
  a profile without bases means what it meant. ``base`` is a percent, not a
  time: ``time_unit`` does not scale it; a derived machine type
  (``machine_types``) divides it by ``speed`` as it divides the times.
* Every key is checked: an unknown key, at any level, is an error that names
  it (a misspelled ``"bse"`` is not silently a base of 0). Informational
  keys that the planner ignores: ``description``, ``source``, ``profiling``,
  ``reference_times`` and ``fit`` at the top level.
* ``alpha`` is one number for every stream the component emits on, or an
  object from target component to ratio, ``"*"`` being the default (1).
* ``input_share`` (spouts): this spout emits ``input_share × input rate``;
  every spout emits the topology input rate by default.
* System components (``__acker``, ...) need no entry: they cost nothing here.

A topology running on Storm passes its profile to the planner service in its
configuration: the option ``planner.hetero.profiles`` holds the profile's JSON.

Measured profiles: :func:`profile_from_measurements` fits ET and MET from
(input rate, CPU percent, execute latency) samples of each component on each
machine type, the procedure of §5.2, and returns the same :class:`Profile`;
``method="affine"`` fits base and slope by least squares (:func:`fit_affine_series`,
with R² and residuals). A profile records where it came from in ``source``.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from storm_planner.core import fields, settings
from storm_planner.core.errors import ProblemError
from storm_planner.core.jsonfile import JsonFileError, loads_bounded, read_json
from storm_planner.core.problem import Problem

FORMAT = "storm-planner-profile/1"
TIME_UNITS = {"ms": 1.0, "us": 1e-3, "s": 1e3}  # to milliseconds
INFORMATIONAL_KEYS = frozenset({"description", "source", "profiling", "reference_times", "fit"})
PROFILE_KEYS = frozenset({"format", "time_unit", "input_rate", "executor_cap", "machine_types",
                          "component_types", "components"}) | INFORMATIONAL_KEYS
COMPONENT_KEYS = frozenset({"type", "times", "alpha", "input_share"})
TIMES_KEYS = frozenset({"et", "met", "base"})
ALIAS_KEYS = frozenset({"like", "speed"})
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class ProfileError(ProblemError):
    """A profile is malformed or does not cover the problem (BAD_REQUEST)."""


def _number(value: Any, where: str) -> float:
    return fields.number(value, where, ProfileError)


# Bounds past any real measurement: a profile is untrusted input, and a finite value can still overflow the
# model's arithmetic (an et of 1e306 s is inf in ms) or stand for nothing a machine does.
MAX_TUPLE_MS = 1e6          # a tuple's time, after the unit conversion
MAX_BASE_PCT = 1e5          # idle CPU of one instance, % of a core
MAX_ALPHA = 1e6             # tuples emitted per tuple executed
MIN_SPEED = 1e-6            # a machine alias's speed


def _non_negative(value: Any, where: str) -> float:
    return fields.non_negative(value, where, ProfileError)


def _at_most(value: float, bound: float, where: str) -> float:
    if not value <= bound:   # also refuses NaN
        raise ProfileError(f"{where}: {value:g} is out of range (at most {bound:g})")
    return value


def _positive(value: Any, where: str) -> float:
    return fields.positive(value, where, ProfileError)


@dataclass(frozen=True)
class TupleTimes:
    """Per-tuple times of one component on one machine type, in milliseconds, and the
    CPU percent one instance uses at zero input (``base``, 0 in the paper's eq. 7)."""

    et: float
    met: float = 0.0
    base: float = 0.0

    @property
    def per_tuple_ms(self) -> float:
        return self.et + self.met

    def cpu_percent(self, input_rate: float) -> float:
        """TCU [% of a core] = base + IR [tuples/s] · (ET + MET) [ms] / 10."""
        return self.base + input_rate * self.per_tuple_ms / 10.0

    def scaled(self, speed: float) -> TupleTimes:
        return TupleTimes(self.et / speed, self.met / speed, self.base / speed)


@dataclass(frozen=True)
class ComponentEntry:
    type: str | None = None
    times: Mapping[str, TupleTimes] = field(default_factory=_empty)
    alpha: float = 1.0
    alpha_to: Mapping[str, float] = field(default_factory=_empty)
    input_share: float = 1.0


@dataclass(frozen=True)
class MachineAlias:
    like: str
    speed: float = 1.0


@dataclass(frozen=True)
class Profile:
    component_types: Mapping[str, Mapping[str, TupleTimes]] = field(default_factory=_empty)
    components: Mapping[str, ComponentEntry] = field(default_factory=_empty)
    machine_types: Mapping[str, MachineAlias] = field(default_factory=_empty)
    input_rate: float | None = None
    executor_cap: float | None = None
    source: str = "file"

    # -- lookups ----------------------------------------------------------------
    def entry(self, component: str) -> ComponentEntry | None:
        if component in self.components:
            return self.components[component]
        if component in self.component_types:
            return ComponentEntry(type=component)
        return None

    def component_type(self, component: str) -> str:
        """The type eq. 10 counts; a component with only its own times is its own type."""
        entry = self.entry(component)
        return (entry.type if entry and entry.type else None) or component

    def times(self, component: str, machine_type: str) -> TupleTimes:
        entry = self.entry(component)
        if entry is None:
            raise ProfileError(f"profiles: no entry for component {component!r}")
        found = self._direct_times(entry, machine_type)
        if found is None and machine_type in self.machine_types:
            alias = self.machine_types[machine_type]
            base = self._direct_times(entry, alias.like)
            found = base.scaled(alias.speed) if base is not None else None
        if found is None:
            kind = f" (type {entry.type!r})" if entry.type else ""
            raise ProfileError(
                f"profiles: component {component!r}{kind} has no times for machine type {machine_type!r}"
            )
        return found

    def alpha(self, component: str, target: str) -> float:
        entry = self.entry(component)
        if entry is None:
            return 1.0
        return entry.alpha_to.get(target, entry.alpha)

    def input_share(self, component: str) -> float:
        entry = self.entry(component)
        return entry.input_share if entry else 1.0

    def _direct_times(self, entry: ComponentEntry, machine_type: str) -> TupleTimes | None:
        if machine_type in entry.times:
            return entry.times[machine_type]
        if entry.type is not None:
            return self.component_types.get(entry.type, _EMPTY).get(machine_type)
        return None

    # -- JSON -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        def times(mapping: Mapping[str, TupleTimes]) -> dict[str, Any]:
            return {m: {"et": t.et, "met": t.met, **({"base": t.base} if t.base else {})}
                    for m, t in mapping.items()}

        components = {}
        for name, entry in self.components.items():
            out: dict[str, Any] = {}
            if entry.type:
                out["type"] = entry.type
            if entry.times:
                out["times"] = times(entry.times)
            if entry.alpha_to:
                out["alpha"] = {**dict(entry.alpha_to), "*": entry.alpha}
            elif entry.alpha != 1.0:
                out["alpha"] = entry.alpha
            if entry.input_share != 1.0:
                out["input_share"] = entry.input_share
            components[name] = out
        result: dict[str, Any] = {
            "format": FORMAT,
            "time_unit": "ms",
            "component_types": {k: times(v) for k, v in self.component_types.items()},
            "components": components,
            "source": self.source,
        }
        if self.machine_types:
            result["machine_types"] = {k: {"like": a.like, "speed": a.speed} for k, a in self.machine_types.items()}
        if self.input_rate is not None:
            result["input_rate"] = self.input_rate
        if self.executor_cap is not None:
            result["executor_cap"] = self.executor_cap
        return result


# -- parsing --------------------------------------------------------------------------

def parse_profile(data: Any, where: str = "profiles") -> Profile:
    """Validate a profile object (the file format above) and build a :class:`Profile`."""
    if not isinstance(data, Mapping):
        raise ProfileError(f"{where}: expected an object, got {type(data).__name__}")
    _known_keys(data, PROFILE_KEYS, where)
    declared = data.get("format", FORMAT)
    if declared != FORMAT:
        raise ProfileError(f"{where}.format: {declared!r} is not {FORMAT!r}")
    unit = data.get("time_unit", "ms")
    if unit not in TIME_UNITS:
        raise ProfileError(f"{where}.time_unit: {unit!r} is not one of {', '.join(TIME_UNITS)}")
    to_ms = TIME_UNITS[unit]

    types = {
        name: _times_by_machine(raw, f"{where}.component_types.{name}", to_ms)
        for name, raw in _object(data.get("component_types"), f"{where}.component_types").items()
    }
    components = {
        name: _component_entry(raw, f"{where}.components.{name}", to_ms, types)
        for name, raw in _object(data.get("components"), f"{where}.components").items()
    }
    aliases = _machine_aliases(data.get("machine_types"), f"{where}.machine_types")
    input_rate = data.get("input_rate")
    cap = data.get("executor_cap")
    return Profile(
        component_types=MappingProxyType(types),
        components=MappingProxyType(components),
        machine_types=MappingProxyType(aliases),
        input_rate=None if input_rate is None else _positive(input_rate, f"{where}.input_rate"),
        executor_cap=None if cap is None else _positive(cap, f"{where}.executor_cap"),
        source=str(data.get("source", "file")),
    )


def load_profile(path: str | Path) -> Profile:
    """Read a profile file (``.json``, or ``.yaml``/``.yml``)."""
    path = Path(path)
    if path.suffix not in (".yaml", ".yml"):
        try:
            data = read_json(path)  # bounded (core.limits)
        except JsonFileError as error:
            raise ProfileError(str(error)) from None  # names the file
        return parse_profile(data, where=path.name)
    try:
        text = path.read_text()
    except OSError as error:
        raise ProfileError(f"cannot read profile {path}: {error.strerror}") from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ProfileError(f"profile {path} is not valid YAML: {error}") from None
    return parse_profile(data, where=path.name)


OPTION_KEY = settings.HETERO_PROFILES.key


def profile_for_problem(problem: Problem) -> Profile:
    """The problem's profile, validated against its components and machine types.

    From the problem's ``profiles``, else from the option ``planner.hetero.profiles``
    — a profile object, or its JSON text: how a topology submitted to Storm
    carries its profile in the topology configuration to the planner service.
    """
    data: Any = problem.profiles
    where = "profiles"
    if not data and settings.HETERO_PROFILES.read(problem.options.extra):
        data, where = settings.HETERO_PROFILES.read(problem.options.extra), f"options.{OPTION_KEY}"
        if isinstance(data, str):
            try:
                data = loads_bounded(data, where)
            except JsonFileError as error:
                raise ProfileError(str(error)) from None
    if not data:
        raise ProfileError(
            "this planner needs profiles: add a 'profiles' object to the problem, or the topology "
            f"option {OPTION_KEY} (see storm_planner.planners.hetero.profiles for the format)"
        )
    profile = data if isinstance(data, Profile) else parse_profile(data, where=where)
    check_covers(profile, problem)
    return profile


def check_covers(profile: Profile, problem: Problem) -> None:
    """Every non-system component needs times on every machine type a usable node has."""
    types_in_use: dict[str, str] = {}
    for node in problem.nodes:
        if not node.draining:
            types_in_use.setdefault(node.machine_type, node.id)
    for component in problem.components:
        if component.system:
            continue
        if profile.entry(component.id) is None:
            raise ProfileError(f"profiles: no entry for component {component.id!r}")
        for machine_type, node_id in types_in_use.items():
            try:
                profile.times(component.id, machine_type)
            except ProfileError as error:
                raise ProfileError(f"{error} (used by node {node_id!r})") from None


# -- measured profiles ----------------------------------------------------------------

@dataclass(frozen=True)
class Measurement:
    """One profiling sample of a component on a machine type (§5.2).

    ``cpu_percent`` is the component's thread CPU time over the window in
    percent of one core; ``execute_ms`` the average execute latency per tuple
    (Storm's ``execute_ms_avg``); ``input_rate`` tuples/s it received.
    """

    component: str
    machine_type: str
    input_rate: float
    cpu_percent: float
    execute_ms: float


METHODS = ("max_point", "least_squares", "affine")


@dataclass(frozen=True)
class SeriesFit:
    """The affine fit of one (component, machine type) series: ``cpu = base + IR · per_tuple_ms / 10``.

    ``r2`` is the coefficient of determination of the fit over the series (1 for a
    perfect fit; ``nan`` when the CPU did not vary); ``residuals`` are measured − fitted
    CPU percent, one per sample in rate order. ``note`` says when a bound was applied
    (a negative intercept refitted through the origin; a slope that is not positive).
    """

    component: str
    machine_type: str
    base: float
    per_tuple_ms: float
    et: float
    r2: float
    rates: tuple[float, ...]
    residuals: tuple[float, ...]
    note: str = ""

    @property
    def times(self) -> TupleTimes:
        """ET as measured (at most the slope), MET the rest of the slope, and the base."""
        et = min(self.et, self.per_tuple_ms)
        return TupleTimes(et=et, met=self.per_tuple_ms - et, base=self.base)

    def to_dict(self) -> dict[str, Any]:
        return {"component": self.component, "machine_type": self.machine_type, "base": self.base,
                # An undefined r2 (one rate, or a CPU that did not vary) is null: saved profiles are strict JSON.
                "per_tuple_ms": self.per_tuple_ms, "et": self.et, "r2": self.r2 if math.isfinite(self.r2) else None,
                "rates": list(self.rates), "residuals": list(self.residuals), "note": self.note}


MIN_PER_TUPLE_MS = 1e-6  # a tuple cannot cost nothing (et + met > 0)


def fit_affine_series(samples: Sequence[Measurement]) -> SeriesFit:
    """Least squares ``cpu = base + slope · IR`` over one (component, machine type) series.

    Not the paper's (eq. 7 has no constant term): the fixed part per instance of
    issue #18. With samples at one rate only, or a negative intercept, the line is
    fitted through the origin (base 0); a slope that is not positive (the CPU does
    not grow with the rate: idle cost dominates) keeps the measured execute latency
    as the per-tuple cost (at least ``MIN_PER_TUPLE_MS``) and puts the rest in the base.
    """
    if not samples:
        raise ProfileError("an affine fit needs at least one sample")
    ordered = sorted(samples, key=lambda s: s.input_rate)
    first = ordered[0]
    rates = [s.input_rate for s in ordered]
    cpu = [s.cpu_percent for s in ordered]
    n = len(ordered)
    et = sum(s.execute_ms for s in ordered) / n
    note = ""
    mean_rate, mean_cpu = sum(rates) / n, sum(cpu) / n
    spread = sum((r - mean_rate) ** 2 for r in rates)
    if n >= 2 and spread > 0:
        slope = sum((r - mean_rate) * (c - mean_cpu) for r, c in zip(rates, cpu)) / spread
        base = mean_cpu - slope * mean_rate
    else:
        slope, base = mean_cpu / mean_rate, 0.0
        note = "one rate only: fitted through the origin"
    if base < 0:
        slope = sum(r * c for r, c in zip(rates, cpu)) / sum(r * r for r in rates)
        base = 0.0
        note = "negative intercept: refitted through the origin (base 0)"
    if slope * 10.0 < MIN_PER_TUPLE_MS:
        slope = max(et, MIN_PER_TUPLE_MS) / 10.0
        base = max(0.0, sum(c - slope * r for r, c in zip(rates, cpu)) / n)
        note = "CPU does not rise with the rate: per-tuple cost = execute latency, the rest is base"
    fitted = [base + slope * r for r in rates]
    residuals = tuple(c - f for c, f in zip(cpu, fitted))
    total = sum((c - mean_cpu) ** 2 for c in cpu)
    r2 = 1.0 - sum(e * e for e in residuals) / total if total > 0 else float("nan")
    return SeriesFit(first.component, first.machine_type, base, 10.0 * slope, et, r2, tuple(rates),
                     residuals, note)


def profile_from_measurements(
    samples: Iterable[Measurement],
    *,
    component_types: Mapping[str, str] | None = None,
    alpha: Mapping[str, float] | None = None,
    input_rate: float | None = None,
    method: str = "max_point",
) -> Profile:
    """Fit the times per (component, machine type) from profiling samples.

    ``method="max_point"`` is the paper's: at the sample with the highest input
    rate (the CPU close to its maximum, where eq. 7 is most accurate), ET is the
    measured execute latency and MET = TCU / IR − ET. ``"least_squares"`` fits
    the slope of TCU over IR through the origin on all samples instead (MET =
    slope − mean ET). MET is clipped at 0. Both leave ``base`` at 0 (eq. 7).
    ``"affine"`` (issue #18, not in the paper) fits ``base`` and the slope by
    least squares over the series (:func:`fit_affine_series`): ET is the mean
    execute latency (at most the slope), MET the rest of the slope.
    """
    if method not in METHODS:
        raise ValueError(f"method {method!r}: one of {', '.join(METHODS)}")
    grouped: dict[tuple[str, str], list[Measurement]] = defaultdict(list)
    for sample in samples:
        if sample.input_rate <= 0 or sample.cpu_percent < 0 or sample.execute_ms < 0:
            raise ProfileError(f"measurement {sample}: rates must be positive, times non-negative")
        grouped[(sample.component, sample.machine_type)].append(sample)
    times: dict[str, dict[str, TupleTimes]] = defaultdict(dict)
    for (component, machine_type), group in sorted(grouped.items()):
        if method == "affine":
            times[component][machine_type] = fit_affine_series(group).times
            continue
        if method == "max_point":
            top = max(group, key=lambda s: s.input_rate)
            per_tuple = 10.0 * top.cpu_percent / top.input_rate   # eq. 7 solved for ET + MET (ms)
            et = top.execute_ms
        else:
            slope = sum(s.input_rate * s.cpu_percent for s in group) / sum(s.input_rate ** 2 for s in group)
            per_tuple = 10.0 * slope
            et = sum(s.execute_ms for s in group) / len(group)
        times[component][machine_type] = TupleTimes(et=et, met=max(0.0, per_tuple - et))
    kinds = component_types or {}
    alphas = alpha or {}
    components = {
        name: ComponentEntry(type=kinds.get(name), times=MappingProxyType(by_machine),
                             alpha=float(alphas.get(name, 1.0)))
        for name, by_machine in times.items()
    }
    return Profile(components=MappingProxyType(components), input_rate=input_rate, source="measured")


def fit_report(samples: Iterable[Measurement]) -> list[SeriesFit]:
    """The affine fit of every (component, machine type) series, for the profiling report."""
    grouped: dict[tuple[str, str], list[Measurement]] = defaultdict(list)
    for sample in samples:
        grouped[(sample.component, sample.machine_type)].append(sample)
    return [fit_affine_series(group) for _, group in sorted(grouped.items())]


# -- field helpers ----------------------------------------------------------------------

def _component_entry(raw: Any, where: str, to_ms: float, types: Mapping[str, Any]) -> ComponentEntry:
    raw = _object(raw, where)
    _known_keys(raw, COMPONENT_KEYS, where)
    kind = raw.get("type")
    if kind is not None and kind not in types:
        raise ProfileError(f"{where}.type: unknown component type {kind!r}")
    own = _times_by_machine(raw["times"], f"{where}.times", to_ms) if "times" in raw else {}
    if kind is None and not own:
        raise ProfileError(f"{where}: needs a 'type' or its own 'times'")
    alpha, alpha_to = _alpha(raw.get("alpha", 1.0), f"{where}.alpha")
    return ComponentEntry(
        type=kind,
        times=MappingProxyType(own),
        alpha=alpha,
        alpha_to=MappingProxyType(alpha_to),
        input_share=_non_negative(raw.get("input_share", 1.0), f"{where}.input_share"),
    )


def _times_by_machine(raw: Any, where: str, to_ms: float) -> dict[str, TupleTimes]:
    raw = _object(raw, where)
    if not raw:
        raise ProfileError(f"{where}: no machine types")
    return {machine: _times(value, f"{where}.{machine}", to_ms) for machine, value in raw.items()}


def _times(raw: Any, where: str, to_ms: float) -> TupleTimes:
    base = 0.0
    if isinstance(raw, Mapping):
        _known_keys(raw, TIMES_KEYS, where)
        if "et" not in raw:
            raise ProfileError(f"{where}.et: missing")
        et = _non_negative(raw["et"], f"{where}.et")
        met = _non_negative(raw.get("met", 0.0), f"{where}.met")
        base = _non_negative(raw.get("base", 0.0), f"{where}.base")
    else:
        et, met = _non_negative(raw, where), 0.0
    if et + met <= 0:
        raise ProfileError(f"{where}: et + met must be positive (a tuple cannot cost nothing)")
    return TupleTimes(_at_most(et * to_ms, MAX_TUPLE_MS, f"{where}.et (ms)"),
                      _at_most(met * to_ms, MAX_TUPLE_MS, f"{where}.met (ms)"),
                      _at_most(base, MAX_BASE_PCT, f"{where}.base"))


def _alpha(raw: Any, where: str) -> tuple[float, dict[str, float]]:
    if isinstance(raw, Mapping):
        ratios = {str(k): _at_most(_non_negative(v, f"{where}.{k}"), MAX_ALPHA, f"{where}.{k}") for k, v in raw.items()}
        return ratios.pop("*", 1.0), ratios
    return _at_most(_non_negative(raw, where), MAX_ALPHA, where), {}


def _machine_aliases(raw: Any, where: str) -> dict[str, MachineAlias]:
    if raw is None:
        return {}
    if isinstance(raw, list):  # a bare declaration of type names
        return {}
    aliases = {}
    for name, value in _object(raw, where).items():
        value = _object(value, f"{where}.{name}")
        _known_keys(value, ALIAS_KEYS, f"{where}.{name}")
        if not value:
            continue
        like = value.get("like")
        if not isinstance(like, str) or not like:
            raise ProfileError(f"{where}.{name}.like: the name of a profiled machine type")
        speed = _positive(value.get("speed", 1.0), f"{where}.{name}.speed")
        if speed < MIN_SPEED:
            raise ProfileError(f"{where}.{name}.speed: {speed:g} is out of range (at least {MIN_SPEED:g})")
        aliases[name] = MachineAlias(like, speed)
    return aliases


def _known_keys(raw: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    """Refuse keys outside ``known``, naming them and what is allowed."""
    unknown = sorted(str(k) for k in raw if k not in known)
    if unknown:
        listed = ", ".join(repr(k) for k in unknown)
        raise ProfileError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {listed} "
                           f"(allowed: {', '.join(sorted(known))})")


def _object(raw: Any, where: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ProfileError(f"{where}: expected an object, got {type(raw).__name__}")
    return raw


__all__ = [
    "FORMAT", "METHODS", "ComponentEntry", "MachineAlias", "Measurement", "Profile", "ProfileError", "SeriesFit",
    "TupleTimes", "check_covers", "fit_affine_series", "fit_report", "load_profile", "parse_profile",
    "profile_for_problem", "profile_from_measurements",
]
