"""The class sweep as the room sees it, in Chromium: the teacher's heatmap on a 1280x720
projector and a learner's cell on a 390x844 phone, in both themes (issue 45's sweep, in
presenter mode and on a phone; test_class_sweep.py runs the sweep itself with nine websocket
learners).

1. The teacher starts a class on the projector's Class page; a learner joins on a phone.
2. The teacher starts a 3 x 3 sweep with the form; the phone follows to its own cell's exact
   link and says which cell it is.
3. Two more learners (through the store, as their pages would) keep runs in their cells; the
   projector's heatmap fills in: the caption counts them, the text table lists every cell, the
   heatmap is on the first screen once scrolled to, and no text is cut.
4. axe finds nothing on the projector and on the phone, light and dark.

Screenshots (the phone's cell, the projector's heatmap) go to $SWEEP_SHOTS when it is set.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from harness.chromium import open_path, wait_drawn
from harness.stage import clipped_texts
from tests.e2e.classroom import start_class
from tests.e2e.clean import assert_clean
from tests.e2e.test_accessibility import in_both_themes
from workbench.classroom import sweep_store

pytestmark = pytest.mark.e2e

BASE = "/moons_trainer?n=200&epochs=2&batch=32&speed=max"
SHOTS = os.environ.get("SWEEP_SHOTS", "")        # a folder: screenshots for a person to look at


def _shot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        wait_drawn(page)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


def _cookie_secret(page: Page, name: str) -> str:
    page.wait_for_function(f"() => document.cookie.includes('{name}=')")
    value = next(c["value"] for c in page.context.cookies() if c["name"] == name)
    return value.split(".", 1)[1]


def test_the_sweep_on_the_projector_and_a_phone_in_both_themes(new_tab, app_url, servers_store):
    store = servers_store
    # 1. The class on the projector, a learner on a phone.
    teacher = new_tab(1280, 720)
    code = start_class(teacher, app_url, "/class?present=1")
    key = _cookie_secret(teacher, "workbench_class_teacher")
    others = [store.join(code, name) for name in ("Ada", "Grace")]   # present, no page open
    phone = new_tab(390, 844)
    open_path(phone, app_url, f"/?class={code}")
    expect(phone.get_by_text(f"In class {code}").first).to_be_attached()

    # 2. The sweep, started from the form; the phone opens its own cell.
    panel = teacher.locator("[data-testid=stForm]").filter(has_text="Base experiment")
    panel.get_by_role("textbox", name=re.compile("^Base experiment")).fill(BASE)
    panel.get_by_role("button", name="Start the sweep").click()
    caption = teacher.get_by_text(re.compile(r"Sweep 1: .* 9 cells; 0 of 9 trained"))
    expect(caption).to_be_visible()
    expect(phone).to_have_url(re.compile(r"/moons_trainer\?.*n=200"))
    expect(phone.get_by_text(re.compile(r"Your cell: lr \S+ x hidden \S+ \(\d of 9\)\.")))\
        .to_be_visible()
    wait_drawn(phone)
    assert_clean(phone, "a learner's sweep cell on a phone")
    _shot(phone, "phone-cell")

    # 3. Two cells kept by the other learners; the projector fills in.
    for number, member in enumerate(others):
        mine = sweep_store.my_cell(store, code, member.token)
        kept, _ = sweep_store.keep_run(store, code, member.token, mine.cell.link,
                                       0.8 + 0.05 * number, [0.6, 0.4])
        assert kept == "kept"
    expect(teacher.get_by_text(re.compile(r"Sweep 1: .* 2 of 9 trained"))).to_be_visible()
    wait_drawn(teacher)
    # Not the copy a rerun keeps in place while it runs (stale, about to be replaced).
    heatmap = teacher.locator(".st-key-sweep_heatmap:not([data-stale=true])")
    heatmap.scroll_into_view_if_needed()
    wait_drawn(teacher)
    box, screen = heatmap.bounding_box(), teacher.viewport_size
    assert box["height"] <= screen["height"], f"the heatmap is taller than the projector: {box}"
    assert box["x"] >= 0 and box["x"] + box["width"] <= screen["width"], box
    # The heatmap as text, for a screen reader, and the cells' table with their links.
    expect(teacher.get_by_text("Data table: Class sweep: test accuracy over the grid")) \
        .to_be_attached()
    # Three grids: each chart's data table (folded) and the cells' table with their links.
    expect(teacher.locator("[data-testid=stDataFrame]")).to_have_count(3)
    board = sweep_store.sweep_board(store, code, teacher_key=key)
    assert sum(bool(result.accuracies) for result in board.results) == 2
    assert clipped_texts(teacher.locator("[data-testid=stMainBlockContainer]")) == []
    assert_clean(teacher, "the sweep on the projector")
    _shot(teacher, "projector-heatmap")

    # 4. Nothing for axe on either screen, in either theme.
    in_both_themes(teacher, "the teacher's sweep heatmap at 1280x720 in presenter mode")
    in_both_themes(phone, "a learner's sweep cell on a 390x844 phone")
