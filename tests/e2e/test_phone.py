"""The workbench on a phone (390x844, touch), as a class that joins by QR code uses it (issue 43):
every page in one column with no sideways scrolling, every pointer target at least 24x24 CSS px
(WCAG 2.2's 2.5.8), and axe-core's WCAG 2.2 AA rules in both themes finding nothing; the moons
trainer's network view scrolls in its own box, which the keyboard reaches; a learner in a class
has its state (In class CODE, Follow, Leave) on the page itself, not only in the folded sidebar.
Each tool's figure and control on the phone's first screen: tests/e2e/test_first_screens.py.
"""
from __future__ import annotations

import contextlib

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from app_pages.navigation import all_pages
from harness.chromium import open_path, wait_drawn
from harness.live_view import VIEW_OBJECT, wait_live
from harness.stage import PHONE
from tests.e2e.clean import assert_clean
from tests.e2e.test_accessibility import in_both_themes
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e

MIN_TARGET_PX = 24

# Every pointer target inside `root` smaller than 24x24: what a finger presses is an input's
# label (Streamlit hides a toggle's, a radio's and a checkbox's input in its label), a range
# input's track, or the element itself. Skipped: what is not drawn, a skip link out of sight
# until focused (1x1), and a folded sidebar's content (inert).
_SMALL_TARGETS_JS = """
([root, least]) => {
  const small = [], seen = new Set();
  const selector = 'a[href], button, input, select, textarea, summary, [role=button], '
    + '[role=switch], [role=checkbox], [role=radio], [role=slider], [role=tab], [role=option], '
    + '[tabindex]:not([tabindex="-1"])';
  for (const element of root.querySelectorAll(selector)) {
    if (element.disabled) continue;
    let target = element;
    if (element.matches('input[type=range]')) {
      target = element.closest('[data-orientation][style*="touch-action"]') || element;
    } else if (element.matches('input') && element.closest('label')) {
      target = element.closest('label');
    }
    if (seen.has(target)) continue;
    seen.add(target);
    const r = target.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || getComputedStyle(target).visibility === 'hidden') continue;
    if (r.right <= 0 || element.closest('[inert]')) continue;
    if (r.width < least || r.height < least) {
      const key = target.closest('[class*="st-key-"]')?.className.match(/st-key-\\S+/)?.[0] || '';
      const name = (element.getAttribute('aria-label') || element.textContent || '').trim();
      small.push(`${Math.round(r.width)}x${Math.round(r.height)} <${element.tagName.toLowerCase()}> `
                 + `"${name.slice(0, 40)}" ${key}`);
    }
  }
  return small;
}
"""

# How far the page reaches past the screen's right edge: the document's and Streamlit's main
# section's scrolling widths (a box that scrolls by itself, a wide table's, is inside them).
_WIDTHS_JS = """
() => [document.documentElement.scrollWidth,
       document.querySelector('[data-testid=stMain]').scrollWidth]
"""


def _assert_fits_the_width(page: Page, what: str) -> None:
    """No sideways scrolling, once the page has settled (a tab bar is as wide as its tabs for a
    moment before its own scrolling box takes them)."""
    fits = f"() => Math.max(...({_WIDTHS_JS})()) <= {PHONE[0] + 1}"
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(fits, timeout=WAIT_MS)
    widths = page.evaluate(_WIDTHS_JS)
    assert max(widths) <= PHONE[0] + 1, f"{what} scrolls sideways on a phone: {widths}"


def _phone(browser, app_url: str, path: str) -> Page:
    width, height = PHONE
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True,
                                  is_mobile=True, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    open_path(page, app_url, path)
    wait_drawn(page)
    assert_clean(page, path)
    return page


# On a phone the opened sidebar lies over the page (the page does not move aside): it is open
# once it is on screen at its full width and no longer inert.
_SIDEBAR_OVER_JS = """
() => {
  const bar = document.querySelector('[data-testid=stSidebar]');
  if (!bar || bar.hasAttribute('inert')) return false;
  const b = bar.getBoundingClientRect();
  // and has stopped sliding: mid-slide its buttons measure a fraction of a pixel short.
  return b.left >= -1 && b.width > 150 && bar.getAnimations({subtree: true}).length === 0;
}
"""


def _open_sidebar(page: Page) -> None:
    page.locator("[data-testid=stExpandSidebarButton]").click()
    page.wait_for_function(_SIDEBAR_OVER_JS, timeout=WAIT_MS)


def _small_targets(page: Page, root_selector: str = "body") -> list[str]:
    return page.evaluate(_SMALL_TARGETS_JS, [page.query_selector(root_selector), MIN_TARGET_PX])


@pytest.mark.parametrize("path", [f"/{page.url_path}" for page in all_pages()])
def test_a_page_on_a_phone_fits_its_width_has_24px_targets_and_no_axe_finding(browser, app_url, path):
    page = _phone(browser, app_url, path)
    _assert_fits_the_width(page, path)
    assert _small_targets(page) == [], f"{path}: targets under 24x24 px"
    in_both_themes(page, f"{path} on a phone")
    _open_sidebar(page)
    assert _small_targets(page, "[data-testid=stSidebar]") == [], f"{path}: the sidebar's targets"
    page.context.close()


def test_the_network_view_scrolls_in_its_own_box_and_the_keyboard_reaches_the_output(browser, app_url):
    page = _phone(browser, app_url, "/moons_trainer?n=300&net=1")
    wait_live(page, "v.network > 0")
    _assert_fits_the_width(page, "the moons trainer's network view")
    stage = f"{VIEW_OBJECT}.root.querySelector('.network-stage')"
    assert page.evaluate(f"() => {{ const s = {stage}; return s.scrollWidth > s.clientWidth; }}"), \
        "the network is drawn narrower than a phone: this test no longer tests the scrolling"
    units = page.locator(".st-key-mt_live button.unit")
    units.first.focus()
    # Right across the layers to the output unit: the focused unit scrolls into the box's view.
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    output = page.locator(".st-key-mt_live .layer:last-child button.unit").first
    expect(output).to_be_focused()
    found = output.bounding_box()
    assert found is not None and 0 <= found["x"] and found["x"] + found["width"] <= PHONE[0], found
    assert page.evaluate(f"() => {stage}.scrollLeft") > 0
    page.context.close()


def test_a_learner_in_a_class_sees_it_on_the_page_itself(browser, app_url, servers_store):
    """The class is made in the store the server uses (the environment tests/conftest.py sets)."""
    started = servers_store.start_class()
    page = _phone(browser, app_url, f"/?class={started.code}")
    open_path(page, app_url, "/moons_trainer")
    bar = page.locator(".st-key-class_seat")
    expect(bar).to_contain_text(f"In class {started.code}")
    for control in (bar.get_by_text("Follow the teacher"), bar.get_by_role("button", name="Leave")):
        expect(control).to_be_visible()
        found = control.bounding_box()
        assert found is not None and found["y"] + found["height"] <= PHONE[1], found
    expect(page.locator("[data-testid=stSidebar]")).to_have_attribute("inert", "")
    page.context.close()
