"""The report of ``storm-planner bench capacity`` (``<out>.md``), from the run's files alone.

It leads with a table per cluster and workload: each arm's highest sustained rate (the median over its
repetitions, their range, and the median repetition's bracket), as a multiple of RAS's, of ras+measured's and
of λ\\*; the model's predicted rate for the placements the arm ran; p99 and p99.9 from the due time at the
latency steps (50 % and 80 % of RAS's pilot capacity). Then the recommended planner against issue #51's
targets (:mod:`.targets`), the run's resolution (the A/A pair), the hook at
saturation, how well the model predicted, the model against each node (:mod:`.nodes`), λ\\* and
ras+measured's declarations, the papers' own balance
measures at 80 % of RAS's capacity, and the windows disturbed by load outside the cluster. Plots per cluster
and workload (:mod:`.plots`): throughput against offered rate per arm, the latency CDF at 80 %.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from storm_planner_bench.capacity import targets as t
from storm_planner_bench.capacity import verdicts as v
from storm_planner_bench.capacity.arms import RAS, RAS_MEASURED, aa_pair, parse_arm
from storm_planner_bench.capacity.order import read_run
from storm_planner_bench.capacity.rule import RULE_TEXT
from storm_planner_bench.capacity.search import LATENCY
from storm_planner_bench.capacity.session import CALIBRATION_ARM, SEARCHES_FILE, STEPS_FILE
from storm_planner_bench.common.report import markdown_table, notes_section, read_csv
from storm_planner_bench.e2e.figures import fmt

CLUSTERS_FILE = "clusters.json"
Row = dict[str, Any]


def report_path(out: Path) -> Path:
    return out.parent / f"{out.name}.md"


def write_report(out: Path) -> Path | None:
    """``<out>.md`` and its plots; None (nothing written) before the first search."""
    if not (out / SEARCHES_FILE).exists():
        return None
    searches = _rows(out / SEARCHES_FILE)
    steps = _rows(out / STEPS_FILE) if (out / STEPS_FILE).exists() else []
    run = read_run(out)
    report = report_path(out)
    data = RunData(out, searches, steps, run)
    sections = [_header(data), _method(data), *(_workload(data, c, w) for c, w in data.pairs()),
                _targets(data), _resolution(data), _hook(data), _model(data), _nodes(data), _measured(data), _balance(data), _disturbed(data),
                _pilots(data), notes_section(out, report)]
    report.write_text("".join(sections) + f"Every search: [{out.name}/{SEARCHES_FILE}]({out.name}/{SEARCHES_FILE}); "
                      f"every step: [{out.name}/{STEPS_FILE}]({out.name}/{STEPS_FILE}).\n")
    return report


def _rows(path: Path) -> list[Row]:
    return [{k: val for k, val in row.items() if k is not None} for row in read_csv(path)[1]]


class RunData:
    """The run's rows and what the sections share: arms in order, the resolution, measured problems."""

    def __init__(self, out: Path, searches: list[Row], steps: list[Row], run: dict[str, Any]) -> None:
        self.out, self.searches, self.steps, self.run = out, searches, steps, run
        found = {r["arm"] for r in searches if int(v.number(r["repetition"]) or 0) >= 1}
        given = [a for a in run.get("arms", []) if a in found]      # the order --arms gave
        self.arms = given + sorted(found - set(given))
        self.search_resolution = _setting(run.get("command", ""), "--resolution", 0.05)
        pair = aa_pair([parse_arm(a) for a in self.arms if _parses(a)])
        self.pair = pair
        self.gaps = {(c, w): v.aa_gap(self.capacities(c, w, pair[0]), self.capacities(c, w, pair[1]))
                     for c, w in self.pairs()} if pair else {}
        self.floor = v.resolution(self.gaps.values(), self.search_resolution)
        self.clusters = _json(out / CLUSTERS_FILE)

    def pairs(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys((r["cluster"], r["workload"]) for r in self.searches))

    def capacities(self, cluster: str, workload: str, arm: str) -> list[float]:
        return v.capacities(self.searches, cluster, workload, arm)

    def measured(self, cluster: str, workload: str) -> dict[str, Any]:
        return _json(self.out / "measured" / cluster / f"{workload}.json")

    def lambda_star(self, cluster: str, workload: str) -> float:
        return v.number(self.measured(cluster, workload).get("lambda_star_tps"))

    def arm_steps(self, cluster: str, workload: str, arm: str, role: str | None = None) -> list[Row]:
        return [s for s in self.steps if s["cluster"] == cluster and s["workload"] == workload and s["arm"] == arm
                and int(v.number(s["repetition"]) or 0) >= 1 and (role is None or s["role"] == role)
                and s.get("verdict") not in ("recovery",) and not str(s.get("verdict", "")).endswith("measured again")]

    def lost(self, cluster: str, workload: str, arm: str) -> float:
        """Tuples of the arm's measured windows never acked, over its repetitions."""
        return sum(v.number(s.get("lost")) or 0 for s in self.arm_steps(cluster, workload, arm)
                   if math.isfinite(v.number(s.get("lost"))))

    def latency_rates(self, cluster: str, workload: str) -> list[float]:
        return sorted({v.number(s["rate"]) for s in self.steps if s["cluster"] == cluster
                       and s["workload"] == workload and s["role"] == LATENCY})

    def offered(self, cluster: str, workload: str, rate: float) -> float:
        """The offered t/s of a step at per-spout ``rate`` (every spout's together)."""
        return next((v.number(s["offered_tps"]) for s in self.steps if s["cluster"] == cluster
                     and s["workload"] == workload and v.number(s["rate"]) == rate), rate)

    def capacity_steps(self, cluster: str, workload: str, arm: str) -> list[Row]:
        """Per repetition, the step at the rate it sustained highest (its placement is the arm's)."""
        found = []
        for search in self.searches:
            if (search["cluster"], search["workload"], search["arm"]) != (cluster, workload, arm) \
                    or search.get("status") != "ran" or int(v.number(search["repetition"]) or 0) < 1:
                continue
            kept = [s for s in self.arm_steps(cluster, workload, arm) if s["repetition"] == search["repetition"]
                    and s["verdict"] == "sustained"]
            if kept:
                found.append(max(kept, key=lambda s: v.number(s["offered_tps"])))
        return found


def _header(data: RunData) -> str:
    run = data.run
    commits = run.get("commits") or [run.get("commit", "unknown")]
    codes = sorted({r.get("code", "") for r in data.searches if r.get("code")})
    on = (f"every search on commit `{codes[0]}`" if len(codes) == 1 else
          f"searches on {len(codes)} commits ({', '.join(f'`{c}`' for c in codes)}): not one frozen commit")
    return ("# Capacity on real Storm: the highest rate each scheduler sustains (issue #48)\n\n"
            "Reproduce (root, from the repository root, one cluster at a time):\n\n"
            f"    flock /tmp/storm-cluster.lock .venv/bin/{run.get('command', 'storm-planner bench capacity')} "
            f"--out {data.out}\n\n"
            f"Run started on commit `{commits[0]}`; {on}. Each round's order was drawn with seed "
            f"{run.get('order_seed', '?')} (`{data.out.name}/run.json`).\n\n")


def _method(data: RunData) -> str:
    pair = f"`{data.pair[0]}` and `{data.pair[1]}`" if data.pair else "none in this run"
    return ("## How it is measured\n\n"
            f"- **Sustained** (one rule, `capacity/rule.py`): {RULE_TEXT}. A window missed on its p99 alone "
            "is measured once more, and the second window decides.\n"
            "- **Capacity** is the highest offered rate (all spouts together, tuples/s) a search sustained, in one "
            "submission per arm and repetition: coarse steps × 1.4 up until one is missed, then bisection until the "
            f"bracket [kept, missed) is within {data.search_resolution:.0%} of the rate; after a missed step a "
            "recovery hold at a low rate lets the message timeout's failures and replays clear. Medians over "
            "repetitions, range in brackets.\n"
            "- **Latency** runs from each tuple's due time (when the replay schedule meant it to go out) to its ack, "
            "in an HdrHistogram; tuples due in the window but never emitted or never acked count at its top. "
            "Emit-to-ack latency (the old measure, which a held-back spout hides its backlog from) is in "
            "`steps.csv` beside it.\n"
            "- **The latency steps**: every arm's search starts with steps at 50 % and 80 % of RAS's capacity, "
            "fixed per workload by a pilot RAS search at the run's start (repetition 0, listed at the end).\n"
            f"- **Resolution**: the A/A pair ({pair}, one arm run twice as two arms) gives the run's noise floor: "
            f"**{data.floor:.1%}** (the largest gap between the pair's medians, at least the search's "
            f"{data.search_resolution:.0%}). A ratio within it of 1 reads *no difference*.\n"
            "- **ras+measured**: RAS with each component's declared CPU set from what the kit measured for it on "
            f"this cluster (a calibration under `{CALIBRATION_ARM}`), per executor at the rate where the declared total "
            "fills 90 % of the supervisors' CPU. **λ\\***: the relaxation's bound (an LP, single-executor "
            "components kept whole) on the rate any placement could sustain, "
            "from the same measured costs on the cluster's quotas, links and slots.\n"
            f"- **The machines**: each supervisor, with its workers, is held to its CPU by a cgroup v1 quota "
            f"per CFS period of {_period(data.run)} (`benchmarks/reports/cfs-period.md`).\n\n")


def _period(run: dict[str, Any]) -> str:
    conditions = run.get("conditions")
    period = conditions.get("cfs_period_ms") if isinstance(conditions, dict) else None
    if not isinstance(period, (int, float)):
        return "a length the run did not record (100 ms before commit a85c433, 10 ms from it until 935a33f)"
    assumed = (" (assumed: the run began before it was recorded, and searches before its resumption may have "
               "run at 10 ms, the bench's period from a85c433 until 935a33f)") if run.get("conditions_assumed") else ""
    return f"{period:g} ms{assumed}"


def _workload(data: RunData, cluster: str, workload: str) -> str:
    from storm_planner_bench.capacity.plots import cdf_plot, throughput_plot

    rates = data.latency_rates(cluster, workload)
    ras = v.median(data.capacities(cluster, workload, RAS))
    measured = v.median(data.capacities(cluster, workload, RAS_MEASURED))
    bound = data.lambda_star(cluster, workload)
    header = ["arm", "highest sustained t/s", "bracket", "× RAS", "× ras+measured", "× λ*", "model's prediction",
              *(f"p99 / p99.9 at {fmt(data.offered(cluster, workload, r))}" for r in rates), "lost"]
    rows = []
    for arm in data.arms:
        caps = data.capacities(cluster, workload, arm)
        if not caps and not any(r["arm"] == arm and r["cluster"] == cluster and r["workload"] == workload
                                for r in data.searches):
            continue
        mine = v.median(caps)
        predicted = v.median([v.number(s["predicted_tps"]) for s in data.capacity_steps(cluster, workload, arm)
                              if math.isfinite(v.number(s.get("predicted_tps")))])
        lost = data.lost(cluster, workload, arm)
        rows.append([arm, _spread(caps), _bracket(data, cluster, workload, arm),
                     v.ratio_text(mine, ras, data.floor) if arm != RAS else "1",
                     v.ratio_text(mine, measured, data.floor) if arm != RAS_MEASURED else "1",
                     f"{mine / bound:.0%}" if bound > 0 and math.isfinite(mine) else "–",
                     f"{fmt(predicted)} ({mine / predicted:.2f} of it)" if predicted > 0 and math.isfinite(mine) else "–",
                     *(_latency(data, cluster, workload, arm, r) for r in rates), fmt(lost)])
    plots = [throughput_plot(data, cluster, workload), cdf_plot(data, cluster, workload, rates[-1] if rates else None)]
    links = " ".join(f"![{p.stem}]({data.out.name}/{p.name})" for p in plots if p is not None)
    bound_text = f"λ\\* {fmt(bound)} t/s" if math.isfinite(bound) else "λ\\* not measured"
    return (f"## {workload} on {cluster}\n\n{bound_text}; offered t/s of all spouts together; p99 / p99.9 from the "
            "due time, ms, at the latency steps' offered rates; lost: tuples of every measured window never acked.\n\n"
            + markdown_table(header, rows, right=range(1, len(header))) + f"\n{links}\n\n")


def _spread(values: Sequence[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(v.median(values))} [{fmt(min(values))}–{fmt(max(values))}]"


def _bracket(data: RunData, cluster: str, workload: str, arm: str) -> str:
    """The bracket of the median repetition: ``[kept, missed)``."""
    found = sorted((v.number(r["capacity_tps"]), r) for r in data.searches
                   if (r["cluster"], r["workload"], r["arm"]) == (cluster, workload, arm) and r.get("status") == "ran"
                   and int(v.number(r["repetition"]) or 0) >= 1)
    if not found:
        return "–"
    row = found[(len(found) - 1) // 2][1]
    high = v.number(row.get("bracket_high_tps"))
    return f"[{fmt(v.number(row['bracket_low_tps']))}, {fmt(high) if math.isfinite(high) else '…'})"


def _latency(data: RunData, cluster: str, workload: str, arm: str, rate: float) -> str:
    p99, p999 = _due_percentiles(data, cluster, workload, arm, rate)
    return "–" if math.isnan(p99) and math.isnan(p999) else f"{fmt(p99)} / {fmt(p999)}"


def _due_percentiles(data: RunData, cluster: str, workload: str, arm: str, rate: float) -> tuple[float, float]:
    """The arm's p99 and p99.9 from the due time at a latency step's rate, medians over repetitions."""
    steps = [s for s in data.arm_steps(cluster, workload, arm, LATENCY) if v.number(s["rate"]) == rate]

    def median_of(key: str) -> float:
        return v.median([x for x in (v.number(s[key]) for s in steps) if math.isfinite(x)])

    return median_of("due_p99_ms"), median_of("due_p999_ms")


def _targets(data: RunData) -> str:
    """Issue #51's targets for each ``planner:auto`` arm, per cluster (:mod:`.targets`)."""
    parts = []
    planners = [a for a in data.arms if a.startswith("planner:auto") and "#" not in a]
    for cluster in dict.fromkeys(c for c, _ in data.pairs()):
        workloads = [w for c, w in data.pairs() if c == cluster]
        for arm in planners:
            figures = [_target_figures(data, cluster, w, arm) for w in workloads]
            rows = [[f.workload, _finite(f.times_ras, "{:.2f}"), _finite(f.times_measured, "{:.2f}"),
                     _finite(f.of_lambda, "{:.0%}"), f"{fmt(f.p99_ms)} / {fmt(f.ras_p99_ms)}", fmt(f.lost),
                     f.repetitions] for f in figures]
            verdicts = [[x.text, f"{len(x.held)} of {x.judged}" + (f" ({', '.join(x.held)})" if x.held else ""),
                         x.needs, x.verdict] for x in t.judge(figures, data.floor)]
            parts.append(f"### `{arm}` on {cluster}\n\n"
                         + markdown_table(["workload", "× RAS", "× ras+measured", "× λ*",
                                           "p99 at 80 %, ms, this / RAS", "lost", "repetitions"],
                                          rows, right=range(1, 7)) + "\n"
                         + markdown_table(["target", "holds on", f"needs (of {t.WORKLOADS})", "verdict"], verdicts,
                                          right=(2,)) + "\n")
    if not parts:
        return ""
    return ("## The recommended planner against its targets (issue #51)\n\nMedians over repetitions; "
            f"\"beyond the resolution\" means by more than the run's {data.floor:.1%}. A target is *incomplete* until "
            f"all {t.WORKLOADS} workloads ran at least {t.REPETITIONS} repetitions of each arm compared "
            "(`capacity/targets.py`).\n\n" + "".join(parts))


def _finite(value: float, form: str) -> str:
    return form.format(value) if math.isfinite(value) else "–"


def _target_figures(data: RunData, cluster: str, workload: str, arm: str) -> t.Figures:
    rates = data.latency_rates(cluster, workload)
    at_80 = rates[-1] if rates else math.nan
    caps = {a: data.capacities(cluster, workload, a) for a in (arm, RAS, RAS_MEASURED)}
    return t.Figures(workload, v.median(caps[arm]), v.median(caps[RAS]), v.median(caps[RAS_MEASURED]),
                     data.lambda_star(cluster, workload), _due_percentiles(data, cluster, workload, arm, at_80)[0],
                     _due_percentiles(data, cluster, workload, RAS, at_80)[0], data.lost(cluster, workload, arm),
                     min(len(c) for c in caps.values()))


def _resolution(data: RunData) -> str:
    if not data.pair:
        return ("## Resolution\n\nNo A/A pair in this run: differences are read against the search's own resolution "
                f"({data.search_resolution:.0%}) alone.\n\n")
    first, second = data.pair
    rows = [[f"{w} on {c}", _spread(data.capacities(c, w, first)), _spread(data.capacities(c, w, second)),
             f"{gap:.1%}" if math.isfinite(gap) else "–"] for (c, w), gap in data.gaps.items()]
    return (f"## Resolution: the A/A pair\n\n`{first}` run twice, as two arms interleaved with the others. The run's "
            f"resolution is **{data.floor:.1%}**: the largest gap below, at least the search's "
            f"{data.search_resolution:.0%}.\n\n"
            + markdown_table(["workload", first, second, "gap"], rows, right=(1, 2, 3)) + "\n")


def _hook(data: RunData) -> str:
    rows, cpu_rows = [], []
    for arm in data.arms:
        if not arm.endswith("+nohook"):
            continue
        with_hook = arm.removesuffix("+nohook")
        for cluster, workload in data.pairs():
            on, off = data.capacities(cluster, workload, with_hook), data.capacities(cluster, workload, arm)
            if on and off:
                loss = v.hook_loss(on, off)
                rows.append([with_hook, f"{workload} on {cluster}", _spread(on), _spread(off), f"{loss:.1%}",
                             v.hook_verdict(loss, data.floor)])
            on_steps, off_steps = data.arm_steps(cluster, workload, with_hook), data.arm_steps(cluster, workload, arm)
            quotas = (data.clusters.get(cluster) or {}).get("cpu") or {}
            for rate, cpu_on, cpu_off in v.hook_cpu(on_steps, off_steps):
                bound = sorted({node for s in on_steps + off_steps if v.number(s["offered_tps"]) == rate
                                for node in v.at_quota(s, quotas)})
                cpu_rows.append([with_hook, f"{workload} on {cluster}", fmt(rate), f"{cpu_on:.1f}", f"{cpu_off:.1f}",
                                 f"{cpu_on / cpu_off - 1:+.1%}" if cpu_off > 0 else "–",
                                 ", ".join(bound) or "none"])
    if not rows:
        return ""
    return ("## The metrics hook at saturation\n\nCapacity with the kit's metrics hook and without it "
            f"(`+nohook`); the target is a loss of at most 3 %, read at the run's resolution ({data.floor:.1%}).\n\n"
            + markdown_table(["arm", "workload", "with the hook", "without", "loss", "verdict"], rows,
                             right=(2, 3, 4)) + "\n"
            + ("The same arms at every offered rate both sustained: the CPU all supervisors' cgroups used in the "
               "window (% of a core, the median over repetitions) with the hook and without. At one rate the "
               "hook's cost reads to well under the capacity bracket, but only where no supervisor is held by its "
               f"quota (at {v.QUOTA_BOUND:.0%} of it or more, in either arm: the last column): there the CPU measured "
               "is the quota, not the work.\n\n"
               + markdown_table(["arm", "workload", "offered t/s", "CPU with the hook %", "without %", "the hook's CPU",
                                 "at its quota"], cpu_rows, right=(2, 3, 4, 5)) + "\n" if cpu_rows else ""))


def _model(data: RunData) -> str:
    rows = []
    for arm in data.arms:
        ratios = [v.number(s["offered_tps"]) / v.number(s["predicted_tps"])
                  for c, w in data.pairs() for s in data.capacity_steps(c, w, arm)
                  if v.number(s.get("predicted_tps")) > 0]
        if ratios:
            rows.append([arm, len(ratios), f"{v.median(ratios):.2f}", f"{min(ratios):.2f}–{max(ratios):.2f}"])
    if not rows:
        return ""
    return ("## How well the capacity model predicted\n\nFor the placement each search ran at the rate it sustained "
            "highest, the capacity model's predicted sustainable rate (`CapacityModel.factor × reference rate`, on "
            "the calibration's measured costs): measured capacity over predicted, median and range over the "
            "searches (1: exact; below 1: the model promised more than the topology sustained).\n\n"
            + markdown_table(["arm", "searches", "measured / predicted", "range"], rows, right=(1, 2, 3)) + "\n")


def _nodes(data: RunData) -> str:
    from storm_planner_bench.capacity.measured import measured_problem
    from storm_planner_bench.capacity.nodes import node_figures, sent_cpu_fit

    parts = []
    for cluster, workload in data.pairs():
        problem = measured_problem(data.measured(cluster, workload).get("record") or {})
        if problem is None:
            continue
        quotas = {n: v.number(x) for n, x in ((data.clusters.get(cluster) or {}).get("cpu") or {}).items()}
        rows = []
        for arm in data.arms:
            steps = data.capacity_steps(cluster, workload, arm)
            for step in steps:
                label = arm if len(steps) == 1 else f"{arm} (repetition {step['repetition']})"
                for f in node_figures(problem, step, quotas):
                    rows.append([label, fmt(v.number(step["processed_tps"])), f.node,
                                 f"{f.cpu_predicted:.1f} / {f.cpu_measured:.1f}" + (" (quota)" if f.at_quota else ""),
                                 f"{f.sent_predicted:.2f} / {f.sent_measured:.2f}",
                                 f"{f.received_predicted:.2f} / {f.received_measured:.2f}"])
        if not rows:
            continue
        sustained = [f for arm in data.arms for s in data.arm_steps(cluster, workload, arm)
                     if s.get("verdict") == "sustained" for f in node_figures(problem, s, quotas)]
        fit = sent_cpu_fit(sustained)
        fit_text = (f"Over every sustained step's nodes below their quota ({fit.nodes}), the CPU the model misses "
                    f"grows by **{fit.per_mbit:.1f} % of a core per Mbit/s the node sends** on the wire (least "
                    f"squares through 0); the root-mean-square miss falls from {fit.rms_before:.1f} to "
                    f"{fit.rms_after:.1f} points with it.\n\n" if fit else "")
        parts.append(f"### {workload} on {cluster}\n\n"
                     + markdown_table(["arm", "processed t/s", "node", "CPU % model / measured",
                                       "sent Mbit/s model / wire", "received Mbit/s model / wire"],
                                      rows, right=(1, 3, 4, 5)) + "\n" + fit_text)
    if not parts:
        return ""
    return ("## The model against each node\n\nAt each arm's highest sustained step, per node it used: the CPU "
            "the capacity model predicts for the placement at the rate processed (the calibration's costs) beside "
            "the node's cgroup CPU, and the Mbit/s it predicts the node sends and receives (payload and per-tuple "
            "overhead) beside what its link carried each way. *(quota)*: the node was at its quota, so its CPU "
            "is the quota, not the work (`capacity/nodes.py`).\n\n" + "".join(parts))


def _measured(data: RunData) -> str:
    rows = []
    for cluster, workload in data.pairs():
        saved = data.measured(cluster, workload)
        if not saved:
            rows.append([f"{workload} on {cluster}", "–", "–", "–", "no measured problem"])
            continue
        problem = (saved.get("record") or {}).get("problem") or {}
        reference = v.number((problem.get("costs") or {}).get("reference_rate"))
        declaration = saved.get("declaration") or {}
        cpu = ", ".join(f"{c} {x:g}" for c, x in sorted((declaration.get("cpu") or {}).items()))
        rows.append([f"{workload} on {cluster}", fmt(reference), fmt(v.number(saved.get("lambda_star_tps"))),
                     fmt(v.number(declaration.get("rate"))), cpu or "–"])
    return ("## λ\\* and ras+measured's declarations\n\nFrom each workload's calibration (a submission under "
            f"`{CALIBRATION_ARM}`; the service's measured problem, kept in `measured/`): the rate its costs were measured "
            "at, λ\\*, and the declaration rate with each component's declared CPU per executor (% of a core).\n\n"
            + markdown_table(["workload", "measured at t/s", "λ* t/s", "declared at t/s", "declared CPU per executor"],
                             rows, right=(1, 2, 3)) + "\n")


def _balance(data: RunData) -> str:
    from storm_planner_bench.e2e.papers import Capacities, with_derived

    rows = []
    for cluster, workload in data.pairs():
        rates = data.latency_rates(cluster, workload)
        known = data.clusters.get(cluster) or {}
        capacities = Capacities(known["cpu"], known["link_mbit"]) if known.get("cpu") else None
        if not rates or capacities is None:
            continue
        for arm in data.arms:
            steps = [with_derived(s, capacities) for s in data.arm_steps(cluster, workload, arm, LATENCY)
                     if v.number(s["rate"]) == rates[-1]]
            if steps:
                rows.append([f"{workload} on {cluster}", arm,
                             *(_spread([x for x in (v.number(s[k]) for s in steps) if math.isfinite(x)])
                               for k in ("cpu_rdev", "link_rdev", "cpu_ld"))])
    if not rows:
        return ""
    return ("## The papers' own measures, at 80 % of RAS's capacity\n\nBalance, as the papers measured their "
            "planners: the Elastic Allocator's R_dev of CPU and of link utilisation (its Fig. 5) and ALBIC's CPU "
            "load distance (Madsen et al. §5.4), % points, over the latency step at 80 % of RAS's capacity. They are "
            "the planners' own objectives, not what a user of the topology feels; the tables above are.\n\n"
            + markdown_table(["workload", "arm", "CPU R_dev", "link R_dev", "CPU load distance"], rows,
                             right=(2, 3, 4)) + "\n")


def _disturbed(data: RunData) -> str:
    rows = [[s["cluster"], s["workload"], s["arm"], s["repetition"], s["step"], s["rate"], s.get("outside_cpu_pct", "")]
            for s in data.steps if str(s.get("disturbed", "")) == "1"]
    if not rows:
        return "## Disturbed windows\n\nNone: no window saw CPU used outside the cluster above the threshold.\n\n"
    return ("## Disturbed windows\n\nWindows during which the host's CPU used outside the cluster's processes was above "
            "the threshold (`--disturbed-cpu`, % of a core); each was measured again (the last one counts).\n\n"
            + markdown_table(["cluster", "workload", "arm", "repetition", "step", "rate", "outside CPU %"], rows,
                             right=(3, 4, 5, 6)) + "\n")


def _pilots(data: RunData) -> str:
    rows = [[f"{r['workload']} on {r['cluster']}", r.get("capacity_tps", ""),
             f"[{r.get('bracket_low_tps', '')}, {r.get('bracket_high_tps', '') or '…'})", r.get("status", "")]
            for r in data.searches if str(r["repetition"]) == "0"]
    if not rows:
        return ""
    return ("## Pilots\n\nRAS's capacity per workload at the run's start (repetition 0), which fixed the latency "
            "steps' rates (50 % and 80 % of it) and where every search's climb starts.\n\n"
            + markdown_table(["workload", "RAS t/s", "bracket", "status"], rows, right=(1,)) + "\n")


def _setting(command: str, flag: str, default: float) -> float:
    words = command.split()
    if flag in words[:-1]:
        return v.number(words[words.index(flag) + 1]) or default
    return default


def _parses(label: str) -> bool:
    try:
        parse_arm(label)
    except ValueError:
        return False
    return True


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
