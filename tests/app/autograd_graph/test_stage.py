"""The autograd page in presenter mode (the stage), the collapsed view and the saved-tensor
names, through the real router in Streamlit's AppTest."""
from __future__ import annotations

from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.autograd_graph.presets import PRESETS_BY_KEY

PAGE = "app_pages/autograd_graph/page.py"
HOME = "app_pages/home/page.py"
MOONS_LR_SAVED = {"code": PRESETS_BY_KEY["moons"].code, "layout": "LR", "saved": "1"}


def _in_order(node, found=None) -> list[tuple[str, str | None, str | None]]:
    """Every element and block of the page as (type, key, label), in the order drawn."""
    found = [] if found is None else found
    key = getattr(node, "key", None)
    found.append((type(node).__name__, key if isinstance(key, str) else None,
                  getattr(node, "label", None)))
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            _in_order(child, found)
    return found


def _position(order, *, kind: str | None = None, key: str | None = None,
              label: str | None = None) -> int:
    for index, (k, found_key, found_label) in enumerate(order):
        if (kind is None or k == kind) and (key is None or found_key == key) \
                and (label is None or found_label == label):
            return index
    raise AssertionError(f"no {kind or ''} {key or ''} {label or ''} on the page")


def _dot(at) -> str:
    return at.get("graphviz_chart")[0].proto.spec


def _drawn(dot: str) -> str:
    """The DOT text without the tooltips: what the boxes show."""
    return "".join(line.split("tooltip=")[0] for line in dot.splitlines())


def _via_sidebar(at, page: str):
    for name in list(at.query_params):
        del at.query_params[name]
    at.switch_page(page)
    return at.run()


def test_presenter_mode_draws_the_graph_and_next_node_before_the_program():
    at = open_page(PAGE, query={"present": "1"})
    assert_clean(at)
    order = _in_order(at.main)
    stage = _position(order, key="autograd_stage")
    graph = _position(order, key="autograd_stage_graph")
    next_node = _position(order, kind="Button", label="Next node")
    story = _position(order, key="autograd_graph_story")
    program = _position(order, key="ag_code")
    assert stage < graph < program and stage < next_node < program and story < program
    # The drawing is the presenter's: a place kept for every gradient to come, and no line
    # at the small size (11 pt x 1.5) the notes have outside presenter mode.
    dot = _dot(at)
    assert "grad —" in dot and 'point-size="16"' not in dot
    assert "The graph, and backward() step by step" not in shown_text(at)
    assert "too big" not in shown_text(at)          # the first example fits 1280x720


def test_normal_mode_also_leads_with_the_graph_and_next_node():
    """A school laptop's and a phone's first screen go to the graph and its controls too
    (issue 43): the program and the settings follow them, in the normal text size."""
    at = open_page(PAGE)
    assert_clean(at)
    order = _in_order(at.main)
    graph = _position(order, key="autograd_stage_graph")
    next_node = _position(order, kind="Button", label="Next node")
    program = _position(order, key="ag_code")
    assert graph < program and next_node < program
    assert "The graph, and backward() step by step" not in shown_text(at)
    assert 'point-size="16"' not in _dot(at) and "grad —" in _dot(at)


def test_a_graph_too_big_for_the_stage_says_so_and_offers_the_collapsed_view():
    at = open_page(PAGE, query={"present": "1", **MOONS_LR_SAVED})
    assert_clean(at)
    assert any("too big for a 1280×720 screen" in w.value for w in at.warning)
    full = _dot(at)
    assert "AccumulateGrad</b>" in full and "saved self.shape" in full
    at.button(key="ag_stage_collapse").click().run()
    assert_clean(at)
    collapsed = _dot(at)
    assert "AccumulateGrad adds into .grad" in collapsed and "saved " not in _drawn(collapsed)
    assert collapsed.count("label=<<table") < full.count("label=<<table") / 2
    assert at.toggle(key="ag_collapsed").value is True
    assert "Collapsed view:" in shown_text(at)          # what the view hides, said once
    at.button(key="ag_stage_full").click().run()
    assert at.toggle(key="ag_collapsed").value is False
    assert _dot(at) == full


def test_the_collapsed_view_is_this_learners_and_survives_the_sidebar():
    at = open_page(PAGE)
    at.toggle(key="ag_collapsed").set_value(True).run()
    assert_clean(at)
    assert "AccumulateGrad adds into .grad" in _dot(at)
    _via_sidebar(at, HOME)
    back = _via_sidebar(at, PAGE)
    assert_clean(back)
    assert back.toggle(key="ag_collapsed").value is True
    assert "AccumulateGrad adds into .grad" in _dot(back)


def test_saved_tensors_are_named_as_in_python_with_pytorchs_fields_in_a_footnote():
    at = open_page(PAGE, query={**MOONS_LR_SAVED})
    assert_clean(at)
    drawn = _drawn(_dot(at))
    assert "sym_" not in drawn and "saved self.shape = (16, 1)" in drawn
    footnote = next(c.value for c in at.caption if "derivative formulas" in c.value)
    assert "*self.shape* is `grad_fn._saved_self_sym_sizes`" in footnote
    assert "*mat1* is `grad_fn._saved_mat1`" in footnote
