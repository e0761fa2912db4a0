"""The moons trainer's live view as a screen reader, a keyboard and reduced motion meet it (issue 28):
the accessibility tree holds the epoch and the losses as text while a run plays, one polite live
region announces progress sparingly and the end with what to do next, the plane's read-out is
reached by the arrow keys, and under prefers-reduced-motion a playing run's picture changes in
steps."""
from __future__ import annotations

import dataclasses
import re

import pytest
import torch
from playwright.sync_api import expect

from harness.chromium import open_path, wait_drawn, wait_settled
from harness.live_view import VIEW_OBJECT, live, wait_live
from tests.e2e.clean import assert_clean
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

pytestmark = pytest.mark.e2e

LIVE = ".st-key-mt_live"
# The view's constants (static/live/access.js), read from the page rather than copied here.
ACCESS = "() => import(new URL('app/static/live/access.js', document.baseURI).href)" \
         ".then((m) => ({every: m.ANNOUNCE_EVERY, step: m.REDUCED_MOTION_MS, cells: m.CURSOR_CELLS}))"

# Everything the live region says, in order, from before the learner presses Play.
RECORD_ANNOUNCEMENTS = f"""() => {{
  const region = {VIEW_OBJECT}.announcer;
  window.__said = [];
  new MutationObserver(() => window.__said.push(region.textContent))
    .observe(region, {{childList: true, characterData: true, subtree: true}});
}}"""


def click(page, key: str) -> None:
    wait_settled(page)              # while a run redraws, stale copies of a button remain
    page.locator(f".st-key-{key} button").first.click()


def test_while_it_trains_the_accessibility_tree_holds_the_epoch_and_the_loss(page, app_url):
    open_path(page, app_url, "/moons_trainer?n=1000&epochs=300&speed=25")
    wait_live(page)
    every = page.evaluate(ACCESS)["every"]
    click(page, "mt_play")
    # Past the first announcement, and once the canvases' names (renamed every LABEL_MS at most
    # while a run plays) carry a trained epoch.
    announce = page.locator(f"{LIVE} .announce")
    expect(announce).to_have_text(re.compile(r"^Epoch \d+ of 300: loss \d\.\d{3} train"), timeout=120_000)
    expect(page.locator(f"{LIVE} canvas.loss")).to_have_attribute("aria-label", re.compile(r"at epoch \d+"))
    wait_live(page, "v.state === 'playing' && v.epoch >= arg", arg=every, timeout=120_000)
    tree = page.locator(LIVE).aria_snapshot()
    assert live(page)["state"] == "playing", "read while the run trains"
    assert re.search(r"Epoch \d+ / 300 .* training", tree), tree
    loss = re.search(r"Loss per epoch, at epoch (\d+): train (\d\.\d{3}), validation (\d\.\d{3})", tree)
    assert loss, tree
    accuracy = rf"Accuracy per epoch, at epoch {loss[1]}: train \d+\.\d%, validation \d+\.\d%"
    assert re.search(accuracy, tree), tree
    assert re.search(r"Decision boundary at epoch \d+ of 300, validation accuracy \d+\.\d%", tree), tree
    # The numbers are the run's own: the view's history at that epoch.
    history = page.evaluate(f"(e) => {{ const h = {VIEW_OBJECT}.history, i = h.epoch.indexOf(e);"
                            " return [h.train_loss[i], h.val_loss[i]]; }", int(loss[1]))
    assert [f"{v:.3f}" for v in history] == [loss[2], loss[3]]
    # The status line is read, not spoken: the live region is the only one, and polite.
    assert page.locator(f"{LIVE} [aria-live=polite][role=status]").count() == 1
    assert page.locator(f"{LIVE} .status[aria-live], {LIVE} .status[role]").count() == 0
    click(page, "mt_pause")
    expect(announce).to_have_text(re.compile(r"^Paused at epoch \d+ of 300: loss \d\.\d{3} train"))
    assert_clean(page, "the live view paused")


def test_the_live_region_speaks_every_ten_epochs_and_at_the_end_says_what_to_do_next(page, app_url):
    open_path(page, app_url, "/moons_trainer?n=300&epochs=25&speed=25")
    wait_live(page)
    every = page.evaluate(ACCESS)["every"]
    page.evaluate(RECORD_ANNOUNCEMENTS)
    click(page, "mt_play")
    wait_live(page, "v.status.startsWith('Epoch 25 / 25') && !v.status.includes('training')",
              timeout=120_000)
    page.wait_for_function("() => window.__said.some((t) => t.includes('Finished'))")
    said = page.evaluate("() => window.__said")
    *progress, end = said
    assert end.startswith("Epoch 25 of 25: loss") and "Finished: 25 of 25 epochs. Raise Epochs" in end, said
    # Not chatty: at most one announcement per multiple of ten epochs passed, each with its numbers.
    epochs = [int(re.match(r"Epoch (\d+) of 25: loss \d\.\d{3} train", t)[1]) for t in progress]
    assert len({e // every for e in epochs}) == len(epochs) <= 25 // every, said
    assert all(e >= every for e in epochs), said
    assert_clean(page, "a finished run")


def test_the_planes_read_out_is_reached_by_the_keyboard(page, app_url):
    settings = dataclasses.replace(PRESET, n=300, epochs=3)
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3")
    wait_live(page)
    wait_drawn(page)
    fresh = TrainingSession(settings)       # the page's untrained run: same seed, same weights
    x, label = fresh.split.x_train[0], int(fresh.split.y_train[0])
    with torch.no_grad():
        p = torch.sigmoid(fresh.model.eval()(fresh.x_train[:1])).item()
    shown_p = round(100 * round(255 * p) / 255)
    cells = page.evaluate(ACCESS)["cells"]
    x0, x1, y0, y1 = page.evaluate(f"() => {VIEW_OBJECT}.scene.extent")
    col = min(cells - 1, int((x[0] - x0) / (x1 - x0) * cells))
    row = min(cells - 1, int((x[1] - y0) / (y1 - y0) * cells))
    plane = page.locator(f"{LIVE} canvas.plane")
    assert plane.get_attribute("tabindex") == "0", "in the Tab order"
    plane.focus()
    tooltip, readout = page.locator(f"{LIVE} .plane-tooltip"), page.locator(f"{LIVE} .readout")
    expect(tooltip).to_be_visible()
    middle = cells // 2
    expect(readout).to_contain_text(f"column {middle + 1} of {cells}, row {middle + 1} from the bottom")
    # From the middle to the point's cell, one arrow press a cell.
    for key, count in (("ArrowRight", col - cells // 2), ("ArrowLeft", cells // 2 - col),
                       ("ArrowUp", row - cells // 2), ("ArrowDown", cells // 2 - row)):
        for _ in range(max(0, count)):
            plane.press(key)
    expect(readout).to_contain_text(f"column {col + 1} of {cells}, row {row + 1} from the bottom")
    expect(readout).to_contain_text(f"train class {label} (P ≈ {shown_p}%)")
    expect(tooltip).to_contain_text(f"train class {label} (P ≈ {shown_p}%)")
    plane.press("Tab")
    expect(tooltip).to_be_hidden()
    assert_clean(page, "the plane read by keyboard")


def test_with_reduced_motion_a_playing_runs_picture_changes_in_steps(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, reduced_motion="reduce")
    page = context.new_page()
    try:
        open_path(page, app_url, "/moons_trainer?n=1000&epochs=300&speed=10")
        wait_live(page)
        step = page.evaluate(ACCESS)["step"]
        assert page.evaluate(f"() => {VIEW_OBJECT}.root.dataset.motion") == "reduced"
        click(page, "mt_play")
        # Several pictures of the playing run, and more frames than pictures.
        page.wait_for_function(f"""() => {{ const d = {VIEW_OBJECT}.root.dataset;
            return Number(d.playingDraws) >= 4 && Number(d.frames) >= Number(d.playingDraws) + 10; }}""",
                               timeout=120_000)
        shortest = float(page.evaluate(f"() => {VIEW_OBJECT}.root.dataset.shortestPlayingGap"))
        assert shortest >= 0.95 * step, f"two pictures {shortest} ms apart"
        click(page, "mt_pause")
        wait_live(page, "v.state === 'paused' && !v.status.includes('training')")
        assert_clean(page, "reduced motion")
    finally:
        context.close()
