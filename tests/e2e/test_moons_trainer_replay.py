"""The moons trainer's replay in a real browser: a finished run replayed at epoch 1 by keyboard
shows the boundary and the network PyTorch computes from that epoch's weights, marked on the
curves, and the slider's last stop brings back the model as it is now."""
from __future__ import annotations

import dataclasses

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_settled
from harness.live_view import VIEW_OBJECT, wait_live
from tests.e2e.clean import assert_clean
from tests.e2e.waiting import WAIT_MS
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

pytestmark = pytest.mark.e2e

SETTINGS = dataclasses.replace(PRESET, n=300, epochs=3, speed="max", net=True)
RESOLUTION = 48                 # live_canvas.RESOLUTION


def shown_grid(page) -> list[int]:
    return page.evaluate(f"() => Array.from({VIEW_OBJECT}.frame.grid)")


def grid_after(epochs: int) -> list[int]:
    run = TrainingSession(dataclasses.replace(SETTINGS, epochs=epochs))
    run.run_to_end()
    return run.snapshot(RESOLUTION).grid.tolist()


def test_replay_goes_back_to_epoch_1_and_returns_to_now(page, app_url):
    open_path(page, app_url, "/moons_trainer?n=300&epochs=3&speed=max&net=1")
    wait_live(page)
    wait_settled(page)
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.epoch === 3 && v.state !== 'playing'")
    slider = page.locator(".st-key-mt_replay").get_by_role("slider")
    expect(slider).to_be_visible(timeout=WAIT_MS)
    expect(slider).to_have_attribute("aria-valuetext", "now")

    slider.focus()
    page.keyboard.press("Home")                 # epoch 0, the initial weights
    page.keyboard.press("ArrowRight")           # epoch 1
    replayed = wait_live(page, f"{VIEW_OBJECT}.frame.replay_epoch === 1")
    assert replayed["status"].startswith("Replaying · Epoch 1 / 3"), replayed["status"]
    assert shown_grid(page) == grid_after(1), "the boundary PyTorch computes from epoch 1's weights"
    assert page.evaluate(f"() => {VIEW_OBJECT}.network.data.epoch") == 1

    page.keyboard.press("End")                  # now
    wait_live(page, f"{VIEW_OBJECT}.frame.replay_epoch === undefined && v.epoch === 3")
    assert shown_grid(page) == grid_after(3)
    expect(slider).to_have_attribute("aria-valuetext", "now")
    assert_clean(page, "the moons trainer replaying a finished run")
