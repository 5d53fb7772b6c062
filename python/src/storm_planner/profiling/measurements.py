"""What a profiling run measured and how well the fitted profile predicts it (no cluster needed).

Metrics-hook windows become one :class:`Measurement` per (component, machine type and rate); the
rising-rate steps the CPU quota did not throttle are fitted (:func:`fit_samples`); the fitted
profile's prediction is compared with measurements at rates the fit did not use (:class:`Check`,
the paper's accuracy); and everything is tabulated for the command's output and the report.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from storm_planner.planners.hetero.profiles import Measurement, Profile, SeriesFit, fit_report

from .errors import ProfilingError


@dataclass(frozen=True)
class WindowFigures:
    """What one task's window says, reduced to what profiling needs."""

    component: str
    task: int
    seq: int
    duration_ms: float
    cpu_ms: float
    executed: int
    emitted: int
    latency_ms_sum: float
    latency_samples: int


def figures_from_window(window) -> WindowFigures:
    """Reduce a :class:`storm_planner.metrics.windows.TaskWindow` (hook document) to :class:`WindowFigures`:
    ``executed`` and ``emitted`` count the topology's own streams only
    (:attr:`~storm_planner.metrics.windows.TaskWindow.data_executed`): with acking on, an ack or a tick is
    no data tuple (counted, a spout's rate doubled and Word Count's selectivities came out five times too
    high)."""
    return WindowFigures(
        component=window.component, task=window.task, seq=window.seq,
        duration_ms=float(window.duration_ms), cpu_ms=float(window.cpu_ms),
        executed=int(window.data_executed), emitted=int(window.data_emitted),
        latency_ms_sum=float(window.latency_ms_sum), latency_samples=int(window.latency_samples),
    )


def measure_component(windows: Iterable[WindowFigures], component: str, machine_type: str,
                      *, spout: bool) -> Measurement | None:
    """One :class:`Measurement` of ``component`` from its tasks' windows (several windows per task allowed).

    CPU percent and rate are per second of window, summed over the component's tasks; the input
    rate is tuples executed per second (emitted for a spout); ET is the hook's mean execute
    latency (0 for a spout). ``None`` when no window of the component covers any time.
    """
    own = [w for w in windows if w.component == component and w.duration_ms > 0]
    if not own:
        return None
    tasks = {w.task for w in own}
    seconds_per_task = sum(w.duration_ms for w in own) / 1000.0 / len(tasks)
    tuples = sum(w.emitted if spout else w.executed for w in own)
    rate = tuples / seconds_per_task
    if rate <= 0:
        return None
    cpu_percent = 100.0 * sum(w.cpu_ms for w in own) / 1000.0 / seconds_per_task
    samples = sum(w.latency_samples for w in own)
    execute_ms = 0.0 if spout or not samples else sum(w.latency_ms_sum for w in own) / samples
    return Measurement(component, machine_type, rate, cpu_percent, execute_ms)


def predict_cpu_percent(profile: Profile, component: str, machine_type: str, input_rate: float) -> float:
    """TCU [% of a core] = base + IR [tuples/s] · (ET + MET) [ms] / 10 (eq. 7 with the base of issue #18)."""
    return profile.times(component, machine_type).cpu_percent(input_rate)


def accuracy_percent(predicted: float, measured: float) -> float:
    """The paper's accuracy: 100 · (1 − |predicted − measured| / measured), floored at 0."""
    if measured <= 0:
        raise ProfilingError(f"measured CPU {measured} is not positive: nothing to compare the prediction with")
    return max(0.0, 100.0 * (1.0 - abs(predicted - measured) / measured))


@dataclass(frozen=True)
class Check:
    """Predicted vs measured CPU of one component on one machine type at a rate not used for the fit."""

    component: str
    machine_type: str
    input_rate: float
    predicted_cpu: float
    measured_cpu: float

    @property
    def accuracy(self) -> float:
        return accuracy_percent(self.predicted_cpu, self.measured_cpu)


def compare(profile: Profile, measured: Iterable[Measurement]) -> list[Check]:
    """Predict each measurement's CPU from ``profile`` at the measured input rate."""
    return [
        Check(m.component, m.machine_type, m.input_rate,
              predict_cpu_percent(profile, m.component, m.machine_type, m.input_rate), m.cpu_percent)
        for m in measured
    ]


@dataclass(frozen=True)
class Step:
    """One input rate on one machine type: what was measured and how much the CPU quota throttled."""

    machine_type: str
    rate: float
    check: bool
    throttled: float                     # share of CFS periods throttled while measuring (0..1)
    measurements: tuple[Measurement, ...] | list[Measurement]

    def describe(self) -> str:
        figures = ", ".join(f"{m.component} {m.input_rate:.0f}/s cpu {m.cpu_percent:.1f}% exec {m.execute_ms:.2f} ms"
                            for m in self.measurements)
        return (f"rate {self.rate:g}/s{' (check)' if self.check else ''}: {figures}; "
                f"throttled {100 * self.throttled:.0f}% of periods")

    def to_dict(self) -> dict:
        return {"machine_type": self.machine_type, "rate": self.rate, "check": self.check,
                "throttled": self.throttled, "measurements": [dataclasses.asdict(m) for m in self.measurements]}


def fit_samples(steps: Sequence[Step], max_throttled: float) -> list[Measurement]:
    """The rising-rate samples to fit: a machine type's steps throttled more than ``max_throttled``
    ran at its capacity (eq. 7 does not hold there: queues fill, idle waiting vanishes) and are left
    out, except that each machine type keeps at least its least throttled step."""
    chosen: list[Measurement] = []
    for machine_type in dict.fromkeys(s.machine_type for s in steps):
        series = [s for s in steps if s.machine_type == machine_type and not s.check]
        kept = [s for s in series if s.throttled <= max_throttled] or sorted(series, key=lambda s: s.throttled)[:1]
        chosen.extend(m for s in kept for m in s.measurements)
    return chosen


@dataclass
class Result:
    """Everything one run produced: samples, the fitted profile, the check and how types were emulated."""

    steps: list[Step] = field(default_factory=list)
    max_throttled: float = 0.05
    checks: list[Check] = field(default_factory=list)
    profile: Profile | None = None
    emulation: dict[str, str] = field(default_factory=dict)
    throttling: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def samples(self) -> list[Measurement]:
        """The fitting samples: rates of the rising series whose machine was not throttled."""
        return fit_samples(self.steps, self.max_throttled)

    @property
    def fits(self) -> list[SeriesFit]:
        """The least-squares fit of base and slope of every (component, machine type) series."""
        return fit_report(self.samples) if self.samples else []

    @property
    def check_samples(self) -> list[Measurement]:
        return [m for step in self.steps if step.check for m in step.measurements]

    def to_dict(self) -> dict:
        return {
            "steps": [step.to_dict() for step in self.steps],
            "max_throttled": self.max_throttled,
            "fit_samples": [dataclasses.asdict(s) for s in self.samples],
            "checks": [{**dataclasses.asdict(c), "accuracy": c.accuracy} for c in self.checks],
            "fit": [fit.to_dict() for fit in self.fits],
            "profile": self.profile.to_dict() if self.profile else None,
            "emulation": self.emulation,
            "throttling": self.throttling,
        }


def format_checks(checks: Sequence[Check]) -> str:
    """A Markdown table of predicted vs measured CPU."""
    lines = ["| component | machine type | input rate (tuples/s) | predicted CPU % | measured CPU % | accuracy % |",
             "|---|---|---:|---:|---:|---:|"]
    for c in checks:
        lines.append(f"| {c.component} | {c.machine_type} | {c.input_rate:.1f} | {c.predicted_cpu:.2f} | "
                     f"{c.measured_cpu:.2f} | {c.accuracy:.1f} |")
    return "\n".join(lines)


def format_fits(fits: Sequence[SeriesFit]) -> str:
    """A Markdown table of the least-squares fits: base, slope, R² and the largest residual."""
    lines = ["| component | machine type | base CPU % | per tuple (ms) | R² | largest residual (CPU %) | rates | note |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for f in fits:
        worst = max((abs(r) for r in f.residuals), default=0.0)
        lines.append(f"| {f.component} | {f.machine_type} | {f.base:.2f} | {f.per_tuple_ms:.4f} | {f.r2:.3f} | "
                     f"{worst:.2f} | {len(f.rates)} | {f.note} |")
    return "\n".join(lines)


def format_steps(steps: Sequence[Step], max_throttled: float) -> str:
    """A Markdown table of every step: what was measured, how throttled, and whether it was fitted."""
    fitted = {id(m) for m in fit_samples(steps, max_throttled)}
    lines = ["| machine type | rate set (tuples/s) | component | measured rate (tuples/s) | CPU % | "
             "execute latency (ms) | throttled periods % | use |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for step in steps:
        for m in step.measurements:
            use = "check" if step.check else ("fit" if id(m) in fitted else "left out (throttled)")
            lines.append(f"| {step.machine_type} | {step.rate:g} | {m.component} | {m.input_rate:.1f} | "
                         f"{m.cpu_percent:.2f} | {m.execute_ms:.3f} | {100 * step.throttled:.0f} | {use} |")
    return "\n".join(lines)
