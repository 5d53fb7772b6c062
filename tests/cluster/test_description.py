"""The cluster description: defaults, offsets, and errors that say what to fix."""
from __future__ import annotations

import pytest
import yaml

from storm_planner.cluster.description import (
    DescriptionError,
    default_description,
    load_description,
    parse_description,
)


def minimal(**overrides):
    data = {
        "supervisors": [
            {"name": "a", "cpu": 200, "memory_mb": 4096, "meta": {"machine.type": "i7", "speed": "2.0"}, "slots": 2},
            {"name": "b", "cpu": 100, "memory_mb": 2048, "meta": {"machine.type": "i5", "speed": "1.0"}, "slots": 1},
        ]
    }
    data.update(overrides)
    return data


def test_default_description_has_two_different_supervisors():
    d = default_description()
    assert len(d.supervisors) >= 2
    first, second = d.supervisors[:2]
    assert first.cpu != second.cpu
    assert first.meta["machine.type"] != second.meta["machine.type"]
    assert all(isinstance(v, str) for s in d.supervisors for v in s.meta.values())
    assert d.storm_version == "2.8.3"


def test_defaults_allocate_distinct_slot_and_thrift_ports():
    d = parse_description(minimal())
    a, b = d.supervisors
    assert a.slot_ports == (6700, 6701)
    assert b.slot_ports == (6702,)
    assert (a.thrift_port, b.thrift_port) == (6628, 6629)
    assert d.ports.nimbus == 6627 and d.ports.zookeeper == 2181 and d.ports.planner == 7627
    assert len(set(d.port_list())) == len(d.port_list())


def test_offset_moves_every_port():
    base = parse_description(minimal())
    moved = parse_description(minimal(ports={"offset": 1000}))
    assert [p + 1000 for p in base.port_list()] == moved.port_list()
    assert base.with_offset(1000).port_list() == moved.port_list()


def test_explicit_slot_list_and_thrift_port():
    data = minimal()
    data["supervisors"][0]["slots"] = [7000, 7005]
    data["supervisors"][0]["thrift_port"] = 7100
    d = parse_description(data)
    assert d.supervisors[0].slot_ports == (7000, 7005)
    assert d.supervisors[0].thrift_port == 7100


def test_load_description_from_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(minimal(name="mine")))
    d = load_description(path)
    assert d.name == "mine" and d.source == str(path)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["supervisors"][1]["meta"].update(speed=1.0), r"supervisors\[1\]\.meta\.speed must be a string"),
        (lambda d: d["supervisors"][1].update(name="a"), r"duplicate supervisor name 'a'"),
        (lambda d: d["supervisors"][0].update(cpu=-5), r"supervisors\[0\]\.cpu must be a positive number"),
        (lambda d: d["supervisors"][0].update(slots=0), r"supervisors\[0\]\.slots must be at least 1"),
        (lambda d: d["supervisors"][0].update(colour="red"), r"unknown key supervisors\[0\]\.colour"),
        (lambda d: d["supervisors"][0].pop("name"), r"supervisors\[0\]\.name is required"),
        (lambda d: d["supervisors"][0].update(name="has space"), r"not a valid name"),
        (lambda d: d.update(supervisors=[]), r"'supervisors' must be a non-empty list"),
        (lambda d: d.update(ports={"nimbus": 6700}), r"port 6700 is already used by ports.nimbus"),
        (lambda d: d.update(ports={"offset": 60000}), r"outside 1\.\.65535"),
        (lambda d: d.update(ports={"nimbus": "6627"}), r"ports.nimbus must be an integer"),
        (lambda d: d.update(zookeper={}), r"unknown key zookeper"),
        # Fields that become paths or are written into files: nothing but what they are.
        (lambda d: d.update(storm_version="2.8.3/../../../../tmp/x"), r"storm_version: '2.8.3/\.\./.*' is not a Storm"),
        (lambda d: d.update(storm_version="2.8.3-a..b"), r"storm_version: '2.8.3-a\.\.b' is not a Storm version"),
        (lambda d: d.update(storm_version="2.8.3\n"), r"storm_version: '2.8.3\\n' is not a Storm version"),
        (lambda d: d.update(storm_version="2.8.3</version><x>"), r"storm_version: .* is not a Storm version"),
        (lambda d: d.update(host="127.0.0.1\nadmin.enableServer=true"), r"host: .* is neither an IP address nor"),
        (lambda d: d["supervisors"][1].update(host="../b"), r"supervisors\[1\]\.host: '\.\./b' is neither"),
        (lambda d: d.update(name="mine\n"), r"name: 'mine\\n' is not a valid name"),
        (lambda d: d.update(scheduler="ras"), r"scheduler: 'ras' is not one of planner, default, resource-aware"),
    ],
)
def test_errors_name_the_key(mutate, message):
    data = minimal()
    mutate(data)
    with pytest.raises(DescriptionError, match=message):
        parse_description(data, source="test.yaml")


def test_versions_and_hosts_as_users_write_them_are_kept():
    for version in ("2.8.3", "2.8.3-SNAPSHOT", "3.0.0-M1", "2.8.3.1"):
        assert parse_description(minimal(storm_version=version)).storm_version == version
    assert parse_description(yaml.safe_load("storm_version: 2.8\n" + yaml.safe_dump(minimal()))).storm_version == "2.8"
    for host in ("127.0.0.1", "::1", "node-1.example.org", "supervisor_a"):
        assert parse_description(minimal(host=host)).host == host


def test_a_version_that_would_leave_the_storm_home_cache_builds_nothing(tmp_path, capsys):
    from storm_planner.cli import main
    from storm_planner.cluster.storm_home import StormHomeError, ensure_storm_home

    cache = tmp_path / "cache"
    with pytest.raises(StormHomeError, match=r"Storm version '2.8.3/\.\./\.\./x' is not a version"):
        ensure_storm_home("2.8.3/../../x", cache_dir=cache, rebuild=True)
    assert not cache.exists() and not (tmp_path / "x").exists()
    assert main(["cluster", "home", "--version", "../../../../tmp/x"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Storm version '../../../../tmp/x' is not a version" in err
def test_scheduler_defaults_to_the_plugin_and_can_be_switched():
    described = parse_description(minimal())
    assert described.scheduler == "planner"
    assert parse_description(dict(minimal(), scheduler="resource-aware")).scheduler == "resource-aware"
    switched = described.with_scheduler("default")
    assert switched.scheduler == "default" and switched.supervisors == described.supervisors
    with pytest.raises(DescriptionError, match="scheduler: 'fifo'"):
        described.with_scheduler("fifo")


def test_error_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("supervisors: [\n")
    with pytest.raises(DescriptionError, match=r"bad\.yaml: not valid YAML"):
        load_description(path)
    with pytest.raises(DescriptionError, match="cannot read cluster description"):
        load_description(tmp_path / "missing.yaml")
