"""Cold start: from `streamlit run` to the first page rendered in headless Chromium.

Starts a fresh server process --runs times (after one start that is not counted) and prints,
for each, seconds to a healthy server, to the page's first screen (what bench/page_open.py
waits for: the page's title or main control shown, no loading skeleton in the window), and to
the whole page drawn; then the medians and the slowest. One run is not a figure: whether the
first request lands between two of the warm-up's imports or in the middle of one moves it by
a second. Run: .venv/bin/python -m bench.cold_start [path] [--runs N] [--no-warm-up]
[--no-bytecode] [--save] (--save: docs/figures/cold_start.json, or cold_start_<page>.json for
another path)

The server finds Python's compiled bytecode where `make run` keeps it (the Makefile's
PYTHONPYCACHEPREFIX, .venv/pycache), as a server that started before does; the Docker image
compiles the same cache when it is built (deploy/Dockerfile). The start that is not counted
writes what is missing. --no-bytecode starts every server with an empty cache it may not write
to (PYTHONDONTWRITEBYTECODE=1): every module compiled from source on every start, which is what
the Docker image paid before it kept its cache (`/` drawn whole: 11.9 s against 3.8 s). Before
it set the cache itself, this benchmark took whatever its shell had: with PYTHONDONTWRITEBYTECODE
set and no cache folder, only PyTorch's and NumPy's bundled bytecode was read (6.2 s).

It waited for the first element with a `st-key-` class before, which became the theme's
hidden repair container (components/accessible_theme.py): never visible, so every run timed out.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

from harness.app import ROOT, command, free_port
from harness.chromium import launch
from harness.figures import Run, parser
from app_pages.warm_up import SWITCH
from bench.page_open import PAGES, _TIMES_JS

HOME_FIRST_SCREEN = PAGES["home"][2]
BYTECODE_CACHE = ROOT / ".venv" / "pycache"          # the Makefile's PYTHONPYCACHEPREFIX


def first_screen(path: str) -> str:
    """What the first screen of `path` must show: page_open's selector for the same page."""
    page = path.split("?", 1)[0]
    found = [first for (opened, _, first) in PAGES.values() if opened.split("?", 1)[0] == page]
    return found[0] if found else HOME_FIRST_SCREEN


def server_environment(warm_up: bool, bytecode_cache: Path | None) -> dict[str, str]:
    """The server's environment: the warm-up on or off; bytecode read from (and written to)
    `bytecode_cache`, or, with None, compiled from source and never kept."""
    env = {**os.environ, SWITCH: "1" if warm_up else "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if bytecode_cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="cold-start-no-bytecode-")
    else:
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_cache)
    return env


def start_once(browser, path: str, env: dict[str, str]) -> tuple[float, float, float]:
    """One fresh server: seconds from its start to healthy, to `path`'s first screen, and to
    the whole page drawn, in a new tab of a browser already running."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    started = time.perf_counter()
    # Not harness.app.serve: the time from the process's start to its first healthy answer
    # is what this measures.
    server = subprocess.Popen(command(port), cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env)
    try:
        while True:
            try:
                if urllib.request.urlopen(base + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.05)
        healthy = time.perf_counter() - started
        asked = time.perf_counter() - started
        page.goto(base + path)
        first_ms, drawn_ms = page.wait_for_function(
            _TIMES_JS, arg=first_screen(path), polling="raf", timeout=120_000).json_value()
    finally:
        server.terminate()
        server.wait(timeout=10)
        context.close()
    return healthy, asked + first_ms / 1000, asked + drawn_ms / 1000


def main() -> None:
    run = Run("cold_start", "Cold start: from `streamlit run` to the first page in Chromium")
    options = parser(__doc__)
    options.add_argument("path", nargs="?", default="/", help="the first page to open (default /)")
    options.add_argument("--runs", type=int, default=5, help="fresh servers measured (default 5)")
    options.add_argument("--no-warm-up", action="store_true",
                         help="start the server without its warm-up (app_pages/warm_up.py), to "
                              "compare")
    options.add_argument("--no-bytecode", action="store_true",
                         help="compile every module from source on every start, to compare")
    parsed = options.parse_args()
    path = parsed.path
    if parsed.no_warm_up:
        run.name += "_no_warm_up"
        run.title += " (no warm-up)"
    if parsed.no_bytecode:
        run.name += "_no_bytecode"
        run.title += " (no bytecode cache)"
    if path != "/":
        run.name += "_" + "".join(c if c.isalnum() else "_" for c in path.strip("/"))
        run.title += f" ({path} as the first request)"
    env = server_environment(not parsed.no_warm_up,
                             None if parsed.no_bytecode else BYTECODE_CACHE)
    times: list[tuple[float, float, float]] = []
    with sync_playwright() as p:
        browser = launch(p)
        start_once(browser, path, env)                  # not counted: writes missing bytecode
        for number in range(1, parsed.runs + 1):
            times.append(start_once(browser, path, env))
            healthy, first, drawn = times[-1]
            print(f"cold start {number} of {parsed.runs}, {path}: healthy after {healthy:.2f} s, "
                  f"first screen after {first:.2f} s, whole page drawn after {drawn:.2f} s")
        browser.close()

    def summary(column: int) -> str:
        values = [row[column] for row in times]
        return f"median {statistics.median(values):.2f} s, slowest {max(values):.2f} s"

    print(f"{parsed.runs} cold starts of {path}: healthy {summary(0)}; first screen "
          f"{summary(1)}; whole page {summary(2)} (browser already running)")
    run.save([("`streamlit run` to a healthy server", summary(0)),
              (f"`streamlit run` to `{path}`'s first screen in Chromium", summary(1)),
              (f"`streamlit run` to `{path}` drawn whole in Chromium", summary(2)),
              ("fresh servers measured (after one not counted)", str(parsed.runs))])


if __name__ == "__main__":
    main()
