"""Section 3: what PyTorch reports for x and each step, and the pictures of the step drawn.

The step drawn (and how cells are labelled) is learner state: it survives a visit to another
page, and goes back to the last step only when the chain changes.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app_pages.tensor_inspector.controls import apply_changes
from app_pages.tensor_inspector.light_figures import X_TITLE, Y_TITLE, walk_svg
from app_pages.tensor_inspector.stage import STAGE_PICTURE, Stage, stage_pictures
from app_pages.tensor_inspector.tables import grid_html, grid_label, strip_html, strip_label
from components.error_panel import error_panel
from components.accessible_chart import data_table
from components.plain_text import code_span, md
from components.settings_form import SettingsForm
from components.state import learner_state
from workbench.common.formatting import human_bytes
from workbench.tensor_inspector.factory import shape_text
from workbench.tensor_inspector.facts import StepView, storage_root
from workbench.tensor_inspector.failures import Failure
from workbench.tensor_inspector.layout import LayoutPicture, layout_picture
from workbench.tensor_inspector.report import MAX_TOTAL_VALUES, MAX_VALUES, Inspection

ss = st.session_state
EMPTY_FILLS = ("empty", "empty_like")
CHAIN_ERROR_KEY = "ti_chain_error"


@dataclass
class DrawnStep:
    """Which step the pictures show (its code, e.g. "x.t()"), for which chain."""

    label: str = "x"
    ops: str = ""
    cell_labels: str = "values"


def _where(failure: Failure, key: str) -> str:
    if failure.step_number is not None:
        return f"Step {failure.step_number}: {code_span(failure.label)}"
    # A chain that cannot be read has no step number; only building x fails outside the chain.
    return "Reading the op chain" if key == CHAIN_ERROR_KEY else "Building x"


def _fix_buttons(failure: Failure, key: str, form: SettingsForm, report: Inspection, *,
                 stacked: bool = False) -> None:
    """One button per fix, side by side (`stacked`: one under the other, in a narrow column
    where side by side would cut their labels)."""
    slots = [st.container() for _ in failure.fixes] if stacked else st.columns(len(failure.fixes))
    for number, (column, fix) in enumerate(zip(slots, failure.fixes, strict=True)):
        column.button(md(fix.label), key=f"{key}_fix_{number}", on_click=apply_changes,
                      args=(form, fix.changes), icon=":material/build:",
                      width="stretch")


def failure_line(failure: Failure, key: str, form: SettingsForm, report: Inspection, *,
                 folded_message: bool) -> None:
    """What failed in one line, and the one-click fixes under it: where the learner typed
    (under the chain) or on presenter mode's first screen. With `folded_message` PyTorch's
    message and its explanation are folded under the line; otherwise section 3 shows them."""
    line = f"**{_where(failure, key)} failed**: {failure.error.title}"
    if folded_message:
        # One row: the line, and PyTorch's message one click away (a popover, not an expander
        # that would push the stage's pictures down when opened).
        # On the stage every pixel above the grid is taken from the grid: a slimmer alert.
        st.html(f"<style>.st-key-{key}_line [data-testid=stAlertContainer] "
                "{ padding: 0.4rem 0.9rem; }</style>")
        with st.container(horizontal=True, vertical_alignment="center", key=f"{key}_line"):
            st.error(line, icon=":material/error:")
            with st.popover("PyTorch's message", icon=":material/help:"):
                error_panel(failure.error, key=key)
    else:
        st.error(line + " (PyTorch's message and why: section 3 below)", icon=":material/error:")
    if failure.fixes:
        _fix_buttons(failure, key, form, report, stacked=not folded_message)


def failure_panel(failure: Failure, key: str, form: SettingsForm, report: Inspection, *,
                  fixes: bool = True) -> None:
    """What failed, with PyTorch's message explained and (with `fixes`) the one-click fixes."""
    st.markdown(f"**{_where(failure, key)} failed.**")
    error_panel(failure.error, key=key)
    if fixes and failure.fixes:
        st.markdown("**One-click fixes**")
        _fix_buttons(failure, key, form, report)
    elif failure.fixes:
        st.caption("The one-click fixes are under the op chain, above.")


def facts_table(report: Inspection) -> pd.DataFrame:
    rows = []
    for number, view in enumerate(report.views):
        f = view.facts
        rows.append({"step": str(number) if number else "x", "code": md(view.label),
                     "shape": shape_text(f.shape), "device": f.device,
                     "stride": shape_text(f.stride),
                     "offset": str(f.storage_offset), "contiguous": "yes" if f.is_contiguous else "no",
                     "numel": f"{f.numel:,}", "nbytes": human_bytes(f.nbytes),
                     "storage": f"{f.storage_elements:,} el., {human_bytes(f.storage_bytes)}",
                     "memory": f.memory if number else "new"})
    failure = report.chain_failure
    if failure is not None and failure.step_number is not None:
        rows.append({"step": str(failure.step_number), "code": md(failure.label), "shape": "error",
                     **dict.fromkeys(("device", "stride", "offset", "contiguous", "numel",
                                      "nbytes", "storage", "memory"), "")})
    return pd.DataFrame(rows)


def facts_section(report: Inspection, form: SettingsForm, *,
                  stage_slot: DeltaGenerator | None = None,
                  chain_slot: DeltaGenerator | None = None) -> None:
    """The table of facts, one row per step, with a note on what each step did to memory.

    A failure is said in one line with its one-click fixes where the learner looks: on
    presenter mode's first screen (`stage_slot`: the error is the lesson, its message folded
    there) or, for a step of the chain, under the chain input (`chain_slot`), with PyTorch's
    message explained in this section."""
    settings = report.settings
    st.subheader("3 · What PyTorch reports", divider="gray")
    if report.build_failure is not None:
        if stage_slot is not None:
            with stage_slot:
                failure_line(report.build_failure, "ti_build_error", form, report,
                             folded_message=True)
        else:
            failure_panel(report.build_failure, "ti_build_error", form, report)
    if not report.views:       # x cannot exist at all: the failure above says why and offers a fix
        return
    if report.build_failure is not None:
        st.caption("x could not be built with this fill, so the facts below come from the `meta` "
                   "device (shapes and strides without values).")
    elif not report.materialized:
        st.info(f"The largest step holds {report.largest_numel:,} elements "
                f"({human_bytes(report.largest_numel * report.views[0].facts.itemsize)} of "
                f"{settings.dtype}) and all steps together {report.total_numel:,}: above this "
                f"page's cap of {MAX_VALUES:,} per step and {MAX_TOTAL_VALUES:,} in all. The facts "
                "come from the `meta` device, which computes shapes, strides and errors without "
                "memory; values are not made, and colours follow storage positions.",
                icon=":material/memory:")
    x_facts = report.views[0].facts
    if settings.fill in EMPTY_FILLS and report.materialized:
        st.caption("`torch.empty` reserves memory without writing to it: the values are whatever "
                   "bytes were there before, so they can change from run to run.")
    plural = "s" if x_facts.itemsize > 1 else ""
    st.markdown(f"x is `{x_facts.dtype}` on device `{x_facts.device}`: **{x_facts.itemsize} "
                f"byte{plural} per element** (itemsize), so nbytes = numel x {x_facts.itemsize}. "
                "*device* is where a tensor's memory lives (`tensor.device`); a layout op never "
                "moves it. *memory* says whether a step **shares** its input's storage (view) or "
                "owns **new memory** (a copy).")
    st.table(facts_table(report), hide_index=True)
    notes = [f"**{number}** · {code_span(view.step.text if view.step else '')}: {view.note}"
             for number, view in enumerate(report.views) if view.note]
    if notes:
        st.markdown("\n".join(f"- {note}" for note in notes))
    failure = report.chain_failure
    if failure is not None and stage_slot is not None:
        with stage_slot:
            failure_line(failure, CHAIN_ERROR_KEY, form, report, folded_message=True)
    elif failure is not None:
        if chain_slot is not None:
            with chain_slot:
                failure_line(failure, CHAIN_ERROR_KEY, form, report, folded_message=False)
        failure_panel(failure, CHAIN_ERROR_KEY, form, report, fixes=chain_slot is None)


def _pick_step(report: Inspection, pick_col: DeltaGenerator, show_col: DeltaGenerator,
               *, label: str = "Draw", alone_note: str = "") -> StepView:
    """The learner's step: kept across reruns and page visits; the last one for a new chain.
    The picker and the cell labels go into `pick_col` and `show_col`."""
    state = learner_state("tensor_inspector", DrawnStep)
    labels = [view.label for view in report.views]
    if state.ops != report.settings.ops or state.label not in labels:
        state.label, state.ops = labels[-1], report.settings.ops
    # The widgets show the state (Streamlit drops their own while the learner is on another
    # page); only the learner's own clicks change it, in the callbacks.
    ss["ti_draw"], ss["ti_cell_labels"] = state.label, state.cell_labels

    def picked() -> None:
        state.label = ss["ti_draw"]

    def labelled() -> None:
        state.cell_labels = ss["ti_cell_labels"] or "values"

    if len(labels) > 1:
        pick_col.radio(label, labels, key="ti_draw", horizontal=True, format_func=md,
                       on_change=picked)
    elif alone_note:
        pick_col.markdown(alone_note)
    show_col.segmented_control("Label cells with", ["values", "positions"], key="ti_cell_labels",
                               required=True, on_change=labelled,
                               help="positions: where each element lives in storage")
    return report.views[labels.index(state.label)]


def _metrics(drawn: StepView) -> None:
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
        third_row = st.columns(3)
        third_row[0].metric("dtype", facts.dtype, help="the element type: tensor.dtype")
        third_row[1].metric(
            "device", facts.device,
            help="where the tensor lives, as tensor.device reports it: cpu, cuda:0, mps:0; "
                 "meta: the inspector computed these facts without allocating anything")


def _whose_storage(drawn: StepView, report: Inspection, *, short: bool = False) -> str:
    """Whose memory the strip shows; `short` fits one line of the presenter stage."""
    shares_x = storage_root(drawn.tensor) is storage_root(report.views[0].tensor)
    if shares_x:
        return "x's own storage, shared by this view" if drawn.step else "x's storage"
    return ("new storage made by a copy: colours show where x's elements landed" if short else
            "new storage made by a copy: the colours show where each element of x landed")


def _walk(picture: LayoutPicture, label: str) -> None:
    st.markdown("**Memory walk**: reading the tensor row by row, which storage position "
                "does each element come from? A straight line (steps of 1) is "
                "contiguous; jumps mean the view hops through memory.")
    described = f"Memory walk of {label}: the storage position of each element, row by row"
    with st.container(key="ti_walk"):
        st.image(walk_svg(picture.walk, label=described), alt=described, width="stretch")
    data_table(lambda: pd.DataFrame({X_TITLE: range(len(picture.walk)), Y_TITLE: picture.walk}),
               key="ti_walk_table", label=described)


def pictures_section(report: Inspection, stage: Stage | None = None) -> None:
    """One step's metrics, its logical grid, its memory walk and the storage underneath. With
    a presenter `stage`, the step picker, the grid and the strip go to the first screen and
    the metrics and the memory walk follow here."""
    if not report.views:
        return
    with st.container(key="tensor_inspector_main"):
        if stage is None:
            pick_col, show_col = st.columns([3, 1.2])
            drawn = _pick_step(report, pick_col, show_col)
        else:
            drawn = _pick_step(report, stage.picker, stage.labels, label="Step drawn",
                               alone_note="**Step drawn**: x itself; add ops to the chain to "
                                          "step through them.")
        show = learner_state("tensor_inspector", DrawnStep).cell_labels
        facts = drawn.facts
        picture = layout_picture(drawn, colour_max=report.views[0].facts.numel - 1,
                                 **(STAGE_PICTURE if stage is not None else {}))
        if stage is not None:
            stage_pictures(stage, drawn, picture, show=show,
                           whose=_whose_storage(drawn, report, short=True),
                           failure_shown=report.chain_failure is not None
                           or report.build_failure is not None)
            _metrics(drawn)
            _walk(picture, drawn.label)
            return
        _metrics(drawn)
        if picture.truncated:
            st.caption(":material/crop: **Drawn in part**: " + "; ".join(picture.truncated)
                       + ". The facts above are for the whole tensor; hover a cell for its index.")
        wide_grid = picture.rank > 2
        grid_col, walk_col = (st.container(), st.container()) if wide_grid else \
            st.columns([1, 1], gap="large")
        with grid_col:
            st.markdown(f"**Logical view** of {code_span(drawn.label)}: what indexing sees"
                        + (", one 2-D slice per panel" if wide_grid else ""))
            # The table is the grid's text alternative: its caption names it, its headers
            # and each cell's title say what the picture shows.
            with st.container(key="ti_grid"):
                st.html(grid_html(picture, label=drawn.label, show=show,
                                  caption=grid_label(drawn.label, facts.shape)))
        with walk_col:
            _walk(picture, drawn.label)
        whose = _whose_storage(drawn, report)
        st.markdown(f"**Storage** of {code_span(drawn.label)} ({whose}): the flat memory "
                    "underneath, in address order; the row label is the position of its first "
                    "cell. Grey cells are not read by this view.")
        with st.container(key="ti_strip"):
            st.html(strip_html(picture, label=drawn.label, show=show,
                               caption=strip_label(drawn.label, whose)))
        if facts.numel and len(facts.stride):
            terms = " + ".join(f"i{d}·{s}" for d, s in enumerate(facts.stride))
            st.caption(f"Element `[i0, i1, ...]` of {code_span(drawn.label)} is read from storage "
                       f"position `{facts.storage_offset} + {terms}`. Each colour is one element "
                       "of x, the same colour in both pictures and in every step.")
