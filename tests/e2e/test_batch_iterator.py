"""The batch iterator in headless Chromium: step through batches; worker processes in the server."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.clean import assert_clean
from tests.e2e.script_runs import collect_sockets, run_finished
from tests.e2e.waiting import WAIT_MS, wait_clickable
from harness.chromium import open_path, wait_settled
from workbench.batch_iterator.codegen import record_line
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import TABLE as LINK_SCHEMA

pytestmark = pytest.mark.e2e


def _lines(query: dict[str, str]) -> list[str]:
    run = run_loader(LINK_SCHEMA.read(query)[0])
    return [record_line(r.epoch, r.number, r.indices, r.worker) for r in run.records]


def _current(page):
    return page.locator(".st-key-bi_current_batch")


def _bar_titles(query: dict[str, str]) -> list[str]:
    """What the Epoch by epoch tab's class-count bars say on hover for this query's run (drawn
    outside the batch view: only a run of the whole page redraws them)."""
    run = run_loader(LINK_SCHEMA.read(query)[0])
    return [f"epoch {r.epoch}, batch {r.number}: {r.class_counts()[0]} of class 0, "
            f"{r.class_counts()[1]} of class 1" for r in run.records]


_SHOWN_BARS = """(want) => JSON.stringify([...document.querySelectorAll('.wb-class-counts .bar')]
    .map((bar) => bar.getAttribute('title'))) === JSON.stringify(want)"""


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


@pytest.mark.parametrize("present", ["0", "1"], ids=["learner", "presenter"])
def test_next_reruns_only_the_batch_view_not_the_whole_page(page, app_url, present):
    """A step moves the position only: the page's tabs (the epochs, the costs, the
    pitfall) stay as they are, and only the fragment with the grid and the batch runs again."""
    query = {"n": "12", "batch": "4", "epochs": "2"}
    expected = _lines(query)
    stream_of_page = collect_sockets(page)
    open_path(page, app_url, f"/batch_iterator?n=12&batch=4&epochs=2&present={present}")
    expect(_current(page)).to_contain_text(expected[0])
    stream = stream_of_page()
    for line in expected[1:3]:
        with stream.expect_event("framereceived", predicate=lambda p: run_finished(p) is not None,
                                 timeout=WAIT_MS) as finished:
            page.locator(".st-key-bi_next").get_by_role("button", name="Next").click()
        assert run_finished(finished.value) == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"
        expect(_current(page)).to_contain_text(line)
    assert_clean(page, query)
    # A setting change still runs the whole page: the DataLoader runs again and every section
    # shows the new run (the settings sit inside the batch view, folded under its stage).
    panel = page.locator(".st-key-bi_settings_panel")
    panel.get_by_text("Settings: dataset, order, batches, processes").click()
    shuffle = panel.locator(".st-key-bi_shuffle")
    expect(shuffle).to_be_visible(timeout=WAIT_MS)
    # Waited for on the page, not on the socket: a socket Streamlit reconnects on a loaded
    # machine carries no more frames, and the bars below the batch view are what must change.
    unshuffled = {**query, "shuffle": "0"}
    assert _bar_titles(unshuffled) != _bar_titles(query), "the change must show in the bars"
    page.wait_for_function(_SHOWN_BARS, arg=_bar_titles(query), timeout=WAIT_MS)
    expect(shuffle.locator("input")).to_be_checked()
    # Clicked once the panel has finished opening: its content is at its final place at once,
    # but what is below it slides across for half a second (a Web Animation, started late on a
    # loaded machine), and a click then lands on that and changes nothing (CI, twice).
    label = shuffle.locator("label").first
    label.scroll_into_view_if_needed()
    wait_clickable(page, label)
    label.click()
    # The switch is off on screen first (the click reached it); then the page must follow.
    expect(shuffle.locator("input")).not_to_be_checked()
    page.wait_for_function(_SHOWN_BARS, arg=_bar_titles(unshuffled), timeout=WAIT_MS)
    wait_settled(page)
    expect(_current(page)).to_contain_text(_lines(unshuffled)[0])
    assert_clean(page, "after a settings change")
