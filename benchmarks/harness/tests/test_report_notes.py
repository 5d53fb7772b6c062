"""A run's hand-written notes (``<out>/notes.md``) join its report, which may lie in another folder
(``<out>.md`` beside ``<out>``): their relative links are rebased so that they resolve in both files."""
from __future__ import annotations

import re

from storm_planner_bench.common.report import notes_section, rebase_links

LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_links_written_in_the_notes_folder_resolve_from_the_report_one_level_up(tmp_path):
    out = tmp_path / "reports" / "e2e"
    out.mkdir(parents=True)
    (out / "cells.csv").write_text("x\n")
    (tmp_path / "reports" / "e2e-wire.md").write_text("# wire\n")
    (out / "notes.md").write_text("See [the fit](../e2e-wire.md#trends) and [every cell](cells.csv).\n")
    report = tmp_path / "reports" / "e2e.md"
    section = notes_section(out, report)
    assert section.startswith("## Notes\n\n")
    assert "[the fit](e2e-wire.md#trends)" in section and "[every cell](e2e/cells.csv)" in section
    for target in LINK.findall(section):
        assert (report.parent / target.split("#")[0]).exists(), target


def test_a_report_in_the_notes_own_folder_keeps_the_links_as_written(tmp_path):
    (tmp_path / "notes.md").write_text("[panels](job3.png), [up](../other.md)\n")
    assert "[panels](job3.png), [up](../other.md)" in notes_section(tmp_path, tmp_path / "job3.md")


def test_urls_anchors_and_absolute_paths_stay_as_written(tmp_path):
    text = "[paper](https://example.org/a.pdf) [here](#notes) [root](/etc/hosts) [mail](mailto:a@b.c)"
    assert rebase_links(text, tmp_path / "a", tmp_path) == text


def test_no_notes_no_section(tmp_path):
    assert notes_section(tmp_path, tmp_path.parent / "report.md") == ""
