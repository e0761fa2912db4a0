"""The class's report kept after End, and the teacher's pacing of checks: the store on SQLite and
PostgreSQL (the `store` fixture), and the report built from it (workbench/classroom/report.py)."""
from __future__ import annotations

import csv
import re
import html
import io
from html.parser import HTMLParser

import pytest

from workbench.classroom.catalog import all_checks
from workbench.common.device_checks import DEVICE_MISMATCH
from workbench.classroom.report import build_report, report_csv, report_html, time_text
from workbench.classroom.store import (IDLE_EXPIRY_SECONDS, KEEP_REPORT_DAYS, CheckClosed,
                                       ClassError, RunEntry)
from workbench.classroom.pacing import CheckPace, closed_message

DAY = 24 * 3600


def _a_check():
    """A real check of the workbench and its options (its answer computed by PyTorch)."""
    return DEVICE_MISMATCH


def _class_with_answers(store, names=("Ada", "Grace", "Alan")):
    check = _a_check()
    started = store.start_class()
    seats = [store.join(started.code, name) for name in names]
    truth = check.answer().correct_option
    wrong = next(option for option in check.options if option != truth)
    store.record_answer(started.code, seats[0].token, check.key, truth, check.options, 1)
    store.record_answer(started.code, seats[1].token, check.key, wrong, check.options, 1)
    return started, seats, check, truth, wrong


# --- pacing ----------------------------------------------------------------------------------------
def test_a_closed_check_refuses_answers_and_says_so_then_takes_them_again_when_opened(store):
    started, seats, check, truth, _ = _class_with_answers(store)
    before = store.pacing(started.code).number
    store.pace_check(started.code, started.teacher_key, check.key, closed=True)
    pacing = store.pacing(started.code)
    assert pacing.number == before + 1 and pacing.of(check.key).closed
    with pytest.raises(CheckClosed, match="closed this question"):
        store.record_answer(started.code, seats[2].token, check.key, truth, check.options, 1)
    # the answers given before closing stay
    assert {t.check_key: t.answered for t in store.tallies(started.code, started.teacher_key)} \
        == {check.key: 2}
    store.pace_check(started.code, started.teacher_key, check.key, closed=False)
    store.record_answer(started.code, seats[2].token, check.key, truth, check.options, 1)
    assert store.tallies(started.code, started.teacher_key)[0].answered == 3
    # another check was never paced: open
    assert store.pacing(started.code).of("some_other_check") == CheckPace()


def test_a_timer_closes_the_check_when_it_runs_out(store):
    started, seats, check, truth, _ = _class_with_answers(store)
    clock = store.clock_for_test
    pace = store.pace_check(started.code, started.teacher_key, check.key, closed=False,
                            timer_seconds=60)
    assert pace.seconds_left(clock.now) == pytest.approx(60)
    clock.now += 59
    store.record_answer(started.code, seats[2].token, check.key, truth, check.options, 1)
    clock.now += 2
    with pytest.raises(CheckClosed, match="Time is up"):
        store.record_answer(started.code, seats[2].token, check.key, truth, check.options, 2)
    assert closed_message(store.pacing(started.code).of(check.key), clock.now).startswith("Time is up")


def test_pacing_is_the_teachers_and_its_timer_bounded(store):
    started, seats, check, _, _ = _class_with_answers(store)
    with pytest.raises(ClassError, match="teacher key"):
        store.pace_check(started.code, seats[0].token, check.key, closed=True)
    for bad in (0, -5, 10**6, True, "60"):
        with pytest.raises(ClassError, match="timer"):
            store.pace_check(started.code, started.teacher_key, check.key, closed=False,
                             timer_seconds=bad)
    with pytest.raises(ClassError, match="knowledge check"):
        store.pace_check(started.code, started.teacher_key, "x'; DROP TABLE", closed=True)
    assert store.pacing(started.code).number == 0       # nothing was written


def test_resetting_a_check_deletes_its_answers_and_opens_a_new_round(store):
    started, seats, check, truth, _ = _class_with_answers(store)
    store.pace_check(started.code, started.teacher_key, check.key, closed=True)
    store.set_revealed(started.code, started.teacher_key, check.key, True)
    assert store.reset_check(started.code, started.teacher_key, check.key) == 2
    pace = store.pacing(started.code).of(check.key)
    assert pace.round == 1 and pace.is_open(store.clock_for_test.now)
    assert store.tallies(started.code, started.teacher_key) == []
    # the learners answer again, with their next sequence numbers
    store.record_answer(started.code, seats[0].token, check.key, truth, check.options, 2)
    tally = store.tallies(started.code, started.teacher_key)[0]
    assert tally.answered == 1 and not tally.revealed


def test_who_has_not_answered_yet_counts_present_learners_only(store):
    started, seats, check, _, _ = _class_with_answers(store, names=("Ada", "Grace", "Alan", "Edsger"))
    waiting = store.not_answered(started.code, started.teacher_key, [check.key, "never_answered"])
    assert waiting == {check.key: ["Alan", "Edsger"], "never_answered": ["Ada", "Grace", "Alan", "Edsger"]}
    clock = store.clock_for_test
    clock.now += 200                                      # everyone away ...
    store.heartbeat(started.code, seats[3].token)         # ... but Edsger, whose page is open
    assert store.not_answered(started.code, started.teacher_key, [check.key]) == {check.key: ["Edsger"]}
    assert store.not_answered(started.code, started.teacher_key, []) == {}


# --- End: keep the report, or delete now -------------------------------------------------------------
def test_an_ended_class_keeps_its_report_for_the_teacher_and_refuses_learners(store):
    started, seats, check, truth, _ = _class_with_answers(store)
    clock = store.clock_for_test
    ended = store.end_class(started.code, started.teacher_key, keep_days=KEEP_REPORT_DAYS)
    assert ended.keep_until == pytest.approx(clock.now + KEEP_REPORT_DAYS * DAY)
    assert store.ended(started.code, started.teacher_key) == ended
    with pytest.raises(ClassError, match="has ended"):
        store.record_answer(started.code, seats[2].token, check.key, truth, check.options, 1)
    with pytest.raises(ClassError, match="has ended"):
        store.join(started.code, "Late")
    with pytest.raises(ClassError, match="has ended"):
        store.heartbeat(started.code, seats[0].token)
    with pytest.raises(ClassError, match="teacher key"):
        store.record(started.code, seats[0].token)
    # the report outlives a day without activity (a running class would expire) ...
    clock.now += KEEP_REPORT_DAYS * DAY - 60
    assert store.expire_idle() == 0
    record = store.record(started.code, started.teacher_key)
    assert [m.nickname for m in record.members] == ["Ada", "Grace", "Alan"]
    assert len(record.answers) == 2 and record.ended_at == ended.ended_at
    # ... and is deleted by the sweep once its days are over
    clock.now += 120
    assert store.expire_idle() == 1
    with pytest.raises(ClassError, match="no class"):
        store.record(started.code, started.teacher_key)


def test_delete_now_removes_an_ended_class_at_once(store):
    started, _, _, _, _ = _class_with_answers(store)
    store.end_class(started.code, started.teacher_key, keep_days=3)
    assert store.end_class(started.code, started.teacher_key, keep_days=0) is None
    with pytest.raises(ClassError, match="no class"):
        store.ended(started.code, started.teacher_key)
    for bad in (-1, KEEP_REPORT_DAYS + 1, 1.5, True):
        other = store.start_class()
        with pytest.raises(ClassError, match="kept from 0"):
            store.end_class(other.code, other.teacher_key, keep_days=bad)


def test_a_running_class_still_expires_after_a_day_idle(store):
    started = store.start_class()
    store.clock_for_test.now += IDLE_EXPIRY_SECONDS + 1
    assert store.expire_idle() == 1
    with pytest.raises(ClassError, match="no class"):
        store.ended(started.code, started.teacher_key)


# --- the report --------------------------------------------------------------------------------------
def _report(store, names=True):
    started, seats, check, truth, wrong = _class_with_answers(store)
    store.post_run(started.code, seats[0].token, RunEntry("/moons_trainer?lr=0.1", "AdamW", 0.1,
                                                          0.9, 0.95, 2305))
    record = store.record(started.code, started.teacher_key)
    return build_report(record, all_checks(), names=names), started, check, truth


def test_the_report_counts_equal_the_boards_and_judge_against_pytorch(store):
    report, started, check, truth = _report(store)
    (summary,) = report.checks
    board = {t.check_key: t for t in store.tallies(started.code, started.teacher_key)}
    assert summary.counts == board[check.key].counts and summary.answered == 2
    assert summary.correct_option == check.answer().correct_option == truth
    assert summary.share_right == pytest.approx(0.5)
    assert summary.answered_by == ("Ada", "Grace")
    ada, grace, alan = report.learners
    assert (ada.right, grace.right, len(alan.answers)) == (1, 0, 0)
    assert ada.answers[0].right is True and grace.answers[0].right is False
    assert [run.parameter_count for run in ada.runs] == [2305] and not grace.runs


def test_the_most_wrong_check_comes_first():
    from workbench.classroom.store import ClassRecord, ReportAnswer, ReportMember
    checks = all_checks()
    first, second = list(checks.values())[:2]
    truth = {first.key: first.options[0], second.key: second.options[0]}
    members = [ReportMember(seat, f"L{seat}", 0.0, True) for seat in (1, 2)]
    answers = [ReportAnswer(1, first.key, first.options[0], 1.0),       # first: all right
               ReportAnswer(2, first.key, first.options[0], 2.0),
               ReportAnswer(1, second.key, second.options[1], 3.0),     # second: all wrong
               ReportAnswer(2, second.key, second.options[0], 4.0)]
    record = ClassRecord("AK37WA", 0.0, None, None, False, members, answers, [])
    report = build_report(record, checks, truth=lambda check: truth[check.key])
    assert [c.check_key for c in report.checks] == [second.key, first.key]
    # and the other way round when the class gets the second one right
    truth[second.key] = second.options[1]
    truth[first.key] = first.options[1]
    report = build_report(record, checks, truth=lambda check: truth[check.key])
    assert [c.check_key for c in report.checks] == [first.key, second.key]


def test_hidden_names_become_seats_on_the_page(store):
    report, _, _, _ = _report(store, names=False)
    assert report.checks[0].answered_by == ("Seat 1", "Seat 2")
    assert [learner.name for learner in report.learners] == ["Seat 1", "Seat 2", "Seat 3"]
    page = report_html(report)
    assert not any(re.search(rf"\b{name}\b", page) for name in ("Ada", "Grace", "Alan"))


def test_the_csv_holds_every_answer_and_run_and_runs_no_formula(store):
    started = store.start_class()
    check = _a_check()
    sly = store.join(started.code, "-Ada")   # the one formula start a name keeps
    store.record_answer(started.code, sly.token, check.key, check.options[0], check.options, 1)
    report = build_report(store.record(started.code, started.teacher_key), all_checks())
    text = report_csv(report, root="http://127.0.0.1:8501", zone="Europe/Berlin")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == f"Class {started.code}"
    cells = [cell for row in rows for cell in row]
    assert "'-Ada" in cells and "-Ada" not in cells
    answers_at = next(i for i, row in enumerate(rows) if row and row[0].startswith("Answers per learner"))
    header, first = rows[answers_at + 1], rows[answers_at + 2]
    assert dict(zip(header, first, strict=True))["answer"] == check.options[0]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [value for name, value in attrs if name in ("href", "src")]


def test_the_html_is_self_contained_and_escapes_what_the_class_wrote(store):
    started = store.start_class()
    check = _a_check()
    hostile = store.join(started.code, "<script>x</script>")
    store.record_answer(started.code, hostile.token, check.key, check.options[0], check.options, 1)
    store.post_run(started.code, hostile.token, RunEntry("/moons_trainer?lr=0.1", "AdamW", 0.1,
                                                         0.9, 0.95, 2305))
    page = report_html(build_report(store.record(started.code, started.teacher_key), all_checks()),
                       root="http://127.0.0.1:8501")
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and "link" not in parser.tags and "img" not in parser.tags
    assert parser.links == ["http://127.0.0.1:8501/moons_trainer?lr=0.1"] * 2
    assert html.escape(check.question) in page and '<html lang="en">' in page


def test_times_are_the_teachers_clock_or_say_utc():
    assert time_text(0.0, "Europe/Berlin") == "1970-01-01 01:00"
    assert time_text(0.0, None) == "1970-01-01 00:00 UTC"
    assert time_text(0.0, "Not/AZone") == "1970-01-01 00:00 UTC"


def test_the_report_holds_revealed_predictions_only_with_each_learners_vote(store):
    from workbench.classroom import prediction_store
    from workbench.classroom.predictions import Question

    started = store.start_class()
    ada, bo = store.join(started.code, "Ada"), store.join(started.code, "Bo")
    shown = prediction_store.pose(store, started.code, started.teacher_key,
                                  Question("Is x.t() contiguous?", ("yes", "no"), expected=1))
    prediction_store.vote(store, started.code, ada.token, shown, 1)
    prediction_store.vote(store, started.code, bo.token, shown, 0)
    prediction_store.reveal(store, started.code, started.teacher_key, shown)
    hidden = prediction_store.pose(store, started.code, started.teacher_key,
                                   Question("Will it diverge?", ("yes", "no")))
    prediction_store.vote(store, started.code, ada.token, hidden, 0)      # never revealed
    report = build_report(store.record(started.code, started.teacher_key), all_checks())
    (prediction,) = report.predictions
    assert prediction.question == "Is x.t() contiguous?" and prediction.counts == (1, 1)
    assert prediction.shown == 1 and prediction.share_right == pytest.approx(0.5)
    ada_row, bo_row = report.learners
    assert [(v.option, v.right) for v in ada_row.votes] == [("no", True)]
    assert [(v.option, v.right) for v in bo_row.votes] == [("yes", False)]
    text = report_csv(report)
    assert "Will it diverge?" not in text and "Is x.t() contiguous?" in text
    assert "Will it diverge?" not in report_html(report)
