"""Before any metrics, topDown's family weighs IMC in bytes: an anchored user tuple against an acker message.

The end-to-end bench's grid (trends at 400 t/s, 4 supervisors under CPU quotas, 2 Mbit/s links, 4 ackers)
measured topdown's placement sending more bytes over the links per tuple than RAS's (618 against 415): its
first plan, made before any metrics, weighed IMC in tuples because no user stream had a size yet, and per
tweet the spout exchanges two acker messages (init, completion) but one data tuple with a count; so the spout
stayed with three ackers and every tweet crossed a link to a count. Here each bench workload is built as the
plugin sends it (the streamparse topology's graph, 4 ackers, 10 % declared per executor) and converted by the
service (``problem_from_thrift``), with no metrics.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from storm_planner.bench._e2e_workloads import WORKLOADS
from storm_planner.core.problem import Problem
from storm_planner.core.system_streams import ACK_PAYLOAD_BYTES, ACKER, ANCHOR_BYTES, PRIOR_VALUES_BYTES
from storm_planner.planners.base import run
from storm_planner.planners.chatzistergiou._groups import imc_unknown_bytes, job_graph
from storm_planner.profiling.project import load_project_topology
from storm_planner.service.contract import planner_thrift as T
from storm_planner.service.convert import problem_from_thrift

ROOT = Path(__file__).resolve().parents[2]
PLANNERS = ("topdown", "tasklevel", "topdown-ls")
# benchmarks/e2e/cluster.yaml: quotas of 45 % (i7) and 35 % (i5), speed 1.0, 2 Mbit/s links.
SUPERVISORS = [("i7-a", 45.0), ("i7-b", 45.0), ("i5-a", 35.0), ("i5-b", 35.0)]


def bench_nodes():
    return [T.Node(id=n, host=n, cpu_capacity=cpu, memory_mb=2048.0, free_ports=[6700, 6701, 6702], used_ports=[],
                   meta={"speed": "1.0", "machine.type": n[:2], "network.bandwidth.mbit": "2"})
            for n, cpu in SUPERVISORS]


def request(name: str, options: dict | None = None):
    """The workload's TopologySpec as the plugin sends it at submission (executors numbered as Storm does)."""
    workload = WORKLOADS[name]
    topology = load_project_topology(ROOT / workload.project, workload.topology)
    parallelism = {c.name: c.hint_for(None) for c in topology.components} | {ACKER: workload.ackers}
    kinds = {c.name: c.kind for c in topology.components}
    components = [T.Component(id=c, type=kinds.get(c, "bolt"), parallelism=n, system=c.startswith("__"))
                  for c, n in sorted(parallelism.items())]
    streams = [T.Stream(from_component=source, to_component=c.name, grouping=grouping, stream_id=stream)
               for c in topology.components for source, stream, grouping in c.inputs]
    executors = [T.Executor(id=f"[{k}-{k}]", component=c, cpu=10.0, memory_mb=128.0)
                 for k, c in enumerate((c.id for c in components for _ in range(c.parallelism)), 1)]
    return T.TopologySpec(id=f"e2e-{name}-1", name=f"e2e-{name}", components=components, streams=streams,
                          executors=executors, num_workers=workload.workers, worker_max_heap_mb=768.0,
                          options=dict(options or {}))


def first_problem(name: str, options: dict | None = None) -> Problem:
    return problem_from_thrift(request(name, options), bench_nodes())


def crossing_bytes(name: str, plan, user_bytes: float) -> float:
    """Bytes/s crossing nodes by the kit's traffic model, every user tuple ``user_bytes`` on the wire."""
    problem = first_problem(name, {"planner.tuple.bytes": str(user_bytes)})
    use = problem.traffic_model.network({e: s.node for e, s in plan.assignments.items()})
    return sum(use.values()) / 2 * 1e6 / 8   # each crossing is counted at both ends


def component_nodes(problem: Problem, plan) -> dict[str, set[str]]:
    component = {e.id: e.component for e in problem.executors}
    where: dict[str, set[str]] = {}
    for executor, slot in plan.assignments.items():
        where.setdefault(component[executor], set()).add(slot.node)
    return where


@pytest.mark.parametrize("overhead", [None, "0", "40", "100"])
def test_an_anchored_user_tuple_of_unknown_size_outweighs_an_acker_message(overhead):
    """Storm's wire format: a user tuple's message id carries, per anchor, the two ids an acker message carries
    as its values; so a user tuple weighs an acker message plus its own values, whatever the envelope."""
    options = {} if overhead is None else {"planner.network.tuple.overhead.bytes": overhead}
    problem = first_problem("trends-link", options)
    ack = {s.tuple_bytes for s in problem.streams if ACKER in (s.source, s.target)}
    assert len(ack) == 1
    (ack_bytes,) = ack
    prior = imc_unknown_bytes(problem, "auto")
    assert prior == pytest.approx(ack_bytes + PRIOR_VALUES_BYTES)
    assert prior > ack_bytes and ANCHOR_BYTES <= ACK_PAYLOAD_BYTES
    assert imc_unknown_bytes(problem, "tuples") is None


def test_per_tuple_the_acker_messages_never_outweigh_the_data_stream_they_acknowledge():
    """trends' job graph before metrics: per tweet, the spout sends a count one data tuple and exchanges two acker
    messages; the data tuple weighs more than either message, and the count's one ack weighs less than the
    tweet it acknowledges. Weighed in tuples (the code before) the messages weighed the same as the tweet."""
    problem = first_problem("trends-link")

    def pair_imc(graph):
        return {frozenset((graph.groups[p.first].component, graph.groups[p.second].component)): p.imc
                for p in graph.pairs}

    weighed = pair_imc(job_graph(problem, unknown_bytes=imc_unknown_bytes(problem, "auto")))
    tweets_count, tweets_acker = weighed[frozenset(("tweets", "count"))], weighed[frozenset(("tweets", ACKER))]
    assert tweets_count > tweets_acker / 2                          # one data tuple > one of the two messages
    assert tweets_count > weighed[frozenset(("count", ACKER))]      # a tweet > the ack it takes
    in_tuples = pair_imc(job_graph(problem))
    assert in_tuples[frozenset(("tweets", ACKER))] == pytest.approx(2 * in_tuples[frozenset(("tweets", "count"))])


@pytest.mark.parametrize("planner", PLANNERS)
def test_trends_first_plan_keeps_the_tweets_spout_with_a_count(planner):
    """The grid's topdown (and tasklevel) first plan put tweets with three ackers and both counts elsewhere;
    weighed in bytes the spout shares its node with a count, and fewer bytes cross nodes than before."""
    problem = first_problem("trends-link")
    plan = run(problem, planner)
    where = component_nodes(problem, plan)
    assert where["tweets"] & where["count"], where
    assert any(note.startswith("IMC weighed in bytes/s (imc_unit auto; a tuple of unknown size weighs 80 B")
               for note in plan.notes), plan.notes
    before = run(problem, planner, imc_unit="tuples")
    assert crossing_bytes("trends-link", plan, 80.0) <= crossing_bytes("trends-link", before, 80.0)


def test_trends_first_plan_weighed_in_tuples_is_the_grids():
    """The control: weighed in tuples (the service of the grid), topdown makes the grid's placement."""
    problem = first_problem("trends-link")
    where = component_nodes(problem, run(problem, "topdown", imc_unit="tuples"))
    assert where["tweets"] == {"i7-a"} and not where["tweets"] & where["count"]


@pytest.mark.parametrize("planner", PLANNERS)
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_no_bench_workload_first_plan_sends_more_bytes_across_nodes_than_weighed_in_tuples(name, planner):
    """By the model's own measure (bytes crossing nodes, a user tuple at the prior's 80 B), weighing in bytes
    never makes a bench workload's first plan worse than weighing in tuples did."""
    problem = first_problem(name)
    weighed = crossing_bytes(name, run(problem, planner), 80.0)
    in_tuples = crossing_bytes(name, run(problem, planner, imc_unit="tuples"), 80.0)
    assert weighed <= in_tuples * (1 + 1e-9)


def test_topk_keeps_the_plan_weighed_in_tuples_where_the_prior_alone_would_part_the_ackers_from_the_spout():
    """Top-K on the bench: weighed by the prior alone, topDown fills the spout's node with both counts and their
    sink before an acker fits, and every init, completion and ack crosses a link; the plan weighed in tuples
    collocates more bytes, so auto keeps it and says so."""
    problem = first_problem("topk-link")
    forced = run(problem, "topdown", imc_unit="bytes")
    auto = run(problem, "topdown")
    where = component_nodes(problem, forced)
    assert not where["requests"] & where[ACKER]
    assert crossing_bytes("topk-link", auto, 80.0) < crossing_bytes("topk-link", forced, 80.0)
    assert any("the plan weighed in tuples/s keeps more IMC off the network" in note for note in auto.notes)
