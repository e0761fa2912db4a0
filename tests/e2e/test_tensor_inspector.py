"""The Tensor inspector in headless Chromium: a lesson link, read back from the page."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
import torch
from playwright.sync_api import expect

from tests.e2e.clean import assert_clean
from tests.e2e.script_runs import collect_sockets, run_finished
from harness.chromium import open_path, wait_drawn, wait_settled
from tests.e2e.waiting import WAIT_MS

pytestmark = pytest.mark.e2e


def _metric(page, label: str):
    """The value of the metric labelled `label`, to wait on with expect(...).to_have_text."""
    metric = page.locator("[data-testid=stMetric]").filter(
        has=page.locator("[data-testid=stMetricLabel]", has_text=label)).first
    return metric.locator("[data-testid=stMetricValue]")


def test_lesson_link_strides_are_on_the_page(page, app_url):
    open_path(page, app_url, "/tensor_inspector?shape=4,6&ops=t()")
    expect(page.locator(".st-key-tensor_inspector_main")).to_be_visible()
    x = torch.arange(24.0).reshape(4, 6)
    expect(_metric(page, "stride")).to_have_text(str(x.t().stride()), timeout=WAIT_MS)
    expect(_metric(page, "shape")).to_have_text(str(tuple(x.t().shape)), timeout=WAIT_MS)
    table = page.locator("[data-testid=stTable]").first
    expect(table).to_contain_text(str(x.stride()), timeout=WAIT_MS)
    expect(table).to_contain_text(str(x.t().stride()), timeout=WAIT_MS)
    assert_clean(page)
    # The memory walk: an image whose alt text names it (no Plotly on the first screen).
    walk = page.locator(".st-key-ti_walk img")
    expect(walk).to_be_visible()
    expect(walk).to_have_attribute("alt", re.compile("^Memory walk of "))
    # The grid's cell 0, 1 of x.t() is x's element 1, 0: storage position 6.
    cell = page.locator(".st-key-ti_grid tbody tr").first.locator("td").nth(1)
    expect(cell).to_have_text("6", timeout=WAIT_MS)
    expect(cell).to_have_attribute("title", "x.t()[0, 1] = 6 · storage position 6")


def test_one_click_fix_in_the_browser(page, app_url):
    open_path(page, app_url, "/tensor_inspector?ops=t().view(-1)")
    x = torch.arange(24.0).reshape(4, 6)
    # PyTorch's message is one click away from the failed step's line, on the first screen.
    page.get_by_role("button", name="PyTorch's message").click()
    try:
        x.t().view(-1)
    except RuntimeError as exc:
        expect(page.get_by_text(str(exc)).first).to_be_visible(timeout=WAIT_MS)
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Use reshape(-1)").click()
    wait_settled(page)
    expect(page.locator("[data-testid=stMetric]").filter(has_text="memory")
           .locator("[data-testid=stMetricValue]")).to_have_text("new memory")
    expect(_metric(page, "stride")).to_have_text(str(x.t().reshape(-1).stride()), timeout=WAIT_MS)
    page.wait_for_function("() => new URLSearchParams(location.search).get('ops') === 't().reshape(-1)'",
                           timeout=WAIT_MS)
    assert parse_qs(urlparse(page.url).query)["ops"] == ["t().reshape(-1)"]


def test_a_failing_chain_says_so_under_the_chain_with_its_fixes(page, app_url):
    """The learner's eyes are on the chain they typed: the failed step, in one line, and its
    one-click fixes are right under it on the first screen (PyTorch's message one click away,
    beside the line), above the grid that a fix changes (issue 43)."""
    page.set_viewport_size({"width": 1366, "height": 768})
    open_path(page, app_url, "/tensor_inspector?shape=2,3&ops=t().view(-1)")
    under_chain = page.locator(".st-key-ti_stage")
    expect(under_chain.locator("[data-testid=stAlert]")).to_contain_text(
        "Step 2: x.t().view(-1) failed", timeout=WAIT_MS)
    fix = under_chain.get_by_role("button", name="Use reshape(-1)")
    expect(fix).to_be_visible(timeout=WAIT_MS)
    wait_drawn(page)            # the layout is the page's last: the boxes are read from it
    chain_box = page.locator(".st-key-ti_ops").bounding_box()
    for what, locator in {"the error line": under_chain.locator("[data-testid=stAlert]"),
                          "the fix": fix}.items():
        found = locator.bounding_box()
        assert chain_box["y"] < found["y"] < 768 - found["height"], (what, chain_box, found)
    assert_clean(page)
    fix.click()
    wait_settled(page)
    expect(page.locator(".st-key-ti_ops input")).to_have_value("t().reshape(-1)", timeout=WAIT_MS)
    expect(under_chain.locator("[data-testid=stAlert]")).to_have_count(0, timeout=WAIT_MS)


def test_a_chain_and_its_drawn_step_survive_the_sidebar(page, app_url):
    open_path(page, app_url, "/tensor_inspector?shape=3,5&ops=t().contiguous()")
    x = torch.zeros(3, 5)
    page.locator(".st-key-ti_draw").get_by_text("x.t()", exact=True).click()
    wait_settled(page)
    expect(page.locator(".st-key-ti_facts")).to_contain_text(str(x.t().stride()))
    nav = page.locator("[data-testid=stSidebarNav]")
    nav.get_by_text("Home").first.click()
    wait_settled(page)
    nav.get_by_text("Tensor inspector").first.click()
    wait_settled(page)
    expect(page.locator(".st-key-ti_facts")).to_contain_text(str(x.t().stride()), timeout=60_000)
    expect(page.locator(".st-key-ti_facts")).to_contain_text("view")
    expect(page.locator(".st-key-ti_ops input")).to_have_value("t().contiguous()")
    expect(page.locator(".st-key-ti_shape input")).to_have_value("3,5")
    expect(page).to_have_url(re.compile(r"shape=3(,|%2C)5"))


def test_append_reruns_only_the_chain_not_the_tabs(page, app_url):
    """Append and Undo change the chain and what it draws: only that fragment runs again (the
    title and the tabs below, with the broadcasting chart, stay as drawn). A change to x that
    an open tab draws from (the dtypes tab shows x's bytes) runs the whole page."""
    stream_of_page = collect_sockets(page)
    open_path(page, app_url, "/tensor_inspector?shape=4,6")
    stream = stream_of_page()
    x = torch.arange(24.0).reshape(4, 6)
    for button, ops, stride in (("Append step", "transpose(0, 1)", x.transpose(0, 1).stride()),
                                ("Undo last step", "", x.stride())):
        with stream.expect_event("framereceived", timeout=WAIT_MS,
                                 predicate=lambda p: run_finished(p) is not None) as finished:
            page.locator(".st-key-ti_chain_buttons").get_by_role("button", name=button).click()
        assert run_finished(finished.value) == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY", button
        expect(page.locator(".st-key-ti_ops input")).to_have_value(ops, timeout=WAIT_MS)
        expect(_metric(page, "stride")).to_have_text(str(stride), timeout=WAIT_MS)
        page.wait_for_function("(ops) => (new URLSearchParams(location.search).get('ops') || '')"
                               " === ops", arg=ops, timeout=WAIT_MS)
    # One memory walk and one broadcasting table (the tab drawn once); the grid and the strip
    # are one table each, the grid x's own again after Undo: 4 rows of 6 cells.
    expect(page.locator(".st-key-ti_walk img")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator(".st-key-ti_shapes table")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator(".st-key-ti_grid table")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator(".st-key-ti_grid tbody tr")).to_have_count(x.shape[0], timeout=WAIT_MS)
    expect(page.locator(".st-key-ti_grid tbody tr").first.locator("td")).to_have_count(x.shape[1])
    expect(page.locator(".st-key-ti_strip table")).to_have_count(1, timeout=WAIT_MS)
    assert_clean(page, "after Append and Undo")

    page.get_by_role("tab", name="Dtypes").click()
    wait_settled(page)
    nbytes = page.locator("[data-testid=stMetric]").filter(has_text="x (4, 6) takes")
    expect(nbytes).to_contain_text("96 B", timeout=WAIT_MS)
    with stream.expect_event("framereceived", timeout=WAIT_MS,
                             predicate=lambda p: run_finished(p) == "FINISHED_SUCCESSFULLY"):
        page.locator(".st-key-ti_add_back").get_by_role("button", name="Dim at end").click()
    expect(page.locator("[data-testid=stMetric]").filter(has_text="x (4, 6, 1) takes")) \
        .to_contain_text("96 B", timeout=WAIT_MS)
    assert_clean(page, "after a new dimension under the dtypes tab")


def test_a_click_before_the_text_boxes_are_drawn_keeps_the_shape(page, app_url):
    """A busy browser draws an element only once its code has loaded; a learner may click Append
    before that. The shape box, seeded from the link by the page's first run, must still show
    (and send back) 4,6 when it is finally drawn after the fragment's rerun, not its default ""
    (a scalar). Held here: the text box's code, until Append has run."""
    held = []
    text_box_code = re.compile(r"/static/js/TextInput\.[^/]*\.js$")
    page.route(text_box_code, lambda route: held.append(route))
    stream_of_page = collect_sockets(page)
    open_path(page, app_url, "/tensor_inspector?shape=4,6")
    stream = stream_of_page()
    with stream.expect_event("framereceived", timeout=WAIT_MS,
                             predicate=lambda p: run_finished(p) is not None):
        page.locator(".st-key-ti_chain_buttons").get_by_role("button", name="Append step").click()
    assert held, "the text box's code was not requested before Append: nothing was held"
    assert not page.locator(".st-key-ti_shape input").count(), "the shape box was drawn early"
    for route in held:
        route.continue_()
    page.unroute(text_box_code)
    expect(page.locator(".st-key-ti_shape input")).to_have_value("4,6", timeout=WAIT_MS)
    expect(page.locator(".st-key-ti_ops input")).to_have_value("transpose(0, 1)", timeout=WAIT_MS)
    page.locator(".st-key-ti_chain_buttons").get_by_role("button", name="Undo last step").click()
    expect(page.locator(".st-key-ti_ops input")).to_have_value("", timeout=WAIT_MS)
    expect(_metric(page, "stride")).to_have_text(str(torch.zeros(4, 6).stride()), timeout=WAIT_MS)
    # 4,6 is the default shape, which the link leaves out; a scalar would be `shape=`.
    assert "shape" not in parse_qs(urlparse(page.url).query, keep_blank_values=True), page.url
    assert_clean(page)
