"""The end-to-end tests' one "the page is clean" check.

The router's guard (components/guard.py) catches every exception a page raises and draws its
own error panel instead, so Streamlit's exception element (`stException`) never appears when a
page breaks: a check that only counts `stException` cannot fail. This one looks for the guard's
panel (a container keyed `GUARD_KEY`, which Streamlit gives the class `st-key-<key>`, titled
`UNEXPECTED_TITLE`), for `stException` (an error drawn outside the guard) and for a traceback.
tests/e2e/test_planted_failures.py shows it fails on a broken page.
"""
from __future__ import annotations

import contextlib

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from components.guard import GUARD_KEY
from harness.chromium import wait_settled
from tests.e2e.waiting import WAIT_MS
from workbench.common.errors import UNEXPECTED_TITLE

GUARD_PANEL = f".st-key-{GUARD_KEY}"


def _text(locator) -> str:
    """The element's text on one line (the panel's lines: title, PyTorch's message, the fix)."""
    return " | ".join(line.strip() for line in locator.inner_text().splitlines() if line.strip())


def assert_clean(page, what: object = None) -> None:
    """Once the page's run has finished: no guard panel, no exception element, no traceback.
    `what` (a page, a step) goes into the failure message."""
    wait_settled(page)
    where = what if what is not None else page.url
    panels = page.locator(GUARD_PANEL)
    if panels.count():
        # The message is in a code block, whose code may still be loading: wait for it a while,
        # so that the failure says what broke.
        with contextlib.suppress(PlaywrightTimeoutError):
            panels.first.locator(".wb-code").first.wait_for(timeout=WAIT_MS)
        raise AssertionError(f"{where}: the page guard caught an error: {_text(panels.first)}")
    titled = page.get_by_text(UNEXPECTED_TITLE)
    if titled.count():
        raise AssertionError(f"{where}: an unexpected error is shown: {_text(titled.first)}")
    exceptions = page.locator("[data-testid=stException]")
    if exceptions.count():
        raise AssertionError(f"{where}: an exception is shown: {_text(exceptions.first)}")
    assert "Traceback" not in page.inner_text("body"), f"{where}: a traceback is shown"
