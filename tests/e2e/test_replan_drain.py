"""A forced re-plan of a running topology on a real multi-process cluster (ZooKeeper, Nimbus with the plugin,
two supervisors, worker JVMs, Python shell components, the planner service with --nimbus and --zookeeper)
is drained, and loses nothing.

World Cup Top-K (requests -> count x2 -> top, one acker) replays a feed of its own at 100 requests/s from
a resumable replay spout (``worldcup.checkpoint_dir``), its time log on (``worldcup.times_dir``). Placed by
``even`` on two workers, one per supervisor, its two counts apart; ``planner.replan.force: count@sup-slow``
moves the count on sup-fast into the worker on sup-slow 40 s after the first plan. Both workers restart
(the one it leaves keeps executors, the one it joins changes), the spout's and the acker's among them. The
plan log must show the drain's five phases in order: the topology deactivated, the tuples in flight down
to 0, the move, the restarted workers up (their first windows), the topology activated; Nimbus shows it
ACTIVE; and the spout's time log has every request emitted and acked, none lost.

And the other side of the service's choice: on three workers, a move that restarts no spout's worker and
leaves the acker and every bolt running goes at once, undrained, and the topology acks throughout.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_foundation import wait_for

import storm_planner
from storm_planner.cluster.launcher import running_cluster
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.metrics.hookjar import default_hook_jar
from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.streaming.timelog import read_times
from storm_planner.submit.operations import kill_topology, list_topologies, submit_project

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(not (default_plugin_jar() and default_plugin_jar().is_file()
                            and default_hook_jar() and default_hook_jar().is_file()),
                       reason="plugin or metrics jar not built (mvn package)"),
]

REPO = Path(__file__).resolve().parents[2]
WORLDCUP = REPO / "topologies" / "worldcup"
RECORDS = 9000
RATE = 100


def request(i: int) -> str:
    return json.dumps({"timestamp": 894000000 + i // 50, "object_id": i % 97, "size": 100 + i % 13,
                       "url": f"/english/a_{i % 97}.html"})


def topk_options(tmp_path: Path, sink: Path, *, workers: int, pending: int, force: str) -> dict:
    """Top-K's conf for a forced move ``force`` 40 s after its first plan under ``even``, replaying a feed of
    ``RECORDS`` requests written into ``tmp_path`` from a resumable spout with its time log on."""
    feed = tmp_path / "requests.jsonl"
    feed.write_text("\n".join(request(i) for i in range(RECORDS)) + "\n")
    return {
        "worldcup.feed": str(feed), "worldcup.sink": str(sink), "worldcup.replay_rate": RATE,
        "worldcup.times_dir": str(tmp_path / "times"), "worldcup.checkpoint_dir": str(tmp_path / "checkpoints"),
        "topology.workers": workers, "topology.acker.executors": 1, "topology.message.timeout.secs": 30,
        "topology.max.spout.pending": pending,
        # The workers' Python runs this checkout's kit (the spout's time log, its checkpoints).
        "topology.environment": {"PYTHONPATH": str(Path(storm_planner.__file__).resolve().parents[1])},
        "planner.algorithm": "even", "planner.metrics.period.secs": 2, "planner.replan.interval.secs": 2,
        "planner.source.resumable": True,
        "planner.replan.force": force, "planner.replan.force.after.secs": 40,
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with running_cluster(tmp_path_factory.mktemp("drain-cluster"), ui=False) as running:
        yield running


def test_a_forced_move_of_a_running_topology_is_drained_and_loses_nothing(cluster, tmp_path, capsys):
    a = cluster.addresses
    sink = tmp_path / "top.jsonl"
    options = topk_options(tmp_path, sink, workers=2, pending=500, force="count@sup-slow")
    try:
        row = submit_project(WORLDCUP, nimbus=a.nimbus, topology="worldcup_topk", name="drained",
                             options=options, wait_active=180)
        before = {e["executor"]: e for e in cluster.assignment(row.id)}

        def drain_records():
            return [r for r in read_plan_log(cluster.plan_log, "drain") if r["topology"] == row.id]

        wait_for(lambda: any(r["phase"] == "resume" for r in drain_records()), 300, "the drain to resume")
        records = drain_records()
        assert [r["phase"] for r in records] == ["pause", "drain", "move", "start", "resume"], records
        assert all(r["outcome"] == "ok" and r["drained"] for r in records), records
        phase = {r["phase"]: r for r in records}
        assert phase["drain"]["in_flight"] == 0 and phase["drain"]["note"].startswith("0 tuples in flight")
        up = re.match(r"(\d+) of (\d+) restarted worker\(s\) up", phase["start"]["note"])
        assert up and up.group(1) == up.group(2) != "0", phase["start"]
        assert next(t for t in list_topologies(a.nimbus) if t.id == row.id).status == "ACTIVE"
        after = {e["executor"]: e for e in cluster.assignment(row.id)}
        moved = [e for e in before if before[e]["node"] != after[e]["node"]]
        assert len(moved) == 1 and before[moved[0]]["component"] == "count" and after[moved[0]]["node"] == "sup-slow"
        plans = [p for p in read_plan_log(cluster.plan_log) if p["topology"] == row.id]
        move = next(p for p in plans if p["figures"].get("moves"))
        assert any(n.startswith("drained: 1 executor(s) move with 0 tuple(s) in flight") for n in move["notes"])

        done = wait_for(lambda: (Path(str(sink) + ".feed-done").is_file()
                                 and json.loads(Path(str(sink) + ".feed-done").read_text())), 300,
                        "the feed to be replayed and acked to its end")
        times = read_times(tmp_path / "times")
        assert len(times.emitted) == RECORDS and times.never_acked() == 0, \
            f"{times.never_acked()} of {len(times.emitted)} tuples never acked"
        moved_at = move["time"]
        stalled = [s for s in range(int(phase["pause"]["time"]) - 10, int(phase["resume"]["time"]) + 10, 5)
                   if not times.acked_between(s, s + 5)]
        with capsys.disabled():
            print(f"\ndrain of {row.id}: " + "; ".join(f"{r['phase']} {r['seconds']:.1f} s ({r['note']})"
                                                        for r in records))
            print(f"paused {phase['resume']['time'] - phase['pause']['time'] + phase['pause']['seconds']:.1f} s "
                  f"in all; moved {moved[0]} ({before[moved[0]]['node']} -> sup-slow) at {moved_at:.0f}; "
                  f"{len(times.emitted)} emitted, {len(times.acked)} acked, {times.failed} failed, "
                  f"{times.replayed} replayed; 5 s intervals without an ack around the move: {len(stalled)}; "
                  f"done marker: {done['records']} records, {done['given_up']} given up")
        assert done["given_up"] == 0
    finally:
        for t in list_topologies(a.nimbus):
            kill_topology(a.nimbus, t.name, wait_secs=0)

def test_a_forced_move_the_flow_survives_goes_undrained_and_keeps_acking(cluster, tmp_path, capsys):
    """The same Top-K on three workers: ``even`` puts the acker with the spout, a count with ``top`` and the
    other count alone. ``count@sup-slow:new`` moves the lone count into a new worker: no spout's worker
    restarts, the acker and ``top`` keep running, the other count takes its keys' tuples, and 5,000 pending
    places hold what the move may lose. The service moves at once (no drain records, a note saying why), and
    the topology acks in every 5 s interval around the move and loses nothing."""
    a = cluster.addresses
    sink = tmp_path / "top.jsonl"
    options = topk_options(tmp_path, sink, workers=3, pending=5000, force="count@sup-slow:new")
    try:
        row = submit_project(WORLDCUP, nimbus=a.nimbus, topology="worldcup_topk", name="undrained",
                             options=options, wait_active=180)
        before = {e["executor"]: e for e in cluster.assignment(row.id)}

        def moves():
            return [p for p in read_plan_log(cluster.plan_log) if p["topology"] == row.id and p["figures"].get("moves")]

        wait_for(moves, 300, "the forced move")
        move = moves()[0]
        assert any("the flow goes on" in note for note in move["notes"]), move["notes"]
        assert not [r for r in read_plan_log(cluster.plan_log, "drain") if r["topology"] == row.id
                    and r["phase"] in ("pause", "drain")]
        done = wait_for(lambda: (Path(str(sink) + ".feed-done").is_file()
                                 and json.loads(Path(str(sink) + ".feed-done").read_text())), 300,
                        "the feed to be replayed and acked to its end")
        after = {e["executor"]: e for e in cluster.assignment(row.id)}
        moved = [e for e in before if (before[e]["node"], before[e]["port"]) != (after[e]["node"], after[e]["port"])]
        assert [before[e]["component"] for e in moved] == ["count"], moved
        times = read_times(tmp_path / "times")
        assert len(times.emitted) == RECORDS and times.never_acked() == 0
        stalled = [s for s in range(int(move["time"]) - 10, int(move["time"]) + 40, 5)
                   if not times.acked_between(s, s + 5)]
        with capsys.disabled():
            print(f"\nundrained move of {row.id}: {moved} -> {[after[e]['node'] for e in moved]}; "
                  f"{times.failed} failed, {times.replayed} replayed; 5 s intervals without an ack: {len(stalled)}")
        assert not stalled and done["given_up"] == 0
    finally:
        for t in list_topologies(a.nimbus):
            kill_topology(a.nimbus, t.name, wait_secs=0)
