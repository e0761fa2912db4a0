"""The live view: training runs in the scheduler, frames only look at it.

Play starts a repeating job in `workbench.common.jobs.SCHEDULER`: it trains in short slices
whenever this learner's turn comes, at the speed of its own code, however fast the browser
draws. A fragment rerunning ten times a second renews the job's lease and sends the latest
weights' picture to the browser component (live_canvas.py), which redraws in place. When the
learner leaves the page or closes the tab the lease lapses and the job stops; coming back to
a run that was playing, or a tab the server had not heard from for a while asking again,
starts it again.
"""
from __future__ import annotations

import re
import time
import weakref
from collections.abc import Callable

import streamlit as st

from app_pages.moons_trainer.class_post import post_finished_run, post_note
from app_pages.moons_trainer.compare_panel import comparison_panel, pin_buttons, pinned_curves
from app_pages.moons_trainer.drawing import points_sent
from app_pages.moons_trainer.live_canvas import KEY as LIVE_KEY
from app_pages.moons_trainer.live_canvas import (
    NETWORK_RESOLUTION,
    RESOLUTION,
    UNCHANGED,
    board_canvas,
    live_canvas,
    polled_frame,
)
from app_pages.moons_trainer.results import divergence_panel, first_run_hint, results_panel
from app_pages.moons_trainer.state import MoonsTrainerState, has_trained, publish_shared, state
from components import frame_route
from components.frame_route import FrameSource
from components.guard import run_guarded
from components.keyboard import with_shortcut
from components.plain_text import md
from components.state import connection_check, resend_widget_value, session_id, shared_model
from workbench.common.errors import unexpected
from workbench.common.jobs import SCHEDULER, SCRIPT_RUNS
from workbench.moons_trainer.compare import keep_pace
from workbench.moons_trainer.pace import Pace
from workbench.moons_trainer.replay import kept_words
from workbench.moons_trainer.settings import MAX_STEPS_PER_RUN
from workbench.moons_trainer.training import LiveSnapshot, TrainingSession

FRAME_SECONDS = 0.1           # ten frames a second while a run plays, where no frame route is reached
SNAPSHOT_SECONDS = 0.06       # the browser asks for a frame at most every frame_route.ASK_SECONDS
# The network view's picture (96 maps on the preset) at most about seven times a second, every
# second frame: what a learner follows is the units' shapes changing, and at the boundary's 15
# a second its bytes and drawing would take browser time the boundary needs (the issue asks for
# 4 a second at least; bench/live_frames.py --network measures both).
NETWORK_SECONDS = 0.15
PAUSE_KEY = "mt_pause"        # the view pauses the run itself when this button is pressed
PLAY_PAUSE_SHORTCUT = "P"     # ... or when this key is (Play and Pause share it: one is enabled)


def training_work(me: MoonsTrainerState, session: TrainingSession) -> Callable[[float], bool | float]:
    """One slice of this learner's run; False once there is nothing left to do, or the seconds
    to wait until the pace (the Speed setting) allows the next step. It runs in a scheduler
    thread, without Streamlit's context: everything it touches is looked up here."""
    shared = shared_model()
    taken, published, network_taken = [0.0], [time.perf_counter()], [0.0]
    pace = Pace(session.settings.epochs_per_second)

    def work(seconds: float) -> bool | float:
        with session.lock:
            if not me.running:
                return False            # paused while this slice waited for its turn or the lock
            if pace.epochs_per_second != session.settings.epochs_per_second:
                pace.restart(session.settings.epochs_per_second)    # Speed changed mid-run
            # Speed paces Play, for watching; Step trains its one epoch at once (at speed 1 a
            # paced Step took a second to answer its click).
            stepping = me.stop_at_epoch is not None
            allowed = None if stepping else pace.allowed(session.steps, session.steps_per_epoch)
            if allowed == 0:
                return pace.wait(session.steps_per_epoch)
            epoch_before = session.epoch
            started = time.perf_counter()
            if not (stepping and session.epoch >= me.stop_at_epoch):     # a pinned run catching up
                session.run_for(10**9 if allowed is None else allowed, seconds,
                                stop_at_epoch_end=stepping)
            more = not session.done and not (me.stop_at_epoch is not None
                                             and session.epoch >= me.stop_at_epoch)
            pinned = me.pinned if me.pinned_trains else None
            if pinned is not None and pinned is not session:
                # A comparison link's pinned run follows this one epoch by epoch (compare.py).
                left = max(seconds - (time.perf_counter() - started), 0.005)
                more = keep_pace(pinned, session, left) or more
            # The other tools see the model of a finished epoch, at most once a second (a copy
            # of the model and the data costs about a millisecond), and at the end.
            if session.epoch != epoch_before and (not more or time.perf_counter() - published[0] >= 1):
                publish_shared(session, shared)
                published[0] = time.perf_counter()
            # The picture at most as often as the browser asks for one (and at the end).
            if not more or time.perf_counter() - taken[0] >= SNAPSHOT_SECONDS:
                session.latest = session.snapshot(RESOLUTION)
                taken[0] = time.perf_counter()
            network_due = time.perf_counter() - network_taken[0] >= NETWORK_SECONDS
            if session.settings.net and (not more or network_due):
                session.network_snapshot(NETWORK_RESOLUTION)
                network_taken[0] = time.perf_counter()
            return more
    return work


def start_training(me: MoonsTrainerState, session: TrainingSession) -> None:
    me.trained_session = session
    SCHEDULER.start(session_id(), training_work(me, session))


def stop_training(me: MoonsTrainerState) -> None:
    """Pause: the job stops before its next slice; the page waits for the one under way (at
    most a slice, 50 ms), so what it draws next is the model as it stays."""
    me.running, me.stop_at_epoch = False, None
    SCHEDULER.stop(session_id(), wait=0.2)


def run_complete(me: MoonsTrainerState, session: TrainingSession) -> bool:
    """Whether the run has nothing left to train: the end, the cap, a divergence or, for Step,
    the end of its epoch."""
    return session.done or (me.stop_at_epoch is not None and session.epoch >= me.stop_at_epoch)


def keep_playing(me: MoonsTrainerState, session: TrainingSession) -> None:
    """A full page run while the run plays: start its job again if it lapsed (the learner was on
    another page), or stop playing if it ended."""
    me.page_runs += 1
    me.page_drew_running = me.running
    if not me.running:
        return
    job = SCHEDULER.job(session_id())
    if job is not None and me.trained_session is not session:
        SCHEDULER.stop(session_id())       # a new run (or the previous one) replaced it
        job = None
    if job is None and run_complete(me, session):
        me.running, me.stop_at_epoch = False, None
    elif job is None:
        start_training(me, session)
    me.page_drew_running = me.running


def status_line(me: MoonsTrainerState, session: TrainingSession, at: LiveSnapshot, *,
                paused: bool = False) -> str:
    """The counter above the live view, as of the snapshot `at` the frame shows (`paused`: as
    it reads once the run is paused)."""
    s = session.settings
    loaded = session.loaded
    origin = ""
    if loaded is not None:
        origin = (f" · from the resume checkpoint {loaded.name} (epoch {loaded.epoch})"
                  if loaded.kind == "resume" else
                  f" · from the uploaded weights {loaded.name} (training history unknown)")
    playing = "" if paused or not me.running else \
        " · training…" if me.stop_at_epoch is None else " · training one epoch…"
    pinned = me.pinned
    beside = (f" · pinned run: epoch {pinned.epoch} / {pinned.settings.epochs}"
              if pinned is not None and me.pinned_trains else "")
    return (f"Epoch {at.epoch} / {s.epochs} · {at.steps:,} optimizer steps "
            f"({session.steps_per_epoch} per epoch){origin}{beside}{playing}")


def _frame() -> None:
    with SCRIPT_RUNS.run():     # a fragment's own reruns bypass the router: take a slot here
        run_guarded(live_frame, "moons trainer live view", on_error=lambda: stop_training(state()))


VIEW_TOGGLES = {
    "mt_show_test": ("Show test points",
                     "The test split is for the final report only; look, but do not tune on it."),
    "mt_show_bayes": ("Best possible boundary",
                      "The Bayes-optimal classifier's boundary, from the known generative process: "
                      "where the two classes' densities are equal. No model can do better on "
                      "average."),
}


def _act(running: bool = False, *, step: bool = False, reset: bool = False) -> None:
    """A playback button was pressed: it is the learner's next action, so the notice goes.

    Play and Step start the run's job in the scheduler at once (Step plays to the end of the
    epoch); Pause and Reset stop it before the page runs on, so the model is still while the
    rest of the page reads it."""
    me = state()
    me.notice = ""
    me.replay = None                    # any action is on the model as it is now
    stop_training(me)
    me.reset_requested = reset
    session = me.session
    if session is None or reset:
        return
    if running or step:
        me.running = True
        me.stop_at_epoch = session.epoch + 1 if step else None
        start_training(me, session)
    else:
        publish_shared(session)


def playback(me: MoonsTrainerState, session: TrainingSession | None, waiting: str = "") -> None:
    """Play, Pause, Step, Reset and the figure's toggles, in one wrapping row. With no session
    (drawn points too few to train on) the same row, greyed, `waiting` saying why: the plane is
    then already where a run puts it (without the row it moved 88 px down under the pointer when
    the drawing reached the minimum, and the next click landed off the point aimed at)."""
    done = session is None or session.done
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        # Play and Pause share their key: only one of them is enabled at a time.
        st.button("Play", on_click=_act, args=(True,), icon=":material/play_arrow:", key="mt_play",
                  type="primary", disabled=me.running or done, shortcut=PLAY_PAUSE_SHORTCUT,
                  help=waiting or with_shortcut("Train until the last epoch", PLAY_PAUSE_SHORTCUT))
        st.button("Pause", on_click=_act, icon=":material/pause:", key=PAUSE_KEY,
                  disabled=not me.running, shortcut=PLAY_PAUSE_SHORTCUT,
                  help=with_shortcut("Stop training here", PLAY_PAUSE_SHORTCUT))
        st.button("Step", on_click=_act, kwargs={"step": True}, icon=":material/skip_next:",
                  key="mt_step", disabled=done or me.running, shortcut="S",
                  help=waiting or with_shortcut("Train one epoch, then stop.", "S"))
        st.button("Reset", on_click=_act, kwargs={"reset": True}, icon=":material/restart_alt:",
                  key="mt_reset", shortcut="0", disabled=session is None,
                  help=waiting or with_shortcut("A fresh model with the same seed: the same run "
                                                "again, from epoch 0.", "0"))
        pin_buttons(me, session, stop_training)
        regression = session is not None and session.settings.regression
        drawn = session is None or session.settings.drawn      # no session: drawing, too few
        for key, (label, help_text) in VIEW_TOGGLES.items():
            # Streamlit drops a widget's state on another page; the learner's choice is kept.
            resend_widget_value(key, me.view.get(key, False))
            no_bayes = key == "mt_show_bayes" and (drawn or regression)
            if no_bayes:
                help_text = ("A regression run has none: there are no classes." if regression else
                             "Drawn points have none: no known process drew them.")
            no_split = key == "mt_show_test" and session is None
            if no_split:
                help_text = "There is no test split until each class has enough points to train."
            me.view[key] = st.toggle(label, key=key, help=help_text, disabled=no_bayes or no_split)


def after_run_notes(me: MoonsTrainerState, session: TrainingSession) -> None:
    """Under the view: why Play and Step are grey once a run has ended, and what to do next.
    Not above it: a note that appears when a run ends moved the plane down (issue 43)."""
    ended = None if me.running else end_note(session)
    if ended is not None:
        with st.container(key="mt_end_note"):
            st.markdown(ended)


REPLAY_KEY = "mt_replay"
NOW = -1                                # the replay slider's last stop: the model as it is now


def replay_control(me: MoonsTrainerState, session: TrainingSession) -> int | None:
    """While paused, a slider over the finished epochs the run recorded: the live view, the
    curves' marker and the network view show the run as it was at the end of the one picked,
    recomputed from that epoch's weights. Its last stop is the model now. Returns the epoch
    replayed, None for now."""
    epochs = [e for e in session.weight_record.epochs if e <= session.epoch]
    if not epochs or session.epoch == 0:
        return None
    replayed = me.replayed_epoch(session)
    st.session_state[REPLAY_KEY] = NOW if replayed is None else replayed
    st.select_slider(
        "Replay: the run at the end of epoch", [*epochs, NOW], key=REPLAY_KEY,
        format_func=lambda e: "now" if e == NOW else str(e), on_change=_replay, args=(session,),
        help=replay_help(session))
    return replayed


def replay_help(session: TrainingSession) -> str:
    """The slider's help: which epochs the record kept (computed from it), then what a stop shows."""
    return (f"{kept_words(session.weight_record, session.epoch)}. From a kept epoch's weights "
            "PyTorch recomputes the boundary and the network view as they were then; the curves "
            "mark the epoch. The last stop is the model now, and Play or Step always go on from "
            "there.")


def _replay(session: TrainingSession) -> None:
    picked = st.session_state[REPLAY_KEY]
    me = state()
    me.replay = None if picked == NOW else (weakref.ref(session), int(picked))


def end_note(session: TrainingSession) -> str | None:
    """Why Play and Step are off once a run has ended, and what to do next; None while it can go on."""
    if session.diverged is not None:
        return (f":material/warning: **Stopped**: the loss stopped being a finite number at optimizer "
                f"step {session.diverged.step:,} (below: why, and what to change). **Reset** starts "
                "again from the same initial weights.")
    if session.steps >= MAX_STEPS_PER_RUN:
        return (f":material/block: **Stopped** at the cap of {MAX_STEPS_PER_RUN:,} optimizer steps "
                "per run, which keeps the server fair to everyone: use a larger batch or fewer epochs.")
    if session.done:
        return (f":material/check_circle: **Finished**: {session.epoch} of {session.settings.epochs} "
                "epochs. Raise **Epochs** to carry on with the same run, or **Reset** to watch it "
                "again from the same initial weights.")
    return None


def end_text(session: TrainingSession) -> str:
    """`end_note` as the live view announces it to a screen reader: no icon, no markup."""
    note = end_note(session)
    return "" if note is None else re.sub(r":material/\w+: |\*\*", "", note)


def frame_source(me: MoonsTrainerState) -> FrameSource:
    """This learner's frame route (components/frame_route.py): each frame the browser asks for
    renews the run's lease and answers the latest snapshot, so a playing run needs no rerun.
    The view's Pause stops the run here at once and answers the picture of where it stopped;
    the page's own Pause rerun follows and draws the same."""
    if me.frames is None:
        owner = session_id()
        connected = connection_check()

        def pause() -> None:
            session = me.session
            if not me.running or session is None:
                return
            me.running, me.stop_at_epoch = False, None
            SCHEDULER.stop(owner)
            # The slice under way holds the lock, and no slice trains once `running` is off:
            # the picture taken here is the model as it stays, what the page draws next.
            with session.lock:
                session.latest = session.snapshot(RESOLUTION)
                if session.settings.net:
                    session.network_snapshot(NETWORK_RESOLUTION)

        # The network picture this route last sent, as (run, serial): each is sent once.
        network_sent: list[tuple[int, int] | None] = [None]
        # The pinned run's curves last sent (a comparison link's pinned run trains too): sent
        # again only when they gained an epoch or the runs changed.
        pinned_sent: list[tuple | None] = [None]

        def pinned_update(session: TrainingSession) -> dict | str | None:
            if not me.pinned_trains or me.pinned is None:
                return UNCHANGED
            curves = pinned_curves(me, session)
            assert curves is not None
            seen = (id(me.pinned), id(session), len(curves["history"]["epoch"]))
            if pinned_sent[0] == seen:
                return UNCHANGED
            pinned_sent[0] = seen
            return curves

        def produce(since: int) -> bytes | None:
            session = me.session
            snapshot = session.latest if session is not None else None
            if session is None or snapshot is None:
                return None
            if not connected():
                # A closed tab's token, still asked for by a script: no ghost run renewed by it.
                SCHEDULER.stop(owner)
                return None
            alive = SCHEDULER.keep_alive(owner)
            network = session.latest_network if session.settings.net else None
            if network is not None and network_sent[0] == (id(session), network.serial):
                network = None
            elif network is not None:
                network_sent[0] = (id(session), network.serial)
            return polled_frame(session, snapshot, status_line(me, session, snapshot),
                                status_line(me, session, snapshot, paused=True), since,
                                me.sent.scene_id, me.view.get("mt_show_test", False),
                                ended=not alive, end_note="" if alive else end_text(session),
                                network=network,
                                pinned=pinned_update(session))

        # One frame per snapshot at most, however the browser asks (components/frame_route.py).
        me.frames = frame_route.register(FrameSource(produce, pause, interval=SNAPSHOT_SECONDS))
    return me.frames


def live_view(me: MoonsTrainerState) -> None:
    """The live view as a fragment. The browser asks the frame route for a playing run's frames
    itself and the fragment reruns only when the run ends; where the view reached no route (a
    proxy that blocks it), the fragment reruns ten times a second instead."""
    every = FRAME_SECONDS if me.running and me.route_blocked else None
    st.fragment(_frame, run_every=every)()


def live_frame() -> None:
    """The playback row, the live view and, while paused, the test results. A button here
    reruns only this fragment, so Play and Pause act at once and a playing run is never slowed
    by a page run; after a pause or the run's end the browser asks for the full page next
    (file names, the code panel), once the paused view is drawn."""
    me = state()
    if me.reset_requested or me.drawn_request is not None:
        st.rerun(scope="app")           # a new run (or new drawn points): the page makes it
    # The playback row above, the view below: the view keeps its place in the fragment whatever
    # is drawn above it, so the browser updates it in place (a drawing under way survives the
    # run that its points start).
    controls, view, below = st.container(), st.container(), st.container()
    if me.board is not None:            # drawn points too few to train on: no run to show
        board_settings, status = me.board
        with controls:
            playback(me, None, waiting=status)
        with view:
            board_canvas(board_settings, status, on_points=points_sent)
        return
    asked = st.session_state.get(LIVE_KEY)
    if asked is not None and asked.get("settle") and me.running != me.page_drew_running:
        st.rerun(scope="app")           # the browser drew the paused view: now the page follows
    if asked is not None and asked.get("no_route") and not me.route_blocked:
        me.route_blocked = True         # neither socket nor fetch came through: reruns feed the view
        st.rerun(scope="app")           # the page run sets this fragment's timer
    session = me.session
    assert session is not None
    full_run = me.sent.page_run != me.page_runs
    me.sent.page_run = me.page_runs
    if me.running and not SCHEDULER.keep_alive(session_id()):
        job_error = SCHEDULER.last_error(session_id())
        if job_error is None and not run_complete(me, session):
            # The lease lapsed between two of this view's reruns (a busy server queued them, or
            # the tab was in the background), yet here the learner is: the run plays on.
            start_training(me, session)
        else:
            me.running, me.stop_at_epoch = False, None
            publish_shared(session)
            if job_error is not None:
                me.job_error = unexpected(job_error)
                st.rerun(scope="app")   # the error's panel is above this fragment
    with controls:
        playback(me, session)           # after the check: a run that just ended enables Play
    # What a run's end adds goes under the view, so the plane never moves when it appears: the
    # end note and the replay slider (above the view, they moved it down 151 px when a run
    # finished; bench/layout_shift.py). A projected plane also keeps the first screen's height.
    with below:
        after_run_notes(me, session)
        replayed = None if me.running else replay_control(me, session)
    poll = frame_source(me).url if me.running and not me.route_blocked else None
    # Paused here, still playing below: the view shows the pause first, then the browser asks
    # for the full page (the results), so Pause shows as soon as this fragment has run.
    settle = not me.running and me.page_drew_running
    with view:
        live_canvas(session, me.sent, lambda at: status_line(me, session, at), playing=me.running,
                    show_test=me.view.get("mt_show_test", False),
                    show_bayes=me.view.get("mt_show_bayes", False), full_run=full_run,
                    poll_url=poll, settle=settle, pause_key=PAUSE_KEY,
                    pause_shortcut=PLAY_PAUSE_SHORTCUT, end_note=end_text(session),
                    replay_epoch=replayed, pinned=pinned_curves(me, session), on_points=points_sent)
    if me.route_blocked:
        st.caption("The frame route (`api/frames/`) did not answer this browser, perhaps a proxy "
                   "in front of the server blocks it: the view updates by page reruns, a few times "
                   "a second. Whoever runs the server can pass that path through (see the deploy "
                   "notes).")
    if me.running and not me.page_drew_running and me.route_blocked:
        st.rerun(scope="app")   # fed by reruns: a page run sets this fragment's timer
    if me.running:
        return
    post_finished_run(me, session)
    posted = post_note(me, session)
    if posted is not None:
        note, kind = posted
        alert, icon = {"success": (st.success, ":material/leaderboard:"),
                       "warning": (st.warning, ":material/cloud_off:")}.get(
                           kind, (st.info, ":material/info:"))
        alert(md(note), icon=icon)
    if session.diverged is not None:
        divergence_panel(session)
    if has_trained(session):
        results_panel(session, me)
    else:
        first_run_hint(session)
    comparison_panel(me, session, "moons_trainer")
