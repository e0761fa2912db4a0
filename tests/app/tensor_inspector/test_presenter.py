"""The Tensor inspector's presenter stage through the real router (issue 12): the chain and the
step picker come first, the pictures of the drawn step follow, a failure is compact and fixable,
and switching presenter mode on or off keeps the learner's chain and step."""
from __future__ import annotations

import torch

from app_pages.tensor_inspector.tables import GRID_CLASS, STRIP_CLASS
from tests.app.apptest import code_blocks, assert_clean, open_page, shown_text
from tests.html_tables import read_tables

PAGE = "app_pages/tensor_inspector/page.py"
LESSON = {"shape": "4,6", "ops": "t()[1:5]"}


def _charts(at) -> list[str]:
    """The keys of the page's Plotly charts, in page order."""
    return [chart.proto.id.rsplit("-", 1)[-1] for chart in at.get("plotly_chart")]


def _page_elements(node):
    """The page's elements in page order (AppTest's tree, depth first)."""
    children = getattr(node, "children", None)
    if not children:
        yield node
        return
    for key in sorted(children):
        yield from _page_elements(children[key])


def test_presenter_mode_opens_with_the_chain_the_step_picker_and_the_pictures():
    at = open_page(PAGE, query={**LESSON, "present": "1"})
    assert_clean(at)
    # The chain's text box is the page's first text box (in normal mode the shape is).
    assert [t.key for t in at.text_input][0] == "ti_ops"
    assert at.text_input(key="ti_ops").value == "t()[1:5]"
    assert at.text_input(key="ti_ops").label == "Op chain on x"
    picker = at.radio(key="ti_draw")
    assert picker.label == "Step drawn"
    assert picker.value == "x.t()[1:5]"
    # The grid and the strip (tables) come before every other picture: the memory walk, the
    # page's first chart, follows below.
    drawn_in_order = [e.proto.body if e.type == "html" else e.type for e in _page_elements(at.main)
                      if e.type in ("html", "plotly_chart", "image", "imgs")]
    grid_at = next(i for i, e in enumerate(drawn_in_order) if f'<table class="{GRID_CLASS}' in e)
    strip_at = next(i for i, e in enumerate(drawn_in_order) if f'<table class="{STRIP_CLASS}' in e)
    walk_at = next(i for i, e in enumerate(drawn_in_order) if e in ("image", "imgs"))  # the walk
    assert grid_at < strip_at < walk_at
    assert "plotly_chart" not in drawn_in_order, "no Plotly on the first page (light_figures.py)"
    [grid] = read_tables(drawn_in_order[grid_at])
    drawn = torch.arange(24.0).reshape(4, 6).t()[1:5]
    cells = [[int(float(c.text)) for c in row] for row in grid.data_cells()]
    assert cells == drawn.int().tolist()
    text = shown_text(at)
    assert str(drawn.stride()) in text and "storage offset" in text
    # The build controls are still on the page, below the stage.
    assert at.text_input(key="ti_shape").value == "4,6"
    assert at.button(key="ti_append")

    # The normal layout leads with the same stage (issue 43: a laptop's and a phone's first
    # screen go to the grid and the chain too).
    normal = open_page(PAGE, query=LESSON)
    assert [t.key for t in normal.text_input][0] == "ti_ops"
    assert normal.text_input(key="ti_ops").label == "Op chain on x"
    assert normal.radio(key="ti_draw").label == "Step drawn"


def test_a_failing_step_is_one_line_and_its_fix_is_one_click_on_the_stage():
    at = open_page(PAGE, query={"ops": "t().view(-1)", "present": "1"})
    assert_clean(at)
    headline = [e.value for e in at.error if "failed" in e.value]
    assert len(headline) == 1 and "Step 2" in headline[0]
    assert "PyTorch's message" in [p.proto.popover.label for p in at.get("popover")]
    try:
        torch.arange(24.0).reshape(4, 6).t().view(-1)
    except RuntimeError as exc:
        assert str(exc) in shown_text(at)     # folded away, not dropped
    at.button(key="ti_chain_error_fix_0").click().run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "t().reshape(-1)"
    assert not [e.value for e in at.error if "failed" in e.value]


def test_switching_presenter_mode_keeps_the_chain_and_the_step_drawn():
    at = open_page(PAGE, query=LESSON)
    at.radio(key="ti_draw").set_value("x.t()").run()
    at.toggle(key="presenter_mode").set_value(True).run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "t()[1:5]"
    assert at.radio(key="ti_draw").value == "x.t()"
    at.toggle(key="presenter_mode").set_value(False).run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "t()[1:5]"
    assert at.radio(key="ti_draw").value == "x.t()"


def test_a_classroom_link_that_hides_the_chain_shows_it_as_code_on_the_stage():
    at = open_page(PAGE, query={**LESSON, "hide": "ops", "present": "1"})
    assert_clean(at)
    assert "ti_ops" not in [t.key for t in at.text_input]
    assert "x.t()[1:5]" in code_blocks(at)
    assert "ti_append" not in [b.key for b in at.button]     # nothing to build on a fixed chain
    assert at.radio(key="ti_draw").value == "x.t()[1:5]"
