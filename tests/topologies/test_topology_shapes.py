"""The topology definitions: streamparse can load them, and submit options reshape them."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from storm_planner.streaming import ConfError, configure_topology
from storm_planner.streaming.ticks import TICK_FREQ_KEY
from storm_planner.submit.project import load_project

TOPOLOGIES = Path(__file__).resolve().parents[2] / "topologies"


PROJECTS = [
    ("trends", "trends", "Trends", ["tweets"], ["count", "rank", "total"]),
    ("bargains", "bargains", "Bargains", ["quotes", "trades"], ["filter", "join", "sink", "vwap"]),
    ("airline", "airline_job2", "AirlineJob2", ["flights"], ["extract", "plane_delays", "store_planes"]),
    ("airline", "airline_job3", "AirlineJob3", ["flights"],
     ["extract", "plane_delays", "route_delays", "store_planes", "store_routes"]),
    ("airline", "airline_job4", "AirlineJob4", ["flights", "weather"],
     ["courier", "extract", "join", "plane_delays", "rainscore", "route_delays", "store_courier",
      "store_planes", "store_routes"]),
]


@pytest.mark.parametrize("project, topology, cls, spouts, bolts", [PROJECTS[0], PROJECTS[1], PROJECTS[4]])
def test_streamparse_loader_finds_each_topology(project, topology, cls, spouts, bolts):
    """``sparse``'s own loader imports topologies/<name>.py as a module named after the file."""
    script = (
        "import json\n"
        "from streamparse.util import get_topology_from_file\n"
        f"cls = get_topology_from_file('topologies/{topology}.py')\n"
        "print(json.dumps([cls.__name__, sorted(cls.thrift_spouts), sorted(cls.thrift_bolts)]))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=TOPOLOGIES / project,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json
    assert json.loads(out.stdout.splitlines()[-1]) == [cls, spouts, bolts]


@pytest.mark.parametrize("project, topology, cls", [p[:3] for p in PROJECTS])
def test_submit_command_loads_each_project(project, topology, cls):
    loaded = load_project(TOPOLOGIES / project, topology)
    assert loaded.topology_class.__name__ == cls
    assert loaded.topology_class.conf_prefix == project


def test_trends_wiring():
    import json

    from trends import Trends
    bolts = Trends.thrift_bolts
    inputs = {name: {sid.componentId: g for sid, g in bolt.common.inputs.items()} for name, bolt in bolts.items()}
    assert inputs["count"]["tweets"].fields == ["topic"]
    assert inputs["rank"]["count"].fields == ["topic"]
    assert inputs["total"]["rank"].fields == []  # global grouping is an empty fields grouping
    for bolt in bolts.values():
        assert json.loads(bolt.common.json_conf)[TICK_FREQ_KEY] == 1
    assert Trends.thrift_spouts["tweets"].spout_object.shell.script == "trends.spouts.TweetSpout"


def test_configure_topology_sets_parallelism_and_groupings_and_restores_defaults():
    from trends import Trends
    default_count = Trends.thrift_bolts["count"].common.parallelism_hint
    changed = configure_topology(Trends, {"trends.parallelism.count": "5", "trends.parallelism.tweets": 2,
                                          "trends.grouping.rank": "shuffle", "other.key": 1})
    assert changed["parallelism"] == {"count": 5, "tweets": 2}
    assert Trends.thrift_bolts["count"].common.parallelism_hint == 5
    assert Trends.thrift_spouts["tweets"].common.parallelism_hint == 2
    (grouping,) = Trends.thrift_bolts["rank"].common.inputs.values()
    assert grouping.shuffle is not None
    # A later submit in the same process starts again from the declared shape.
    configure_topology(Trends, {"trends.top_k": 3})
    assert Trends.thrift_bolts["count"].common.parallelism_hint == default_count
    (grouping,) = Trends.thrift_bolts["rank"].common.inputs.values()
    assert grouping.fields == ["topic"]


def test_configure_topology_declares_a_components_cpu_for_ras_and_the_planner():
    from trends import Trends
    changed = configure_topology(Trends, {"trends.cpu.count": "35.5"})
    assert changed["cpu"] == {"count": 35.5}
    conf = json.loads(Trends.thrift_bolts["count"].common.json_conf)
    assert conf["topology.component.cpu.pcore.percent"] == 35.5
    assert conf[TICK_FREQ_KEY] == 1   # the component's other keys stay
    configure_topology(Trends, {})
    conf = json.loads(Trends.thrift_bolts["count"].common.json_conf)
    assert "topology.component.cpu.pcore.percent" not in conf


def test_partial_key_grouping_replaces_only_the_fields_grouped_inputs():
    """PoTC on the airline job: the data inputs take the kit's PartialKeyFieldsGrouping on the named
    fields; the watermark stream into extract stays a broadcast."""
    from airline.topology import build

    from storm_planner.streaming.topology import PARTIAL_KEY_CLASS

    job = build(3)
    changed = configure_topology(job, {"airline.grouping.extract": "partial_key:tail_num",
                                       "airline.grouping.route_delays": "partial_key: origin, dest"})
    assert changed["grouping"] == {"extract": "partial_key:tail_num", "route_delays": "partial_key: origin, dest"}
    extract = {sid.streamId: g for sid, g in job.thrift_bolts["extract"].common.inputs.items()}
    assert extract["default"].custom_object.full_class_name == PARTIAL_KEY_CLASS
    assert [a.string_arg for a in extract["default"].custom_object.args_list] == ["tail_num"]
    assert extract["watermark"].all is not None, extract
    (routes,) = job.thrift_bolts["route_delays"].common.inputs.values()
    assert [a.string_arg for a in routes.custom_object.args_list] == ["origin,dest"]
    (planes,) = job.thrift_bolts["plane_delays"].common.inputs.values()
    assert planes.fields == ["tail_num"]   # not named: left as declared
    configure_topology(job, {})
    (routes,) = job.thrift_bolts["route_delays"].common.inputs.values()
    assert routes.fields == ["origin", "dest"]


@pytest.mark.parametrize("options, message", [
    ({"trends.cpu.count": "0"}, "positive number"),
    ({"trends.cpu.count": "lots"}, "positive number"),
    ({"trends.parallelism.cuont": 2}, "no component 'cuont'"),
    ({"trends.parallelism.count": "0"}, "positive integer"),
    ({"trends.parallelism.count": "two"}, "positive integer"),
    ({"trends.grouping.tweets": "shuffle"}, "spout"),
    ({"trends.grouping.rank": "fields:"}, "field names"),
    ({"trends.grouping.rank": "partial_key:"}, "field names"),
    ({"trends.grouping.rank": "random"}, "expected one of"),
])
def test_configure_topology_rejects_bad_options(options, message):
    from trends import Trends
    with pytest.raises(ConfError, match=message):
        configure_topology(Trends, options)
    configure_topology(Trends, {})
