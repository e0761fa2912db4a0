"""The teacher's roster and the board the teacher steers, through the router: remove, rename,
hide names, close joining; names that would mislead refused with a reason; pinned and most
answered checks on the board, every other one reachable; joins limited per address; a join by
link leaves no `class=` in the address.

Teacher and learners are separate AppTests (sessions) on the temporary SQLite store that
tests/conftest.py configures. AppTest fires no `run_every` timer: a page is run again
explicitly, as the timer would.
"""
from __future__ import annotations

import pytest

from app_pages.navigation import CLASS_PAGE
from components import class_session
from components.class_session import class_store
from components.plain_text import md
from tests.app.apptest import assert_clean, open_page, shown_text
from tests.app.classroom.test_page import _post, _start_class
from workbench.classroom.catalog import all_checks
from workbench.classroom.limits import TokenBucket
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK


def _learner(code: str):
    learner = open_page(query={"class": code})
    assert_clean(learner)
    assert f"In class {code}" in shown_text(learner)
    return learner


def _roster_rows(teacher) -> list[dict]:
    frames = [d.value for d in teacher.dataframe if "status" in d.value.columns]
    assert len(frames) == 1, frames
    return frames[0].to_dict("records")


def _pick_seat(teacher, seat: int) -> None:
    teacher.selectbox(key="class_roster_seat").set_value(seat).run()


def test_a_join_by_link_leaves_no_class_in_the_address_so_a_reload_does_not_join_again():
    _, code = _start_class()
    learner = _learner(code)
    assert "class" not in learner.query_params
    learner.run()                                           # a rerun: the same seat
    assert class_store().find_class(code).members == 1


def test_the_roster_lists_learners_and_the_teacher_renames_and_removes_one():
    teacher, code = _start_class()
    troll, ada = _learner(code), _learner(code)
    class_store().rename(code, ada.session_state["learner::class_seat"].membership.token, "Ada")
    teacher.run()
    assert_clean(teacher)
    assert any(e.label == "Roster: who is in the class" for e in teacher.expander)
    assert "**2** present, **0** away" in shown_text(teacher)
    rows = _roster_rows(teacher)
    assert [(r["seat"], r["status"], r["answers"]) for r in rows] == [(1, "present", 0),
                                                                      (2, "present", 0)]
    assert rows[1]["name"] == "Ada"

    _pick_seat(teacher, 1)
    teacher.text_input(key="class_roster_new_name").set_value("T\u0435acher").run()
    teacher.button(key="class_roster_rename").click().run()
    assert_clean(teacher)
    assert "looks like the teacher" in shown_text(teacher)
    teacher.text_input(key="class_roster_new_name").set_value("Quiet Learner").run()
    teacher.button(key="class_roster_rename").click().run()
    assert [r["name"] for r in _roster_rows(teacher)] == ["Quiet Learner", "Ada"]
    troll.run()                                             # the heartbeat brings the new name
    assert "as Quiet Learner" in shown_text(troll)

    _pick_seat(teacher, 1)
    teacher.button(key="class_roster_remove").click().run()
    assert md("Tick “Yes, remove this learner” first") in shown_text(teacher)
    assert len(_roster_rows(teacher)) == 2                     # nothing removed unconfirmed
    teacher.checkbox(key="class_roster_sure").check().run()
    teacher.button(key="class_roster_remove").click().run()
    assert_clean(teacher)
    assert "was removed from the class" in shown_text(teacher)
    assert [r["name"] for r in _roster_rows(teacher)] == ["Ada"]
    assert next(m for m in teacher.metric if m.label == "Learners in the class").value == "1"

    troll.run()                                             # the follow fragment's heartbeat
    assert_clean(troll)
    text = shown_text(troll)
    assert "Your teacher removed you from class" in text
    assert "In class" not in text


def test_a_learner_cannot_take_a_name_that_looks_like_the_teacher_or_a_classmate():
    _, code = _start_class()
    first = _learner(code)
    first.text_input(key="class_nickname_input").set_value("Ada")
    first.button(key="FormSubmitter:class_nickname-Set nickname").click().run()
    second = _learner(code)
    for hostile, why in (("T\u0435acher", "looks like the teacher"),
                         ("\u0410DA", "already has the name"),
                         ("\u3164", "nothing anyone could see")):
        second.text_input(key="class_nickname_input").set_value(hostile)
        second.button(key="FormSubmitter:class_nickname-Set nickname").click().run()
        assert_clean(second)
        assert why in shown_text(second), hostile
    assert "** as Ada" not in shown_text(second)


def test_hidden_names_leave_the_challenge_board_and_its_winner_sentence():
    teacher, code = _start_class()
    _post(code, "Ada", 0.93, 97, "SGD", 0.1, "24")
    teacher.run()
    assert md("Ada, 93.00%") in shown_text(teacher)
    teacher.toggle(key="class_option_hide_names").set_value(True).run()
    teacher.run()                                           # the challenge board's timer
    assert_clean(teacher)
    text = shown_text(teacher)
    assert "Names are hidden on this board" in text
    assert md("Ada, 93.00%") not in text and md("a learner, 93.00%") in text
    challenge = [d.value for d in teacher.dataframe if "nickname" in d.value.columns][0]
    assert list(challenge["nickname"]) == ["a learner"]
    teacher.toggle(key="class_option_hide_names").set_value(False).run()
    teacher.run()
    assert md("Ada, 93.00%") in shown_text(teacher)


def test_closed_joining_refuses_a_new_learner_with_the_reason_and_keeps_the_members():
    teacher, code = _start_class()
    _learner(code)
    teacher.toggle(key="class_option_joining_closed").set_value(True).run()
    assert_clean(teacher)
    late = open_page(query={"class": code})
    assert_clean(late)
    text = shown_text(late)
    assert "closed to new learners" in text and "In class" not in text
    assert class_store().find_class(code).members == 1
    teacher.toggle(key="class_option_joining_closed").set_value(False).run()
    _learner(code)
    assert class_store().find_class(code).members == 2


def _answer(code: str, token: str, check_key: str, sequence: int) -> None:
    check = all_checks()[check_key]
    class_store().record_answer(code, token, check_key, check.options[0], tuple(check.options),
                                sequence)


def test_one_learner_answering_seven_checks_leaves_the_class_question_on_the_board_and_pins():
    teacher, code = _start_class()
    tokens = [class_store().join(code).token for _ in range(3)]
    for token in tokens:
        _answer(code, token, CHECK.key, 1)
    others = [key for key in all_checks() if key != CHECK.key][:7]
    for number, key in enumerate(others, 2):                # one learner, seven checks in a row
        _answer(code, tokens[0], key, number)
    teacher.run()
    assert_clean(teacher)
    text = shown_text(teacher)
    assert CHECK.question in text and "**3** answered" in text
    other = teacher.selectbox(key="class_board_other")
    assert len(other.options) == 2                          # 8 answered, 6 on the board
    hidden = [key for key in others if all_checks()[key].question not in text]
    assert len(hidden) == 2
    other.set_value(hidden[0]).run()
    assert all_checks()[hidden[0]].question in shown_text(teacher)
    teacher.button(key=f"class_pin_{hidden[0]}").click().run()
    assert_clean(teacher)
    teacher.run()
    tallies = class_store().tallies(code, teacher.session_state["learner::class_seat"].teaching.teacher_key)
    assert tallies[0].check_key == hidden[0] and tallies[0].pinned
    assert tallies[1].check_key == CHECK.key                 # then the most answered


def test_joins_from_one_address_are_limited_with_a_clear_message(monkeypatch):
    _, code = _start_class()
    monkeypatch.setattr(class_session, "_client_address", lambda: "198.51.100.23")
    monkeypatch.setattr(class_session, "JOIN_LIMIT", TokenBucket(2, 1000.0))
    _learner(code)
    _learner(code)
    third = open_page(query={"class": code})
    assert_clean(third)
    assert "Many learners joined from your network just now" in shown_text(third)
    assert class_store().find_class(code).members == 2


def test_one_page_joins_at_most_a_bounded_number_of_times(monkeypatch):
    codes = [_start_class()[1] for _ in range(3)]
    monkeypatch.setattr(class_session, "JOINS_PER_SESSION", 2)
    page = _learner(codes[0])
    page.query_params["class"] = codes[1]                   # another class's link: a second join
    page.run()
    assert f"In class {codes[1]}" in shown_text(page)
    page.query_params["class"] = codes[2]
    page.run()
    assert_clean(page)
    assert "the most one page may" in shown_text(page)
    assert class_store().find_class(codes[2]).members == 0


@pytest.mark.parametrize("name", ["Zoë", "Đức", "李雷"])
def test_a_name_in_any_script_is_taken_from_the_join_form(name):
    _, code = _start_class()
    page = open_page(CLASS_PAGE.script)
    page.text_input(key="class_join_code").set_value(code)
    page.text_input(key="class_join_nickname").set_value(name)
    page.button(key="FormSubmitter:class_join-Join").click().run()
    assert_clean(page)
    assert f"as **{name}**" in shown_text(page)
