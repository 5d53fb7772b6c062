"""``bench capacity``'s window figures: latency from the due time in a bounded HdrHistogram (a held-back spout
shows its backlog in p99, tuples due but never emitted or never acked count at the top), the spout's lag,
and the one sustained rule."""
from __future__ import annotations

import math

import pytest

from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.capacity.latency import (
    TOP_MS,
    SpoutLag,
    cdf_ms,
    decode,
    encode,
    merged,
    percentile_ms,
    window_latency,
)
from storm_planner_bench.capacity.rule import DUE_P99_MS, LAG_GROWTH_S, sustained

RATE = 100.0          # tuples/s: one due every 10 ms
SERVICE_S = 0.005     # each tuple acked 5 ms after its emit


def paced(begin: float, end: float, emit_of=lambda due: due, ack=True, task: str = "@requests-3",
          times: TupleTimes | None = None) -> TupleTimes:
    """A spout's log: a tuple due every 1/RATE s in [begin, end), emitted at ``emit_of(due)`` (None: never),
    acked SERVICE_S later (or not)."""
    times = times or TupleTimes()
    for n in range(round((end - begin) * RATE)):
        due = begin + n / RATE
        emitted = emit_of(due)
        if emitted is None:
            continue
        key = f"{task}/0:{n}:0"
        times.emitted[key], times.due[key] = emitted, due
        times.emits_at.append(emitted)
        if ack:
            times.acked[key] = emitted + SERVICE_S
    return times


def test_a_spout_on_schedule_has_its_service_time_as_latency_and_no_lag():
    latency = window_latency(paced(0.0, 12.0), 1.0, 11.0, RATE)
    assert latency.due_tuples == 1000 and latency.unemitted == 0 and latency.unacked == 0
    assert percentile_ms(latency.due, 99) == pytest.approx(5.0, rel=0.01)
    assert percentile_ms(latency.emit_to_ack, 99) == pytest.approx(5.0, rel=0.01)
    assert latency.lag_start_s < 0.011 and latency.lag_end_s < 0.011
    figures = {"offered_tps": RATE, "processed_tps": RATE, **latency.figures(), "failed": 0}
    assert sustained(figures).sustained and sustained(figures).why == ""


def test_a_held_back_spout_shows_its_backlog_in_p99_from_the_due_time_not_from_the_emit():
    """Held back from 7 s on (max.spout.pending full, a starved worker): the tuples due meanwhile go out in a
    burst at 9.5 s. From the emit they look as fast as ever; from the due time they waited up to 2.5 s."""
    held = paced(0.0, 12.0, emit_of=lambda due: 9.5 if 7.0 <= due < 9.5 else due)
    latency = window_latency(held, 1.0, 11.0, RATE)
    assert percentile_ms(latency.emit_to_ack, 99) == pytest.approx(5.0, rel=0.01)
    assert percentile_ms(latency.due, 99) > 2_000
    assert latency.lag_start_s < 0.011 and latency.lag_end_s < 0.011   # caught up by the window's end
    still_behind = window_latency(held, 1.0, 9.0, RATE)    # the window ends while the spout is held back
    assert still_behind.lag_end_s == pytest.approx(9.0 - 7.0 - 0.5, abs=0.02)   # the last second's median
    verdict = sustained({"offered_tps": RATE, "processed_tps": RATE, **still_behind.figures(), "failed": 0})
    assert not verdict.sustained and "lag grew" in verdict.why and "p99 from due" in verdict.why


def test_tuples_due_but_never_emitted_count_at_the_top():
    """The spout stopped emitting at 10 s: the 100 tuples due in [10, 11) are not in its log at all."""
    stopped = paced(0.0, 10.0)
    latency = window_latency(stopped, 1.0, 11.0, RATE)
    assert latency.due_tuples == 1000 and latency.unemitted == 100
    assert latency.due.get_total_count() == 1000
    assert percentile_ms(latency.due, 99) == pytest.approx(TOP_MS, rel=0.01)
    assert percentile_ms(latency.due, 50) == pytest.approx(5.0, rel=0.01)


def test_tuples_never_acked_count_at_the_top_and_as_lost():
    times = paced(0.0, 12.0)
    lost = [k for k in times.acked if 5.0 <= times.due[k] < 5.2]
    for key in lost:
        del times.acked[key]
    latency = window_latency(times, 1.0, 11.0, RATE)
    assert latency.unacked == len(lost) == 20
    assert latency.due.get_total_count() == 1000 and latency.emit_to_ack.get_total_count() == 980
    assert percentile_ms(latency.due, 99) == pytest.approx(TOP_MS, rel=0.01)   # 2 % at the top
    verdict = sustained({"offered_tps": RATE, "processed_tps": RATE, **latency.figures(), "failed": 0})
    assert not verdict.sustained and "20 unacked" in verdict.why


def test_the_lag_is_the_largest_over_tasks_and_read_as_the_least_over_the_last_second():
    times = paced(0.0, 5.0, task="@trades-1")
    paced(0.0, 5.0, emit_of=lambda due: due + 1.5, times=times, task="@quotes-2")   # 1.5 s behind throughout
    lag = SpoutLag(times)
    assert lag.at(3.0) == pytest.approx(1.5, abs=0.02)
    assert lag.at(3.0) == pytest.approx(SpoutLag(paced(0.0, 5.0, emit_of=lambda due: due + 1.5)).at(3.0))
    blip = paced(0.0, 5.0, emit_of=lambda due: 2.6 if 2.3 <= due < 2.6 else due)    # a 300 ms pause
    assert SpoutLag(blip).instant(2.55) > 0.2 and SpoutLag(blip).at(2.9) < 0.02
    assert math.isnan(SpoutLag(TupleTimes()).at(1.0))


def test_the_rule_names_every_part_that_failed():
    good = {"offered_tps": 1000, "processed_tps": 995, "lag_start_s": 0.01, "lag_end_s": 0.01 + LAG_GROWTH_S,
            "due_p99_ms": DUE_P99_MS, "unacked": 0, "failed": 0}
    assert sustained(good).sustained
    assert "processed 985 of 1000" in sustained({**good, "processed_tps": 985}).why
    assert "lag grew" in sustained({**good, "lag_end_s": 0.5}).why
    assert "p99 from due 501" in sustained({**good, "due_p99_ms": 501}).why
    assert "0 unacked, 3 failed" in sustained({**good, "failed": 3}).why
    assert not sustained({**good, "due_p99_ms": float("nan")}).sustained   # a missing figure fails its part
    assert len(sustained({"offered_tps": 1000}).why.split("; ")) == 4
    assert sustained({**good, "due_p99_ms": 501}).p99_alone
    assert not sustained(good).p99_alone                                      # sustained: nothing to confirm
    assert not sustained({**good, "due_p99_ms": 501, "processed_tps": 985}).p99_alone
    assert not sustained({**good, "due_p99_ms": 501, "failed": 1}).p99_alone
    assert sustained({**good, "lag_end_s": 0.5}).failed == ("lag",)


def test_histograms_encode_merge_and_give_a_cdf():
    one = window_latency(paced(0.0, 12.0), 1.0, 11.0, RATE).due
    two = window_latency(paced(0.0, 12.0, emit_of=lambda due: due + 0.1), 1.0, 11.0, RATE).due
    again = decode(encode(one))
    assert again.get_total_count() == 1000 and percentile_ms(again, 50) == percentile_ms(one, 50)
    both = merged([one, two])
    assert both.get_total_count() == 2000 and percentile_ms(both, 75) == pytest.approx(105.0, rel=0.01)
    latency, shares = cdf_ms(both)
    assert latency == sorted(latency) and shares[0] == 0.0 and shares[-1] == pytest.approx(0.9999)
