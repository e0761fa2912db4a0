"""The Tensor inspector on a projector: presenter mode's first screen in headless Chromium.

A teacher opens a lesson link with `present=1` at 1280x720, 1366x768 or 1920x1080: the op
chain, the step picker, and the drawn step's logical grid and storage strip are all on the first
screen, nothing in them is cut, and the grid's text is drawn at least 1.3x its normal size.
"""
from __future__ import annotations

import re

import pytest
import torch
from playwright.sync_api import Page, expect

from harness.chromium import wait_drawn, wait_settled
from harness.stage import SCREENS, PROJECTORS, assert_on_first_screen, clipped_texts, first_screen, text_px
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e

# A lesson link with a real chain: x.t() is a view with strides (1, 6), and [1:5] moves the
# storage offset to 1, so the strip has unread (grey) cells on both sides.
LESSON = "/tensor_inspector?shape=4,6&ops=t()[1:5]"
X = torch.arange(24.0).reshape(4, 6)
# A fresh browser context loads the app's bundle before the first table is drawn: on a machine
# shared by several test runs that alone took over 40 s after the script run ended.
FIRST_DRAW_MS = 3 * WAIT_MS


def _stage(page: Page) -> dict:
    return {"grid": page.locator(".st-key-ti_grid"), "strip": page.locator(".st-key-ti_strip"),
            "chain": page.locator(".st-key-ti_ops"), "picker": page.locator(".st-key-ti_draw")}


def _drawn(page: Page, cell_text: str) -> None:
    """Wait until the grid and the strip tables are drawn, the grid holding `cell_text`."""
    for name in ("ti_grid", "ti_strip"):
        expect(page.locator(f".st-key-{name} table").first).to_be_visible(timeout=FIRST_DRAW_MS)
    cell = re.compile(rf"^{re.escape(cell_text)}$")
    expect(page.locator(".st-key-ti_grid td").filter(has_text=cell).first) \
        .to_be_visible(timeout=WAIT_MS)


def _resize(page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    wait_drawn(page)            # every chart fitted to its new box


def test_the_first_screen_holds_the_chain_the_picker_the_grid_and_the_strip(browser, app_url):
    """On each screen (one page per view, the window resized from the smallest screen up: a page
    load is the costly part of a browser test, and the stage's layout follows the window)."""
    normal = first_screen(browser, app_url, LESSON, SCREENS[0], present=False)
    _drawn(normal, "22")
    normal_px = {}
    for size in SCREENS:
        _resize(normal, size)
        normal_px[size] = (text_px(normal.locator(".st-key-ti_grid")),
                           text_px(normal.locator(".st-key-ti_strip")))
    normal.context.close()

    page = first_screen(browser, app_url, LESSON, SCREENS[0])
    _drawn(page, "22")
    stage = _stage(page)
    expect(stage["chain"].locator("input")).to_have_value("t()[1:5]", timeout=WAIT_MS)
    expect(stage["picker"]).to_contain_text("x.t()[1:5]", timeout=WAIT_MS)
    facts = page.locator(".st-key-ti_stage_facts")
    # The facts beside the grid are those PyTorch reports for the drawn step.
    expect(facts).to_contain_text(str(X.t()[1:5].stride()), timeout=WAIT_MS)
    for size in SCREENS:
        _resize(page, size)
        boxes = {what: assert_on_first_screen(page, locator, f"{what} at {size}")
                 for what, locator in stage.items()}
        for what, locator in stage.items():
            assert clipped_texts(locator) == [], (what, size)
        assert_on_first_screen(page, facts, f"the drawn step's facts at {size}")
        assert clipped_texts(facts) == [], size
        # The grid takes the viewport's height, less what sits above and below it: more room
        # on a taller screen than the rows it is drawn with in normal mode.
        assert boxes["grid"]["height"] > 0.35 * size[1], (size, boxes["grid"])
        assert boxes["grid"]["y"] > boxes["chain"]["y"] + boxes["chain"]["height"], size
        assert boxes["strip"]["y"] > boxes["grid"]["y"] + boxes["grid"]["height"], size

        grid_px, strip_px = text_px(stage["grid"]), text_px(stage["strip"])
        normal_grid_px, normal_strip_px = normal_px[size]
        assert grid_px >= 1.3 * normal_grid_px, (size, grid_px, normal_grid_px)
        assert strip_px >= 1.3 * normal_strip_px, (size, strip_px, normal_strip_px)
    page.context.close()


def test_the_step_picker_redraws_the_stage_in_place(browser, app_url):
    page = first_screen(browser, app_url, LESSON, PROJECTORS[0])
    _drawn(page, "22")
    page.locator(".st-key-ti_draw").get_by_text("x.t()", exact=True).click()
    wait_settled(page)
    # x.t() starts at storage position 0: the grid now holds 0, and the facts say (6, 4).
    _drawn(page, "0")
    expect(page.locator(".st-key-ti_stage_facts")).to_contain_text(str(tuple(X.t().shape)),
                                                                   timeout=WAIT_MS)
    for what, locator in _stage(page).items():
        assert_on_first_screen(page, locator, what)
        assert clipped_texts(locator) == [], what
    page.context.close()


def test_a_failing_chain_shows_the_error_and_its_fix_on_the_first_screen(browser, app_url):
    page = first_screen(browser, app_url, "/tensor_inspector?shape=4,6&ops=t().view(-1)",
                        PROJECTORS[0])
    fix = page.get_by_role("button", name="Use reshape(-1)")
    assert_on_first_screen(page, page.locator(".st-key-ti_stage [data-testid=stAlert]").first,
                           "the failed step")
    assert_on_first_screen(page, fix, "the one-click fix")
    fix.click()
    wait_settled(page)
    expect(page.locator(".st-key-ti_ops input")).to_have_value("t().reshape(-1)", timeout=WAIT_MS)
    expect(page.locator(".st-key-ti_stage_facts")).to_contain_text("new memory", timeout=WAIT_MS)
    _drawn(page, "0")
    assert_on_first_screen(page, page.locator(".st-key-ti_grid"), "the reshaped grid")
    page.context.close()


@pytest.mark.parametrize("size", PROJECTORS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_readmes_failing_chain_keeps_the_grid_and_the_strip_on_the_first_screen(browser,
                                                                                    app_url, size):
    """The README's own example: x.t() is drawn (the last step that worked) while its
    view(-1) fails; the error line, its fixes, the grid and the strip share the first screen."""
    page = first_screen(browser, app_url, "/tensor_inspector?shape=2,3&ops=t().view(-1)", size)
    _drawn(page, "5")
    expect(page.locator(".st-key-ti_stage [data-testid=stAlert]").first).to_contain_text(
        "Step 2", timeout=WAIT_MS)
    assert_on_first_screen(page, page.get_by_role("button", name="Use reshape(-1)"), "the fix")
    for what, locator in _stage(page).items():
        assert_on_first_screen(page, locator, what)
        assert clipped_texts(locator) == [], what
    page.context.close()


# The walk is an SVG image (its axis titles inside its own viewBox): it is cut only if the page
# squeezes it out of its proportions or a box around it hides part of it.
_IMAGE_CUT_JS = """
(img) => {
  const r = img.getBoundingClientRect(), cut = [];
  if (!img.naturalWidth) return ['not loaded'];
  const drawn = r.width / r.height, own = img.naturalWidth / img.naturalHeight;
  if (Math.abs(drawn / own - 1) > 0.02) cut.push(`drawn ${drawn.toFixed(2)}:1, not ${own.toFixed(2)}:1`);
  for (let box = img.parentElement; box; box = box.parentElement) {
    if (getComputedStyle(box).overflow === 'visible') continue;
    const b = box.getBoundingClientRect();
    if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
      cut.push(`cut by <${box.tagName.toLowerCase()} class="${box.className}">`);
  }
  return cut;
}
"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_stage_text_and_no_memory_walk_title_is_cut(browser, app_url, theme):
    """The walk's axis titles were cut in presenter mode (issue 12), in both themes."""
    page = first_screen(browser, app_url, LESSON, PROJECTORS[0], theme=theme)
    _drawn(page, "22")
    walk = page.locator(".st-key-ti_walk img")
    walk.scroll_into_view_if_needed()
    expect(walk).to_be_visible(timeout=FIRST_DRAW_MS)
    expect(walk).to_have_attribute("alt", re.compile("^Memory walk of "))
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0",
                           arg=walk.element_handle(), timeout=WAIT_MS)
    assert walk.evaluate(_IMAGE_CUT_JS) == []
    assert clipped_texts(page.locator(".st-key-ti_stage")) == []
    page.context.close()
