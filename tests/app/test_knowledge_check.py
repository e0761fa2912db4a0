"""A knowledge check answered wrongly offers a second try before the answer (issue 43, item 7)."""
from __future__ import annotations

from app_pages.navigation import LESSONS_PAGE
from tests.app.apptest import assert_clean, code_blocks, open_page, shown_text
from workbench.lessons.catalog import lesson_by_key

LESSON, NUMBER = "tensors", 2
CHECK = lesson_by_key(LESSON).steps[NUMBER - 1].check
KEY = f"kc_lesson_{LESSON}_{NUMBER}"


def _committed(option: str):
    at = open_page(LESSONS_PAGE.script, query={"lesson": LESSON, "step": str(NUMBER)})
    at.radio(key=f"{KEY}_choice").set_value(option).run()
    at.button(key=f"{KEY}_commit").click().run()
    assert_clean(at)
    return at


def _check_buttons(at) -> list[str]:
    return [button.label for button in at.button if button.key.startswith(KEY)]


def _wrong_option() -> str:
    correct = CHECK.answer().correct_option
    return next(option for option in CHECK.options if option != correct)


def test_a_wrong_answer_offers_try_again_first_and_the_answer_second_not_the_answer():
    correct = CHECK.answer().correct_option
    at = _committed(_wrong_option())
    warnings = [w.value for w in at.warning]
    assert any("not what PyTorch computes" in w for w in warnings), warnings
    assert not any(correct in w for w in warnings)       # the right answer is not given away
    assert not any(CHECK.compute.__name__ in code for code in code_blocks(at))
    assert _check_buttons(at) == ["Try again", "Show the answer"]


def test_show_the_answer_reveals_what_pytorch_computed():
    correct = CHECK.answer().correct_option
    at = _committed(_wrong_option())
    at.button(key=f"{KEY}_show").click().run()
    assert_clean(at)
    assert any(f"PyTorch says **{correct}**" in w.value.replace("\\", "") for w in at.warning)
    assert any(CHECK.compute.__name__ in code for code in code_blocks(at))
    assert _check_buttons(at) == ["Try again"]


def test_try_again_after_a_wrong_answer_asks_afresh():
    at = _committed(_wrong_option())
    at.button(key=f"{KEY}_again").click().run()
    assert_clean(at)
    radio = at.radio(key=f"{KEY}_choice_1")
    assert radio.value is None and not radio.disabled
    assert _check_buttons(at) == ["Commit and reveal"]
    assert "not what PyTorch computes" not in shown_text(at)


def test_a_right_answer_is_confirmed_with_no_answer_button():
    correct = CHECK.answer().correct_option
    at = _committed(correct)
    assert any("Right" in s.value for s in at.success)
    assert "not what PyTorch computes" not in shown_text(at)
    assert _check_buttons(at) == ["Try again"]
