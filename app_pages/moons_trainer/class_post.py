"""A run that finishes while its learner is in a class is posted to the class's challenge board.

The post is made here, on the server, from the run's own TrainingSession (workbench/moons_trainer/
challenge.py), never from numbers a learner typed; its link is the page's lesson link, built from
the settings table as the share panel builds it. Whatever the class store answers, the run itself
is untouched: a refused or unsent post only becomes a note under the results and in the sidebar's
class panel.
"""
from __future__ import annotations

import weakref

from app_pages.moons_trainer.state import MoonsTrainerState
from app_pages.moons_trainer.sweep_cell import offer_to_cell
from components.class_session import class_store, seat
from components.classroom import lesson_url
from workbench.classroom.store import ClassError, Membership, RunEntry, StoreUnavailable
from workbench.moons_trainer.challenge import (FinishedRun, data_settings, finished_run,
                                               not_reproducible)
from workbench.moons_trainer.settings import TABLE, MoonsSettings
from workbench.moons_trainer.training import TrainingSession
from workbench.tools import MOONS_TRAINER

# The trainer's address, from its record.
URL_PATH = MOONS_TRAINER.url_path


def run_link(settings: MoonsSettings) -> str:
    """The link that opens exactly a run's experiment: /moons_trainer?<its settings>."""
    return lesson_url(URL_PATH, TABLE.write(settings))


def _seen(me: MoonsTrainerState, session: TrainingSession) -> bool:
    """Whether this run, at this step, was looked at already. The run is held weakly: an id()
    could be reused by a later run, and a strong reference would keep a discarded run alive."""
    if me.class_post_for is None:
        return False
    run, steps = me.class_post_for
    return run() is session and steps == session.steps


def post_note(me: MoonsTrainerState, session: TrainingSession) -> tuple[str, str] | None:
    """What became of this run's post, as (note, kind), while the run on screen is the one it is
    about (a new run, or this one trained further, has no note yet)."""
    if not me.class_post_note or not _seen(me, session):
        return None
    return me.class_post_note, me.class_post_kind


def post_finished_run(me: MoonsTrainerState, session: TrainingSession) -> None:
    """Post `session` once, the first time it is seen finished; only while in a class (a run
    that finished before its learner joined is not posted afterwards)."""
    if not session.done or _seen(me, session):
        return
    me.class_post_for = (weakref.ref(session), session.steps)
    me.class_post_note = ""
    membership = seat().membership
    if membership is None:
        return
    board = f"class {membership.code}'s challenge board"
    reason = not_reproducible(session)
    if reason is not None:
        me.class_post_note, me.class_post_kind = f"Not posted to {board}: {reason}.", "info"
        return
    with session.lock:
        result = finished_run(session)
    entry = RunEntry(link=run_link(session.settings), optimizer=result.settings.opt,
                     learning_rate=result.settings.lr, test_accuracy=result.test_accuracy,
                     bayes_ceiling=result.bayes_ceiling, parameter_count=result.parameter_count,
                     data_settings=data_settings(result.settings))
    # The class's sweep, if one runs, keeps the run for the learner's cell when it trained
    # exactly the cell's settings (sweep_cell.py); said after the post's own note.
    cell_note = offer_to_cell(session, entry)
    _post(me, membership, entry, result, board)
    if cell_note:
        me.class_post_note = f"{me.class_post_note} {cell_note}"


def _post(me: MoonsTrainerState, membership: Membership, entry: RunEntry, result: FinishedRun,
          board: str) -> None:
    try:
        posted = class_store().post_run(membership.code, membership.token, entry)
    except StoreUnavailable:
        note = (f"This run could not be posted to {board}: the class database cannot be reached "
                "just now. The run itself is safe here, and its link (Share this experiment) "
                "still opens it.")
        me.class_post_note, me.class_post_kind = note, "warning"
        seat().notice = note
        return
    except ClassError as exc:
        me.class_post_note, me.class_post_kind = f"Not posted to {board}: {exc}", "warning"
        seat().notice = me.class_post_note
        return
    if not posted:
        me.class_post_note, me.class_post_kind = (f"Already on {board}: you posted these settings "
                                                  "before, and they train the same run."), "info"
        return
    me.class_post_note = (f"Posted to {board}: {100 * result.test_accuracy:.2f}% test accuracy "
                          f"with {result.parameter_count:,} parameters, on {entry.data_settings} "
                          "(only runs on the challenge's data compete).")
    me.class_post_kind = "success"
