"""Tensor inspector: shape, dtype, strides and storage of a tensor, and what each op does to them.

Widgets -> TensorSettings -> workbench.tensors.report.inspect -> pictures and tables. The URL always
holds the lesson link of what is on screen (shape, dtype, ops, ...; see README.md).
"""
from __future__ import annotations

import dataclasses
import math

import pandas as pd
import streamlit as st
import torch

from components.classroom import share_panel, visible
from components.code_panel import code_panel
from components.device import learner_device
from components.error_panel import error_panel
from components.figures import PLOTLY_CONFIG, graph_scale, prose
from components.knowledge_check import Revealed, knowledge_check
from components.lesson_link import link_settings, publish_link
from components.plain_text import code_span, md, plotly_text
from app_pages.tensor_inspector.figures import (
    bits_figure,
    broadcast_figure,
    grid_figure,
    strip_figure,
    walk_figure,
)
from workbench.tensors.broadcast import PRESETS as SHAPE_PRESETS
from workbench.tensors.broadcast import combine_shapes
from workbench.tensors.chain import ALLOWED_METHODS, ChainSyntaxError, format_chain, parse_chain
from workbench.tensors.dtypes import dtype_info, dtype_table
from workbench.common.errors import ExplainedError
from workbench.common.formatting import human_bytes
from workbench.tensors.numpy_bridge import bridge
from workbench.tensors.codegen import tensor_script
from workbench.tensors.layout import layout_picture
from workbench.tensors.presets import PRESETS
from workbench.tensors.report import (
    DTYPES,
    FILLS,
    LINK_SCHEMA,
    MAX_TOTAL_VALUES,
    MAX_VALUES,
    RANDOM_FILLS,
    Failure,
    Inspection,
    StepView,
    TensorSettings,
    inspect,
    parse_shape,
    shape_text,
    storage_root,
)

KEY = "tensor_inspector"
ss = st.session_state

# Widget keys, one per lesson-link parameter.
K_SHAPE, K_DTYPE, K_FILL, K_VALUE, K_SEED, K_OPS = ("ti_shape", "ti_dtype", "ti_fill", "ti_value",
                                                    "ti_seed", "ti_ops")
K_LHS, K_RHS, K_COMBINE = "ti_lhs", "ti_rhs", "ti_combine"
K_SHAPE_OK = "ti_shape_valid"          # the last shape that parsed (not a widget)
K_SHAPE_PROBLEM = "ti_shape_problem"
ARG_TEMPLATES = {"view": "-1", "reshape": "-1", "transpose": "0, 1", "t": "", "permute": "1, 0",
                 "movedim": "0, -1", "unsqueeze": "0", "squeeze": "", "flatten": "",
                 "unflatten": "0, (2, -1)", "contiguous": "", "expand": "2, -1, -1",
                 "narrow": "0, 1, 2", "select": "0, 0", "flip": "0", "clone": "", "[ ]": "::2"}


def _dims_text(shape: tuple[int, ...]) -> str:
    return ", ".join(str(s) for s in shape)


def _seed_widgets(settings: TensorSettings) -> None:
    """Put a lesson link's (or a preset's, or a fix's) settings into the widgets."""
    ss[K_SHAPE] = _dims_text(settings.shape)
    ss[K_SHAPE_OK] = settings.shape
    ss.pop(K_SHAPE_PROBLEM, None)
    for i, size in enumerate(settings.shape):
        ss[f"ti_dim_{i}"] = size
    ss[K_DTYPE], ss[K_FILL], ss[K_VALUE] = settings.dtype, settings.fill, settings.value
    ss[K_SEED], ss[K_OPS] = settings.seed, settings.ops
    ss[K_LHS], ss[K_RHS] = _dims_text(settings.lhs), _dims_text(settings.rhs)
    ss[K_COMBINE] = settings.combine


def _current(defaults: TensorSettings) -> TensorSettings:
    """The settings the widgets now hold (a hidden control keeps the link's value)."""
    def pick(param: str, key: str, fallback):
        return ss.get(key, fallback) if visible(param) else fallback

    return dataclasses.replace(
        defaults, shape=ss.get(K_SHAPE_OK, defaults.shape) if visible("shape") else defaults.shape,
        dtype=pick("dtype", K_DTYPE, defaults.dtype), fill=pick("fill", K_FILL, defaults.fill),
        value=float(pick("value", K_VALUE, defaults.value)),
        seed=int(pick("seed", K_SEED, defaults.seed)), ops=pick("ops", K_OPS, defaults.ops),
        lhs=ss.get("ti_lhs_valid", defaults.lhs) if visible("lhs") else defaults.lhs,
        rhs=ss.get("ti_rhs_valid", defaults.rhs) if visible("rhs") else defaults.rhs,
        combine=pick("combine", K_COMBINE, defaults.combine))


# --- callbacks (run before the rerun draws the widgets) ---------------------------------------

def _shape_typed() -> None:
    try:
        shape = parse_shape(ss[K_SHAPE])
    except ValueError as exc:
        ss[K_SHAPE_PROBLEM] = (f"{code_span(ss[K_SHAPE])} is not a shape: {md(exc)}. "
                               "The last good shape is kept.")
        return
    ss.pop(K_SHAPE_PROBLEM, None)
    ss[K_SHAPE_OK] = shape
    for i, size in enumerate(shape):
        ss[f"ti_dim_{i}"] = size


def _dim_edited() -> None:
    shape = tuple(int(ss[f"ti_dim_{i}"]) for i in range(len(ss[K_SHAPE_OK])))
    ss[K_SHAPE_OK] = shape
    ss[K_SHAPE] = _dims_text(shape)
    ss.pop(K_SHAPE_PROBLEM, None)


def _add_dim(where: int) -> None:
    shape = ss[K_SHAPE_OK]
    if len(shape) < 5:
        new = (1, *shape) if where == 0 else (*shape, 1)
        ss[K_SHAPE] = _dims_text(new)
        _shape_typed()


def _drop_dim() -> None:
    shape = ss[K_SHAPE_OK]
    if shape:
        ss[K_SHAPE] = _dims_text(shape[:-1])
        _shape_typed()


def _apply_changes(changes: tuple[tuple[str, object], ...]) -> None:
    current = _current(ss["ti_settings"])
    _seed_widgets(dataclasses.replace(current, **dict(changes)))


def _apply_preset() -> None:
    name = ss.get("ti_preset")
    if name in PRESETS:
        preset = PRESETS[name]
        _apply_changes((("shape", preset.shape), ("ops", preset.ops), ("dtype", preset.dtype),
                        ("fill", "arange")))


def _method_picked() -> None:
    ss["ti_add_args"] = ARG_TEMPLATES.get(ss["ti_add_method"], "")
    ss.pop("ti_add_problem", None)


def _append_step() -> None:
    method, args = ss["ti_add_method"], ss.get("ti_add_args", "").strip()
    new = f"[{args}]" if method == "[ ]" else f"{method}({args})"
    try:
        added = parse_chain(new)
        old = parse_chain(ss.get(K_OPS, ""))
    except ChainSyntaxError as exc:
        ss["ti_add_problem"] = f"{code_span(new)} cannot be added: {md(exc)}"
        return
    ss.pop("ti_add_problem", None)
    ss[K_OPS] = format_chain(old + added)


def _undo_step() -> None:
    try:
        steps = parse_chain(ss.get(K_OPS, ""))
    except ChainSyntaxError:
        return
    ss[K_OPS] = format_chain(steps[:-1])


def _clear_chain() -> None:
    ss[K_OPS] = ""


def _broadcast_preset() -> None:
    name = ss.get("ti_shape_preset")
    if name in SHAPE_PRESETS:
        left, right, combine = SHAPE_PRESETS[name]
        ss[K_LHS], ss[K_RHS], ss[K_COMBINE] = _dims_text(left), _dims_text(right), combine
        ss["ti_lhs_valid"], ss["ti_rhs_valid"] = left, right


# --- the page ----------------------------------------------------------------------------------

link, fresh = link_settings(LINK_SCHEMA, KEY)
if fresh or K_SHAPE_OK not in ss:
    _seed_widgets(link)
    ss["ti_lhs_valid"], ss["ti_rhs_valid"] = link.lhs, link.rhs
ss["ti_settings"] = link

st.title("Tensor inspector")
prose(
    "A tensor is a **view over flat memory**: `shape` says how many indices each dimension has, "
    "`stride` how many storage elements one step along each dimension skips, and the "
    "**storage offset** where element `[0, 0, ...]` lives. Build a tensor, apply ops, and watch "
    "what PyTorch does to memory. Every number here comes from PyTorch."
)

st.selectbox("Lesson presets", list(PRESETS), index=None, key="ti_preset", on_change=_apply_preset,
             placeholder="Pick a preset: the rank ladder, or a lesson example ...",
             help="Loads a shape and an op chain from the lesson.")

build_col, chain_col = st.columns([1, 1.25], gap="large")
with build_col:
    st.subheader("1 · Build x", divider="gray")
    if visible("shape"):
        st.text_input("Shape (sizes separated by commas; empty for a scalar)", key=K_SHAPE,
                      on_change=_shape_typed, help="Rank 0 to 5, e.g. `2, 3, 4`. Any size is "
                      "fine: above the value cap only the facts are computed (on `meta`).")
        if K_SHAPE_PROBLEM in ss:
            st.warning(ss[K_SHAPE_PROBLEM], icon=":material/warning:")
        shape_now = ss[K_SHAPE_OK]
        if shape_now:
            dim_cols = st.columns(len(shape_now))
            for i, column in enumerate(dim_cols):
                if f"ti_dim_{i}" not in ss:
                    ss[f"ti_dim_{i}"] = shape_now[i]
                column.number_input(f"dim {i}", min_value=0, max_value=10**9, step=1,
                                    key=f"ti_dim_{i}", on_change=_dim_edited)
        with st.container(horizontal=True, key="ti_dim_buttons"):
            st.button("Dim in front", on_click=_add_dim, args=(0,), key="ti_add_front",
                      help="Add a dimension of size 1 in front", disabled=len(shape_now) >= 5,
                      icon=":material/add:")
            st.button("Dim at end", on_click=_add_dim, args=(1,), key="ti_add_back",
                      help="Add a dimension of size 1 at the end", disabled=len(shape_now) >= 5,
                      icon=":material/add:")
            st.button("Drop last dim", on_click=_drop_dim, key="ti_drop_dim",
                      help="Remove the last dimension", disabled=not shape_now,
                      icon=":material/remove:")
    dtype_col, fill_col = st.columns(2)
    if visible("dtype"):
        dtype_col.selectbox("dtype", list(DTYPES), key=K_DTYPE,
                            help="The kind of number each element holds; see the dtype table.")
    if visible("fill"):
        fill_col.selectbox("Filled by", FILLS, key=K_FILL,
                           help="arange numbers the elements 0, 1, 2, ... in memory order, so "
                           "you can read positions; the *_like factories copy shape and dtype "
                           "from another tensor.")
    fill_now = ss.get(K_FILL, link.fill) if visible("fill") else link.fill
    if fill_now in ("full", "full_like") and visible("value"):
        st.number_input("Fill value", min_value=-1e6, max_value=1e6, key=K_VALUE)
    if fill_now in RANDOM_FILLS and visible("seed"):
        st.number_input("Seed of your generator", min_value=0, max_value=2**31 - 1, step=1,
                        key=K_SEED, help="A torch.Generator of your own: the same seed gives "
                        "the same numbers, and nobody else's numbers change.")

with chain_col:
    st.subheader("2 · Apply ops", divider="gray")
    if visible("ops"):
        st.text_input("Op chain applied to x (typed text is parsed, never run)", key=K_OPS,
                      placeholder="e.g. transpose(0, 1).reshape(4, -1)[:, 1:3]",
                      help="Allowed: " + ", ".join(ALLOWED_METHODS) + ", and indexing with "
                      "slices, whole numbers, None and `...`.")
        method_col, args_col = st.columns(2)
        if "ti_add_method" not in ss:
            ss["ti_add_method"], ss["ti_add_args"] = "transpose", ARG_TEMPLATES["transpose"]
        method_col.selectbox("Op", [*ALLOWED_METHODS, "[ ]"], key="ti_add_method",
                             on_change=_method_picked,
                             format_func=lambda m: "indexing [ ]" if m == "[ ]" else m)
        args_col.text_input("Arguments", key="ti_add_args")
        st.caption(f"`{ss['ti_add_method']}`: " + ALLOWED_METHODS.get(
            ss["ti_add_method"], "slices (`1:3`, `::2`), whole numbers, `None` and `...`"))
        if "ti_add_problem" in ss:
            st.warning(ss["ti_add_problem"], icon=":material/warning:")
        with st.container(horizontal=True, key="ti_chain_buttons"):
            st.button("Append step", on_click=_append_step, key="ti_append",
                      icon=":material/add:", type="primary")
            st.button("Undo last step", on_click=_undo_step, key="ti_undo", icon=":material/undo:")
            st.button("Clear", on_click=_clear_chain, key="ti_clear", icon=":material/clear_all:")
    else:
        st.code("x" + ("." + link.ops if link.ops and link.ops[0] != "[" else link.ops),
                language="python")

settings = _current(link)
publish_link(LINK_SCHEMA, KEY, settings)
ss["ti_settings"] = settings
report: Inspection = inspect(settings, learner_device())


def _show_failure(failure: Failure, key: str) -> None:
    where = "Building x" if failure.step_number is None else \
        f"Step {failure.step_number}: {code_span(failure.label)}"
    st.markdown(f"**{where} failed.**")
    error_panel(failure.error, key=key)
    if failure.fixes:
        st.markdown("**One-click fixes**")
        fix_cols = st.columns(len(failure.fixes))
        for number, (column, fix) in enumerate(zip(fix_cols, failure.fixes, strict=True)):
            column.button(md(fix.label), key=f"{key}_fix_{number}", on_click=_apply_changes,
                          args=(fix.changes,), icon=":material/build:", width="stretch")


def _facts_rows(inspection: Inspection) -> pd.DataFrame:
    rows = []
    for number, view in enumerate(inspection.views):
        f = view.facts
        rows.append({"step": str(number) if number else "x", "code": md(view.label),
                     "shape": shape_text(f.shape), "stride": shape_text(f.stride),
                     "offset": str(f.storage_offset), "contiguous": "yes" if f.is_contiguous else "no",
                     "numel": f"{f.numel:,}", "nbytes": human_bytes(f.nbytes),
                     "storage": f"{f.storage_elements:,} el., {human_bytes(f.storage_bytes)}",
                     "memory": f.memory if number else "new"})
    if inspection.chain_failure is not None and inspection.chain_failure.step_number is not None:
        failure = inspection.chain_failure
        rows.append({"step": str(failure.step_number), "code": md(failure.label), "shape": "error",
                     "stride": "", "offset": "", "contiguous": "", "numel": "", "nbytes": "",
                     "storage": "",
                     "memory": ""})
    return pd.DataFrame(rows)


st.subheader("3 · What PyTorch reports", divider="gray")
if report.build_failure is not None:
    _show_failure(report.build_failure, "ti_build_error")
if not report.views:       # x cannot exist at all: the failure above says why and offers a fix
    st.stop()
if report.build_failure is not None:
    st.caption("x could not be built with this fill, so the facts below come from the `meta` "
               "device (shapes and strides without values).")
elif not report.materialized:
    st.info(f"The largest step holds {report.largest_numel:,} elements "
            f"({human_bytes(report.largest_numel * report.views[0].facts.itemsize)} of "
            f"{settings.dtype}) and all steps together {report.total_numel:,}: above this page's "
            f"cap of {MAX_VALUES:,} per step and {MAX_TOTAL_VALUES:,} in all. The facts come "
            "from the `meta` device, which computes shapes, strides and errors without memory; "
            "values are not made, and colours follow storage positions.",
            icon=":material/memory:")
x_facts = report.views[0].facts
if settings.fill in ("empty", "empty_like") and report.materialized:
    st.caption("`torch.empty` reserves memory without writing to it: the values are whatever "
               "bytes were there before, so they can change from run to run.")
st.markdown(f"x is `{x_facts.dtype}`: **{x_facts.itemsize} byte{'s' if x_facts.itemsize > 1 else ''}"
            " per element** (itemsize), so "
            f"nbytes = numel x {x_facts.itemsize}. *memory* says whether a step **shares** its "
            "input's storage (view) or owns **new memory** (a copy).")
st.table(_facts_rows(report), hide_index=True)
notes = [f"**{number}** · {code_span(view.step.text if view.step else '')}: {view.note}"
         for number, view in enumerate(report.views) if view.note]
if notes:
    st.markdown("\n".join(f"- {note}" for note in notes))
if report.chain_failure is not None:
    _show_failure(report.chain_failure, "ti_chain_error")

with st.container(key="tensor_inspector_main"):
    labels = [view.label for view in report.views]
    if ss.get("ti_draw_for") != settings.ops or ss.get("ti_draw") not in labels:
        ss["ti_draw"] = labels[-1]
        ss["ti_draw_for"] = settings.ops
    pick_col, show_col = st.columns([3, 1.2])
    if len(labels) > 1:
        pick_col.radio("Draw", labels, key="ti_draw", horizontal=True, format_func=md)
    show = show_col.segmented_control("Label cells with", ["values", "positions"], default="values",
                                      key="ti_cell_labels", required=True,
                                      help="positions: where each element lives in storage")
    drawn: StepView = report.views[labels.index(ss["ti_draw"])]
    facts = drawn.facts
    with st.container(key="ti_facts"):
        # Long shapes and strides wrap instead of being cut off (projectors, rank 5).
        st.html("<style>.st-key-ti_facts [data-testid=stMetricValue] * {white-space: normal;"
                " overflow-wrap: anywhere; font-size: 1.9rem;}</style>")
        first_row = st.columns(3)
        first_row[0].metric("shape", shape_text(facts.shape))
        first_row[1].metric("stride", shape_text(facts.stride),
                            help="storage elements skipped by one step along each dimension")
        first_row[2].metric("storage offset", facts.storage_offset,
                            help="where element [0, 0, ...] lives in storage")
        second_row = st.columns(3)
        second_row[0].metric("contiguous", "yes" if facts.is_contiguous else "no",
                             help="row-major with no gaps: is_contiguous()")
        second_row[1].metric("nbytes", human_bytes(facts.nbytes),
                             help=f"numel {facts.numel:,} x itemsize {facts.itemsize} bytes")
        second_row[2].metric("memory", facts.memory if drawn.step else "new memory",
                             help="view: shares its input's storage; new memory: a copy")
    picture = layout_picture(drawn, colour_max=report.views[0].facts.numel - 1)
    if picture.truncated:
        st.caption(":material/crop: **Drawn in part**: " + "; ".join(picture.truncated)
                   + ". The facts above are for the whole tensor; hover a cell for its index.")
    wide_grid = picture.rank > 2
    grid_col, walk_col = (st.container(), st.container()) if wide_grid else \
        st.columns([1, 1], gap="large")
    with grid_col:
        st.markdown(f"**Logical view** of {code_span(drawn.label)}: what indexing sees"
                    + (", one 2-D slice per panel" if wide_grid else ""))
        st.plotly_chart(grid_figure(picture, label=plotly_text(drawn.label), show=show or "values",
                                    key="ti_grid"), key="ti_grid", config=PLOTLY_CONFIG,
                        width="content")
    with walk_col:
        st.markdown("**Memory walk**: reading the tensor row by row, which storage position "
                    "does each element come from? A straight line (steps of 1) is contiguous; "
                    "jumps mean the view hops through memory.")
        st.plotly_chart(walk_figure(picture, key="ti_walk"), key="ti_walk", config=PLOTLY_CONFIG)
    shares_x = storage_root(drawn.tensor) is storage_root(report.views[0].tensor)
    whose = ("x's own storage, shared by this view" if shares_x and drawn.step else
             "x's storage" if shares_x else
             "new storage made by a copy: the colours show where each element of x landed")
    st.markdown(f"**Storage** of {code_span(drawn.label)} ({whose}): the flat memory underneath, in "
                "address order; the row label is the position of its first cell. Grey cells "
                "are not read by this view.")
    st.plotly_chart(strip_figure(picture, label=plotly_text(drawn.label), show=show or "values",
                                 key="ti_strip"),
                    key="ti_strip", config=PLOTLY_CONFIG, width="content")
    if facts.numel and len(facts.stride):
        terms = " + ".join(f"i{d}·{s}" for d, s in enumerate(facts.stride))
        st.caption(f"Element `[i0, i1, ...]` of {code_span(drawn.label)} is read from storage position "
                   f"`{facts.storage_offset} + {terms}`. Each colour is one element of x, "
                   "the same colour in both pictures and in every step.")

failing = report.chain_failure.step_number if report.chain_failure else None
script = tensor_script(settings, materialized=report.materialized, failing_step=failing)
code_panel(script, filename="tensor_inspector.py", key="ti_code",
           caption="Running it prints, for x and each step, the same facts as the table above.")

st.subheader("More about tensors", divider="gray")
# Lazy tabs: only the open one's content runs (the dtype table and the NumPy bridge cost a
# good part of a rerun); switching tabs reruns the page.
broadcast_tab, dtype_tab, numpy_tab, check_tab = st.tabs(
    ["Broadcasting and matmul", "Dtypes", "NumPy bridge", "Check yourself"], key="ti_more",
    on_change="rerun")

with broadcast_tab:
    st.markdown("Two shapes in, the result shape (or PyTorch's error) out. Broadcasting lines the "
                "shapes up **from the right**; each pair of sizes must be equal, or one of them "
                "1 (stretched with stride 0, never copied), or missing.")
    st.selectbox("Shape presets", list(SHAPE_PRESETS), index=None, key="ti_shape_preset",
                 on_change=_broadcast_preset, placeholder="Pick an example from the lesson ...")
    a_col, op_col, b_col = st.columns([2, 1, 2], vertical_alignment="bottom")
    problems = []
    for column, param, key in ((a_col, "lhs", K_LHS), (b_col, "rhs", K_RHS)):
        if visible(param):
            column.text_input(f"shape of {'a' if param == 'lhs' else 'b'}", key=key)
            try:
                parsed = parse_shape(ss[key], max_rank=6)
                if any(size > 4096 for size in parsed):
                    raise ValueError("sizes up to 4096 here")
                ss[f"ti_{param}_valid"] = parsed
            except ValueError as exc:
                problems.append(f"{code_span(ss[key])}: {md(exc)}")
    if visible("combine"):
        op_col.segmented_control("op", ["broadcast", "matmul"], key=K_COMBINE, required=True,
                                 format_func=lambda c: "a + b" if c == "broadcast" else "a @ b")
    for problem in problems:
        st.warning(problem + " The last good shape is kept.", icon=":material/warning:")
    settings = _current(link)
    publish_link(LINK_SCHEMA, KEY, settings)
    combo = combine_shapes(settings.lhs, settings.rhs, settings.combine)
    if combo.result is not None:
        st.success(f"`{shape_text(combo.left)} {'@' if combo.combine == 'matmul' else '+'} "
                   f"{shape_text(combo.right)}` gives shape **{shape_text(combo.result)}**",
                   icon=":material/check_circle:")
    else:
        error_panel(RuntimeError(combo.error or "these shapes do not combine"), key="ti_combine_err")
    if combo.columns:
        st.plotly_chart(broadcast_figure(combo.left, combo.right, combo.combine, graph_scale(),
                                         key="ti_shapes"), key="ti_shapes", config=PLOTLY_CONFIG)
    if combo.expanded_strides is not None:
        left_strides, right_strides = combo.expanded_strides
        st.markdown(f"Broadcasting copies nothing: `a.expand{shape_text(combo.result)}` has "
                    f"strides `{left_strides}` and `b.expand{shape_text(combo.result)}` has "
                    f"`{right_strides}`; a stride of 0 reads the same element again and again.")
    st.caption(" · ".join(combo.notes) + ". Green: sizes that match; blue: a size-1 (or missing) "
               "dimension stretched with stride 0; orange: the matrix dimensions; red: a mismatch.")
    code_panel(f"import torch\n\na = torch.zeros({shape_text(combo.left)})\n"
               f"b = torch.zeros({shape_text(combo.right)})\n"
               f"print(({combo.expression}).shape)\n", filename="shapes.py", key="ti_shapes_code")

with dtype_tab:
    if dtype_tab.open:  # built only while it is shown
        chosen = dtype_info(settings.dtype)
        st.markdown(f"**{chosen.name}**: {chosen.kind}, {chosen.bits} bits ({chosen.itemsize} "
                    f"byte{'s' if chosen.itemsize > 1 else ''} per element). Used for "
                    f"{chosen.used_for}.")
        shape_bytes = torch.empty(settings.shape, dtype=DTYPES[settings.dtype], device="meta").nbytes
        bytes_col, facts_col = st.columns([1, 2.2], vertical_alignment="center")
        bytes_col.metric(f"x {shape_text(settings.shape)} takes", human_bytes(shape_bytes),
                         help="nbytes = numel x itemsize, from a meta tensor of this shape")
        facts_col.markdown(
            f"- **range**: {chosen.smallest} .. {chosen.largest}\n"
            f"- **resolution near 1** (`finfo.eps`; 1 for integers): {chosen.resolution}\n"
            f"- **0.1 is stored as**: `{chosen.one_tenth}`\n"
            f"- **bytes**: {math.prod(settings.shape):,} elements x {chosen.itemsize} = "
            f"{shape_bytes:,} bytes")
        if chosen.exponent_bits is not None and chosen.mantissa_bits is not None:
            st.plotly_chart(bits_figure(chosen.sign_bits or 0, chosen.exponent_bits,
                                        chosen.mantissa_bits, key="ti_bits"),
                            key="ti_bits", config=PLOTLY_CONFIG)
        table = pd.DataFrame([{
            "dtype": d.name, "bits": d.bits, "sign + exponent + mantissa": d.split,
            "min": d.smallest, "max": d.largest, "resolution": d.resolution, "0.1 stored as": d.one_tenth,
            f"x {shape_text(settings.shape)}": human_bytes(
                torch.empty(settings.shape, dtype=DTYPES[d.name], device="meta").nbytes),
            "used for": d.used_for.replace("`", "")} for d in dtype_table()])
        chosen_row = table["dtype"] == settings.dtype
        st.dataframe(table.style.apply(lambda row: ["background-color: #fde0c5" if chosen_row[row.name]
                                                    else "" for _ in row], axis=1),
                     hide_index=True, key="ti_dtype_table")

with numpy_tab:
    if numpy_tab.open:  # built only while it is shown
        st.markdown("On the CPU, `torch.from_numpy(arr)` and `t.numpy()` **share memory** with the "
                    "other side (same data pointer, so a write through one is seen by the other); "
                    "`torch.tensor(arr)` **copies**. Below, `arr[0, 0]` is overwritten after the "
                    "three tensors were made.")
        written = st.number_input("Write this into arr[0, 0]", min_value=-1000, max_value=1000,
                                  value=100, step=1, key="ti_bridge_write")
        result = bridge(settings.dtype, int(written))
        st.caption(f"`arr = np.arange(6, dtype=np.float32).reshape(2, 3)` lives at data pointer "
                   f"`{result.array_pointer}`.")
        st.table(pd.DataFrame([{"way": r.way, "same data pointer as its source": "yes" if
                                r.shares_memory else "no (a copy)", "data pointer": r.data_pointer,
                                "after the write": r.after_write} for r in result.rows]),
                 hide_index=True)
        if result.numpy_error:
            error_panel(ExplainedError(
                f"{settings.dtype} has no NumPy dtype", result.numpy_error,
                "NumPy has no bfloat16, so `t.numpy()` cannot share this memory. Convert first: "
                "`t.float().numpy()` makes a float32 copy that NumPy understands.",
                ("`t.float().numpy()`",), "TypeError"), key="ti_numpy_error")
        elif result.torch_strides is not None:
            st.markdown(f"Strides of the transposed `t` ({settings.dtype}): PyTorch says "
                        f"`{result.torch_strides}` (elements), NumPy says `{result.numpy_strides}` "
                        f"(bytes): the same layout, counted in different units.")
        code_panel(result.code, filename="numpy_bridge.py", key="ti_numpy_code")

with check_tab:
    def _t_stride() -> Revealed:
        x = torch.arange(24).reshape(4, 6)
        return Revealed(str(x.t().stride()), str(x.t().stride()),
                        "`t()` swaps the strides along with the sizes: no data moves.",
                        "x = torch.arange(24).reshape(4, 6)\nx.t().stride()")

    def _view_works() -> Revealed:
        x = torch.arange(24).reshape(4, 6)
        try:
            x.t().view(-1)
        except RuntimeError as exc:
            return Revealed("No: PyTorch raises an error", str(exc).split(".")[0],
                            "`x.t()` reads memory column by column (strides (1, 6)); one flat "
                            "stride cannot walk that order, and `view` never copies. `reshape` "
                            "copies when it must, so `x.t().reshape(-1)` works.",
                            "x = torch.arange(24).reshape(4, 6)\nx.t().view(-1)")
        return Revealed("Yes: it returns the 24 elements", "it worked", "", "x.t().view(-1)")

    def _bf16_bytes() -> Revealed:
        t = torch.empty(64, 128, dtype=torch.bfloat16, device="meta")
        return Revealed(human_bytes(t.nbytes), f"{t.nbytes} bytes",
                        f"{t.numel():,} elements x {t.element_size()} bytes each.",
                        "t = torch.empty(64, 128, dtype=torch.bfloat16)\nt.nbytes")

    def _permute_strides() -> Revealed:
        x = torch.empty(2, 3, 4, 5)
        strides = x.permute(0, 2, 3, 1).stride()
        return Revealed(str(strides), str(strides),
                        "permute reorders the strides exactly like the sizes: the channel "
                        "stride 20 moves to the end. No data moves, so the result is not "
                        "contiguous.", "x = torch.empty(2, 3, 4, 5)\nx.permute(0, 2, 3, 1).stride()")

    knowledge_check("ti_t_stride", "`x = torch.arange(24).reshape(4, 6)`. What is "
                    "`x.t().stride()`?", ["(6, 1)", "(1, 6)", "(4, 1)", "(1, 4)"], _t_stride)
    knowledge_check("ti_view", "Same `x`. Does `x.t().view(-1)` work?",
                    ["Yes: it returns the 24 elements", "Yes, but it makes a copy",
                     "No: PyTorch raises an error"], _view_works)
    knowledge_check("ti_bf16", "How many bytes does a `(64, 128)` bfloat16 tensor take?",
                    ["8 KiB", "16 KiB", "32 KiB", "64 KiB"], _bf16_bytes)
    knowledge_check("ti_permute", "`x` has shape `(2, 3, 4, 5)` and strides `(60, 20, 5, 1)`. "
                    "What are the strides of `x.permute(0, 2, 3, 1)`?",
                    ["(60, 20, 5, 1)", "(60, 5, 1, 20)", "(1, 5, 20, 60)", "(20, 5, 1, 60)"],
                    _permute_strides)

share_panel(schema=LINK_SCHEMA, settings=settings, url_path="tensor_inspector", script=script,
            title="Tensor inspector", key="ti_share")
