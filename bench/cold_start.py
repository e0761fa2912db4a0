"""Cold start: from `streamlit run` to the first page rendered in headless Chromium.

Prints seconds to a healthy server, and to the home page's main element being visible, for a
fresh server process. Run: .venv/bin/python bench/cold_start.py [path] [--save]
(--save: docs/figures/cold_start.json, or cold_start_<page>.json for another path)
"""
from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402
from bench.figures import Run  # noqa: E402


def main() -> None:
    run = Run("cold_start", "Cold start: from `streamlit run` to the first page in Chromium")
    path = sys.argv[1] if len(sys.argv) > 1 else "/"
    if path != "/":
        run.name += "_" + "".join(c if c.isalnum() else "_" for c in path.strip("/"))
        run.title += f" ({path} as the first request)"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "streamlit_app.py",
                                   "--server.headless", "true", "--server.address", "127.0.0.1",
                                   "--server.port", str(port)], cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
