"""docs/performance.md, rendered from the benchmarks' saved figures (docs/figures/*.json):
`.venv/bin/python -m bench.report` writes it (`main`).

Each saved file becomes one table, under a line that names the command that produced it, when,
and on what machine; the figures that no benchmark saves (the whole test suite's time, the link
fuzzer's hour, ...) are copied verbatim from docs/figures/manual.md. tests/unit/test_performance_doc.py
fails when docs/performance.md is not what this renders.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"
FIGURES = ROOT / "docs" / "figures"
MANUAL = "manual.md"
# Tables in this order (a file's name, or the start of it: cold_start_tensor_inspector follows
# cold_start); any other saved file after these, by name.
ORDER = ("threads", "moons_speed", "batching_cost", "tensor_inspector", "autograd_graph_bench",
         "cold_start", "rerun", "presenter_stage", "live_frame_cost", "live_frames",
         "hostile_neighbour", "hostile_upload", "click_to_paint", "layout_shift", "page_open",
         "load")

INTRO = """# Measured figures

Every table below is generated from a benchmark's saved output: `make bench` runs the quick
benchmarks with `--save` (each writes `docs/figures/<name>.json`), then `python -m bench.report`
writes this page; run any other benchmark with `--save` and the report to refresh its table. Do
not edit this page by hand. Under each heading: the command that produced the figures (run it
from the repository root, adding `--save` to refresh them), when, and on what machine, with the
load average (1, 5, 15 min) at the start and at the end of the run (the development machine is
shared with other work, so read a figure with its load).
"""

MANUAL_INTRO = """## Figures kept by hand

No saved file backs these: runs too long or too disruptive to repeat with every change (a class
of learners, the link fuzzer's hour, the whole test suite) and earlier measurements quoted for
comparison. They are copied verbatim from `docs/figures/manual.md`, each with its command.
"""

def _order(record: dict) -> tuple[int, str]:
    name = record["name"]
    ranks = [i for i, key in enumerate(ORDER) if name == key or name.startswith(key + "_")]
    return (ranks[-1] if ranks else len(ORDER), name)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _load(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def table(record: dict) -> str:
    machine = record["machine"]
    lines = [
        f"## {record['title']}",
        "",
        f"`{record['command']}`, {record['date']}, {record['seconds']:.0f} s; {machine['cores']} cores "
        f"({machine['cpu']}), load average {_load(machine['load_start'])} at the start, "
        f"{_load(machine['load_end'])} at the end.",
        "",
        "| what | figure |",
        "| --- | --- |",
        *(f"| {_cell(what)} | {_cell(figure)} |" for what, figure in record["rows"]),
    ]
    return "\n".join(lines) + "\n"


def render(records: list[dict], manual: str | None) -> str:
    parts = [INTRO, *(table(r) for r in sorted(records, key=_order))]
    if manual and manual.strip():
        parts.append(MANUAL_INTRO + "\n" + manual.strip() + "\n")
    return "\n".join(parts)


def read(folder: Path = FIGURES) -> tuple[list[dict], str | None]:
    records = [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]
    manual = folder / MANUAL
    return records, manual.read_text() if manual.exists() else None


def main() -> None:
    records, manual = read()
    DOC.write_text(render(records, manual))
    print(f"{DOC.relative_to(ROOT)}: {len(records)} saved tables"
          + (f" and {MANUAL}" if manual else ""), file=sys.stderr)
