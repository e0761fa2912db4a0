"""One guard around every page: an unexpected exception becomes the error panel and a log line.

Streamlit's StopException and RerunException derive from BaseException, so `except Exception`
lets Stop and reruns through untouched.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from components.error_panel import error_panel
from workbench.common.errors import unexpected

log = logging.getLogger("workbench.pages")
# The key of the panel's container: Streamlit gives it the class `st-key-page_guard_error`, which
# the end-to-end tests' "the page is clean" check looks for (tests/e2e/clean.py).
GUARD_KEY = "page_guard_error"


def run_guarded(run_page: Callable[[], object], page_name: str = "page",
                on_error: Callable[[], object] | None = None) -> None:
    """Run a page, or a fragment: a fragment's own reruns happen outside the router's guard, so
    a fragment wraps its body in this too. `on_error` undoes what must not outlive a failure
    (a running flag, a heavy-job lease)."""
    try:
        run_page()
    except Exception as exc:
        log.exception("unhandled error on %s", page_name)
        if on_error is not None:
            on_error()
        error_panel(unexpected(exc), key=GUARD_KEY)
