"""Predict, then run, in the class store: the teacher poses a question, learners vote once each,
the votes stay hidden (the store returns no count before the reveal, to anyone), the teacher
reveals them and the votes are locked.

Functions of a ClassStore rather than its methods, so this feature lives in its own module; each
runs behind the same guard as the store's methods (store._reachable: the database's deadline,
StoreUnavailable when it is out of reach) and is one transaction. The teacher's actions need the
teacher key, a learner's the member token; every input is validated here whatever the page did.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from workbench.classroom.catalog import all_checks
from workbench.classroom.predictions import (Distribution, Question, QuestionRefused, distribution,
                                             validate_question)
from workbench.classroom.schema import members, prediction_votes, predictions
from workbench.classroom.store import (MAX_ANSWERS_WRITTEN, ClassError, ClassStore,
                                       _reachable)

MAX_PREDICTIONS = 100                  # per class: a lesson poses a handful


@dataclass(frozen=True)
class Prediction:
    """The class's current prediction. `votes` is None until the teacher reveals: before, not
    even the teacher's page receives the distribution, only how many voted."""
    id: int
    question: Question
    voted: int
    revealed: bool
    votes: Distribution | None = None


def _question_of(row) -> Question:
    return Question(row.question, tuple(json.loads(row.options)), row.expected, row.check_key)


def _valid(question: Question) -> Question:
    """The question validated again: a page's Question is not taken on trust. A built-in check
    is posed as the workbench wrote it, or not at all."""
    if question.check_key is not None:
        check = all_checks().get(str(question.check_key))
        if check is None or (question.text, tuple(question.options)) != (check.question,
                                                                          tuple(check.options)):
            raise ClassError("That is not a knowledge check of the workbench.")
        return Question(check.question, tuple(check.options), None, check.key)
    try:
        checked = validate_question(question.text, list(question.options), question.expected)
    except QuestionRefused as exc:
        raise ClassError(str(exc)) from None
    if checked.options != tuple(question.options):
        raise ClassError("Each option must differ, and none may be empty.")
    return Question(checked.text, checked.options, checked.expected, question.check_key)


def _current_row(connection, code: str):
    return connection.execute(
        select(predictions).where(and_(predictions.c.class_code == code,
                                       predictions.c.closed_at.is_(None)))
        .order_by(predictions.c.id.desc()).limit(1)).first()


def _counts(connection, prediction_id: int) -> dict[int, int]:
    """Votes per option of learners still in the class (a removed or departed learner's vote
    leaves the count, as their answers leave the board)."""
    found = connection.execute(
        select(prediction_votes.c.option_index, func.count())
        .join(members, members.c.token_digest == prediction_votes.c.member_digest)
        .where(and_(prediction_votes.c.prediction_id == prediction_id,
                    members.c.removed_at.is_(None)))
        .group_by(prediction_votes.c.option_index)).all()
    return {int(index): int(count) for index, count in found}


def pose(store: ClassStore, code: str, teacher_key: str, question: Question) -> int:
    """Pose `question` to the class; it becomes the current prediction (one posed before is
    closed, its votes kept). Returns its id. Validated before the database's deadline starts:
    the first look-up of the checks' catalog imports every tool's checks."""
    return _pose(store, code, teacher_key, _valid(question))


@_reachable
def _pose(store: ClassStore, code: str, teacher_key: str, question: Question) -> int:
    with store._ready().begin() as connection:
        row = store._teacher_class(connection, code, teacher_key)
        posed = connection.execute(select(func.count()).select_from(predictions).where(
            predictions.c.class_code == row.code)).scalar_one()
        if posed >= MAX_PREDICTIONS:
            raise ClassError(f"This class has posed {MAX_PREDICTIONS} predictions, the most one "
                             "class holds: start a new class for more.")
        now = store.clock()
        connection.execute(update(predictions).where(and_(
            predictions.c.class_code == row.code, predictions.c.closed_at.is_(None)))
            .values(closed_at=now))
        new_id = connection.execute(insert(predictions).values(
            class_code=row.code, question=question.text,
            options=json.dumps(list(question.options), ensure_ascii=False),
            expected=question.expected, check_key=question.check_key, posed_at=now,
            revealed_at=None, closed_at=None)).inserted_primary_key[0]
        store._touch(connection, row)
        return int(new_id)


def _view(connection, row) -> Prediction:
    counts = _counts(connection, row.id)
    question = _question_of(row)
    revealed = row.revealed_at is not None
    return Prediction(row.id, question, sum(counts.values()), revealed,
                      distribution(question.options, counts) if revealed else None)


@_reachable
def current(store: ClassStore, code: str, *, teacher_key: str = "", token: str = "") -> Prediction | None:
    """The class's current prediction (None: none open), for its teacher or one of its learners."""
    with store._ready().begin() as connection:
        if teacher_key:
            row = store._teacher_class(connection, code, teacher_key)
        else:
            row, _ = store._member(connection, code, token)
        found = _current_row(connection, row.code)
        return None if found is None else _view(connection, found)


def _prediction_row(connection, class_code: str, prediction_id: int):
    if isinstance(prediction_id, bool) or not isinstance(prediction_id, int):
        raise ClassError("That is not a prediction of this class.")
    found = connection.execute(select(predictions).where(and_(
        predictions.c.id == prediction_id, predictions.c.class_code == class_code))).first()
    if found is None:
        raise ClassError("That is not a prediction of this class.")
    return found


@_reachable
def vote(store: ClassStore, code: str, token: str, prediction_id: int, option_index: int) -> None:
    """The learner's one vote; refused (ClassError, nothing written) for a second vote, a
    prediction revealed or closed, or an option it does not have."""
    try:
        _vote(store, code, token, prediction_id, option_index)
    except IntegrityError:
        # Two votes of one learner at once (two tabs): the primary key took the first.
        raise ClassError("You have voted already: one vote per learner.") from None


def _vote(store: ClassStore, code: str, token: str, prediction_id: int, option_index: int) -> None:
    with store._ready().begin() as connection:
        row, member = store._member(connection, code, token)
        found = _prediction_row(connection, row.code, prediction_id)
        if found.revealed_at is not None or found.closed_at is not None:
            raise ClassError("The teacher has revealed this prediction: votes are locked.")
        options = json.loads(found.options)
        if isinstance(option_index, bool) or not isinstance(option_index, int) \
                or not 0 <= option_index < len(options):
            raise ClassError("That is not one of the prediction's options.")
        before = connection.execute(select(prediction_votes.c.option_index).where(and_(
            prediction_votes.c.prediction_id == found.id,
            prediction_votes.c.member_digest == member.token_digest))).scalar()
        if before is not None:
            raise ClassError(f"You have voted already (“{options[before]}”): one vote per "
                             "learner, and it cannot be changed.")
        # A vote counts toward the learner's bound on answers, so a script cannot flood it.
        counted = connection.execute(
            update(members).where(and_(members.c.token_digest == member.token_digest,
                                       members.c.answers_written < MAX_ANSWERS_WRITTEN))
            .values(answers_written=members.c.answers_written + 1)).rowcount
        if not counted:
            raise ClassError(f"You have sent {MAX_ANSWERS_WRITTEN} answers in this class, the "
                             "most one learner can: later answers are not recorded.")
        connection.execute(insert(prediction_votes).values(
            prediction_id=found.id, class_code=row.code, member_digest=member.token_digest,
            option_index=option_index, voted_at=store.clock()))
        store._touch(connection, row, force=False)


@_reachable
def my_vote(store: ClassStore, code: str, token: str, prediction_id: int) -> int | None:
    """The option this learner voted for (None: not yet)."""
    with store._ready().begin() as connection:
        row, member = store._member(connection, code, token)
        found = _prediction_row(connection, row.code, prediction_id)
        return connection.execute(select(prediction_votes.c.option_index).where(and_(
            prediction_votes.c.prediction_id == found.id,
            prediction_votes.c.member_digest == member.token_digest))).scalar()


@_reachable
def reveal(store: ClassStore, code: str, teacher_key: str, prediction_id: int) -> Prediction:
    """Reveal the votes (and lock them); revealing twice changes nothing."""
    with store._ready().begin() as connection:
        row = store._teacher_class(connection, code, teacher_key)
        found = _prediction_row(connection, row.code, prediction_id)
        if found.revealed_at is None:
            connection.execute(update(predictions).where(predictions.c.id == found.id)
                               .values(revealed_at=store.clock()))
            found = _prediction_row(connection, row.code, prediction_id)
        store._touch(connection, row)
        return _view(connection, found)


@_reachable
def close(store: ClassStore, code: str, teacher_key: str, prediction_id: int) -> None:
    """Take the prediction off learners' screens (its votes are kept, locked)."""
    with store._ready().begin() as connection:
        row = store._teacher_class(connection, code, teacher_key)
        found = _prediction_row(connection, row.code, prediction_id)
        connection.execute(update(predictions).where(predictions.c.id == found.id)
                           .values(closed_at=store.clock()))
        store._touch(connection, row)
