"""Every benchmark runs end to end on tiny sizes: its tables (one CSV, ``OUT/cells.csv``), its report's
sections (``OUT.md``) and plots.

Each simulation benchmark runs through the CLI (``storm_planner.cli.main``, the entry point the
``storm-planner`` script calls) or, where even ``--quick`` takes minutes, its experiment function with
smaller sizes. A case checks that every table it names is in the one CSV with its columns and at least
one row whose figures are finite numbers, that every section of the report names the command that
reproduces it and shows a table, and that every plot exists and is not empty. Then the report is
written again from the CSV (``--report-only``): in place it comes out the same, and from ``cells.csv``
alone in an empty folder every section's body is the same.

The benchmarks that need root and a real cluster (``gma cluster``/``overhead``, ``qescalor
cluster``/``replay``/``live``, ``hetero-real``, ``e2e``, ``capacity``, ``drain``) are tested through their report step, from
rows written here (``e2e``'s report is tested in ``test_e2e_harness.py``, ``topdown-real``'s in
``test_topdown_real.py``).

:func:`test_every_registered_benchmark_has_a_smoke_case` derives the benchmarks from what the
``bench`` modules register, so a new benchmark (or experiment) cannot land without a case here.
"""
from __future__ import annotations

import csv
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from storm_planner import cli
from storm_planner_bench.common.results import CELLS, read_tables, report_path, sections_in, store

SLOW = pytest.mark.slow


@dataclass(frozen=True)
class Case:
    benchmark: str                          # the name after ``storm-planner bench``
    experiment: str | None                  # for benchmarks made of experiments
    run: Callable[[Path], Any]
    tables: dict[str, tuple[str, ...]]      # table of cells.csv -> figure columns that must be finite in every row
    reports: dict[str, str]                 # section of the report -> the command it must name
    plots: tuple[str, ...] = ()
    marks: tuple = field(default=())


def cli_run(*argv: str) -> Callable[[Path], Any]:
    """``storm-planner bench ARGV --out OUT`` in this process; it must exit 0."""
    def run(out: Path) -> None:
        assert cli.main(["bench", *argv, "--out", str(out)]) == 0

    return run


def experiment(module: str, function: str, command: str, **sizes: Any) -> Callable[[Path], Any]:
    """An experiment function called directly, with ``sizes`` smaller than its ``--quick``."""
    def run(out: Path) -> None:
        import importlib

        getattr(importlib.import_module(f"storm_planner_bench.{module}"), function)(out, 1, False, command, **sizes)

    return run


ALBIC = "storm-planner bench albic"
GMA = "storm-planner bench gma"
BASES = "storm-planner bench hetero-bases"
QESCALOR = "storm-planner bench qescalor"
HETERO = "storm-planner bench hetero"

CASES = [
    # -- albic (Madsen et al.) -----------------------------------------------------------------------
    Case("albic", "drift", experiment("sim.albic", "bench_drift", f"{ALBIC} drift --seed 1", rounds=2,
                                      sigmas=(0.05,), time_limit_s=0.2),
         {"drift": ("round", "milp", "flux", "none", "milp_migrations")}, {"drift": f"{ALBIC} drift"},
         ("drift.png",)),
    Case("albic", "solve-time", cli_run("albic", "solve-time", "--quick"),
         {"solve-time": ("nodes", "before", "flux", "time_limit_s", "solve_s", "milp")},
         {"solve-time": f"{ALBIC} solve-time --seed 1 --quick"}, ("solve-time.png",), (SLOW,)),
    Case("albic", "scale-in", cli_run("albic", "scale-in", "--quick"),
         {"scale-in": ("round", "load_distance", "max_utilisation", "executors_on_marked", "migrations")},
         {"scale-in": f"{ALBIC} scale-in --seed 1 --quick"}, ("scale-in.png",), (SLOW,)),
    Case("albic", "collocation", cli_run("albic", "collocation", "--quick"),
         {"collocation": ("period", "collocation_factor", "load_distance", "load_index", "migrations")},
         {"collocation": f"{ALBIC} collocation --seed 1 --quick"}, ("collocation.png",), (SLOW,)),
    # -- gma (Elastic Allocator) ---------------------------------------------------------------------
    Case("gma", "workload", cli_run("gma", "workload", "--quick"),
         {"workload": ("workload", "cpu_utilisation", "bandwidth_utilisation", "cpu_deviation",
                           "bandwidth_deviation", "cpu_violations", "solve_ms")},
         {"workload": f"{GMA} workload --seed 1 --quick"}, ("workload.png",)),
    Case("gma", "violations", experiment("gma.experiments", "bench_violations", f"{GMA} violations --seed 1", instances=2),
         {"violations": ("instances", "plans over a limit", "share over a limit (%)", "nodes over a limit (mean)"),
          "violations-per-instance": ("instance", "gma", "gma-repair", "random", "even", "topdown", "milp")},
         {"violations": f"{GMA} violations"}, ("violations.png",)),
    # -- hetero-bases (Nasiri et al. with bases) --------------------------------------------------------
    Case("hetero-bases", "random", experiment("sim.hetero_bases", "bench_random", f"{BASES} random --seed 1", count=2),
         {"random": ("instances", "worst", "median", "mean"),
          "random-per-instance": ("reference rate", "hetero", "literal", "base-blind", "hetero_ms")},
         {"random": f"{BASES} random"}, ("random.png",)),
    Case("hetero-bases", "clusters",
         experiment("sim.hetero_bases", "bench_clusters", f"{BASES} clusters --seed 1", clusters=("paper",),
                    topologies=("linear",), bases_kinds=("5-10",)),
         {"clusters": ("reference rate", "hetero", "without the polish", "base-blind", "hetero ms")},
         {"clusters": f"{BASES} clusters"}, ("clusters.png",)),
    # -- qescalor (simulation) -----------------------------------------------------------------------
    Case("qescalor", "optimality",
         experiment("qescalor.experiments", "bench_optimality", f"{QESCALOR} optimality --seed 1", instances=3,
                    small=1),
         {"optimality": ("instances", "worst", "median"),
          "optimality-per-instance": ("qcesa", "exact", "best_cba", "gap", "vs_cba", "qcesa_ms")},
         {"optimality": f"{QESCALOR} optimality", "optimality-per-instance": f"{QESCALOR} optimality"},
         ()),
    Case("qescalor", "sampling",
         experiment("qescalor.experiments", "bench_sampling", f"{QESCALOR} sampling --seed 1", operators=("CO1",)),
         {"sampling": ("SN", "RMSE", "MAE")}, {"sampling": f"{QESCALOR} sampling"}, ("sampling.png",),
         (SLOW,)),
    Case("qescalor", "models",
         experiment("qescalor.experiments", "bench_models", f"{QESCALOR} models --seed 1", operators=("CO1",),
                    repeats=1, models=("RFR", "SVR")),
         {"models": ("RMSE", "MAE")}, {"models": f"{QESCALOR} models"}, (), (SLOW,)),
    Case("qescalor", "day", cli_run("qescalor", "day", "--quick"),
         {"day": ("total cost", "running", "startups", "shutdowns", "mean capacity / actual load")},
         {"day": f"{QESCALOR} day --seed 1 --quick"}, ("day.png",), (SLOW,)),
    Case("qescalor", "step", cli_run("qescalor", "step", "--quick"),
         {"step": ()}, {"step": f"{QESCALOR} step --seed 1 --quick"}, ()),
    # -- hetero (Nasiri et al.) ------------------------------------------------------------------------
    Case("hetero", None, cli_run("hetero", "--parts", "random", "--random", "2"),
         {"random": ("seed", "machines", "components", "ratio", "ratio_no_descent", "optimal_s")},
         {"random": f"{HETERO} --out"}, ("optimal_gap.png",)),
    Case("hetero", None,
         cli_run("hetero", "--parts", "clusters", "--clusters", "small", "--repeats", "1", "--max-nodes", "1000"),
         {"clusters": ("hetero_throughput", "default_throughput", "throughput_gain", "utilisation_gain",
                           "fluid_gap", "hetero_ms", "default_ms")},
         {"clusters": f"{HETERO} --out"}, ("throughput_gain.png", "utilisation.png")),
    Case("hetero", None, cli_run("hetero", "--parts", "tiny"),
         {"tiny": ("bound", "ratio", "ratio_no_descent", "hetero_instances", "optimal_instances")},
         {"tiny": f"{HETERO} --out"}, ("optimal_gap.png",)),
    # -- scale (the planner service) -------------------------------------------------------------------
    Case("scale", None, cli_run("scale", "--algorithms", "even", "--repeat", "1", "--max-executors", "1000"),
         {"scale": ("executors", "nodes", "round_trip_ms", "solve_ms", "nodes_used")},
         {"scale": "storm-planner bench scale"}, (), (SLOW,)),
    # -- topdown (Chatzistergiou & Viglas) -------------------------------------------------------------
    Case("topdown-random", None, cli_run("topdown-random", "--graphs", "4", "--bootstrap", "20"),
         {"random": ("optimal", "topdown", "tasklevel", "even", "topdown_ms")},
         {"random": "storm-planner bench topdown-random"}, ("random.png",)),
    Case("topdown-speed", None,
         cli_run("topdown-speed", "--groups", "2", "--tasks", "10", "--nodes", "4", "--seconds", "0.2",
                 "--rounds", "1"),
         {"speed": ("allocations", "cpu_s", "allocations_per_s")},
         {"speed": "storm-planner bench topdown-speed"}, ("speed.png",)),
    Case("topdown-scale", None,
         cli_run("topdown-scale", "--nodes", "10", "--executors", "200", "--components", "20",
                 "--sparse-components", "5", "--sparse-targets", "2", "--algorithms", "topdown", "even"),
         {"scale": ("executors", "pairs", "plan_cpu_s", "run_cpu_s", "imc_gain_pct", "max_utilisation")},
         {"scale": "storm-planner bench topdown-scale"}, ("scale.png",)),
    Case("topdown-priority", None, cli_run("topdown-priority", "--steps", "2", "--max-factor", "2"),
         {"priority": ("second_pair_imc", "tasklevel", "topdown", "optimal"),
          "task_count": ("second_group_tasks", "tasklevel", "topdown", "topdown-ls", "optimal")},
         {"priority": "storm-planner bench topdown-priority"}, ("priority.png",)),
]


def finite_rows(out: Path, table: str, figures: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of the table ``table`` of ``out/cells.csv``, after checking its columns and that every listed
    figure is a finite number."""
    tables = read_tables(out)
    assert table in tables, f"no table {table} in {out / CELLS}: {sorted(tables)}"
    rows = tables[table]
    columns = list(rows[0])
    assert set(figures) <= set(columns), f"{table} lacks {sorted(set(figures) - set(columns))}: {columns}"
    for row in rows:
        for figure in figures:
            assert math.isfinite(float(row[figure])), f"{table}: {figure} = {row[figure]!r} in {row}"
    return rows


def sections(report: Path) -> dict[str, str]:
    """The generated sections of ``report`` by name, each from its first line to its end line."""
    text = report.read_text()
    found = {}
    for name in sections_in(report):
        start = text.index(f"<!-- generated {name}")
        found[name] = text[start:text.index(f"<!-- end {name} -->", start)]
    return found


def bodies(report: Path) -> dict[str, str]:
    """Each section of ``report`` without what is the run's (its heading and ``Reproduce:`` line) or the
    folder's (its figure)."""
    return {name: "\n".join(line for line in text.splitlines()[1:]
                             if not line.startswith(("#", "Reproduce:", "!["))).strip()
            for name, text in sections(report).items()}


def check_outputs(out: Path, case: Case) -> None:
    assert (out / CELLS).is_file(), f"no {CELLS} in {sorted(p.name for p in out.iterdir())}"
    for name, figures in case.tables.items():
        finite_rows(out, name, figures)
    assert not sorted(out.glob("*.md")), f"per-experiment markdown beside the one report: {sorted(out.glob('*.md'))}"
    written = sections(report_path(out))
    for name, command in case.reports.items():
        assert name in written, f"no section {name} in {report_path(out)}: {sorted(written)}"
        assert command in written[name], f"section {name} does not name `{command}`:\n{written[name][:400]}"
        assert "|---" in written[name] or "---:|" in written[name], f"section {name} has no table"
    for name in case.plots:
        assert (out / name).is_file() and (out / name).stat().st_size > 1000, f"no plot {name}"


def report_only_argv(case: Case) -> list[str]:
    """``storm-planner bench ... --report-only`` for the case's benchmark (``all`` for one made of experiments)."""
    return [case.benchmark, *(["all"] if case.experiment else []), "--report-only"]


def check_the_report_regenerates(out: Path, case: Case, tmp_path: Path) -> None:
    """The report written again from ``cells.csv`` (``--report-only``): the same in place; and from the CSV
    alone, in an empty folder, every section with the same body."""
    written = report_path(out).read_text()
    assert cli.main(["bench", *report_only_argv(case), "--out", str(out)]) == 0
    assert report_path(out).read_text() == written
    alone = tmp_path / "alone" / out.name
    alone.mkdir(parents=True)
    shutil.copy(out / CELLS, alone / CELLS)
    assert cli.main(["bench", *report_only_argv(case), "--out", str(alone)]) == 0
    assert bodies(report_path(alone)) == bodies(report_path(out))


@pytest.fixture
def small_tiny_clusters(monkeypatch):
    """``bench hetero --parts tiny`` on two of its clusters (all of them take minutes)."""
    from storm_planner_bench.sim import hetero

    monkeypatch.setattr(hetero, "tiny_clusters", lambda: [(1, 1, 0), (0, 0, 2)])


def case_id(case: Case) -> str:
    return f"{case.benchmark}-{case.experiment or Path(next(iter(case.tables))).stem}"


@pytest.mark.parametrize("case", [pytest.param(c, id=case_id(c), marks=c.marks) for c in CASES])
def test_the_benchmark_writes_its_tables_reports_and_plots(case, tmp_path, request):
    if case_id(case) == "hetero-tiny":
        request.getfixturevalue("small_tiny_clusters")
    out = tmp_path / "out"
    case.run(out)
    check_outputs(out, case)
    check_the_report_regenerates(out, case, tmp_path)


# -- the benchmarks that need a cluster: their report step, from rows written here -------------------------------

def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A fixture CSV back as rows of numbers (where a cell is one) and text."""
    def value(text: str) -> Any:
        try:
            return float(text)
        except ValueError:
            return text

    with path.open(newline="") as handle:
        return [{k: value(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def test_gma_cluster_report(tmp_path):
    from storm_planner_bench.gma.cluster import FIGURE_PANELS, write_cluster_report

    figures = [metric for metric, _ in FIGURE_PANELS] + ["topk_rate", "topk_nodes_over_d_cpu"]
    fixture = tmp_path / "measured.csv"
    write_rows(fixture, [{"planner": planner, "workload": rate, **{f: 10.0 + k + rate / 100 for f in figures}}
                         for k, planner in enumerate(("gma", "even")) for rate in (200, 800)])
    out = tmp_path / "out"
    out.mkdir()
    (out / "cluster-partial.json").write_text("[]")
    write_cluster_report(out, read_rows(fixture), {"worldcup_topk": {"per_tuple_s": {"requests": 0.1}, "tuple_bytes": 60.0}},
                         ("gma", "even"), "storm-planner bench gma cluster")
    assert not (out / "cluster-partial.json").exists()
    check_outputs(out, Case("gma", "cluster", print, {"cluster": tuple(figures)},
                            {"cluster": "storm-planner bench gma cluster"}, ("cluster.png",)))
    assert finite_rows(out, "cluster-profile", ("per_tuple_s",))[0]["component"] == "requests"


def test_gma_overhead_report(tmp_path):
    from storm_planner_bench.gma.cluster import write_overhead_report

    fixture = tmp_path / "measured.csv"
    write_rows(fixture, [{"payload_bytes": 32, "supervisor": "a", "tuples_per_s": 800.0, "wire_bytes_per_s": 90_000,
                          "hook_payload_bytes_per_s": 30_000, "overhead_bytes_per_tuple": 75.0}])
    write_overhead_report(tmp_path / "out", read_rows(fixture), "storm-planner bench gma overhead")
    check_outputs(tmp_path / "out", Case("gma", "overhead", print,
                                         {"overhead": ("tuples_per_s", "overhead_bytes_per_tuple")},
                                         {"overhead": "storm-planner bench gma overhead"}))


def cluster_samples(path: Path) -> None:
    """``cluster-samples.csv`` as ``qescalor cluster`` writes it: the work bolt's throughput per CPU quota."""
    curve = [(round(0.2 * i, 1), 100.0 * min(0.2 * i, 1.2)) for i in range(1, 11)]
    write_rows(path, [{"method": method, "cpu": cpu, "throughput": throughput + shift}
                      for method, shift, step in (("FSSA-1", 0.0, 1), ("DSA", 2.0, 3))
                      for cpu, throughput in curve[::step]])


def test_qescalor_cluster_report(tmp_path):
    from storm_planner_bench.qescalor.cluster import write_cluster_report

    fixture = tmp_path / "cluster-samples"
    cluster_samples(fixture)
    runs: dict[str, list] = {}
    for row in read_rows(fixture):
        runs.setdefault(row["method"], []).append((row["cpu"], 33.5, row["throughput"]))
    out = tmp_path / "out"
    rows = write_cluster_report(out, runs, 1, "storm-planner bench qescalor cluster")
    assert {r["method"] for r in rows} == {"FSSA-2", "FSSA-3", "FSSA-4", "FSSA-5", "DSA"}
    check_outputs(out, Case("qescalor", "cluster", print,
                            {"cluster": ("SN", "RMSE", "MAE", "samples vs baseline RMSE"),
                             "cluster-samples": ("cpu", "throughput")},
                            {"cluster": "storm-planner bench qescalor cluster"}, ("cluster.png",)))


def replay_rows() -> list[dict[str, Any]]:
    return [{"epoch": i + 1, "offered": rate, "measured": rate - 5.0, "instances": 1 + i % 3, "action": "rebalance",
             "latency p50 ms": 20.0 + i, "latency p95 ms": 80.0 + i, "backlog at end": i}
            for i, rate in enumerate((60.0, 150.0, 300.0, 120.0))]


def test_qescalor_replay_report_with_the_costs_from_the_cluster_samples(tmp_path):
    from storm_planner_bench.qescalor.cluster import write_replay_report

    out = tmp_path / "out"
    out.mkdir()
    cluster_samples(tmp_path / "cluster-samples.csv")
    store(out, "cluster-samples", read_rows(tmp_path / "cluster-samples.csv"))
    fixture = tmp_path / "replay.csv"
    write_rows(fixture, replay_rows())
    write_replay_report(out, read_rows(fixture), "a compressed day", "storm-planner bench qescalor replay")
    check_outputs(out, Case("qescalor", "replay", print,
                            {"replay": ("offered", "measured", "instances", "latency p95 ms"),
                             "replay-costs": ("cost",)},
                            {"replay": "storm-planner bench qescalor replay",
                             "replay-costs": "storm-planner bench qescalor replay"}, ("replay.png",)))
    costs = {r["algorithm"]: float(r["cost"]) for r in finite_rows(out, "replay-costs", ("cost",))}
    assert costs["qcesa-exact"] <= min(costs[f"CBA-{r}"] for r in ("r1", "r2", "r3", "r4")) + 1e-6


def test_qescalor_live_report(tmp_path):
    from storm_planner_bench.qescalor.live import write_live_report

    performance = {"r1": 2.0, "r2": 4.0, "r3": 6.0}
    fixture = tmp_path / "live"
    write_rows(fixture, [{**row, "forecast": row["epoch"] > 2, "r1": 1, "r2": row["instances"], "r3": 0,
                          "capacity": 2.0 + 4.0 * row["instances"], "equal-share capacity": 2.0 * (1 + row["instances"]),
                          "enforced": 1} for row in replay_rows()])
    rows = read_rows(fixture)
    for row in rows:
        row["forecast"] = row["forecast"] == "True"
        row.update({rid: int(row[rid]) for rid in performance})
    samples = [{"task": 3, "cpu": cpu, "memory_mb": 512.0, "throughput": 20.0 * cpu} for cpu in (0.05, 0.25)]
    write_live_report(tmp_path / "out", rows, samples, performance, "the loop", "storm-planner bench qescalor live")
    check_outputs(tmp_path / "out", Case("qescalor", "live", print,
                                         {"live": ("offered", "capacity", "latency p50 ms"),
                                          "live-samples": ("cpu", "throughput"), "live-costs": ("cost",)},
                                         {"live": "storm-planner bench qescalor live",
                                          "live-costs": "storm-planner bench qescalor live"}, ("live.png",)))


def test_hetero_real_report(tmp_path):
    from storm_planner_bench.hetero_real.compare import summaries, summary_rows
    from storm_planner_bench.hetero_real.driver import Run, Step
    from storm_planner_bench.hetero_real.report import write_outputs
    from storm_planner_bench.hetero_real.search import Verdict

    fixture = tmp_path / "steps.csv"   # per run, its rate steps: offered rate, kept up, spout's measured rate
    limits = (("hetero", 50.0), ("hetero-optimal", 50.0), ("storm-default", 35.0), ("default", 35.0), ("ras", 25.0))
    write_rows(fixture, [{"placement": placement, "repetition": repetition, "offered": offered,
                          "sustained": offered < limit, "spout": offered * 0.99}
                         for repetition in (0, 1) for placement, limit in limits for offered in (20.0, 30.0, 40.0)])
    runs: dict[tuple[str, int], Run] = {}
    for row in read_rows(fixture):
        run = runs.setdefault((row["placement"], int(row["repetition"])), Run(
            "linear", row["placement"], int(row["repetition"]), parallelism={"spout": 1, "mid": 2},
            counts={"mid@sup-large": 2},
            predicted={"input_rate": 45.0 if row["placement"].startswith("hetero") else 33.0, "throughput": 180.0},
            load_avg=[1.0, 1.5], seconds=60.0, ras_share=0.9 if row["placement"] == "ras" else None))
        rates = {"spout": row["spout"], "mid": row["spout"], "high": row["spout"], "sink": row["spout"]}
        sustained = row["sustained"] == "True"
        run.steps.append(Step(run.name, row["offered"], len(run.steps),
                              Verdict(sustained, "high", 1.0 if sustained else 0.8, 1.0, rates), 1.2,
                              {"large": 0.1}, {"large": 90.0}, {"large": 70.0}))
        if sustained:
            run.sustained_offered, run.sustained_rates = row["offered"], rates
    not_placed = Run("linear", "ras", 2, status="not scheduled: RAS placed no worker within 60 s at any declared share")
    report = {"command": "storm-planner bench hetero-real --repetitions 2", "settings": {"load_aware": False},
              "plans": {"linear": {"parallelism": {"spout": 1, "mid": 2}, "figures": {"max_input_rate": 45.0},
                                   "search_placement": {"mid@sup-large": 2}, "declared_cpu": {"spout": 2.0},
                                   "optimal": {"parallelism": {"spout": 1, "mid": 3},
                                               "figures": {"max_input_rate": 46.0},
                                               "search_placement": {"mid@sup-large": 3}, "seconds": 1.0}}}}
    out = tmp_path / "out"
    out.mkdir()
    write_outputs(out, list(runs.values()), report, 0.0)
    # One CSV of the run's cells (tables runs and steps), its report and its plot.
    assert sorted(p.name for p in out.iterdir()) == ["cells.csv", "results.md", "run.json", "throughput.png"]
    finite_rows(out, "runs", ("sustained_offered", "measured_input", "measured_throughput", "predicted_input"))
    finite_rows(out, "steps", ("offered", "worst_share", "rate_spout"))
    assert "storm-planner bench hetero-real --repetitions 2" in (out / "results.md").read_text()
    assert (out / "throughput.png").stat().st_size > 1000
    rows = {r["placement"]: r for r in summary_rows(summaries(list(runs.values())))}
    assert set(rows) == {"hetero", "hetero-optimal", "storm-default", "default", "ras"}
    # hetero sustained 40 tuples/s per spout in both repetitions, default 30 and ras 20: beyond the spread.
    assert rows["hetero"]["x_default"] > 1 and rows["hetero"]["x_ras"] > rows["hetero"]["x_default"]
    assert rows["hetero"]["beats_default_and_ras"] is True
    assert "| linear | **yes** |" in (out / "results.md").read_text()
    # A RAS repetition that RAS could not place: reported with its reason, blank figures, not counted.
    write_outputs(out, [*runs.values(), not_placed], report, 0.0)
    (ras,) = [r for r in summary_rows(summaries([*runs.values(), not_placed])) if r["placement"] == "ras"]
    assert ras["not_run"] == 1 and ras["runs"] == 2
    (blank,) = [r for r in read_tables(out)["runs"] if r["status"] != "ran"]
    assert blank["measured_throughput"] == blank["sustained_offered"] == ""
    assert "not scheduled: RAS placed no worker" in (out / "results.md").read_text()


def test_albic_real_report(tmp_path):
    """``bench albic-real``'s report from fixture periods: ALBIC's collocation climbing, COLA's at once."""
    from storm_planner_bench.albic_real.report import write_report

    out = tmp_path / "out"
    out.mkdir()
    rows = []
    for scheduler, rise in (("default", 0.0), ("potc", 0.0), ("planner:albic", 0.15), ("planner:cola", 0.6)):
        for repetition in (1, 2):
            for period in range(1, 5):
                collocation = min(0.6, 0.1 + rise * period)
                rows.append({"job": 3, "scheduler": scheduler, "repetition": repetition, "period": period,
                             "t_end_s": 30.0 * period, "status": "ran", "seconds": 30.0,
                             "collocation_factor": collocation, "operator_tuples": 4000, "load_distance": 8.0 - period,
                             "load_index": 1.0 - collocation / 3, "cpu_pct": 90.0, "cpu_ms_per_tuple": 9.0,
                             "migrations": {"planner:albic": 3, "planner:cola": 20}.get(scheduler, 0),
                             "replans": int(scheduler.startswith("planner")), "planned_collocation": "",
                             "link_mbytes": 3.0, "link_mbit": 0.8, "processed_tps": 50.0, "emitted_tps": 50.0,
                             "latency_p99_ms": 200.0 + period, "load_i7-a_pct": 40.0})
    rows.append({**rows[0], "scheduler": "ras", "period": 0, "status": "not scheduled: no slots",
                 **{k: "" for k in ("collocation_factor", "load_distance", "load_index", "link_mbit")}})
    write_rows(out / "periods.csv", rows)
    written = write_report(out, "storm-planner bench albic-real --job 3 --quick")
    assert written == [out / "job3.md"]
    # The published report: its cells (periods.csv), its markdown and its figure; no other table.
    assert sorted(p.name for p in out.iterdir()) == ["job3.md", "job3.png", "periods.csv"]
    assert (out / "job3.png").stat().st_size > 1000
    text = (out / "job3.md").read_text()
    assert f"`flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench albic-real --job 3 --quick --out {out}`" in text
    assert "| planner:cola | 2 | 0.60 | 0.60 |" in text and "| planner:albic | 2 | 0.25 | 0.60 |" in text
    assert "not scheduled: no slots" in text
    # --report-only from what a published report keeps: the command from its markdown, the rest from periods.csv.
    (out / "job3.png").unlink()
    assert cli.main(["bench", "albic-real", "--report-only", "--out", str(out)]) == 0
    assert (out / "job3.md").read_text() == text and (out / "job3.png").is_file()


# -- no benchmark without a case -----------------------------------------------------------------------------------

# Cluster-only benchmarks and experiments -> the test of their report step.
REPORT_ONLY = {
    ("gma", "cluster"): test_gma_cluster_report,
    ("gma", "overhead"): test_gma_overhead_report,
    ("qescalor", "cluster"): test_qescalor_cluster_report,
    ("qescalor", "replay"): test_qescalor_replay_report_with_the_costs_from_the_cluster_samples,
    ("qescalor", "live"): test_qescalor_live_report,
    ("hetero-real", None): test_hetero_real_report,
    ("albic-real", None): test_albic_real_report,
    ("e2e", None): "test_e2e_harness.py::test_the_report_gives_medians_spreads_and_ratios",
    ("capacity", None): "test_capacity_report.py::test_the_report_leads_with_capacities_ratios_and_the_resolution",
    ("drain", None): "test_drain_workerstart.py::test_the_report_states_the_criterion_per_arm_with_its_figures_and_the_plot",
    ("e2e-wire", None): "test_e2e_wire.py::test_the_command_writes_the_report_and_answers_json_alone",
    ("topdown-real", None): "test_topdown_real.py::test_the_report_sets_gains_against_capacity_and_over_the_rate_schedule",
    ("soak", None): "test_soak.py::test_the_report_gives_every_check_stall_cause_and_outage",
}


def registered() -> dict[tuple[str, str | None], str]:
    """(benchmark, experiment or None) -> the module that registers it, from the registration itself."""
    from storm_planner_bench.commands import registered_benchmarks

    found = {}
    for module, benchmark in registered_benchmarks():
        for experiment in benchmark.experiments or (None,):
            found[(benchmark.name, experiment)] = module
    return found


def test_every_registered_benchmark_has_a_smoke_case():
    found = registered()
    assert len({name for name, _ in found}) >= 12, f"only {sorted(found)} registered: is the discovery right?"
    covered = {(c.benchmark, c.experiment) for c in CASES} | set(REPORT_ONLY)
    missing = sorted(f"{module}: {name} {experiment or ''}".strip() for (name, experiment), module in found.items()
                     if (name, experiment) not in covered)
    assert not missing, f"benchmarks without a smoke case in {Path(__file__).name}: {missing}"
    stale = sorted(map(str, covered - set(found)))
    assert not stale, f"cases for benchmarks no module registers: {stale}"


def test_the_report_tests_in_other_files_this_file_relies_on_exist():
    import ast

    for case in (c for c in REPORT_ONLY.values() if isinstance(c, str)):
        file_name, test = case.split("::")
        harness = Path(__file__).with_name(file_name)
        names = {node.name for node in ast.walk(ast.parse(harness.read_text())) if isinstance(node, ast.FunctionDef)}
        assert test in names, case


def test_every_benchmark_is_declared_one_way():
    """Only :class:`~storm_planner_bench.common.report.Benchmark` adds a benchmark's parser (and ``commands`` the
    ``bench`` command itself): a module that registers by hand would bypass the shared declaration."""
    import storm_planner_bench as bench

    package = Path(bench.__file__).parent
    by_hand = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                     if "add_parser(" in path.read_text()
                     and path.relative_to(package).as_posix() not in ("common/report.py", "commands.py"))
    assert not by_hand, f"benchmarks registered with add_parser instead of a Benchmark: {by_hand}"


@pytest.mark.parametrize("argv", [["bench", "--help"], ["bench", "capacity", "--help"]])
def test_the_bench_help_prints(argv, capsys):
    """argparse formats a help line with '%': a benchmark's help that says "to 5 %" once broke ``bench --help``."""
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "capacity" in out and "usage:" in out
