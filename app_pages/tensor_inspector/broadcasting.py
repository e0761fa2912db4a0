"""The broadcasting and matmul tab: two shapes in, the result shape (or PyTorch's error) out."""
from __future__ import annotations

import streamlit as st

from app_pages.tensor_inspector.controls import apply_changes
from app_pages.tensor_inspector.figures import shapes_table
from app_pages.tensor_inspector.light_figures import shapes_html
from components.accessible_chart import data_table
from components.code_panel import code_panel
from components.error_panel import error_panel
from components.settings_form import SettingsForm
from workbench.tensor_inspector.broadcast import PRESETS, Combination
from workbench.tensor_inspector.factory import shape_text

INTRO = ("Two shapes in, the result shape (or PyTorch's error) out. Broadcasting lines the shapes "
         "up **from the right**; each pair of sizes must be equal, or one of them 1 (stretched "
         "with stride 0, never copied), or missing.")


def controls(form: SettingsForm) -> st.delta_generator.DeltaGenerator:
    """The two shapes and the op; returns the slot above them where the presets go."""
    st.markdown(INTRO)
    preset_slot = st.container()
    a_col, op_col, b_col = st.columns([2, 1, 2], vertical_alignment="bottom")
    with a_col:
        form.draw("lhs")
    with op_col:
        form.draw("combine", required=True)
    with b_col:
        form.draw("rhs")
    return preset_slot


def preset_picker(form: SettingsForm) -> None:
    def picked() -> None:
        if st.session_state.get("ti_shape_preset") in PRESETS:
            left, right, combine = PRESETS[st.session_state["ti_shape_preset"]]
            apply_changes(form, (("lhs", left), ("rhs", right), ("combine", combine)))

    st.selectbox("Shape presets", list(PRESETS), index=None, key="ti_shape_preset",
                 on_change=picked, placeholder="Pick an example from the lesson ...")


def result(combo: Combination) -> None:
    if combo.result is not None:
        st.success(f"`{shape_text(combo.left)} {'@' if combo.combine == 'matmul' else '+'} "
                   f"{shape_text(combo.right)}` gives shape **{shape_text(combo.result)}**",
                   icon=":material/check_circle:")
    else:
        error_panel(RuntimeError(combo.error or "these shapes do not combine"), key="ti_combine_err")
    if combo.columns:
        described = (f"Shapes {shape_text(combo.left)} and {shape_text(combo.right)} aligned "
                     f"from the right for {combo.expression}")
        with st.container(key="ti_shapes"):
            st.html(shapes_html(combo, label=described))
        data_table(lambda: shapes_table(combo), key="ti_shapes_table", label=described)
    if combo.expanded_strides is not None:
        left_strides, right_strides = combo.expanded_strides
        st.markdown(f"Broadcasting copies nothing: `a.expand{shape_text(combo.result)}` has "
                    f"strides `{left_strides}` and `b.expand{shape_text(combo.result)}` has "
                    f"`{right_strides}`; a stride of 0 reads the same element again and again.")
    st.caption(" · ".join(combo.notes) + ". Green: sizes that match; blue: a size-1 (or missing) "
               "dimension stretched with stride 0; yellow: the matrix dimensions; red: a mismatch.")
    code_panel(f"import torch\n\na = torch.zeros({shape_text(combo.left)})\n"
               f"b = torch.zeros({shape_text(combo.right)})\n"
               f"print(({combo.expression}).shape)\n", filename="shapes.py", key="ti_shapes_code")
