import re
import time

import pytest
from playwright.sync_api import expect

from app_pages.navigation import HOME, TOOLS, all_pages
from tests.e2e.clean import assert_clean
from harness.chromium import open_path

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("tool", all_pages(), ids=lambda t: t.url_path or "home")
def test_page_draws_its_main_element_and_no_exception(page, app_url, tool):
    open_path(page, app_url, "/" + tool.url_path)
    expect(page.locator(f".st-key-{tool.main_key}")).to_be_visible()
    assert_clean(page, tool.title)
    expect(page.locator("[data-testid=stSidebar]").get_by_text("Device:")).to_be_visible()


def test_sidebar_navigation_reaches_every_tool(page, app_url):
    open_path(page, app_url, "/")
    nav = page.locator("[data-testid=stSidebarNav]")
    for tool in TOOLS:
        expect(nav.get_by_text(tool.title)).to_be_visible()


def test_cold_start_to_first_rendered_page(page, app_url):
    """A new visitor's first page: home's tool cards and its device check are drawn, and the
    page is clean."""
    started = time.perf_counter()
    open_path(page, app_url, "/")
    cards = page.locator(f".st-key-{HOME.main_key}")
    expect(cards.locator("[data-testid=stPageLink]")).to_have_count(len(TOOLS) + 1)
    for tool in TOOLS:
        expect(cards.get_by_role("link", name=tool.title)).to_be_visible()
    device = page.locator("[data-testid=stMetric]", has_text="PyTorch computes on")
    expect(device.locator("[data-testid=stMetricValue]")).to_have_text(re.compile(r"\S"))
    assert_clean(page, "home")
    print(f"home rendered {time.perf_counter() - started:.2f}s after navigation")


def test_try_again_clears_the_ticked_answer_so_the_same_one_can_be_committed(page, app_url):
    """After "Try again" the browser kept the old answer ticked while the page had cleared it:
    "Commit and reveal" stayed grey under a ticked answer, and ticking it again did nothing."""
    open_path(page, app_url, "/")
    check = page.locator(".st-key-kc_home_device_mismatch")
    answer = check.get_by_text("PyTorch raises an error", exact=True)
    commit = check.get_by_role("button", name="Commit and reveal")
    answer.click()
    expect(commit).to_be_enabled()
    commit.click()
    expect(check).to_contain_text("computed it with this function")
    check.get_by_role("button", name="Try again").click()
    expect(commit).to_be_disabled()
    expect(check.locator("input[type=radio]:checked")).to_have_count(0)
    answer.click()
    expect(commit).to_be_enabled()
    commit.click()
    expect(check).to_contain_text("computed it with this function")
    assert_clean(page, "the check, answered twice")
