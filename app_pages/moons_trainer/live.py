"""The live view: training runs in the scheduler, frames only look at it.

Play starts a repeating job in `workbench.common.jobs.SCHEDULER`: it trains in short slices
whenever this learner's turn comes, at the speed of its own code, however fast the browser
draws. A fragment rerunning ten times a second renews the job's lease and sends the latest
weights' picture to the browser component (live_canvas.py), which redraws in place. When the
learner leaves the page or closes the tab the lease lapses and the job stops; coming back to
a run that was playing starts it again.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app_pages.moons_trainer.live_canvas import RESOLUTION, live_canvas
from app_pages.moons_trainer.results import divergence_panel
from app_pages.moons_trainer.state import MoonsTrainerState, publish_shared, state
from components.guard import run_guarded
from components.state import session_id, shared_model
from workbench.common.errors import unexpected
from workbench.common.jobs import SCHEDULER, SCRIPT_RUNS
from workbench.moons.settings import MAX_STEPS_PER_RUN
from workbench.moons.training import LiveSnapshot, TrainingSession

FRAME_SECONDS = 0.1           # ten frames a second while a run plays


def training_work(me: MoonsTrainerState, session: TrainingSession) -> Callable[[float], bool]:
    """One slice of this learner's run; False once there is nothing left to do. It runs in a
    scheduler thread, without Streamlit's context: everything it touches is looked up here."""
    shared = shared_model()

    def work(seconds: float) -> bool:
        with session.lock:
            epoch_before = session.epoch
            session.run_for(10**9, seconds, stop_at_epoch_end=me.stop_at_epoch is not None)
            if session.epoch != epoch_before:
                publish_shared(session, shared)   # the other tools see the model of the last epoch
            session.latest = session.snapshot(RESOLUTION)
            if me.stop_at_epoch is not None and session.epoch >= me.stop_at_epoch:
                return False
            return not session.done
    return work


def start_training(me: MoonsTrainerState, session: TrainingSession) -> None:
    me.trained_session = session
    SCHEDULER.start(session_id(), training_work(me, session))


def stop_training(me: MoonsTrainerState) -> None:
    """Pause: the job stops before its next slice; the page waits for the one under way (at
    most a slice, 50 ms), so what it draws next is the model as it stays."""
    me.running, me.stop_at_epoch = False, None
    SCHEDULER.stop(session_id(), wait=0.2)


def keep_playing(me: MoonsTrainerState, session: TrainingSession) -> None:
    """A full page run while the run plays: start its job again if it lapsed (the learner was on
    another page), or stop playing if it ended."""
    me.page_runs += 1
    if not me.running:
        return
    job = SCHEDULER.job(session_id())
    if job is not None and me.trained_session is not session:
        SCHEDULER.stop(session_id())       # a new run (or the previous one) replaced it
        job = None
    if job is None and (session.done or (me.stop_at_epoch is not None
                                         and session.epoch >= me.stop_at_epoch)):
        me.running, me.stop_at_epoch = False, None
    elif job is None:
        start_training(me, session)


def status_line(me: MoonsTrainerState, session: TrainingSession, at: LiveSnapshot) -> str:
    """The counter above the live view, as of the snapshot `at` the frame shows."""
    s = session.settings
    loaded = session.loaded
    origin = ""
    if loaded is not None:
        origin = (f" · from the resume checkpoint {loaded.name} (epoch {loaded.epoch})"
                  if loaded.kind == "resume" else
                  f" · from the uploaded weights {loaded.name} (training history unknown)")
    playing = " · training…" if me.running and me.stop_at_epoch is None else \
        " · training one epoch…" if me.running else ""
    return (f"Epoch {at.epoch} / {s.epochs} · {at.steps:,} optimizer steps "
            f"({session.steps_per_epoch} per epoch){origin}{playing}")


def _frame() -> None:
    with SCRIPT_RUNS.run():     # a fragment's own reruns bypass the router: take a slot here
        run_guarded(live_frame, "moons trainer live view", on_error=lambda: stop_training(state()))


def live_view(me: MoonsTrainerState) -> None:
    """The live view as a fragment that reruns on its own while the run plays."""
    st.fragment(_frame, run_every=FRAME_SECONDS if me.running else None)()


def live_frame() -> None:
    me = state()
    session = me.session
    assert session is not None
    full_run = me.sent.page_run != me.page_runs
    me.sent.page_run = me.page_runs
    if me.running:
        alive = SCHEDULER.keep_alive(session_id())
        job_error = None
        if not alive:
            finished = SCHEDULER.last_error(session_id())
            job_error = finished
            me.running, me.stop_at_epoch = False, None
            publish_shared(session)
            if job_error is not None:
                me.job_error = unexpected(job_error)
            st.rerun(scope="app")       # the results and the buttons change with the run's end
    live_canvas(session, me.sent, lambda at: status_line(me, session, at), playing=me.running,
                show_test=me.view.get("mt_show_test", False),
                show_bayes=me.view.get("mt_show_bayes", False), full_run=full_run)
    if me.running:
        return
    if session.diverged is not None:
        divergence_panel(session)
    elif session.steps >= MAX_STEPS_PER_RUN:
        st.caption(f"Stopped at the cap of {MAX_STEPS_PER_RUN:,} optimizer steps per run, which keeps "
                   "the server fair to everyone: use a larger batch or fewer epochs.")
    elif session.done:
        st.caption("Training finished. Raise **Epochs** to carry on with the same run, or **Reset** "
                   "to watch it again from the same initial weights.")
