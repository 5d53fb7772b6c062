"""``bench capacity``'s report from a run's files (``--report-only``): the capacity table per workload with its
ratios at the run's resolution, the A/A floor, the hook at saturation, the model's predictions, λ*, the
balance measures at 80 % of RAS's capacity, disturbed windows, the plots; and the command's other answers
that start no cluster."""
from __future__ import annotations

import json
from pathlib import Path

from storm_planner import cli
from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.capacity.experiment import step_columns
from storm_planner_bench.capacity.latency import encode, window_latency
from storm_planner_bench.capacity.order import check_run, run_order
from storm_planner_bench.capacity.runner import save_step_record
from storm_planner_bench.capacity.session import SEARCH_COLUMNS
from storm_planner_bench.common.report import append_csv_rows

NODES = ("i7-a", "i7-b", "i5-a", "i5-b")
CAPACITIES = {"ras": (3700, 3600, 3800), "ras+measured": (4000, 4100, 3900), "planner:auto": (4900, 5000, 4800),
              "planner:auto#2": (4800, 4900, 5000), "ras+nohook": (3750, 3700, 3800)}
LATENCY_RATES = (1850.0, 2960.0)
WORKERS = "i7-a:6700[tweetsx1,rankx2,totalx1,__ackerx4] i7-b:6703[countx2]"


def histogram(delay_s: float) -> str:
    times = TupleTimes()
    for n in range(500):
        key = f"@tweets-1/0:{n}:0"
        times.emitted[key] = times.due[key] = n / 100
        times.acked[key] = n / 100 + delay_s
    return encode(window_latency(times, 0.0, 5.0, 100.0).due)


def fake_run(out: Path) -> None:
    header = step_columns(list(NODES))
    order = run_order(1, ["e2e-bench"], 3, ["trends-link"], list(CAPACITIES))
    check_run(out, "abc1234", "storm-planner bench capacity --workloads trends-link --resolution 0.05", 1, order,
              arms=list(CAPACITIES), conditions={"cfs_period_ms": 100.0})
    searches, steps = [], []
    pilot = {"cluster": "e2e-bench", "workload": "trends-link", "arm": "ras", "repetition": 0, "status": "ran",
             "capacity_tps": 3700, "bracket_low_tps": 3700, "bracket_high_tps": 3850, "code": "abc1234"}
    searches.append(pilot)
    for search in order:
        capacity = CAPACITIES[search.arm][search.repetition - 1]
        searches.append({"cluster": search.cluster, "workload": search.workload, "arm": search.arm,
                         "repetition": search.repetition, "position": search.position, "status": "ran",
                         "capacity_tps": capacity, "bracket_low_tps": capacity, "bracket_high_tps": capacity * 1.04,
                         "resolved": 1, "code": "abc1234"})
        rows = [(LATENCY_RATES[0], "latency", "sustained", 0.02), (LATENCY_RATES[1], "latency", "sustained", 0.08),
                (capacity, "bisect", "sustained", 0.3), (capacity * 1.04, "bisect", "not sustained", 2.0)]
        for index, (rate, role, verdict, delay) in enumerate(rows, 1):
            key = {"cluster": search.cluster, "workload": search.workload, "arm": search.arm,
                   "repetition": search.repetition, "step": index, "rate": f"{rate:g}", "role": role}
            disturbed = search.arm == "ras" and search.repetition == 2 and index == 1
            steps.append({**key, "offered_tps": rate, "status": "ran",
                          "verdict": "disturbed: measured again" if disturbed else verdict,
                          "processed_tps": rate if verdict == "sustained" else rate * 0.9, "due_p99_ms": delay * 1000,
                          "due_p999_ms": delay * 1500, "lost": 0, "disturbed": int(disturbed), "outside_cpu_pct": 40,
                          "predicted_tps": capacity * 1.1,
                          **{f"cpu_{n}_pct": 40.0 if n.startswith("i7") else 20.0 + index for n in NODES},
                          **{f"link_{n}_mbit": 1.0 for n in NODES},
                          "workers": WORKERS, **{f"link_{n}_out_bytes_per_tuple": 100.0 for n in NODES}})
            save_step_record(out, key, {"due": histogram(delay), "emit_to_ack": histogram(0.005)}, [])
    append_csv_rows(out / "searches.csv", list(SEARCH_COLUMNS), searches)
    append_csv_rows(out / "steps.csv", header, steps)
    (out / "clusters.json").write_text(json.dumps({"e2e-bench": {
        "cpu": {"i7-a": 45, "i7-b": 45, "i5-a": 35, "i5-b": 35}, "link_mbit": dict.fromkeys(NODES, 2.0)}}))
    measured = out / "measured" / "e2e-bench" / "trends-link.json"
    measured.parent.mkdir(parents=True)
    measured.write_text(json.dumps({"lambda_star_tps": 6000.0, "declaration": {"rate": 1766.2, "cpu": {"count": 25.7}},
                                    "record": {"problem": {"costs": {"reference_rate": 1000}}}}))
    (out / "notes.md").write_text("A note about this run.")


def test_the_report_leads_with_capacities_ratios_and_the_resolution(tmp_path):
    out = tmp_path / "e2e"
    fake_run(out)
    assert cli.main(["bench", "capacity", "--report-only", "--out", str(out)]) == 0
    report = (tmp_path / "e2e.md").read_text()
    assert "flock /tmp/storm-cluster.lock .venv/bin/storm-planner bench capacity --workloads trends-link" in report
    assert "every search on commit `abc1234`" in report and "seed 1" in report
    assert "cgroup v1 quota per CFS period of 100 ms" in report
    assert "## trends-link on e2e-bench" in report and "λ\\* 6,000 t/s" in report
    # the A/A gap: medians 4,900 and 4,900: 0 %; the resolution is the search's 5 %
    assert "resolution is **5.0%**" in report
    auto = next(line for line in report.splitlines() if line.startswith("| planner:auto |"))
    assert "4,900 [4,800–5,000]" in auto and "1.32 (higher)" in auto and "1.23 (higher)" in auto and "82%" in auto
    assert "5,390 (0.91 of it)" in auto    # the model's prediction for the placements that sustained most
    measured = next(line for line in report.splitlines() if line.startswith("| ras+measured |"))
    assert "1.08 (higher)" in measured
    nohook = next(line for line in report.splitlines() if line.startswith("| ras+nohook |"))
    assert "1.01 (no difference)" in nohook
    assert "p99 / p99.9 at 1,850" in report and "20 / 30" in auto
    assert "## The metrics hook at saturation" in report and "within the 3 % target" in report
    # The rates both arms sustained: the latency steps and the capacities 3,700 and 3,800 both reached; the
    # CPU is the same for both arms in this fake run (a step's CPU grows with its index).
    section = report.split("the hook's CPU |")[1].split("## ")[0]
    # No supervisor at its quota: the i7s use 40 of their 45 % (89 %), the i5s at most 24 of 35 %.
    cpu = [line.rstrip(" |").split(" | ")[2:7] for line in section.splitlines() if line.startswith("| ras |")]
    assert cpu == [["1,850", "122.0", "122.0", "+0.0%", "none"], ["2,960", "124.0", "124.0", "+0.0%", "none"],
                   ["3,700", "126.0", "126.0", "+0.0%", "none"], ["3,800", "126.0", "126.0", "+0.0%", "none"]]
    assert "## How well the capacity model predicted" in report and "0.91" in report
    assert "declared at t/s" in report and "1,766" in report and "count 25.7" in report
    assert "## The papers' own measures, at 80 % of RAS's capacity" in report
    assert "## Disturbed windows" in report and "| e2e-bench | trends-link | ras | 2 | 1 |" in report
    assert "## Pilots" in report and "A note about this run." in report
    # Issue #51's targets for the recommended planner (its A/A copy is not judged): one workload of four, so
    # every target is incomplete, whatever it holds on.
    targets = report.split("## The recommended planner against its targets")[1].split("\n## ")[0]
    assert "### `planner:auto` on e2e-bench" in targets and "planner:auto#2" not in targets
    assert "| trends-link | 1.32 | 1.23 | 82% | 80 / 80 | 0 | 3 |" in targets
    assert "| ≥ 1.3 × RAS, beyond the resolution | 1 of 1 (trends-link) | 3 | incomplete |" in targets
    assert "| ≥ 85 % of λ* | 0 of 1 | 4 | incomplete |" in targets
    assert (out / "e2e-bench-trends-link-throughput.png").stat().st_size > 0
    assert (out / "e2e-bench-trends-link-latency.png").stat().st_size > 0


def test_the_estimate_answers_alone_and_a_bad_option_exits_2(tmp_path, capsys):
    out = tmp_path / "capacity"
    assert cli.main(["bench", "capacity", "--estimate", "--out", str(out)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["searches"] == 2 * 4 * 9 * 3 and answer["total_h"] > 10
    assert not out.exists()
    assert cli.main(["bench", "capacity", "--arms", "planner:nope", "--estimate", "--out", str(out)]) == 2
    assert "no planner" in capsys.readouterr().err


def test_the_report_says_the_period_a_run_held_its_machines_to_and_when_it_was_assumed():
    from storm_planner_bench.capacity.report import _period

    assert _period({"conditions": {"cfs_period_ms": 100.0}}) == "100 ms"
    assert _period({"conditions": {"cfs_period_ms": 10.0}, "conditions_assumed": True}).startswith("10 ms (assumed")
    assert "did not record" in _period({})
