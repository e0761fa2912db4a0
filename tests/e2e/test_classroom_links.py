"""Classroom links in a real browser: hidden controls are absent, the rest are there."""
import pytest
import torch
from playwright.sync_api import expect

from app_pages.navigation import HOME
from tests.e2e.clean import assert_clean
from harness.chromium import open_path
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e
FONT_SIZE = "parseFloat(getComputedStyle(document.documentElement).fontSize)"


def test_a_link_with_hidden_controls_hides_them_and_keeps_their_values(page, app_url):
    open_path(page, app_url, "/batch_iterator?n=12&batch=5&shuffle=0&hide=batch,shuffle")
    expect(page.locator(".st-key-batch_iterator_main")).to_be_visible()
    # The settings fold under the figure: opened, the hidden ones are absent, the rest there.
    page.locator(".st-key-bi_settings_panel").get_by_text(
        "Settings: dataset, order, batches, processes").click()
    expect(page.locator(".st-key-bi_n")).to_be_visible()
    expect(page.locator(".st-key-bi_drop_last")).to_be_visible()
    expect(page.locator(".st-key-bi_batch")).to_have_count(0)      # once their neighbours are drawn
    expect(page.locator(".st-key-bi_shuffle")).to_have_count(0)
    # 12 samples in batches of 5 without shuffling: the first batch is PyTorch's first 5 indices.
    first = next(iter(torch.utils.data.DataLoader(range(12), batch_size=5))).tolist()
    expect(page.get_by_text(str(first)).first).to_be_visible()
    assert_clean(page)


def test_presenter_mode_from_a_link_enlarges_the_text(page, app_url):
    open_path(page, app_url, "/")
    expect(page.locator(f".st-key-{HOME.main_key}")).to_be_visible(timeout=WAIT_MS)
    normal = page.evaluate(FONT_SIZE)
    open_path(page, app_url, "/?present=1")
    page.wait_for_function(f"(normal) => ({FONT_SIZE}) >= 1.4 * normal", arg=normal, timeout=WAIT_MS)


def test_the_share_panel_downloads_a_valid_notebook(page, app_url):
    import nbformat

    open_path(page, app_url, "/tensor_inspector?shape=2,3&ops=t()")
    page.get_by_text("Share this experiment").click()
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Notebook (.ipynb)").click()
    notebook = nbformat.reads(open(download_info.value.path()).read(), as_version=4)
    nbformat.validate(notebook)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "torch.arange" in code and ".t()" in code
