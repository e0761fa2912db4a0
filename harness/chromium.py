"""Debian's Chromium as the tests and benchmarks drive it with Playwright, and the waits for a
page: `open_path`, `wait_settled` (the script run has finished) and `wait_drawn` (the page is
drawn at its final sizes, so that layout read after it is the page's last).
"""
from __future__ import annotations

import os

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# No sandbox (the suite runs as root in CI), no GPU (headless on a server), and none of Chromium's
# own background traffic (updates, sync, QUIC probes), which would only add noise to a timing.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SETTLED = "[data-testid=stApp][data-test-script-state=notRunning]"
# A generous wait for content on a machine shared with others: a full run beside three other
# Chromium suites (load average 13-16 on 2 cores) once took over 30 s to draw a lazily loaded code
# block. A wait ends as soon as the content is there, so a longer one costs a passing run nothing.
WAIT_MS = 60_000


def launch(playwright):
    """Headless Chromium from a started `sync_playwright()` (or its async twin)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def open_path(page, app_url: str, path: str) -> None:
    """Go to `path` and wait until the script run has finished."""
    page.goto(app_url + path)
    wait_settled(page)


def wait_settled(page, timeout: float = 120_000) -> None:
    page.wait_for_selector(SETTLED, timeout=timeout)


# A finished run is not yet a drawn page: Streamlit loads some elements' code on first use (a
# Plotly chart, `st.html` and the page's styles in it, many widgets) and shows a skeleton until
# it has, seconds after the run on a busy machine; a Plotly chart then fits its SVG to the box
# the page's styles give it. Sizes read before that are the page's intermediate ones.
DRAWN_JS = """
() => {
  const app = document.querySelector('[data-testid=stApp]');
  if (!app || app.dataset.testScriptState !== 'notRunning') return false;
  if (document.querySelector('[data-testid=stSkeleton]')) return false;
  for (const chart of document.querySelectorAll('[data-testid=stPlotlyChart]')) {
    const c = chart.getBoundingClientRect();
    if (!c.width || !c.height) continue;           // folded away: not laid out
    const svg = chart.querySelector('svg.main-svg');
    if (!svg) return false;
    const s = svg.getBoundingClientRect();
    if (Math.abs(s.height - c.height) >= 2 || Math.abs(s.width - c.width) >= 2) return false;
  }
  return true;
}
"""


def wait_drawn(page, timeout: float = 120_000) -> None:
    """Wait until the run has finished and its page is drawn at its final sizes: no element
    still loading, every Plotly chart on screen fitted to its box. Read layout after this."""
    page.wait_for_function(DRAWN_JS, timeout=timeout)
