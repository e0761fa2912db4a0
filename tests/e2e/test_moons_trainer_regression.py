"""A regression link on the moons trainer in a real browser: `dataset=plane` trains with Play,
the plane's title says it shades the model's output value (no decision boundary), its colour bar
runs from -1 to 1, the grid is the output PyTorch computes, and the results show test MSE and
R² instead of an accuracy."""
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

SETTINGS = dataclasses.replace(PRESET, dataset="plane", n=300, epochs=3, speed="max")
RESOLUTION = 48                 # live_canvas.RESOLUTION
# Every text drawn on a canvas, recorded as it is drawn: the plane's title is canvas text.
RECORD_TEXTS = """(() => {
  window.__drawnTexts = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    window.__drawnTexts.push(String(text));
    return fill.call(this, text, ...rest);
  };
})();"""


def test_a_regression_link_trains_and_the_plane_shows_the_output_value(page, app_url):
    page.add_init_script(RECORD_TEXTS)
    open_path(page, app_url, "/moons_trainer?dataset=plane&n=300&epochs=3&speed=max")
    wait_live(page)
    wait_settled(page)
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.epoch === 3 && v.state !== 'playing'")
    run = TrainingSession(SETTINGS)
    run.run_to_end()
    shown = page.evaluate(f"() => Array.from({VIEW_OBJECT}.frame.grid)")
    assert shown == run.snapshot(RESOLUTION).grid.tolist(), "the output value PyTorch computes"
    # Every text drawn since the page opened (the colour bar's once, each frame's title).
    page.wait_for_function("() => window.__drawnTexts.some((t) => t.startsWith('Epoch 3'))",
                           timeout=WAIT_MS)
    texts = page.evaluate("() => window.__drawnTexts")
    title = next(t for t in texts if t.startswith("Epoch 3"))
    assert "output value" in title and "boundary" not in title, title
    assert "model output" in texts and "\u22121" in texts and "P(class 1)" not in texts
    assert not any("boundary" in t for t in texts), texts
    label = page.locator(".st-key-mt_live canvas.plane").get_attribute("aria-label")
    assert label.startswith("Model output value at epoch 3 of 3"), label
    report = run.test_report()
    expect(page.get_by_text("Test MSE", exact=True)).to_be_visible(timeout=WAIT_MS)
    metrics = page.get_by_test_id("stMetricValue")
    expect(metrics.get_by_text(f"{report.mse:.4f}", exact=True)).to_be_visible()
    expect(metrics.get_by_text(f"{report.r2:.3f}", exact=True)).to_be_visible()
    # The noise's ceiling (issue 44 item 7): the best possible predictor's R², on the metric and
    # in the curves' legend beside its dotted line.
    expect(metrics.get_by_text(f"R² {report.best_r2:.3f}", exact=True)).to_be_visible()
    expect(page.locator(".st-key-mt_live")).to_contain_text(f"best possible test R² {report.best_r2:.3f}")
    expect(page.get_by_text("Test accuracy", exact=True)).to_have_count(0)
    assert_clean(page, "the moons trainer on a regression link")
