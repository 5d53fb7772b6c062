"""storm.yaml rendering: one file per daemon, distinct per supervisor, pure."""
from __future__ import annotations

import yaml

from storm_planner.cluster import storm_yaml
from storm_planner.cluster.description import default_description


def test_supervisors_get_their_own_ports_dirs_and_capacities():
    d = default_description()
    confs = [storm_yaml.supervisor_conf(d, s, local_dir=f"/data/{s.name}") for s in d.supervisors]
    assert len({c["supervisor.thrift.port"] for c in confs}) == len(confs)
    assert len({c["storm.local.dir"] for c in confs}) == len(confs)
    slots = [p for c in confs for p in c["supervisor.slots.ports"]]
    assert len(set(slots)) == len(slots)
    for sup, conf in zip(d.supervisors, confs):
        assert conf["supervisor.cpu.capacity"] == sup.cpu
        assert conf["supervisor.memory.capacity.mb"] == sup.memory_mb
        assert conf["supervisor.scheduler.meta"] == dict(sup.meta)
        assert all(isinstance(v, str) for v in conf["supervisor.scheduler.meta"].values())
        assert conf["storm.local.hostname"] == sup.host
        assert conf["storm.zookeeper.port"] == d.ports.zookeeper
        assert conf["nimbus.seeds"] == [d.host]


def test_meta_strings_survive_yaml_round_trip():
    d = default_description()
    sup = d.supervisors[0]
    text = storm_yaml.to_yaml(storm_yaml.supervisor_conf(d, sup, local_dir="/x"))
    parsed = yaml.safe_load(text)
    # "2.0" must stay a string in the file, or Storm's validator rejects it.
    assert parsed["supervisor.scheduler.meta"] == dict(sup.meta)
    assert all(isinstance(v, str) for v in parsed["supervisor.scheduler.meta"].values())


def test_nimbus_with_and_without_plugin():
    d = default_description()
    with_plugin = storm_yaml.nimbus_conf(d, local_dir="/n")
    assert with_plugin["storm.scheduler"] == "org.stormplanner.scheduler.PlannerScheduler"
    assert with_plugin["planner.service.port"] == d.ports.planner
    assert with_plugin["planner.service.host"] == d.host
    assert with_plugin["planner.default.algorithm"] == d.planner_algorithm
    assert with_plugin["planner.service.timeout.ms"] == d.planner_timeout_ms
    without = storm_yaml.nimbus_conf(d, local_dir="/n", plugin=False)
    assert "storm.scheduler" not in without
    assert not any(k.startswith("planner.") for k in without)


def test_nimbus_runs_the_described_scheduler():
    d = default_description()
    default = storm_yaml.nimbus_conf(d.with_scheduler("default"), local_dir="/n")
    assert default["storm.scheduler"] == "org.apache.storm.scheduler.DefaultScheduler"
    assert not any(k.startswith("planner.") for k in default)
    ras = storm_yaml.nimbus_conf(d.with_scheduler("resource-aware"), local_dir="/n")
    assert ras["storm.scheduler"] == "org.apache.storm.scheduler.resource.ResourceAwareScheduler"
    assert not any(k.startswith("planner.") for k in ras)
    # The supervisors declare what RAS schedules against, whatever Nimbus runs.
    sup = d.supervisors[0]
    assert storm_yaml.supervisor_conf(d, sup, local_dir="/x")["supervisor.cpu.capacity"] == sup.cpu


def test_description_storm_keys_apply_but_cannot_break_identity():
    d = default_description()
    d = d.__class__(**{**d.__dict__, "storm": {"nimbus.monitor.freq.secs": 7, "supervisor.thrift.port": 1}})
    sup = d.supervisors[0]
    conf = storm_yaml.supervisor_conf(d, sup, local_dir="/x")
    assert conf["nimbus.monitor.freq.secs"] == 7
    assert conf["supervisor.thrift.port"] == sup.thrift_port


def test_external_zookeeper_and_offset():
    d = default_description().with_offset(1000)
    conf = storm_yaml.nimbus_conf(d, local_dir="/n", zookeeper=("zk.example", 2999))
    assert conf["storm.zookeeper.servers"] == ["zk.example"]
    assert conf["storm.zookeeper.port"] == 2999
    assert conf["nimbus.thrift.port"] == 7627


def test_worker_defaults_are_small_and_java17_safe():
    conf = storm_yaml.common_conf(default_description())
    assert "-Xmx256m" in conf["worker.childopts"]
    assert "IgnoreUnrecognizedVMOptions" in conf["worker.childopts"]
    assert conf["nimbus.monitor.freq.secs"] <= 5
    assert conf["supervisor.worker.timeout.secs"] >= 30


def test_zoo_cfg_disables_admin_server():
    text = storm_yaml.zookeeper_cfg(default_description(), data_dir="/zk")
    assert "admin.enableServer=false" in text
    assert "clientPort=2181" in text and "dataDir=/zk" in text
