"""`storm-planner demo --rate`: the replay rate trends is submitted with (no cluster needed)."""
import pytest

from storm_planner import demo
from storm_planner.cli import build_parser


def test_the_demo_replays_at_a_rate_the_dashboard_can_show_live_by_default():
    args = build_parser().parse_args(["demo"])
    assert args.rate == demo.DEFAULT_RATE
    # The shipped feed is 400 spout tuples: the default keeps the topology running for over a minute.
    assert 60 <= 400 / args.rate <= 300


@pytest.mark.parametrize("text, rate", [("0", 0.0), ("12.5", 12.5)])
def test_a_rate_from_zero_as_fast_as_it_can_is_taken(text, rate):
    assert build_parser().parse_args(["demo", "--rate", text]).rate == rate


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "abc", "1e9"])
def test_a_rate_that_is_not_a_finite_tuples_per_second_is_refused_naming_it(text, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--rate", text])
    assert "--rate" in capsys.readouterr().err


def test_the_rate_reaches_the_spout_as_trends_replay_rate(monkeypatch, tmp_path):
    submitted = {}
    monkeypatch.setattr("storm_planner.submit.operations.list_topologies", lambda nimbus: [])
    monkeypatch.setattr("storm_planner.submit.operations.submit_project",
                        lambda project, **kw: submitted.update(kw) or type("Row", (), {"id": "trends-1"})())
    assert demo.submit_trends("127.0.0.1:6627", tmp_path, tmp_path / "sink.jsonl", "topdown", 10, 4.0) == "trends-1"
    assert submitted["options"]["trends.replay_rate"] == 4.0
    assert submitted["options"]["planner.algorithm"] == "topdown"
