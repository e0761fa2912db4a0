"""Cold start: from `streamlit run` to the first page rendered in headless Chromium.

Prints seconds to a healthy server, and to the home page's main element being visible, for a
fresh server process. Run: .venv/bin/python -m bench.cold_start [path] [--save]
(--save: docs/figures/cold_start.json, or cold_start_<page>.json for another path)
"""
from __future__ import annotations

import subprocess
import time
import urllib.request

from playwright.sync_api import sync_playwright

from harness.app import ROOT, command, free_port
from harness.chromium import launch
from harness.figures import Run, parser


def main() -> None:
    run = Run("cold_start", "Cold start: from `streamlit run` to the first page in Chromium")
    options = parser(__doc__)
    options.add_argument("path", nargs="?", default="/", help="the first page to open (default /)")
    path = options.parse_args().path
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
                                  stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    if urllib.request.urlopen(base + "/_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.05)
            healthy = time.perf_counter() - started
            page.goto(base + path)
            page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]",
                                   timeout=120_000)
            page.wait_for_selector("[data-testid=stMain] [class*=st-key-]", timeout=60_000)
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
