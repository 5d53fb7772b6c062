"""How Storm spreads a component's tasks over its executors, and which executor counts relieve the busiest."""
from __future__ import annotations

import pytest

from storm_planner.core.tasks import next_useful_count, storm_split


@pytest.mark.parametrize(("tasks", "executors", "split"), [
    (4, 2, [2, 2]), (4, 3, [2, 1, 1]), (10, 3, [4, 3, 3]), (9, 5, [2, 2, 2, 2, 1]), (3, 5, [1, 1, 1]), (1, 1, [1]),
])
def test_the_split_is_storms_partition_fixed(tasks, executors, split):
    # Storm's Utils.partitionFixed: partitionFixed(3, [1..10]) -> [[1,2,3,4], [5,6,7], [8,9,10]].
    assert storm_split(tasks, executors) == split
    assert sum(split) == tasks


def test_a_split_of_nothing_is_refused():
    with pytest.raises(ValueError, match="positive"):
        storm_split(0, 2)


@pytest.mark.parametrize(("tasks", "executors", "useful"), [
    (4, 2, 4), (4, 1, 2), (6, 3, 6), (5, 2, 3), (4, 4, None), (8, 3, 4), (1, 1, None),
])
def test_the_next_useful_count_gives_the_busiest_executor_fewer_tasks(tasks, executors, useful):
    assert next_useful_count(tasks, executors) == useful
    if useful is not None:
        assert max(storm_split(tasks, useful)) < max(storm_split(tasks, executors))
        assert all(max(storm_split(tasks, n)) == max(storm_split(tasks, executors)) for n in range(executors, useful))
