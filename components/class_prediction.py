"""Predict, then run: the teacher poses a question before an experiment runs, learners vote on
whatever page they are on, the votes stay hidden, the teacher runs the experiment and reveals
the class's distribution beside what PyTorch computed (workbench/classroom/predictions.py,
prediction_store.py).

- The teacher writes a question (or picks a knowledge check of the workbench, or imports one
  exported in an earlier class) on the Class page: `pose_panel`. The current prediction, with how
  many voted, *Reveal the votes* and then the distribution, is on the Class page and at the top
  of every other page the teacher opens (on the stage in presenter mode): `prediction_banner`.
- A learner in the class sees the open prediction at the top of every page, votes once, and
  after the reveal sees it locked with the class's distribution: `prediction_banner`.

Everything the teacher typed is shown through `md` (escaped: it reads as typed, never as
Markdown or HTML), radio options included. A learner's page asks for the class's current
prediction every LEARNER_SECONDS through a cache shared by the class's learners in this process
(one read per class per SHARED_MAX_AGE), so a class of sixty polling costs one query, not sixty.
"""
from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from components.class_session import PAGE_ON_SCREEN, class_store, seat
from components.classroom import app_root
from components.code_block import link_block
from components.figures import presenting
from components.guard import run_guarded
from components.plain_text import md
from workbench.classroom import prediction_store
from workbench.classroom.catalog import all_checks
from workbench.classroom.prediction_store import Prediction
from workbench.classroom.predictions import (MAX_OPTIONS, OPTION_MAX, QUESTION_MAX, QUESTION_PARAM,
                                             Question, QuestionRefused, export_question,
                                             import_question, question_from_link,
                                             question_link_param, reveal_sentence,
                                             validate_question)
from workbench.classroom.send_cache import SendCache
from workbench.classroom.store import URL_SETTING, ClassError, StartedClass, StoreUnavailable

LEARNER_SECONDS = 2.0            # a learner sees a new prediction within this (and SHARED_MAX_AGE)
TEACHER_SECONDS = 1.0            # the teacher's count of votes
SHARED_MAX_AGE = 0.5
NO_MARK = "No right answer (an opinion poll)"
OWN, CHECK = "Write my own question", "A knowledge check of the workbench"
NOTICE = "class_prediction_notice"
# (member token, prediction id) -> option index (-1: not yet). The token too: a learner who
# leaves and joins another class must not find a vote under a prediction id reused there.
MY_VOTES = "class_prediction_my_votes"
_CURRENT: SendCache[Prediction | None] = SendCache(SHARED_MAX_AGE)


def _database() -> str:
    return os.environ.get(URL_SETTING) or ""


# --- the truth the reveal shows --------------------------------------------------------------------
def _truth(prediction: Prediction) -> tuple[int | None, str]:
    """(the option the experiment showed, who says so): PyTorch for a built-in check, computed
    now (once per session and check), the teacher's mark for their own question."""
    key = prediction.question.check_key
    if key is not None and key in all_checks():
        computed = st.session_state.setdefault("class_prediction_truths", {})
        if key not in computed:
            answer = all_checks()[key].answer()
            computed[key] = (answer.correct_option, answer.shown_value)
        option, shown = computed[key]
        index = prediction.question.options.index(option) \
            if option in prediction.question.options else None
        return index, f"PyTorch computed it just now (it printed `{md(shown)}`)"
    if prediction.question.expected is None:
        return None, ""
    return prediction.question.expected, "the teacher's mark: what the experiment shows"


def _question_markdown(question: Question) -> str:
    """The question for a Markdown element: a built-in check's own text (written in the
    workbench, with its code spans), a teacher's text escaped, to read exactly as typed."""
    check = all_checks().get(question.check_key or "")
    return check.question if check is not None else md(question.text)


def _distribution_table(prediction: Prediction, truth: int | None, mine: int | None = None) -> None:
    votes = prediction.votes
    assert votes is not None
    rows = []
    for index, option in enumerate(prediction.question.options):
        row = {"option": md(option), "votes": votes.counts[index], "share": f"{votes.share(index):.0%}",
               "the experiment showed": "✓" if index == truth else ""}
        if mine is not None:
            row["your vote"] = "✓" if index == mine else ""
        rows.append(row)
    st.table(pd.DataFrame(rows), hide_index=True)


def _revealed_lines(prediction: Prediction, mine: int | None = None, *, side_by_side: bool = False) -> None:
    """The distribution, and beside it (on a projector) or under it what the experiment showed
    and one sentence comparing the two, computed from the votes."""
    truth, said_by = _truth(prediction)
    table, words = st.columns([3, 2], gap="medium") if side_by_side else (st.container(),) * 2
    with table:
        _distribution_table(prediction, truth, mine)
    with words:
        if truth is not None:
            st.markdown(f"**The experiment showed:** {md(prediction.question.options[truth])} "
                        f"({said_by}).")
        assert prediction.votes is not None
        st.markdown(md(reveal_sentence(prediction.question, prediction.votes, truth)))


# --- the teacher ------------------------------------------------------------------------------------
def _notice() -> None:
    message = st.session_state.pop(NOTICE, "")
    if message:
        st.warning(md(message), icon=":material/error:")


def _teacher_call(action) -> None:
    try:
        action()
    except ClassError as exc:
        st.session_state[NOTICE] = str(exc)


def _teacher_current(started: StartedClass) -> Prediction | None:
    return prediction_store.current(class_store(), started.code, teacher_key=started.teacher_key)


def _reveal(started: StartedClass, prediction_id: int) -> None:
    _teacher_call(lambda: prediction_store.reveal(class_store(), started.code, started.teacher_key,
                                                  prediction_id))
    _CURRENT.forget((_database(), started.code))


def _close(started: StartedClass, prediction_id: int) -> None:
    _teacher_call(lambda: prediction_store.close(class_store(), started.code, started.teacher_key,
                                                 prediction_id))
    _CURRENT.forget((_database(), started.code))


def _teacher_prediction(started: StartedClass, where: str) -> None:
    """The current prediction as the teacher steers it: the question, how many voted, Reveal;
    after the reveal the distribution beside what the experiment showed, and Take it down."""
    try:
        prediction = _teacher_current(started)
    except StoreUnavailable as exc:
        st.warning(md(str(exc)), icon=":material/cloud_off:")
        return
    except ClassError:
        return                                    # the class ended: the page says so
    if prediction is None:
        if where == "class":
            st.caption("No prediction is open. Pose one above; it appears on every learner's "
                       "page at once.")
        return
    if where == "stage":        # clear of the sidebar's button (left) and the app menu (right)
        st.html("<style>.st-key-class_prediction_teacher_stage { margin: 0 2.2rem; "
                "width: calc(100% - 4.4rem) !important; }</style>")
    with st.container(border=True, key=f"class_prediction_teacher_{where}"):
        state = "revealed" if prediction.revealed else "votes hidden"
        st.markdown(f"**:material/how_to_vote: Predict, then run** ({state}): "
                    f"{_question_markdown(prediction.question)}")
        _notice()
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(f"**{prediction.voted}** voted")
            if not prediction.revealed:
                st.button("Reveal the votes", key=f"class_prediction_reveal_{where}",
                          icon=":material/visibility:", type="primary",
                          on_click=_reveal, args=(started, prediction.id),
                          help="Run the experiment first; revealing locks the votes.")
            st.button("Take it down", key=f"class_prediction_close_{where}",
                      icon=":material/close:", on_click=_close, args=(started, prediction.id),
                      help="Learners' pages stop showing it; the votes are kept.")
            if not prediction.revealed:
                st.caption("Hidden, here and on every learner's screen, until you reveal them.")
        if prediction.revealed:
            _revealed_lines(prediction, side_by_side=where == "stage")


@st.fragment(run_every=TEACHER_SECONDS)
def _teacher_fragment(started: StartedClass, where: str) -> None:
    run_guarded(lambda: _teacher_prediction(started, where), "the class's prediction")


def _pose(started: StartedClass, question: Question) -> None:
    _teacher_call(lambda: prediction_store.pose(class_store(), started.code, started.teacher_key,
                                                question))
    _CURRENT.forget((_database(), started.code))
    st.session_state["class_prediction_last_posed"] = question


def _fill_form(question: Question) -> None:
    """Put a question (imported or from a link) into the form's boxes, for the teacher to pose."""
    st.session_state["class_prediction_mode"] = OWN
    st.session_state["class_prediction_question"] = question.text
    for number in range(MAX_OPTIONS):
        st.session_state[f"class_prediction_option_{number}"] = \
            question.options[number] if number < len(question.options) else ""
    st.session_state["class_prediction_mark"] = NO_MARK if question.expected is None \
        else f"Option {question.expected + 1}"


def question_from_address() -> None:
    """`?question=` on the Class page: a question link a teacher kept from an earlier class. A
    teacher finds it in the form; anyone else reads that it is for a teacher (a learner cannot
    pose a question). The parameter stays in the address until a teacher has it in the form, so
    a teacher who opens the link before starting the class finds it after *Start a class*."""
    raw = st.query_params.get(QUESTION_PARAM)
    if raw is None:
        return
    try:
        question = question_from_link(raw)
    except QuestionRefused as exc:
        del st.query_params[QUESTION_PARAM]
        st.error(md(str(exc)), icon=":material/link_off:")
        return
    if seat().teaching is None:
        st.info("This link carries a question for a teacher to pose in a class: "
                f"“{md(question.text)}”. Start a class below and it fills the question form. "
                "(A learner cannot pose questions.)", icon=":material/how_to_vote:")
        return
    del st.query_params[QUESTION_PARAM]
    _fill_form(question)
    st.session_state["class_prediction_loaded"] = "the link"


def _imported() -> None:
    upload = st.session_state.get("class_prediction_import")
    if upload is None:
        return
    try:
        question = import_question(upload.read(4097))
    except QuestionRefused as exc:
        st.session_state[NOTICE] = f"{upload.name}: {exc}"
        return
    _fill_form(question)
    st.session_state["class_prediction_loaded"] = "the file"


def pose_panel(started: StartedClass) -> None:
    """The teacher's panel on the Class page: pose a question, steer the current prediction,
    reuse a question in the next class."""
    with st.container(border=True, key="class_prediction_pose"):
        st.markdown("**:material/how_to_vote: Predict, then run.** Pose a question before you "
                    "run an experiment; learners vote on whatever page they are on, and the "
                    "votes stay hidden until you reveal them beside the result.")
        _notice()
        loaded = st.session_state.pop("class_prediction_loaded", "")
        if loaded:
            st.info(f"The question from {loaded} is in the form: check it, then pose it.",
                    icon=":material/upload_file:")
        st.session_state.setdefault("class_prediction_mode", OWN)
        mode = st.segmented_control("Question", (OWN, CHECK), key="class_prediction_mode",
                                    required=True, label_visibility="collapsed")
        if mode == CHECK:
            checks = all_checks()
            picked = st.selectbox("Knowledge check", sorted(checks, key=lambda k: checks[k].question),
                                  key="class_prediction_check",
                                  format_func=lambda key: checks[key].question,
                                  help="PyTorch computes its answer when you reveal the votes.")
            if st.button("Pose this check to the class", key="class_prediction_pose_check",
                         icon=":material/send:") and picked is not None:
                check = checks[picked]
                _pose(started, Question(check.question, tuple(check.options), None, check.key))
                st.rerun()
        else:
            _own_question_form(started)
        last = st.session_state.get("class_prediction_last_posed")
        if isinstance(last, Question) and last.check_key is None:
            with st.expander("Reuse the last question in your next class",
                             icon=":material/ios_share:"):
                st.download_button("Export the question (JSON)", data=export_question(last),
                                   file_name="prediction.json", mime="application/json",
                                   key="class_prediction_export", on_click="ignore",
                                   icon=":material/download:")
                st.caption("Or keep this link: it opens the Class page with the question in "
                           "the form.")
                link_block(f"{app_root()}/class?{QUESTION_PARAM}={question_link_param(last)}")
        st.file_uploader("Import a question file (exported before)", type=["json"],
                         key="class_prediction_import", on_change=_imported, max_upload_size=1,
                         help="A file this page exported: at most 4 KB of JSON. It is read as "
                         "data, never run.")
    _teacher_fragment(started, "class")


def _own_question_form(started: StartedClass) -> None:
    with st.form("class_prediction_form", border=False):
        text = st.text_area(f"Your question (up to {QUESTION_MAX} characters)",
                            key="class_prediction_question", height=80,
                            placeholder="What will the boundary look like with lr = 1?")
        columns = st.columns(2)
        options = [columns[number % 2].text_input(
            f"Option {number + 1}" + (" (optional)" if number >= 2 else ""),
            key=f"class_prediction_option_{number}", help=f"Up to {OPTION_MAX} characters.")
            for number in range(MAX_OPTIONS)]
        marks = [NO_MARK] + [f"Option {number + 1}" for number in range(MAX_OPTIONS)]
        mark = st.selectbox("The experiment will show", marks, key="class_prediction_mark",
                            help="Shown at the reveal beside the votes; learners never see it "
                            "before.")
        if st.form_submit_button("Pose to the class", icon=":material/send:", type="primary"):
            expected = None if mark == NO_MARK else marks.index(mark) - 1
            try:
                question = validate_question(text or "", options, expected)
            except QuestionRefused as exc:
                st.session_state[NOTICE] = str(exc)
                st.rerun()
            _pose(started, question)
            st.rerun()
    if st.session_state.get(NOTICE) and st.session_state.get(PAGE_ON_SCREEN, "") != "class":
        _notice()                     # in the sidebar, where the teacher typed it


# --- the learner ------------------------------------------------------------------------------------
def _learner_current(code: str, token: str) -> Prediction | None:
    return _CURRENT.get((_database(), code),
                        lambda: prediction_store.current(class_store(), code, token=token))


def _my_vote(code: str, token: str, prediction_id: int) -> int | None:
    """This learner's vote, asked of the store once per prediction and session (a reload, or
    another tab, finds the vote it gave)."""
    known = st.session_state.setdefault(MY_VOTES, {})
    if (token, prediction_id) not in known:
        found = prediction_store.my_vote(class_store(), code, token, prediction_id)
        known[token, prediction_id] = -1 if found is None else found
    return None if known[token, prediction_id] < 0 else known[token, prediction_id]


def _vote(code: str, token: str, prediction_id: int, choice_key: str) -> None:
    choice = st.session_state.get(choice_key)
    if choice is None:
        return
    try:
        prediction_store.vote(class_store(), code, token, prediction_id, int(choice))
        st.session_state.setdefault(MY_VOTES, {})[token, prediction_id] = int(choice)
    except ClassError as exc:
        st.session_state[NOTICE] = str(exc)
        st.session_state.setdefault(MY_VOTES, {}).pop((token, prediction_id), None)


def _learner_prediction() -> None:
    membership = seat().membership
    if membership is None:
        return
    code, token = membership.code, membership.token
    try:
        prediction = _learner_current(code, token)
        if prediction is None:
            return
        mine = _my_vote(code, token, prediction.id)
    except StoreUnavailable:
        return                                     # the sidebar's class panel says so
    except ClassError:
        return                                     # removed or ended: the follow fragment says so
    question = prediction.question
    with st.container(border=True, key="class_prediction_learner"):
        st.markdown(f"**:material/how_to_vote: Your teacher asks you to predict:** "
                    f"{_question_markdown(question)}")
        _notice()
        if prediction.revealed:
            st.caption("Votes are locked: the teacher revealed them."
                       + (f" Your vote: {md(question.options[mine])}." if mine is not None
                          else " You did not vote."))
            _revealed_lines(prediction, mine)
            return
        if mine is not None:
            st.success(f"Your vote: **{md(question.options[mine])}**. It is locked in; the "
                       "class's votes stay hidden until your teacher reveals them.",
                       icon=":material/how_to_vote:")
            return
        choice_key = f"class_prediction_choice_{prediction.id}"
        st.radio("Your prediction", list(range(len(question.options))), index=None, key=choice_key,
                 format_func=lambda index: md(question.options[index]),
                 label_visibility="collapsed")
        st.button("Vote", key=f"class_prediction_vote_{prediction.id}", icon=":material/how_to_vote:",
                  disabled=st.session_state.get(choice_key) is None,
                  on_click=_vote, args=(code, token, prediction.id, choice_key),
                  help="One vote: it cannot be changed. Nobody sees the votes until your teacher "
                  "reveals them.")


@st.fragment(run_every=LEARNER_SECONDS)
def _learner_fragment() -> None:
    run_guarded(_learner_prediction, "the class's prediction")


def prediction_banner() -> None:
    """At the top of every page: the open prediction, for a learner in a class (to vote) and
    for the teacher on any page but the Class page, which has its own (to reveal it on the
    projector after running the experiment)."""
    mine = seat()
    if mine.teaching is not None:
        if st.session_state.get(PAGE_ON_SCREEN, "") != "class":
            # Posed from the sidebar too (one click opens it on a projector), so a teacher
            # can ask before running the experiment on the page on screen.
            with st.sidebar, st.expander("Pose a prediction", icon=":material/how_to_vote:"):
                _own_question_form(mine.teaching)
            _teacher_fragment(mine.teaching, "stage" if presenting() else "page")
        return
    if mine.membership is not None:
        _learner_fragment()


__all__ = ["pose_panel", "prediction_banner", "question_from_address"]
