"""A benchmark's figures, saved where docs/performance.md is generated from.

A benchmark makes a `Run` first thing in `main()` (it notes the command, the time and the load
average) and ends with `run.save(rows)`: rows of (what was measured, the figure), both written
from the measured numbers. Only a run given `--save` writes anything (`Run` takes the flag out
of `sys.argv` before the script reads its own arguments), to docs/figures/<name>.json, so an
ad-hoc run never overwrites the docs. `python -m bench.report` then writes docs/performance.md
from every saved file (harness/performance_doc.py). BENCH_FIGURES=<folder> saves somewhere else
(a test's temporary folder).

It lives in harness/, not bench/, because tests/unit/test_performance_doc.py checks what it
records, and the tests never import a benchmark.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
SAVE_FLAG = "--save"


def folder() -> Path:
    return Path(os.environ.get("BENCH_FIGURES", FIGURES))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def command_line(argv: list[str]) -> str:
    """How to run it again from the repository root, without `--save`: `.venv/bin/python -m
    bench.x args`. `python -m` puts the benchmark's file in `argv[0]`; the module is named from
    it, as the one way a benchmark runs (from the root, so that `harness` and `workbench` import)."""
    script = Path(argv[0]).resolve()
    try:
        module = ".".join(script.relative_to(ROOT).with_suffix("").parts)
    except ValueError:
        return shlex.join([".venv/bin/python", *argv])
    return shlex.join([".venv/bin/python", "-m", module, *argv[1:]])


def parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's argument parser, its docstring as the help: `--help` says what it measures
    instead of starting to measure. `--save` is not among its options: `Run` takes it out of
    `sys.argv` before the parser reads it."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"{SAVE_FLAG}: save the figures to docs/figures/<name>.json (harness/figures.py)")


class Run:
    """One benchmark run: `name` is its file's name (docs/figures/<name>.json), `title` the
    heading of its table."""

    def __init__(self, name: str, title: str, argv: list[str] | None = None) -> None:
        self.argv = sys.argv if argv is None else argv
        self.wanted = SAVE_FLAG in self.argv
        while SAVE_FLAG in self.argv:
            self.argv.remove(SAVE_FLAG)
        self.name, self.title = name, title
        self.command = command_line(self.argv)
        self.started = time.monotonic()
        self.date = datetime.datetime.now(datetime.UTC)
        self.load_start = load_average()

    def record(self, rows: Iterable[tuple[str, str]]) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "command": self.command,
            "date": self.date.strftime("%Y-%m-%d %H:%M UTC"),
            "seconds": round(time.monotonic() - self.started, 1),
            "machine": {"cores": os.cpu_count(), "cpu": cpu_model(),
                        "load_start": self.load_start, "load_end": load_average()},
            "rows": [[str(what), str(figure)] for what, figure in rows],
        }

    def save(self, rows: Iterable[tuple[str, str]]) -> Path | None:
        """Write the rows (with `--save` only); returns the file written."""
        if not self.wanted:
            return None
        path = folder() / f"{self.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.record(rows), indent=2, ensure_ascii=False) + "\n")
        print(f"figures saved to {path} (python -m bench.report writes docs/performance.md)")
        return path
