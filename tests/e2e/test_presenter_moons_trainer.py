"""The moons trainer on a projector (presenter mode, Chromium): the decision boundary, Play, Pause,
Step, Reset, the epoch counter and the loss/accuracy curves on the first screen, no text cut,
the figures' text at least 1.3x the normal view's; the tabs' legends off their axis titles in
light and dark themes; the network view (net=1) within a projector's width."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.chromium import wait_drawn, wait_settled
from harness.live_view import wait_live, wait_styled
from harness.stage import SCREENS, PROJECTORS, assert_on_first_screen, clipped_texts, first_screen, text_px
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e

PATH = "/moons_trainer?n=300&epochs=3"
SIZES = SCREENS
LIVE = ".st-key-mt_live .moons-live"
BOUNDARY = ".st-key-mt_live figure.boundary"
CONTROLS = {"Play": ".st-key-mt_play button", "Pause": ".st-key-mt_pause button",
            "Step": ".st-key-mt_step button", "Reset": ".st-key-mt_reset button",
            "the epoch counter": ".st-key-mt_live .status"}


def _laid_out(page) -> None:
    """The live view has drawn a frame after the page's run, with its own stylesheet and its
    fonts: the figures' sizes, which follow what sits above them, and their text's are final."""
    wait_settled(page)
    wait_live(page)
    wait_styled(page)       # before it, the view's text is at the browser's default size
    page.wait_for_function("document.fonts.status === 'loaded'", timeout=WAIT_MS)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def _opened(browser, app_url, size, *, present: bool, theme: str = "light"):
    page = first_screen(browser, app_url, PATH, size, present=present, theme=theme)
    _laid_out(page)
    return page


def _resized(page, size: tuple[int, int]) -> None:
    """The window resized to `size` and the live view laid out again for it."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    _laid_out(page)


def test_the_boundary_its_controls_and_the_curves_fill_the_first_screen(browser, app_url):
    """On each screen: the page opened once per view at the smallest screen, the window then
    resized to the others (a page load is the costly part of a browser test)."""
    normal = _opened(browser, app_url, SIZES[0], present=False)
    normal_px = {}
    try:
        for size in SIZES:
            _resized(normal, size)
            normal_px[size] = (text_px(normal.locator(BOUNDARY)),
                               float(normal.locator(LIVE).get_attribute("data-font-px")))
    finally:
        normal.context.close()
    page = _opened(browser, app_url, SIZES[0], present=True)
    try:
        for size in SIZES:
            _resized(page, size)
            _assert_the_stage_fills_the_first_screen(page, size, *normal_px[size])
    finally:
        page.context.close()


def _assert_the_stage_fills_the_first_screen(page, size: tuple[int, int], normal_px: float,
                                             normal_canvas_px: float) -> None:
    boundary = page.locator(BOUNDARY)
    plane = assert_on_first_screen(page, page.locator(f"{BOUNDARY} canvas.plane"),
                                   f"the boundary's plane at {size}")
    assert_on_first_screen(page, boundary, f"the boundary with its legend at {size}")
    curves = assert_on_first_screen(page, page.locator(".st-key-mt_live figure.curves"),
                                    f"the loss and accuracy curves at {size}")
    assert curves["x"] >= plane["x"] + plane["width"] - 1, "the curves sit beside the boundary"
    for what, selector in CONTROLS.items():
        control = page.locator(selector).first
        assert_on_first_screen(page, control, f"{what} at {size}")
        assert clipped_texts(control) == [], (what, size)
    # The stage is the live view's: the plane takes most of the first screen's height.
    assert plane["height"] >= 0.5 * size[1], (size, plane)
    legend = page.locator(f"{BOUNDARY} .legend").bounding_box()
    assert legend["y"] >= plane["y"] + plane["height"] - 1, "the legend is below the x-axis title"
    for figure in (boundary, page.locator(".st-key-mt_live figure.curves")):
        assert clipped_texts(figure) == [], size
    # Canvas text is not in the DOM: the view notes any text that falls off its canvas.
    assert page.locator(LIVE).get_attribute("data-clipped-canvas-text") == "", size
    presented_px = text_px(boundary)
    presented_canvas_px = float(page.locator(LIVE).get_attribute("data-font-px"))
    assert presented_px >= 1.3 * normal_px, (size, presented_px, normal_px)
    assert presented_canvas_px >= 1.4 * normal_canvas_px, (size, presented_canvas_px, normal_canvas_px)


def _overlaps(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_tabs_legends_stay_off_the_axis_titles(browser, app_url, theme):
    page = _opened(browser, app_url, PROJECTORS[0], present=True, theme=theme)
    try:
        for tab, key in (("Model", "mt_activation"), ("Losses & hooks", "mt_loss_curves")):
            page.get_by_role("tab", name=tab).click()
            wait_settled(page)
            chart = page.locator(f".st-key-{key}")
            chart.locator("g.legend").wait_for(timeout=WAIT_MS)
            chart.scroll_into_view_if_needed()
            wait_drawn(page)        # the chart, hidden in its tab until now, fits its new box
            legend = chart.locator("g.legend").bounding_box()
            titles = chart.locator("g.infolayer text[class$='title']")
            assert titles.count() >= 1, f"{key}: no axis title drawn"
            for i in range(titles.count()):
                title = titles.nth(i).bounding_box()
                assert not _overlaps(legend, title), f"{key}: the legend {legend} covers {title}"
            assert clipped_texts(chart) == [], key
    finally:
        page.context.close()


def test_the_plane_follows_the_windows_height(browser, app_url):
    """The server never learns the projector's size: the browser resizes the plane itself when
    the window changes, and the boundary stays on the first screen."""
    page = _opened(browser, app_url, PROJECTORS[0], present=True)
    try:
        plane = page.locator(f"{BOUNDARY} canvas.plane")
        tall = assert_on_first_screen(page, plane, "the plane at 1280x720")["height"]
        page.set_viewport_size({"width": 1280, "height": 620})
        page.wait_for_function(
            """(before) => {
                 const host = [...document.querySelectorAll('.st-key-mt_live *')]
                   .find((e) => e.shadowRoot && e.shadowRoot.querySelector('canvas.plane'));
                 const plane = host.shadowRoot.querySelector('canvas.plane');
                 return plane.getBoundingClientRect().height < before - 50; }""",
            arg=tall, timeout=WAIT_MS)
        assert_on_first_screen(page, page.locator(BOUNDARY), "the boundary at 1280x620")
    finally:
        page.context.close()


def test_the_network_view_fits_a_projector_in_both_themes(browser, app_url):
    """With net=1 on a 1280x720 projector: every hidden layer's strongest units, the inputs, the
    output and the "Show all" buttons lie within the window's width, each unit's map is at
    least 32 px across (readable from the back of a room), and nothing scrolls sideways."""
    page = first_screen(browser, app_url, "/moons_trainer?n=300&epochs=3&net=1", PROJECTORS[0])
    try:
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            _laid_out(page)
            units = page.locator(".st-key-mt_live button.unit:visible")
            expect(units.first).to_be_visible(timeout=WAIT_MS)
            boxes = units.evaluate_all("(all) => all.map((b) => b.getBoundingClientRect().toJSON())")
            more = page.locator(".st-key-mt_live button.more:visible").evaluate_all(
                "(all) => all.map((b) => b.getBoundingClientRect().toJSON())")
            assert len(boxes) == 2 + 12 + 12 + 1 and len(more) == 2, (theme, len(boxes), len(more))
            for box in boxes + more:
                assert box["x"] >= 0 and box["x"] + box["width"] <= PROJECTORS[0][0], (theme, box)
            assert min(min(b["width"], b["height"]) for b in boxes) >= 32, (theme, boxes)
            assert page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollWidth"
                                 " <= innerWidth"), theme
    finally:
        page.context.close()


def test_a_finished_run_keeps_the_plane_large_with_the_replay_under_it(browser, app_url):
    """After a run ends, the finished note joins the buttons and the replay slider appears: on a
    projector the slider goes under the view, so the plane keeps its room (321 px of 720 at
    1280x720, against 380 before the run; with the slider above the view it was about 245)."""
    size = PROJECTORS[0]
    page = first_screen(browser, app_url, PATH + "&speed=max", size, present=True)
    try:
        _laid_out(page)
        page.locator(CONTROLS["Play"]).first.click()
        slider = page.locator(".st-key-mt_replay")
        expect(slider).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Finished", exact=False).first).to_be_visible(timeout=WAIT_MS)
        _laid_out(page)
        canvas = page.locator(f"{BOUNDARY} canvas.plane").element_handle()
        page.wait_for_function("([plane, h]) => plane.getBoundingClientRect().height >= h",
                               arg=[canvas, 0.42 * size[1]], timeout=WAIT_MS)
        plane = assert_on_first_screen(page, page.locator(f"{BOUNDARY} canvas.plane"),
                                       "the finished run's plane")
        assert slider.bounding_box()["y"] >= plane["y"] + plane["height"], "the replay is under the view"
    finally:
        page.context.close()
