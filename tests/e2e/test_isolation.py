"""Two learners on one server never see each other's state, on any page.

Learner A and learner B (two browser contexts: two Streamlit sessions) open the same page with
different lesson links, act on it in turn, and each then finds only their own settings, in the
address bar the page writes from its session state and on screen.
"""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from harness.chromium import open_path, wait_settled

pytestmark = pytest.mark.e2e


@pytest.fixture
def two_learners(browser):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    pages = [context.new_page() for context in contexts]
    for page in pages:
        page.set_default_timeout(90_000)
    yield pages
    for context in contexts:
        context.close()


def query(page) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlparse(page.url).query).items()}


SAME_QUERY = """(wanted) => {
  const now = Object.fromEntries(new URLSearchParams(window.location.search));
  return JSON.stringify(Object.entries(now).sort()) === JSON.stringify(Object.entries(wanted).sort());
}"""


def expect_query(page, wanted: dict[str, str]) -> None:
    """Wait until the address bar holds exactly `wanted` (the page writes it after a rerun)."""
    try:
        page.wait_for_function(SAME_QUERY, arg=wanted, timeout=60_000)
    except Exception:
        assert query(page) == wanted   # the assertion message shows what the page wrote
        raise


def click(page, key: str) -> None:
    """Click and wait for the script run to end. The run may not have begun when this returns,
    and Streamlit merges two presses of one button that reach the server during one run into
    one: before pressing the same button again, wait for the first press's outcome."""
    page.locator(f".st-key-{key} button").first.click()
    wait_settled(page)


def test_tensor_inspector(two_learners, app_url):
    a, b = two_learners
    open_path(a, app_url, "/tensor_inspector?shape=2,3&ops=t()")
    open_path(b, app_url, "/tensor_inspector?shape=5,7&dtype=int8")
    click(a, "ti_add_back")        # A adds a dimension: (2, 3, 1)
    click(b, "ti_drop_dim")        # B drops one: (5,)
    expect(a.locator(".st-key-ti_facts")).to_contain_text("(2, 3, 1)")
    expect(b.locator(".st-key-ti_facts")).to_contain_text("(5,)")
    expect_query(a, {"shape": "2,3,1", "ops": "t()"})
    expect_query(b, {"shape": "5", "dtype": "int8"})


def test_autograd_graph(two_learners, app_url):
    a, b = two_learners
    open_path(a, app_url, "/autograd_graph?backward=2&retain=1")
    open_path(b, app_url, "/autograd_graph?backward=3&retain=1&layout=LR")
    expect(a.locator("body")).to_contain_text("backward")
    expect_query(a, {"backward": "2", "retain": "1"})
    expect_query(b, {"backward": "3", "retain": "1", "layout": "LR"})
    a.reload()
    wait_settled(a)
    expect_query(b, {"backward": "3", "retain": "1", "layout": "LR"})


def test_moons_trainer(two_learners, app_url):
    a, b = two_learners
    open_path(a, app_url, "/moons_trainer?n=300&epochs=3")
    open_path(b, app_url, "/moons_trainer?n=400&epochs=4&lr=0.01")
    click(a, "mt_step")
    expect(a.get_by_text("Epoch 1 / 3")).to_be_visible()
    expect(b.get_by_text("Epoch 0 / 4")).to_be_visible()
    click(b, "mt_step")
    expect(b.get_by_text("Epoch 1 / 4")).to_be_visible()
    click(b, "mt_step")
    expect(b.get_by_text("Epoch 2 / 4")).to_be_visible()
    click(a, "mt_reset")
    expect(a.get_by_text("Epoch 0 / 3")).to_be_visible()
    expect(b.get_by_text("Epoch 2 / 4")).to_be_visible()
    expect_query(a, {"n": "300", "epochs": "3"})
    expect_query(b, {"n": "400", "epochs": "4", "lr": "0.01"})


def test_batch_iterator(two_learners, app_url):
    a, b = two_learners
    open_path(a, app_url, "/batch_iterator?n=24&batch=5")
    open_path(b, app_url, "/batch_iterator?n=40&batch=4&shuffle=0")
    click(a, "bi_next")
    expect(a.locator("body")).to_contain_text(re.compile(r"· 2 of \d+ in the run"))
    click(a, "bi_next")
    click(b, "bi_next")
    expect(a.locator("body")).to_contain_text(re.compile(r"· 3 of \d+ in the run"))
    expect(b.locator("body")).to_contain_text(re.compile(r"· 2 of \d+ in the run"))
    expect_query(a, {"n": "24", "batch": "5"})
    expect_query(b, {"n": "40", "batch": "4", "shuffle": "0"})


def test_lessons(two_learners, app_url):
    a, b = two_learners
    open_path(a, app_url, "/lessons?lesson=training&step=2")
    open_path(b, app_url, "/lessons?lesson=autograd&step=3")
    click(a, "lesson_next")
    expect_query(a, {"lesson": "training", "step": "3"})
    expect_query(b, {"lesson": "autograd", "step": "3"})
    click(b, "lesson_back")
    expect_query(a, {"lesson": "training", "step": "3"})
    expect_query(b, {"lesson": "autograd", "step": "2"})
