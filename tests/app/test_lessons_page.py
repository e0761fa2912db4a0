"""Every step of every guided lesson opens its tool in exactly the state it promises."""
import importlib

import pytest

from app_pages.navigation import LESSONS_PAGE, TOOLS
from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.common.readme import TABLES
from workbench.lessons.catalog import LESSONS

BUILT = {tool.url_path: tool for tool in TOOLS}
STEPS = [(lesson, number, step) for lesson in LESSONS for number, step in enumerate(lesson.steps, 1)]


def _schema(tool: str):
    return importlib.import_module(TABLES[tool]).TABLE


def _page_text(at) -> str:
    parts = [shown_text(at)]
    parts += [table.value.to_string() for table in at.get("table")]
    parts += [frame.value.to_string() for frame in at.dataframe]
    parts += [chart.proto.spec for chart in at.get("graphviz_chart")]
    return "\n".join(parts)


@pytest.mark.parametrize("lesson,number,step", STEPS,
                         ids=[f"{lesson.key}-{number}" for lesson, number, _ in STEPS])
def test_each_step_link_opens_the_promised_experiment(lesson, number, step):
    at = open_page(BUILT[step.tool].script, query=step.params)
    assert_clean(at)
    assert not [w.value for w in at.warning if "was ignored" in w.value], "a link value was refused"
    schema = _schema(step.tool)
    promised, problems = schema.read(step.params)
    assert problems == []
    opened, _ = schema.read(dict(at.query_params))
    assert opened == promised, "the page published other settings than the link asked for"
    if step.shows is not None:
        assert step.shows() in _page_text(at)


def test_the_lessons_page_walks_forward_and_back():
    at = open_page(LESSONS_PAGE.script, query={"lesson": "tensors"})
    assert_clean(at)
    assert at.query_params.get("lesson", "tensors") == "tensors"
    at.button(key="lesson_next").click().run()
    assert at.query_params["step"] == "2"
    assert "2. Transpose it" in shown_text(at)
    at.button(key="lesson_back").click().run()
    assert at.query_params.get("step", "1") == "1"


def test_a_lesson_check_is_answered_by_pytorch_on_the_page():
    at = open_page(LESSONS_PAGE.script, query={"lesson": "tensors", "step": "2"})
    key = "kc_lesson_tensors_2"
    at.radio(key=f"{key}_choice").set_value("(1, 3)").run()
    at.button(key=f"{key}_commit").click().run()
    assert any("Right" in s.value for s in at.success)
