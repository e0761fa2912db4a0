"""Presenter mode's frame around every page: the sidebar starts folded and opens on a click, the
empty band above the title is gone, and the title with its "About this page" sits on one line
inside the first screen, not clipped, in light and dark themes."""
import pytest
from playwright.sync_api import expect

from app_pages.navigation import all_pages
from bench.browser import open_path, wait_drawn
from bench.stage import PROJECTORS, assert_on_first_screen, clipped_texts, first_screen, open_sidebar
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e

TITLE = "[data-testid=stMainBlockContainer] h1"


def _title_top(page) -> float:
    return page.locator(TITLE).first.bounding_box()["y"]


STAGES = [(PROJECTORS[0], "light"), (PROJECTORS[0], "dark"), (PROJECTORS[1], "light")]


@pytest.mark.parametrize(("size", "theme"), STAGES, ids=["1280-light", "1280-dark", "1366-light"])
def test_every_page_opens_with_the_sidebar_folded_and_the_title_at_the_top(browser, app_url, size, theme):
    page = first_screen(browser, app_url, "/", size, theme=theme)
    try:
        for tool in all_pages():
            open_path(page, app_url, f"/{tool.url_path}?present=1")
            expect(page.locator(f".st-key-{tool.main_key}")).to_be_visible(timeout=WAIT_MS)
            wait_drawn(page)        # the presenter styles are in place: the title has moved up
            sidebar = page.locator("[data-testid=stSidebar]")
            expect(sidebar).to_have_attribute("data-collapsed", "true")
            title = page.locator(TITLE).first
            assert_on_first_screen(page, title, f"{tool.title}'s title")
            # Streamlit leaves 96 px above a title; the stage keeps about a tenth of it.
            assert _title_top(page) < 30, f"{tool.title}: the title starts at y={_title_top(page)}"
            about = page.locator(".st-key-page_about")
            assert_on_first_screen(page, about, f"{tool.title}'s About this page")
            assert abs(about.bounding_box()["y"] - title.bounding_box()["y"]) < 40, "not one line"
            assert clipped_texts(title) == [] and clipped_texts(about) == []
            opener = page.locator("[data-testid=stExpandSidebarButton]").bounding_box()
            text = title.evaluate("h => { const r = document.createRange(); r.selectNodeContents(h);"
                                  " const b = r.getBoundingClientRect(); return {x: b.x}; }")
            assert text["x"] > opener["x"] + opener["width"], "the sidebar button covers the title"
    finally:
        page.context.close()


def test_a_presenter_can_open_the_folded_sidebar_and_the_normal_view_keeps_it_open(browser, app_url):
    page = first_screen(browser, app_url, "/", PROJECTORS[0])
    try:
        sidebar = page.locator("[data-testid=stSidebar]")
        expect(sidebar).to_have_attribute("data-collapsed", "true")
        title = page.locator(TITLE).first
        # The stage's style arrives with the page's run, possibly after the title is drawn: the
        # room kept for the sidebar button is waited for, not read at once.
        page.wait_for_function(f"() => {{ const h = document.querySelector('{TITLE}');"
                               " return h && parseFloat(getComputedStyle(h).paddingLeft) > 0; }",
                               timeout=WAIT_MS)
        folded_indent = title.evaluate("h => parseFloat(getComputedStyle(h).paddingLeft)")
        open_sidebar(page)
        expect(sidebar).to_have_attribute("data-collapsed", "false")
        expect(sidebar.get_by_text("Presenter mode")).to_be_visible()
        # The room kept for the sidebar button goes with the button: the title lines up with
        # the page's content again.
        assert folded_indent > 0
        assert title.evaluate("h => parseFloat(getComputedStyle(h).paddingLeft)") == 0
    finally:
        page.context.close()
    normal = first_screen(browser, app_url, "/", PROJECTORS[0], present=False)
    try:
        expect(normal.locator("[data-testid=stSidebar]")).to_have_attribute("data-collapsed", "false")
        assert _title_top(normal) > 60, "the normal view keeps Streamlit's own header band"
    finally:
        normal.context.close()
