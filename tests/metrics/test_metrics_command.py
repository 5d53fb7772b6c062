"""``storm-planner metrics`` against a real ZooKeeper."""
from __future__ import annotations

import json

from metrics_docs import encode, window_doc

from storm_planner.cli import main

TOPOLOGY = "pipe-9-1700000000"


def test_metrics_command_prints_a_table_and_json(zookeeper, kazoo, zk_paths, capsys, monkeypatch):
    monkeypatch.delenv("STORM_PLANNER_NIMBUS", raising=False)
    root = zk_paths[0]
    kazoo.create(f"{root}/{TOPOLOGY}/1", encode(window_doc(TOPOLOGY, "numbers", 1, sent=((2, 1000),),
                                                           threads=((1, 500.0),), speed="2.0", emitted=1000)),
                 makepath=True)
    kazoo.create(f"{root}/{TOPOLOGY}/2", encode(window_doc(TOPOLOGY, "relay", 2, executed=1000)))
    kazoo.create(f"{root}/{TOPOLOGY}/3", b"corrupt")
    common = ["--zookeeper", zookeeper.hosts, "--root", root, "--nimbus", "127.0.0.1:1"]

    assert main(["metrics", "pipe", *common]) == 0
    table = capsys.readouterr().out
    assert "[1-1]" in table and "numbers" in table and "relay" in table
    assert "numbers          -> relay" in table and "100.0" in table
    assert "task 3: not JSON" in table

    assert main(["metrics", TOPOLOGY, "--json", *common]) == 0
    report = json.loads(capsys.readouterr().out)
    spout = report["executors"][0]
    assert spout["cpu_percent"] == 5.0 and spout["load"] == 10.0, "load = CPU percent x speed 2.0"
    assert report["component_traffic"] == [{"from": "numbers", "to": "relay", "rate": 100.0}]


def test_metrics_command_names_what_it_has_when_the_topology_is_unknown(zookeeper, zk_paths, capsys):
    assert main(["metrics", "nothing", "--zookeeper", zookeeper.hosts, "--root", zk_paths[0]]) == 2
    assert "no metrics for 'nothing'" in capsys.readouterr().err
