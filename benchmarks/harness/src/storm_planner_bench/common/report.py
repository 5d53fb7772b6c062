"""How a benchmark is declared and what every benchmark writes.

A benchmark is one :class:`Benchmark`: its name after ``storm-planner bench``, its help, its
arguments and the function that runs it; each module of :mod:`storm_planner_bench` lists its own in
``BENCHMARKS`` (:mod:`storm_planner_bench.commands` registers them). Benchmarks made of experiments
that share ``--out``, ``--seed`` and ``--quick`` are built by :func:`experiments_benchmark`.

What a simulated benchmark produces goes through :func:`storm_planner_bench.common.results.publish`: one
CSV of all its tables, one markdown report with a section per table, the figures. Tables written a row at a
time (a resumable run) use :func:`append_csv` and :func:`read_csv`.
What a person wrote about a run (``<out>/notes.md``) joins the report through :func:`notes_section`.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from storm_planner.progress import Progress, print_progress
from storm_planner_bench.common.results import Renderer, markdown_table, regenerate, report_path

__all__ = ["Argument", "Benchmark", "Progress", "append_csv", "argument", "command_line", "experiments_benchmark",
           "markdown_table", "print_progress", "pyplot", "read_csv", "report_only", "stamped_progress", "write_csv"]

# An experiment: (output folder, seed, quick, the command that reproduces it) -> its rows.
Experiment = Callable[[Path, int, bool, str], Any]


@dataclass(frozen=True)
class Argument:
    """One argument of a benchmark: what ``ArgumentParser.add_argument`` takes."""
    flags: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


def argument(*flags: str, **options: Any) -> Argument:
    """An :class:`Argument`, written as the ``add_argument`` call it stands for."""
    return Argument(flags, options)


@dataclass(frozen=True)
class Benchmark:
    """``storm-planner bench NAME``: its help line, its arguments, and ``run(args) -> exit status``.
    ``experiments`` names the experiments of a benchmark made of them (its ``EXPERIMENT`` argument)."""
    name: str
    help: str
    arguments: Sequence[Argument]
    run: Callable[[argparse.Namespace], int]
    experiments: tuple[str, ...] = ()

    def add_to(self, subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        """Register the benchmark as a sub-command; its handler is :attr:`run`. The help line is plain text
        (argparse would read a '%' in it as a format)."""
        parser = subparsers.add_parser(self.name, help=self.help.replace("%", "%%"))
        for arg in self.arguments:
            parser.add_argument(*arg.flags, **arg.options)
        parser.set_defaults(handler=self.run)
        return parser


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Rows (dicts, in column order) as a CSV file with a header line naming every column."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        # every key of every row, in first-seen order (rows may add columns)
        writer = csv.DictWriter(handle, fieldnames=list(dict.fromkeys(k for row in rows for k in row)))
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """A CSV file written by :func:`write_csv` or :func:`append_csv`: its columns and its rows (text)."""
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def code_version(repo: Path | None = None) -> str:
    """The commit the code runs from (``<sha>``, ``<sha>+changes`` with uncommitted changes to tracked
    files, ``unknown`` outside a git checkout): a run resumed over several sittings shows per row which code
    measured it."""
    import subprocess

    where = str(repo or Path(__file__).resolve().parent)
    try:
        sha = subprocess.run(["git", "-C", where, "rev-parse", "--short=7", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}+changes" if dirty else sha or "unknown"


def append_csv(path: Path, header: Sequence[str], row: Mapping[str, Any]) -> None:
    """Append one row to ``path`` (the header first when the file is new; a missing cell stays empty),
    so that a long run keeps every row it finished."""
    append_csv_rows(path, header, [row])


def drop_csv_rows(path: Path, header: Sequence[str], drop: Callable[[dict[str, str]], bool]) -> int:
    """Rewrite ``path`` without the rows ``drop`` picks (runs about to be run again), whole or not at all;
    returns how many went."""
    if not path.exists():
        return 0
    _, rows = read_csv(path)
    kept = [row for row in rows if not drop(row)]
    if len(kept) != len(rows):
        rewrite_csv(path, header, kept)
    return len(rows) - len(kept)


def rewrite_csv(path: Path, header: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """``path`` holding ``rows`` under ``header`` (columns a row lacks left blank), whole or not at all: a
    new file replaces it. A line a kill cut short, glued to the next row, reads with its surplus fields
    under None: kept as far as the header goes."""
    fresh = path.with_name(path.name + ".new")
    fresh.unlink(missing_ok=True)
    append_csv_rows(fresh, header, [{k: v for k, v in row.items() if k is not None} for row in rows])
    fresh.replace(path)


# A run or cell whose topology never acked a tuple says so in its status: a start that failed (a slow
# worker, a busy host), not a figure; a resumed bench runs it again.
NEVER_STARTED = ("no tuple acked within", "not run: no tuple acked within")


def never_started(row: Mapping[str, Any]) -> bool:
    return str(row.get("status") or "").startswith(NEVER_STARTED)


def append_csv_rows(path: Path, header: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Append rows that belong together (a run's steps) in one write, so that a stopped run leaves all of
    them or none."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(header), restval="")
    if not path.exists():
        writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", newline="") as handle:
        handle.write(text.getvalue())


_LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def rebase_links(markdown: str, written_in: Path, shown_in: Path) -> str:
    """``markdown`` written in folder ``written_in`` with its relative link targets rewritten for a file in
    ``shown_in``; links with a scheme (``https:``), to an anchor alone or absolute stay as written."""
    def rebase(match: re.Match[str]) -> str:
        target = match.group(2)
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)
        moved = os.path.relpath(os.path.normpath(written_in / target), shown_in)
        return f"{match.group(1)}{Path(moved).as_posix()}{match.group(3)}"
    return _LINK.sub(rebase, markdown)


def notes_section(out: Path, report: Path) -> str:
    """``<out>/notes.md`` (what a person observed about a run, kept when the tables are rewritten) as the
    report's ``## Notes`` section, its links written from ``out`` and rebased to ``report``'s folder so they
    resolve in both files; empty without notes."""
    path = out / "notes.md"
    if not path.exists():
        return ""
    return f"## Notes\n\n{rebase_links(path.read_text().strip(), out, report.parent)}\n\n"


def pyplot():
    """matplotlib.pyplot drawing to files (the Agg backend); matplotlib is the ``plots`` extra."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: Path, title: str) -> Path:
    """``figure`` titled, laid out and written to ``path`` (its folder made), then closed; returns ``path``."""
    import matplotlib.pyplot as plt

    figure.suptitle(title, fontsize=11)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_by_planner(path: Path, rows: Sequence[dict[str, Any]], planners: Sequence[str],
                    panels: Sequence[tuple[str, str]], *, x: str = "workload", xlabel: str = "",
                    suptitle: str | None = None, styles: Mapping[str, tuple[str, float]] | None = None) -> None:
    """One panel per (metric, title), one line per planner over ``x``, two panels a row; saved as ``path``.
    ``styles`` gives a planner its (line style, marker size) where the default ``("o-", 4)`` would hide it."""
    plt = pyplot()
    figure, axes = plt.subplots((len(panels) + 1) // 2, 2, figsize=(11, 3.7 * ((len(panels) + 1) // 2)))
    for axis, (metric, title) in zip(axes.flat, panels):
        for k, planner in enumerate(planners):
            mine = [r for r in rows if r["planner"] == planner]
            style, size = (styles or {}).get(planner, ("o-", 4))
            axis.plot([r[x] for r in mine], [r[metric] for r in mine], style, color=f"C{k}", label=planner,
                      markersize=size)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel(xlabel)
    for axis in axes.flat[len(panels):]:   # an odd number of panels leaves the last cell empty
        axis.set_visible(False)
    axes.flat[0].legend(fontsize=8)
    if suptitle:
        figure.suptitle(suptitle, fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def command_line(args: argparse.Namespace, name: str | None = None) -> str:
    """``storm-planner bench NAME ...`` as it was run (to reproduce a report)."""
    name = name or args.benchmark
    return "storm-planner bench " + " ".join(sys.argv[sys.argv.index(name):]) \
        if name in sys.argv else f"storm-planner bench {name}"


_REPORTED_COMMAND = re.compile(r"\.venv/bin/(storm-planner bench [^`\n]*?) --out \S+")


def saved_command(out: Path, reports: Iterable[Path], fallback: str) -> str:
    """The command a cluster run was made with, for its report rewritten by ``--report-only``:
    ``out/command.txt`` while the run's own files are there, else the command its published report names
    (``.venv/bin/storm-planner bench ... --out DIR``: the first of ``reports`` that names one), else
    ``fallback``."""
    saved = out / "command.txt"
    if saved.exists():
        return saved.read_text().strip()
    for report in reports:
        found = _REPORTED_COMMAND.search(report.read_text()) if report.exists() else None
        if found:
            return found.group(1)
    return fallback


def stamped_progress(label: str, stream: TextIO | None = None) -> Progress:
    """A :data:`Progress` that prefixes every line with ``[label HH:MM:SS]``, on ``stream`` or else on
    whatever ``sys.stderr`` is when the line is written (standard output carries a command's answer; and a
    module-level progress must not keep the stream of the moment it was imported, which a test harness may
    have replaced and closed since)."""
    def progress(message: str) -> None:
        print(f"[{label} {time.strftime('%H:%M:%S')}] {message}", file=stream or sys.stderr, flush=True)

    return progress


def report_only_argument() -> Argument:
    """``--report-only``: rewrite the report's sections from its ``cells.csv``, run nothing."""
    return argument("--report-only", action="store_true",
                    help="rewrite the report (OUT.md) from OUT/cells.csv, run nothing")


def report_only(out: Path, sections: Mapping[str, Renderer], command: str) -> int:
    """A benchmark's ``--report-only``: every section of ``OUT.md`` from ``OUT/cells.csv`` (:func:`regenerate`);
    prints the report and the sections written as JSON."""
    written = regenerate(out, sections, command)
    print(json.dumps({"report": str(report_path(out)), "sections": written}))
    return 0


def experiments_benchmark(name: str, help: str, experiments: Mapping[str, Experiment], out: Path,
                          quick_help: str, progress: Progress, not_in_all: tuple[str, ...] = (),
                          sections: Mapping[str, Renderer] | None = None) -> Benchmark:
    """``storm-planner bench NAME {EXPERIMENT,all} [--out] [--seed] [--quick] [--report-only]``, for benchmarks
    made of experiments that each write their tables and report sections under ``--out``; ``all`` runs every
    experiment but ``not_in_all`` (those that need root or a cluster, run by name). ``sections`` are the
    report's sections by name, for ``--report-only`` (which rewrites all of them, whichever experiment is named)."""
    arguments = (argument("experiment", choices=[*experiments, "all"]),
                 argument("--out", default=str(out), help="output folder (default: %(default)s)"),
                 argument("--seed", type=int, default=1),
                 argument("--quick", action="store_true", help=quick_help),
                 *((report_only_argument(),) if sections is not None else ()))

    def run(args: argparse.Namespace) -> int:
        folder = Path(args.out)
        if sections is not None and args.report_only:
            return report_only(folder, sections, f"storm-planner bench {name} {args.experiment} --seed {args.seed}")
        names = ([e for e in experiments if e not in not_in_all] if args.experiment == "all"
                 else [args.experiment])
        for experiment in names:
            command = f"storm-planner bench {name} {experiment} --seed {args.seed}" + (" --quick" if args.quick else "")
            started = time.perf_counter()
            experiments[experiment](folder, args.seed, args.quick, command)
            progress(f"{experiment} done in {time.perf_counter() - started:.0f} s -> {report_path(folder)}")
        return 0

    return Benchmark(name, help, arguments, run, tuple(experiments))
