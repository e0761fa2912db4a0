import pytest

from app_pages.navigation import TOOLS
from workbench.lessons.catalog import LESSONS, lesson_by_key
from workbench.lessons.settings import TABLE as LESSONS_TABLE

STEPS = [(lesson, step) for lesson in LESSONS for step in lesson.steps]


@pytest.mark.parametrize("lesson,step", STEPS, ids=[f"{lesson.key}-{step.title}" for lesson, step in STEPS])
def test_every_check_is_answered_by_pytorch_with_one_of_its_options(lesson, step):
    assert step.tool in {tool.url_path for tool in TOOLS}
    if step.check is not None:
        revealed = step.check.answer()
        assert revealed.correct_option in step.check.options
        assert revealed.shown_value and step.check.code


def test_lessons_are_found_by_key_and_linkable():
    assert lesson_by_key("autograd").tool == "autograd_graph"
    assert lesson_by_key("nope") is None
    settings, problems = LESSONS_TABLE.read({"lesson": "batching", "step": "99"})
    assert problems == [] and settings.lesson == "batching" and settings.step == max(
        len(lesson.steps) for lesson in LESSONS)
