"""A real `streamlit run` on 127.0.0.1 and headless Debian Chromium driven by Playwright.

The server is started once per test session on a free port and stopped at the end; each test
gets a fresh browser page (a fresh Streamlit session). Starting the server and the browser, and
waiting for a page, live in harness/app.py and harness/chromium.py, which the benchmarks share.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from harness import app as _app
from harness.chromium import CHROMIUM, launch
from tests.e2e.waiting import WAIT_MS

# An `expect` waits for content as long as the tests' own waits do: Playwright's 5 s default is
# missed by a fresh context's first chart on a loaded 2-core machine, on old and new code alike.
expect.set_options(timeout=WAIT_MS)

# E2E_PLANT=1: every server of the session breaks each page after drawing it (tests/e2e/planted.py),
# so that each "the page is clean" check can be seen to fail.
PLANTED = os.environ.get("E2E_PLANT", "") not in ("", "0")


@contextlib.contextmanager
def serve(*, planted: bool = PLANTED, env: dict[str, str] | None = None) -> Iterator[str]:
    """harness/app.py's `serve`; `planted`: every page breaks after drawing (tests/e2e/planted.py);
    `env`: the server's own variables (a class database's URL)."""
    with _app.serve(launcher="tests.e2e.planted" if planted else "streamlit", env=env) as base:
        yield base


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    with serve() as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    with sync_playwright() as p:
        launched = launch(p)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def _learner_context(browser):
    """One browser context for the `page` tests of a worker. A Streamlit session belongs to a
    tab, so each test's new tab is a new learner to the server; what the context keeps between
    tests is Chromium's cache of Streamlit's scripts (compiled once, not once per test: about a
    fifth of a page load's CPU, measured on this 2-core machine) and the cookies and storage that
    `page` clears after each test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


# What the browser said during a test: its console's errors and warnings, uncaught page errors,
# and the Streamlit socket opening and closing (Streamlit drops a widget's change made while its
# socket is down). Shown under a failing test, so that a failure on a loaded CI machine says more
# than which wait ran out.
BROWSER_EVENTS = pytest.StashKey[list]()
WATCH_START = pytest.StashKey[float]()
PROBED = ("/_stcore/host-config", "/_stcore/health")


def watch(tab: Page, item: pytest.Item) -> None:
    """Record `tab`'s console errors and warnings, page errors and socket events for `item`."""
    events = item.stash.setdefault(BROWSER_EVENTS, [])
    start = item.stash.setdefault(WATCH_START, time.monotonic())
    name = f"tab {1 + len({tab_name for _, tab_name, _ in events if tab_name})}"
    events.append((time.monotonic() - start, name, f"opened at {tab.viewport_size}"))

    def note(text: str) -> None:
        events.append((time.monotonic() - start, name, text))

    def on_console(message) -> None:
        url = message.location.get("url", "")
        # Streamlit looks for its server under a deep link's path first (/class/_stcore/health),
        # then at the root: two 404s on every page opened by its path, and nothing wrong.
        if message.type in ("error", "warning") and not url.endswith(PROBED):
            note(f"console {message.type}: {message.text} ({url})")
    tab.on("console", on_console)
    tab.on("pageerror", lambda error: note(f"page error: {error}"))

    def on_socket(socket) -> None:
        note(f"socket opened: {socket.url}")
        socket.on("close", lambda _: note(f"socket closed: {socket.url}"))
    tab.on("websocket", on_socket)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    events = item.stash.get(BROWSER_EVENTS, None)
    if report.failed and events:
        lines = [f"{at:7.1f} s  {tab}  {text[:300]}" for at, tab, text in events[-60:]]
        report.sections.append(("what the browser said", "\n".join(lines)))
    return report


@pytest.fixture
def page(_learner_context, request):
    tab = _learner_context.new_page()
    tab.set_default_timeout(60_000)
    watch(tab, request.node)
    yield tab
    # What a test left in the browser (a class seat's cookie, Streamlit's stored theme) must not
    # reach the next test's tab.
    with contextlib.suppress(Exception):
        tab.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    tab.close()
    _learner_context.clear_cookies()


@pytest.fixture
def servers_store() -> Iterator:
    """The class store the servers use (tests/conftest.py's database), for a test's own calls:
    seating a learner, keeping a run, reading what a page wrote; as patient as a benchmark's
    (harness/class_store.py)."""
    from harness.class_store import observer_store
    from workbench.classroom.store import URL_SETTING

    store = observer_store(os.environ[URL_SETTING])
    yield store
    store.dispose()


@pytest.fixture
def new_tab(browser, request) -> Iterator[Callable[[int, int], Page]]:
    """`new_tab(width, height)`: a tab in a browser context of its own, as each person in a class
    has their own device (cookies, storage), with a 60 s default timeout. Every context it
    opened is closed after the test."""
    contexts = []

    def open_tab(width: int, height: int) -> Page:
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch(page, request.node)
        return page

    yield open_tab
    for context in contexts:
        context.close()
