"""The stepper: the loader's batches one by one (Next/Back, or the slider), or why there are none.

Stepping only moves `page.position`; the batches themselves were recorded once, by the run.
The stage (the index grid, Back/Next and the current batch's indices) fills the first screen
and the rest (the grid's story, the slider, the batch's tensors and figures) goes to `details`,
which the page places below the settings.
"""
from __future__ import annotations

import dataclasses

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app_pages.batch_iterator.dataset_picture import dataset_picture
from app_pages.batch_iterator.grid import BATCH_COLOURS, MAX_CELL_TEXT, batch_list_html, grid_html
from app_pages.batch_iterator.listings import tensor_listing
from app_pages.batch_iterator.state import BatchPageState, Moons
from components.code_block import code_block
from components.error_panel import error_panel
from components.figures import graph_scale, presenting
from components.keyboard import with_shortcut
from components.settings_form import SettingsForm
from components.stage import fit_to_viewport
from workbench.batch_iterator.codegen import record_line
from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.runs import BatchRecord, LoaderRun
from workbench.batch_iterator.settings import BatchSettings
from workbench.batch_iterator.story import empty_loader_words, grid_story, short_list

GRID_STAGE_KEY = "bi_index_grid"        # the key figure (workbench/tools.py)
# What sits above and below the grid on a projected first screen: the title row (about 90 px
# at 1.4x type) and the Back/Next row beside the batch's position and indices (two lines, or
# three when the teacher opens the sidebar: about 110 px), with the gaps between them.
GRID_LEAVE_PX = 250
# A projected grid row taller than this only stretches the same cells.
GRID_ROW_MAX_PX = 150
# The stage shows this many of the batch's indices: one line beside Back/Next at 1280 px,
# three-digit indices included. The full list is in the batch's panel below.
STAGE_INDICES = 10


def _fix_buttons(form: SettingsForm, fixes: list[tuple[str, BatchSettings]]) -> None:
    for position, (label, fixed) in enumerate(fixes):
        st.button(label, key=f"bi_fix_{position}", on_click=form.seed, args=(fixed,),
                  icon=":material/build:")


def _error_fixes(page: BatchPageState, s: BatchSettings) -> list[tuple[str, BatchSettings]]:
    fixes = []
    if s.shuffle and (s.sampler != "default" or s.batch_sampler == "bucket"):
        fixes.append(("Turn shuffle off", dataclasses.replace(s, shuffle=False)))
    if s.batch_sampler == "bucket" and s.sampler != "default":
        fixes.append(("Use no sampler", dataclasses.replace(s, sampler="default")))
    if page.error is not None and "stack expects" in page.error.message:
        fixes.append(("Use the padding collate_fn", dataclasses.replace(s, collate="pad")))
    return fixes


def _grid(run: LoaderRun, current: BatchRecord | None) -> None:
    """The index grid (grid.py); in presenter mode as tall as the first screen allows."""
    marked = "framed" if run.dataset_size <= MAX_CELL_TEXT else "filled with the text colour"
    caption = ("Which batch each dataset index landed in, epoch by epoch"
               + (f"; {marked}: the batch below." if current is not None else "."))
    with st.container(key=GRID_STAGE_KEY):
        st.html(grid_html(run, current, caption))
    rows = run.settings.epochs + 1
    fit_to_viewport(GRID_STAGE_KEY, leave_px=GRID_LEAVE_PX, min_px=90 + 40 * rows,
                    max_px=120 + GRID_ROW_MAX_PX * rows)


def draw(page: BatchPageState, form: SettingsForm, s: BatchSettings, moons: Moons | None,
         details: DeltaGenerator | None = None) -> None:
    """The stage: PyTorch's error, the current batch, or an empty loader; the rest of the
    current batch goes to `details` (the same place when it is None)."""
    if page.notice:
        if presenting():
            # A notice above the grid would push Next below the projected first screen.
            st.toast(page.notice, icon=":material/restart_alt:")
        else:
            st.info(page.notice, icon=":material/restart_alt:")
        page.notice = ""
    run, current = page.run, page.current
    if page.error is not None:
        error_panel(page.error, key="bi_loader_error")
        _fix_buttons(form, _error_fixes(page, s))
    elif run is not None and current is not None:
        _current_batch(page, s, moons, details)
    elif run is not None and run.truncated:
        # Stopped by its bound before the first batch (worker processes are slow to start on a
        # busy server): not a loader without batches.
        st.warning(f"The run stopped before its first batch because {run.stopped}, to keep the "
                   "server responsive for everyone. Worker processes take a moment to start "
                   "when the server is busy: run it again.", icon=":material/timer:")
        st.button("Run the DataLoader again", key="bi_run_again", icon=":material/refresh:",
                  on_click=page.run_again)
    elif run is not None:
        _grid(run, None)
        st.warning("This DataLoader yields **no batches**: `len(loader)` is 0. "
                   + empty_loader_words(run.summaries()[0].draws, s.batch_size, s.drop_last),
                   icon=":material/block:")
        _fix_buttons(form, [("Turn drop_last off", dataclasses.replace(s, drop_last=False))])


def _step(page: BatchPageState, delta: int) -> None:
    page.step(delta)
    st.session_state["bi_jump"] = page.position + 1


STEP_KEYS = ("bi_prev", "bi_next")


def _jump(page: BatchPageState) -> None:
    """The slider moved, unless Back or Next was pressed in the same rerun: then its value is the
    one the browser drew before a press faster than the slider's redraw (N, N on the keyboard),
    and taking it would make the second press undo the first."""
    if any(st.session_state.get(key) for key in STEP_KEYS):
        return
    page.position = st.session_state["bi_jump"] - 1


def _step_buttons(page: BatchPageState, last: int, back: DeltaGenerator,
                  forward: DeltaGenerator, width: str = "stretch") -> None:
    back.button("Back", key="bi_prev", on_click=_step, args=(page, -1),
                disabled=page.position == 0, icon=":material/skip_previous:",
                width=width, shortcut="B", help=with_shortcut("The previous batch", "B"))
    forward.button("Next", key="bi_next", on_click=_step, args=(page, 1),
                   disabled=page.position == last, icon=":material/skip_next:",
                   width=width, type="primary", shortcut="N",
                   help=with_shortcut("`next(iterator)`: the next batch", "N"))


def _jump_slider(page: BatchPageState, count: int) -> None:
    if count > 1:
        st.session_state["bi_jump"] = page.position + 1
        st.slider("Jump to batch (in the order the loader yields them)", 1, count,
                  key="bi_jump", on_change=_jump, args=(page,))


def _batch_list(run: LoaderRun) -> None:
    if run.dataset_size > MAX_CELL_TEXT:
        st.html(batch_list_html(run))


def _current_batch(page: BatchPageState, s: BatchSettings, moons: Moons | None,
                   details: DeltaGenerator | None) -> None:
    run, current = page.run, page.current
    assert run is not None and current is not None
    records = run.records
    summary = run.summaries()[current.epoch]
    _grid(run, current)
    story = " ".join(grid_story(run)) + (
        " Cell numbers are batch numbers." if run.dataset_size <= MAX_CELL_TEXT else
        f" Each colour is a batch (they repeat every {len(BATCH_COLOURS)}); every batch's "
        "indices are listed as text under this.")
    # One row: the buttons as wide as their labels (columns would cut "Next" to "N…" with
    # the sidebar open), the batch's position and indices in the rest.
    with st.container(horizontal=True, vertical_alignment="center", gap="medium",
                      key="bi_stage_row"):
        _step_buttons(page, len(records) - 1, st, st, width="content")
        with st.container(key="bi_stage_indices"):
            st.markdown(f"**Epoch {current.epoch}, batch {current.number}** of "
                        f"{summary.batches} · {page.position + 1} of {len(records)} in the "
                        f"run  \nSample indices ({current.size}): "
                        f"`{short_list(current.indices, STAGE_INDICES)}`")
    with details if details is not None else st.container():
        st.caption(story)
        _batch_list(run)
        _jump_slider(page, len(records))
        _batch_details(page, s, moons)


def _batch_details(page: BatchPageState, s: BatchSettings, moons: Moons | None) -> None:
    """The current batch's indices, tensors and place in the dataset, and the class counts."""
    run, current = page.run, page.current
    assert run is not None and current is not None
    built_by = ("the main process (`get_worker_info()` is None)" if current.worker < 0
                else f"worker process {current.worker} (`get_worker_info().id`)")
    counts = current.class_counts()
    with st.container(border=True, key="bi_current_batch"):
        st.markdown(f"Sample indices: `{list(current.indices)}`  \n"
                    f"Size {current.size} · class 0: {counts[0]}, class 1: {counts[1]} · "
                    f"built by {built_by}")
        code_block(record_line(current.epoch, current.number, current.indices, current.worker),
                language="text")
        # Side by side in both modes: in presenter mode the details span the page's width.
        left, right = st.columns([1.25, 1])
        with left:
            st.markdown("**The batch's tensors**")
            code_block(tensor_listing(current), language="python")
        with right:
            features = make_dataset(s, moons).features if s.dataset != "sequences" else None
            st.markdown(dataset_picture(run, features, current, scale=graph_scale()),
                        unsafe_allow_html=True)
    if run.truncated:
        st.warning(f"The run stopped early because {run.stopped}, to keep the server "
                   "responsive for everyone; the batches shown are the ones it made.",
                   icon=":material/timer:")
    for note in run.notes:
        st.info(f"PyTorch warned: {note}", icon=":material/info:")
