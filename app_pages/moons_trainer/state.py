"""One learner's moons trainer: the run, whether it plays, and what was last shown.

The run lives in learner state, so it survives a visit to another page: coming back by the
sidebar restores the settings (`link_settings`), and the same settings find the same run. A
setting change that must start a new run says what it threw away (`notice`).
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
import torch

from components.state import learner_state, shared_model
from workbench.common.errors import ExplainedError
from workbench.moons.checkpoints import ReloadCheck
from workbench.moons.settings import MoonsSettings, discard_notice
from workbench.moons.training import TrainingSession

KEY = "moons_trainer"


@dataclass
class MoonsTrainerState:
    session: TrainingSession | None = None
    running: bool = False
    step_requested: bool = False
    reset_requested: bool = False
    notice: str = ""                    # what the last setting change discarded, until an action
    view: dict[str, bool] = field(default_factory=dict)     # the figure's toggles
    upload_seen: str | None = None
    upload_message: str = ""
    upload_error: ExplainedError | None = None
    reload_for: tuple[int, int] | None = None
    reload_check: ReloadCheck | None = None
    pitfalls: dict[str, Any] = field(default_factory=dict)


def state() -> MoonsTrainerState:
    return learner_state(KEY, MoonsTrainerState)


def publish_shared(session: TrainingSession) -> None:
    """Hand a snapshot of the model and the scaled training split to the other tools."""
    shared = shared_model()
    snapshot = copy.deepcopy(session.model).eval()
    shared.model = snapshot
    shared.features = session.x_train.detach().cpu().clone()
    shared.labels = session.y_train.detach().cpu().clone()
    shared.description = session.describe()


def new_session(settings: MoonsSettings, device: torch.device) -> TrainingSession:
    session = TrainingSession(settings, device)
    publish_shared(session)
    return session


def current_session(me: MoonsTrainerState, settings: MoonsSettings,
                    device: torch.device) -> TrainingSession:
    """The learner's run for these settings: the same one, continued, or a new one."""
    old = me.session
    if (old is not None and old.device == device
            and dataclasses.replace(old.settings, epochs=settings.epochs) == settings):
        # More (or fewer) epochs continue the same run: training 50 epochs and then 50 more is
        # exactly the 100-epoch run, so the generated script still reproduces it.
        old.settings = settings
    if old is None or old.settings != settings or old.device != device:
        if old is not None and (old.epoch > 0 or old.steps > 0):
            me.notice = discard_notice(old.settings, settings, old.epoch, old.steps,
                                       device_changed=old.device != device)
            # A toast too: the setting just changed may be far below the notice's place.
            st.toast(me.notice, icon=":material/delete_history:")
        me.session = new_session(settings, device)
        me.running = False
        me.reload_check = None
    if me.reset_requested:
        me.reset_requested = False
        me.session = new_session(settings, device)
    assert me.session is not None
    return me.session
