"""The Tensor inspector through the real router: lesson links, controls, fixes, checks."""
from __future__ import annotations

import torch

from app_pages.tensor_inspector.tables import GRID_CLASS, STRIP_CLASS
from tests.app.apptest import assert_clean, open_page, shown_text
from tests.html_tables import read_tables
from workbench.common.formatting import human_bytes

PAGE = "app_pages/tensor_inspector/page.py"


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _tables(at, css_class: str):
    """The tables of the st.html block that draws the grid or the strip (`css_class`)."""
    return read_tables(next(e.proto.body for e in at.get("html") if f'<table class="{css_class}'
                            in e.proto.body))


def _param(at, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[-1] if isinstance(value, list) else value


def test_lesson_link_shows_exactly_that_tensor_and_chain():
    at = open_page(PAGE, query={"shape": "4,6", "ops": "t()"})
    assert_clean(at)
    x = torch.arange(24.0).reshape(4, 6)
    metrics = _metrics(at)
    assert metrics["stride"] == str(x.t().stride())
    assert metrics["shape"] == str(tuple(x.t().shape))
    assert metrics["contiguous"] == ("yes" if x.t().is_contiguous() else "no")
    assert metrics["memory"] == "view"
    assert at.text_input(key="ti_ops").value == "t()"
    assert at.text_input(key="ti_shape").value == "4,6"
    assert _param(at, "ops") == "t()"
    drawn = " ".join(str(h.proto.body) for h in at.get("html"))
    assert at.get("image") and 'class="wb-shapes"' in drawn    # the walk, the shapes
    assert _tables(at, GRID_CLASS)[0].caption == "Logical view of x.t(), shape (6, 4)"
    assert _tables(at, STRIP_CLASS)[0].caption.startswith("Storage of x.t(): ")


def test_view_error_is_content_and_a_fix_is_one_click():
    at = open_page(PAGE, query={"ops": "t().view(-1)"})
    assert_clean(at)
    x = torch.arange(24.0).reshape(4, 6)
    try:
        x.t().view(-1)
    except RuntimeError as exc:
        message = str(exc)
    assert message in shown_text(at)
    at.button(key="ti_chain_error_fix_0").click().run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "t().reshape(-1)"
    assert _param(at, "ops") == "t().reshape(-1)"
    assert _metrics(at)["stride"] == str(x.t().reshape(-1).stride())
    assert _metrics(at)["memory"] == "new memory"
    assert message not in shown_text(at)


def test_the_contiguous_fix_inserts_the_copy_before_view():
    at = open_page(PAGE, query={"ops": "t().view(-1)"})
    at.button(key="ti_chain_error_fix_1").click().run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "t().contiguous().view(-1)"


def test_bad_link_values_fall_back_with_a_warning():
    at = open_page(PAGE, query={"dtype": "float8", "shape": "2,x", "fill": "magic"})
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "dtype=float8" in warnings and "fill=magic" in warnings and "shape=2,x" in warnings
    assert _metrics(at)["shape"] == "(4, 6)"


def test_unreadable_chain_is_explained_and_never_run():
    at = open_page(PAGE, query={"ops": "__class__.__bases__[0].__subclasses__()"})
    assert_clean(at)
    assert "This chain cannot be read" in shown_text(at)
    assert _metrics(at)["shape"] == "(4, 6)"


def test_typing_a_shape_and_appending_steps():
    at = open_page(PAGE)
    at.text_input(key="ti_shape").set_value("2, 3, 4").run()
    assert_clean(at)
    assert _metrics(at)["stride"] == str(torch.zeros(2, 3, 4).stride())
    assert at.number_input(key="ti_dim_2").value == 4
    at.selectbox(key="ti_add_method").set_value("permute").run()
    at.text_input(key="ti_add_args").set_value("2, 0, 1").run()
    at.button(key="ti_append").click().run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "permute(2, 0, 1)"
    assert _metrics(at)["stride"] == str(torch.zeros(2, 3, 4).permute(2, 0, 1).stride())
    at.button(key="ti_undo").click().run()
    assert at.text_input(key="ti_ops").value == ""


def test_editing_one_dimension_rewrites_the_shape():
    at = open_page(PAGE)
    at.number_input(key="ti_dim_0").set_value(3).run()
    assert_clean(at)
    assert at.text_input(key="ti_shape").value == "3,6"
    assert _param(at, "shape") == "3,6"
    at.button(key="ti_add_front").click().run()
    assert at.text_input(key="ti_shape").value == "1,3,6"


def test_a_bad_typed_shape_keeps_the_last_good_one():
    at = open_page(PAGE)
    at.text_input(key="ti_shape").set_value("2, -3").run()
    assert_clean(at)
    assert any("Still using `4,6`" in e.value for e in at.error)
    assert _metrics(at)["shape"] == "(4, 6)"


def test_huge_shape_reports_facts_from_meta():
    at = open_page(PAGE, query={"shape": "10000,10000,10000"})
    assert_clean(at)
    big = torch.empty(10000, 10000, 10000, device="meta")
    assert _metrics(at)["nbytes"] == human_bytes(big.nbytes)
    assert "meta" in " ".join(i.value for i in at.info)


def test_scalar_and_bfloat16_link():
    at = open_page(PAGE, query={"shape": "", "dtype": "bfloat16"})
    assert_clean(at)
    assert _metrics(at)["shape"] == "()"
    assert _metrics(at)["nbytes"] == human_bytes(torch.zeros((), dtype=torch.bfloat16).nbytes)
    assert "bfloat16 has no NumPy dtype" not in shown_text(at), "a lazy tab runs only when open"
    at.session_state["ti_more"] = "NumPy bridge"
    at.run()
    assert_clean(at)
    assert "bfloat16 has no NumPy dtype" in shown_text(at)


def test_preset_loads_shape_and_chain():
    at = open_page(PAGE)
    at.selectbox(key="ti_preset").set_value("NCHW to NHWC: permute(0,2,3,1)").run()
    assert_clean(at)
    assert at.text_input(key="ti_ops").value == "permute(0, 2, 3, 1)"
    assert _metrics(at)["stride"] == str(torch.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).stride())


def test_hidden_controls_keep_the_links_values():
    at = open_page(PAGE, query={"shape": "3,5", "ops": "t()", "hide": "ops,shape"})
    assert_clean(at)
    keys = {w.key for w in at.text_input}
    assert "ti_ops" not in keys and "ti_shape" not in keys
    assert _metrics(at)["stride"] == str(torch.zeros(3, 5).t().stride())


def test_factory_error_offers_fixes():
    at = open_page(PAGE, query={"dtype": "int8", "fill": "rand"})
    assert_clean(at)
    assert "torch.rand cannot make int8 values" in shown_text(at)
    at.button(key="ti_build_error_fix_0").click().run()
    assert at.selectbox(key="ti_dtype").value == "float32"
    assert "cannot make" not in shown_text(at)


def test_broadcasting_link_and_error():
    at = open_page(PAGE, query={"lhs": "3,4", "rhs": "4,3"})
    assert_clean(at)
    try:
        torch.zeros(3, 4) + torch.zeros(4, 3)
    except RuntimeError as exc:
        assert str(exc) in shown_text(at)
    at = open_page(PAGE, query={"lhs": "2,4,8,16", "rhs": "2,4,16,8", "combine": "matmul"})
    expected = tuple((torch.zeros(2, 4, 8, 16) @ torch.zeros(2, 4, 16, 8)).shape)
    assert str(expected) in " ".join(s.value for s in at.success)


def test_knowledge_check_is_answered_by_pytorch():
    at = open_page(PAGE)
    at.radio(key="kc_ti_bf16_choice").set_value("16 KiB").run()
    at.button(key="kc_ti_bf16_commit").click().run()
    assert_clean(at)
    nbytes = torch.empty(64, 128, dtype=torch.bfloat16, device="meta").nbytes
    assert f"Right: **{human_bytes(nbytes)}**" in " ".join(s.value for s in at.success)


def test_every_preset_opens_cleanly_with_pytorchs_shape():
    from workbench.tensor_inspector.presets import PRESETS
    from workbench.tensor_inspector.factory import shape_text
    from workbench.tensor_inspector.report import inspect
    from workbench.tensor_inspector.settings import TensorSettings

    at = open_page(PAGE)
    for name, preset in PRESETS.items():
        at.selectbox(key="ti_preset").set_value(name).run()
        assert_clean(at)
        expected = inspect(TensorSettings(shape=preset.shape, ops=preset.ops, dtype=preset.dtype))
        assert _metrics(at)["shape"] == shape_text(expected.result.facts.shape), name
        assert _metrics(at)["stride"] == shape_text(expected.result.facts.stride), name
        assert at.text_input(key="ti_ops").value.replace(" ", "") == preset.ops.replace(" ", ""), name
        if "error" in name or "negative" in name.lower():
            assert at.button(key="ti_chain_error_fix_0"), name


def test_drawing_an_earlier_step_shows_its_facts():
    at = open_page(PAGE, query={"ops": "t().contiguous()"})
    x = torch.arange(24.0).reshape(4, 6)
    assert _metrics(at)["stride"] == str(x.t().contiguous().stride())
    assert _metrics(at)["memory"] == "new memory"
    at.radio(key="ti_draw").set_value("x.t()").run()
    assert_clean(at)
    assert _metrics(at)["stride"] == str(x.t().stride())
    assert _metrics(at)["memory"] == "view"
    at.segmented_control(key="ti_cell_labels").set_value("positions").run()
    assert_clean(at)


def test_grid_cells_are_labelled_with_pytorchs_storage_positions():
    at = open_page(PAGE, query={"ops": "t()"})
    at.segmented_control(key="ti_cell_labels").set_value("positions").run()
    [grid] = _tables(at, GRID_CLASS)
    x = torch.arange(24.0).reshape(4, 6)
    view = x.t()
    positions = torch.as_strided(torch.arange(24), view.shape, view.stride(), view.storage_offset())
    assert [[c.text for c in row] for row in grid.data_cells()] == \
        [[str(p) for p in row] for row in positions.tolist()]


def test_storage_strip_titles_name_the_index_that_reads_each_position():
    at = open_page(PAGE, query={"ops": "t()"})
    [strip] = _tables(at, STRIP_CLASS)
    titles = [cell.title for cell in strip.data_cells()[0]]
    view = torch.arange(24.0).reshape(4, 6).t()
    positions = torch.as_strided(torch.arange(24), view.shape, view.stride(), view.storage_offset())
    for position in (1, 6, 23):
        index = tuple(int(i) for i in (positions == position).nonzero()[0])
        assert titles[position].startswith(f"storage position {position} · ")
        assert f"read by x.t()[{', '.join(map(str, index))}]" in titles[position]


def test_the_widgets_follow_the_settings_table():
    from workbench.tensor_inspector.settings import TABLE

    drawn = {}
    for query in ({"fill": "full"}, {"fill": "rand"}):
        at = open_page(PAGE, query=query)
        assert_clean(at)
        for kind in ("text_input", "selectbox", "number_input", "segmented_control"):
            for widget in at.get(kind):
                if widget.key and widget.key.startswith("ti_") and widget.key[3:] in TABLE.names:
                    drawn[widget.key[3:]] = widget
    assert set(drawn) == set(TABLE.names)
    for name, widget in drawn.items():
        # The chain's box leads the first screen under a label short enough for one line there
        # (controls.chain_text); the table's label stays its tooltip's subject.
        assert widget.label == ("Op chain on x" if name == "ops" else TABLE[name].label), name
        assert widget.help == TABLE[name].help, name
    assert drawn["seed"].proto.max == TABLE["seed"].hi
    assert list(drawn["dtype"].options) == list(TABLE["dtype"].choices)


def test_settings_and_the_drawn_step_survive_a_visit_to_another_page():
    at = open_page(PAGE)
    at.text_input(key="ti_shape").set_value("2,3,4").run()
    at.selectbox(key="ti_dtype").set_value("float16").run()
    at.text_input(key="ti_ops").set_value("permute(2, 0, 1).contiguous()").run()
    step = "x.permute(2, 0, 1)"
    at.radio(key="ti_draw").set_value(step).run()
    at.segmented_control(key="ti_cell_labels").set_value("positions").run()
    at.text_input(key="ti_lhs").set_value("5,1").run()
    at.segmented_control(key="ti_combine").set_value("matmul").run()
    assert_clean(at)
    before_metrics, before_query = _metrics(at), dict(at.query_params)
    assert before_metrics["stride"] == str(torch.zeros(2, 3, 4).permute(2, 0, 1).stride())

    at.switch_page("app_pages/home/page.py").run()
    for name in list(at.query_params):       # the sidebar's link carries no parameters
        del at.query_params[name]
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert at.text_input(key="ti_shape").value == "2,3,4"
    assert at.selectbox(key="ti_dtype").value == "float16"
    assert at.text_input(key="ti_ops").value == "permute(2, 0, 1).contiguous()"
    assert at.radio(key="ti_draw").value == step
    assert at.segmented_control(key="ti_cell_labels").value == "positions"
    assert at.text_input(key="ti_lhs").value == "5,1"
    assert at.segmented_control(key="ti_combine").value == "matmul"
    assert _metrics(at) == before_metrics
    assert dict(at.query_params) == before_query, "the URL is rewritten to match"


def test_a_new_chain_draws_its_last_step():
    at = open_page(PAGE, query={"ops": "t().contiguous()"})
    at.radio(key="ti_draw").set_value("x.t()").run()
    at.text_input(key="ti_ops").set_value("t()").run()
    assert_clean(at)
    assert at.radio(key="ti_draw").value == "x.t()"
    at.text_input(key="ti_ops").set_value("flatten()").run()
    assert at.radio(key="ti_draw").value == "x.flatten()"


def test_the_page_publishes_the_link_once_per_run():
    import components.lesson_link as lesson_link

    calls = []
    original = lesson_link.publish_link

    def counting(*args, **kwargs):
        calls.append(args[1])
        return original(*args, **kwargs)

    lesson_link.publish_link = counting
    try:
        open_page(PAGE, query={"lhs": "3,4"})
    finally:
        lesson_link.publish_link = original
    assert calls.count("tensor_inspector") == 1


def test_a_preset_says_which_chain_it_replaced():
    at = open_page(PAGE, query={"shape": "3,5", "ops": "t().flatten()"})
    at.selectbox(key="ti_preset").set_value("NCHW to NHWC: permute(0,2,3,1)").run()
    assert_clean(at)
    toasts = " ".join(t.value for t in at.toast)
    assert "t().flatten()" in toasts and "3,5" in toasts and "replaced" in toasts


def test_a_chain_that_cannot_be_read_is_not_called_a_failure_to_build_x():
    at = open_page(PAGE, query={"ops": "t("})
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("Reading the op chain failed" in e for e in errors), errors
    assert "Building x failed" not in shown_text(at)


def test_a_failing_step_is_said_once_on_the_first_screen_with_its_message_one_click_away():
    """The failure is said where the chain and the grid are (the first screen, issue 43), once,
    with PyTorch's message and why folded in a popover beside it and the fixes under it."""
    at = open_page(PAGE, query={"shape": "2,3", "ops": "t().view(-1)"})
    assert_clean(at)
    lines = [e.value for e in at.error if "failed" in e.value]
    assert lines == ["**Step 2: `x.t().view(-1)` failed**: " + lines[0].split("failed**: ")[1]], lines
    assert "PyTorch's message" in [p.proto.popover.label for p in at.get("popover")]
    try:
        torch.zeros(2, 3).t().view(-1)
    except RuntimeError as exc:
        assert str(exc) in shown_text(at)
    assert at.button(key="ti_chain_error_fix_0")
