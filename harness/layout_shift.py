"""Layout shift on the moons trainer, as Chromium reports it: the sum of the `layout-shift`
PerformanceObserver entries without `hadRecentInput` (a shift within 500 ms of a click is the
page answering it, not a jump), over Play-to-finish and over *Draw on these points*.

Shared by bench/layout_shift.py (prints the figures) and tests/e2e/test_layout_shift.py (asserts
each stays within LIMIT, the threshold Web Vitals calls good).
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.chromium import DRAWN_JS, wait_settled
from harness.live_view import wait_live

LIMIT = 0.1
SIZE = (1366, 768)                      # most school laptops (issue 43)
# A short run: it finishes within seconds, and everything a finished run adds comes with it.
PLAY_PATH = "/moons_trainer?n=300&epochs=5&speed=max"
DRAW_PATH = "/moons_trainer?n=300&epochs=5"

# Installed before the page's own scripts: every shift from the navigation on is kept, with the
# elements that moved (their nearest `st-key-` class, or their test id).
OBSERVE_JS = """
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const moved = (entry.sources || []).map((s) => {
      const node = s.node && (s.node.nodeType === 1 ? s.node : s.node.parentElement);
      if (!node) return '?';
      const keyed = node.closest('[class*="st-key-"]');
      const key = keyed && [...keyed.classList].find((c) => c.startsWith('st-key-'));
      const id = node.closest('[data-testid]');
      return (key || (id && id.dataset.testid) || node.tagName) + ' ' +
             Math.round(s.previousRect.y) + '->' + Math.round(s.currentRect.y);
    });
    window.__shifts.push({value: entry.value, input: entry.hadRecentInput, at: entry.startTime,
                          moved});
  }
}).observe({type: 'layout-shift', buffered: true});
"""


# From the click on, every frame: how far the live view's box (the plane and the curves) has
# moved from where it was at the click, the largest distance seen, in CSS px.
WATCH_VIEW_JS = """() => {
  const box = () => document.querySelector('.st-key-mt_live');
  const top = () => { const b = box(); return b ? b.getBoundingClientRect().top + scrollY : null; };
  const start = top();
  window.__viewMoved = 0;
  const look = () => {
    const now = top();
    if (start !== null && now !== null)
      window.__viewMoved = Math.max(window.__viewMoved, Math.abs(now - start));
    window.__viewWatch = requestAnimationFrame(look);
  };
  look();
  return performance.now();
}"""


@dataclass(frozen=True)
class Shift:
    total: float                        # the sum of the entries without recent input
    entries: int
    largest: list[str]                  # the elements of the largest entries, for the reader
    view_moved: float                   # px: how far the live view moved at most

    def describe(self) -> str:
        moved = "; ".join(self.largest) if self.largest else "nothing moved"
        return (f"layout shift {self.total:.3f} ({self.entries} shifts; largest: {moved}); "
                f"the live view moved {self.view_moved:.0f} px")


def _settled(page) -> None:
    wait_settled(page)
    page.wait_for_function(DRAWN_JS, polling="raf", timeout=120_000)
    wait_live(page)


def _shift_since(page, start: float) -> Shift:
    entries = page.evaluate("(start) => window.__shifts.filter((e) => e.at >= start && !e.input)",
                            start)
    moved = page.evaluate("cancelAnimationFrame(window.__viewWatch), window.__viewMoved")
    entries.sort(key=lambda e: -e["value"])
    return Shift(round(sum(e["value"] for e in entries), 4), len(entries),
                 [f"{e['value']:.3f}: " + ", ".join(e["moved"][:3]) for e in entries[:3]],
                 float(moved))


def _open(browser, base: str, path: str):
    context = browser.new_context(viewport={"width": SIZE[0], "height": SIZE[1]})
    context.add_init_script(OBSERVE_JS)
    page = context.new_page()
    page.goto(base + path)
    _settled(page)
    return context, page


def _press(page, key: str) -> float:
    button = page.locator(f".st-key-{key} button").first
    button.wait_for()
    start = page.evaluate(WATCH_VIEW_JS)
    button.click()
    return start


def play_to_finish(browser, base: str) -> Shift:
    """Play on a fresh page, until the run has finished and the page has drawn what follows."""
    context, page = _open(browser, base, PLAY_PATH)
    try:
        start = _press(page, "mt_play")
        wait_live(page, "v.epoch === 5 && !v.status.includes('training')", timeout=120_000)
        page.locator(".st-key-mt_end_note").wait_for(timeout=120_000)
        _settled(page)
        return _shift_since(page, start)
    finally:
        context.close()


def draw_on_these(browser, base: str) -> Shift:
    """*Draw on these points* on a fresh page, until the drawing is drawn."""
    context, page = _open(browser, base, DRAW_PATH)
    try:
        start = _press(page, "mt_draw_these")
        page.wait_for_function("new URLSearchParams(location.search).get('dataset') === 'drawn'",
                               timeout=120_000)
        _settled(page)
        return _shift_since(page, start)
    finally:
        context.close()
