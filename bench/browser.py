"""A real `streamlit run streamlit_app.py` on 127.0.0.1 and the headless Chromium that opens it,
shared by the benchmarks that drive a browser and by the end-to-end tests (tests/e2e/conftest.py).

`serve` starts a fresh server on a free loopback port and stops it on exit; `open_path`,
`wait_settled` and `wait_drawn` wait, in a Playwright page, for a run to finish and for its page
to be drawn at its final sizes.
"""
from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SETTLED = "[data-testid=stApp][data-test-script-state=notRunning]"
# A generous wait for content on a machine shared with others: a full run beside three other
# Chromium suites (load average 13-16 on 2 cores) once took over 30 s to draw a lazily loaded code
# block. A wait ends as soon as the content is there, so a longer one costs a passing run nothing.
WAIT_MS = 60_000
# The server runs under an address-space cap: a runaway allocation (a link that asks for 20 GB)
# fails the test with a dead server instead of taking the machine down. A healthy server with
# torch, Streamlit and a few worker threads reserves about 2-4 GB of address space.
SERVER_ADDRESS_SPACE = int(os.environ.get("E2E_SERVER_ADDRESS_SPACE", 8 * 2**30))


def cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SERVER_ADDRESS_SPACE, SERVER_ADDRESS_SPACE))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base: str, server: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.returncode}")
        try:
            if urllib.request.urlopen(base + "/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"no healthy streamlit at {base} after {timeout}s")


@contextlib.contextmanager
def serve(*, launcher: str = "streamlit", env: dict[str, str] | None = None) -> Iterator[str]:
    """A fresh `streamlit run streamlit_app.py` (the app's one entry, as `make run`, the
    Dockerfile and Community Cloud start it) on a free loopback port, stopped on exit.
    `launcher`: the module `python -m` runs (tests/e2e/planted.py plants failures); `env`:
    variables set for the server only (a class database's URL), over this process's."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", launcher, "run", "streamlit_app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        preexec_fn=cap_address_space, env={**os.environ, **(env or {})})
    try:
        wait_healthy(base, server)
        yield base
    finally:
        stop(server)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


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
_DRAWN_JS = """
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
    page.wait_for_function(_DRAWN_JS, timeout=timeout)
