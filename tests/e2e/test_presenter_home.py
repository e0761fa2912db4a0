"""The home page on a classroom projector: with `present=1` at 1280x720 the tool cards' titles
are whole (they wrap rather than end in an ellipsis), with the sidebar folded as presenter mode
starts it and with the sidebar opened by the teacher, in the light and the dark theme."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app_pages.navigation import HOME, TOOLS
from harness.stage import PROJECTORS, assert_on_first_screen, clipped_texts, first_screen, open_sidebar
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e

@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("sidebar", ["folded", "opened"])
def test_the_cards_titles_are_whole(browser, app_url, sidebar, theme):
    page = first_screen(browser, app_url, "/", PROJECTORS[0], theme=theme)
    cards = page.locator(f".st-key-{HOME.main_key}")
    expect(cards.locator("[data-testid=stPageLink]")).to_have_count(len(TOOLS) + 1, timeout=WAIT_MS)
    if sidebar == "opened":
        open_sidebar(page)
    assert clipped_texts(cards) == []
    for tool in TOOLS:
        link = cards.get_by_role("link", name=tool.title)
        title = link.locator("strong")
        expect(title).to_have_text(tool.title)
        # The title stays inside its card: wrapped, not spilling over the next card.
        inside = title.bounding_box()
        column = cards.locator("[data-testid=stColumn]",
                               has=page.get_by_role("link", name=tool.title))
        card = column.bounding_box()
        assert card["x"] <= inside["x"] and inside["x"] + inside["width"] <= card["x"] + card["width"], \
            (tool.title, inside, card)
        assert_on_first_screen(page, title, f"the {tool.title} card's title")
    page.context.close()
