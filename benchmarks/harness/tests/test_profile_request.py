"""The developer's replay of a dumped plugin request (``python -m storm_planner_bench.common.profile_request``)."""
from __future__ import annotations

from thriftpy2.utils import serialize

from storm_planner.service.transport.contract import wire_factories
from storm_planner_bench.common import profile_request
from storm_planner_bench.sim.scale import plan_request


def test_a_dumped_request_is_replayed_timed_and_profiled(tmp_path, capsys):
    dumped = tmp_path / "request-1.thrift"
    dumped.write_bytes(serialize(plan_request(200, 10, 4, "even"), wire_factories()[0]))

    assert profile_request.main([str(dumped), "--repeat", "1", "--algorithm", "topdown", "--profile", "5"]) == 0

    out, err = capsys.readouterr()
    assert out == ""  # a developer's tool: everything on standard error
    assert "1 topologies, 10 nodes, 200 executors" in err
    assert "failed 0" in err
    assert "function calls" in err  # cProfile's report
    assert "handler.py" in err


def test_a_repeat_below_one_is_refused_with_the_value(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit) as exit_:
        profile_request.main([str(tmp_path / "request-1.thrift"), "--repeat", "0"])
    assert exit_.value.code == 2
    assert "--repeat must be at least 1, not 0" in capsys.readouterr().err
