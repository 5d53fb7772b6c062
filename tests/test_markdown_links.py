"""Every relative link in the repository's markdown (README, docs, benchmark reports and their notes,
topologies) points at a file that exists: reports are rewritten by code, notes by hand, and a report whose
notes are embedded one folder up once linked to nothing. A link's ``#anchor`` into a markdown file names one of
its headings (as GitHub makes their anchors): the conclusions of deleted benchmark runs are linked to their
sections of benchmarks/README.md."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.S)
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
# Outside a git checkout: every folder but these and those whose name starts with a dot (.git, .venv, caches).
SKIPPED = {"node_modules", "target", "build"}


def markdown_files() -> list[Path]:
    """The markdown git tracks (build/ holds copies the compose tests make, with links for another tree)."""
    listed = subprocess.run(["git", "ls-files", "-z", "*.md"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0:
        return sorted(ROOT / name for name in listed.stdout.split("\0") if name)
    return sorted(p for p in ROOT.rglob("*.md")
                  if not any(part in SKIPPED or part.startswith(".") for part in p.relative_to(ROOT).parts[:-1]))


def broken_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(errors="replace"))
    targets = (link.split("#")[0] for link in LINK.findall(text))
    return [t for t in targets if t and not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", t) and not t.startswith("/")
            and not (path.parent / t).exists()]


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_anchors(path: Path) -> list[str]:
    """The relative links of ``path`` whose ``#anchor`` names no heading of the markdown file they point at."""
    broken = []
    for link in LINK.findall(FENCE.sub("", path.read_text(errors="replace"))):
        target, _, fragment = link.partition("#")
        if not fragment or re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
            continue
        page = path.parent / target if target else path
        if page.suffix != ".md" or not page.is_file():
            continue
        if fragment not in {anchor(h) for h in HEADING.findall(FENCE.sub("", page.read_text(errors="replace")))}:
            broken.append(link)
    return broken


def test_the_repository_has_markdown_to_check():
    names = {p.relative_to(ROOT).as_posix() for p in markdown_files()}
    assert {"README.md", "benchmarks/reports/e2e.md"} <= names


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_every_anchor_names_a_heading():
    broken = {p.relative_to(ROOT).as_posix(): found for p in markdown_files() if (found := broken_anchors(p))}
    assert broken == {}


def test_an_anchor_to_no_heading_is_found(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# There\n\n## ALBIC's jobs (`bench albic-real`)\n```\n# not a heading\n```\n")
    page.write_text("## Here\n[a](there.md#albics-jobs-bench-albic-real) [b](there.md#nowhere) [c](#here) [d](#gone) "
                    "[e](there.md#not-a-heading) [web](https://example.org/x.md#y)\n")
    assert broken_anchors(page) == ["there.md#nowhere", "#gone", "there.md#not-a-heading"]


def test_a_link_to_nothing_is_found(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("x")
    page.write_text("[ok](there.md#a) [gone](../nowhere.md) [web](https://example.org)\n```\n[code](x.md)\n```\n")
    assert broken_links(page) == ["../nowhere.md"]
