"""QECer on a running topology: the scaling decision of one epoch (Mu et al. 2020, §2.4), no I/O.

Each epoch :meth:`ScalingController.decide` gets the operator's input rates measured so far and the
instances running per provision, forecasts the next ``horizon`` epochs — Holt-Winters once two
seasons of history exist (:mod:`storm_planner.scaling.forecast`), until then the highest of
the last three rates held flat — schedules them with a scaler (``qcesa-exact`` by default) from the
running instances, and applies the first epoch: the instances per provision, their total capped at
the component's task count (Storm cannot run more executors than tasks; a capped decision says so).

The runner that measures and applies is :mod:`storm_planner.scaling.live.scale_run`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.scaling.base import run_scaler
from storm_planner.scaling.scaling_problem import read_problem

# Keys a template may not hold: the controller fills them each epoch.
FILLED = ("workload", "history", "current")


@dataclass(frozen=True)
class ScalingDecision:
    counts: dict[str, int]            # instances per provision for the coming epoch
    instances: int                    # what is applied: their total, capped at the task count
    workload: list[float]             # the forecast the schedule covers
    cost: float                       # the schedule's cost over the horizon
    capped: bool = False              # the schedule wanted more instances than the component has tasks
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "instances": self.instances, "workload": self.workload,
                "cost": self.cost, "capped": self.capped, "notes": self.notes}


class ScalingController:
    def __init__(self, template: Mapping[str, Any], *, algorithm: str = "qcesa-exact", horizon: int = 6,
                 season: int = 0, quantile: float | None = None, max_instances: int | None = None):
        filled = [key for key in FILLED if key in template]
        if filled:
            raise ProblemError(f"the scaling template must not hold {', '.join(filled)}: scale run measures them")
        if horizon < 1:
            raise ProblemError(f"horizon must be >= 1 epoch, got {horizon}")
        self.template = dict(template)
        read_problem({**self.template, "workload": [0.0]})  # refuse a bad template now, naming the key
        self.algorithm, self.horizon, self.season, self.quantile = algorithm, horizon, season, quantile
        self.max_instances = max_instances

    def calibrate(self, provision: str, per_instance: float) -> None:
        """What one instance of ``provision`` was measured to sustain (saturated) replaces the model's
        figure from now on (not in the paper: the step experiment of bench qescalor shows that the
        model's error alone can keep the operator short forever)."""
        if per_instance > 0:
            self.template["performance"] = {**self.template.get("performance", {}), provision: float(per_instance)}

    def performance(self, provision: str) -> float:
        """What one instance of ``provision`` is believed to sustain (given or calibrated; 0 if unknown)."""
        return float(self.template.get("performance", {}).get(provision, 0.0))

    @property
    def provisions(self) -> list[str]:
        return [r["id"] for r in self.template["resources"]]

    def decide(self, rates: Sequence[float], current: Mapping[str, int]) -> ScalingDecision:
        """The next epoch's instances, given the measured rates (oldest first) and the instances running.

        Storm runs at most as many instances as the component has tasks (``max_instances``). When the
        cheapest schedule wants more, the smaller provisions are left out, weakest first, until a
        schedule fits (not in the paper, which scales without such a cap); when none does, the
        schedule of the strongest provision is capped and says so.
        """
        if not rates:
            raise ProblemError("no measured rate yet")
        problem = {**self.template, "current": {k: int(v) for k, v in current.items() if v}}
        if self.season and len(rates) >= 2 * self.season:
            problem["history"] = {"rates": list(rates), "season": self.season, "horizon": self.horizon,
                                  "quantile": self.quantile}
        else:
            problem["workload"] = [max(rates[-3:])] * self.horizon
        tried: list[str] = []
        for resources in self._provision_sets():
            ids = {r["id"] for r in resources}
            subset = {**problem, "resources": resources,
                      "current": {k: v for k, v in problem["current"].items() if k in ids}}
            if "performance" in problem:
                subset["performance"] = {k: v for k, v in problem["performance"].items() if k in ids}
            schedule = run_scaler(subset, self.algorithm)
            counts = {rid: int(n) for rid, n in schedule["epochs"][0].items()}
            wanted = sum(counts.values())
            if self.max_instances is None or wanted <= self.max_instances:
                break
            tried.append(f"with {', '.join(sorted(ids))} the schedule wants {wanted} instances")
        instances = max(1, wanted if self.max_instances is None else min(wanted, self.max_instances))
        notes = []
        if tried:
            outcome = "capped" if instances < wanted else f"planned with {', '.join(sorted(counts))} only"
            notes.append(f"{'; '.join(tried)}; the component has {self.max_instances} tasks: {outcome}")
        return ScalingDecision(counts, instances, [round(w, 3) for w in schedule["workload"]],
                               schedule["cost"], capped=instances < wanted, notes=notes)

    def _provision_sets(self) -> list[list[dict[str, Any]]]:
        """Every provision, then without the weakest, and so on down to the strongest alone."""
        resources = list(self.template["resources"])
        by_strength = sorted(resources, key=lambda r: self.performance(r["id"]))
        return [[r for r in resources if r in by_strength[k:]] for k in range(len(resources))]
