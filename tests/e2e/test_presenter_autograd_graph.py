"""The autograd page on a projector, in Chromium: the graph fitted to the screen beside Next node
and the step's story, all on the first screen, its text at 14 px or more (and 1.3x the normal
view's); a graph too big for 1280x720 that says so and offers the collapsed view; the toggle
labels that used to end in "..." shown whole, in light and dark."""
from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from harness.chromium import wait_drawn, wait_settled
from harness.stage import PROJECTORS, assert_on_first_screen, clipped_texts, first_screen, text_px
from tests.e2e.waiting import WAIT_MS
from workbench.autograd_graph.presets import PRESETS_BY_KEY

# Its name is the label and the shortcut Streamlit shows in it ("Next node Shortcut N").
NEXT_NODE = re.compile(r"^Next node\b")
pytestmark = pytest.mark.e2e

PATH = "/autograd_graph"
MOONS_LR_SAVED = f"{PATH}?code={quote(PRESETS_BY_KEY['moons'].code)}&layout=LR&saved=1"
# The two projectors, and the usual one in the dark theme. A 1920x1080 screen only gives the
# graph more room than these (each size costs two page loads and three steps).
SIZES = [(size, "light") for size in PROJECTORS] + [(PROJECTORS[0], "dark")]


def _name(value) -> str:
    return value if isinstance(value, str) else "x".join(map(str, value))


def _graph(page: Page):
    """The graph's SVG, once the browser has laid it out and the page is drawn."""
    svg = page.locator(".wb-graph svg").first
    expect(svg.locator("text").first).to_be_attached(timeout=WAIT_MS)
    wait_drawn(page)
    return svg


def _controls(page: Page) -> dict[str, object]:
    step = "div[class*='st-key-ag_step_']"
    return {"Next node": page.get_by_role("button", name=NEXT_NODE),
            "Back": page.locator(f"{step}[class*='_back'] button").first,
            "to the end": page.locator(f"{step}[class*='_all'] button").first,
            "the story": page.locator(".st-key-autograd_graph_story")}


def _node(svg, title: str):
    """The box of the graph node called `title` (a Graphviz node group holding that text)."""
    return svg.locator("g.node").filter(has=svg.page.locator(f"text:text-is('{title}')")).first


# The page's script scrolls the graph's box to the node the engine ran, on a frame after the
# graph is drawn: the node's centre is inside the part of the box on screen once it has.
_FOLLOWED_JS = """
([key, title]) => {
  const box = document.querySelector(`.st-key-${key}`);
  const node = box && [...box.querySelectorAll('g.node')]
    .find((g) => [...g.querySelectorAll('text')].some((t) => t.textContent === title));
  if (!node) return false;
  const n = node.getBoundingClientRect(), b = box.getBoundingClientRect();
  const x = n.x + n.width / 2, y = n.y + n.height / 2;
  return b.x <= x && x <= b.x + b.width && b.y <= y && y <= b.y + b.height;
}
"""


def _next(page: Page, step: int) -> None:
    page.get_by_role("button", name=NEXT_NODE).click()
    expect(page.get_by_text(f"Step {step} of", exact=False)).to_be_visible(timeout=WAIT_MS)
    wait_settled(page)


@pytest.mark.parametrize(("size", "theme"), SIZES, ids=_name)
def test_the_graph_its_controls_and_the_story_share_the_first_screen(browser, app_url, size, theme):
    normal = first_screen(browser, app_url, PATH, size, present=False, theme=theme)
    normal_px = text_px(_graph(normal))
    normal.context.close()

    page = first_screen(browser, app_url, PATH, size, theme=theme)
    graph = _graph(page)
    drawn = assert_on_first_screen(page, graph, "the graph")
    for what, control in _controls(page).items():
        assert_on_first_screen(page, control, what)
        assert clipped_texts(control) == [], what
    assert clipped_texts(graph) == []
    shown_px = text_px(graph)
    assert shown_px >= 14, f"graph text {shown_px:.1f} px"
    # Normally the graph's text is Graphviz's own size in a narrower column (13.3 px at 1280x720
    # when the server lays it out; the browser's layout set it to 0.6rem, 10 px).
    assert shown_px >= 1.25 * normal_px, f"{shown_px:.1f} px presenting, {normal_px:.1f} px normally"
    assert drawn["height"] >= 0.75 * size[1] - 110, "the graph does not fill the screen's height"

    # Step through: the node the engine ran is on screen with Next node, at the same scale.
    for step, title in enumerate(("PowBackward0", "SubBackward0", "AddBackward0"), start=1):
        _next(page, step)
        assert_on_first_screen(page, _node(graph, title), f"{title}, the node of step {step}")
        assert text_px(graph) == pytest.approx(shown_px, rel=0.01), "the graph rescaled on Next node"
    assert graph.bounding_box()["height"] == pytest.approx(drawn["height"], abs=1)
    page.context.close()


def test_a_graph_too_big_for_the_screen_says_so_and_offers_the_collapsed_view(browser, app_url):
    page = first_screen(browser, app_url, MOONS_LR_SAVED, PROJECTORS[0])
    graph = _graph(page)
    box = page.locator(".st-key-autograd_stage_graph")
    notice = page.locator(".st-key-autograd_too_big")
    expect(notice).to_contain_text("too big for a 1280×720 screen")
    assert_on_first_screen(page, notice, "the notice")
    assert_on_first_screen(page, box, "the graph's box")
    assert text_px(graph) >= 14                         # it scrolls rather than shrink
    drawn = graph.locator("text").all_text_contents()
    assert not any("sym_" in text for text in drawn)    # learner names: self.shape, not self_sym_sizes
    assert any(text.startswith("saved self.shape") for text in drawn)

    for step in (1, 2):
        _next(page, step)
    # The box follows the node the engine runs: it is inside the part of the box on screen.
    running_title = "BinaryCrossEntropyWithLogitsBackward0"
    page.wait_for_function(_FOLLOWED_JS, arg=["autograd_stage_graph", running_title], timeout=WAIT_MS)
    running = _node(graph, running_title).bounding_box()
    seen = box.bounding_box()
    assert seen["x"] <= running["x"] + running["width"] / 2 <= seen["x"] + seen["width"]
    assert seen["y"] <= running["y"] + running["height"] / 2 <= seen["y"] + seen["height"]

    boxes = graph.locator("g.node").count()
    page.get_by_role("button", name="Collapsed view", exact=True).click()
    expect(page.get_by_role("button", name="Full view", exact=True)).to_be_visible(timeout=WAIT_MS)
    graph = _graph(page)
    expect(graph.locator("g.node")).not_to_have_count(boxes)
    assert graph.locator("g.node").count() * 2 <= boxes
    assert text_px(graph) >= 14
    assert_on_first_screen(page, page.get_by_role("button", name="Full view", exact=True), "Full view")
    assert_on_first_screen(page, page.get_by_role("button", name=NEXT_NODE), "Next node")
    page.context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_zero_the_gradients_label_is_whole_with_the_sidebar_open(browser, app_url, theme):
    page = first_screen(browser, app_url, PATH, PROJECTORS[0], theme=theme)
    _graph(page)
    page.get_by_role("button", name="Expand sidebar").click()
    expect(page.locator("[data-testid=stSidebar]")).to_be_visible(timeout=WAIT_MS)
    for key in ("ag_retain", "ag_zero", "ag_saved", "ag_collapsed"):
        toggle = page.locator(f".st-key-{key}")
        toggle.scroll_into_view_if_needed()
        expect(toggle).to_be_visible()
        assert clipped_texts(toggle) == [], key
    expect(page.locator(".st-key-ag_zero")).to_contain_text("Zero the gradients before each call")
    page.context.close()


# Nodes of the graph cut by the screen, by the drawing's own box, or by a box around it that
# clips (a box that scrolls: its client area, without its scrollbar, is what shows), as
# "title: its box in the box that cuts it".
_NODES_CUT_JS = """
(key) => {
  const svg = document.querySelector(`.st-key-${key} svg`);
  const clips = [[0, 0, innerWidth, innerHeight]];
  const s = svg.getBoundingClientRect();
  clips.push([s.left, s.top, s.right, s.bottom]);
  for (let box = svg.parentElement; box && !box.matches('[data-testid=stMain]'); box = box.parentElement) {
    const style = getComputedStyle(box);
    if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
    const b = box.getBoundingClientRect();
    clips.push([b.left + box.clientLeft, b.top + box.clientTop,
                b.left + box.clientLeft + box.clientWidth, b.top + box.clientTop + box.clientHeight]);
  }
  const cut = [];
  for (const node of svg.querySelectorAll('g.node')) {
    const n = node.getBoundingClientRect();
    const by = clips.find(([l, t, r, b]) => n.left < l - 1 || n.top < t - 1 || n.right > r + 1
                                            || n.bottom > b + 1);
    if (by) cut.push(`${node.querySelector('title')?.textContent}: `
                     + `${[n.left, n.top, n.right, n.bottom].map(Math.round)} in ${by.map(Math.round)}`);
  }
  return cut;
}
"""


def test_the_first_example_fits_the_1280x720_stage_with_no_node_cut(browser, app_url):
    """Issue 43: at 1280x720 the L node was cut at the bottom and the b leaf's `.grad None` at
    the right (the graph's box scrolled sideways, and its scrollbar took the bottom rows)."""
    page = first_screen(browser, app_url, PATH, PROJECTORS[0])
    graph = _graph(page)
    expect(graph.locator("g.node").first).to_be_visible(timeout=WAIT_MS)
    assert page.evaluate(_NODES_CUT_JS, "autograd_stage_graph") == []
    assert clipped_texts(graph) == []
    _controls(page)["to the end"].click()
    expect(page.get_by_role("button", name=NEXT_NODE)).to_be_disabled(timeout=WAIT_MS)
    wait_settled(page)
    graph = _graph(page)
    assert page.evaluate(_NODES_CUT_JS, "autograd_stage_graph") == []
    page.context.close()
