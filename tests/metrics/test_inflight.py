"""The spouts' tuples in flight and the restarted workers' first windows (metrics/inflight.py), pure."""
from __future__ import annotations

from storm_planner.core.problem import Slot
from storm_planner.metrics.inflight import slot_pids, spout_in_flight, start_seconds, task_in_flight, workers_up
from storm_planner.metrics.windows import Flow, TaskWindow


def spout(task, end_ms, started, acked, failed=0, window_inits=30, unanchored=0, component="s"):
    sent = (Flow("__ack_init", 1, window_inits, started), Flow("__ack_init", 2, 0, 0),
            Flow("default", 5, window_inits + unanchored, started + unanchored))
    return TaskWindow("t-1", component, task, 3, end_ms - 3000, end_ms, 3.0, node="a", port=6700, pid=7,
                      emitted=window_inits * 2, emitted_total=started * 2 + unanchored, acked_total=acked,
                      failed_total=failed, sent=sent)


def test_in_flight_is_the_trees_started_less_those_acked_or_failed_unanchored_emits_aside():
    assert task_in_flight(spout(4, 10_000, started=500, acked=480, failed=5, unanchored=1000)) == 15
    assert task_in_flight(spout(4, 10_000, started=3, acked=5)) == 0   # never below 0


def test_in_flight_is_known_once_every_spout_task_reported_after_the_moment_asked():
    windows = {4: [spout(4, 9_000, 100, 100)], 5: [spout(5, 12_000, 200, 190)],
               6: [TaskWindow("t-1", "c", 6, 1, 0, 12_000, 3.0)]}
    known = spout_in_flight(windows, {"s"})
    assert (known.tuples, known.reported, known.tasks) == (10, 2, 2)
    assert known.rate == 20.0                  # 2 x 30 inits in 3 s windows
    since = spout_in_flight(windows, {"s"}, since_ms=10_000)
    assert (since.tuples, since.reported) == (None, 1) and since.describe() == \
        "in flight unknown (1 of 2 spout task(s) reported since)"
    assert spout_in_flight({}, {"s"}).tuples is None


def test_a_restarted_worker_is_up_with_a_window_from_a_new_process_on_its_slot_after_the_move():
    moved_ms = 100_000
    old = TaskWindow("t-1", "c", 3, 9, 90_000, 99_000, 3.0, node="b", port=6701, pid=50)
    new = TaskWindow("t-1", "c", 3, 1, 105_500, 108_500, 3.0, node="b", port=6701, pid=51)
    elsewhere = TaskWindow("t-1", "c", 2, 1, 104_000, 107_000, 3.0, node="a", port=6700, pid=52)
    slot = Slot("b", 6701)
    assert slot_pids({3: [old]}, [slot]) == {slot: 50}
    assert workers_up({3: [old]}, {slot: {3}}, moved_ms, {slot: 50}) == {}
    # The old process' window that ended just after the move, started within the clock skew: not it.
    late_old = TaskWindow("t-1", "c", 3, 10, 99_000, 102_000, 3.0, node="b", port=6701, pid=50)
    assert workers_up({3: [late_old]}, {slot: {3}}, moved_ms, {slot: 50}) == {}
    up = workers_up({3: [old, new], 2: [elsewhere]}, {slot: {2, 3}}, moved_ms, {slot: 50})
    assert up == {slot: new} and start_seconds(new, moved_ms) == 5.5
