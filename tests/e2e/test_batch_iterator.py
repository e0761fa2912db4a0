"""The batch iterator in headless Chromium: step through batches; worker processes in the server."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.clean import assert_clean
from bench.browser import open_path, wait_settled
from workbench.batches.codegen import record_line
from workbench.batches.runs import run_loader
from workbench.batches.settings import TABLE as LINK_SCHEMA

pytestmark = pytest.mark.e2e


def _lines(query: dict[str, str]) -> list[str]:
    run = run_loader(LINK_SCHEMA.read(query)[0])
    return [record_line(r.epoch, r.number, r.indices, r.worker) for r in run.records]


def _current(page):
    return page.locator(".st-key-bi_current_batch")


@pytest.mark.parametrize("query", [
    {"n": "12", "batch": "4", "epochs": "2"},
    {"n": "12", "batch": "5", "workers": "2", "drop_last": "1"},
], ids=["main-process", "two-workers"])
def test_stepping_through_batches_in_the_browser(page, app_url, query):
    expected = _lines(query)
    open_path(page, app_url, "/batch_iterator?" + "&".join(f"{k}={v}" for k, v in query.items()))
    expect(page.locator(".st-key-batch_iterator_main")).to_be_visible()
    expect(_current(page)).to_contain_text(expected[0])
    for line in expected[1:4]:
        page.locator(".st-key-bi_next").get_by_role("button", name="Next").click()
        wait_settled(page)
        expect(_current(page)).to_contain_text(line)
    assert_clean(page, query)
    if query.get("workers") == "2":
        expect(_current(page)).to_contain_text("worker process 1")
