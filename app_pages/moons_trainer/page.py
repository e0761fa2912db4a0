"""Moons trainer: a real PyTorch training loop, live, with honest metrics and safe checkpoints.

Settings (the table in workbench/moons_trainer/settings.py, drawn by SettingsForm) -> the learner's run
(kept across pages; a change that discards a trained run says so) -> the live view, results and
the tabs below.
"""
import streamlit as st

from app_pages.moons_trainer.compare_panel import (
    comparison_caption,
    comparison_code,
    open_comparison_link,
    publish_comparison,
)
from app_pages.moons_trainer.controls import notice_panel, settings_panel
from app_pages.moons_trainer.drawing import board, drawing_help, drawing_panel, take_drawn_points
from app_pages.moons_trainer.gradients_panel import gradients_panel
from app_pages.moons_trainer.live import PAUSE_KEY, keep_playing, live_view, stop_training
from app_pages.moons_trainer.losses_panel import losses_and_hooks
from app_pages.moons_trainer.model_panel import (
    activation_panel,
    device_mismatch_panel,
    model_summary,
)
from app_pages.moons_trainer.pitfalls import pitfall_lab
from app_pages.moons_trainer.results import script_caption
from app_pages.moons_trainer.state import KEY, current_session, state
from app_pages.moons_trainer.sweep_cell import cell_notice
from app_pages.moons_trainer.uploads import checkpoint_panel, process_upload
from components.classroom import share_panel
from components.code_panel import code_panel
from components.device import learner_device
from components.figures import presenting
from components.stage import page_header
from components.keyboard import skip_to_controls
from components.knowledge_check import knowledge_check
from components.lesson_link import fixed_settings_note, link_settings, publish_link
from components.settings_form import SettingsForm
from workbench.moons_trainer.checks import FORWARD_HOOK, ZERO_GRAD
from workbench.moons_trainer.codegen import moons_script
from workbench.moons_trainer.settings import TABLE

fixed_slot = page_header("Moons trainer",
            "A real `nn.Module` trained with `BCEWithLogitsLoss` (`MSELoss` on the regression "
            "datasets), a seeded `DataLoader` and a real optimizer, live. Every number is computed "
            "by PyTorch while you watch.", figure_first=True)
skip_to_controls("mt_play", PAUSE_KEY, "mt_step", "mt_reset")   # the playback row, live.py

# Settings: from the link, the learner's own (back from another page), or the widgets.
linked, fresh = link_settings(TABLE, KEY)
compare_notes = st.container()      # what a comparison link (`vs=`) could not use
form = SettingsForm(TABLE, linked, fresh, prefix="mt_")
me = state()
take_drawn_points(me, form)     # points drawn on the live view since the last run (drawing.py)
device = learner_device()
if presenting():
    # The projected first screen is the live view's: the settings (the same widgets, the same
    # keys) follow below it, side by side, where the teacher scrolls to change them.
    main_column = st.container(key="moons_trainer_stage")
    settings_area = st.container(key="moons_trainer_settings")
else:
    # The live view leads (a phone stacks the columns in this order); the settings sit aside.
    main_column, settings_area = st.columns([3.2, 1], gap="medium")
with settings_area:
    if presenting():
        st.subheader("Settings", anchor=False)
    settings = settings_panel(form, me, side_by_side=presenting())
with compare_notes:
    open_comparison_link(me, settings, device, stop_training)
publish_link(TABLE, KEY, settings)
fixed_settings_note(fixed_slot, TABLE, settings)

# Drawn points too few to split: the drawing alone, with no run to train (drawing.py). The page
# ends by its structure, not with st.stop(): that discards every rerun queued while the page ran
# (Streamlit's request_stop), and with it the points a learner drew meanwhile.
shortfall = board(me, settings)
if shortfall is not None:
    if me.running:
        stop_training(me)       # the view shows no run now; the run stays, with its notice
    with main_column:
        notice_panel(me, form)
        with st.container(key="moons_trainer_main"):
            live_view(me)
        drawing_help(settings)          # under the plane: Draw must not move it (issue 43)
        drawing_panel(settings, shortfall)
    share_panel(schema=TABLE, settings=settings, url_path="moons_trainer",
                script=moons_script(settings, str(device)), title="Moons trainer", key="mt_share")
else:
    # Compute: the learner's run for these settings (continued, or new), an upload; the run's
    # training itself goes on in the scheduler (live.py), not in this script.
    session = current_session(me, settings, device)
    publish_comparison(me, settings)
    process_upload(session, me)
    keep_playing(me, session)
    script = comparison_code(me, session, str(device)) or moons_script(settings, str(device), session.changes)

    # Draw.
    with main_column:
        cell_notice(settings)       # the class sweep's cell of this learner, if one runs
        notice_panel(me, form)
        with st.container(key="moons_trainer_main"):
            live_view(me)           # the playback row, the live view and the results below it
        if settings.drawn:
            drawing_help(settings)  # under the plane: Draw must not move it (issue 43)
            drawing_panel(settings, None)

    st.divider()
    # Lazy tabs: only the open one's heavy content runs; switching tabs reruns the page. The
    # uploader and the knowledge check are always drawn, so their state survives a tab switch.
    tabs = st.tabs(["Checkpoints", "Model", "Losses & hooks", "Weights & gradients", "Code", "Pitfall lab",
                   "Check yourself"],
                   key="mt_tabs", on_change="rerun")
    with tabs[0]:
        checkpoint_panel(session, me)
    if tabs[1].open:
        with tabs[1]:
            left, right = st.columns([3, 2])
            with left:
                model_summary(session)
            with right:
                activation_panel(settings.act)
                with st.expander("Device mismatch: PyTorch's own error", icon=":material/memory:"):
                    device_mismatch_panel(device, session.model)
    if tabs[2].open:
        with tabs[2]:
            losses_and_hooks(session)
    if tabs[3].open:
        with tabs[3]:
            gradients_panel(session)
    if tabs[4].open:
        with tabs[4]:
            code_panel(script, filename="moons_trainer.py", key="mt_code", expanded=True,
                       caption=comparison_caption(me) or script_caption(session))
    if tabs[5].open:
        with tabs[5]:
            pitfall_lab(me, device)
    with tabs[6]:
        knowledge_check(ZERO_GRAD)
        knowledge_check(FORWARD_HOOK)

    share_panel(schema=TABLE, settings=settings, url_path="moons_trainer", script=script,
                title="Moons trainer", key="mt_share")
