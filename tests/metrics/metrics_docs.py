"""Window documents as the metrics hook writes them, for the tests."""
from __future__ import annotations

import json
import time


def window_doc(topology: str, component: str, task: int, *, seq: int = 1, end_ms: int | None = None,
               duration_ms: int = 10_000, node: str = "sup-fast", pid: int = 100, port: int = 6700,
               threads=((1, 200.0),), subprocess_ms: float = 0.0, sent=(), received=(), executed: int = 0,
               emitted: int = 0, speed: str | None = None, state_mb=None,
               process_ms: float | None = None) -> dict:
    """A window document as the hook writes it; ``sent`` is ((to_task, tuples), ...)."""
    end = int(time.time() * 1000) if end_ms is None else end_ms
    return {
        "version": 1, "topology": topology, "component": component, "task": task,
        "worker": {"host": "127.0.0.1", "port": port, "node": node, "pid": pid,
                   "meta": {"speed": speed} if speed else {}},
        "window": {"seq": seq, "start_ms": end - duration_ms, "end_ms": end, "period_s": duration_ms / 1000},
        "cpu": {"threads": [{"id": i, "name": f"t{i}", "ms": ms} for i, ms in threads],
                "thread_cpu_supported": True, "subprocess_ms": subprocess_ms, "subprocesses": 1 if subprocess_ms else 0,
                **({"process_ms": process_ms} if process_ms is not None else {})},
        "emitted": {"tuples": emitted, "total": emitted * seq},
        "executed": {"tuples": executed, "total": executed * seq, "latency_ms_sum": 0, "latency_samples": 0},
        "acked": {"tuples": 0, "total": 0}, "failed": {"tuples": 0, "total": 0},
        "sent": [{"stream": "default", "to": to, "tuples": n, "bytes": 10 * n, "total": n * seq,
                  "bytes_total": 10 * n * seq} for to, n in sent],
        "received": [{"stream": "default", "from": src, "tuples": n, "total": n * seq} for src, n in received],
        "state_mb": state_mb,
    }


def encode(doc: dict) -> bytes:
    return json.dumps(doc).encode()
