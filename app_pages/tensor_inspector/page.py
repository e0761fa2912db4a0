"""Tensor inspector: shape, dtype, strides and storage of a tensor, and what each op does to them.

Settings (widgets drawn from workbench/tensor_inspector/settings.py TABLE) ->
workbench.tensor_inspector.report.inspect and broadcast.combine_shapes -> pictures and tables.
The URL always holds the lesson link of what is on screen (shape, dtype, ops, ...; see
docs/lesson-links.md), written once per run.

x and its op chain, with everything they change, are one fragment (`chain_view`): Append, Undo,
a typed chain, the step picker and the one-click fixes rerun only that, not the title and the
tabs below it (the broadcasting chart, the dtypes, the checks), which the page run draws once.
"""
from __future__ import annotations

import streamlit as st

from app_pages.tensor_inspector import broadcasting, controls, inspector
from app_pages.tensor_inspector.autocast import autocast_panel
from app_pages.tensor_inspector.dtypes import dtype_panel
from app_pages.tensor_inspector.numpy_bridge import numpy_panel
from app_pages.tensor_inspector.stage import stage_slots
from components.classroom import share_panel
from components.code_panel import code_panel
from components.device import learner_device
from components.guard import run_guarded
from components.stage import page_header
from components.keyboard import skip_to_controls
from components.knowledge_check import knowledge_check
from components.lesson_link import fixed_settings_note, link_settings, publish_link
from components.settings_form import SettingsForm
from components.state import fragment_rerun
from workbench.tensor_inspector.broadcast import combine_shapes
from workbench.tensor_inspector.checks import PAGE_CHECKS
from workbench.tensor_inspector.codegen import tensor_script
from workbench.tensor_inspector.report import inspect
from workbench.tensor_inspector.settings import TABLE, TensorSettings

KEY = "tensor_inspector"
# What the tabs were last drawn from (`tabs_inputs`), kept by the page run for the fragment's.
TABS_DRAWN_FOR = "ti_tabs_drawn_for"

# --- settings: the link, and the widgets the page run draws (the fragment draws the rest) -----

linked, fresh = link_settings(TABLE, KEY)
form = SettingsForm(TABLE, linked, fresh, prefix="ti_")

fixed_slot = page_header("Tensor inspector",
    "A tensor is a **view over flat memory**: `shape` says how many indices each dimension has, "
    "`stride` how many storage elements one step along each dimension skips, and the "
    "**storage offset** where element `[0, 0, ...]` lives. Build a tensor, apply ops, and watch "
    "what PyTorch does to memory. Every number here comes from PyTorch.", figure_first=True
)
# The skip link goes to the op chain (the builder's Op where a link fixed the chain's text).
skip_to_controls(form.key("ops"), "ti_add_method")
chain_slot = st.container()        # chain_view draws here, once the tabs' settings are read

st.subheader("More about tensors", divider="gray")
# Lazy tabs: only the open one's content runs (the dtype table and the NumPy bridge cost a
# good part of a rerun); switching tabs reruns the page.
broadcast_tab, dtype_tab, numpy_tab, check_tab = st.tabs(
    ["Broadcasting and matmul", "Dtypes", "NumPy bridge", "Check yourself"], key="ti_more",
    on_change="rerun")
with broadcast_tab:
    shape_preset_slot = broadcasting.controls(form)


def tabs_inputs(settings: TensorSettings) -> tuple:
    """What the tabs draw from: the two shapes combined, and x's dtype, shape and seed while
    the dtypes tab (its table, the autocast panel) or the NumPy bridge is open."""
    open_about_x = dtype_tab.open or numpy_tab.open
    return (settings.lhs, settings.rhs, settings.combine,
            *((settings.dtype, settings.shape, settings.seed) if open_about_x else ()))


def chain_view() -> None:
    """Build x, apply ops, what PyTorch reports and the step's pictures, the code and the share
    panel: settings -> compute -> draw, for what the chain changes."""
    form.reread()          # a fragment's rerun: the tabs' widgets are not drawn again
    # The chain, the step picker and the step's pictures come first (stage.py), on a laptop, a
    # phone and a projector alike.
    stage = stage_slots()
    with stage.chain:
        controls.chain_text(form)
    preset_slot = st.container()
    build_col, chain_col = st.columns([1, 1.25], gap="large")
    with build_col:
        controls.build_x(form)
    with chain_col:
        chain_problem_slot = controls.op_chain(form, typed_on_stage=True)
    settings = form.settings()
    if fragment_rerun() and tabs_inputs(settings) != st.session_state.get(TABS_DRAWN_FOR):
        st.rerun(scope="app")      # x changed under an open tab: the whole page shows it
    publish_link(TABLE, KEY, settings)

    report = inspect(settings, learner_device())
    failing = report.chain_failure.step_number if report.chain_failure else None
    script = tensor_script(settings, materialized=report.materialized, failing_step=failing,
                           device=str(learner_device()))

    with preset_slot:
        controls.preset_picker(form, settings)
    inspector.facts_section(report, form, stage_slot=stage.failure,
                            chain_slot=chain_problem_slot)
    inspector.pictures_section(report, stage)
    code_panel(script, filename="tensor_inspector.py", key="ti_code",
               caption="Running it prints, for x and each step, the same facts as the table above.")
    share_panel(schema=TABLE, settings=settings, url_path="tensor_inspector", script=script,
                title="Tensor inspector", key="ti_share")


@st.fragment
def chain_fragment() -> None:
    # A fragment's own reruns do not pass through the router's guard.
    run_guarded(chain_view, "the tensor inspector's chain")


with chain_slot:
    chain_fragment()
settings = form.settings()
fixed_settings_note(fixed_slot, TABLE, settings)

# --- compute and draw the tabs: what the chain does not change ------------------------------------

combo = combine_shapes(settings.lhs, settings.rhs, settings.combine)
with shape_preset_slot:
    broadcasting.preset_picker(form)
with broadcast_tab:
    broadcasting.result(combo)
with dtype_tab:
    if dtype_tab.open:  # built only while it is shown
        dtype_panel(settings)
        autocast_panel(settings)
with numpy_tab:
    if numpy_tab.open:
        numpy_panel(settings, learner_device())
with check_tab:
    for check in PAGE_CHECKS:
        knowledge_check(check)
st.session_state[TABS_DRAWN_FOR] = tabs_inputs(settings)
