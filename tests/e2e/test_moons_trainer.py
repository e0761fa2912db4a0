"""Play in a real browser: the boundary figure changes while training, and Pause stops it."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_path, wait_settled
from tests.e2e.waiting import WAIT_MS, assert_unchanged

pytestmark = pytest.mark.e2e

# Long enough that training is still running when Pause is pressed.
LONG_RUN = "/moons_trainer?n=5000&epochs=500&batch=16"

BOUNDARY_STATE = """() => {
  const plot = document.querySelector('.st-key-mt_boundary .js-plotly-plot');
  if (!plot || !plot.data || !plot.data.length) return null;
  return JSON.stringify([plot.layout.title.text, plot.data[0].z]);
}"""


PROGRESS = r"""() => {
  const main = document.querySelector('.st-key-moons_trainer_main');
  const m = main && main.innerText.match(/Epoch \d+ \/ \d+.*/);
  return m ? m[0] : null;
}"""
PAUSED = "() => { const line = (" + PROGRESS + ")(); return line !== null && !line.includes('training…'); }"


def boundary(page) -> str | None:
    return page.evaluate(BOUNDARY_STATE)


def progress(page) -> str | None:
    """The progress line, e.g. 'Epoch 12 / 500 · 3,750 optimizer steps (313 per epoch)'."""
    return page.evaluate(PROGRESS)


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
    # Paused, as the page shows it: Play back, Pause greyed, the progress line no longer
    # "training…", the results panel drawn.
    expect(page.locator(".st-key-mt_play button")).to_be_enabled(timeout=WAIT_MS)
    expect(page.locator(".st-key-mt_pause button")).to_be_disabled(timeout=WAIT_MS)
    page.wait_for_function(PAUSED, timeout=WAIT_MS)
    expect(page.get_by_text("Test accuracy", exact=True)).to_be_visible(timeout=WAIT_MS)
    wait_settled(page)
    # Still paused over several ticks (a frame every 0.3 s): a running fragment would redraw.
    assert_unchanged(lambda: (progress(page), boundary(page)), seconds=2.5)
    expect(page.locator("[data-testid=stException]")).to_have_count(0)



def test_a_trained_run_survives_the_sidebar(page, app_url):
    """Train two epochs, go Home by the sidebar, come back by the sidebar: same run."""
    open_path(page, app_url, "/moons_trainer?dataset=spiral&n=300&epochs=5")
    page.wait_for_function(BOUNDARY_STATE, timeout=60_000)
    for epoch in (1, 2):
        wait_settled(page)              # while a run redraws, stale copies of a button remain
        page.locator(".st-key-mt_step button").first.click()
        page.wait_for_function(f"() => ({BOUNDARY_STATE})()?.includes('Epoch {epoch}:')",
                               timeout=60_000)
    wait_settled(page)
    trained = boundary(page)

    nav = page.locator("[data-testid=stSidebarNav]")
    nav.get_by_text("Home", exact=True).click()
    page.wait_for_function("() => !document.querySelector('.st-key-moons_trainer_main')",
                           timeout=60_000)
    wait_settled(page)
    nav.get_by_text("Moons trainer", exact=True).click()
    page.wait_for_function(f"() => ({BOUNDARY_STATE})()?.includes('Epoch 2:')", timeout=60_000)
    wait_settled(page)
    assert boundary(page) == trained
    expect(page.get_by_text("Epoch 2 / 5")).to_be_visible(timeout=30_000)
    page.wait_for_function("() => location.search.includes('dataset=spiral')", timeout=30_000)
    assert page.locator("[data-testid=stException]").count() == 0
