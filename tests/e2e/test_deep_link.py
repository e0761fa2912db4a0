"""A lesson link opened as the very first request of a fresh server gets the full router."""
import pytest
from playwright.sync_api import expect

from app_pages.navigation import HOME, all_pages
from harness.chromium import wait_settled
from tests.e2e.conftest import serve

pytestmark = pytest.mark.e2e


def test_a_deep_link_on_a_cold_server_is_routed(page):
    target = all_pages()[-1]
    with serve() as base:
        page.goto(f"{base}/{target.url_path}")
        wait_settled(page)
        expect(page.locator(f".st-key-{target.main_key}")).to_be_visible()
        sidebar = page.locator("[data-testid=stSidebar]")
        expect(sidebar.get_by_text("Device:")).to_be_visible()
        if target is not HOME:
            nav = page.locator("[data-testid=stSidebarNav]")
            expect(nav.get_by_text(HOME.title, exact=True)).to_be_visible()
