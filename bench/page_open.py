"""Opening a page: how long a learner waits for each page's first screen, on a warm server.

For each page, Chromium opens it `--opens` times (5 by default), each time in a fresh browser
context (a new learner: a new Streamlit session, no cached page state) on one server
(`streamlit run streamlit_app.py`, the app's one entry) that has already served the page once,
and times, inside the page, from the navigation's start to two animation frames:

- the first screen: the page's main control (and, for the batch iterator, its index grid) is
  shown and no loading skeleton lies inside the window, so the learner can read and press it;
- the whole page drawn: the script run is over, no element anywhere is a loading skeleton, and
  every Plotly chart has fitted its drawing to its box (harness/chromium.py's `wait_drawn`).

Nothing is reused from an earlier tab but the browser's HTTP cache of Streamlit's own code, as
for a learner who has opened the app before.

Run: .venv/bin/python -m bench.page_open [--opens 5] [--save]
"""
from __future__ import annotations

import argparse
import statistics

from harness.app import serve
from harness.chromium import DRAWN_JS, launch
from harness.figures import Run
from workbench.tools import AUTOGRAD_GRAPH, BATCH_ITERATOR, MOONS_TRAINER, TENSOR_INSPECTOR, TOOLS

LEARNER, PRESENTER = (1400, 1000), (1280, 720)
# Each tool's page: the query it opens with and what its first screen must show (CSS selectors).
TOOL_FIRST_SCREENS = {
    TENSOR_INSPECTOR.name: ("?shape=4,6&ops=t()", f".st-key-{TENSOR_INSPECTOR.figure_key} table, "
                                                   f".st-key-{TENSOR_INSPECTOR.control_key} input"),
    AUTOGRAD_GRAPH.name: ("", f".st-key-{AUTOGRAD_GRAPH.control_key} button"),
    MOONS_TRAINER.name: ("", f".st-key-{MOONS_TRAINER.control_key} button"),
    BATCH_ITERATOR.name: ("", f".st-key-{BATCH_ITERATOR.main_key} table, "
                              f".st-key-{BATCH_ITERATOR.control_key} button"),
}
assert {tool.name for tool in TOOLS} <= set(TOOL_FIRST_SCREENS), "a tool without a first screen here"
# Each page: its path, the window, and what its first screen must show.
PAGES = {
    "home": ("/", LEARNER, "[data-testid=stMain] h1"),
    **{tool.title.lower(): (f"/{tool.url_path}{TOOL_FIRST_SCREENS[tool.name][0]}", LEARNER,
                            TOOL_FIRST_SCREENS[tool.name][1]) for tool in TOOLS},
    "batch iterator, presenter at 1280x720": (f"/{BATCH_ITERATOR.url_path}?present=1", PRESENTER,
                                              TOOL_FIRST_SCREENS[BATCH_ITERATOR.name][1]),
    "lessons": ("/lessons", LEARNER, ".st-key-lesson_next button"),
}

# The times, since the navigation started, of the first frames at which the first screen and
# the whole page are drawn: kept by the page itself, so the polling's own delay is not counted.
_TIMES_JS = f"""(wanted) => {{
  const shown = (selector) => [...document.querySelectorAll(selector)].some(
      (e) => e.checkVisibility() && e.getBoundingClientRect().top < innerHeight);
  const skeletonInView = () => [...document.querySelectorAll('[data-testid=stSkeleton]')].some(
      (e) => e.getBoundingClientRect().top < innerHeight);
  const now = performance.now();
  if (window.__firstAt === undefined && wanted.split(', ').every(shown) && !skeletonInView())
    window.__firstAt = now;
  if (window.__drawnAt === undefined && ({DRAWN_JS})()) window.__drawnAt = now;
  return window.__firstAt !== undefined && window.__drawnAt !== undefined
      && [window.__firstAt, window.__drawnAt];
}}"""


def open_once(browser, base: str, path: str, size: tuple[int, int], first: str) -> list[float]:
    """[first screen, whole page] in ms after the navigation started, for one fresh tab."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    try:
        page.goto(base + path)
        return page.wait_for_function(_TIMES_JS, arg=first, polling="raf",
                                      timeout=120_000).json_value()
    finally:
        context.close()


def seconds(values: list[float]) -> str:
    return f"median {statistics.median(values) / 1000:.2f} s, slowest {max(values) / 1000:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--opens", type=int, default=5)
    parser.add_argument("--only", default="",
                        help="measure only the pages whose name contains this text (not saved)")
    run = Run("page_open", "Opening a page: a new learner's first screen on a warm server")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, str]] = []
    with serve() as base, sync_playwright() as p:
        browser = launch(p)
        for name, (path, size, first) in PAGES.items():
            if args.only not in name:
                continue
            open_once(browser, base, path, size, first)   # the server's first run of the page
            times = [open_once(browser, base, path, size, first) for _ in range(args.opens)]
            rows.append((f"{name}: `{path}` ({size[0]}x{size[1]}), {args.opens} fresh tabs",
                         f"first screen: {seconds([t[0] for t in times])}; whole page drawn: "
                         f"{seconds([t[1] for t in times])}"))
            print(*rows[-1], sep=": ", flush=True)
        browser.close()
    if not args.only:
        run.save(rows)


if __name__ == "__main__":
    main()
