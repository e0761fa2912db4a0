"""Presenter mode's first screen, measured in headless Chromium: per page, the key figure's box,
whether it and its driving control lie inside the first screen, and its text size against the
normal view at the same window size.

    .venv/bin/python -m bench.presenter_stage              # 1280x720 and 1366x768
    .venv/bin/python -m bench.presenter_stage 1920x1080
    .venv/bin/python -m bench.presenter_stage --save       # docs/figures/presenter_stage.json

Boxes are (x, y, width, height) in CSS px with the page scrolled to the top; "text px" is the
median on-screen font size of the figure's text (harness/stage.py: SVG scaling included, and
the canvas's own font size for the moons trainer's live view). Not a timed test: the same
checks, with thresholds, are the tests/e2e/test_presenter_*.py tests.
"""
from __future__ import annotations

from playwright.sync_api import sync_playwright

from harness.app import serve
from harness.chromium import launch
from harness.figures import Run, parser
from harness.stage import PROJECTORS, box, clipped_texts, first_screen, text_px
from workbench.tools import AUTOGRAD_GRAPH, BATCH_ITERATOR, MOONS_TRAINER, TENSOR_INSPECTOR, TOOLS

FIRST_DRAW_MS = 120_000
# Each tool: the query it opens with, the key figure, the element whose text is measured, the
# driving control (CSS selectors, read from the tool's record where a key says it).
TOOL_STAGES = {
    TENSOR_INSPECTOR.name: ("?shape=4,6&ops=t()[1:5]", f".st-key-{TENSOR_INSPECTOR.figure_key}",
                            f".st-key-{TENSOR_INSPECTOR.figure_key} table", ".st-key-ti_draw"),
    AUTOGRAD_GRAPH.name: ("", ".wb-graph svg", ".wb-graph svg",
                          "div[class*='st-key-ag_step_'][class*='_next'] button"),
    MOONS_TRAINER.name: ("", f".st-key-{MOONS_TRAINER.figure_key} figure.boundary canvas.plane",
                         f".st-key-{MOONS_TRAINER.figure_key} .moons-live",
                         f".st-key-{MOONS_TRAINER.control_key} button"),
    BATCH_ITERATOR.name: ("", f".st-key-{BATCH_ITERATOR.main_key} table.wb-batch-grid",
                          f".st-key-{BATCH_ITERATOR.main_key} table.wb-batch-grid",
                          f".st-key-{BATCH_ITERATOR.control_key} button"),
}
assert {tool.name for tool in TOOLS} <= set(TOOL_STAGES), "a tool without a stage here"
# page, link, the key figure, the element whose text is measured, the driving control
PAGES = (
    *((tool.title.lower(), f"/{tool.url_path}{TOOL_STAGES[tool.name][0]}", *TOOL_STAGES[tool.name][1:])
      for tool in TOOLS),
    ("lessons", "/lessons", ".st-key-lesson_step_text", ".st-key-lesson_step_text",
     ".st-key-lessons_main [data-testid=stPageLink]"),
)


def measure(browser, url: str, link: str, size, present: bool, figure: str, text: str, control: str):
    page = first_screen(browser, url, link, size, present=present)
    try:
        page.locator(text).first.wait_for(state="visible", timeout=FIRST_DRAW_MS)
        page.evaluate("document.querySelector('[data-testid=stMain]')?.scrollTo(0, 0)")
        found = box(page.locator(figure).first)
        pressed = box(page.locator(control).first)
        height = size[1]
        return {"box": tuple(round(found[k]) for k in ("x", "y", "width", "height")),
                "figure on screen": found["y"] + found["height"] <= height + 1,
                "control on screen": pressed["y"] + pressed["height"] <= height + 1,
                "px": text_px(page.locator(text).first),
                "clipped": clipped_texts(page.locator(figure).first)}
    finally:
        page.context.close()


def main() -> None:
    run = Run("presenter_stage", "Presenter mode's first screen in headless Chromium: per page, the key "
              "figure's box, whether it and its control are on the first screen, its text size")
    options = parser(__doc__)
    options.add_argument("sizes", nargs="*", metavar="WIDTHxHEIGHT",
                         help="screens to check (default: the projectors, 1280x720 and 1366x768)")
    chosen = options.parse_args().sizes
    rows = []
    sizes = [tuple(int(n) for n in a.split("x")) for a in chosen] or list(PROJECTORS)
    with serve() as url, sync_playwright() as playwright:
        browser = launch(playwright)
        for size in sizes:
            print(f"\n{size[0]}x{size[1]}, present=1 (text px: presenter / normal at the same size)")
            for name, link, figure, text, control in PAGES:
                normal = measure(browser, url, link, size, False, figure, text, control)
                stage = measure(browser, url, link, size, True, figure, text, control)
                ratio = stage["px"] / normal["px"] if normal["px"] else float("nan")
                print(f"  {name:17s} box {stage['box']!s:22s} "
                      f"figure on screen {stage['figure on screen']!s:5s} "
                      f"control on screen {stage['control on screen']!s:5s} text {stage['px']:.1f} / "
                      f"{normal['px']:.1f} px = {ratio:.2f}x  clipped {stage['clipped'] or 'none'}")
                rows.append((f"{size[0]}x{size[1]} `present=1`, {name}",
                             f"box (x, y, w, h) {stage['box']}; figure "
                             f"{on_screen(stage['figure on screen'])}, control "
                             f"{on_screen(stage['control on screen'])}; text {stage['px']:.1f} px "
                             f"presenter / {normal['px']:.1f} normal ({ratio:.2f}x); clipped: "
                             f"{', '.join(stage['clipped']) or 'nothing'}"))
        browser.close()
    run.save(rows)


def on_screen(inside: bool) -> str:
    return "on the first screen" if inside else "BELOW the first screen"


if __name__ == "__main__":
    main()
