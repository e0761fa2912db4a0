"""Cold start: from `streamlit run` to the first page rendered in headless Chromium.

Prints seconds to a healthy server, and to the page's first screen (what bench/page_open.py
waits for: the page's title or main control shown, no loading skeleton in the window), for a
fresh server process. Run: .venv/bin/python -m bench.cold_start [path] [--save]
(--save: docs/figures/cold_start.json, or cold_start_<page>.json for another path)

It waited for the first element with a `st-key-` class before, which became the theme's
hidden repair container (components/accessible_theme.py): never visible, so every run timed out.
"""
from __future__ import annotations

import os
import subprocess
import time
import urllib.request

from playwright.sync_api import sync_playwright

from harness.app import ROOT, command, free_port
from harness.chromium import launch
from harness.figures import Run, parser
from app_pages.warm_up import SWITCH
from bench.page_open import PAGES, _TIMES_JS

HOME_FIRST_SCREEN = PAGES["home"][2]


def first_screen(path: str) -> str:
    """What the first screen of `path` must show: page_open's selector for the same page."""
    page = path.split("?", 1)[0]
    found = [first for (opened, _, first) in PAGES.values() if opened.split("?", 1)[0] == page]
    return found[0] if found else HOME_FIRST_SCREEN


def main() -> None:
    run = Run("cold_start", "Cold start: from `streamlit run` to the first page in Chromium")
    options = parser(__doc__)
    options.add_argument("path", nargs="?", default="/", help="the first page to open (default /)")
    options.add_argument("--no-warm-up", action="store_true",
                         help="start the server without its warm-up (app_pages/warm_up.py), to "
                              "compare")
    parsed = options.parse_args()
    path = parsed.path
    if parsed.no_warm_up:
        run.name += "_no_warm_up"
        run.title += " (no warm-up)"
    if path != "/":
        run.name += "_" + "".join(c if c.isalnum() else "_" for c in path.strip("/"))
        run.title += f" ({path} as the first request)"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        # Not harness.app.serve: the time from the process's start to its first healthy answer
        # is what this measures.
        server = subprocess.Popen(command(port), cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL,
                                  env={**os.environ, SWITCH: "0" if parsed.no_warm_up else "1"})
        try:
            while True:
                try:
                    if urllib.request.urlopen(base + "/_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.05)
            healthy = time.perf_counter() - started
            page.goto(base + path)
            page.wait_for_function(_TIMES_JS, arg=first_screen(path), polling="raf",
                                   timeout=120_000)
            rendered = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=10)
        browser.close()
    print(f"cold start {path}: server healthy after {healthy:.2f}s, "
          f"first page rendered after {rendered:.2f}s (browser already running)")
    run.save([("`streamlit run` to a healthy server", f"{healthy:.2f} s"),
              (f"`streamlit run` to `{path}` rendered in Chromium (browser already running)",
               f"{rendered:.2f} s")])


if __name__ == "__main__":
    main()
