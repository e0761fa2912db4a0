"""Layout shift on the moons trainer: does anything jump during or after a run?

Chromium's `layout-shift` entries without recent input (harness/layout_shift.py), summed over
Play-to-finish (a 5-epoch run at speed max, until the finished page is drawn) and over *Draw on
these points*, on fresh pages at 1366x768, `--repeats` times each (3 by default); prints the
largest sum and the elements that moved most. tests/e2e/test_layout_shift.py asserts both stay
within 0.1.

Run: .venv/bin/python -m bench.layout_shift [--repeats 3] [--save]
"""
from __future__ import annotations

import argparse

from harness.app import serve
from harness.chromium import launch
from harness.figures import Run
from harness.layout_shift import LIMIT, SIZE, draw_on_these, play_to_finish

CASES = {"Play to finish": play_to_finish, "Draw on these points": draw_on_these}


def main() -> None:
    run = Run("layout_shift", "Layout shift on the moons trainer: Play to finish, Draw")
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, str]] = []
    with serve() as base, sync_playwright() as p:
        browser = launch(p)
        for name, case in CASES.items():
            shifts = [case(browser, base) for _ in range(args.repeats)]
            worst = max(shifts, key=lambda s: s.total)
            rows.append((f"{name} ({SIZE[0]}x{SIZE[1]}), {args.repeats} fresh pages",
                         f"largest sum {worst.total:.3f} (limit {LIMIT}), all: "
                         + ", ".join(f"{s.total:.3f}" for s in shifts)
                         + f"; {worst.describe()}"))
            print(*rows[-1], sep=": ", flush=True)
        browser.close()
    run.save(rows)


if __name__ == "__main__":
    main()
