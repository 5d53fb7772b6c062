"""The supervisors' CFS period, 100 ms against 10 ms, side by side in one submission (benchmarks/reports/cfs-period.md).

One submission of a workload under RAS on the hetero cluster at a fixed rate near its capacity; the supervisors'
CFS period alternates between 100 ms (Linux's default, the bench's) and 10 ms (each quota scaled to keep its
share), in randomised pairs of blocks; each block is a capacity-bench window (``SearchRun.measure``: step settle, 30 s
window, the rule). Side by side in one run: the p99 from the due time per window, by period.

flock /tmp/storm-cluster.lock .venv/bin/python benchmarks/harness/scripts/cfs-period.py --workload bargains-link \
    --rate 420 --pairs 5 --out /tmp/cfs-aa
"""
from __future__ import annotations

import argparse
import csv
import random
import statistics
from pathlib import Path

from storm_planner.cluster.description import load_description
from storm_planner.cluster.nimbus_restart import switch_scheduler
from storm_planner_bench.capacity.arms import parse_arm
from storm_planner_bench.capacity.runner import Context, SearchRun, Timing
from storm_planner_bench.capacity.workloads import parse_workloads
from storm_planner_bench.e2e.experiment import open_bench, workload_feeds


def set_period(quotas, period_us: int) -> None:
    for quota in quotas.values():
        share = quota.cores                      # the group's CPU in cores, whatever its period
        (quota.path / "cpu.cfs_period_us").write_text(str(period_us))
        (quota.path / "cpu.cfs_quota_us").write_text(str(max(1000, round(share * period_us))))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", default="bargains-link")
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--cluster", default="benchmarks/e2e/cluster-hetero.yaml")
    parser.add_argument("--feed-records", type=int, default=8_000_000)
    parser.add_argument("--out", default="/tmp/cfs-aa")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (workload,) = parse_workloads(args.workload)
    feeds = workload_feeds(argparse.Namespace(feed_records=args.feed_records, quick=False, seed=1), {workload.feed_kind})
    bench_args = argparse.Namespace(settle=20.0, measure=30.0, drain=60.0, start_timeout=180.0, step_settle=15.0)
    description = load_description(args.cluster)
    rng = random.Random(args.seed)
    periods = []
    for _ in range(args.pairs):
        pair = [100_000, 10_000]
        rng.shuffle(pair)
        periods += pair
    rows = []
    with open_bench(bench_args, description.with_scheduler("resource-aware"), out, feeds) as bench:
        arm = parse_arm("ras")
        run = SearchRun(bench, workload, arm, Context("cfs-aa", 0), Timing(reruns=0))
        switch_scheduler(bench.cluster, arm.scheduler.nimbus)
        run.scratch.mkdir(parents=True, exist_ok=True)
        try:
            for index, period in enumerate(periods):
                set_period(bench.quotas, period)
                run.measure(args.rate, f"period-{period // 1000}ms")
                print(f"block {index + 1}/{len(periods)}: {period // 1000} ms", flush=True)
        finally:
            times = run._finish()
            for quota in bench.quotas.values():       # the bench's own period again
                (quota.path / "cpu.cfs_period_us").write_text(str(quota.period))
                (quota.path / "cpu.cfs_quota_us").write_text(str(quota.quota))
        rows = run._rows(times, "ran")
    with open(out / "windows.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=sorted({k for r in rows for k in r}))
        writer.writeheader()
        writer.writerows(rows)
    for role in ("period-100ms", "period-10ms"):
        p99 = [float(r["due_p99_ms"]) for r in rows if r["role"] == role and r.get("due_p99_ms") not in (None, "")]
        processed = [float(r["processed_tps"]) for r in rows if r["role"] == role and r.get("processed_tps")]
        ok = sum(1 for r in rows if r["role"] == role and r.get("verdict") == "sustained")
        print(f"{role}: p99 from due {sorted(round(x) for x in p99)} (median {statistics.median(p99):.0f} ms); "
              f"processed {sorted(round(x) for x in processed)}; sustained {ok} of {len(p99)}")


if __name__ == "__main__":
    main()
