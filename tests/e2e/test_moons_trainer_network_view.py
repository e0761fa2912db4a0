"""The moons trainer's network view in a real browser: the lesson preset with net=1 (and 500
epochs, so that the run is still playing when the test pauses it on a busy machine) shows one
map per hidden unit (96), each named with its bias and weights, updating while the run trains,
and a unit's map holds what the forward hooks compute on the server, at three points."""
from __future__ import annotations

import dataclasses
import re

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_settled
from harness.live_view import VIEW_OBJECT, wait_live
from tests.e2e.clean import assert_clean
from tests.e2e.waiting import WAIT_MS
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

pytestmark = pytest.mark.e2e

RESOLUTION = 12                                 # live_canvas.NETWORK_RESOLUTION
THREE_POINTS = ((0, 0), (5, 7), (11, 3))        # (row from the bottom, column) of the unit's map
UNITS = ((1, 2), (2, 30))                       # (hidden layer, unit from 0): "unit 3", "unit 31"
NAME = re.compile(r"^hidden layer [12], unit \d+: bias [+\u2212]?\d+\.\d\d; .*incoming weights \(from .+\); "
                  r"ReLU output from .+ over the plane\.$")


def network(page, expression: str, arg=None):
    return page.evaluate(f"(arg) => {{ const n = {VIEW_OBJECT}.network; return {expression}; }}", arg)


def opened_unit_names(page, app_url, path: str, prefix: str, count: int) -> list[str]:
    """Open `path` and wait for its live view: the accessible names of the `count` units whose
    name starts with `prefix` ("input", "hidden layer"), in the page's order."""
    open_path(page, app_url, path)
    wait_live(page)
    wait_settled(page)
    units = page.locator(f".st-key-mt_live button.unit[aria-label^='{prefix}']")
    expect(units).to_have_count(count, timeout=WAIT_MS)
    return units.evaluate_all("(all) => all.map((b) => b.getAttribute('aria-label'))")


def shown_values(page) -> dict:
    """The browser's decoded value of each of UNITS at THREE_POINTS, and each unit's range."""
    return {(layer, unit): {"values": [network(page, "n.valueAt(...arg)", [layer, unit, r, c])
                                       for r, c in THREE_POINTS],
                            "range": network(page, "n.range(...arg)", [layer, unit])}
            for layer, unit in UNITS}


def assert_matches_the_hooks(shown: dict, session: TrainingSession) -> None:
    """The server's forward hooks on the same weights (this process's copy of the run: same
    seed, same steps), within the uint8 map's half step."""
    picture = session.network_snapshot(RESOLUTION).picture
    for (layer, unit), seen in shown.items():
        low, high = seen["range"]
        assert low == pytest.approx(float(picture.maps[layer - 1][unit].min()), abs=1e-4)
        assert high == pytest.approx(float(picture.maps[layer - 1][unit].max()), abs=1e-4)
        for (row, column), value in zip(THREE_POINTS, seen["values"], strict=True):
            expected = float(picture.maps[layer - 1][unit, row * RESOLUTION + column])
            assert value == pytest.approx(expected, abs=(high - low) / 510 + 1e-4), (layer, unit, row, column)


def test_the_network_view_shows_every_unit_live_as_the_hooks_compute_it(page, app_url):
    names = opened_unit_names(page, app_url, "/moons_trainer?net=1&epochs=500", "hidden layer", 96)
    assert all(NAME.match(name) for name in names), [n for n in names if not NAME.match(n)][:3]
    expected = [f"hidden layer {layer}, unit {u}" for layer, width in ((1, 64), (2, 32))
                for u in range(1, width + 1)]
    assert {n.split(":")[0] for n in names} == set(expected)
    # A wide layer shows its strongest twelve first; a button shows the rest.
    assert page.locator(".st-key-mt_live button.unit[aria-label^='hidden layer']:visible").count() == 24
    for more in page.locator(".st-key-mt_live button.more").all():
        more.click()
    expect(page.locator(".st-key-mt_live button.unit[aria-label^='hidden layer']:visible")).to_have_count(
        96, timeout=WAIT_MS)

    # The untrained model: the maps are the hooks' output for this seed's initial weights.
    settings = dataclasses.replace(PRESET, epochs=500, net=True)
    assert_matches_the_hooks(shown_values(page), TrainingSession(settings))

    # Playing: new pictures keep coming, and the maps change with the weights.
    serial = int(network(page, "n.data.serial"))
    before = shown_values(page)
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, f"v.state === 'playing' && Number({VIEW_OBJECT}.root.dataset.networkSerial) >= arg + 4",
              arg=serial, timeout=60_000)
    assert shown_values(page) != before, "the unit maps follow the weights"

    # Paused: the view shows the model where it stopped; the same number of steps here gives the
    # same weights, and the maps hold their hooks' output.
    wait_settled(page)
    page.locator(".st-key-mt_pause button").first.click()
    paused = wait_live(page, "v.state === 'paused' && !v.status.includes('training')")
    wait_settled(page)
    expect(page.locator(".st-key-mt_play button").first).to_be_enabled(timeout=WAIT_MS)
    paused = wait_live(page, "v.state === 'paused'")
    steps = int(re.search(r"([\d,]+) optimizer steps", paused["status"]).group(1).replace(",", ""))
    assert steps > 0
    run = TrainingSession(settings)
    run.run_for(steps, float("inf"))
    assert run.steps == steps
    assert_matches_the_hooks(shown_values(page), run)

    # A click shows a unit's map large, with its bias and weights as text.
    page.locator(".st-key-mt_live button.unit[aria-label^='hidden layer 2, unit 31:']").click()
    zoom = page.locator(".st-key-mt_live .network-zoom")
    expect(zoom).to_be_visible(timeout=WAIT_MS)
    expect(zoom.locator(".zoom-text")).to_contain_text("hidden layer 2, unit 31")
    expect(zoom.locator(".zoom-text")).to_contain_text("bias")
    assert_clean(page)


def test_the_input_column_shows_the_features_the_first_module_computes(page, app_url):
    """features=sin_x1,x1,x1_x2 (the table's order on the page): three input units named by their
    feature, each map holding what
    the model's first module computes over the plane (at three points), and a first layer whose
    units list their weights from those features."""
    path = "/moons_trainer?net=1&features=sin_x1,x1,x1_x2&hidden=4&epochs=5"
    names = opened_unit_names(page, app_url, path, "input", 3)
    assert [n.split(":")[0] for n in names] == ["input x₁", "input x₁x₂", "input sin x₁"]
    assert "the coordinate x₁, standardised" in names[0]
    assert "sin x₁ of the standardised coordinates" in names[2]
    first = page.locator(".st-key-mt_live button.unit[aria-label^='hidden layer 1, unit 1:']")
    expect(first).to_have_attribute("aria-label", re.compile(r"incoming weights \(from [^)]*sin x₁"))

    settings = dataclasses.replace(PRESET, net=True, features=("x1", "x1_x2", "sin_x1"), hidden=(4,),
                                   epochs=5)
    maps = TrainingSession(settings).network_input_maps(RESOLUTION)
    for unit, feature in enumerate(maps):
        low, high = network(page, "n.range(...arg)", [0, unit])
        assert (low, high) == (pytest.approx(float(feature.min()), abs=1e-4),
                               pytest.approx(float(feature.max()), abs=1e-4))
        for row, column in THREE_POINTS:
            value = network(page, "n.valueAt(...arg)", [0, unit, row, column])
            assert value == pytest.approx(float(feature[row * RESOLUTION + column]),
                                          abs=(high - low) / 510 + 1e-4), (unit, row, column)
    assert_clean(page)


# The element that has the focus, inside the component's shadow root where it has one.
FOCUS_JS = ("(() => { let e = document.activeElement; while (e && e.shadowRoot && e.shadowRoot.activeElement)"
            " e = e.shadowRoot.activeElement; return e; })()")
FOCUSED = f"() => ({FOCUS_JS}).getAttribute('aria-label') || ''"


def test_the_network_is_one_tab_stop_that_the_arrow_keys_move_through(page, app_url):
    """A roving tabindex: Tab reaches one unit (the first input), the arrow keys move along a
    column and across columns, Escape closes a unit's large map back onto its unit, and Shift+Tab
    leaves the units (to the fold's button before the output) instead of crossing all 27 shown."""
    open_path(page, app_url, "/moons_trainer?net=1")
    wait_live(page)
    wait_settled(page)
    units = page.locator(".st-key-mt_live button.unit")
    expect(units).to_have_count(2 + 96 + 1, timeout=WAIT_MS)
    assert units.evaluate_all("(all) => all.filter((b) => b.tabIndex === 0).length") == 1
    focused = lambda: page.evaluate(FOCUSED).split(":")[0]  # noqa: E731
    first = page.locator(".st-key-mt_live button.unit[tabindex='0']")
    expect(first).to_have_attribute("aria-label", re.compile("^input x"), timeout=WAIT_MS)
    first.focus()
    page.keyboard.press("ArrowDown")
    assert focused() == "input x\u2082"
    page.keyboard.press("ArrowRight")       # the same height in hidden layer 1: its second unit
    second = page.locator(".st-key-mt_live button.unit[data-layer='1']:visible").nth(1)
    assert focused() == second.get_attribute("aria-label").split(":")[0]
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert focused() == "output"
    assert units.evaluate_all("(all) => all.filter((b) => b.tabIndex === 0).length") == 1
    page.keyboard.press("Enter")            # the output's map, large; Escape comes back to it
    expect(page.locator(".st-key-mt_live .network-zoom")).to_be_visible(timeout=WAIT_MS)
    page.keyboard.press("Escape")
    expect(page.locator(".st-key-mt_live .network-zoom")).to_be_hidden(timeout=WAIT_MS)
    assert focused() == "output"
    page.keyboard.press("Shift+Tab")        # out of the units: to the fold's button before them
    assert page.evaluate(f"() => ({FOCUS_JS}).matches('button.more')")
    assert page.evaluate(FOCUSED).startswith("hidden layer 2: show all 32 units")
    assert_clean(page)
