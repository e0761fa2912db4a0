"""Every tool's first screen on a school laptop (1366x768, the normal layout), a projector
(1280x720, `present=1`) and a phone (390x844, touch), issue 43: the tool's key figure at least
60% on the first screen and its main control wholly on it, the figure leading (the page's
settings fold or sit aside). The figure and the control are the `figure_key` and `control_key`
of each tool's record in workbench/tools.py, so a tool added there is checked here too.

One browser context per screen (a phone's touch cannot be switched on in a context), each
opening the four tools in turn; presenter mode is a link's, as a teacher opens it.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_drawn
from harness.stage import LAPTOP, PHONE, PROJECTOR, assert_on_first_screen, share_on_first_screen
from tests.e2e.clean import assert_clean
from tests.e2e.waiting import WAIT_MS, wait_still
from workbench.tools import TOOLS

pytestmark = pytest.mark.e2e

MIN_FIGURE_SHARE = 0.6
SCREENS = {"laptop": (LAPTOP, ""), "projector": (PROJECTOR, "?present=1"), "phone": (PHONE, "")}
# What a figure is drawn with: its picture is in once one of these is visible inside it (the
# moons trainer's canvases sit in a shadow root, which Playwright's CSS locators pierce).
DRAWN = "svg, canvas, table"


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_tool_leads_with_its_figure_and_control_on_the_first_screen(browser, app_url, screen):
    (width, height), query = SCREENS[screen]
    phone = screen == "phone"
    context = browser.new_context(viewport={"width": width, "height": height},
                                  has_touch=phone, is_mobile=phone)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    problems = []
    try:
        for tool in TOOLS:
            open_path(page, app_url, f"/{tool.url_path}{query}")
            assert_clean(page, f"{tool.name} on the {screen}")
            figure = page.locator(f".st-key-{tool.figure_key}")
            expect(figure.locator(DRAWN).first).to_be_visible(timeout=WAIT_MS)
            wait_drawn(page)
            wait_still(page, figure)
            share, found = share_on_first_screen(page, figure)
            if share < MIN_FIGURE_SHARE:
                problems.append(f"{tool.name}: only {share:.0%} of its figure ({tool.figure_key}) "
                                f"is on the {screen}'s first screen: {found}")
            control = page.locator(f".st-key-{tool.control_key}").first
            try:
                placed = assert_on_first_screen(page, control, f"{tool.name}'s {tool.control_key}")
            except AssertionError as exc:
                problems.append(str(exc))
                continue
            # What docs/presenter.md quotes (`pytest tests/e2e/test_first_screens.py -s`).
            print(f"{screen} {width}x{height} {tool.name}: figure {share:.0%} on screen from "
                  f"y={found['y']:.0f}, {tool.control_key} at y={placed['y']:.0f}-"
                  f"{placed['y'] + placed['height']:.0f}")
    finally:
        context.close()
    assert not problems, f"{screen} ({width}x{height}):\n" + "\n".join(problems)
