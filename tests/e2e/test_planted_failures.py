"""The end-to-end "the page is clean" check can fail: on a served app whose pages break after
drawing (tests/e2e/planted.py), every page draws its main element and `assert_clean` fails on
the guard's panel, which carries the planted error; an exception drawn outside the guard
fails it too. (tests/app/test_planted_failures.py does the same for the AppTest suite.)"""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from app_pages.navigation import all_pages
from tests.e2e.clean import GUARD_PANEL, assert_clean
from harness.chromium import open_path
from tests.e2e.conftest import serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def planted_url() -> Iterator[str]:
    with serve(planted=True) as base:
        yield base


@pytest.mark.parametrize("tool", all_pages(), ids=lambda t: t.url_path or "home")
def test_a_page_that_breaks_after_drawing_fails_the_clean_check(page, planted_url, tool):
    open_path(page, planted_url, "/" + tool.url_path)
    expect(page.locator(f".st-key-{tool.main_key}")).to_be_visible()
    panel = page.locator(GUARD_PANEL)
    expect(panel).to_contain_text(f"PlantedError: planted on page {tool.title}")
    with pytest.raises(AssertionError, match="the page guard caught an error"):
        assert_clean(page, tool.title)
    assert page.locator("[data-testid=stException]").count() == 0, "the guard, not Streamlit, caught it"


def test_an_exception_drawn_outside_the_guard_fails_the_clean_check(page, planted_url):
    open_path(page, planted_url, "/tensor_inspector?plant=exception")
    expect(page.locator("[data-testid=stException]")).to_contain_text("planted on page")
    assert page.locator(GUARD_PANEL).count() == 0
    with pytest.raises(AssertionError, match="an exception is shown"):
        assert_clean(page)
