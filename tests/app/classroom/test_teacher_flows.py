"""The teacher's flows through the router (issue 42): the private teacher link opened on a
second device stays a teacher (it never joins the class, and the teacher's page does not follow
its own send); End asks first, says what it deletes, offers the class's data, and tells the
teacher, as a teacher, that the class ended; the challenge's limit box is empty until a limit is
set; the board is built once per change and class; in presenter mode the send sits on the stage
and followers arrive in their own layout, and the private link is never drawn.

Teacher and learners are separate AppTests (separate sessions) on the temporary SQLite store
tests/conftest.py configures; AppTest does not fire `run_every` timers, so a page is run again
explicitly where a timer would.
"""
from __future__ import annotations

import csv
import io
from dataclasses import replace

from app_pages.classroom import challenge_board as board_module
from app_pages.navigation import CLASS_PAGE, LESSONS_PAGE, all_pages
from components.class_session import class_store
from components.plain_text import md
from tests.app.apptest import assert_clean, code_blocks, open_page, shown_text
from workbench.classroom.challenge import board_digest
from components.class_report import DELETE_NOW
from workbench.classroom.catalog import all_checks
from workbench.classroom.class_data import spreadsheet_safe
from workbench.classroom.report import build_report, report_csv
from workbench.classroom.store import ChallengeBoard, RunEntry
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK

TOOL = "app_pages/tensor_inspector/page.py"


def _start_class():
    teacher = open_page(CLASS_PAGE.script)
    teacher.button(key="class_start").click().run()
    assert_clean(teacher)
    link = next(m for m in code_blocks(teacher) if "teacher=" in m)
    code = link.split("class=", 1)[1].split("&", 1)[0]
    return teacher, code, link.rsplit("teacher=", 1)[1]


def _post(code: str, nickname: str, accuracy: float = 0.9, parameters: int = 97) -> None:
    learner = class_store().join(code, nickname)
    class_store().post_run(code, learner.token, RunEntry(
        f"/moons_trainer?hidden=24&lr={accuracy:g}", "SGD", 0.1, accuracy, 0.955, parameters))


def _buttons(at) -> set[str]:
    return {b.key for b in at.button if b.key}


# --- the private teacher link --------------------------------------------------------------------
def test_the_teacher_link_on_a_second_device_stays_a_teacher_and_can_end_the_class():
    _, code, key = _start_class()
    device = open_page(CLASS_PAGE.script, query={"class": code, "teacher": key})
    assert_clean(device)
    # Both parameters leave the address: `class=` left there would join on the next run.
    assert "teacher" not in device.query_params and "class" not in device.query_params
    device.button(key="FormSubmitter:class_send-Send the class there").click().run()
    assert_clean(device)
    sent = class_store().current_send(code)
    assert sent.number == 1 and sent.link.startswith(f"/{LESSONS_PAGE.url_path}?")
    for _ in range(2):                              # as the timers would: nothing follows the send
        device.run()
    assert_clean(device)
    assert class_store().find_class(code).members == 0
    assert "lesson" not in device.query_params, dict(device.query_params)
    assert "In class" not in shown_text(device)
    assert "Learners in the class" in shown_text(device)

    device.button(key="class_end").click().run()
    device.radio(key="class_end_keep").set_value(DELETE_NOW).run()
    device.button(key="class_end_confirm").click().run()
    assert_clean(device)
    text = shown_text(device)
    assert md(f"Class {code} ended; its data is deleted.") in text
    assert "check the code with your teacher" not in text and not device.error


def test_a_class_ended_on_the_other_device_is_a_teachers_message_on_this_one():
    teacher, code, key = _start_class()
    device = open_page(CLASS_PAGE.script, query={"class": code, "teacher": key})
    device.button(key="class_end").click().run()
    device.radio(key="class_end_keep").set_value(DELETE_NOW).run()
    device.button(key="class_end_confirm").click().run()
    teacher.run()                                   # as the board's watch would, seeing it gone
    assert_clean(teacher)
    text = shown_text(teacher)
    assert md(f"Class {code} has ended (on your other device") in text
    assert "check the code with your teacher" not in text and not teacher.error
    assert "class_end" not in _buttons(teacher) and "class_start" in _buttons(teacher)


def test_a_session_never_joins_the_class_it_teaches():
    teacher, code, _ = _start_class()
    teacher.query_params["class"] = code            # the join link, opened by the teacher
    teacher.run()
    assert_clean(teacher)
    assert class_store().find_class(code).members == 0
    assert "In class" not in shown_text(teacher)
    other = open_page(query={"class": code})        # a learner still joins by it
    assert f"In class {code}" in shown_text(other)
    assert class_store().find_class(code).members == 1


# --- End ----------------------------------------------------------------------------------------
def test_end_asks_first_says_what_it_deletes_and_keep_changes_nothing():
    teacher, code, key = _start_class()
    learner = open_page(query={"class": code})
    learner.radio(key=f"kc_{CHECK.key}_choice").set_value(CHECK.options[1]).run()
    learner.button(key=f"kc_{CHECK.key}_commit").click().run()
    _post(code, "Ada")
    teacher.button(key="class_end").click().run()
    assert_clean(teacher)
    assert "class_end_confirm" in _buttons(teacher)
    warning = " ".join(w.value for w in teacher.warning)
    assert (f"Ending class **{code}** closes it to its **2** member(s); its **1** answer(s) and "
            "**1** posted run(s) are kept in its report") in warning
    assert {b.proto.label for b in teacher.get("download_button")} >= {
        "Download the report (HTML, to print)", "Download the report (CSV)"}
    assert class_store().find_class(code).members == 2       # nothing deleted by asking
    teacher.button(key="class_end_cancel").click().run()
    assert_clean(teacher)
    assert "class_end_confirm" not in _buttons(teacher)
    assert class_store().find_class(code).members == 2
    assert class_store().check_teacher(code, key) == code


def test_the_report_download_holds_answers_and_runs_with_formulas_made_text():
    _, code, key = _start_class()
    learner = open_page(query={"class": code})
    learner.radio(key=f"kc_{CHECK.key}_choice").set_value(CHECK.options[2]).run()
    learner.button(key=f"kc_{CHECK.key}_commit").click().run()
    _post(code, "-Ada", 0.93, 97)
    _post(code, "Bo", 0.81, 4_353)
    report = build_report(class_store().record(code, key), all_checks())
    rows = list(csv.reader(io.StringIO(report_csv(report))))
    assert rows[0][0] == f"Class {code}"
    header = rows.index(["check", "question", "option", "learners", "answered", "PyTorch computes",
                         "share right"])
    answers = {r[2]: r for r in rows[header + 1: header + 1 + len(CHECK.options)]}
    assert answers[CHECK.options[2]][3] == "1" and answers[CHECK.options[0]][3] == "0"
    truth = CHECK.answer().correct_option
    assert [o for o, r in answers.items() if r[5] == "True"] == [truth]
    runs_at = next(i for i, r in enumerate(rows) if r and r[0] == "name" and "link" in r)
    assert [r[0] for r in rows[runs_at + 1:]] == ["'-Ada", "Bo"]     # oldest first, '- as text
    assert rows[runs_at + 1][rows[runs_at].index("parameters")] == "97"
    # Each run names its data (issue 44 item 8): read from its link when posted without them.
    assert rows[runs_at + 1][rows[runs_at].index("data")] == ("moons, 3000 points, noise 0.25, seed 42, "
                                                              "split 70/15/15")


def test_spreadsheet_safe_neutralises_formulas_only():
    for formula in ("=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "\t=1", "\r=1"):
        assert spreadsheet_safe(formula) == "'" + formula
    for plain in ("Ada", "a=b", "", "Zoë"):
        assert spreadsheet_safe(plain) == plain
    assert spreadsheet_safe(-2) == -2                    # numbers stay numbers


# --- the challenge's limit box ------------------------------------------------------------------
def test_the_limit_box_is_empty_until_a_limit_is_set():
    teacher, code, key = _start_class()
    box = teacher.number_input(key="challenge_limit")
    assert box.value is None and "no limit yet" in box.proto.placeholder
    teacher.button(key="FormSubmitter:challenge_form-Set the challenge").click().run()
    assert_clean(teacher)
    assert "Type the most parameters a run may have" in shown_text(teacher)
    assert class_store().challenge_board(code, teacher_key=key).max_parameters is None
    teacher.number_input(key="challenge_limit").set_value(500)
    teacher.button(key="FormSubmitter:challenge_form-Set the challenge").click().run()
    assert class_store().challenge_board(code, teacher_key=key).max_parameters == 500
    assert teacher.number_input(key="challenge_limit").value == 500
    teacher.button(key="FormSubmitter:challenge_form-No limit").click().run()
    assert_clean(teacher)
    assert class_store().challenge_board(code, teacher_key=key).max_parameters is None
    assert teacher.number_input(key="challenge_limit").value is None      # empty again
    class_store().set_challenge(code, key, 250)          # set on the teacher's other device
    teacher.run()
    assert teacher.number_input(key="challenge_limit").value == 250


# --- the board, once per change and class ---------------------------------------------------------
def test_the_board_is_built_once_per_change_and_class_and_the_watch_knows_it():
    teacher, code, key = _start_class()
    _post(code, "Ada", 0.93)
    teacher.run()
    assert_clean(teacher)
    board = class_store().challenge_board(code, teacher_key=key)
    seen = teacher.session_state[board_module.SEEN]
    assert seen == board_digest(board)
    # A second viewer of the same board gets the very objects built for the first.
    first, again = board_module.drawn_board(code, board), board_module.drawn_board(code, board)
    assert again is first and len(first.frame) == 1
    assert board_module._read_board(code, key, "")[1] == seen       # nothing changed: no redraw
    _post(code, "Bo", 0.97)
    changed = class_store().challenge_board(code, teacher_key=key)
    assert board_module._read_board(code, key, "")[1] != seen       # a post: the page redraws
    assert board_module.drawn_board(code, changed) is not first
    assert len(board_module.drawn_board(code, changed).frame) == 2
    assert board_module._read_board(code, "wrong", "")[1] == "refused"


def test_the_board_cache_is_bounded():
    _, code, key = _start_class()
    for index in range(board_module.MAX_DRAWN_BOARDS + 5):
        board = class_store().challenge_board(code, teacher_key=key)
        board_module.drawn_board(code, replace(board, max_parameters=index + 1))
    assert len(board_module._DRAWN) <= board_module.MAX_DRAWN_BOARDS


# --- presenter mode -----------------------------------------------------------------------------
def _teacher_on(page: str, query: dict[str, str]):
    teacher, code, key = _start_class()
    for name, value in query.items():
        teacher.query_params[name] = value
    teacher.switch_page(page).run()
    assert_clean(teacher)
    return teacher, code, key


def test_in_presenter_mode_the_send_is_on_the_stage_and_followers_keep_their_layout():
    teacher, code, _ = _teacher_on(TOOL, {"present": "1", "hide": "device", "ops": "t()"})
    stage_buttons = [b for b in teacher.main.button if b.key == "class_send_here_stage"]
    assert len(stage_buttons) == 1 and stage_buttons[0].label == f"Send class {code} here"
    learner = open_page(query={"class": code})
    assert learner.toggle(key="presenter_mode").value is False
    teacher.button(key="class_send_here_stage").click().run()
    assert_clean(teacher)
    sent = class_store().current_send(code)
    assert sent.link.startswith("/tensor_inspector?")
    assert "present=" not in sent.link                    # the projector's layout stays the teacher's
    assert "hide=device" in sent.link and "ops=t%28%29" in sent.link   # hidden controls travel
    learner.run()                                          # as the follow timer would
    assert_clean(learner)
    assert learner.query_params.get("ops") in ("t()", ["t()"]), dict(learner.query_params)
    assert "present" not in learner.query_params
    assert learner.toggle(key="presenter_mode").value is False


def test_the_stage_send_is_on_every_tool_and_lesson_page_while_teaching():
    teacher, code, _ = _start_class()
    teacher.query_params["present"] = "1"
    for tool in all_pages():
        teacher.switch_page(tool.script).run()
        assert_clean(teacher, tool.script)
        on_stage = [b for b in teacher.main.button if b.key == "class_send_here_stage"]
        if tool is CLASS_PAGE:
            assert not on_stage                  # the Class page has its own send
        else:
            assert [b.label for b in on_stage] == [f"Send class {code} here"], tool.script


def test_the_stage_send_is_only_for_a_teacher_in_presenter_mode_and_not_on_the_class_page():
    teacher, _, _ = _teacher_on(TOOL, {})
    assert "class_send_here_stage" not in _buttons(teacher)
    assert "class_send_here" in {b.key for b in teacher.sidebar.button}
    learner = open_page(TOOL, {"present": "1"})
    assert "class_send_here_stage" not in _buttons(learner)
    on_class, _, _ = _teacher_on(CLASS_PAGE.script, {"present": "1"})
    assert "class_send_here_stage" not in _buttons(on_class)


def test_the_private_link_is_never_drawn_in_presenter_mode():
    teacher, code, key = _start_class()
    assert any("teacher=" in m for m in code_blocks(teacher))
    assert "Your private teacher link" in [e.label for e in teacher.expander]
    teacher.query_params["present"] = "1"
    teacher.run()
    assert_clean(teacher)
    assert not any("teacher=" in m for m in code_blocks(teacher))
    assert key not in shown_text(teacher)
    assert "Your private teacher link" not in [e.label for e in teacher.expander]
    assert "Learners in the class" in shown_text(teacher)


def test_the_board_digest_moves_with_every_field_the_board_shows():
    run = RunEntry("/moons_trainer?hidden=8", "SGD", 0.1, 0.9, 0.955, 41, "Ada", 1.0)
    board = ChallengeBoard([run], None)
    assert board_digest(board) == board_digest(ChallengeBoard([replace(run)], None))
    changed = [ChallengeBoard([replace(run, nickname="Bo")], None),       # a rename
               ChallengeBoard([run], 40),                                   # the challenge
               ChallengeBoard([replace(run, test_accuracy=0.91)], None),
               ChallengeBoard([run, run], None), ChallengeBoard([], None)]
    assert len({board_digest(b) for b in [board, *changed]}) == 1 + len(changed)
