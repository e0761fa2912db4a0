"""Checks of presenter mode's first screen, shared by each tool's projector test
(tests/e2e/test_presenter_*.py) and bench/presenter_stage.py.

A teacher's projector shows 1280x720 or 1366x768 and nothing below the fold: `first_screen`
opens a page there with `present=1`; `assert_on_first_screen` checks that an element's bounding
box lies inside the viewport; `clipped_texts` lists texts cut by their box (an ellipsis, a
scrolled-off line, SVG text outside its picture); `text_px` is the median size at which a
figure's text is drawn on screen, SVG scaling included, to compare with the normal view. Each
of them reads the layout only once the page is drawn at its final sizes (`wait_drawn`): a
finished run's styles and charts still arrive for a few seconds on a busy machine.
"""
from __future__ import annotations

from playwright.sync_api import Locator, Page, expect

from harness.chromium import WAIT_MS, open_path, wait_drawn

PROJECTORS = ((1280, 720), (1366, 768))
# The first screens every tool page is laid out for (issue 43, tests/e2e/test_first_screens.py):
# a school laptop (most are 1366x768 Chromebooks) in the normal layout, a projector in presenter
# mode, and a phone that joined a class by its QR code (touch, 390x844).
LAPTOP, PROJECTOR, PHONE = (1366, 768), (1280, 720), (390, 844)
# The projectors and a full-HD screen: where a stage must also hold, and grow.
SCREENS = (*PROJECTORS, (1920, 1080))


def first_screen(browser, app_url: str, path: str, size: tuple[int, int], *,
                 present: bool = True, theme: str = "light") -> Page:
    """A fresh tab at `size` with `path` open (presenter mode on unless `present=False`)."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=theme)
    page = context.new_page()
    page.set_default_timeout(60_000)
    joiner = "&" if "?" in path else "?"
    open_path(page, app_url, path + (f"{joiner}present=1" if present else ""))
    wait_drawn(page)
    return page


# The sidebar has finished opening once it is on screen at its full width and the page's main
# block has moved out from under it.
_SIDEBAR_OPEN_JS = """
() => {
  const bar = document.querySelector('[data-testid=stSidebar]');
  const main = document.querySelector('[data-testid=stMainBlockContainer]');
  if (!bar || !main) return false;
  const b = bar.getBoundingClientRect(), m = main.getBoundingClientRect();
  return b.left >= -1 && b.width > 150 && m.left >= b.right - 1;
}
"""


def open_sidebar(page: Page) -> None:
    """Open the sidebar that presenter mode starts folded, as a teacher would, and wait until
    it has opened."""
    page.locator("[data-testid=stExpandSidebarButton]").click()
    page.wait_for_function(_SIDEBAR_OPEN_JS, timeout=WAIT_MS)


def box(locator: Locator) -> dict:
    expect(locator).to_be_visible(timeout=WAIT_MS)
    wait_drawn(locator.page)
    found = locator.bounding_box()
    assert found is not None, f"{locator} has no box"
    return found


def assert_on_first_screen(page: Page, locator: Locator, what: str) -> dict:
    """`locator`'s box lies inside the viewport, with the page scrolled to the top."""
    # Streamlit scrolls its main section, not the window (after a click that scrolled a panel
    # into view, the window is still at 0 and the page is not).
    page.evaluate("window.scrollTo(0, 0); "
                  "document.querySelector('[data-testid=stMain]')?.scrollTo({top: 0, behavior: 'instant'})")
    found = box(locator)
    size = page.viewport_size
    assert found["x"] >= -1 and found["y"] >= -1, f"{what} starts off screen: {found}"
    assert found["x"] + found["width"] <= size["width"] + 1, f"{what} is cut at the right: {found}"
    assert found["y"] + found["height"] <= size["height"] + 1, \
        f"{what} reaches below the first screen ({size['height']} px): {found}"
    return found


def share_on_first_screen(page: Page, locator: Locator) -> tuple[float, dict]:
    """The share of `locator`'s box that lies inside the viewport with the page scrolled to the
    top (0 to 1, by area), and the box."""
    page.evaluate("window.scrollTo(0, 0); "
                  "document.querySelector('[data-testid=stMain]')?.scrollTo({top: 0, behavior: 'instant'})")
    found = box(locator)
    size = page.viewport_size
    seen_w = max(0.0, min(found["x"] + found["width"], size["width"]) - max(found["x"], 0.0))
    seen_h = max(0.0, min(found["y"] + found["height"], size["height"]) - max(found["y"], 0.0))
    area = found["width"] * found["height"]
    return (seen_w * seen_h / area if area else 0.0), found


_CLIPPED_JS = """
(root) => {
  const cut = [];
  for (const el of root.querySelectorAll('*')) {
    const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!text) {
      // An ellipsis cuts the text of the children too (a widget label's <p> in a truncating <div>).
      const s = getComputedStyle(el);
      if (s.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1 && el.textContent.trim())
        cut.push(el.textContent.trim());
      continue;
    }
    if (el instanceof SVGElement) {
      const svg = el.ownerSVGElement; if (!svg) continue;
      const r = el.getBoundingClientRect(), s = svg.getBoundingClientRect();
      const outside = r.left < s.left - 1 || r.right > s.right + 1
        || r.top < s.top - 1 || r.bottom > s.bottom + 1;
      if (r.width && outside) cut.push(text);
      continue;
    }
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    // A screen reader's label (an icon button's name): a 1 px box by design, never seen.
    if (style.position === 'absolute' && el.clientWidth <= 1 && el.clientHeight <= 1) continue;
    const hides = /hidden|clip|auto|scroll/.test(style.overflowX + style.overflowY)
      || style.textOverflow === 'ellipsis';
    const overflows = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 2;
    if (hides && overflows) { cut.push(text); continue; }
    // Text in an inline element (a page link's bold label) has no scroll box of its own: the
    // box that cuts it is an ancestor that hides its overflow (a one-pixel screen-reader box
    // hides on purpose and does not count).
    const r = el.getBoundingClientRect();
    if (!r.width) continue;
    for (let up = el.parentElement; up && up !== root && root.contains(up); up = up.parentElement) {
      const s = getComputedStyle(up);
      if (!/hidden|clip/.test(s.overflowX + s.overflowY)) continue;
      const b = up.getBoundingClientRect();
      if (b.width <= 2 || b.height <= 2) break;
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
        cut.push(text);
        break;
      }
    }
  }
  return cut;
}
"""

_TEXT_PX_JS = """
(root) => {
  const sizes = [];
  for (const el of root.querySelectorAll('*')) {
    const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!text) continue;
    let px = parseFloat(getComputedStyle(el).fontSize);
    if (el instanceof SVGElement && el.getScreenCTM) {
      const m = el.getScreenCTM();
      if (m) px *= Math.hypot(m.a, m.b);
    }
    if (px > 0) sizes.push(px);
  }
  if (root.dataset && root.dataset.fontPx) sizes.push(parseFloat(root.dataset.fontPx));
  sizes.sort((a, b) => a - b);
  return sizes.length ? sizes[Math.floor(sizes.length / 2)] : 0;
}
"""


def clipped_texts(locator: Locator) -> list[str]:
    """Texts inside `locator` that their own box cuts: ellipsis, overflow, SVG text outside its SVG."""
    wait_drawn(locator.page)
    return locator.evaluate(_CLIPPED_JS)


def text_px(locator: Locator) -> float:
    """The median on-screen font size of the text inside `locator`, SVG scaling included."""
    wait_drawn(locator.page)
    return locator.evaluate(_TEXT_PX_JS)
