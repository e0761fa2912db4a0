"""Play in a real browser: the boundary figure changes while training, and Pause stops it."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_path, wait_settled

pytestmark = pytest.mark.e2e

# Long enough that training is still running when Pause is pressed.
LONG_RUN = "/moons_trainer?n=5000&epochs=500&batch=16"

BOUNDARY_STATE = """() => {
  const plot = document.querySelector('.st-key-mt_boundary .js-plotly-plot');
  if (!plot || !plot.data || !plot.data.length) return null;
  return JSON.stringify([plot.layout.title.text, plot.data[0].z]);
}"""


def boundary(page) -> str | None:
    return page.evaluate(BOUNDARY_STATE)


def test_play_changes_the_boundary_and_pause_stops_it(page, app_url):
    open_path(page, app_url, LONG_RUN)
    expect(page.locator(".st-key-moons_trainer_main")).to_be_visible()
    page.wait_for_function(BOUNDARY_STATE, timeout=60_000)
    before = boundary(page)

    page.locator(".st-key-mt_play button").click()
    page.wait_for_function("(seen) => (" + BOUNDARY_STATE + ")() !== seen", arg=before,
                           timeout=60_000)
    first_moment = boundary(page)
    page.wait_for_function("(seen) => (" + BOUNDARY_STATE + ")() !== seen", arg=first_moment,
                           timeout=60_000)
    second_moment = boundary(page)
    assert len({before, first_moment, second_moment}) == 3

    page.locator(".st-key-mt_pause button").click()
    expect(page.locator(".st-key-mt_play button")).to_be_enabled(timeout=30_000)
    wait_settled(page)
    paused = boundary(page)
    page.wait_for_timeout(2_500)   # several ticks' worth: a running fragment would have redrawn
    assert boundary(page) == paused
    assert page.locator("[data-testid=stException]").count() == 0
    expect(page.get_by_text("Test accuracy", exact=True)).to_be_visible()

