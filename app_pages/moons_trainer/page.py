"""Moons trainer: a real PyTorch training loop, live, with honest metrics and safe checkpoints."""
import dataclasses

import streamlit as st

from components.code_panel import code_panel
from components.device import learner_device
from components.figures import PLOTLY_CONFIG, presenting, prose
from components.guard import run_guarded
from components.knowledge_check import knowledge_check
from components.classroom import share_panel
from components.lesson_link import link_settings, publish_link
from app_pages.moons_trainer.figures import boundary_figure, cached_curves_figure
from app_pages.moons_trainer.panels import (
    MoonsTrainerState,
    activation_panel,
    checkpoint_panel,
    device_mismatch_panel,
    divergence_panel,
    model_summary,
    process_upload,
    publish_shared,
    results_panel,
)
from app_pages.moons_trainer.pitfalls import pitfall_lab
from app_pages.moons_trainer.quiz import ZERO_GRAD_OPTIONS, ZERO_GRAD_QUESTION, zero_grad_reveal
from app_pages.moons_trainer.controls import seed_widgets, settings_panel
from components.state import learner_state, session_id
from workbench.common.jobs import SCRIPT_RUNS, TRAINING
from workbench.moons.training import LINK_SCHEMA, MAX_STEPS_PER_RUN, TrainingSession
from workbench.moons.codegen import moons_script

KEY = "moons_trainer"
TICK_SECONDS = 0.3            # a frame about three times a second
SLICE_SECONDS = 0.12          # training work per frame; the rest is drawing
SLICE_STEPS = 500
STEP_SECONDS = 2.5            # the most one "Step" (one epoch) may take: a page run stays < 3 s


def state() -> MoonsTrainerState:
    return learner_state(KEY, MoonsTrainerState)


def play() -> None:
    state().running = True


def pause() -> None:
    state().running = False
    TRAINING.release(session_id())
    if state().session is not None:
        publish_shared(state().session)


def request_step() -> None:
    state().step_requested = True
    state().running = False


def request_reset() -> None:
    state().reset_requested = True
    state().running = False


def new_session(settings, device) -> TrainingSession:
    session = TrainingSession(settings, device)
    publish_shared(session)
    return session


st.title("Moons trainer", anchor=False)
prose("A real `nn.Module` trained with `BCEWithLogitsLoss`, a seeded `DataLoader` and a real "
      "optimizer, live. Every number is computed by PyTorch while you watch.")

linked, fresh = link_settings(LINK_SCHEMA, KEY)
if fresh:
    seed_widgets(linked)
me = state()
device = learner_device()

settings_column, main_column = st.columns([1.3, 3] if presenting() else [1, 3.2], gap="medium")
with settings_column:
    settings = settings_panel(linked)
publish_link(LINK_SCHEMA, KEY, settings)

if (me.session is not None and me.session.device == device
        and dataclasses.replace(me.session.settings, epochs=settings.epochs) == settings):
    # More (or fewer) epochs continue the same run: training 50 epochs and then 50 more is
    # exactly the 100-epoch run, so the generated script still reproduces it.
    me.session.settings = settings
if me.session is None or me.session.settings != settings or me.session.device != device:
    me.session = new_session(settings, device)
    me.running = False
    me.reload_check = None
if me.reset_requested:
    me.reset_requested = False
    me.session = new_session(settings, device)
session = me.session
process_upload(session, me)

if me.step_requested:
    me.step_requested = False
    report = session.run_for(10**9, STEP_SECONDS, stop_at_epoch_end=True)
    if report.epochs_finished == 0 and not session.done:
        st.toast(f"That epoch is long: it was cut after {STEP_SECONDS:g} s. Press Step again to "
                 "carry on with it.")
    publish_shared(session)


def controls() -> None:
    # A horizontal flow: buttons keep their labels and wrap on a narrow (or projected) screen.
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button("Play", on_click=play, icon=":material/play_arrow:", key="mt_play", type="primary",
                  disabled=me.running or session.done)
        st.button("Pause", on_click=pause, icon=":material/pause:", key="mt_pause",
                  disabled=not me.running)
        st.button("Step", on_click=request_step, icon=":material/skip_next:", key="mt_step",
                  disabled=session.done, help="Train one epoch, then stop.")
        st.button("Reset", on_click=request_reset, icon=":material/restart_alt:", key="mt_reset",
                  help="A fresh model with the same seed: the same run again.")
        st.toggle("Show test points", key="mt_show_test",
                  help="The test split is for the final report only; look, but do not tune on it.")
        st.toggle("Best possible boundary", key="mt_show_bayes",
                  help="The Bayes-optimal classifier's boundary, from the known generative process: "
                       "where the two classes' densities are equal. No model can do better on "
                       "average.")


def stop_after_failure() -> None:
    state().running = False
    TRAINING.release(session_id())


@st.fragment(run_every=TICK_SECONDS if me.running else None)
def live_view() -> None:
    with SCRIPT_RUNS.run():     # a fragment's own reruns bypass the router: take a slot here
        run_guarded(live_frame, "moons trainer live view", on_error=stop_after_failure)


def live_frame() -> None:
    """One frame: a bounded slice of training, then the boundary and the curves redrawn."""
    me = state()
    session = me.session
    if me.running:
        # Everyone who presses Play trains: the slice shrinks as more learners train at once.
        seconds = TRAINING.slice_seconds(session_id(), SLICE_SECONDS, TICK_SECONDS)
        report = session.run_for(SLICE_STEPS, seconds)
        if report.epochs_finished:
            publish_shared(session)         # the other tools see the model as of the last epoch
        if session.done:
            me.running = False
            TRAINING.release(session_id())
            publish_shared(session)
            st.rerun()
    s = session.settings
    st.progress(session.progress,
                text=f"**Epoch {session.epoch} / {s.epochs}** · {session.steps:,} optimizer steps "
                     f"({session.steps_per_epoch} per epoch)" + (" · training…" if me.running else ""))
    if session.diverged is not None:
        divergence_panel(session)
    elif session.steps >= MAX_STEPS_PER_RUN:
        st.caption(f"Stopped at the cap of {MAX_STEPS_PER_RUN:,} optimizer steps per run, which keeps "
                   "the server fair to everyone: use a larger batch or fewer epochs.")
    elif session.done and not me.running:
        st.caption("Training finished. Raise **Epochs** to carry on with the same run, or **Reset** "
                   "to watch it again from the same initial weights.")
    figure = boundary_figure(session, show_test=st.session_state.get("mt_show_test", False),
                             show_bayes=st.session_state.get("mt_show_bayes", False))
    st.plotly_chart(figure, key="mt_boundary", config=PLOTLY_CONFIG)
    st.plotly_chart(cached_curves_figure(session.history, s.epochs, session.bayes_test_accuracy),
                    key="mt_curves", config=PLOTLY_CONFIG)


with main_column:
    with st.container(key="moons_trainer_main"):
        controls()
        live_view()

with main_column:
    if (session.steps > 0 or session.epoch > 0) and not me.running:
        results_panel(session, me)
    elif session.steps == 0 and session.epoch == 0:
        st.info(f"Press **Play** to train, or **Step** for one epoch at a time. The shading is the "
                f"model's predicted probability of class 1; the dotted green line on the accuracy "
                f"chart is the best accuracy any classifier can reach on this data "
                f"({100 * session.bayes_test_accuracy:.1f}% on the test split).",
                icon=":material/play_circle:")

st.divider()
# Lazy tabs: only the open one's heavy content runs; switching tabs reruns the page. The
# uploader and the knowledge check are always drawn, so their state survives a tab switch.
tabs = st.tabs(["Checkpoints", "Model", "Code", "Pitfall lab", "Check yourself"], key="mt_tabs",
               on_change="rerun")
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
script = moons_script(settings, str(device))
if tabs[2].open:
    with tabs[2]:
        code_panel(script, filename="moons_trainer.py", key="mt_code",
                   expanded=True,
                   caption="The whole pipeline for the current settings. Run as is, it prints the "
                           "same final test accuracy as this page for the same seed.")
if tabs[3].open:
    with tabs[3]:
        pitfall_lab(me, device)
with tabs[4]:
    knowledge_check("mt_zero_grad", ZERO_GRAD_QUESTION, ZERO_GRAD_OPTIONS, zero_grad_reveal)

share_panel(schema=LINK_SCHEMA, settings=settings, url_path="moons_trainer", script=script,
            title="Moons trainer", key="mt_share")
