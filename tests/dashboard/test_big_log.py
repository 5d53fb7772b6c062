"""A plan log of tens of MB, served by the real dashboard process: the health check answers while the
log is read (the reading runs off the event loop), and what a refresh ships stays bounded."""
from __future__ import annotations

import json
import threading
import time
import urllib.request

HEALTH_BOUND_S = 2.0   # generous: a health check is one small JSON reply


def write_big_log(path, megabytes: int = 40) -> int:
    record = {"time": 1763950000.0, "event": "plan", "topology": "big-1-1763949990", "algorithm": "topdown",
              "assignments": {f"[{i}-{i}]": f"sup-{i % 4}:{6700 + i % 3}" for i in range(60)},
              "figures": {"imc_gain": 1.5, "load_distance": 0.1, "migrations": 2}, "solve_ms": 3.2,
              "notes": ["n" * 200], "error": None}
    line = (json.dumps(record) + "\n").encode()
    with path.open("wb") as out:
        for _ in range(megabytes * 2**20 // len(line)):
            out.write(line)
    return path.stat().st_size


def get(url: str, timeout_s: float = 120.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return response.read()


def test_health_answers_while_a_big_log_is_read_and_the_snapshot_stays_small(dashboard_process, tmp_path):
    log = tmp_path / "plans.jsonl"
    size = write_big_log(log)
    url = dashboard_process("--plan-log", str(log))
    snapshot: dict = {}
    loader = threading.Thread(target=lambda: snapshot.update(body=get(url + "/api/snapshot")))
    loader.start()
    answered_during_load = []
    while loader.is_alive():
        started = time.monotonic()
        health = json.loads(get(url + "/api/health", timeout_s=30))
        took = time.monotonic() - started
        assert health["ok"] and took < HEALTH_BOUND_S, f"/api/health took {took:.2f} s while the log was read"
        if loader.is_alive() and health["plan_log"]["loading"]:
            answered_during_load.append(health["plan_log"]["bytes_read"])
        time.sleep(0.05)
    loader.join()
    assert answered_during_load, "the log was read before any health check came: make it bigger"
    body = snapshot["body"]
    snap = json.loads(body)
    assert snap["plans_total"] == snap["plan_log"]["plans"] > 20_000
    assert len(snap["plans"]) == 200 and snap["plan_log"]["bytes_read"] == size
    assert len(body) < 1_000_000 < size // 40, f"a refresh shipped {len(body):,} bytes"
