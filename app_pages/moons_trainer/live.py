"""The live view: a bounded slice of training per frame, then the boundary and curves redrawn."""
from __future__ import annotations

import streamlit as st

from app_pages.moons_trainer.figures import boundary_figure, cached_curves_figure
from app_pages.moons_trainer.results import divergence_panel
from app_pages.moons_trainer.state import publish_shared, state
from components.figures import PLOTLY_CONFIG
from components.guard import run_guarded
from components.state import session_id
from workbench.common.jobs import SCRIPT_RUNS, TRAINING
from workbench.moons.settings import MAX_STEPS_PER_RUN
from workbench.moons.training import TrainingSession

TICK_SECONDS = 0.3            # a frame about three times a second
SLICE_SECONDS = 0.12          # training work per frame; the rest is drawing
SLICE_STEPS = 500
STEP_SECONDS = 2.5            # the most one "Step" (one epoch) may take: a page run stays < 3 s


def step_if_requested(session: TrainingSession) -> None:
    """The Step button: one epoch, cut after STEP_SECONDS so a page run stays short."""
    me = state()
    if not me.step_requested:
        return
    me.step_requested = False
    report = session.run_for(10**9, STEP_SECONDS, stop_at_epoch_end=True)
    if report.epochs_finished == 0 and not session.done:
        st.toast(f"That epoch is long: it was cut after {STEP_SECONDS:g} s. Press Step again to "
                 "carry on with it.")
    publish_shared(session)


def _stop_after_failure() -> None:
    state().running = False
    TRAINING.release(session_id())


def _fragment() -> None:
    with SCRIPT_RUNS.run():     # a fragment's own reruns bypass the router: take a slot here
        run_guarded(live_frame, "moons trainer live view", on_error=_stop_after_failure)


def live_view(running: bool) -> None:
    """The live view as a fragment that reruns on its own while the run plays."""
    st.fragment(_fragment, run_every=TICK_SECONDS if running else None)()


def live_frame() -> None:
    me = state()
    session = me.session
    assert session is not None
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
    figure = boundary_figure(session, show_test=me.view.get("mt_show_test", False),
                             show_bayes=me.view.get("mt_show_bayes", False))
    st.plotly_chart(figure, key="mt_boundary", config=PLOTLY_CONFIG)
    st.plotly_chart(cached_curves_figure(session.history, s.epochs, session.bayes_test_accuracy),
                    key="mt_curves", config=PLOTLY_CONFIG)
