"""Chatzistergiou & Viglas (CIKM 2014), §7: the jobs their planners are evaluated on.

* :func:`random_job` — §7.3's random-graph protocol: 3–7 groups, 17 tasks, 500% total cost
  correlated with the task count, fanout 1/2/3 at 70/25/5%, IMC 5–20 MB/s, 8 nodes × 100%;
* :func:`pipeline_job` — §7.2's speed test: 4 groups × 100 tasks in a pipeline;
* :func:`scale_job` — a production-sized job (1,000 nodes, ~50,000 executors);
* :func:`mixed_job` — groups of several sizes that share nodes;
* :func:`priority_job`, :func:`task_count_job` — §7.1 / Figure 4: prioritisation by relative
  significance vs by IMC, and the task-count sweep.

Pure functions of their arguments (and a seed) returning problem-file dicts. The
benchmarks that use them: :mod:`storm_planner_bench.sim.topdown`.
"""
from __future__ import annotations

import random
from typing import Any


def random_job(rng: random.Random, tasks: int = 17, groups: tuple[int, int] = (3, 7),
               total_cost: float = 500.0, nodes: int = 8, capacity: float = 100.0,
               cost_spread: float = 0.0, imc: tuple[float, float] = (5.0, 20.0),
               seed: int = 1) -> dict[str, Any]:
    """One random job of §7.3 (reconstruction of the paper's "custom graph generator").

    The number of groups is uniform in ``groups``; each group gets one task and the
    other ``tasks - groups`` are dealt uniformly at random. The 500% of processing
    cost is split in proportion to task count times a uniform factor in
    [1 - cost_spread, 1 + cost_spread]. The paper: "a total processing cost of
    500% which is also randomly distributed across the available groups. We do
    this by correlating the amount of PC assigned to the number of tasks in each
    group" - read literally, the randomness comes from the task counts and PC is
    proportional to them (``cost_spread=0``, the default); a spread adds noise the
    paper does not describe (the report measures 0.25 and 0.5 too). Groups are numbered in topological order; every group
    but the last gets a fanout of 1, 2 or 3 (probabilities 70/25/5%, capped by the
    groups after it) to distinct later groups, so the graph is acyclic and
    connected. Each edge carries a uniform IMC in ``imc`` (MB/s), spread
    uniformly over its task pairs.
    """
    group_count = rng.randint(*groups)
    counts = [1] * group_count
    for _ in range(tasks - group_count):
        counts[rng.randrange(group_count)] += 1
    weights = [n * rng.uniform(1.0 - cost_spread, 1.0 + cost_spread) for n in counts]
    costs = [total_cost * w / sum(weights) for w in weights]
    streams = []
    for source in range(group_count - 1):
        fanout = min(rng.choices((1, 2, 3), (0.70, 0.25, 0.05))[0], group_count - 1 - source)
        for target in sorted(rng.sample(range(source + 1, group_count), fanout)):
            streams.append({"from": f"g{source}", "to": f"g{target}", "grouping": "shuffle",
                            "rate": round(rng.uniform(*imc), 6)})
    return {
        "nodes": [{"id": f"n{k}", "capacity": capacity} for k in range(nodes)],
        "topology": {"id": "random-job", "components": [
            {"id": f"g{i}", "type": "spout" if i == 0 else "bolt", "executors": counts[i],
             "cost": round(costs[i], 6)} for i in range(group_count)], "streams": streams},
        "options": {"seed": seed},
    }


def pipeline_job(groups: int = 4, tasks: int = 100, nodes: int = 10, capacity: float = 100.0,
                 cost: float = 200.0, imc: float = 100.0) -> dict[str, Any]:
    """§7.2: a pipeline of equal groups with approximately equal IMC (+1% per edge)."""
    return {
        "nodes": [{"id": f"n{k}", "capacity": capacity} for k in range(nodes)],
        "topology": {"id": "pipeline", "components": [
            {"id": f"g{i}", "executors": tasks, "cost": cost} for i in range(groups)],
            "streams": [{"from": f"g{i}", "to": f"g{i + 1}", "rate": imc * (1 + 0.01 * i)}
                        for i in range(groups - 1)]},
    }


def scale_job(seed: int = 1, nodes: int = 1000, executors: int = 50_000, components: int = 5000,
              capacity: float = 400.0, fill: float = 0.5, sparse_targets: int | None = None
              ) -> dict[str, Any]:
    """A big cluster: ``nodes`` heterogeneous supervisors (speed 1, 1.5 or 2), one topology.

    Components form a random DAG (fanout as in §7.3). Executor loads are skewed:
    a quarter of them carry twice the load (hot keys), so §5's sub-groups appear.
    Loads fill ``fill`` of the effective capacity. Without ``sparse_targets``
    the traffic is derived (every executor pair of a stream, as shuffle); with
    it, each executor sends to that many random executors of each downstream
    component (measured, sparse traffic).
    """
    rng = random.Random(seed)
    node_list: list[dict[str, Any]] = [{"id": f"sup-{k:04d}", "capacity": capacity, "speed": rng.choice((1.0, 1.5, 2.0)),
                  "slots": [6700, 6701]} for k in range(nodes)]
    per_component = executors // components
    names = [f"c{i:04d}" for i in range(components)]
    raw_loads = []
    for _ in names:
        base = rng.uniform(0.5, 1.5)
        raw_loads.append([base * rng.choice((1, 1, 1, 2)) for _ in range(per_component)])
    total_capacity = sum(n["capacity"] * n["speed"] for n in node_list)
    scale = fill * total_capacity / sum(map(sum, raw_loads))
    executor_list = [{"id": f"{name}/{i}", "component": name, "load": load * scale}
                     for name, loads in zip(names, raw_loads) for i, load in enumerate(loads)]
    streams, traffic = [], []
    for i in range(components - 1):
        fanout = min(rng.choices((1, 2, 3), (0.70, 0.25, 0.05))[0], components - 1 - i)
        for j in sorted(rng.sample(range(i + 1, components), fanout)):
            rate = rng.uniform(5.0, 20.0) * per_component
            streams.append({"from": names[i], "to": names[j], "rate": rate})
            if sparse_targets:
                share = rate / (per_component * sparse_targets)
                for s in range(per_component):
                    for t in rng.sample(range(per_component), sparse_targets):
                        traffic.append({"from": f"{names[i]}/{s}", "to": f"{names[j]}/{t}", "rate": share})
    problem = {
        "nodes": node_list,
        "topology": {"id": "scale", "components": [
            {"id": name, "executors": per_component, "cost": sum(loads) * scale}
            for name, loads in zip(names, raw_loads)], "streams": streams},
        "executors": executor_list,
    }
    if traffic:
        problem["traffic"] = traffic
    return problem


def mixed_job(seed: int, fill: float = 0.5) -> dict[str, Any]:
    """A small problem with everything the paper's model leaves out, for invariant tests.

    2-6 nodes of mixed capacity and speed, some draining; 2-5 components with
    1-6 executors and skewed loads (a third carry three times the load); measured,
    non-uniform traffic on a random subset of each stream's executor pairs; a
    partial current assignment. Loads fill ``fill`` of the usable effective
    capacity and no executor exceeds 30% of the smallest usable node, so a
    packing always exists (best fit cannot fail: a task that fits nowhere would
    mean every node is over 70% full).
    """
    rng = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    for k in range(rng.randint(2, 6)):
        nodes.append({"id": f"sup-{k}", "capacity": rng.choice((100.0, 200.0, 400.0)),
                      "speed": rng.choice((0.5, 1.0, 1.5, 2.0)), "slots": [6700, 6701],
                      "draining": k > 0 and rng.random() < 0.2})
    usable = [n["capacity"] * n["speed"] for n in nodes if not n["draining"]]
    components = [f"c{i}" for i in range(rng.randint(2, 5))]
    raw = [(c, f"{c}/{i}", rng.uniform(2.0, 20.0) * rng.choice((1, 1, 3)))
           for c in components for i in range(rng.randint(1, 6))]
    scale = min(fill * sum(usable) / sum(load for *_, load in raw), 0.3 * min(usable) / max(load for *_, load in raw))
    executors = [{"id": e, "component": c, "load": round(load * scale, 6)} for c, e, load in raw]
    members = {c: [e["id"] for e in executors if e["component"] == c] for c in components}
    streams, traffic = [], []
    for i, source in enumerate(components[:-1]):
        for target in rng.sample(components[i + 1:], min(len(components) - 1 - i, rng.randint(1, 2))):
            streams.append({"from": source, "to": target, "grouping": "fields", "rate": 1.0})
            for a in members[source]:
                for b in members[target]:
                    if rng.random() < 0.7:
                        traffic.append({"from": a, "to": b, "rate": round(rng.uniform(0.1, 10.0), 4)})
    current = {e["id"]: f"{rng.choice(nodes)['id']}:6700" for e in executors if rng.random() < 0.5}
    return {"nodes": nodes, "topology": {"id": f"mixed-{seed}", "components": [
                {"id": c, "executors": len(members[c]),
                 "cost": round(sum(e["load"] for e in executors if e["component"] == c), 6)}
                for c in components], "streams": streams},
            "executors": executors, "traffic": traffic or None, "current": current,
            "options": {"seed": seed}}


def priority_job(second_imc: float, first_imc: float = 10.0, nodes: int = 6) -> dict[str, Any]:
    """§7.1 "task prioritisation": pipeline a -> b -> c, a and b equal, c much heavier."""
    return {
        "nodes": [{"id": f"n{k}", "capacity": 100.0} for k in range(nodes)],
        "topology": {"id": "priority", "components": [
            {"id": "a", "executors": 10, "cost": 80.0}, {"id": "b", "executors": 10, "cost": 80.0},
            {"id": "c", "executors": 10, "cost": 320.0}],
            "streams": [{"from": "a", "to": "b", "rate": first_imc},
                        {"from": "b", "to": "c", "rate": second_imc}]},
    }


def task_count_job(factor: int, nodes: int = 6, spare: float = 80.0, node_capacity: float = 100.0,
                   imc: float = 100.0) -> dict[str, Any]:
    """§7.1 "impact of task count": a group pair, 10 tasks and 10 x ``factor`` tasks,
    each group costing twice a node's capacity, on nodes with ``spare`` capacity."""
    return {
        "nodes": [{"id": f"n{k}", "capacity": spare} for k in range(nodes)],
        "topology": {"id": "task-count", "components": [
            {"id": "a", "executors": 10, "cost": 2 * node_capacity},
            {"id": "b", "executors": 10 * factor, "cost": 2 * node_capacity}],
            "streams": [{"from": "a", "to": "b", "rate": imc}]},
    }


__all__ = ["mixed_job", "pipeline_job", "priority_job", "random_job", "scale_job", "task_count_job"]
