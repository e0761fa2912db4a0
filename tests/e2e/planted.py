"""A served app whose every page breaks after drawing: `python -m tests.e2e.planted run streamlit_app.py ...`.

The end-to-end tests' "the page is clean" check (tests/e2e/clean.py) must fail on a broken page,
yet a test cannot monkeypatch a server in another process, and editing a page to raise would
leave the repository dirty. So this module is Streamlit's own command line, started after it
has replaced `components.guard.run_guarded`: Streamlit runs the app in this process, and the
router imports `run_guarded` afresh on each run, so every page run goes through the
replacement. The page draws all it normally draws, then breaks:

- by default it raises `PlantedError`: the guard catches it and draws its panel, as it would
  for any bug in a page;
- with `plant=exception` in the page's URL it draws `st.exception`, the element Streamlit draws
  for an exception that reached it.

A fragment's own reruns (the moons trainer's live view) are left alone, so the pages keep
working as the tests drive them. `conftest.serve(planted=True)` starts this; `E2E_PLANT=1`
makes every server of a test session a planted one, to see each clean check fail.
"""
from __future__ import annotations

import workbench  # noqa: F401  (first, as in the router: pins torch to one thread)

import sys

import streamlit as st
from streamlit.web.cli import main

import components.guard as guard
from app_pages.navigation import all_pages

PAGE_TITLES = frozenset(tool.title for tool in all_pages())
_run_guarded = guard.run_guarded


class PlantedError(RuntimeError):
    """The planted failure; its message names the page."""


def _planted_run_guarded(run_page, page_name: str = "page", on_error=None) -> None:
    if page_name not in PAGE_TITLES:            # a fragment's rerun, not a page
        _run_guarded(run_page, page_name, on_error)
        return
    how = st.query_params.get("plant", "raise")     # read before the page rewrites its URL

    def run_then_break() -> None:
        run_page()
        failure = PlantedError(f"planted on page {page_name}")
        if how == "exception":
            st.exception(failure)
        else:
            raise failure

    _run_guarded(run_then_break, page_name, on_error)


guard.run_guarded = _planted_run_guarded

if __name__ == "__main__":
    sys.exit(main())
