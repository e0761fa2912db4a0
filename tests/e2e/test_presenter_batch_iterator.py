"""The batch iterator on a classroom projector: with `present=1` the first screen holds the index
grid, Back/Next and the current batch's indices, and the grid's text is drawn larger than in
the normal view."""
from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect

from app_pages.batch_iterator.grid import GRID_CLASS
from app_pages.batch_iterator.stepper import GRID_STAGE_KEY, STAGE_INDICES
from harness.chromium import wait_drawn, wait_settled
from harness.stage import (
    SCREENS,
    PROJECTORS,
    assert_on_first_screen,
    clipped_texts,
    first_screen,
    open_sidebar,
    text_px,
)
from tests.e2e.waiting import WAIT_MS
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import TABLE as LINK_SCHEMA
from workbench.batch_iterator.story import short_list

pytestmark = pytest.mark.e2e

SIZES = SCREENS
# The default loader, and the tallest grid (five epochs) with a batch too long for one line.
QUERIES = ({}, {"n": "200", "batch": "32", "epochs": "5"})

# In presenter mode the grid's height is the stage's: a rule (components/stage.py's
# fit_to_viewport) in an `st.html` style block that may be drawn after the table, which until
# then has its rows' own height.
_STAGE_STYLED_JS = """
(key) => [...document.querySelectorAll('[data-testid=stHtml] style')]
  .some((s) => s.textContent.includes(`.st-key-${key} table`))
"""


def _path(query: dict[str, str]) -> str:
    return "/batch_iterator" + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def _grid(page: Page) -> Locator:
    grid = page.locator(f".st-key-batch_iterator_main table.{GRID_CLASS}").first
    expect(grid).to_be_visible(timeout=2 * WAIT_MS)
    wait_drawn(page)
    return grid


def _indices(query: dict[str, str], position: int) -> tuple[int, ...]:
    return run_loader(LINK_SCHEMA.read(query)[0]).records[position].indices


# Both loaders on both projectors; the default one on a full-HD screen too. Each loader's page is
# opened once, at the smallest screen, and the window is then resized to the others: a page load
# is the costly part of a browser test, and the stage's height is CSS that follows the window.
SIZES_OF_QUERY = {0: SIZES, 1: PROJECTORS}


def _resize(page: Page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    wait_drawn(page)


@pytest.mark.parametrize("which", list(SIZES_OF_QUERY),
                         ids=["default", "five-epochs-batch-32"])
def test_the_grid_and_next_back_with_the_batch_fill_the_first_screen(browser, app_url, which):
    query, sizes = QUERIES[which], SIZES_OF_QUERY[which]
    page = first_screen(browser, app_url, _path(query), sizes[0])
    stage = _stage(page)
    for what, locator in stage.items():
        assert_on_first_screen(page, locator, what)
        assert clipped_texts(locator) == [], what
    first = _indices(query, 0)
    expect(stage["the current batch's indices"]).to_contain_text(f"Sample indices ({len(first)})")
    expect(stage["the current batch's indices"]).to_contain_text(f"[{first[0]}, ")

    # Next drives the stage: the next batch's indices, still on the first screen.
    stage["Next"].click()
    wait_settled(page)
    second = _indices(query, 1)
    expect(stage["the current batch's indices"]).to_contain_text(f"[{second[0]}, ")
    expect(stage["the current batch's indices"]).to_contain_text("Epoch 0, batch 1")
    assert_on_first_screen(page, stage["the current batch's indices"], "the next batch's indices")
    assert_on_first_screen(page, _grid(page), "the index grid after Next")
    # The settings fold away below the stage, and the page's other panels follow them.
    expect(page.locator(".st-key-bi_settings_panel")).to_contain_text("Settings")
    presenting_px = {sizes[0]: text_px(_grid(page))}
    for size in sizes[1:]:
        _resize(page, size)
        for what, locator in _stage(page).items():
            assert_on_first_screen(page, locator, f"{what} at {size}")
            assert clipped_texts(locator) == [], (what, size)
        presenting_px[size] = text_px(_grid(page))
    page.context.close()

    normal = first_screen(browser, app_url, _path(query), sizes[0], present=False)
    for size in sizes:
        _resize(normal, size)
        normal_px = text_px(_grid(normal))
        assert presenting_px[size] >= 1.3 * normal_px, (size, presenting_px[size], normal_px)
    normal.context.close()


def _stage(page: Page) -> dict[str, Locator]:
    return {
        "the index grid": _grid(page),
        "Back": page.locator(".st-key-bi_prev").get_by_role("button", name="Back"),
        "Next": page.locator(".st-key-bi_next").get_by_role("button", name="Next"),
        "the current batch's indices": page.locator(".st-key-bi_stage_indices"),
    }


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_with_the_sidebar_opened_the_stage_still_fits_uncut(browser, app_url, theme):
    """A teacher opens the sidebar: the grid narrows, the buttons keep their whole labels, the
    longest batch's position and indices still fit the first screen."""
    page = first_screen(browser, app_url, _path(QUERIES[1]), PROJECTORS[0], theme=theme)
    _grid(page)
    open_sidebar(page)
    for what, locator in _stage(page).items():
        assert_on_first_screen(page, locator, what)
        assert clipped_texts(locator) == [], what
    page.context.close()


def test_the_grid_height_follows_the_viewport(browser, app_url):
    """Five epochs' grid at 1280x720, then with the window resized to 1366x768: the taller
    screen gets a grid taller by the 48 pixels it gained."""
    page = first_screen(browser, app_url, _path(QUERIES[1]), PROJECTORS[0])
    page.wait_for_function(_STAGE_STYLED_JS, arg=GRID_STAGE_KEY, timeout=WAIT_MS)
    heights = [_grid(page).bounding_box()["height"]]
    _resize(page, PROJECTORS[1])
    heights.append(_grid(page).bounding_box()["height"])
    page.context.close()
    assert heights[1] - heights[0] == pytest.approx(768 - 720, abs=2), heights


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_settings_change_in_the_folded_panel_redraws_the_stage(browser, app_url, theme):
    page = first_screen(browser, app_url, "/batch_iterator", PROJECTORS[0], theme=theme)
    _grid(page)
    panel = page.locator(".st-key-bi_settings_panel")
    panel.get_by_text("Settings: dataset, order, batches, processes").click()
    shuffle = panel.locator(".st-key-bi_shuffle")
    expect(shuffle).to_be_visible(timeout=WAIT_MS)
    # By keyboard: under load a click on the toggle's label, scrolled to just after the panel
    # opened, once landed while the page still moved and changed nothing.
    toggle = shuffle.locator("input")
    toggle.press("Space")
    expect(toggle).not_to_be_checked()
    wait_settled(page)
    unshuffled = {"shuffle": "0"}
    expect(page.locator(".st-key-bi_stage_indices")).to_contain_text(
        short_list(_indices(unshuffled, 0), STAGE_INDICES))
    assert_on_first_screen(page, page.locator(".st-key-bi_next").get_by_role("button", name="Next"),
                           "Next after a settings change")
    page.context.close()
