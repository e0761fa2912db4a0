"""Classroom links in a real browser: hidden controls are absent, the rest are there."""
import pytest
import torch
from playwright.sync_api import expect

from tests.e2e.conftest import open_path

pytestmark = pytest.mark.e2e


def test_a_link_with_hidden_controls_hides_them_and_keeps_their_values(page, app_url):
    open_path(page, app_url, "/batch_iterator?n=12&batch=5&shuffle=0&hide=batch,shuffle")
    expect(page.locator(".st-key-batch_iterator_main")).to_be_visible()
    assert page.locator(".st-key-bi_batch").count() == 0
    assert page.locator(".st-key-bi_shuffle").count() == 0
    expect(page.locator(".st-key-bi_n")).to_be_visible()
    expect(page.locator(".st-key-bi_drop_last")).to_be_visible()
    # 12 samples in batches of 5 without shuffling: the first batch is PyTorch's first 5 indices.
    first = next(iter(torch.utils.data.DataLoader(range(12), batch_size=5))).tolist()
    expect(page.get_by_text(str(first)).first).to_be_visible()
    assert page.locator("[data-testid=stException]").count() == 0


def test_presenter_mode_from_a_link_enlarges_the_text(page, app_url):
    open_path(page, app_url, "/")
    normal = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    open_path(page, app_url, "/?present=1")
    page.wait_for_timeout(500)
    large = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert large >= 1.4 * normal


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
