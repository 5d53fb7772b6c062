"""``random``: the *Random* baseline of *Elastic Allocator: An Adaptive Task Scheduler for
Streaming Query in the Cloud* (SOSE 2014), §V.

"Random ... assign[s] the task in a shuffle manner without any resource constraint": every
executor goes to a node drawn uniformly at random (nodes marked for removal excepted), seeded
by ``options.seed`` so a problem always gets the same plan. One slot per used node, as the
other node-level planners.

Complexity: O(E + N) for E executors and N nodes.
"""
from __future__ import annotations

import random

from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.core.slots import slots_for_nodes
from storm_planner.planners.base import Planner


class RandomPlanner(Planner):
    """Every executor on a node drawn uniformly at random, seeded by ``options.seed``.

    Takes no parameters.
    """

    name = "random"
    summary = "every executor on a node drawn at random (seeded): Elastic Allocator's Random baseline"
    baseline = True
    resource_aware = False  # "without any resource constraint"

    def plan(self, problem: Problem) -> Plan:
        rng = random.Random(problem.options.seed)
        nodes = [n.id for n in problem.nodes if not n.draining] or [n.id for n in problem.nodes]
        node_of = {e.id: rng.choice(nodes) for e in problem.executors}
        return Plan(algorithm=self.name, assignments=slots_for_nodes(problem, node_of))
