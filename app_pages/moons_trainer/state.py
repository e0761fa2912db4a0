"""One learner's moons trainer: the run, whether it plays, and what was last shown.

The run lives in learner state, so it survives a visit to another page: coming back by the
sidebar restores the settings (`link_settings`), and the same settings find the same run. As in
TensorFlow Playground, a change of learning rate, weight decay, batch size, optimizer or epochs
carries on with the same weights (`TrainingSession.continue_with`); any other change starts a
new run, says so, and keeps the previous one in memory with a way back to it.
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
import torch

from app_pages.moons_trainer.live_canvas import SentToBrowser
from components.figures import presenting
from components.frame_route import FrameSource
from components.state import SharedModel, learner_state, shared_model
from workbench.common.errors import ExplainedError
from workbench.moons_trainer.checkpoints import ReloadCheck
from workbench.moons_trainer.settings import MoonsSettings, changes
from workbench.moons_trainer.training import TrainingSession, continues

KEY = "moons_trainer"


@dataclass
class MoonsTrainerState:
    session: TrainingSession | None = None
    running: bool = False
    stop_at_epoch: int | None = None    # Step: play until this epoch is finished
    reset_requested: bool = False
    notice: str = ""                    # what the last setting change did, until an action
    notice_kind: str = "info"           # "info": the run carried on; "new": a new run started;
                                        # "refused": a setting change was refused
    fresh_run_for: str = ""             # why the next page run starts a new run (the lesson preset)
    previous: TrainingSession | None = None     # the run a new one replaced, to go back to
    trained_session: TrainingSession | None = None  # the run the scheduler job trains
    view: dict[str, bool] = field(default_factory=dict)     # the figure's toggles
    page_runs: int = 0
    page_drew_running: bool = False     # whether the last full page run drew a playing run
    route_blocked: bool = False         # the view reached no frame route (a proxy): reruns feed it
    sent: SentToBrowser = field(default_factory=SentToBrowser)
    frames: FrameSource | None = None   # the frame route's source: owned here, so it lives as long
    job_error: ExplainedError | None = None
    upload_seen: str | None = None
    upload_message: str = ""
    upload_error: ExplainedError | None = None
    reload_for: tuple[int, int] | None = None
    reload_check: ReloadCheck | None = None
    pitfalls: dict[str, Any] = field(default_factory=dict)
    # The finished run last looked at for the class's challenge board, as (a weak reference to
    # the run, its steps), and what became of its post: each finished run is posted at most once.
    class_post_for: tuple[weakref.ref, int] | None = None
    class_post_note: str = ""
    class_post_kind: str = "info"       # "success", "info" (not posted, and why), "warning"
    # The finished epoch the live view replays, as (a weak reference to the run, the epoch);
    # None: the view shows the model as it is now.
    replay: tuple[weakref.ref, int] | None = None
    # Two runs side by side (compare_panel.py): the pinned run, kept as it was, whether Play
    # trains it beside this one (a comparison link's), and the `vs=` last applied or published.
    pinned: TrainingSession | None = None
    pinned_trains: bool = False
    compare_link: str | None = None
    compare_problems: list = field(default_factory=list)
    # Drawn data (dataset `drawn`, app_pages/moons_trainer/drawing.py): the points the live view
    # sent, until the page's next full run puts them into the settings; and, while there are too
    # few to train on, why (the live view then shows the drawing alone, with no run).
    drawn_request: tuple[tuple[float, float, int], ...] | None = None
    board: tuple[MoonsSettings, str] | None = None      # (the settings, the view's status line)

    def replayed_epoch(self, session: TrainingSession) -> int | None:
        """The epoch of `session` the view replays, None when it shows the model now."""
        if self.replay is None or self.replay[0]() is not session or self.running:
            return None
        return self.replay[1] if self.replay[1] in session.weight_record.epochs else None


def state() -> MoonsTrainerState:
    return learner_state(KEY, MoonsTrainerState)


def publish_shared(session: TrainingSession, shared: SharedModel | None = None) -> None:
    """Hand a snapshot of the model and the scaled training split to the other tools.

    The scheduler's training thread has no Streamlit context (no `st.session_state`): it
    passes the learner's `shared` object, looked up by the page's script when it started."""
    shared = shared or shared_model()
    if session.settings.regression:
        # The other tools read 0/1 labels (class counts, a BCE graph): a regression run's
        # targets are not classes, so it is not handed over, and no older run stands in for it.
        shared.model = shared.features = shared.labels = None
        shared.description = ""
        return
    with session.lock:
        snapshot = copy.deepcopy(session.model).eval()
    shared.model = snapshot
    shared.features = session.x_train.detach().cpu().clone()
    shared.labels = session.y_train.detach().cpu().clone()
    shared.description = session.describe()


def new_session(settings: MoonsSettings, device: torch.device) -> TrainingSession:
    session = TrainingSession(settings, device)
    publish_shared(session)
    return session


def has_trained(session: TrainingSession | None) -> bool:
    return session is not None and (session.epoch > 0 or session.steps > 0 or session.loaded is not None)


def where(session: TrainingSession) -> str:
    return f"epoch {session.epoch}" if session.epoch else f"step {session.steps:,} of epoch 1"


def current_session(me: MoonsTrainerState, settings: MoonsSettings,
                    device: torch.device) -> TrainingSession:
    """The learner's run for these settings: the same one, continued, or a new one.

    A run never shows more epochs trained than it was asked for ("Epoch 64 / 20"): Epochs below
    the trained epochs is refused at the widget (controls.py), and a link that asks for fewer
    starts a new run, so that the link reproduces what is on screen."""
    old = me.session
    fresh_for, me.fresh_run_for = me.fresh_run_for, ""
    if not fresh_for and old is not None and old.settings != settings and settings.epochs < old.epoch:
        fresh_for = (f"Epochs {settings.epochs} is below the {old.epoch} epochs the run had "
                     "trained")
    if not fresh_for and old is not None and old.device == device and old.settings != settings \
            and continues(old.settings, settings):
        with old.lock:
            carried = old.continue_with(settings)
        if carried and has_trained(old):
            announce(me, (f"The run carries on from {where(old)} with its weights and curves: "
                          + "; ".join(c.describe() for c in carried) + "."), "info")
    elif fresh_for or old is None or old.settings != settings or old.device != device:
        if has_trained(old):
            assert old is not None
            reasons = [fresh_for] if fresh_for else changes(old.settings, settings, ignore=("epochs",))
            if old.device != device:
                reasons.append("the device changed")
            me.previous = old
            announce(me, set_aside_notice("; ".join(reasons), old), "new")
        me.session = new_session(settings, device)
        me.reload_check = None
        me.sent = SentToBrowser()
    if me.reset_requested:
        me.reset_requested = False
        me.session = new_session(settings, device)
        if me.pinned is not None and me.pinned_trains:     # a link's pair: both start again
            me.pinned = TrainingSession(me.pinned.settings, device)
    assert me.session is not None
    return me.session


def set_aside_notice(reasons: str, old: TrainingSession) -> str:
    """Which trained run a fresh one set aside, and the two ways back to it (notice_panel's
    buttons): a learner who changed one setting should not think the trained run is lost."""
    return (f"A new run started from fresh weights: {reasons}. The run at {where(old)} was set "
            "aside, not lost: it is kept in memory until the next new run. *Back to the run* "
            "brings it back with its settings; *Pin it beside this run* keeps it on screen to "
            "compare with the new one.")


def announce(me: MoonsTrainerState, notice: str, kind: str) -> None:
    """What a setting change did to the run, said once: in the notice above the live view, and
    as a toast in presenter mode only, where the settings sit below the view and the notice is
    off the screen the teacher is scrolled to."""
    me.notice, me.notice_kind = notice, kind
    if presenting():
        st.toast(notice, icon=":material/tune:" if kind == "info" else ":material/restart_alt:")


def back_to_previous(me: MoonsTrainerState, seed_settings) -> None:
    """The notice's button: swap the previous run back in (the newer one becomes 'previous')."""
    if me.previous is None or me.session is None:
        return
    me.previous, me.session = me.session, me.previous
    seed_settings(me.session.settings)
    me.notice = (f"Back to the run at {where(me.session)}. The newer run is kept in memory: "
                 "the button below goes back to it.")
    me.notice_kind = "new"
    me.sent = SentToBrowser()
    publish_shared(me.session)
