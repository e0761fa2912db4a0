"""One guard around every page: an unexpected exception becomes the error panel and a log line.

Streamlit's StopException and RerunException derive from BaseException, so `except Exception`
lets Stop and reruns through untouched.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from components.error_panel import error_panel
from workbench.errors import unexpected

log = logging.getLogger("workbench.pages")


def run_guarded(run_page: Callable[[], object], page_name: str = "page") -> None:
    try:
        run_page()
    except Exception as exc:
        log.exception("unhandled error on %s", page_name)
        error_panel(unexpected(exc), key="page_guard_error")
