"""Every relative link in the repository's markdown (README, docs, benchmark reports and their notes,
topologies) points at a file that exists: reports are rewritten by code, notes by hand, and a report whose
notes are embedded one folder up once linked to nothing."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.S)
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


def test_the_repository_has_markdown_to_check():
    names = {p.relative_to(ROOT).as_posix() for p in markdown_files()}
    assert {"README.md", "benchmarks/reports/e2e.md"} <= names


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_a_link_to_nothing_is_found(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("x")
    page.write_text("[ok](there.md#a) [gone](../nowhere.md) [web](https://example.org)\n```\n[code](x.md)\n```\n")
    assert broken_links(page) == ["../nowhere.md"]
