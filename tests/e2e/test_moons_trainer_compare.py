"""Two runs side by side in a real browser: a comparison link (SGD against AdamW) trains both
runs with one Play, from the same initial weights: the page shows the same validation loss before
any step for both, the one PyTorch computes, and the curves overlay the pinned run's."""
from __future__ import annotations

import dataclasses

import pytest
import torch
from playwright.sync_api import expect
from torch import nn

from harness.chromium import open_path, wait_settled
from harness.live_view import VIEW_OBJECT, wait_live
from tests.e2e.clean import assert_clean
from tests.e2e.waiting import WAIT_MS
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

pytestmark = pytest.mark.e2e

SETTINGS = dataclasses.replace(PRESET, n=300, epochs=3, speed="max")      # AdamW
LINK = "/moons_trainer?n=300&epochs=3&speed=max&vs=opt:SGD"

TABLE_JS = """() => {
  const table = document.querySelector('.st-key-mt_compare [data-testid=stTable] table');
  if (!table) return null;
  const heads = [...table.querySelectorAll('thead th')].map((th) => th.innerText.trim());
  const rows = {};
  for (const tr of table.querySelectorAll('tbody tr')) {
    const cells = [...tr.querySelectorAll('th, td')].map((c) => c.innerText.trim());
    rows[cells[0]] = Object.fromEntries(heads.slice(1).map((h, i) => [h, cells[i + 1]]));
  }
  return rows;
}"""


def _loss_before_training() -> float:
    """PyTorch's BCE of the seed's untouched model on the validation split."""
    run = TrainingSession(SETTINGS)
    with torch.no_grad():
        return nn.functional.binary_cross_entropy_with_logits(run.model.eval()(run.x_val), run.y_val).item()


def test_a_comparison_link_trains_sgd_and_adamw_from_the_same_initial_weights(page, app_url):
    open_path(page, app_url, LINK)
    wait_live(page)
    compare = page.locator(".st-key-mt_compare")
    expect(compare).to_contain_text("Train the pinned run (SGD) and this run (AdamW)")
    wait_settled(page)
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.epoch === 3 && v.state !== 'playing'")
    expect(compare).to_contain_text("reached the lower validation loss after 3 epochs each",
                                    timeout=WAIT_MS)
    expect(compare.locator("[data-testid=stTable]")).to_be_visible(timeout=WAIT_MS)
    wait_settled(page)
    rows = page.evaluate(TABLE_JS)
    assert set(rows) == {"pinned: SGD", "now: AdamW"}, rows
    first = f"{_loss_before_training():.6f}"
    assert rows["pinned: SGD"]["val loss before training"] == first
    assert rows["now: AdamW"]["val loss before training"] == first, "equal first losses"
    assert rows["pinned: SGD"]["epochs trained"] == rows["now: AdamW"]["epochs trained"] == "3"
    # ... and then the runs part: their losses after training differ.
    assert rows["pinned: SGD"]["val loss now"] != rows["now: AdamW"]["val loss now"]
    expect(compare).to_contain_text("Both runs start from the same initial weights")
    expect(compare.locator("[data-testid=stPlotlyChart]")).to_have_count(2)
    # The curves overlay the pinned run's three epochs, named by what differs.
    pinned = page.evaluate(f"() => {VIEW_OBJECT}.pinned")
    assert (pinned["label"], pinned["now_label"]) == ("pinned: SGD", "now: AdamW")
    assert pinned["history"]["epoch"] == [1, 2, 3]
    assert page.url.endswith("vs=opt%3ASGD") or "vs=opt:SGD" in page.url, page.url
    assert_clean(page, "the moons trainer comparing two runs")
