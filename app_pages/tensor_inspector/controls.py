"""The controls of sections 1 and 2: build x (shape, dtype, fill) and the op chain builder.

The settings' own widgets come from the table through the form; the helpers here (one number
box per dimension, the dimension buttons, the step builder) only edit the text those widgets
hold, in callbacks that run before the next rerun draws them.
"""
from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.classroom import visible
from components.code_block import code_block
from components.plain_text import code_span, md
from components.settings_form import SettingsForm
from components.state import resend_widget_value
from workbench.tensor_inspector.chain import ALLOWED_METHODS, ChainSyntaxError, format_chain, parse_chain
from workbench.tensor_inspector.presets import PRESETS
from workbench.tensor_inspector.settings import MAX_RANK, RANDOM_FILLS, TABLE, VALUE_FILLS, TensorSettings

ss = st.session_state
ARG_TEMPLATES = {"view": "-1", "reshape": "-1", "transpose": "0, 1", "t": "", "permute": "1, 0",
                 "movedim": "0, -1", "unsqueeze": "0", "squeeze": "", "flatten": "",
                 "unflatten": "0, (2, -1)", "contiguous": "", "expand": "2, -1, -1",
                 "narrow": "0, 1, 2", "select": "0, 0", "flip": "0", "clone": "", "[ ]": "::2"}
INDEXING = "[ ]"


def apply_changes(form: SettingsForm, changes: tuple[tuple[str, object], ...]) -> None:
    """A one-click fix or a preset: the settings it names into their widgets, the rest kept."""
    form.change(dict(changes))


def preset_picker(form: SettingsForm, settings: TensorSettings) -> None:
    def picked() -> None:
        preset = PRESETS.get(ss.get("ti_preset"))
        if preset is None:
            return
        if settings.ops and settings.ops != preset.ops:
            st.toast(f"Your chain {code_span(settings.ops)} on shape "
                     f"{code_span(TABLE['shape'].format(settings.shape) or '()')} was replaced by "
                     "the preset's.", icon=":material/history:")
        apply_changes(form, (("shape", preset.shape), ("ops", preset.ops),
                             ("dtype", preset.dtype), ("fill", "arange")))

    st.selectbox("Lesson presets", list(PRESETS), index=None, key="ti_preset", on_change=picked,
                 placeholder="Pick a preset: the rank ladder, or a lesson example ...",
                 help="Loads a shape and an op chain from the lesson.")


# --- 1 · Build x -------------------------------------------------------------------------------

def _set_shape(form: SettingsForm, shape: tuple[int, ...]) -> None:
    ss[form.key("shape")] = TABLE["shape"].format(shape)


def _dim_edited(form: SettingsForm, rank: int) -> None:
    _set_shape(form, tuple(ss[f"ti_dim_{i}"] for i in range(rank)))


def _add_dim(form: SettingsForm, shape: tuple[int, ...], where: int) -> None:
    if len(shape) < MAX_RANK:
        _set_shape(form, (1, *shape) if where == 0 else (*shape, 1))


def _drop_dim(form: SettingsForm, shape: tuple[int, ...]) -> None:
    _set_shape(form, shape[:-1])


def _shape_editor(form: SettingsForm) -> None:
    shape = form.value("shape")
    if not visible("shape"):
        return
    param = TABLE["shape"]
    for i, column in enumerate(st.columns(len(shape)) if shape else ()):
        ss[f"ti_dim_{i}"] = shape[i]          # follows the typed shape
        column.number_input(f"dim {i}", min_value=param.lo, max_value=param.hi, step=1,
                            key=f"ti_dim_{i}", on_change=_dim_edited, args=(form, len(shape)))
    full = len(shape) >= MAX_RANK
    with st.container(horizontal=True, key="ti_dim_buttons"):
        st.button("Dim in front", on_click=_add_dim, args=(form, shape, 0), key="ti_add_front",
                  help="Add a dimension of size 1 in front", disabled=full, icon=":material/add:")
        st.button("Dim at end", on_click=_add_dim, args=(form, shape, 1), key="ti_add_back",
                  help="Add a dimension of size 1 at the end", disabled=full,
                  icon=":material/add:")
        st.button("Drop last dim", on_click=_drop_dim, args=(form, shape), key="ti_drop_dim",
                  help="Remove the last dimension", disabled=not shape, icon=":material/remove:")


def build_x(form: SettingsForm) -> None:
    """Shape (typed, or one box per dimension), dtype, fill, and the fill's value or seed."""
    st.subheader("1 · Build x", divider="gray")
    _shape_editor(form)
    dtype_col, fill_col = st.columns(2)
    with dtype_col:
        form.draw("dtype")
    with fill_col:
        fill = form.value("fill")
    if fill in VALUE_FILLS:
        form.draw("value")
    if fill in RANDOM_FILLS:
        form.draw("seed")


# --- 2 · Apply ops -----------------------------------------------------------------------------

def _method_picked() -> None:
    ss["ti_add_args"] = ARG_TEMPLATES.get(ss["ti_add_method"], "")
    ss.pop("ti_add_problem", None)


def _append_step(form: SettingsForm) -> None:
    method, args = ss["ti_add_method"], ss.get("ti_add_args", "").strip()
    new = f"[{args}]" if method == INDEXING else f"{method}({args})"
    try:
        added = parse_chain(new)
        old = parse_chain(ss.get(form.key("ops"), ""))
    except ChainSyntaxError as exc:
        ss["ti_add_problem"] = f"{code_span(new)} cannot be added: {md(exc)}"
        return
    ss.pop("ti_add_problem", None)
    ss[form.key("ops")] = format_chain(old + added)


def _undo_step(form: SettingsForm) -> None:
    try:
        steps = parse_chain(ss.get(form.key("ops"), ""))
    except ChainSyntaxError:
        return
    ss[form.key("ops")] = format_chain(steps[:-1])


def _clear_chain(form: SettingsForm) -> None:
    ss[form.key("ops")] = ""


CHAIN_PLACEHOLDER = "e.g. transpose(0, 1).reshape(4, -1)[:, 1:3]"


def _chain_code(ops: str) -> str:
    return "x" + ("." + ops if ops and ops[0] != "[" else ops)


def chain_text(form: SettingsForm) -> None:
    """Presenter mode's first screen: the chain as typed, under a label short enough for one
    line at 1.4x (the table's long label and its help stay on the widget's tooltip)."""
    ops = form.value("ops", label="Op chain on x", placeholder=CHAIN_PLACEHOLDER)
    if not visible("ops"):
        code_block(_chain_code(ops), language="python")


def op_chain(form: SettingsForm, *, typed_on_stage: bool = False) -> DeltaGenerator | None:
    """The chain as typed text, and a builder that appends one step at a time. With
    `typed_on_stage` the text box is on presenter mode's first screen (`chain_text`) and only
    the builder is here. Returns the slot right under the chain's text, for the line that says
    a step failed (None on the stage, which has its own)."""
    st.subheader("2 · Apply ops", divider="gray")
    problem_slot = None
    if typed_on_stage:
        if not visible("ops"):     # the lesson fixed the chain: there is nothing to build
            return None
        st.caption("The chain itself is at the top of the page; the builder appends to it.")
    else:
        ops = form.value("ops", placeholder=CHAIN_PLACEHOLDER)
        if not visible("ops"):
            code_block(_chain_code(ops), language="python")
        problem_slot = st.container(key="ti_chain_problem")
        if not visible("ops"):
            return problem_slot
    method_col, args_col = st.columns(2)
    resend_widget_value("ti_add_method", "transpose")
    resend_widget_value("ti_add_args", ARG_TEMPLATES.get(ss["ti_add_method"], ""))
    method_col.selectbox("Op", [*ALLOWED_METHODS, INDEXING], key="ti_add_method",
                         on_change=_method_picked,
                         format_func=lambda m: "indexing [ ]" if m == INDEXING else m)
    args_col.text_input("Arguments", key="ti_add_args")
    st.caption(f"`{ss['ti_add_method']}`: " + ALLOWED_METHODS.get(
        ss["ti_add_method"], "slices (`1:3`, `::2`), whole numbers, `None` and `...`"))
    if "ti_add_problem" in ss:
        st.warning(ss["ti_add_problem"], icon=":material/warning:")
    with st.container(horizontal=True, key="ti_chain_buttons"):
        st.button("Append step", on_click=_append_step, args=(form,), key="ti_append",
                  icon=":material/add:", type="primary")
        st.button("Undo last step", on_click=_undo_step, args=(form,), key="ti_undo",
                  icon=":material/undo:")
        st.button("Clear", on_click=_clear_chain, args=(form,), key="ti_clear",
                  icon=":material/clear_all:")
    return problem_slot
