"""Each tool's main flow with the keyboard alone (issue 28, items 3 and 7): only
`page.keyboard` (Tab, Enter, Space, arrows, typing and the buttons' shortcuts) acts on the page.

The first Tab reaches "Skip to the controls" and Enter puts the focus on the page's main
control (components/keyboard.py). A pressed button that becomes disabled hands the focus on
(Play -> Pause -> Play, Next at the end -> Back), and the folded sidebar takes no Tab stop.
Every wait is for what the page shows; every test ends on a clean page.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from harness.chromium import open_path
from harness.live_view import wait_live
from harness.stage import wait_drawn
from components.accessible_theme import THEME_ATTRIBUTE
from components.keyboard import RING_ATTRIBUTE, SKIP_LINK_ID, SKIP_LINK_TEXT
from tests.e2e.clean import assert_clean
from tests.e2e.waiting import WAIT_MS
from workbench.batch_iterator.codegen import record_line
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import TABLE as BATCH_LINK
from workbench.common.theme import contrast
from workbench.lessons.catalog import LESSONS

pytestmark = pytest.mark.e2e

SKIP_LINK = f"#{SKIP_LINK_ID}"
WCAG_CONTROL = 3.0      # non-text contrast: the parts of controls, a focus ring

# The focus ring where it is drawn (the focused element, or the box marked around a clipped
# one), whether its parent clips it, and the app's background, as #RRGGBB.
_RING = """() => {
  const hex = (css) => '#' + (css.match(/\\d+/g) || []).slice(0, 3)
    .map((c) => Number(c).toString(16).padStart(2, '0')).join('').toUpperCase();
  const shown = document.activeElement.closest('[{RING_ATTRIBUTE}]') || document.activeElement;
  const ring = getComputedStyle(shown);
  const app = getComputedStyle(document.querySelector('[data-testid=stApp]'));
  return {style: ring.outlineStyle, width: parseFloat(ring.outlineWidth), ring: hex(ring.outlineColor),
          clipped: getComputedStyle(shown.parentElement).overflow !== 'visible',
          background: hex(app.backgroundColor)};
}""".replace("{RING_ATTRIBUTE}", RING_ATTRIBUTE)


def button(page: Page, key: str):
    """The button with this key (Streamlit 1.67 draws a second, undisplayed copy beside a
    button with help; a role locator leaves it out)."""
    return page.locator(f".st-key-{key}").get_by_role("button")


def open_tool(page: Page, app_url: str, path: str) -> None:
    open_path(page, app_url, path)
    wait_drawn(page)
    # The keyboard script runs with the theme repairs: wait until they have marked the page.
    page.wait_for_selector(f"html[{THEME_ATTRIBUTE}]", state="attached")


def skip_to_controls(page: Page) -> None:
    """The first Tab stop is the skip link, on screen once focused; Enter follows it. The page
    places the link within half a second of drawing the controls it names: Tab once it is
    there, or the focus lands on the next stop."""
    link = page.locator(SKIP_LINK)
    link.wait_for(state="attached")
    page.keyboard.press("Tab")
    expect(link).to_be_focused()
    expect(link).to_have_text(SKIP_LINK_TEXT)
    expect(link).to_be_in_viewport()
    page.keyboard.press("Enter")


def assert_ring_reads(page: Page, what: str) -> None:
    """The focused control's ring is solid, at least 2 px, and reads at 3:1 on the background."""
    ring = page.evaluate(_RING)
    assert ring["style"] == "solid" and ring["width"] >= 2 and not ring["clipped"], (what, ring)
    assert contrast(ring["ring"], ring["background"]) >= WCAG_CONTROL, (what, ring)


def test_train_and_pause_the_moons_trainer(page, app_url):
    open_tool(page, app_url, "/moons_trainer?epochs=300")
    skip_to_controls(page)
    play, pause = button(page, "mt_play"), button(page, "mt_pause")
    expect(play).to_be_focused()
    assert_ring_reads(page, "Play")
    page.keyboard.press("Enter")
    wait_live(page, "v.status.includes('training')")
    # Play is disabled now: the focus went to Pause, not to the page's body.
    expect(pause).to_be_focused()
    page.keyboard.press("Enter")
    expect(play).to_be_enabled()
    expect(play).to_be_focused()
    paused = wait_live(page, "!v.status.includes('training')")
    assert paused["epoch"] < 300, paused       # paused, not finished
    # The shortcut: P plays and pauses, and the focus follows the enabled button.
    page.keyboard.press("p")
    wait_live(page, "v.status.includes('training')")
    expect(pause).to_be_focused()
    # The live view hears the shortcut as it hears a click on Pause: it asks the frame route to
    # pause at once, before Streamlit's rerun for the button arrives.
    with page.expect_request(lambda r: r.method == "POST" and "since=" in r.url, timeout=WAIT_MS):
        page.keyboard.press("p")
    expect(play).to_be_focused()
    wait_live(page, "!v.status.includes('training')")
    assert_clean(page, "moons trainer, played and paused by keyboard")


def _focused_key(page: Page) -> str:
    """The Streamlit key of the widget that has the focus."""
    return page.evaluate("""() => [...document.activeElement.closest('[class*="st-key-"]').classList]
      .find((name) => name.startsWith('st-key-')).slice('st-key-'.length)""")


def test_step_the_autograd_graph(page, app_url):
    open_tool(page, app_url, "/autograd_graph")
    skip_to_controls(page)
    main = page.locator(".st-key-autograd_graph_main")
    next_node = main.get_by_role("button", name="Next node")
    expect(next_node).to_be_focused()
    # The buttons' keys carry the run's signature: Back and "Run to the end" share its stem.
    stem = _focused_key(page).removesuffix("_next")
    # The slider follows each step (a press faster than its redraw sends the slider's stale
    # value, which the page ignores: tests/app/autograd_graph/test_page.py).
    slider = main.get_by_role("slider")
    page.keyboard.press("Enter")
    expect(main).to_contain_text("Step 1 of")
    expect(slider).to_have_value("1")
    page.keyboard.press("n")
    expect(main).to_contain_text("Step 2 of")
    expect(slider).to_have_value("2")
    page.keyboard.press("b")
    expect(main).to_contain_text("Step 1 of")
    expect(slider).to_have_value("1")
    # Next node, then "Run to the end": both are disabled at the end, and Back has the focus.
    expect(next_node).to_be_focused()
    page.keyboard.press("Tab")
    expect(button(page, f"{stem}_all")).to_be_focused()
    page.keyboard.press("Enter")
    expect(next_node).to_be_disabled()
    expect(button(page, f"{stem}_back")).to_be_focused()
    assert_clean(page, "autograd graph, stepped by keyboard")


def test_step_batches(page, app_url):
    query = {"n": "16", "batch": "4", "epochs": "1"}
    batches = [record_line(r.epoch, r.number, r.indices, r.worker)
               for r in run_loader(BATCH_LINK.read(query)[0]).records]
    assert len(batches) == 4, batches
    open_tool(page, app_url, "/batch_iterator?" + "&".join(f"{k}={v}" for k, v in query.items()))
    skip_to_controls(page)
    current = page.locator(".st-key-bi_current_batch")
    back, forward = button(page, "bi_prev"), button(page, "bi_next")
    expect(forward).to_be_focused()
    expect(current).to_contain_text(batches[0])
    page.keyboard.press("Enter")
    expect(current).to_contain_text(batches[1])
    # Each press as soon as the batch it asked for is drawn, before the rest of the page (the jump
    # slider) is: the press comes with the slider's value from before the last one.
    page.keyboard.press("n")
    expect(current).to_contain_text(batches[2])
    page.keyboard.press("n")
    expect(current).to_contain_text(batches[3])
    # The last batch: Next is disabled and hands the focus to Back.
    expect(forward).to_be_disabled()
    expect(back).to_be_focused()
    page.keyboard.press("Enter")
    expect(current).to_contain_text(batches[2])
    assert_clean(page, "batch iterator, stepped by keyboard")


def test_change_a_tensor_chain(page, app_url):
    open_tool(page, app_url, "/tensor_inspector?shape=2,3")
    skip_to_controls(page)
    chain = page.locator(".st-key-ti_ops input")
    expect(chain).to_be_focused()
    assert_ring_reads(page, "the op chain")
    # Typed letters stay in the text box: no page shortcut fires on them.
    page.keyboard.type("t()")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"ops=t(%28%29|\(\))"))
    expect(page.locator("[data-testid=stMain]")).to_contain_text("x.t()")
    assert_clean(page, "tensor inspector, a chain typed")


def _first_step_with_a_check():
    for lesson in LESSONS:
        for number, step in enumerate(lesson.steps, 1):
            if step.check is not None:
                return lesson, number, step
    raise AssertionError("no lesson step has a knowledge check")


def test_answer_a_lessons_knowledge_check(page, app_url):
    lesson, number, step = _first_step_with_a_check()
    open_tool(page, app_url, f"/lessons?lesson={lesson.key}&step={number}")
    skip_to_controls(page)
    expect(button(page, "lesson_next")).to_be_focused()
    # Back (disabled on the first step) and Commit (disabled until an answer) take no Tab
    # stop: Shift+Tab reaches the check's answers.
    check = page.locator(f".st-key-kc_lesson_{lesson.key}_{number}")
    page.keyboard.press("Shift+Tab")
    expect(check.locator("input[type=radio]:focus")).to_have_count(1)
    assert_ring_reads(page, "an answer")
    page.keyboard.press("Space")
    commit = check.get_by_role("button", name="Commit and reveal")
    expect(commit).to_be_enabled()
    page.keyboard.press("Tab")
    expect(commit).to_be_focused()
    page.keyboard.press("Enter")
    # Shift+Tab reached the last answer, a wrong one: Try again first, Show the answer second.
    expect(check).to_contain_text("that is not what PyTorch computes")
    # Commit is gone: the focus went to the check's next action, not to the page's body.
    expect(check.get_by_role("button", name="Try again")).to_be_focused()
    page.keyboard.press("Tab")
    expect(check.get_by_role("button", name="Show the answer")).to_be_focused()
    page.keyboard.press("Enter")
    expect(check).to_contain_text("computed it with this function")
    assert_clean(page, "a lesson's check answered by keyboard")


def test_the_folded_sidebar_takes_no_tab_stop(browser, app_url):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    open_tool(page, app_url, "/moons_trainer?present=1")
    sidebar = page.locator("[data-testid=stSidebar]")
    expect(sidebar).to_have_attribute("data-collapsed", "true")
    expect(sidebar).to_have_attribute("inert", "")
    in_sidebar = "() => Boolean(document.activeElement.closest('[data-testid=stSidebar]'))"
    reached = []
    for _ in range(6):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement.getAttribute('aria-label') "
                                     "|| document.activeElement.textContent.trim().slice(0, 40)"))
        assert not page.evaluate(in_sidebar), f"a Tab stop in the folded sidebar: {reached}"
        if reached[-1] == "Expand sidebar":
            break
    assert reached[-1] == "Expand sidebar", reached
    # Opened from the keyboard, the sidebar is in the Tab order again, and has the focus
    # (the button that opened it is gone).
    page.keyboard.press("Enter")
    expect(sidebar).to_have_attribute("data-collapsed", "false")
    expect(sidebar).not_to_have_attribute("inert", "")
    expect(sidebar.get_by_role("link", name="Home")).to_be_focused()
    page.keyboard.press("Tab")
    assert page.evaluate(in_sidebar), "the next Tab stop left the opened sidebar"
    assert_clean(page, "presenter mode, sidebar folded and opened")
    context.close()
