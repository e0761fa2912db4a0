"""The join link (`/?class=CODE`) lands where the class is (issue 43, item 4): the teacher's last
send, or, before any send, a *You are in class* panel on the page itself."""
from __future__ import annotations

from app_pages.navigation import LESSONS_PAGE
from components.class_session import class_store
from tests.app.apptest import assert_clean, code_blocks, open_page, shown_text
from tests.app.classroom.test_page import _start_class
from workbench.lessons.catalog import lesson_by_key


def _main_text(at) -> str:
    return " ".join(str(m.value) for m in at.main.markdown)


def test_a_join_before_any_send_says_on_the_page_that_the_learner_is_in_the_class():
    _, code = _start_class()
    learner = open_page(query={"class": code})
    assert_clean(learner)
    assert f"You are in class {code}" in _main_text(learner)
    assert "has not sent the class to a page yet" in _main_text(learner)
    assert "class" not in learner.query_params
    learner.switch_page(LESSONS_PAGE.script).run()
    assert_clean(learner)
    assert "You are in class" not in _main_text(learner), "said once, where the link landed"


def test_a_late_join_lands_on_the_teachers_last_send():
    teacher, code = _start_class()
    key = next(m for m in code_blocks(teacher) if "teacher=" in m).rsplit("teacher=", 1)[1]
    class_store().send(code, key, "/lessons?lesson=autograd&step=2", "autograd, step 2")
    learner = open_page(query={"class": code})
    assert_clean(learner)
    step = lesson_by_key("autograd").steps[1]
    assert f"2. {step.title}" in shown_text(learner)
    assert "You are in class" not in _main_text(learner)
    assert learner.toggle(key="class_follow").value is True
    learner.run()                                   # the send is seen: no second move
    assert_clean(learner)
    assert f"2. {step.title}" in shown_text(learner)
    assert (learner.query_params["lesson"], learner.query_params["step"]) == ("autograd", "2")

