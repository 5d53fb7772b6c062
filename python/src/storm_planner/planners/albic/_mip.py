"""A mixed-integer program as arrays, solved by CBC or HiGHS with a warm start and a time limit.

Why not PuLP's modelling layer: building the ALBIC/MILP model of 60 nodes × 900
executors (54 000 binaries) through PuLP's expression objects takes seconds
before the solver starts, and its HiGHS bridge copies the model term by term,
so a 5-second round could not be honoured. The model is therefore kept as
row-wise sparse arrays and handed

* to **CBC**, the binary PuLP ships (``pulp.PULP_CBC_CMD().path``), as an MPS
  file written by HiGHS, with the start as a CBC ``-mips`` solution file;
* to **HiGHS** through highspy directly, with the start passed by ``setSolution``.

Both stop at the time limit (wall clock; CBC is killed if it overruns, and its
answer is then lost) and return the best integer solution they found; the
caller checks it against its own model before use.
"""
from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner.core.errors import PlanningError
from storm_planner.core.quiet import native_output_to_log

_log = logging.getLogger(__name__)

INFINITY = float("inf")


@dataclass(frozen=True)
class Mip:
    """min cost·x  s.t.  row_lower ≤ A x ≤ row_upper,  lower ≤ x ≤ upper,  x[integer] ∈ ℤ."""

    cost: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray          # bool per column
    row_start: np.ndarray        # CSR: row i has entries row_start[i]:row_start[i+1]
    row_index: np.ndarray
    row_value: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray

    @property
    def columns(self) -> int:
        return len(self.cost)

    @property
    def rows(self) -> int:
        return len(self.row_lower)


@dataclass(frozen=True)
class MipResult:
    values: np.ndarray | None    # None when no integer solution was found
    status: str                  # optimal | feasible | infeasible | no solution


class RowBuilder:
    """Collects rows as (columns, coefficients, lower, upper) and packs them as CSR."""

    def __init__(self) -> None:
        self.starts = [0]
        self.indices: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add(self, columns: Sequence[int] | np.ndarray, coefficients: Sequence[float] | np.ndarray,
            lower: float = -INFINITY, upper: float = INFINITY) -> None:
        columns = np.asarray(columns, dtype=np.int64)
        coefficients = np.asarray(coefficients, dtype=float)
        self.indices.append(columns)
        self.values.append(coefficients)
        self.starts.append(self.starts[-1] + len(columns))
        self.lower.append(lower)
        self.upper.append(upper)

    def build(self, cost: Sequence[float] | np.ndarray, lower: Sequence[float] | np.ndarray,
              upper: Sequence[float] | np.ndarray, integer: Sequence[bool] | np.ndarray) -> Mip:
        empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        return Mip(
            cost=np.asarray(cost, dtype=float),
            lower=np.asarray(lower, dtype=float),
            upper=np.asarray(upper, dtype=float),
            integer=np.asarray(integer, dtype=bool),
            row_start=np.asarray(self.starts, dtype=np.int64),
            row_index=np.concatenate(self.indices) if self.indices else empty_i,
            row_value=np.concatenate(self.values) if self.values else empty_f,
            row_lower=np.asarray(self.lower, dtype=float),
            row_upper=np.asarray(self.upper, dtype=float),
        )


def solve_mip(mip: Mip, solver: str, seconds: float, seed: int, start: np.ndarray | None) -> MipResult:
    solvers = {"highs": _solve_highs, "cbc": _solve_cbc}
    if solver not in solvers:
        raise PlanningError(f"unknown solver {solver!r}")
    # HiGHS prints its banner from C++ on descriptor 1 (see core.quiet).
    with native_output_to_log(_log, f"solver {solver}"):
        return solvers[solver](mip, seconds, seed, start)


def _highs_model(mip: Mip) -> Any:   # a highspy.Highs holding the model
    import highspy

    lp = highspy.HighsLp()
    lp.num_col_ = mip.columns
    lp.num_row_ = mip.rows
    inf = highspy.kHighsInf
    lp.col_cost_ = mip.cost
    lp.col_lower_ = np.where(np.isinf(mip.lower), -inf, mip.lower)
    lp.col_upper_ = np.where(np.isinf(mip.upper), inf, mip.upper)
    lp.row_lower_ = np.where(np.isinf(mip.row_lower), -inf, mip.row_lower)
    lp.row_upper_ = np.where(np.isinf(mip.row_upper), inf, mip.row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = mip.row_start
    lp.a_matrix_.index_ = mip.row_index
    lp.a_matrix_.value_ = mip.row_value
    lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                       for i in mip.integer]
    highs = highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's constructor is unannotated
    highs.setOptionValue("output_flag", False)
    highs.passModel(lp)
    return highs


def _solve_highs(mip: Mip, seconds: float, seed: int, start: np.ndarray | None) -> MipResult:
    import highspy

    highs = _highs_model(mip)
    highs.setOptionValue("time_limit", float(max(seconds, 0.01)))
    highs.setOptionValue("random_seed", int(abs(seed)) % 2**31)
    highs.setOptionValue("mip_rel_gap", 1e-6)
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = [float(v) for v in start]
        solution.value_valid = True
        highs.setSolution(solution)
    # HiGHS checks its time limit between phases; a cancel (checked inside the LP and MIP
    # loops through its interrupt callbacks) enforces the deadline on a busy machine.
    highs.HandleUserInterrupt = True
    highs.startSolve()
    finished, _ = highs.wait(max(seconds, 0.01) + 0.05)
    if not finished:
        highs.cancelSolve()
        highs.wait()
    status = highs.getModelStatus()
    if status in (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible):
        return MipResult(None, "infeasible")
    if highs.getInfo().primal_solution_status != 2:  # 2 = feasible
        return MipResult(None, "no solution")
    values = np.asarray(highs.getSolution().col_value, dtype=float)
    return MipResult(values, "optimal" if status == highspy.HighsModelStatus.kOptimal else "feasible")


def cbc_path() -> str:
    """The CBC binary PuLP ships (PuLP 4 will move it to ``pulp[cbc]``), else a ``cbc`` on PATH."""
    import shutil

    from pulp.apis import coin_api

    bundled = getattr(coin_api, "pulp_cbc_path", None)
    for path in (bundled, shutil.which("cbc")):
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return str(path)
    raise PlanningError("CBC is not available (PuLP ships it; reinstall pulp, or install cbc), "
                        "or use solver=highs")


def _solve_cbc(mip: Mip, seconds: float, seed: int, start: np.ndarray | None) -> MipResult:
    with tempfile.TemporaryDirectory(prefix="storm-planner-cbc-") as folder:
        folder_path = Path(folder)
        model, initial, answer = folder_path / "model.mps", folder_path / "start.mst", folder_path / "answer.sol"
        _highs_model(mip).writeModel(str(model))
        command = [cbc_path(), str(model)]
        if start is not None:
            # CBC reads a MIP start in its own solution-file format (names as HiGHS wrote them: c0, c1, ...).
            lines = ["Stopped on time - objective value 0\n"]
            lines += [f"{i} c{i} {value:.12g} 0\n" for i, value in enumerate(start)]
            initial.write_text("".join(lines))
            command += ["-mips", str(initial)]
        # CBC checks its clock only between phases (its root LP can overrun a short limit on a
        # busy machine), so it gets most of the budget and is killed at the end of all of it.
        command += ["-sec", f"{max(0.85 * seconds - 0.1, 0.01):.3f}", "-timeMode", "elapsed", "-threads", "1",
                    "-randomCbcSeed", str(int(abs(seed)) % 2**31 + 1),
                    "-solve", "-printingOptions", "all", "-solution", str(answer)]
        try:
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, timeout=max(seconds, 0.05), check=False)
        except subprocess.TimeoutExpired:
            return MipResult(None, "no solution")
        if not answer.exists():
            return MipResult(None, "no solution")
        return _read_cbc_solution(answer.read_text(), mip.columns)


def _read_cbc_solution(text: str, columns: int) -> MipResult:
    lines = text.splitlines()
    if not lines:
        return MipResult(None, "no solution")
    head = lines[0].lower()
    if head.startswith("infeasible") or "integer infeasible" in head:
        return MipResult(None, "infeasible")
    if "no integer solution" in head or not (head.startswith("optimal") or head.startswith("stopped")):
        return MipResult(None, "no solution")
    values = np.zeros(columns)
    for line in lines[1:]:
        parts = line.replace("**", " ").split()
        if len(parts) >= 3 and parts[1].startswith("c") and parts[1][1:].isdigit():
            values[int(parts[1][1:])] = float(parts[2])
    return MipResult(values, "optimal" if head.startswith("optimal") else "feasible")
