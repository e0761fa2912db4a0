"""The figures docs/lesson-links.md quotes for the moons trainer's lesson links: each link
trained exactly as written, by the page's own code (harness/lesson_figures.py).

    .venv/bin/python -m bench.lesson_links [--save]

Prints every figure; `--save` writes docs/figures/lesson_links.json, which
tests/unit/test_lesson_link_figures.py checks the doc's quoted numbers against.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

torch.set_num_threads(1)      # the runs are the same on any thread count; one keeps `make bench` polite

from harness.figures import Run, parser  # noqa: E402
from harness.lesson_figures import LINKS, measure, quotes  # noqa: E402


def main() -> None:
    run = Run("lesson_links", "Lesson links' figures (docs/lesson-links.md)")
    parser(__doc__).parse_args(run.argv[1:])
    figures = measure()
    for what, figure in figures.items():
        print(f"{what}: {figure}")
    for quote in quotes(figures):
        print(f"\n{quote}")
    links = {link.name: link.query for link in LINKS}
    run.save([(f"{what} (`/moons_trainer?{links[what.split(' ', 1)[0]]}`)"
               if what.split(" ", 1)[0] in links else what, figure)
              for what, figure in figures.items()])


if __name__ == "__main__":
    main()
