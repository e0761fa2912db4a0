"""Every "the page is clean" check can fail: a failure planted in each page is detected.

The router's guard turns a page's exception into an error panel, so `at.exception` stays empty
when a page breaks. Here each page is opened clean through the router, then the shared kit's
entry points (functions in `components/`, which every page calls and which outlive page
rewrites) are replaced by ones that raise, and the page is rerun: `assert_clean` must raise, and
the guard's panel must carry the planted error, which names the page.

The pages import the kit with `from components.x import f`; AppTest executes the page script
afresh on every run, so that import binds whatever the module attribute holds at that moment.
"""
from __future__ import annotations

import importlib

import pytest

from app_pages.navigation import HOME, LESSONS_PAGE
from tests.app.apptest import GUARD_TITLE, assert_clean, guard_panels, open_page
from workbench.tools import TOOLS

PAGES = {"home": HOME.script, "lessons": LESSONS_PAGE.script, **{tool.name: tool.script for tool in TOOLS}}

# Kit functions the pages call while drawing; whichever a page calls first raises.
KIT = (
    ("components.stage", "page_header"),
    ("components.code_panel", "code_panel"),
    ("components.knowledge_check", "knowledge_check"),
    ("components.lesson_link", "publish_link"),
    ("components.classroom", "share_panel"),
)


class PlantedError(RuntimeError):
    """The failure this test plants; its name ends in "Error", as the guard panel's check needs."""


def _plant(monkeypatch: pytest.MonkeyPatch, page: str) -> None:
    for module_name, name in KIT:
        module = importlib.import_module(module_name)
        if not hasattr(module, name):          # the kit changed: plant in what is still there
            continue

        def broken(*_args, _name=name, **_kwargs):
            raise PlantedError(f"planted in {_name} on page {page}")

        monkeypatch.setattr(module, name, broken)


@pytest.mark.parametrize("page", list(PAGES))
def test_a_failure_planted_in_the_page_is_detected(page: str, monkeypatch: pytest.MonkeyPatch):
    script = PAGES[page]
    at = open_page(None if page == "home" else script)
    assert_clean(at)                           # the control: the same page, unbroken

    _plant(monkeypatch, page)
    at.run()

    with pytest.raises(AssertionError):
        assert_clean(at)
    assert not at.exception, "the guard, not Streamlit, should have caught the planted error"
    assert any(GUARD_TITLE in e.value for e in at.error)
    panels = guard_panels(at)
    assert any(p.startswith("PlantedError: ") and f"on page {page}" in p for p in panels), panels
