"""WCAG 2.2 AA on every page, found by axe-core in Chromium (rule sets wcag2a, wcag2aa, wcag21a,
wcag21aa, wcag22aa): in the light and the dark theme, in the learner's layout (1400x1000) and the
presenter's (1280x720, `present=1`), on the first screen and in the states a learner reaches (a
training run playing and finished, an autograd step, a failing tensor chain, a revealed check).
axe-core is package.json's, installed by `make test` (npm ci). The app's repairs of Streamlit's
markup and colours are components/accessible_theme.py."""
from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from harness.chromium import open_path
from harness.live_view import wait_live
from harness.stage import wait_drawn
from components.accessible_theme import NAV_LIST, THEME_ATTRIBUTE
from tests.e2e.clean import assert_clean
from tests.e2e.waiting import WAIT_MS

# Its name is the label and the shortcut Streamlit shows in it ("Next node Shortcut N").
NEXT_NODE = re.compile(r"^Next node\b")
pytestmark = pytest.mark.e2e

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
LAYOUTS = {"learner": ((1400, 1000), ""), "presenter": ((1280, 720), "present=1")}


_SCROLLING_CODE_REACHABLE_JS = """
() => [...document.querySelectorAll('[data-testid="stCode"] > pre, .wb-code > pre')]
  .every((box) => box.hasAttribute('tabindex') || box.scrollWidth <= box.clientWidth + 1)
"""


# The theme's repaint is over: no colour is still in a transition. The app's mark follows the
# page's background, and on a loaded machine an expander's box was once still light when axe
# read the dark theme's text over it (1.11:1).
_COLOURS_SETTLED_JS = """
() => !document.getAnimations().some((a) => a.playState === 'running'
  && typeof CSSTransition !== 'undefined' && a instanceof CSSTransition
  && /color|background/.test(a.transitionProperty))
"""

# Every help tooltip is fully shown: nothing in it or around it is transparent or still animating.
_TOOLTIPS_SETTLED_JS = """
() => [...document.querySelectorAll('.stTooltipContent')].every((tip) => {
  if (tip.getAnimations({subtree: true}).some((a) => a.playState === 'running')) return false;
  for (let box = tip; box && box !== document.body; box = box.parentElement) {
    if (getComputedStyle(box).opacity !== '1') return false;
    if (box.getAnimations().some((a) => a.playState === 'running')) return false;
  }
  return true;
})
"""


def violations(page: Page) -> list[str]:
    """axe-core's WCAG 2.2 AA violations on the page as it is now, one line per element."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: `make test` installs axe-core (npm ci)")
    # The app's repairs run in the page twice a second: wait until they have run once.
    page.wait_for_selector(f"html[{THEME_ATTRIBUTE}] {NAV_LIST}[role=none]", state="attached",
                           timeout=WAIT_MS)
    # A button's help fades in under the mouse a click left there (Next node's names its key):
    # mid-fade its text reads at 3.8:1, once shown at the text colour's full contrast.
    page.wait_for_function(_TOOLTIPS_SETTLED_JS, timeout=WAIT_MS)
    # A code block that starts to scroll without a new element (its column narrowed as the page
    # settled) is made reachable at the repairs' next tick: give it that tick, then let axe
    # judge (a block never repaired still fails below).
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(_SCROLLING_CODE_REACHABLE_JS, timeout=2_000)
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, "
                           "resultTypes: ['violations']})", WCAG_AA)
    return [f"{v['id']} ({v['impact']}): {node['target']}: {node['failureSummary']}"
            for v in result["violations"] for node in v["nodes"]]


def in_both_themes(page: Page, what: str) -> None:
    """axe finds nothing in the light theme, then (the system asking for dark, which the app
    follows) in the dark one; the page is left light."""
    found = {}
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        page.wait_for_selector(f'html[{THEME_ATTRIBUTE}="{theme}"]', state="attached", timeout=WAIT_MS)
        page.wait_for_function(_COLOURS_SETTLED_JS, timeout=WAIT_MS)
        found[theme] = violations(page)
    # Left light once the app has repainted: a tooltip that a next click opens while the dark
    # theme is still drawn keeps the dark theme's text over the light box (1.06:1, seen on a
    # loaded machine).
    page.emulate_media(color_scheme="light")
    page.wait_for_selector(f'html[{THEME_ATTRIBUTE}="light"]', state="attached", timeout=WAIT_MS)
    assert found == {"light": [], "dark": []}, f"{what}: " + "\n".join(
        f"[{theme}] {line}" for theme, lines in found.items() for line in lines)


def _open(browser, app_url: str, path: str, layout: str) -> Page:
    (width, height), query = LAYOUTS[layout]
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme="light")
    page = context.new_page()
    page.set_default_timeout(60_000)
    joiner = "&" if "?" in path else "?"
    open_path(page, app_url, path + (joiner + query if query else ""))
    wait_drawn(page)
    assert_clean(page, path)
    return page


@pytest.fixture(params=list(LAYOUTS))
def layout(request) -> str:
    return request.param


# Home's first screen is checked by the knowledge check's test, the autograd graph's by its
# outline's, the tensor inspector's and the moons trainer's by their states' tests. In the
# learner's layout these three pages are checked on a phone (tests/e2e/test_phone.py: the same
# elements in one column, in both themes; the open sidebar by the states' tests here).
@pytest.mark.parametrize("path", ["/lessons", "/batch_iterator", "/class"])
def test_a_first_screen_has_no_violation(browser, app_url, path):
    page = _open(browser, app_url, path, "presenter")
    in_both_themes(page, f"{path} (presenter)")
    page.context.close()


def test_home_with_a_check_answered_and_revealed(browser, app_url, layout):
    page = _open(browser, app_url, "/", layout)
    in_both_themes(page, f"home ({layout})")
    check = page.locator(".st-key-kc_home_device_mismatch")
    check.locator("[role=radiogroup] label").first.click()
    check.locator(".st-key-kc_home_device_mismatch_commit button").first.click()
    # The first option is a wrong answer: Try again and Show the answer come first.
    show = check.get_by_role("button", name="Show the answer")
    expect(check.get_by_role("button", name="Try again")).to_be_visible()
    in_both_themes(page, f"home, a wrong answer committed ({layout})")
    show.click()
    expect(check).to_contain_text("computed it with this function")
    in_both_themes(page, f"home, the check revealed ({layout})")
    page.context.close()


def test_class_board_with_answers_revealed_and_a_learner_in_the_class(browser, app_url, layout,
                                                                      servers_store):
    """The teacher's board (code, QR, a revealed and a hidden check) and a learner's sidebar.
    The class is made in the store the server uses (the environment tests/conftest.py sets)."""
    from workbench.classroom.store import RunEntry
    from workbench.common.device_checks import DEVICE_MISMATCH
    from workbench.tensor_inspector.checks import VIEW_AFTER_T as HIDDEN

    store = servers_store
    started = store.start_class()
    for number, option in enumerate((*DEVICE_MISMATCH.options, DEVICE_MISMATCH.options[0])):
        learner = store.join(started.code, f"Learner {number}")
        store.record_answer(started.code, learner.token, DEVICE_MISMATCH.key, option,
                            DEVICE_MISMATCH.options, 1)
        store.record_answer(started.code, learner.token, HIDDEN.key, HIDDEN.options[0],
                            HIDDEN.options, 2)
        # The challenge board's table and scatter, with runs on both sides of the limit.
        store.post_run(started.code, learner.token, RunEntry(
            f"/moons_trainer?hidden={8 * (number + 1)}&opt=Adam&lr=0.01", "Adam", 0.01,
            0.9 + number / 100, 0.955, 50 * (number + 1) ** 2))
        if number == 0:             # and one on other data: the table of runs listed apart
            store.post_run(started.code, learner.token, RunEntry(
                "/moons_trainer?dataset=gaussians&hidden=&opt=SGD&lr=0.1", "SGD", 0.1, 0.99, 0.99, 3))
    store.set_revealed(started.code, started.teacher_key, DEVICE_MISMATCH.key, True)
    store.set_challenge(started.code, started.teacher_key, 200)
    page = _open(browser, app_url, f"/class?class={started.code}&teacher={started.teacher_key}", layout)
    expect(page.locator(f".st-key-class_board_{DEVICE_MISMATCH.key} table")).to_be_visible()
    expect(page.locator(".st-key-challenge_scatter")).to_be_visible()
    frames = page.locator("[data-testid=stDataFrame]")
    # The challenge board's two tables: the runs on its data, and those on other data.
    expect(frames.filter(visible=True)).to_have_count(2)
    # The roster (closed by default) opened, so its table, switches and controls are checked too.
    page.get_by_text("Roster: who is in the class").click()
    expect(frames.filter(visible=True)).to_have_count(3)
    in_both_themes(page, f"class board ({layout})")
    page.context.close()
    page = _open(browser, app_url, f"/?class={started.code}", layout)
    if layout == "learner":
        expect(page.locator(".st-key-class_seat")).to_contain_text(f"In class {started.code}")
    in_both_themes(page, f"a learner in class ({layout})")
    page.context.close()


def test_tensor_inspector_with_a_failing_chain(browser, app_url, layout):
    page = _open(browser, app_url, "/tensor_inspector?shape=4,6", layout)
    in_both_themes(page, f"tensor inspector ({layout})")
    page = _reopen(page, browser, app_url, "/tensor_inspector?shape=4,6&ops=t().view(24)", layout)
    expect(page.locator("[data-testid=stAlert]").filter(has_text="failed").first).to_be_visible()
    in_both_themes(page, f"tensor inspector, a failing chain ({layout})")
    page.context.close()


def test_moons_trainer_playing_and_finished(browser, app_url, layout):
    # With the network view open (net=1): axe reads its 96 units, fold buttons and legend too.
    page = _open(browser, app_url, "/moons_trainer?epochs=40&speed=5&net=1", layout)
    in_both_themes(page, f"moons trainer ({layout})")
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.status.includes('training')")
    in_both_themes(page, f"moons trainer, training ({layout})")
    wait_live(page, "v.epoch === 40 && !v.status.includes('training')", timeout=120_000)
    expect(page.locator("[data-testid=stMain]")).to_contain_text("Finished")
    in_both_themes(page, f"moons trainer, finished ({layout})")
    # The finished run's weights and gradients over the epochs: a heatmap pair per layer.
    page.get_by_role("tab", name="Weights & gradients").click()
    charts = page.locator("[data-testid=stTabs] [data-testid=stPlotlyChart]")
    expect(charts.first).to_be_visible()
    expect(charts).to_have_count(3)       # one figure per layer (64, 32 and the output)
    in_both_themes(page, f"moons trainer, weights and gradients ({layout})")
    page.context.close()


def test_moons_trainer_drawing_your_own_points(browser, app_url, layout):
    """The drawing's tools (the class to add, Clear, the count) above the plane, with too few
    points to train (the drawing alone) and with enough (a run on them)."""
    from tests.unit.moons_trainer.test_data_drawn import DRAWING

    page = _open(browser, app_url, "/moons_trainer?dataset=drawn&points=0:1,1_2,2~1:-1,-1", layout)
    expect(page.locator(".st-key-mt_live .draw-tools")).to_be_visible()
    in_both_themes(page, f"moons trainer, too few drawn points ({layout})")
    page = _reopen(page, browser, app_url, f"/moons_trainer?dataset=drawn&points={DRAWING}", layout)
    expect(page.locator(".st-key-mt_live .draw-tools")).to_be_visible()
    in_both_themes(page, f"moons trainer, drawn points ({layout})")
    page.context.close()


def test_moons_trainer_regression_finished(browser, app_url, layout):
    """A regression run (dataset=multigauss) trained to its end: the output value's plane, the
    MSE and R² curves (the R² chart with the best possible predictor's dotted line) and the test
    MSE and R² beside that ceiling, in both themes."""
    page = _open(browser, app_url, "/moons_trainer?dataset=multigauss&n=300&epochs=3&speed=max", layout)
    page.locator(".st-key-mt_play button").first.click()
    wait_live(page, "v.epoch === 3 && !v.status.includes('training')")
    expect(page.locator("[data-testid=stMain]")).to_contain_text("Test MSE")
    in_both_themes(page, f"moons trainer, regression finished ({layout})")
    page.context.close()


def _reopen(page: Page, browser, app_url: str, path: str, layout: str) -> Page:
    page.context.close()
    return _open(browser, app_url, path, layout)


def test_a_planted_low_contrast_text_is_found(page, app_url):
    """The check can fail: a caption drawn in a grey that reads at 2.3:1 on white."""
    open_path(page, app_url, "/")
    page.evaluate("""() => {
      const planted = document.createElement('p');
      planted.textContent = 'a planted caption';
      planted.style.color = 'rgb(153, 153, 153)';
      document.querySelector('[data-testid=stMain]').prepend(planted);
    }""")
    found = violations(page)
    assert any(line.startswith("color-contrast") for line in found), found


def test_the_walk_is_named_and_the_tensor_tables_add_no_violation(browser, app_url, layout):
    """The memory walk (a drawing, not a Plotly chart: the page loads no Plotly) is an image
    named by its alt text; the grid and the strip are tables named by their captions, with row
    and column headers, and the grid's and the strip's cells add no violation (contrast of
    every cell's text included)."""
    page = _open(browser, app_url, "/tensor_inspector?shape=4,6&ops=t()[1:5]", layout)
    walk = page.locator(".st-key-ti_walk img")
    expect(walk).to_have_count(1)
    expect(walk).to_have_attribute("alt", re.compile(r"^Memory walk of x\.t\(\)\[1:5\]: "))
    assert page.locator("[data-testid=stPlotlyChart]").count() == 0
    grid = page.get_by_role("table", name="Logical view of x.t()[1:5], shape (4, 4)")
    expect(grid).to_be_visible()
    expect(grid.get_by_role("rowheader")).to_have_count(4)
    strip = page.get_by_role("table", name="Storage of x.t()[1:5]: x's own storage, shared by this view")
    expect(strip).to_be_visible()
    expect(strip.locator("td.unread").first).to_have_attribute(
        "title", "storage position 0 · value 0 · not read by this view")
    in_both_themes(page, f"tensor inspector, grid and strip tables ({layout})")
    page.context.close()


def test_the_autograd_graph_first_and_after_a_step_with_its_drawing_named_and_its_outline_open(
        browser, app_url, layout):
    page = _open(browser, app_url, "/autograd_graph", layout)
    in_both_themes(page, f"autograd graph ({layout})")
    svg = page.locator("figure.wb-graph svg")
    expect(svg).to_have_attribute("role", "img")
    expect(svg).to_have_attribute("aria-label", re.compile(r"^Autograd graph of L: .* leaves "))
    page.locator(".st-key-ag_outline summary").click()
    items = page.locator(".st-key-ag_outline li")
    expect(items.first).to_be_visible()
    expect(items.nth(1)).to_contain_text("not run yet")
    page.get_by_role("button", name=NEXT_NODE).click()
    expect(page.get_by_text("Step 1 of", exact=False)).to_be_visible()
    expect(items.nth(1)).to_contain_text("received gradient 1")
    in_both_themes(page, f"autograd graph, step 1, outline open ({layout})")
    page.context.close()
