"""A learner's work survives the sidebar: go to another page and back, and it is all there.

Each test sets something up as a learner would (a link, typing, Step, Next), leaves by the
sidebar for Home, comes back by the sidebar (a bare URL, no parameters), and checks that the
settings, the state and the URL are the learner's own again.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.clean import assert_clean
from harness.chromium import open_path, wait_settled
from harness.live_view import wait_live

pytestmark = pytest.mark.e2e
WAIT = 60_000


def click(page, selector: str) -> None:
    """Click a button once the run has finished: while a run redraws, the old element and the
    new one are both on the page."""
    wait_settled(page)
    page.locator(selector).first.click()


def sidebar_to(page, title: str) -> None:
    page.locator("[data-testid=stSidebarNav] a", has_text=title).first.click()
    wait_settled(page)


def away_and_back(page, title: str, path: str) -> None:
    sidebar_to(page, "Home")
    expect(page.get_by_text("Does PyTorch see your hardware?").first).to_be_visible(timeout=WAIT)
    sidebar_to(page, title)
    page.wait_for_url(lambda url: urlsplit(url).path.endswith(path), timeout=WAIT)
    wait_settled(page)


def expect_query(page, **wanted: str) -> None:
    page.wait_for_function(
        """(wanted) => { const q = new URLSearchParams(location.search);
                         return Object.entries(wanted).every(([k, v]) => q.get(k) === v); }""",
        arg=wanted, timeout=WAIT)


def test_a_trained_run_comes_back_at_the_same_epoch_and_boundary(page, app_url):
    open_path(page, app_url, "/moons_trainer?dataset=spiral&n=300&epochs=5")
    for epoch in (1, 2):
        click(page, ".st-key-mt_step button")
        expect(page.get_by_text(f"Epoch {epoch} / 5").first).to_be_visible(timeout=WAIT)
    wait_settled(page)
    before = wait_live(page, "v.epoch === 2 && !v.status.includes('training')")

    away_and_back(page, "Moons trainer", "/moons_trainer")
    expect(page.get_by_text("Epoch 2 / 5").first).to_be_visible(timeout=WAIT)
    expect_query(page, dataset="spiral", n="300", epochs="5")
    assert wait_live(page, "v.epoch === 2")["grid"] == before["grid"]
    assert_clean(page)


def test_a_typed_tensor_chain_comes_back(page, app_url):
    open_path(page, app_url, "/tensor_inspector?shape=3,5")
    ops = page.locator(".st-key-ti_ops input")
    ops.fill("t().contiguous()")
    ops.press("Enter")
    expect_query(page, shape="3,5", ops="t().contiguous()")
    wait_settled(page)

    away_and_back(page, "Tensor inspector", "/tensor_inspector")
    expect(page.locator(".st-key-ti_ops input")).to_have_value("t().contiguous()", timeout=WAIT)
    expect(page.locator(".st-key-ti_shape input")).to_have_value("3,5", timeout=WAIT)
    expect_query(page, shape="3,5", ops="t().contiguous()")


PROGRAM = "a = torch.tensor(3.0, requires_grad=True)\nb = a * a * 7\nb.backward()"


def test_a_typed_autograd_program_comes_back(page, app_url):
    open_path(page, app_url, "/autograd_graph")
    editor = page.locator(".st-key-ag_code textarea")
    editor.fill(PROGRAM)
    editor.press("Control+Enter")
    expect_query(page, code=PROGRAM)
    wait_settled(page)

    away_and_back(page, "Autograd graph", "/autograd_graph")
    expect(page.locator(".st-key-ag_code textarea")).to_have_value(PROGRAM, timeout=WAIT)
    expect_query(page, code=PROGRAM)


def test_a_batch_iterator_position_comes_back(page, app_url):
    open_path(page, app_url, "/batch_iterator?n=24&batch=5&shuffle=0")
    story = page.get_by_text("Epoch 0, batch 0", exact=False)
    expect(story.first).to_be_visible(timeout=WAIT)
    for number in (1, 2):
        click(page, ".st-key-bi_next button")
        expect(page.get_by_text(f"Epoch 0, batch {number}", exact=False).first).to_be_visible(timeout=WAIT)
    wait_settled(page)

    away_and_back(page, "Batch iterator", "/batch_iterator")
    expect(page.get_by_text("Epoch 0, batch 2", exact=False).first).to_be_visible(timeout=WAIT)
    expect_query(page, n="24", batch="5", shuffle="0")


def test_a_lesson_step_comes_back(page, app_url):
    open_path(page, app_url, "/lessons?lesson=autograd&step=2")
    click(page, ".st-key-lesson_next button")
    expect(page.get_by_text("Step 3 of", exact=False).first).to_be_visible(timeout=WAIT)
    wait_settled(page)

    away_and_back(page, "Guided lessons", "/lessons")
    expect(page.get_by_text("Step 3 of", exact=False).first).to_be_visible(timeout=WAIT)
    expect_query(page, lesson="autograd", step="3")
