"""Predict, then run: a teacher's question validated both ways, exported and imported (and bad
files refused), and the store's votes on SQLite and PostgreSQL (the `store` fixture runs each
store test on both): hidden until the reveal, one per learner, locked after."""
from __future__ import annotations

import base64
import json

import pytest
from sqlalchemy import func, select

from tests.unit.classroom.conftest import database_before
from workbench.classroom import prediction_store as ps
from workbench.classroom.catalog import all_checks
from workbench.classroom.predictions import (MAX_FILE_BYTES, Question, QuestionRefused,
                                             clean_text, distribution, export_question,
                                             import_question, question_from_link,
                                             question_link_param, reveal_sentence,
                                             validate_question)
from workbench.classroom.schema import LATEST, migrate, prediction_votes, predictions
from workbench.classroom.store import ClassError

LR_QUESTION = "What will the boundary look like with lr = 1?"
LR_OPTIONS = ["A smooth curve", "A jagged, jumping line", "No boundary: the loss diverges"]


# --- validation ------------------------------------------------------------------------------------
def test_a_teachers_question_is_taken_cleaned_with_its_mark():
    question = validate_question("  Is `x.t()`\u202e contiguous?\n", ["Yes", "", " No "], 2)
    assert question == Question("Is `x.t()` contiguous?", ("Yes", "No"), 1)
    assert validate_question(LR_QUESTION, LR_OPTIONS).expected is None        # an opinion poll
    six = validate_question("Which?", [f"option {n}" for n in range(6)], 5)
    assert len(six.options) == 6 and six.expected == 5


def test_unicode_is_normalised_before_options_are_compared():
    assert clean_text("cafe\u0301\u200b = y²") == "caf\u00e9 = y²"       # NFC: ² stays ²
    with pytest.raises(QuestionRefused, match="Options 1 and 2 are the same"):
        validate_question("Which?", ["Yes", "ｙｅｓ "])
    with pytest.raises(QuestionRefused, match="Options 1 and 3 are the same"):
        validate_question("Which?", ["caf\u00e9", "tea", "cafe\u0301"])


@pytest.mark.parametrize("text, options, expected, why", [
    ("", ["a", "b"], None, "Write the question"),
    ("\u200b\u3164 ", ["a", "b"], None, "Write the question"),
    ("x" * 301, ["a", "b"], None, "at most 300"),
    ("Which?", ["only one"], None, "2 to 6 options; this one has 1"),
    ("Which?", [f"o{n}" for n in range(7)], None, "2 to 6 options; this one has 7"),
    ("Which?", ["a", "b" * 121], None, "Option 2 has 121 characters"),
    ("Which?", ["a", "b"], 2, "must be one of the options"),
    ("Which?", ["a", "", "b"], 1, "Option 2, marked as what the experiment will show, is empty"),
    ("Which?", ["a", 3], None, "Option 2 is not a text"),
    ("Which?", "ab", None, "a text and a list"),
    ("Which?", ["a", "b"], True, "must be one of the options"),
])
def test_a_question_out_of_bounds_is_refused_with_a_reason(text, options, expected, why):
    with pytest.raises(QuestionRefused, match=why):
        validate_question(text, options, expected)


def test_html_and_markdown_are_kept_as_text_not_removed():
    """Escaping is the page's job (it shows them as typed); validation keeps them."""
    hostile = validate_question("<script>alert(1)</script> **bold**?", ["[x](javascript:1)", "<b>"])
    assert hostile.text == "<script>alert(1)</script> **bold**?"
    assert hostile.options == ("[x](javascript:1)", "<b>")


# --- export and import -----------------------------------------------------------------------------
def test_export_and_import_round_trip_as_file_and_as_link():
    question = validate_question("Is `x.t()` contiguous? Zoë’s 李雷 question", ["Yes", "No"], 1)
    data = export_question(question)
    assert len(data) < 400 and json.loads(data)["format"] == "workbench-prediction"
    assert import_question(data) == question
    param = question_link_param(question)
    assert "=" not in param and question_from_link(param) == question


def _file(**changes) -> bytes:
    content = {"format": "workbench-prediction", "version": 1, "question": "Which?",
               "options": ["a", "b"], "expected": 0}
    content.update(changes)
    return json.dumps({k: v for k, v in content.items() if v is not ...}).encode()


@pytest.mark.parametrize("data, why", [
    (b"\x80\x04\x95 pickle", "not JSON"),
    (b"cos\nsystem\n(S'echo hi'\ntR.", "not JSON"),
    (b"[" * 5000, "at most 4,096"),
    (b"{" + b" " * MAX_FILE_BYTES + b"}", "at most 4,096"),
    (b"", "not JSON"),
    (b"\xff\xfe{}", "not JSON"),
    (b'{"format": "workbench-prediction", "version": NaN}', "not JSON"),
    (b'["workbench-prediction"]', "not a question the workbench exported"),
    (_file(format="other"), "not a question the workbench exported"),
    (_file(version=2), "not version 1"),
    (_file(extra="x"), "not version 1"),
    (_file(expected=...), "not version 1"),
    (_file(options=["a", "a"]), "are the same"),
    (_file(options={"a": 1}), "a text and a list"),
    (_file(question="x" * 400), "at most 300"),
    (_file(expected=7), "must be one of the options"),
])
def test_a_bad_file_is_refused_with_a_reason(data, why):
    with pytest.raises(QuestionRefused, match=why):
        import_question(data)


def test_a_damaged_or_oversized_link_is_refused():
    with pytest.raises(QuestionRefused, match="damaged"):
        question_from_link("a")
    with pytest.raises(QuestionRefused, match="too long"):
        question_from_link("A" * 7000)
    evil = base64.urlsafe_b64encode(b"__import__('os').system('id')").decode()
    with pytest.raises(QuestionRefused, match="not JSON"):
        question_from_link(evil)


# --- the reveal's sentence, each outcome ----------------------------------------------------------
@pytest.mark.parametrize("counts, truth, sentence", [
    ({0: 3, 1: 1}, 0, "3 of 4 (75%) predicted it; most of the class predicted it."),
    ({0: 1, 1: 3}, 0, "1 of 4 (25%) predicted it; most of the class predicted “No”."),
    ({0: 2, 1: 2}, 0, "2 of 4 (50%) predicted it; it tied for the most votes."),
    ({1: 2, 2: 2}, 0, "0 of 4 (0%) predicted it; the class split between other options."),
    ({}, 0, "Nobody voted before the reveal."),
    ({0: 2}, None, "An opinion poll: 2 voted, no option is right."),
])
def test_the_reveal_sentence_follows_the_votes(counts, truth, sentence):
    question = Question("Contiguous?", ("Yes", "No", "It depends"))
    assert reveal_sentence(question, distribution(question.options, counts), truth) == sentence


# --- the store, on SQLite and PostgreSQL ---------------------------------------------------------
def _votes(store) -> int:
    with store.engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(prediction_votes)).scalar_one()


def test_votes_stay_hidden_until_the_reveal_then_lock(store):
    started = store.start_class()
    ada, bo, cy = (store.join(started.code, name) for name in ("Ada", "Bo", "Cy"))
    question = validate_question(LR_QUESTION, LR_OPTIONS, 1)
    posed = ps.pose(store, started.code, started.teacher_key, question)
    seen = ps.current(store, started.code, token=ada.token)
    assert seen.id == posed and seen.question == question and not seen.revealed

    ps.vote(store, started.code, ada.token, posed, 1)
    ps.vote(store, started.code, bo.token, posed, 1)
    ps.vote(store, started.code, cy.token, posed, 0)
    for view in (ps.current(store, started.code, teacher_key=started.teacher_key),
                 ps.current(store, started.code, token=cy.token)):
        assert view.voted == 3 and view.votes is None          # no one reads the counts yet
    assert ps.my_vote(store, started.code, bo.token, posed) == 1

    revealed = ps.reveal(store, started.code, started.teacher_key, posed)
    assert revealed.revealed and revealed.votes.counts == (1, 2, 0) and revealed.votes.voted == 3
    assert ps.current(store, started.code, token=ada.token).votes.counts == (1, 2, 0)
    late = store.join(started.code, "Late")
    with pytest.raises(ClassError, match="votes are locked"):
        ps.vote(store, started.code, late.token, posed, 0)
    assert _votes(store) == 3


def test_a_learner_votes_once_and_cannot_pose_or_reveal(store):
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    posed = ps.pose(store, started.code, started.teacher_key, validate_question("Q1?", ["a", "b"]))
    ps.vote(store, started.code, ada.token, posed, 0)
    with pytest.raises(ClassError, match="You have voted already .“a”."):
        ps.vote(store, started.code, ada.token, posed, 1)
    for bad in (2, -1, True, "0"):
        with pytest.raises(ClassError, match="not one of the prediction's options"):
            ps.vote(store, started.code, store.join(started.code, "").token, posed, bad)
    with pytest.raises(ClassError, match="teacher key does not open"):
        ps.pose(store, started.code, ada.token, validate_question("Mine?", ["a", "b"]))
    with pytest.raises(ClassError, match="teacher key does not open"):
        ps.reveal(store, started.code, ada.token, posed)
    with pytest.raises(ClassError, match="not in class"):
        ps.vote(store, started.code, started.teacher_key, posed, 0)
    assert _votes(store) == 1
    assert not ps.current(store, started.code, token=ada.token).revealed


def test_the_store_validates_a_question_the_page_hands_it(store):
    started = store.start_class()
    for forged in (Question("Q1?", ("a", "a")), Question("Q1?", ("only",)),
                   Question("", ("a", "b")), Question("Q1?", ("a", "b"), 5),
                   Question("Q1?", ("a", "b"), None, "not a key!"),
                   Question("Q1?", ("a", "b"), None, "home_device_mismatch")):
        with pytest.raises(ClassError):
            ps.pose(store, started.code, started.teacher_key, forged)
    with store.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(predictions)).scalar_one() == 0


def test_every_built_in_check_can_be_posed_as_written(store):
    started = store.start_class()
    for check in all_checks().values():
        ps.pose(store, started.code, started.teacher_key,
                Question(check.question, tuple(check.options), None, check.key))
        posed = ps.current(store, started.code, teacher_key=started.teacher_key).question
        assert (posed.text, posed.options, posed.check_key) == (check.question, tuple(check.options),
                                                                 check.key)


def test_a_new_question_closes_the_last_and_another_class_sees_neither(store):
    started, other = store.start_class(), store.start_class()
    ada = store.join(started.code, "Ada")
    outsider = store.join(other.code, "Zed")
    first = ps.pose(store, started.code, started.teacher_key, validate_question("One?", ["a", "b"]))
    second = ps.pose(store, started.code, started.teacher_key, validate_question("Two?", ["a", "b"]))
    assert ps.current(store, started.code, token=ada.token).id == second
    with pytest.raises(ClassError, match="votes are locked"):
        ps.vote(store, started.code, ada.token, first, 0)
    assert ps.current(store, other.code, token=outsider.token) is None
    with pytest.raises(ClassError, match="not a prediction of this class"):
        ps.vote(store, other.code, outsider.token, second, 0)
    ps.close(store, started.code, started.teacher_key, second)
    assert ps.current(store, started.code, token=ada.token) is None


def test_a_removed_learners_vote_leaves_the_count_and_ending_deletes_all(store):
    started = store.start_class()
    ada, bo = store.join(started.code, "Ada"), store.join(started.code, "Bo")
    posed = ps.pose(store, started.code, started.teacher_key, validate_question("Q1?", ["a", "b"]))
    ps.vote(store, started.code, ada.token, posed, 0)
    ps.vote(store, started.code, bo.token, posed, 1)
    store.remove_member(started.code, started.teacher_key, 1)
    store.leave(started.code, bo.token)
    assert ps.reveal(store, started.code, started.teacher_key, posed).votes.counts == (0, 0)
    store.end_class(started.code, started.teacher_key)
    with store.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(predictions)).scalar_one() == 0
    assert _votes(store) == 0


def test_a_database_from_before_predictions_gains_them_and_keeps_its_classes(store):
    """The migration that adds predictions, run on a database the release before left."""
    with store.engine.begin() as connection:
        before = database_before(connection, "Predict, then run")
        assert not connection.dialect.has_table(connection, "predictions")
    assert migrate(store.engine) == before
    started = store.start_class()
    ada = store.join(started.code, "Ada")
    posed = ps.pose(store, started.code, started.teacher_key, validate_question("Q1?", ["a", "b"]))
    ps.vote(store, started.code, ada.token, posed, 1)
    assert ps.reveal(store, started.code, started.teacher_key, posed).votes.counts == (0, 1)
    assert migrate(store.engine) == LATEST
