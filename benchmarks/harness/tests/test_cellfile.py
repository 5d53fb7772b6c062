"""A cluster run's per-cell records in one file (``<out>/cells.jsonl``): parts join their cell's record, a part
written again replaces the old, and a run from before the file (a file per cell and part) still reads."""
from __future__ import annotations

import json

import pytest

from storm_planner_bench.common.cellfile import CELLS_FILE, cell_part, read_cells, save_cell_part


def test_each_cell_is_one_record_whose_parts_join_it_as_they_are_written(tmp_path):
    save_cell_part(tmp_path, "topk-400-ras-1", "latency", [1.0, 2.0])
    save_cell_part(tmp_path, "topk-400-ras-2", "startup", {"launch": 14.0})
    save_cell_part(tmp_path, "topk-400-ras-1", "plans", [{"topology": "t-1"}])
    save_cell_part(tmp_path, "topk-400-ras-1", "latency", [3.0])   # a cell run again
    lines = [json.loads(line) for line in (tmp_path / CELLS_FILE).read_text().splitlines()]
    assert lines == [{"cell": "topk-400-ras-1", "latency": [3.0], "plans": [{"topology": "t-1"}]},
                     {"cell": "topk-400-ras-2", "startup": {"launch": 14.0}}]
    assert list(read_cells(tmp_path)) == ["topk-400-ras-1", "topk-400-ras-2"]
    assert cell_part(tmp_path, "topk-400-ras-2", "startup") == {"launch": 14.0}
    assert cell_part(tmp_path, "topk-400-ras-2", "latency") is None and cell_part(tmp_path, "other", "plans") is None
    assert not list(tmp_path.glob("*.tmp"))


def test_a_run_from_before_the_file_is_read_from_its_files_per_cell(tmp_path):
    (tmp_path / "latency").mkdir()
    (tmp_path / "latency" / "c-1.json").write_text("[1.5, 2.5]\n")
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "c-1.jsonl").write_text('{"topology": "t-1"}\n{"topology": "t-1", "error": "x"}\n')
    (tmp_path / "startup").mkdir()
    (tmp_path / "startup" / "c-1.json").write_text("not json")
    assert read_cells(tmp_path) == {}
    assert cell_part(tmp_path, "c-1", "latency") == [1.5, 2.5]
    assert cell_part(tmp_path, "c-1", "plans") == [{"topology": "t-1"}, {"topology": "t-1", "error": "x"}]
    assert cell_part(tmp_path, "c-1", "startup") is None and cell_part(tmp_path, "c-1", "executors") is None
    save_cell_part(tmp_path, "c-1", "latency", [9.0])   # the record, once there, is what counts
    assert cell_part(tmp_path, "c-1", "latency") == [9.0]


def test_only_the_known_parts_are_kept(tmp_path):
    with pytest.raises(ValueError, match="'sink' is not a part"):
        save_cell_part(tmp_path, "c-1", "sink", [])
    assert not (tmp_path / CELLS_FILE).exists()
